"""``private_key_jwt`` client authentication (RFC 7523 §2.2): a short-lived JWT signed with the
client's private key, sent as ``client_assertion``.

Signing needs the ``cryptography`` package, which is not a dependency of mcp-notebook: it is
imported only when a private key is actually used, and its absence is an :class:`McpError` that
says what to install. The key itself never leaves this module and never appears in a message.
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from typing import Any

from ..protocol._errors import McpError

__all__ = ["CLIENT_ASSERTION_TYPE", "b64url", "client_assertion", "sign_jws"]

CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
_LIFETIME = 300  # seconds: long enough for clock skew, short enough to be useless if replayed later


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _load_key(pem: str | bytes) -> Any:
    try:
        from cryptography.hazmat.primitives.serialization import load_pem_private_key
    except ImportError as exc:
        raise McpError(
            "auth",
            "private_key_jwt client authentication needs the 'cryptography' package: "
            "pip install cryptography",
        ) from exc
    data = pem.encode("ascii") if isinstance(pem, str) else pem
    try:
        return load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        # The parser's message never contains key material, but ours says only what to fix.
        raise McpError(
            "auth", "private_key is not an unencrypted PEM private key (PKCS#8 or traditional)"
        ) from exc


_EC_ALGORITHMS = {"secp256r1": ("ES256", 32), "secp384r1": ("ES384", 48), "secp521r1": ("ES512", 66)}
_RSA_ALGORITHMS = frozenset({"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"})


def _algorithm(key: Any, requested: str | None) -> str:
    """The JWS ``alg`` for a key: fixed by the curve for EC and Ed25519, RS256 unless asked for RSA."""
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

    if isinstance(key, ec.EllipticCurvePrivateKey):
        if key.curve.name not in _EC_ALGORITHMS:
            raise McpError("auth", f"private_key uses the unsupported elliptic curve {key.curve.name}")
        alg = _EC_ALGORITHMS[key.curve.name][0]
    elif isinstance(key, rsa.RSAPrivateKey):
        alg = requested or "RS256"
        if alg not in _RSA_ALGORITHMS:
            raise McpError("auth", f"signing_algorithm {alg} does not fit an RSA key (use RS256, PS256, ...)")
    elif isinstance(key, ed25519.Ed25519PrivateKey):
        alg = "EdDSA"
    else:
        raise McpError("auth", "private_key must be an EC (P-256/384/521), RSA or Ed25519 private key")
    if requested not in (None, alg) and not (alg == "EdDSA" and requested == "Ed25519"):
        raise McpError("auth", f"signing_algorithm {requested} does not fit the private key (it signs {alg})")
    return alg


def sign_jws(key: Any, alg: str, data: bytes) -> bytes:
    """The JWS signature of ``data`` with a key from ``cryptography``, for the algorithm ``alg``."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, padding
    from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature

    digest: hashes.HashAlgorithm = {
        "256": hashes.SHA256(),
        "384": hashes.SHA384(),
        "512": hashes.SHA512(),
    }.get(alg[-3:], hashes.SHA256())
    if alg.startswith("ES"):
        # JWS wants the raw r||s pair, each padded to the curve size; cryptography returns DER.
        size = _EC_ALGORITHMS[key.curve.name][1]
        r, s = decode_dss_signature(key.sign(data, ec.ECDSA(digest)))
        return bytes(r.to_bytes(size, "big") + s.to_bytes(size, "big"))
    if alg.startswith("RS"):
        return bytes(key.sign(data, padding.PKCS1v15(), digest))
    if alg.startswith("PS"):
        return bytes(
            key.sign(data, padding.PSS(mgf=padding.MGF1(digest), salt_length=digest.digest_size), digest)
        )
    return bytes(key.sign(data))  # EdDSA


def client_assertion(
    pem: str | bytes,
    *,
    client_id: str,
    audience: str,
    algorithm: str | None = None,
    key_id: str | None = None,
    now: float | None = None,
) -> str:
    """A signed client assertion: ``iss`` and ``sub`` are the client id, ``aud`` the authorization
    server's issuer (RFC 7523bis recommends the issuer over the token endpoint URL)."""
    key = _load_key(pem)
    issued = int(time.time() if now is None else now)
    claims = {
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": issued,
        "exp": issued + _LIFETIME,
        "jti": uuid.uuid4().hex,
    }
    alg = _algorithm(key, algorithm)
    header: dict[str, str] = {"alg": alg, "typ": "JWT"}
    if key_id:
        header["kid"] = key_id
    signing_input = f"{b64url(json.dumps(header, separators=(',', ':')).encode())}." + b64url(
        json.dumps(claims, separators=(",", ":")).encode()
    )
    return f"{signing_input}.{b64url(sign_jws(key, alg, signing_input.encode('ascii')))}"
