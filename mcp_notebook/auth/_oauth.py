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
mailbox (:class:`Flow`), so delegating to one is ``async for req in step: yield req``. One lock
serialises every flow that talks to the authorization server, so concurrent requests that all hit a
401 cause one authorization; the others find the new token and resend. Pure decisions live in
``_discovery``, ``_policy`` and ``_token``; the steps with state of their own are parts this object
holds: discovery (``_metadata_flow``), the client's identity and credentials (``_client_auth``) and
the human step (``_user_step``). This module only sequences them.

Secrets (tokens, the code, the PKCE verifier, client secrets, private keys) are never logged, never
put in an exception message, and never shown by ``repr``.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncGenerator, Callable, Generator
from typing import Literal

import anyio
import httpx

from ..protocol._errors import McpError
from . import _discovery as disco
from ._assertions import (
    AssertionSource,
    IdpTokenExchange,
)
from ._checks import check_options
from ._client_auth import ClientAuth
from ._device import DeviceSignIn, DeviceStep, ShowDeviceCode
from ._direct_grant import direct_grant
from ._discovery import AuthServer
from ._dpop import DpopKey
from ._flow import HTTP_TIMEOUT, Discovered, Flow, ServerState, set_aside
from ._loopback import LoopbackReceiver
from ._metadata_flow import MetadataDiscovery
from ._paste import PastePrompt
from ._pkce import new_pkce, new_state
from ._policy import authorization_code_from, select_scope, union_scopes
from ._records import ClientInfo, Tokens
from ._store import MemoryTokenStore, TokenStore, own_tokens
from ._token import oauth_error, parse_token_response, secrets_in, token_request
from ._user_step import OnAuthorize, UserStep
from ._where import SignInFlow
from ._www_authenticate import Challenge, oauth_challenge, parse_challenges

__all__ = ["DeviceSignIn", "OAuth", "OnAuthorize"]

logger = logging.getLogger("mcp_notebook.auth")

Grant = Literal["authorization_code", "client_credentials", "jwt_bearer"]

_REFRESH_AHEAD = 30.0  # refresh a token this many seconds before it expires
#: The default bound on one OAuth response (metadata, registration, tokens), in decoded bytes.
DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024


class OAuth(httpx.Auth):
    """OAuth 2.1 for MCP servers over HTTP (authorization spec 2025-03-26 … 2026-07-28).

    Pass it as ``auth=`` to ``httpx.AsyncClient`` (or to :class:`mcp_notebook.Client`). Nothing
    happens until the server answers 401; then the client discovers the authorization server,
    identifies itself (pre-registered ``client_id``, else a Client ID Metadata Document URL when the
    server supports those, else dynamic registration), sends the user to authorize with PKCE, and
    retries with the token. Tokens refresh before they expire; a 403 ``insufficient_scope`` asks for
    the missing scopes.

    ``flow`` is how the person signs in (the human step of the authorization code grant):

    - ``"loopback"``: the URL is printed and the redirect is received on a loopback listener at
      ``http://127.0.0.1:<callback_port>/callback`` (an ephemeral port by default), or where
      ``redirect_uri`` points. An https ``redirect_uri`` on another host is a proxy the browser
      reaches that forwards to this machine (jupyter-server-proxy under JupyterHub, a tunnel): the
      listener binds ``127.0.0.1:<callback_port>`` (required then) and takes the redirect at the
      address's path or at the tail of it a path-stripping proxy forwards (``/callback``).
    - ``"paste"``: paste-back. The link is shown (a widget under the running cell in a notebook
      session, else a printed line and a ``getpass`` prompt); the person signs in in any browser and
      pastes back the address the browser landed on, which need not load (or just the code). It
      gets the loopback flow's checks (``iss``, ``state``) and the code is exchanged with the PKCE
      verifier. The redirect URI is ``redirect_uri`` or a loopback one on a port free here.
    - ``"device"``: the device authorization grant (RFC 8628), where the server advertises a
      ``device_authorization_endpoint``: the person is shown a short code and a URL to open on any
      device, and nothing needs to reach the kernel. The client polls at the server's ``interval``
      (``slow_down`` adds 5 s) until the person approved or declined, the code expired, or
      ``authorize_timeout`` passed. The code is printed, unless :meth:`on_device_code` has a
      listener (a notebook's widget) to show it.
    - ``"auto"`` (default): loopback where the browser is on this machine or ``redirect_uri`` names
      a listener; where it is not (Colab, Kaggle, Binder, JupyterHub, Codespaces, SSH, a Jupyter
      kernel on Linux without a display: ``mcp_notebook.auth._where.SIGNALS``), the device grant
      when the authorization server advertises ``device_authorization_endpoint``, else paste-back.

    ``on_authorize(url)`` is a human step of the caller's own: it gets the authorization URL and
    returns the URL the browser was redirected to (or its query parameters); it may be a coroutine
    function, and a plain function runs in a worker thread (so ``input()`` works). It needs
    ``redirect_uri`` and leaves ``flow`` at "auto".

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
        flow: SignInFlow = "auto",
        store: TokenStore | None = None,
        server_url: str | None = None,
        authorize_timeout: float | None = 300.0,
        max_step_ups: int = 2,
        dpop: bool = False,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
    ) -> None:
        check_options(
            grant=grant,
            assertion=assertion,
            client_id=client_id,
            client_secret=client_secret,
            private_key=private_key,
            client_metadata_url=client_metadata_url,
            flow=flow,
            on_authorize=on_authorize,
            redirect_uri=redirect_uri,
            callback_port=callback_port,
            max_step_ups=max_step_ups,
            max_response_bytes=max_response_bytes,
        )
        self._max_response_bytes = max_response_bytes
        self._grant: Grant = grant
        self._assertion = assertion
        self._scope = " ".join(scope.split()) if scope and scope.strip() else None
        self._store: TokenStore = store if store is not None else MemoryTokenStore()
        self._client = ClientAuth(
            client_id=client_id,
            client_secret=client_secret,
            private_key=private_key,
            signing_algorithm=signing_algorithm,
            issuer=issuer,
            client_metadata_url=client_metadata_url,
            client_name=client_name,
            store=self._store,
        )
        self._user_step = UserStep(
            on_authorize=on_authorize,
            redirect_uri=redirect_uri,
            callback_port=callback_port,
            authorize_timeout=authorize_timeout,
            flow=flow,
        )
        self._device = DeviceStep(self._user_step)
        self._metadata = MetadataDiscovery()
        self._server_url = disco.canonical_resource(server_url) if server_url else None
        self._origin = disco.origin(self._server_url) if self._server_url else None
        self._servers: dict[str, ServerState] = {}  # canonical server URL -> its tokens
        self._max_step_ups = max_step_ups
        self._lock = anyio.Lock()
        self._dpop = dpop
        self._dpop_key: DpopKey | None = None
        self._dpop_nonces: dict[str, str] = {}  # origin -> the latest DPoP-Nonce it sent (RFC 9449 §8, §9)

    def __repr__(self) -> str:
        who = f", client_id={self._client.client_id!r}" if self._client.client_id else ""
        servers = list(dict.fromkeys([*([self._server_url] if self._server_url else []), *self._servers]))
        where = f"servers={tuple(servers)!r}" if len(servers) > 1 else f"server={next(iter(servers), None)!r}"
        return f"OAuth(grant={self._grant!r}{who}, {where}, store={self._store!r})"

    # -- public helpers ---------------------------------------------------------------------------

    @property
    def authorize_timeout(self) -> float | None:
        """How long the human step may take; a client gives its first requests at least this long."""
        return self._user_step.authorize_timeout

    def on_user_step(self, listener: Callable[[bool], None]) -> Callable[[], None]:
        """Call ``listener(True)`` when a person is asked to sign in, ``listener(False)`` when done.

        Why: that step takes as long as a person takes (up to ``authorize_timeout``), and it
        happens inside whichever request met the 401, while every other request waits for the
        token. A connection listens to pause its request deadlines meanwhile, so the sign-in is
        bounded by ``authorize_timeout`` alone and no waiting request times out because of it.
        Returns a function that removes the listener.
        """
        return self._user_step.listen(listener)

    def paste_with(self, prompt: PastePrompt) -> Callable[[], None]:
        """Ask for a paste-back sign-in with ``prompt`` instead of the terminal's prompt.

        ``prompt(link)`` gets a :class:`~mcp_notebook.auth._paste.SignInLink` (``server_url``,
        ``url``: the link to open, ``redirect_uri``) and returns what the person pasted; it may be
        a coroutine function, and a plain function runs in a worker thread. A notebook session
        plugs in its widget this way (the latest prompt given wins). Returns a function that
        takes it back.
        """
        return self._user_step.paste_with(prompt)

    def on_device_code(self, listener: ShowDeviceCode) -> Callable[[], None]:
        """Have ``listener(sign_in)`` show each device-grant sign-in, instead of the printed line.

        ``sign_in`` (a :class:`DeviceSignIn`) holds the user code and the verification URI to show,
        and says how the sign-in ended (``sign_in.on_change``). Why a hook: a notebook shows them
        in a widget under the running cell (the notebook layer plugs one in); a script gets the
        printed line. Returns a function that removes the listener.
        """
        return self._device.listen(listener)

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
        flow = Flow(request, server, self._max_response_bytes)
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
                await set_aside(response, flow.max_bytes)
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
            await set_aside(response, flow.max_bytes)
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

    def _server_for(self, url: str) -> ServerState:
        """The protected resource at ``url``, named by its canonical URL (RFC 8707, path included).

        ``/mcp`` and ``/mcp/`` are one resource (as :func:`resource_matches` has it): a server that
        redirects one to the other must not cost a second sign-in. The first spelling used is the key.
        """
        key = disco.canonical_resource(url)
        server = self._servers.get(key) or self._servers.get(key[:-1] if key.endswith("/") else f"{key}/")
        if server is None:
            server = self._servers[key] = ServerState(key)
        return server

    def _attach(self, request: httpx.Request, server: ServerState) -> Tokens | None:
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

    async def _adopt(self, server: ServerState, tokens: Tokens | None) -> None:
        server.tokens = tokens
        try:
            await self._store.set_tokens(server.url, tokens)
        except Exception as exc:  # a broken store must not break a working session
            logger.warning("could not save tokens to %r: %s", self._store, type(exc).__name__)

    async def _before_send(self, flow: Flow) -> AsyncGenerator[httpx.Request, None]:
        server = flow.server
        if not server.loaded:
            server.loaded = True
            try:
                server.tokens = own_tokens(await self._store.get_tokens(server.url), server.url)
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

    async def _refresh_once(self, flow: Flow, tokens: Tokens) -> AsyncGenerator[httpx.Request, None]:
        """Refresh ``tokens`` if a client to do it with is known; ``flow.refreshed`` says it was tried.

        A request refreshes at most once (before sending, or after its 401), never in a loop.
        """
        client = await self._client.for_refresh(tokens)
        if client is None:
            return
        flow.refreshed = True
        async with contextlib.aclosing(self._refresh(flow, tokens, client)) as steps:
            async for step in steps:
                yield step

    async def _on_unauthorized(
        self, flow: Flow, challenge: Challenge | None
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
        self, flow: Flow, challenge: Challenge | None
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

    def _discover(self, flow: Flow, challenge: Challenge | None) -> AsyncGenerator[httpx.Request, None]:
        return self._metadata.discover(flow, challenge, mcp_origin=self._origin)

    # -- grants -----------------------------------------------------------------------------------

    def _token_request(
        self,
        flow: Flow,
        found: Discovered,
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
        flow: Flow,
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
                self._client.authenticate(client, body, headers, audience=server_issuer)
            if dpop is not None:
                headers["DPoP"] = dpop.proof("POST", token_endpoint, nonce=self._dpop_nonces.get(origin))
            yield token_request(token_endpoint, body, headers, {"timeout": HTTP_TIMEOUT})
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
        self, flow: Flow, tokens: Tokens, client: ClientInfo
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
        self, flow: Flow, found: Discovered, scope: str | None
    ) -> AsyncGenerator[httpx.Request, None]:
        """Obtain new tokens with the configured grant, and adopt them."""
        grant = self._authorization_code if self._grant == "authorization_code" else self._direct_grant
        async with contextlib.aclosing(grant(flow, found, scope)) as steps:
            async for step in steps:
                yield step
        await self._adopt(flow.server, flow.tokens)

    def _direct_grant(
        self, flow: Flow, found: Discovered, scope: str | None
    ) -> AsyncGenerator[httpx.Request, None]:
        """The grants without a user or a browser (``client_credentials``, ``jwt_bearer``)."""
        return direct_grant(
            flow,
            found,
            scope,
            grant=self._grant,
            assertion=self._assertion,
            client_auth=self._client,
            ask_tokens=self._token_request,
        )

    async def _device_grant(
        self, flow: Flow, found: Discovered, scope: str | None
    ) -> AsyncGenerator[httpx.Request, None]:
        """The person's grant without a redirect (RFC 8628): a code to enter on any device."""
        server = found.server
        endpoint = server.device_authorization_endpoint
        if endpoint is None:
            raise McpError(
                "auth",
                f"the authorization server {server.issuer} offers no device authorization grant (its "
                "metadata has no device_authorization_endpoint); sign in with another flow=",
            )
        disco.require_secure(endpoint, "device authorization endpoint")
        async with contextlib.aclosing(self._client.identify(flow, server, None)) as steps:
            async for step in steps:
                yield step
        client = flow.client
        assert client is not None
        self._client.remember(server.issuer, client)
        dpop = self._dpop_for(server)
        origin = disco.origin(server.token_endpoint)

        def sign(form: dict[str, str], headers: dict[str, str], to_token_endpoint: bool) -> None:
            self._client.authenticate(client, form, headers, audience=server.issuer)
            if to_token_endpoint and dpop is not None:
                nonce = self._dpop_nonces.get(origin)
                headers["DPoP"] = dpop.proof("POST", server.token_endpoint, nonce=nonce)

        async with contextlib.aclosing(
            self._device.run(
                flow,
                endpoint=endpoint,
                token_endpoint=server.token_endpoint,
                issuer=server.issuer,
                resource=found.resource,
                scope=scope,
                client_id=client.client_id,
                sign=sign,
                seen=lambda response: self._remember_nonce(server.token_endpoint, response),
                dpop=dpop is not None,
            )
        ) as steps:
            async for step in steps:
                yield step

    async def _authorization_code(
        self, flow: Flow, found: Discovered, scope: str | None
    ) -> AsyncGenerator[httpx.Request, None]:
        """The user's grant: PKCE, the browser (or ``on_authorize``), the checks, the code exchange."""
        server = found.server
        flow_used = self._user_step.flow_for(
            device_offered=bool(getattr(server, "device_authorization_endpoint", None))
        )
        if flow_used == "device":
            async with contextlib.aclosing(self._device_grant(flow, found, scope)) as steps:
                async for step in steps:
                    yield step
            return
        receiver: LoopbackReceiver | None = None
        try:
            if self._user_step.on_authorize is not None:
                assert self._user_step.redirect_uri is not None
                redirect_uri = self._user_step.redirect_uri
            elif flow_used == "paste":
                redirect_uri = await self._user_step.paste_redirect_uri()
            else:
                receiver = self._user_step.receiver()
                redirect_uri = await receiver.start()
            async with contextlib.aclosing(self._client.identify(flow, server, redirect_uri)) as steps:
                async for step in steps:
                    yield step
            client = flow.client
            assert client is not None
            self._client.remember(server.issuer, client)
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
            paste = (redirect_uri, server.issuer) if flow_used == "paste" and receiver is None else None
            answer = await self._user_step.run(flow.server.url, url, state, receiver, paste=paste)
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
