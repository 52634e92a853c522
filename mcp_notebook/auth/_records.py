"""What the OAuth client remembers: the tokens it holds and the client identity it authenticates as.

Both records are plain frozen dataclasses so a :class:`~mcp_notebook.auth.TokenStore` can keep them
anywhere; ``to_json``/``from_json`` give the one stable JSON shape the file store writes. Their
``repr`` never shows a secret (access and refresh tokens, client secrets): a record printed in a
notebook cell or a log line says *which* credential it is, never what it is.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

__all__ = ["ClientInfo", "ClientSource", "Tokens"]

# How a client identity came to be: given by the user, registered by us (RFC 7591), or a URL that
# the authorization server resolves on demand (Client ID Metadata Document).
ClientSource = Literal["preregistered", "registered", "metadata_document"]

_REDACTED = "<redacted>"


def _secret(value: str | None) -> str:
    return "None" if value is None else _REDACTED


@dataclass(frozen=True, repr=False)
class Tokens:
    """An access token (and maybe a refresh token), bound to the issuer and resource it was issued for.

    ``expires_at`` is wall-clock epoch seconds (not monotonic) because tokens outlive the process in
    a file store. ``scope`` is what the authorization server granted (or what we asked for when it did
    not say); ``requested_scope`` is what we asked for, the base of a step-up's scope union.
    """

    access_token: str
    token_type: str = "Bearer"
    refresh_token: str | None = None
    expires_at: float | None = None
    scope: str | None = None
    requested_scope: str | None = None
    issuer: str | None = None
    token_endpoint: str | None = None
    resource: str | None = None
    client_id: str | None = None

    def expires_within(self, seconds: float, *, now: float | None = None) -> bool:
        """True when the token is expired or will be within ``seconds`` (unknown expiry: never)."""
        if self.expires_at is None:
            return False
        return (time.time() if now is None else now) + seconds >= self.expires_at

    def granted_scopes(self) -> frozenset[str]:
        return frozenset((self.scope or "").split())

    def to_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Tokens:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        if not isinstance(values.get("access_token"), str):
            raise ValueError("stored tokens have no access_token")
        return cls(**values)

    def __repr__(self) -> str:
        return (
            f"Tokens(token_type={self.token_type!r}, access_token={_REDACTED}, "
            f"refresh_token={_secret(self.refresh_token)}, expires_at={self.expires_at!r}, "
            f"scope={self.scope!r}, issuer={self.issuer!r}, resource={self.resource!r})"
        )


@dataclass(frozen=True, repr=False)
class ClientInfo:
    """The OAuth client we authenticate as at one authorization server (keyed by its ``issuer``).

    Credentials are bound to the issuer that issued them (SEP-2352): a registered client is never
    presented to a different authorization server.
    """

    client_id: str
    client_secret: str | None = None
    token_endpoint_auth_method: str = "none"
    redirect_uris: tuple[str, ...] = ()
    issuer: str | None = None
    source: ClientSource = "registered"
    client_secret_expires_at: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def secret_expired(self, *, now: float | None = None) -> bool:
        # RFC 7591 §3.2.1: 0 means the secret does not expire.
        if not self.client_secret_expires_at:
            return False
        return (time.time() if now is None else now) >= self.client_secret_expires_at

    def with_issuer(self, issuer: str) -> ClientInfo:
        return replace(self, issuer=issuer)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None or value == {}:
                continue
            data[f.name] = list(value) if isinstance(value, tuple) else value
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ClientInfo:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        if not isinstance(values.get("client_id"), str):
            raise ValueError("stored client has no client_id")
        if "redirect_uris" in values:
            values["redirect_uris"] = tuple(str(u) for u in values["redirect_uris"] or ())
        return cls(**values)

    def __repr__(self) -> str:
        return (
            f"ClientInfo(client_id={self.client_id!r}, client_secret={_secret(self.client_secret)}, "
            f"token_endpoint_auth_method={self.token_endpoint_auth_method!r}, issuer={self.issuer!r}, "
            f"source={self.source!r})"
        )
