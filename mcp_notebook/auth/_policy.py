"""The decisions of the authorization-code flow that are pure rules: which scopes to ask for, how
to authenticate at the token endpoint, and whether an authorization response may be trusted.

Each function takes plain values and returns a value or raises :class:`McpError` (kind ``auth``)
with a message that says what was refused and why. No secret reaches a message: an authorization
response is judged by its ``iss``, ``state`` and ``error`` fields, and the code is only returned.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from ..protocol._errors import McpError

__all__ = [
    "OFFLINE_ACCESS",
    "authorization_code_from",
    "choose_client_auth_method",
    "choose_registration_auth_method",
    "parse_redirect",
    "select_scope",
    "union_scopes",
]

OFFLINE_ACCESS = "offline_access"
_SECRET_METHODS = ("client_secret_basic", "client_secret_post")


def union_scopes(*scopes: str | None) -> str | None:
    """Space-separated union, in first-seen order; None when empty (step-up, SEP-2350)."""
    seen: dict[str, None] = {}
    for scope in scopes:
        for item in (scope or "").split():
            seen.setdefault(item, None)
    return " ".join(seen) or None


def select_scope(
    *,
    challenge_scope: str | None,
    prm_scopes: Iterable[str] | None,
    as_scopes: Iterable[str] | None,
    wants_refresh_token: bool,
) -> str | None:
    """The ``scope`` of the first authorization request (MCP "Scope Selection Strategy").

    1. the ``scope`` of the ``WWW-Authenticate`` challenge; 2. else every scope in the protected
    resource's ``scopes_supported``; 3. else no ``scope`` parameter at all (the authorization server
    applies its default). Then, for a client that can use refresh tokens, ``offline_access`` is added
    when the authorization server lists it in ``scopes_supported`` (SEP-2207) and never otherwise. It is
    not added to an omitted scope: asking for ``offline_access`` alone would replace the server's
    default scopes with a scope that grants nothing at the MCP server.
    """
    scope = challenge_scope if challenge_scope else union_scopes(*(prm_scopes or ()))
    if scope and wants_refresh_token and OFFLINE_ACCESS in (as_scopes or ()):
        scope = union_scopes(scope, OFFLINE_ACCESS)
    return scope


def choose_registration_auth_method(supported: Iterable[str] | None) -> str:
    """The ``token_endpoint_auth_method`` to ask for in dynamic client registration.

    A native client cannot keep a secret better than it keeps its tokens, so it registers as a public
    client (``none``) when the server allows that; otherwise the first secret-based method the server
    lists. Without a list, RFC 8414's default ``client_secret_basic``.
    """
    methods = list(supported) if supported is not None else None
    if methods is None:
        return "client_secret_basic"
    if "none" in methods:
        return "none"
    for method in _SECRET_METHODS:
        if method in methods:
            return method
    return methods[0] if methods else "client_secret_basic"


def choose_client_auth_method(
    supported: Iterable[str] | None, *, has_secret: bool, has_private_key: bool
) -> str:
    """How a pre-configured client authenticates at the token endpoint.

    A private key means ``private_key_jwt``. With a secret: ``client_secret_basic`` unless the server
    lists only ``client_secret_post`` (RFC 8414's default list is ``client_secret_basic``). Without
    either: ``none`` (a public client sends only its ``client_id``).
    """
    if has_private_key:
        return "private_key_jwt"
    if not has_secret:
        return "none"
    methods = list(supported) if supported is not None else ["client_secret_basic"]
    if "client_secret_basic" in methods or "client_secret_post" not in methods:
        return "client_secret_basic"
    return "client_secret_post"


def parse_redirect(value: str | Mapping[str, Any]) -> dict[str, str]:
    """The query parameters of the redirect the browser ended at (a URL, a bare query, or a mapping)."""
    if isinstance(value, Mapping):
        out: dict[str, str] = {}
        for key, item in value.items():
            if isinstance(item, list | tuple):
                item = item[0] if item else ""
            if item is not None:
                out[str(key)] = str(item)
        return out
    if not isinstance(value, str):
        raise McpError("auth", "on_authorize must return the redirect URL (a string) or its query parameters")
    text = value.strip()
    parts = urlsplit(text)
    query = parts.query if (parts.scheme or parts.query) else text.lstrip("?")
    # Some authorization servers answer in the fragment (response_mode=fragment); accept that too.
    if not query and parts.fragment:
        query = parts.fragment
    return dict(parse_qsl(query, keep_blank_values=True))


def authorization_code_from(
    params: Mapping[str, str],
    *,
    expected_state: str,
    issuer: str,
    iss_supported: bool,
) -> str:
    """The authorization code from a redirect, after every check that must come before using it.

    Order matters. ``iss`` first (RFC 9207 §2.4, MCP "Authorization Response Validation"): if the
    server advertises ``authorization_response_iss_parameter_supported`` an absent ``iss`` is refused;
    a present ``iss`` must equal the recorded issuer by simple string comparison, no normalization,
    advertised or not. Only then ``state`` (a mismatch means the redirect answers some other request),
    and only then the ``error`` fields, which must not be acted on or shown before ``iss`` checks out.
    """
    iss = params.get("iss")
    if iss is None and iss_supported:
        raise McpError(
            "auth",
            f"the authorization server at {issuer} did not return an iss parameter although it advertises "
            "authorization_response_iss_parameter_supported; refusing the authorization response (RFC 9207)",
        )
    if iss is not None and iss != issuer:
        raise McpError(
            "auth",
            f"the authorization response names issuer {iss!r} but the authorization server is {issuer!r}; "
            "refusing it (possible mix-up attack, RFC 9207)",
        )
    if params.get("state") != expected_state:
        raise McpError(
            "auth",
            "the authorization response does not carry the state this client sent; refusing it "
            "(it answers a different authorization request, or was forged)",
        )
    error = params.get("error")
    if error:
        description = params.get("error_description")
        detail = f": {description[:300]}" if description else ""
        raise McpError(
            "auth", f"the authorization server at {issuer} refused the authorization ({error}{detail})"
        )
    code = params.get("code")
    if not code:
        raise McpError("auth", f"the authorization response from {issuer} has neither a code nor an error")
    return code
