"""DPoP (RFC 9449): sender-constrained tokens. The client proves, request by request, that it holds
the private key the access token is bound to, so a stolen token is useless on its own.

One ephemeral P-256 key per :class:`OAuth` object, held in memory only: a DPoP-bound token from an
earlier process cannot be used (and is not tried). Each proof is a fresh JWT (new ``jti``) naming
the method and URL it is for, the token's hash (``ath``) at the MCP server, and the server's latest
nonce when it asked for one (§8, §9). Needs the ``cryptography`` package, imported on first use.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..protocol._errors import McpError
from ._jwt import b64url as _b64
from ._jwt import sign_jws

__all__ = ["DpopKey", "htu"]


def htu(url: str) -> str:
    """The ``htu`` claim: the request URL without query and fragment (RFC 9449 §4.2)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


class DpopKey:
    alg = "ES256"

    def __init__(self) -> None:
        try:
            from cryptography.hazmat.primitives.asymmetric import ec
        except ImportError as exc:
            raise McpError(
                "auth", "DPoP needs the 'cryptography' package: pip install cryptography (or pass dpop=False)"
            ) from exc
        self._key: Any = ec.generate_private_key(ec.SECP256R1())
        numbers = self._key.public_key().public_numbers()
        self.jwk = {
            "kty": "EC",
            "crv": "P-256",
            "x": _b64(numbers.x.to_bytes(32, "big")),
            "y": _b64(numbers.y.to_bytes(32, "big")),
        }

    @property
    def thumbprint(self) -> str:
        """RFC 7638 JWK thumbprint: what an authorization server binds the token to (``cnf.jkt``)."""
        canonical = json.dumps({k: self.jwk[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":"))
        return _b64(hashlib.sha256(canonical.encode()).digest())

    def proof(
        self,
        method: str,
        url: str,
        *,
        access_token: str | None = None,
        nonce: str | None = None,
        now: float | None = None,
    ) -> str:
        header = {"typ": "dpop+jwt", "alg": self.alg, "jwk": self.jwk}
        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(16),
            "htm": method.upper(),
            "htu": htu(url),
            "iat": int(time.time() if now is None else now),
        }
        if access_token is not None:
            claims["ath"] = _b64(hashlib.sha256(access_token.encode("ascii")).digest())
        if nonce is not None:
            claims["nonce"] = nonce
        signing_input = (
            _b64(json.dumps(header, separators=(",", ":")).encode())
            + "."
            + _b64(json.dumps(claims, separators=(",", ":")).encode())
        )
        return f"{signing_input}.{_b64(sign_jws(self._key, self.alg, signing_input.encode('ascii')))}"

    def __repr__(self) -> str:
        return f"DpopKey({self.alg}, jkt={self.thumbprint})"
