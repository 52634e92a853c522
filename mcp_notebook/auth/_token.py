"""Token-endpoint and registration-endpoint messages: build the request, read the answer.

Requests are plain :class:`httpx.Request` objects that the OAuth flow yields into the caller's
``httpx.AsyncClient``; answers come back as bytes and a status. Client authentication at the token
endpoint (``client_secret_basic``, ``client_secret_post``, ``private_key_jwt``, ``none``) is decided
once, in :func:`authenticate`. Errors quote only the server's ``error``/``error_description`` fields,
never the form that was sent.
"""

from __future__ import annotations

import base64
import contextlib
import json
import time
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, unquote

import httpx

from ..protocol._errors import McpError
from ._jwt import CLIENT_ASSERTION_TYPE, client_assertion
from ._records import ClientInfo, Tokens

__all__ = [
    "authenticate",
    "json_body",
    "oauth_error",
    "parse_registration",
    "parse_token_response",
    "registration_request",
    "secrets_in",
    "token_request",
]

_MAX_DESCRIPTION = 300


def json_body(content: bytes) -> Any:
    try:
        return json.loads(content)
    except (ValueError, UnicodeDecodeError):
        return None


# Form fields whose values are secrets: a server's error text that echoes one must not repeat it.
SECRET_FIELDS = (
    "code",
    "code_verifier",
    "client_secret",
    "client_assertion",
    "refresh_token",
    "assertion",
    "subject_token",
    "device_code",
)


def oauth_error(content: bytes, *, redact: Iterable[str] = ()) -> tuple[str | None, str]:
    """The ``error`` code and a printable summary of an OAuth error body (RFC 6749 §5.2), with any
    of the ``redact`` values (what we sent) blanked out of the server's text."""
    data = json_body(content)
    if not isinstance(data, dict) or not isinstance(data.get("error"), str):
        return None, "no OAuth error in the body"
    error = str(data["error"])
    description = data.get("error_description")
    summary = f"{error}: {description}" if isinstance(description, str) and description else error
    for secret in redact:
        if len(secret) >= 4:
            summary = summary.replace(secret, "<redacted>")
    return error, summary[: _MAX_DESCRIPTION + len(error) + 2]


def refused(status: int, content: bytes, *, what: str, redact: Iterable[str] = ()) -> McpError:
    """The ``auth`` McpError for an endpoint's non-200 answer: ``what`` (which endpoint refused
    what) with the server's OAuth error summary, secrets we sent blanked; ``data`` holds the OAuth
    ``error`` code (so a failed refresh can fall back to a new authorization) and the status."""
    code, summary = oauth_error(content, redact=redact)
    return McpError(
        "auth", f"{what} (HTTP {status}, {summary})", data={"oauth_error": code, "status": status}
    )


def secrets_in(form: Mapping[str, str], headers: Mapping[str, str] | None = None) -> list[str]:
    """The secret values of a token request, for :func:`oauth_error`'s ``redact``."""
    found = [form[name] for name in SECRET_FIELDS if form.get(name)]
    auth = (headers or {}).get("Authorization", "")
    if auth.startswith("Basic "):
        found.append(auth[6:])
        with contextlib.suppress(ValueError):
            found.extend(unquote(part) for part in base64.b64decode(auth[6:]).decode().split(":", 1))
    return found


def basic_credentials(client_id: str, client_secret: str) -> str:
    """The ``Authorization`` value for HTTP Basic client authentication (RFC 6749 §2.3.1).

    Both parts are form-encoded before they are joined and base64-encoded; servers that skip this
    step reject an id or secret holding ``:`` or non-ASCII characters, so there is one spelling.
    """
    pair = f"{quote(client_id, safe='')}:{quote(client_secret, safe='')}"
    return "Basic " + base64.b64encode(pair.encode()).decode("ascii")


def authenticate(
    client: ClientInfo,
    form: dict[str, str],
    headers: dict[str, str],
    *,
    audience: str,
    private_key: str | bytes | None = None,
    signing_algorithm: str | None = None,
) -> None:
    """Add the client's authentication to a token request, by its ``token_endpoint_auth_method``."""
    method = client.token_endpoint_auth_method
    if method == "client_secret_basic" and client.client_secret is not None:
        headers["Authorization"] = basic_credentials(client.client_id, client.client_secret)
    elif method == "client_secret_post" and client.client_secret is not None:
        form["client_id"] = client.client_id
        form["client_secret"] = client.client_secret
    elif method == "private_key_jwt":
        if private_key is None:
            raise McpError(
                "auth", "the client authenticates with private_key_jwt but no private_key was configured"
            )
        form["client_id"] = client.client_id
        form["client_assertion_type"] = CLIENT_ASSERTION_TYPE
        form["client_assertion"] = client_assertion(
            private_key, client_id=client.client_id, audience=audience, algorithm=signing_algorithm
        )
    else:
        form["client_id"] = client.client_id


def token_request(
    endpoint: str, form: Mapping[str, str], headers: Mapping[str, str], extensions: dict[str, Any]
) -> httpx.Request:
    return httpx.Request(
        "POST",
        endpoint,
        data=dict(form),
        headers={"Accept": "application/json", **headers},
        extensions=extensions,
    )


def parse_token_response(
    status: int,
    content: bytes,
    *,
    what: str,
    endpoint: str,
    issuer: str,
    resource: str,
    client_id: str | None,
    requested_scope: str | None,
    previous: Tokens | None = None,
    dpop: bool = False,
    redact: Iterable[str] = (),
    now: float | None = None,
) -> Tokens:
    """The tokens of a successful token response, or an ``auth`` McpError whose ``data`` holds the
    OAuth ``error`` code (so a failed refresh can fall back to a new authorization)."""
    if status != 200:
        raise refused(
            status, content, what=f"the token endpoint {endpoint} refused the {what}", redact=redact
        )
    data = json_body(content)
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("access_token"), str)
        or not data["access_token"]
    ):
        raise McpError("auth", f"the token endpoint {endpoint} answered the {what} without an access_token")
    token_type = data.get("token_type", "Bearer")
    kind = token_type.lower() if isinstance(token_type, str) else None
    if kind not in ("bearer", "dpop") or (kind == "dpop" and not dpop):
        raise McpError(
            "auth",
            f"the token endpoint {endpoint} issued a {token_type!r} token; only Bearer tokens (and DPoP "
            "tokens, when OAuth(dpop=True) sent a proof) are supported",
        )
    expires_in = data.get("expires_in")
    if isinstance(expires_in, str) and expires_in.isdigit():
        expires_in = int(expires_in)
    expires_at = None
    if isinstance(expires_in, int | float) and not isinstance(expires_in, bool) and expires_in > 0:
        expires_at = (time.time() if now is None else now) + float(expires_in)
    refresh = data.get("refresh_token")
    if not isinstance(refresh, str) or not refresh:
        # RFC 6749 §6: a refresh response without a new refresh token leaves the old one valid.
        refresh = previous.refresh_token if previous is not None else None
    granted = data.get("scope")
    return Tokens(
        access_token=data["access_token"],
        token_type="DPoP" if kind == "dpop" else "Bearer",
        refresh_token=refresh,
        expires_at=expires_at,
        # Without a scope in the answer, the grant is unchanged (refresh) or what was asked for.
        scope=granted if isinstance(granted, str) else (previous.scope if previous else requested_scope),
        requested_scope=requested_scope,
        issuer=issuer,
        token_endpoint=endpoint,
        resource=resource,
        client_id=client_id,
    )


def registration_request(
    endpoint: str, metadata: Mapping[str, Any], extensions: dict[str, Any]
) -> httpx.Request:
    return httpx.Request(
        "POST",
        endpoint,
        json=dict(metadata),
        headers={"Accept": "application/json"},
        extensions=extensions,
    )


def parse_registration(
    status: int,
    content: bytes,
    *,
    endpoint: str,
    issuer: str,
    requested_method: str,
    redirect_uris: tuple[str, ...],
) -> ClientInfo:
    """The client an RFC 7591 registration response describes."""
    if status not in (200, 201):
        _, summary = oauth_error(content)
        raise McpError(
            "auth",
            f"dynamic client registration at {endpoint} failed (HTTP {status}, {summary}); register a client "
            "with the authorization server yourself and pass OAuth(client_id=..., client_secret=...)",
        )
    data = json_body(content)
    if not isinstance(data, dict) or not isinstance(data.get("client_id"), str) or not data["client_id"]:
        raise McpError("auth", f"dynamic client registration at {endpoint} answered without a client_id")
    secret = data.get("client_secret") if isinstance(data.get("client_secret"), str) else None
    method = data.get("token_endpoint_auth_method")
    if not isinstance(method, str):
        # RFC 7591 §2: absent means client_secret_basic, but a server that issued no secret cannot
        # mean that; and one that issued a secret to a client that asked for "none" wants it used.
        if secret is None:
            method = "none"
        else:
            method = (
                requested_method
                if requested_method in ("client_secret_basic", "client_secret_post")
                else ("client_secret_basic")
            )
    expires = data.get("client_secret_expires_at")
    uris = data.get("redirect_uris")
    return ClientInfo(
        client_id=data["client_id"],
        client_secret=secret,
        token_endpoint_auth_method=method,
        redirect_uris=tuple(u for u in uris if isinstance(u, str))
        if isinstance(uris, list)
        else redirect_uris,
        issuer=issuer,
        source="registered",
        client_secret_expires_at=float(expires) if isinstance(expires, int | float) and expires else None,
    )
