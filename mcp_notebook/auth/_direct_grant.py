"""The grants without a person or a browser: ``client_credentials`` and ``jwt_bearer`` (RFC 7523).

A client acting for itself sends its credentials, or an assertion (a workload's JWT, or an ID-JAG
the identity provider made from the user's ID token: SEP-990), straight to the token endpoint. Its
own module because none of it touches the human step that the rest of the OAuth flow sequences.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Callable

import httpx

from . import _discovery as disco
from ._assertions import (
    JWT_BEARER,
    AssertionContext,
    AssertionSource,
    IdpTokenExchange,
    parse_token_exchange,
    resolve,
    token_exchange_form,
)
from ._client_auth import ClientAuth
from ._flow import HTTP_TIMEOUT, Discovered, Flow
from ._token import secrets_in, token_request

__all__ = ["TokenRequest", "direct_grant"]

#: ``OAuth._token_request``: a token request at the discovered server, as steps to yield.
TokenRequest = Callable[..., AsyncGenerator[httpx.Request, None]]


async def direct_grant(
    flow: Flow,
    found: Discovered,
    scope: str | None,
    *,
    grant: str,
    assertion: AssertionSource | IdpTokenExchange | None,
    client_auth: ClientAuth,
    ask_tokens: TokenRequest,
) -> AsyncGenerator[httpx.Request, None]:
    """The grants without a user or a browser: ``client_credentials`` and ``jwt_bearer``;
    ``ask_tokens`` makes the token request (``OAuth._token_request``)."""
    server = found.server
    client = client_auth.configured(server)
    if client is not None:
        client_auth.remember(server.issuer, client)
    if grant == "client_credentials":
        form = {"grant_type": "client_credentials"}
    else:
        assert assertion is not None
        context = AssertionContext(server.issuer, server.token_endpoint, found.resource, scope)
        exchange = assertion
        if isinstance(exchange, IdpTokenExchange):
            # SEP-990: the user's ID token becomes an ID-JAG at the identity provider first.
            disco.require_secure(exchange.token_endpoint, "identity provider token endpoint")
            subject = await resolve(exchange.id_token, context)
            idp_form, idp_headers = token_exchange_form(
                exchange,
                subject_token=subject,
                audience=server.issuer,
                resource=found.resource,
                scope=scope,
            )
            yield token_request(exchange.token_endpoint, idp_form, idp_headers, {"timeout": HTTP_TIMEOUT})
            response = await flow.received()
            assertion = parse_token_exchange(
                response.status_code,
                response.content,
                endpoint=exchange.token_endpoint,
                redact=secrets_in(idp_form, idp_headers),
            )
        else:
            assertion = await resolve(exchange, context)
        form = {"grant_type": JWT_BEARER, "assertion": assertion}
    form["resource"] = found.resource
    if scope:
        form["scope"] = scope
    async with contextlib.aclosing(
        ask_tokens(flow, found, client, form, scope, what=f"{form['grant_type'].rsplit(':', 1)[-1]} request")
    ) as steps:
        async for step in steps:
            yield step
