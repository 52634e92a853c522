"""PKCE (RFC 7636) with S256, and the ``state`` value, for one authorization attempt.

MCP requires S256 whenever the client can compute it (always, for us), so there is no ``plain``
method here. The verifier is a secret until the token request: its ``repr`` hides it.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass

__all__ = ["Pkce", "new_pkce", "new_state", "s256"]


def s256(verifier: str) -> str:
    """The S256 code challenge: base64url(SHA-256(ASCII(verifier))) without padding (RFC 7636 §4.2)."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


@dataclass(frozen=True, repr=False)
class Pkce:
    verifier: str
    challenge: str
    method: str = "S256"

    def __repr__(self) -> str:
        return f"Pkce(method={self.method!r}, challenge={self.challenge!r}, verifier=<redacted>)"


def new_pkce() -> Pkce:
    # 64 random bytes → 86 characters of [A-Za-z0-9_-]: inside RFC 7636's 43..128 unreserved characters.
    verifier = secrets.token_urlsafe(64)
    return Pkce(verifier=verifier, challenge=s256(verifier))


def new_state() -> str:
    """An unguessable ``state``: binds the redirect we receive to the request we made (CSRF)."""
    return secrets.token_urlsafe(32)
