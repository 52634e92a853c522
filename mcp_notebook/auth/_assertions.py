"""Assertion grants (RFC 7523 §2.1): the client trades a JWT it already holds for an access token.

Two MCP authorization extensions use it. Workload identity federation (SEP-1933): the assertion is a
workload's own JWT (a Kubernetes service-account token, a cloud instance identity token), minted
for the authorization server as audience. Enterprise-Managed Authorization (SEP-990): the client
first exchanges the user's ID token at the enterprise identity provider for an Identity Assertion
JWT Authorization Grant (ID-JAG, RFC 8693 token exchange), then presents that.

Assertions are secrets: the records here hide them in ``repr`` and errors never quote them.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

import anyio.to_thread

from ..protocol._errors import McpError
from ._token import basic_credentials, json_body, oauth_error

__all__ = [
    "ID_JAG_TOKEN_TYPE",
    "ID_TOKEN_TYPE",
    "JWT_BEARER",
    "TOKEN_EXCHANGE",
    "AssertionContext",
    "AssertionSource",
    "IdpTokenExchange",
    "parse_token_exchange",
    "resolve",
    "token_exchange_form",
]

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id-jag"


@dataclass(frozen=True)
class AssertionContext:
    """What an assertion is for: a provider mints its JWT with ``issuer`` as the audience."""

    issuer: str
    token_endpoint: str
    resource: str
    scope: str | None


AssertionSource = str | Callable[[AssertionContext], "str | Awaitable[str]"]


@dataclass(frozen=True, repr=False)
class IdpTokenExchange:
    """Enterprise-Managed Authorization: where to exchange the user's ID token for an ID-JAG.

    ``id_token`` is the token from the enterprise single sign-on (or a function returning a fresh
    one); ``client_id``/``client_secret`` are this client's credentials at the identity provider.
    """

    token_endpoint: str
    id_token: AssertionSource
    client_id: str | None = None
    client_secret: str | None = None

    def __repr__(self) -> str:
        return f"IdpTokenExchange(token_endpoint={self.token_endpoint!r}, client_id={self.client_id!r})"


async def resolve(source: AssertionSource, context: AssertionContext) -> str:
    """The assertion itself: a string as given, or what the provider returns (a plain function runs
    in a worker thread, since providers read files or call metadata services)."""
    if isinstance(source, str):
        value: Any = source
    elif inspect.iscoroutinefunction(source):
        value = await source(context)
    else:
        value = await anyio.to_thread.run_sync(source, context)
        if inspect.isawaitable(value):
            value = await value
    if not isinstance(value, str) or not value.strip():
        raise McpError("auth", "the assertion provider returned no assertion (an empty or non-string value)")
    return value.strip()


def token_exchange_form(
    exchange: IdpTokenExchange, *, subject_token: str, audience: str, resource: str, scope: str | None
) -> tuple[dict[str, str], dict[str, str]]:
    """The RFC 8693 request that turns an ID token into an ID-JAG for ``audience`` (the MCP
    authorization server) and ``resource`` (the MCP server)."""
    form = {
        "grant_type": TOKEN_EXCHANGE,
        "subject_token": subject_token,
        "subject_token_type": ID_TOKEN_TYPE,
        "requested_token_type": ID_JAG_TOKEN_TYPE,
        "audience": audience,
        "resource": resource,
    }
    if scope:
        form["scope"] = scope
    headers: dict[str, str] = {}
    if exchange.client_id and exchange.client_secret is not None:
        headers["Authorization"] = basic_credentials(exchange.client_id, exchange.client_secret)
    elif exchange.client_id:
        form["client_id"] = exchange.client_id
    return form, headers


def parse_token_exchange(status: int, content: bytes, *, endpoint: str, redact: Iterable[str] = ()) -> str:
    """The ID-JAG from a token-exchange response."""
    if status != 200:
        _, summary = oauth_error(content, redact=redact)
        raise McpError(
            "auth",
            f"the identity provider's token endpoint {endpoint} refused the token exchange "
            f"(HTTP {status}, {summary})",
        )
    data = json_body(content)
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("access_token"), str)
        or not data["access_token"]
    ):
        raise McpError("auth", f"the identity provider's token endpoint {endpoint} returned no token")
    issued = data.get("issued_token_type")
    if issued is not None and issued != ID_JAG_TOKEN_TYPE:
        raise McpError(
            "auth",
            f"the identity provider's token endpoint {endpoint} issued a {issued!r} token, not an ID-JAG",
        )
    return str(data["access_token"])
