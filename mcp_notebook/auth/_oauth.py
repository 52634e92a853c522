"""The OAuth 2.1 client of the MCP authorization spec, as an :class:`httpx.Auth`.

Theory of operation. httpx drives an auth flow as an async generator: it sends what the generator
yields and sends the response back in. That lets this one object do everything a 401 asks for with
the caller's own ``httpx.AsyncClient`` (its proxies, TLS settings and event hooks): fetch
protected-resource and authorization-server metadata, register a client, send the user to the
authorization server, redeem the code, and finally resend the original request with the token.

- Tokens belong to one protected resource: the MCP server's canonical URL, path included (RFC 8707,
  RFC 9728), never its origin. A request goes out with the tokens of the server at its own URL, or
  with none, and that server's 401 runs a flow of its own; so one object can serve ``/a/mcp`` and
  ``/b/mcp`` on one origin and neither ever sees the other's token. What is the authorization
  server's (its metadata, the client registered there) is shared between the servers it serves.
- Before each request: attach the current token; refresh it first if it is about to expire.
- 401: rediscover (the protected-resource metadata may now name another authorization server), then
  refresh if possible, else authorize anew. At most one refresh and one authorization per request.
- 403 ``insufficient_scope``: step-up, authorizing again for the union of the scopes asked for so far
  and the challenged ones; never when the token already carries them, and at most ``max_step_ups``
  times per request.

Sub-steps are async generators too. They yield requests and read each response from a shared
mailbox (:class:`_Flow`), so delegating to one is ``async for req in step: yield req``. One lock
serialises every flow that talks to the authorization server, so concurrent requests that all hit a
401 cause one authorization; the others find the new token and resend. Pure decisions live in
``_discovery``, ``_policy`` and ``_token``; this module only sequences them.

Secrets (tokens, the code, the PKCE verifier, client secrets, private keys) are never logged, never
put in an exception message, and never shown by ``repr``.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import sys
from collections.abc import AsyncGenerator, Awaitable, Callable, Generator, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

import anyio
import anyio.to_thread
import httpx

from ..protocol.errors import McpError
from ..transports._http_common import safe_url
from ..transports._http_engine import TooLarge, read_bounded
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
from ._discovery import AuthServer, ProtectedResource
from ._dpop import DpopKey
from ._loopback import LoopbackReceiver
from ._pkce import new_pkce, new_state
from ._policy import (
    authorization_code_from,
    choose_client_auth_method,
    choose_registration_auth_method,
    parse_redirect,
    select_scope,
    union_scopes,
)
from ._records import ClientInfo, Tokens
from ._store import MemoryTokenStore, TokenStore
from ._token import (
    authenticate,
    json_body,
    oauth_error,
    parse_registration,
    parse_token_response,
    registration_request,
    secrets_in,
    token_request,
)
from ._www_authenticate import Challenge, oauth_challenge, parse_challenges

__all__ = ["OAuth", "OnAuthorize"]

logger = logging.getLogger("mcp_notebook.auth")

OnAuthorize = Callable[[str], Awaitable[str | Mapping[str, Any]] | str | Mapping[str, Any]]
Grant = Literal["authorization_code", "client_credentials", "jwt_bearer"]

_REFRESH_AHEAD = 30.0  # refresh a token this many seconds before it expires
_HTTP_TIMEOUT = httpx.Timeout(30.0).as_dict()  # metadata, registration and token requests
#: The default bound on one OAuth response (metadata, registration, tokens), in decoded bytes.
DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024


@dataclass
class _Discovered:
    resource: str  # the `resource` parameter: the PRM's resource as published, else the canonical URL
    server: AuthServer
    prm: ProtectedResource | None


class _Server:
    """One protected resource (an MCP server, named by its canonical URL) and the tokens held for it.

    Why one per URL and not one per origin: RFC 8707 binds a token to the resource it was issued for,
    and two MCP servers on one origin (a gateway's tenants, ``/a/mcp`` and ``/b/mcp``) are two
    resources. Each gets its own tokens, loaded from and saved to the store under its own URL, so one
    server's token never reaches the other.
    """

    __slots__ = ("loaded", "tokens", "url")

    def __init__(self, url: str) -> None:
        self.url = url  # canonical_resource() of the server's URL: the store's key
        self.tokens: Tokens | None = None
        self.loaded = False  # the store has been read for this server

    def __repr__(self) -> str:
        return f"_Server({self.url!r}, tokens={self.tokens!r})"


class _Flow:
    """Per-request state shared by the flow and its sub-steps: the server it goes to, the mailbox
    for the latest response, and what this request has already tried (so it cannot loop)."""

    def __init__(self, request: httpx.Request, server: _Server, max_bytes: int) -> None:
        self.request = request
        self.server = server
        self.max_bytes = max_bytes
        self.response: httpx.Response | None = None
        self.refreshed = False
        self.authorized = False
        self.step_ups = 0
        self.discovered: _Discovered | None = None
        self.client: ClientInfo | None = None
        self.tokens: Tokens | None = None

    async def received(self) -> httpx.Response:
        response, self.response = self.response, None
        if response is None:  # pragma: no cover - a flow bug, not a server's
            raise RuntimeError("OAuth flow resumed without a response")
        await _read_capped(response, self.max_bytes)
        return response


async def _read_capped(response: httpx.Response, limit: int) -> None:
    """Read a response the flow looks at, or that httpx would read whole before the next request,
    counting its decoded bytes as they arrive: OAuth documents are small, so a server that sends
    a huge one (or a gzip bomb) fails this sign-in instead of filling the client's memory."""
    try:
        await read_bounded(response, limit)
    except TooLarge as exc:
        raise McpError(
            "auth",
            f"{safe_url(response.url)} answered with more than max_response_bytes={limit} bytes (at least "
            f"{exc.size}); refused. Pass OAuth(max_response_bytes=...) to accept larger OAuth responses.",
        ) from None


async def _set_aside(response: httpx.Response, limit: int) -> None:
    """Finish with the body of a 401 or 403 the flow is about to answer. The flow does not need it,
    but httpx reads a response whole before sending the flow's next request; read here within
    ``limit``, a larger body (a gzip bomb for an error page) is dropped instead, connection and all."""
    try:
        await read_bounded(response, limit)
    except TooLarge:
        response.headers.pop("content-encoding", None)
        response.stream = httpx.ByteStream(b"")


class OAuth(httpx.Auth):
    """OAuth 2.1 for MCP servers over HTTP (authorization spec 2025-03-26 … 2026-07-28).

    Pass it as ``auth=`` to ``httpx.AsyncClient`` (or to :class:`mcp_notebook.Client`). Nothing
    happens until the server answers 401; then the client discovers the authorization server,
    identifies itself (pre-registered ``client_id``, else a Client ID Metadata Document URL when the
    server supports those, else dynamic registration), sends the user to authorize with PKCE, and
    retries with the token. Tokens refresh before they expire; a 403 ``insufficient_scope`` asks for
    the missing scopes.

    ``on_authorize(url)`` is the human step: it gets the authorization URL and returns the URL the
    browser was redirected to (or its query parameters); it may be a coroutine function, and a plain
    function runs in a worker thread (so ``input()`` works). It needs ``redirect_uri``. Without it,
    the URL is printed and the redirect is received on a loopback listener at
    ``http://127.0.0.1:<callback_port>/callback`` (an ephemeral port by default).

    ``grant="client_credentials"`` is for a client acting on its own behalf (no user, no browser):
    it needs ``client_id`` and ``client_secret`` or a PEM ``private_key`` (``private_key_jwt``, which
    needs the ``cryptography`` package). ``grant="jwt_bearer"`` trades an ``assertion`` for tokens
    (RFC 7523): a workload's JWT or a function that returns one (workload identity federation), or an
    :class:`IdpTokenExchange` that first turns the user's enterprise ID token into an ID-JAG
    (Enterprise-Managed Authorization).

    ``dpop=True`` asks for DPoP-bound tokens (RFC 9449) and proves possession of an in-memory key on
    every request; it needs the ``cryptography`` package.

    One object may serve several MCP servers on the origin of ``server_url`` (else of its first
    request): each server URL is its own protected resource, with its own tokens in the store, and
    runs its own authorization; requests to any other origin pass untouched.

    ``max_response_bytes`` (default 1 MiB) bounds every response the sign-in reads (metadata,
    registration and token answers), counted in decoded bytes: a gzip body is bounded by what it
    inflates to, never by its compressed length. A larger answer fails the request with an
    ``auth`` error that names the limit. The body of the 401 or 403 that starts a sign-in is read
    within the same bound, and dropped if larger.
    """

    requires_request_body = True

    def __init__(
        self,
        *,
        grant: Grant = "authorization_code",
        client_id: str | None = None,
        client_secret: str | None = None,
        private_key: str | bytes | None = None,
        signing_algorithm: str | None = None,
        issuer: str | None = None,
        assertion: AssertionSource | IdpTokenExchange | None = None,
        client_metadata_url: str | None = None,
        client_name: str = "mcp-notebook",
        scope: str | None = None,
        redirect_uri: str | None = None,
        callback_port: int = 0,
        on_authorize: OnAuthorize | None = None,
        store: TokenStore | None = None,
        server_url: str | None = None,
        authorize_timeout: float | None = 300.0,
        max_step_ups: int = 2,
        dpop: bool = False,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        if grant not in ("authorization_code", "client_credentials", "jwt_bearer"):
            raise ValueError(
                f"grant must be 'authorization_code', 'client_credentials' or 'jwt_bearer', not {grant!r}"
            )
        if (grant == "jwt_bearer") != (assertion is not None):
            raise ValueError("grant='jwt_bearer' needs assertion=, and assertion= needs grant='jwt_bearer'")
        if (client_secret is not None or private_key is not None) and not client_id:
            raise ValueError("client_secret= and private_key= need the client_id= they belong to")
        if grant == "client_credentials" and (
            not client_id or (client_secret is None and private_key is None)
        ):
            raise ValueError(
                "grant='client_credentials' needs client_id= and client_secret= (or private_key=)"
            )
        if on_authorize is not None and redirect_uri is None:
            raise ValueError(
                "on_authorize= needs redirect_uri=: the redirect URI the authorization server sends to"
            )
        if redirect_uri is not None and on_authorize is None:
            parts = urlsplit(redirect_uri)
            if parts.scheme != "http" or not disco.is_loopback_host(parts.hostname):
                raise ValueError(
                    "without on_authorize=, redirect_uri= must be a loopback http URL "
                    "(such as http://127.0.0.1:8765/callback) that this process can listen on"
                )
        if client_metadata_url is not None:
            parts = urlsplit(client_metadata_url)
            if parts.scheme != "https" or parts.path in ("", "/"):
                raise ValueError(
                    "client_metadata_url= must be an https URL with a path (the client ID metadata document)"
                )
        if max_step_ups < 0:
            raise ValueError("max_step_ups must be 0 or more")
        if max_response_bytes < 1024:
            raise ValueError("max_response_bytes must be at least 1024")
        self._max_response_bytes = max_response_bytes
        self._grant: Grant = grant
        self._client_id = client_id
        self._client_secret = client_secret
        self._private_key = private_key
        self._signing_algorithm = signing_algorithm
        self._issuer = issuer
        self._assertion = assertion
        self._client_metadata_url = client_metadata_url
        self._client_name = client_name
        self._scope = " ".join(scope.split()) if scope and scope.strip() else None
        self._redirect_uri = redirect_uri
        self._callback_port = callback_port
        self._on_authorize = on_authorize
        self._store: TokenStore = store if store is not None else MemoryTokenStore()
        self._server_url = disco.canonical_resource(server_url) if server_url else None
        self._origin = disco.origin(self._server_url) if self._server_url else None
        self._servers: dict[str, _Server] = {}  # canonical server URL -> its tokens
        self._authorize_timeout = authorize_timeout
        self._max_step_ups = max_step_ups
        self._lock = anyio.Lock()
        self._as_cache: dict[str, AuthServer] = {}
        self._clients: dict[str, ClientInfo] = {}  # the client each issuer knows us as, this process
        self._protocol_version: str | None = None
        self._dpop = dpop
        self._dpop_key: DpopKey | None = None
        self._dpop_nonces: dict[str, str] = {}  # origin -> the latest DPoP-Nonce it sent (RFC 9449 §8, §9)
        self._user_step_listeners: list[Callable[[bool], None]] = []

    def __repr__(self) -> str:
        who = f", client_id={self._client_id!r}" if self._client_id else ""
        servers = list(dict.fromkeys([*([self._server_url] if self._server_url else []), *self._servers]))
        where = f"servers={tuple(servers)!r}" if len(servers) > 1 else f"server={next(iter(servers), None)!r}"
        return f"OAuth(grant={self._grant!r}{who}, {where}, store={self._store!r})"

    # -- public helpers ---------------------------------------------------------------------------

    @property
    def authorize_timeout(self) -> float | None:
        """How long the human step may take; a client gives its first requests at least this long."""
        return self._authorize_timeout

    def on_user_step(self, listener: Callable[[bool], None]) -> Callable[[], None]:
        """Call ``listener(True)`` when a person is asked to sign in, ``listener(False)`` when done.

        Why: that step takes as long as a person takes (up to ``authorize_timeout``), and it
        happens inside whichever request met the 401, while every other request waits for the
        token. A connection listens to pause its request deadlines meanwhile, so the sign-in is
        bounded by ``authorize_timeout`` alone and no waiting request times out because of it.
        Returns a function that removes the listener.
        """
        listeners = self._user_step_listeners
        listeners.append(listener)
        return lambda: listeners.remove(listener) if listener in listeners else None

    def for_server(self, server_url: str | httpx.URL) -> httpx.Auth:
        """An ``httpx.Auth`` that signs requests with the tokens of the MCP server at ``server_url``,
        whatever URL on its origin they go to.

        Why: an HTTP+SSE (2024-11-05) server names on its stream the endpoint that messages are
        POSTed to (``/messages``, say). That endpoint is the same server, not another protected
        resource, so its requests carry the stream's tokens instead of starting a sign-in of their
        own. The binding lives in the returned object, for that one session: the same URL used on
        its own is still a resource of its own. Requests to another origin pass untouched.
        """
        return _ForServer(self, disco.canonical_resource(str(server_url)))

    async def clear(self, server_url: str | None = None) -> None:
        """Forget the tokens for ``server_url``, or for every server this object has served (here and
        in the store); the next 401 authorizes anew."""
        async with self._lock:
            if server_url is not None:
                servers = [self._server_for(server_url)]
            else:
                if self._server_url is not None:
                    self._server_for(self._server_url)
                servers = list(self._servers.values())
            for server in servers:
                server.tokens = None
                server.loaded = True
                await self._store.set_tokens(server.url, None)

    # -- httpx.Auth -------------------------------------------------------------------------------

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        raise RuntimeError("mcp_notebook.auth.OAuth works with httpx.AsyncClient only")

    def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        return self._signed(request, str(request.url))

    async def _signed(
        self, request: httpx.Request, server_url: str
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        """The flow of one request to the MCP server at ``server_url`` (the request's own URL,
        unless :meth:`for_server` bound it to another)."""
        if not self._applies_to(request.url) or disco.origin(str(request.url)) != disco.origin(server_url):
            # Never hand a token to another origin.
            yield request
            return
        server = self._server_for(server_url)
        await request.aread()  # the body must be replayable: it may be sent again after a 401
        flow = _Flow(request, server, self._max_response_bytes)
        async with self._lock, contextlib.aclosing(self._before_send(flow)) as steps:
            async for step in steps:
                flow.response = yield step
        sent = self._attach(request, server)
        response = yield request
        nonce_retries = 0
        while True:
            self._remember_nonce(request.url, response)
            challenges = parse_challenges(response.headers.get_list("www-authenticate"))
            challenge = oauth_challenge(challenges)
            if challenges and challenge is None:
                return  # the server asks for some other kind of credentials (Basic, an API key...)
            if (
                response.status_code == 401
                and challenge is not None
                and challenge.error == "use_dpop_nonce"
                and sent is not None
                and sent.token_type == "DPoP"
                and "dpop-nonce" in response.headers
                and nonce_retries < 2
            ):
                nonce_retries += 1  # RFC 9449 §9: the same request again, with the server's nonce
                await _set_aside(response, flow.max_bytes)
                sent = self._attach(request, server)
                response = yield request
                continue
            if response.status_code == 401:
                if flow.authorized:
                    raise McpError(
                        "auth",
                        f"the MCP server at {server.url} still answers 401 Unauthorized after a fresh "
                        "authorization; it does not accept the tokens its authorization server issues",
                    )
            elif response.status_code != 403 or challenge is None or challenge.error != "insufficient_scope":
                return
            await _set_aside(response, flow.max_bytes)
            async with self._lock:
                # Another request may have obtained new tokens while this one waited: then just resend.
                if server.tokens is None or server.tokens is sent:
                    handler = (
                        self._on_unauthorized(flow, challenge)
                        if response.status_code == 401
                        else self._on_insufficient_scope(flow, challenge)
                    )
                    async with contextlib.aclosing(handler) as steps:
                        async for step in steps:
                            flow.response = yield step
            sent = self._attach(request, server)
            response = yield request

    # -- what happens around one request ----------------------------------------------------------

    def _applies_to(self, url: httpx.URL) -> bool:
        """The origin of ``server_url=`` (else of the first request) is the one this object signs in
        to; requests elsewhere pass untouched. Within it, each server has its own tokens."""
        if self._origin is None:
            self._origin = disco.origin(str(url))
        return disco.origin(str(url)) == self._origin

    def _server_for(self, url: str) -> _Server:
        """The protected resource at ``url``, named by its canonical URL (RFC 8707, path included).

        ``/mcp`` and ``/mcp/`` are one resource (as :func:`resource_matches` has it): a server that
        redirects one to the other must not cost a second sign-in. The first spelling used is the key.
        """
        key = disco.canonical_resource(url)
        server = self._servers.get(key) or self._servers.get(key[:-1] if key.endswith("/") else f"{key}/")
        if server is None:
            server = self._servers[key] = _Server(key)
        return server

    def _attach(self, request: httpx.Request, server: _Server) -> Tokens | None:
        tokens = server.tokens
        request.headers.pop("DPoP", None)
        if tokens is None:
            request.headers.pop("Authorization", None)
        elif tokens.token_type == "DPoP" and self._dpop_key is not None:
            # A fresh proof for every send, retries included: a proof is never replayed.
            request.headers["Authorization"] = f"DPoP {tokens.access_token}"
            request.headers["DPoP"] = self._dpop_key.proof(
                request.method,
                str(request.url),
                access_token=tokens.access_token,
                nonce=self._dpop_nonces.get(disco.origin(str(request.url))),
            )
        else:
            request.headers["Authorization"] = f"Bearer {tokens.access_token}"
        return tokens

    def _remember_nonce(self, url: httpx.URL | str, response: httpx.Response) -> None:
        nonce = response.headers.get("dpop-nonce")
        if nonce and self._dpop_key is not None:
            self._dpop_nonces[disco.origin(str(url))] = nonce

    def _dpop_for(self, server: AuthServer) -> DpopKey | None:
        """The key to bind tokens from ``server`` to, or None when DPoP is off."""
        if not self._dpop:
            return None
        algs = server.dpop_signing_alg_values_supported
        if algs is not None and DpopKey.alg not in algs:
            raise McpError(
                "auth",
                f"the authorization server {server.issuer} accepts DPoP proofs signed with "
                f"{', '.join(algs) or 'no algorithm'}, not {DpopKey.alg}; "
                "pass dpop=False to use Bearer tokens",
            )
        if self._dpop_key is None:
            self._dpop_key = DpopKey()
        return self._dpop_key

    async def _adopt(self, server: _Server, tokens: Tokens | None) -> None:
        server.tokens = tokens
        try:
            await self._store.set_tokens(server.url, tokens)
        except Exception as exc:  # a broken store must not break a working session
            logger.warning("could not save tokens to %r: %s", self._store, type(exc).__name__)

    async def _before_send(self, flow: _Flow) -> AsyncGenerator[httpx.Request, None]:
        server = flow.server
        if not server.loaded:
            server.loaded = True
            try:
                server.tokens = _own_tokens(await self._store.get_tokens(server.url), server.url)
            except Exception as exc:
                logger.warning("could not read tokens from %r: %s", self._store, type(exc).__name__)
        tokens = server.tokens
        if tokens is not None and tokens.token_type == "DPoP" and self._dpop_key is None:
            # Bound to a key from an earlier process, which is gone: unusable, and not worth a 401.
            await self._adopt(server, None)
            return
        if tokens is None or not tokens.expires_within(_REFRESH_AHEAD):
            return
        if tokens.refresh_token and tokens.token_endpoint and tokens.issuer:
            async with contextlib.aclosing(self._refresh_once(flow, tokens)) as steps:
                async for step in steps:
                    yield step
            if flow.refreshed:
                return
        # Expired and not refreshable: send without it; the 401 that follows starts a new authorization.
        await self._adopt(server, None)

    async def _refresh_once(self, flow: _Flow, tokens: Tokens) -> AsyncGenerator[httpx.Request, None]:
        """Refresh ``tokens`` if a client to do it with is known; ``flow.refreshed`` says it was tried.

        A request refreshes at most once (before sending, or after its 401), never in a loop.
        """
        client = await self._client_for_refresh(tokens)
        if client is None:
            return
        flow.refreshed = True
        async with contextlib.aclosing(self._refresh(flow, tokens, client)) as steps:
            async for step in steps:
                yield step

    async def _on_unauthorized(
        self, flow: _Flow, challenge: Challenge | None
    ) -> AsyncGenerator[httpx.Request, None]:
        async with contextlib.aclosing(self._discover(flow, challenge)) as steps:
            async for step in steps:
                yield step
        found = flow.discovered
        assert found is not None
        server = flow.server
        tokens = server.tokens
        if tokens is not None and tokens.issuer not in (None, found.server.issuer):
            logger.info(
                "the authorization server changed to %s; previous tokens dropped", found.server.issuer
            )
            await self._adopt(server, None)
            tokens = None
        if tokens is not None and tokens.refresh_token and not flow.refreshed:
            async with contextlib.aclosing(self._refresh_once(flow, tokens)) as steps:
                async for step in steps:
                    yield step
            if flow.refreshed and server.tokens is not None and server.tokens is not tokens:
                return
        flow.authorized = True
        challenge_scope = challenge.scope if challenge is not None else None
        scope = self._scope or select_scope(
            challenge_scope=challenge_scope,
            prm_scopes=found.prm.scopes_supported if found.prm else None,
            as_scopes=found.server.scopes_supported,
            wants_refresh_token=self._grant == "authorization_code",
        )
        async with contextlib.aclosing(self._authorize(flow, found, scope)) as steps:
            async for step in steps:
                yield step

    async def _on_insufficient_scope(
        self, flow: _Flow, challenge: Challenge | None
    ) -> AsyncGenerator[httpx.Request, None]:
        tokens = flow.server.tokens
        wanted = challenge.scope if challenge is not None else None
        if wanted is None:
            raise McpError(
                "auth",
                f"the MCP server at {flow.server.url} refused the request with insufficient_scope "
                "but did not say which scope it needs",
            )
        if tokens is not None and set(wanted.split()) <= tokens.granted_scopes():
            raise McpError(
                "auth",
                f"the MCP server at {flow.server.url} refuses the request with insufficient_scope for scope "
                f"{wanted!r}, which the current token already carries; authorizing again would not help",
            )
        if flow.step_ups >= self._max_step_ups:
            raise McpError(
                "auth",
                f"the MCP server at {flow.server.url} still asks for scope {wanted!r} after "
                f"{flow.step_ups} step-up authorization(s); giving up",
            )
        flow.step_ups += 1
        if flow.discovered is None or (challenge is not None and challenge.resource_metadata):
            async with contextlib.aclosing(self._discover(flow, challenge)) as steps:
                async for step in steps:
                    yield step
        assert flow.discovered is not None
        # SEP-2350: ask for everything asked for before plus what this operation needs, so a
        # step-up for one tool does not take away the permissions another one relies on.
        scope = union_scopes(tokens.requested_scope if tokens else self._scope, wanted)
        async with contextlib.aclosing(self._authorize(flow, flow.discovered, scope)) as steps:
            async for step in steps:
                yield step

    # -- discovery --------------------------------------------------------------------------------

    def _get(self, url: str) -> httpx.Request:
        headers = {"Accept": "application/json"}
        version = self._protocol_version
        if version and disco.origin(url) == self._origin:  # the MCP servers' origin, not the AS's
            headers["MCP-Protocol-Version"] = version
        return httpx.Request("GET", url, headers=headers, extensions={"timeout": _HTTP_TIMEOUT})

    async def _discover(
        self, flow: _Flow, challenge: Challenge | None
    ) -> AsyncGenerator[httpx.Request, None]:
        self._protocol_version = flow.request.headers.get("mcp-protocol-version")
        server_url = flow.server.url
        prm: ProtectedResource | None = None
        for url in disco.prm_urls(server_url, challenge.resource_metadata if challenge else None):
            yield self._get(url)
            response = await flow.received()
            logger.debug("protected resource metadata %s: HTTP %s", url, response.status_code)
            if response.status_code == 200:
                prm = disco.parse_prm(json_body(response.content), url)
                if prm is not None:
                    break
        if prm is None:
            # A 2025-03-26 server: no protected-resource metadata; its origin is the authorization server.
            logger.info(
                "no protected resource metadata for %s; using the 2025-03-26 discovery rules", server_url
            )
            server = None
            for url in disco.legacy_as_metadata_urls(server_url):
                yield self._get(url)
                response = await flow.received()
                if response.status_code == 200:
                    server = disco.parse_as_metadata(
                        json_body(response.content),
                        url=url,
                        expected_issuer=None,
                        legacy_server_url=server_url,
                    )
                    break
            flow.discovered = _Discovered(server_url, server or disco.legacy_auth_server(server_url), None)
        else:
            if not disco.resource_matches(prm.resource, server_url):
                raise McpError(
                    "auth",
                    f"the protected resource metadata at {prm.url} is for {prm.resource!r}, not for the "
                    f"MCP server at {server_url}; refusing to authorize (the server is misconfigured or "
                    "impersonating another)",
                )
            issuer = prm.authorization_servers[0]
            disco.require_secure(issuer, "authorization server")
            server = self._as_cache.get(issuer)
            if server is None:
                for url in disco.as_metadata_urls(issuer):
                    yield self._get(url)
                    response = await flow.received()
                    logger.debug("authorization server metadata %s: HTTP %s", url, response.status_code)
                    data = json_body(response.content) if response.status_code == 200 else None
                    if isinstance(data, dict):
                        server = disco.parse_as_metadata(data, url=url, expected_issuer=issuer)
                        break
                if server is None:
                    raise McpError(
                        "auth",
                        f"the authorization server {issuer} publishes no metadata (tried "
                        f"{', '.join(disco.as_metadata_urls(issuer))})",
                    )
                self._as_cache[issuer] = server
            flow.discovered = _Discovered(prm.resource, server, prm)
        server = flow.discovered.server
        if not server.supports_pkce_s256():
            raise McpError(
                "auth",
                f"the authorization server {server.issuer} does not list S256 in "
                "code_challenge_methods_supported; MCP requires PKCE with S256, so authorization "
                "cannot proceed",
            )
        for what, url in (
            ("authorization endpoint", server.authorization_endpoint),
            ("token endpoint", server.token_endpoint),
        ):
            disco.require_secure(url, what)

    # -- client identity --------------------------------------------------------------------------

    def _configured_client(self, server: AuthServer) -> ClientInfo | None:
        if not self._client_id:
            return None
        if self._issuer is not None and self._issuer != server.issuer:
            raise McpError(
                "auth",
                f"the configured client_id belongs to the authorization server {self._issuer}, but the MCP "
                f"server now uses {server.issuer}; register a client there and configure it (credentials "
                "are not portable between authorization servers)",
            )
        method = choose_client_auth_method(
            server.token_endpoint_auth_methods_supported,
            has_secret=self._client_secret is not None,
            has_private_key=self._private_key is not None,
        )
        return ClientInfo(
            client_id=self._client_id,
            client_secret=self._client_secret,
            token_endpoint_auth_method=method,
            issuer=server.issuer,
            source="preregistered",
        )

    def _metadata_document_client(self) -> ClientInfo | None:
        if self._client_metadata_url is None:
            return None
        return ClientInfo(
            client_id=self._client_metadata_url,
            token_endpoint_auth_method="private_key_jwt" if self._private_key is not None else "none",
            source="metadata_document",
        )

    async def _client_for_refresh(self, tokens: Tokens) -> ClientInfo | None:
        assert tokens.issuer is not None
        known = self._clients.get(tokens.issuer)
        if known is not None and known.client_id == tokens.client_id:
            return known
        if self._client_id:
            if self._issuer is not None and self._issuer != tokens.issuer:
                return None
            return ClientInfo(
                client_id=self._client_id,
                client_secret=self._client_secret,
                token_endpoint_auth_method=choose_client_auth_method(
                    None,
                    has_secret=self._client_secret is not None,
                    has_private_key=self._private_key is not None,
                ),
                issuer=tokens.issuer,
                source="preregistered",
            )
        if tokens.client_id and tokens.client_id == self._client_metadata_url:
            return self._metadata_document_client()
        stored = await self._store.get_client(tokens.issuer)
        if stored is None or stored.client_id != tokens.client_id:
            return None
        return stored

    async def _identify(
        self, flow: _Flow, server: AuthServer, redirect_uri: str
    ) -> AsyncGenerator[httpx.Request, None]:
        """Pick the client identity, in the spec's order: pre-registered, metadata document, stored
        registration for this issuer, new dynamic registration."""
        flow.client = self._configured_client(server)
        if flow.client is not None:
            return
        if self._client_metadata_url is not None and server.client_id_metadata_document_supported:
            flow.client = self._metadata_document_client()
            return
        stored = await self._store.get_client(server.issuer)
        if (
            stored is not None
            and stored.issuer in (None, server.issuer)
            and not stored.secret_expired()
            and _redirect_registered(redirect_uri, stored.redirect_uris)
        ):
            flow.client = stored
            return
        if server.registration_endpoint is None:
            hint = (
                " It supports client ID metadata documents: pass OAuth(client_metadata_url=...)."
                if server.client_id_metadata_document_supported
                else ""
            )
            raise McpError(
                "auth",
                f"the authorization server {server.issuer} offers no dynamic client registration; "
                f"register a client there and pass OAuth(client_id=..., client_secret=...).{hint}",
            )
        disco.require_secure(server.registration_endpoint, "registration endpoint")
        method = choose_registration_auth_method(server.token_endpoint_auth_methods_supported)
        metadata: dict[str, Any] = {
            "client_name": self._client_name,
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": method,
            # SEP-837: a loopback redirect is a native application; anything else is a web one.
            "application_type": "native"
            if disco.is_loopback_host(urlsplit(redirect_uri).hostname)
            else "web",
        }
        yield registration_request(server.registration_endpoint, metadata, {"timeout": _HTTP_TIMEOUT})
        response = await flow.received()
        flow.client = parse_registration(
            response.status_code,
            response.content,
            endpoint=server.registration_endpoint,
            issuer=server.issuer,
            requested_method=method,
            redirect_uris=(redirect_uri,),
        )
        logger.info("registered client %s with %s", flow.client.client_id, server.issuer)
        try:
            await self._store.set_client(server.issuer, flow.client)
        except Exception as exc:
            logger.warning(
                "could not save the client registration to %r: %s", self._store, type(exc).__name__
            )

    # -- grants -----------------------------------------------------------------------------------

    def _token_request(
        self,
        flow: _Flow,
        found: _Discovered,
        client: ClientInfo | None,
        form: dict[str, str],
        scope: str | None,
        *,
        what: str,
    ) -> AsyncGenerator[httpx.Request, None]:
        """A token request at the discovered authorization server, for the discovered resource."""
        server = found.server
        return self._token_call(
            flow,
            what=what,
            server_issuer=server.issuer,
            token_endpoint=server.token_endpoint,
            resource=found.resource,
            client=client,
            form=form,
            requested_scope=scope,
            dpop=self._dpop_for(server),
        )

    async def _token_call(
        self,
        flow: _Flow,
        *,
        what: str,
        server_issuer: str,
        token_endpoint: str,
        resource: str,
        client: ClientInfo | None,
        form: dict[str, str],
        requested_scope: str | None,
        previous: Tokens | None = None,
        dpop: DpopKey | None = None,
    ) -> AsyncGenerator[httpx.Request, None]:
        origin = disco.origin(token_endpoint)
        for attempt in range(2):
            body, headers = dict(form), dict[str, str]()
            if client is not None:  # an assertion grant may carry no client authentication (RFC 7523 §3.1)
                authenticate(
                    client,
                    body,
                    headers,
                    audience=server_issuer,
                    private_key=self._private_key,
                    signing_algorithm=self._signing_algorithm,
                )
            if dpop is not None:
                headers["DPoP"] = dpop.proof("POST", token_endpoint, nonce=self._dpop_nonces.get(origin))
            yield token_request(token_endpoint, body, headers, {"timeout": _HTTP_TIMEOUT})
            response = await flow.received()
            self._remember_nonce(token_endpoint, response)
            retry = (
                dpop is not None
                and attempt == 0
                and response.status_code == 400
                and "dpop-nonce" in response.headers
                and oauth_error(response.content)[0] == "use_dpop_nonce"
            )
            if not retry:  # RFC 9449 §8: otherwise the same request again, with the server's nonce
                break
        flow.tokens = parse_token_response(
            response.status_code,
            response.content,
            what=what,
            endpoint=token_endpoint,
            issuer=server_issuer,
            resource=resource,
            client_id=client.client_id if client is not None else None,
            requested_scope=requested_scope,
            previous=previous,
            dpop=dpop is not None,
            redact=secrets_in(body, headers),
        )

    async def _refresh(
        self, flow: _Flow, tokens: Tokens, client: ClientInfo
    ) -> AsyncGenerator[httpx.Request, None]:
        assert tokens.refresh_token
        assert tokens.token_endpoint
        assert tokens.issuer
        form = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token}
        if tokens.resource:
            form["resource"] = tokens.resource
        flow.tokens = None
        try:
            async with contextlib.aclosing(
                self._token_call(
                    flow,
                    what="refresh request",
                    server_issuer=tokens.issuer,
                    token_endpoint=tokens.token_endpoint,
                    resource=tokens.resource or flow.server.url,
                    client=client,
                    form=form,
                    requested_scope=tokens.requested_scope,
                    previous=tokens,
                    dpop=self._dpop_key if tokens.token_type == "DPoP" else None,
                )
            ) as steps:
                async for step in steps:
                    yield step
        except McpError as exc:
            # A refused refresh is routine (the refresh token expired or was revoked): authorize anew.
            logger.info("token refresh failed (%s); a new authorization will follow", exc)
            if (
                isinstance(exc.data, dict)
                and exc.data.get("oauth_error") == "invalid_client"
                and client.issuer
            ):
                await self._store.set_client(client.issuer, None)
            await self._adopt(flow.server, None)
            return
        await self._adopt(flow.server, flow.tokens)

    async def _authorize(
        self, flow: _Flow, found: _Discovered, scope: str | None
    ) -> AsyncGenerator[httpx.Request, None]:
        """Obtain new tokens with the configured grant, and adopt them."""
        grant = self._authorization_code if self._grant == "authorization_code" else self._direct_grant
        async with contextlib.aclosing(grant(flow, found, scope)) as steps:
            async for step in steps:
                yield step
        await self._adopt(flow.server, flow.tokens)

    async def _direct_grant(
        self, flow: _Flow, found: _Discovered, scope: str | None
    ) -> AsyncGenerator[httpx.Request, None]:
        """The grants without a user or a browser: ``client_credentials`` and ``jwt_bearer``."""
        server = found.server
        client = self._configured_client(server)
        if client is not None:
            self._clients[server.issuer] = client
        if self._grant == "client_credentials":
            form = {"grant_type": "client_credentials"}
        else:
            assert self._assertion is not None
            context = AssertionContext(server.issuer, server.token_endpoint, found.resource, scope)
            exchange = self._assertion
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
                yield token_request(
                    exchange.token_endpoint, idp_form, idp_headers, {"timeout": _HTTP_TIMEOUT}
                )
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
            self._token_request(
                flow, found, client, form, scope, what=f"{form['grant_type'].rsplit(':', 1)[-1]} request"
            )
        ) as steps:
            async for step in steps:
                yield step

    async def _authorization_code(
        self, flow: _Flow, found: _Discovered, scope: str | None
    ) -> AsyncGenerator[httpx.Request, None]:
        """The user's grant: PKCE, the browser (or ``on_authorize``), the checks, the code exchange."""
        server = found.server
        receiver: LoopbackReceiver | None = None
        try:
            if self._on_authorize is not None:
                assert self._redirect_uri is not None
                redirect_uri = self._redirect_uri
            else:
                receiver = self._receiver()
                redirect_uri = await receiver.start()
            async with contextlib.aclosing(self._identify(flow, server, redirect_uri)) as steps:
                async for step in steps:
                    yield step
            client = flow.client
            assert client is not None
            self._clients[server.issuer] = client
            pkce, state = new_pkce(), new_state()
            params = {
                "response_type": "code",
                "client_id": client.client_id,
                "redirect_uri": redirect_uri,
                "code_challenge": pkce.challenge,
                "code_challenge_method": pkce.method,
                "state": state,
                "resource": found.resource,
            }
            if scope:
                params["scope"] = scope
            url = str(httpx.URL(server.authorization_endpoint).copy_merge_params(params))
            answer = await self._user_step(flow.server.url, url, state, receiver)
            # The issuer recorded before the redirect is the one from the validated metadata.
            code = authorization_code_from(
                answer,
                expected_state=state,
                issuer=server.issuer,
                iss_supported=server.iss_parameter_supported,
            )
        finally:
            if receiver is not None:
                with anyio.CancelScope(shield=True):
                    await receiver.aclose()
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": pkce.verifier,
            "resource": found.resource,
        }
        async with contextlib.aclosing(
            self._token_request(flow, found, client, form, scope, what="authorization code exchange")
        ) as steps:
            async for step in steps:
                yield step

    def _receiver(self) -> LoopbackReceiver:
        if self._redirect_uri is None:
            return LoopbackReceiver("127.0.0.1", self._callback_port, "/callback")
        parts = urlsplit(self._redirect_uri)
        host = parts.hostname or "127.0.0.1"
        return LoopbackReceiver(
            "127.0.0.1" if host == "localhost" else host, parts.port or 80, parts.path or "/"
        )

    async def _user_step(
        self, server_url: str, url: str, state: str, receiver: LoopbackReceiver | None
    ) -> dict[str, str]:
        """The human step: the user authorizes in a browser; we get the redirect's parameters."""
        self._tell_user_step(True)
        try:
            return await self._wait_for_user(server_url, url, state, receiver)
        finally:
            self._tell_user_step(False)

    def _tell_user_step(self, active: bool) -> None:
        for listener in list(self._user_step_listeners):
            try:
                listener(active)
            except Exception:
                logger.exception("a sign-in listener raised; ignored")

    async def _wait_for_user(
        self, server_url: str, url: str, state: str, receiver: LoopbackReceiver | None
    ) -> dict[str, str]:
        if receiver is not None:
            print(
                f"To authorize access to {server_url}, open this URL in a browser:\n\n  {url}\n\n"
                f"Waiting for the redirect to {receiver.redirect_uri} ...",
                file=sys.stderr,
                flush=True,
            )
            return await receiver.receive(state, timeout=self._authorize_timeout)
        callback = self._on_authorize
        assert callback is not None
        try:
            with anyio.fail_after(self._authorize_timeout):
                if inspect.iscoroutinefunction(callback):
                    result: Any = await callback(url)
                else:
                    result = await anyio.to_thread.run_sync(callback, url, abandon_on_cancel=True)
                if inspect.isawaitable(result):
                    result = await result
        except TimeoutError:
            raise McpError(
                "auth", f"on_authorize did not return the redirect within {self._authorize_timeout:g} s"
            ) from None
        return parse_redirect(result)


class _ForServer(httpx.Auth):
    """:meth:`OAuth.for_server`'s answer: the OAuth flow, with the server fixed."""

    requires_request_body = True

    def __init__(self, oauth: OAuth, server_url: str) -> None:
        self._oauth = oauth
        self._server_url = server_url

    def __repr__(self) -> str:
        return f"{self._oauth!r}.for_server({self._server_url!r})"

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        return self._oauth.sync_auth_flow(request)

    def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        return self._oauth._signed(request, self._server_url)


def _own_tokens(tokens: Tokens | None, server_url: str) -> Tokens | None:
    """``tokens`` if they may be sent to the server at ``server_url``, else None.

    A store hands back whatever it keeps under a key; a token whose recorded resource does not
    cover this server (a store that ignores its key, a hand-edited file) would reach a server it
    was not issued for, so it is not used: the server's 401 starts a flow of its own instead.
    """
    if tokens is None or tokens.resource is None or disco.resource_matches(tokens.resource, server_url):
        return tokens
    logger.warning(
        "the token store returned tokens for %s when asked for %s; not sending them",
        tokens.resource,
        server_url,
    )
    return None


def _redirect_registered(redirect_uri: str, registered: tuple[str, ...]) -> bool:
    """Whether a stored registration covers our redirect URI. A loopback redirect may differ in its
    port alone: RFC 8252 §7.3 has servers accept any port there, since native clients use ephemeral ones."""
    if redirect_uri in registered:
        return True
    ours = urlsplit(redirect_uri)
    if not disco.is_loopback_host(ours.hostname):
        return False
    for uri in registered:
        theirs = urlsplit(uri)
        if (theirs.scheme, theirs.hostname, theirs.path) == (ours.scheme, ours.hostname, ours.path):
            return True
    return False
