"""MCP over HTTP: Streamable HTTP in both eras, and the 2024-11-05 HTTP+SSE binding as a fallback.

:class:`HttpTransport` is the recipe (URL, headers, auth, engine settings); each ``connect()`` opens
a :class:`_StreamableChannel`, which turns the connection's JSON-RPC messages into HTTP exchanges
over an engine (aiohttp or httpx, :mod:`._http_engine`). It moves bytes and streams; what a status,
a content type or an error body *means* is decided by :mod:`mcp_notebook.protocol._http_binding`
(PROTOCOL.md §3.5, §4.2, §4.3):

* Every request is its own POST, run in a task of the channel; its answer (a JSON body or an SSE
  stream of notifications, server requests and the final response) is fed to ``receive()``. A
  failure of one exchange fails that request only (:class:`~.base.RequestFailed`); HTTP has no
  connection whose loss would end all of them.
* Modern requests carry ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` and ``Mcp-Param-*``
  (rules in :mod:`mcp_notebook.protocol._headers`; each tool's header parameters are learnt from the
  ``tools/list`` answers passing by, which are never rewritten). Cancelling closes the request's
  response stream.
* Legacy requests carry ``Mcp-Session-Id`` and the negotiated version; server messages also arrive
  on a GET stream; an SSE stream cut short is resumed with ``Last-Event-ID`` (SEP-1699): after
  exactly the server's ``retry`` when the server ended it cleanly (it is making us poll, however
  often), with a growing, jittered pause after failures, which alone count toward giving up; a
  404 on a session ends it and fails the request as "session expired" (the connection renews the
  session and resends); ``DELETE`` ends the session on close.
* In ``mode="auto"``, an ``initialize`` refused with 400/404/405 and no JSON-RPC body switches the
  channel to the HTTP+SSE binding (:mod:`._http_sse`) and sends it there. What an endpoint turned
  out to speak is remembered by this transport (so by its client), not for the process.

The transport sends no request of its own: renewing a session and re-listing tools after a
``-32020`` are the connection's, and leaving out tools with broken ``x-mcp-header`` declarations is
the live layer's. The connection above sees one message channel either way, so era negotiation,
deadlines and handlers are the same code as for stdio.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager, suppress
from typing import Any, Literal

import anyio
import anyio.abc
import httpx

from ..protocol._envelope import META_PROTOCOL_VERSION
from ..protocol._errors import (
    McpError,
)
from ..protocol._headers import ToolHeaderTable, request_headers
from ..protocol._http_binding import (
    MODERN_ERRORS,
    LegacySession,
    body_kind,
    classify_status,
    refusal_means_sse,
    reopen_outcome,
    retry_delay,
    session_expired_error,
    stream_backoff,
)
from ..protocol._jsonrpc import (
    ErrorResponse,
    FrameError,
    Message,
    RequestId,
    Response,
    decode,
    encode,
)
from ..protocol._negotiation import era_rules
from ..protocol._secrets import Secrets, header_secrets
from ..protocol._sse import EventTooLarge, SseDecoder
from ..protocol._versions import Era
from ._base import OversizedFrame, RequestFailed, on_asyncio
from ._http_common import (
    error_from_status,
    hide_queries_in_httpx_logs,
    jsonrpc_error_in,
    open_exchange,
    read_error_body,
    safe_url,
    transport_error,
)
from ._http_engine import (
    AiohttpEngine,
    Engine,
    EngineName,
    HttpxEngine,
    TooLarge,
    WireError,
    WireResponse,
    environment_proxy,
)
from ._http_sse import EndpointRefused, SseSession

__all__ = ["HttpTransport"]

logger = logging.getLogger("mcp_notebook.transports.http")

Mode = Literal["auto", "streamable", "sse"]
DEFAULT_MAX_MESSAGE_BYTES = 32 * 1024 * 1024
#: HTTP/1.1 connections at once (one request each; long-lived streams included); more requests
#: wait their turn in order. A remote server is mostly latency: 100 calls in flight to a server
#: that takes 20 ms need 100 connections to reach 5,000 calls/s.
DEFAULT_MAX_CONNECTIONS = 100
#: Opening a connection; there is no read timeout: a request's deadline is the connection's
#: business, and streams are long-lived.
DEFAULT_CONNECT_TIMEOUT = 30.0
_ACCEPT_POST = "application/json, text/event-stream"
#: Failed attempts in a row (errors, refusals, 5xx; never a clean end) before a stream is given up:
#: a request's broken-off answer stream, and the standalone GET stream of a legacy session.
_RESUME_FAILURES = 3
_GET_STREAM_FAILURES = 5
#: A GET stream that broke after being up this long starts a fresh count of failures.
_SHORT_LIVED = 5.0
#: Until the server sends ``retry:`` (the SSE default reconnection time, in seconds).
_DEFAULT_RETRY = 1.0
#: Requests that change nothing on the server, so sending one twice is harmless.
_REPEATABLE = frozenset(
    {
        "server/discover",
        "ping",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/get",
        "completion/complete",
    }
)
_SECRET_HEADERS = ("authorization", "cookie", "proxy-authorization")


class HttpTransport:
    """A remote MCP server at ``url``.

    ``headers`` go on every request (their values are secrets: never shown); ``auth`` is any
    ``httpx.Auth`` (a bearer token, :class:`mcp_notebook.auth.OAuth`). ``mode`` is "auto"
    (Streamable HTTP, falling back to HTTP+SSE), "streamable" or "sse".

    The HTTP engine (``engine="auto"``) is aiohttp on asyncio, several times faster than httpx
    with many calls in flight, and httpx on trio, when ``proxy`` is given, or when the
    environment (``HTTPS_PROXY`` and the like, less ``NO_PROXY``) sends the URL through a
    proxy. Give ``http_client`` to use your own ``httpx.AsyncClient`` (event hooks, mounts,
    custom transports); it is not closed for you, its timeouts are replaced per request by ours
    (no read timeout: deadlines are the connection's), and it costs speed: httpx reaches a
    fraction of aiohttp's rate with many calls in flight. ``max_connections`` bounds the
    HTTP/1.1 connections at once (a request holds one until answered; a listen or GET stream
    holds one while open); more requests wait in order.
    ``timeout`` bounds opening a connection.

    What the endpoint turned out to speak (the binding, and the era if legacy) is remembered by
    this transport, so a reconnect does not probe again; a failed connection forgets it, so the
    next attempt probes afresh (a server that was upgraded is found out).
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        auth: httpx.Auth | None = None,
        http_client: httpx.AsyncClient | None = None,
        verify: Any = True,
        timeout: httpx.Timeout | float | None = DEFAULT_CONNECT_TIMEOUT,
        proxy: str | None = None,
        mode: Mode = "auto",
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        engine: EngineName = "auto",
    ) -> None:
        parsed = httpx.URL(url)
        if parsed.scheme not in ("http", "https") or not parsed.host:
            raise ValueError(f"not an http(s) URL: {safe_url(url)!r}")
        if mode not in ("auto", "streamable", "sse"):
            raise ValueError(f"mode={mode!r} must be 'auto', 'streamable' or 'sse'")
        if max_message_bytes < 1024:
            raise ValueError("max_message_bytes must be at least 1024")
        if engine not in ("auto", "aiohttp", "httpx"):
            raise ValueError(f"engine={engine!r} must be 'auto', 'aiohttp' or 'httpx'")
        if engine == "aiohttp" and (http_client is not None or proxy is not None):
            raise ValueError("engine='aiohttp' cannot use http_client= or proxy=; leave engine='auto'")
        self.url = parsed
        if parsed.query:
            hide_queries_in_httpx_logs()
        self._headers = dict(headers or {})
        self._auth = auth
        #: The header values, the token and the URL's query values, masked wherever the server's
        #: text is shown (the rule: protocol/_secrets). An ``httpx.Auth`` names its own values
        #: through a ``secret_values()`` method (``BearerToken`` does).
        auth_values = getattr(auth, "secret_values", None)
        self.secrets = Secrets(
            [
                *header_secrets(self._headers),
                *(auth_values() if callable(auth_values) else ()),
                *(value for _, value in parsed.params.multi_items()),
            ]
        )
        self._http_client = http_client
        self._verify = verify
        self._proxy = proxy
        self._connect_timeout = timeout.connect if isinstance(timeout, httpx.Timeout) else timeout
        self.engine: EngineName = engine
        self.mode: Mode = mode
        #: (era, version, binding) this endpoint was found to speak: legacy ones only, since a
        #: modern server needs no handshake to be remembered; None means "probe".
        self._remembered: tuple[Era, str, str] | None = None
        self.max_message_bytes = max_message_bytes
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self.max_connections = max_connections

    def __repr__(self) -> str:
        return f"HttpTransport({self.describe()!r}, mode={self.mode!r})"

    def describe(self) -> str:
        return safe_url(self.url)

    def recent_stderr(self) -> list[str]:
        return []

    def era_hint(self) -> tuple[Era, str] | None:
        remembered = self._remembered
        return (
            (remembered[0], remembered[1]) if remembered is not None and self.mode != "streamable" else None
        )

    @property
    def has_credentials(self) -> bool:
        return self._auth is not None or any(h.lower() in _SECRET_HEADERS for h in self._headers)

    def _make_engine(self) -> Engine:
        if self._http_client is not None:
            return HttpxEngine(self._http_client, owned=False, connect_timeout=self._connect_timeout)
        use_httpx = self.engine == "httpx" or (
            self.engine == "auto"
            and (self._proxy is not None or not on_asyncio() or environment_proxy(self.url) is not None)
        )
        if use_httpx:
            client = httpx.AsyncClient(
                follow_redirects=False,
                verify=self._verify,
                proxy=self._proxy,
                limits=httpx.Limits(
                    max_connections=self.max_connections, max_keepalive_connections=self.max_connections
                ),
            )
            return HttpxEngine(client, owned=True, connect_timeout=self._connect_timeout)
        return AiohttpEngine(
            max_connections=self.max_connections,
            https=self.url.scheme == "https",
            verify=self._verify,
            connect_timeout=self._connect_timeout,
        )

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[_StreamableChannel]:
        engine = self._make_engine()
        try:
            async with anyio.create_task_group() as tg:
                channel = _StreamableChannel(self, engine, tg)
                remembered = self._remembered
                if self.mode == "sse" or (
                    self.mode == "auto" and remembered is not None and remembered[2] == "sse"
                ):
                    try:
                        await channel.switch_to_sse()
                    except McpError:
                        self._remembered = None  # probe afresh next time: the server may have changed
                        raise
                try:
                    yield channel
                finally:
                    await channel.shutdown()
                    tg.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await engine.aclose()

    def _remember(self, era: Era | None, version: str, binding: str) -> None:
        self._remembered = None if era is None else (era, version, binding)

    def forget(self) -> None:
        """Forget what the endpoint spoke: the next connection probes again (after a failure)."""
        self._remembered = None


class _FallBack(Exception):
    """``initialize`` was refused the way a 2024-11-05 HTTP+SSE server refuses it."""

    def __init__(self, answer: Message | McpError) -> None:
        self.answer = answer


class _StreamableChannel:
    """One connection's worth of HTTP exchanges; see the module docstring."""

    congested = False
    #: Can the server reach us with a message of its own? Modern: on listen streams (the live
    #: layer tracks those); HTTP+SSE: the stream is the channel; legacy Streamable HTTP: only
    #: while the GET stream is up.
    hears_server = True

    def __init__(self, transport: HttpTransport, engine: Engine, tg: anyio.abc.TaskGroup) -> None:
        self._t = transport
        self._engine = engine
        self._tg = tg
        self._where = transport.describe()
        self._incoming_send, self._incoming = anyio.create_memory_object_stream[Any](math.inf)
        self._closed = False
        self._posts: dict[RequestId, anyio.CancelScope] = {}
        self._tools = ToolHeaderTable()
        self._session = LegacySession()
        self._get_generation = 0
        self._sse: SseSession | None = None
        self._discover_refused = False

    @property
    def routes_by_headers(self) -> bool:
        """Modern requests are routed by ``Mcp-*`` headers (not over the HTTP+SSE binding)."""
        return self._sse is None

    # --- the Channel interface ------------------------------------------------------------------

    async def send(self, message: dict[str, Any]) -> None:
        if self._closed:
            raise transport_error(f"the connection to {self._where} is closed")
        if self._sse is not None:
            await self._sse.post(message)
            return
        method = message.get("method")
        if method is not None and "id" in message:
            scope = anyio.CancelScope()
            self._posts[message["id"]] = scope
            self._tg.start_soon(self._run_request, message, scope)
        elif method == "notifications/cancelled":
            await self._cancel(message)
        else:
            await self._post_one_way(message)
            if method == "notifications/initialized":
                self._start_get_stream()

    async def receive(self) -> Message | FrameError | RequestFailed:
        try:
            item = await self._incoming.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise transport_error(f"the connection to {self._where} is closed") from None
        if isinstance(item, McpError):
            raise item
        return item  # type: ignore[no-any-return]

    # --- lifetime -------------------------------------------------------------------------------

    async def switch_to_sse(self) -> None:
        """Speak the 2024-11-05 HTTP+SSE binding from now on (raises McpError if the URL does not)."""
        session = SseSession(
            self._engine,
            self._t.url,
            self._t._headers,
            self._t._auth,
            self._push,
            self._tg,
            max_message_bytes=self._t.max_message_bytes,
            credentials=self._t.has_credentials,
        )
        await session.open()
        self._sse = session

    async def shutdown(self) -> None:
        """End the legacy session politely (DELETE), then stop every exchange."""
        self._closed = True
        for scope in self._posts.values():
            scope.cancel()
        if self._sse is not None:
            await self._sse.close()
        elif self._session.id is not None:
            with anyio.CancelScope(shield=True), anyio.move_on_after(2.0):
                try:
                    async with open_exchange(
                        self._engine,
                        "DELETE",
                        self._t.url,
                        headers=self._legacy_headers(),
                        auth=self._t._auth,
                    ) as response:
                        if response.status not in (200, 202, 204, 404, 405):
                            logger.debug("DELETE of the session answered %s", response.status)
                except (WireError, McpError) as exc:
                    logger.debug("could not end the session: %s", type(exc).__name__)
        self._incoming_send.close()

    def _push(self, item: Message | FrameError | RequestFailed | McpError) -> None:
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._incoming_send.send_nowait(item)

    # --- requests -------------------------------------------------------------------------------

    async def _run_request(self, message: dict[str, Any], scope: anyio.CancelScope) -> None:
        try:
            with scope:
                answer = await self.exchange(message)
                if answer is not None:
                    self._deliver(message, answer)
        finally:
            self._posts.pop(message["id"], None)

    async def exchange(self, message: dict[str, Any]) -> Message | McpError | None:
        """One request's whole exchange, in the caller's task; returns its final answer.

        The connection calls this directly for a plain request (no progress callback, no
        stream): the answer then reaches its caller without a task of its own, a queue and the
        reader in between, which is a third of the client's work per call at 100 in flight.
        ``None`` means the answer will come through ``receive()`` (the HTTP+SSE binding). A
        failure is returned as an :class:`McpError` for that request alone, never raised.
        """
        if self._closed:
            return transport_error(f"the connection to {self._where} is closed")
        if self._sse is not None:
            await self._sse.post(message)
            return None
        repeated = False
        try:
            while True:
                try:
                    return await self._exchange(message)
                except WireError as exc:
                    # A request that only reads may go once more if it never got an answer:
                    # typically a kept-alive connection the server closed as we sent.
                    if repeated or not (exc.before_response and message["method"] in _REPEATABLE):
                        raise
                    repeated = True
                except _FallBack as fallback:
                    if await self._fall_back_to_sse(message):
                        return None  # the request went on over HTTP+SSE; its answer comes there
                    return fallback.answer
        except McpError as exc:
            return exc
        except WireError as exc:
            return self._network_error(exc)
        except Exception as exc:  # a bug or a server we did not foresee: fail the request, not the client
            logger.exception("unexpected failure of %s to %s", message.get("method"), self._where)
            return McpError("protocol", f"{type(exc).__name__} from {self._where}")

    async def _fall_back_to_sse(self, initialize: dict[str, Any]) -> bool:
        """Switch to HTTP+SSE (auto mode only) and send ``initialize`` there; False if it fails."""
        if self._t.mode != "auto":
            return False
        try:
            await self.switch_to_sse()
        except EndpointRefused:
            raise  # an HTTP+SSE server after all, refused for safety: that is the news, not the 405
        except McpError as exc:
            logger.debug("HTTP+SSE fallback failed: %s", exc)
            return False
        self._t._remember("legacy", str(initialize.get("params", {}).get("protocolVersion", "")), "sse")
        assert self._sse is not None
        await self._sse.post(initialize)
        return True

    def _deliver(self, request: dict[str, Any], answer: Message | McpError) -> None:
        if isinstance(answer, McpError):
            self._push(RequestFailed(request["id"], answer))
            return
        self._push(answer)

    async def _exchange(self, message: dict[str, Any]) -> Message | McpError | None:
        """POST one request and deliver what comes back; returns its final answer (None: delivered)."""
        request_id = message["id"]
        method = message["method"]
        modern = _modern_version(message)
        headers = self._request_headers(message, modern)
        sent_session = self._session.id
        async with open_exchange(
            self._engine, "POST", self._t.url, headers=headers, content=encode(message), auth=self._t._auth
        ) as response:
            status = response.status
            meaning = classify_status(method, status, modern=modern is not None, sent_session=sent_session)
            if meaning == "session-expired":
                if self._session.expire(sent_session):
                    self._get_generation += 1  # that session's GET stream is gone with it
                return session_expired_error(self._where)
            if meaning == "refused":
                body = await read_error_body(response)
                answer = error_from_status(
                    request_id, response, body, where=self._where, credentials=self._t.has_credentials
                )
                if refusal_means_sse(method, status, body):
                    raise _FallBack(answer)
                return self._inspect(message, answer) if isinstance(answer, ErrorResponse) else answer
            if meaning == "no-answer":
                return McpError(
                    "protocol", f"{self._where} accepted {method} without answering it (HTTP {status})"
                )
            if method == "initialize":
                self._session.begin(response.headers.get("mcp-session-id"))
            kind = body_kind(response.headers.get("content-type"))
            if kind == "sse":
                return await self._read_request_stream(response, message, modern is not None)
            if kind == "json":
                try:
                    body = await response.read(self._t.max_message_bytes)
                except TooLarge as exc:
                    return McpError(
                        "transport", f"the server's answer was too large: {exc}; raise max_message_bytes"
                    )
                return self._answer_from_json(message, body)
            content_type = response.headers.get("content-type")
            return McpError("protocol", f"{self._where} answered {method} with content type {content_type!r}")

    def _answer_from_json(self, request: dict[str, Any], body: bytes) -> Message | McpError | None:
        try:
            answer = decode(body)
        except FrameError as exc:
            return McpError("protocol", f"{self._where} answered {request['method']} with {exc.reason}")
        if isinstance(answer, (Response, ErrorResponse)) and answer.id == request["id"]:
            return self._inspect(request, answer)
        self._push(answer)
        return McpError(
            "protocol", f"{self._where} answered {request['method']} with a message that is not its response"
        )

    def _inspect(self, request: dict[str, Any], answer: Response | ErrorResponse) -> Message | McpError:
        """Look at a final answer on its way to the caller (never changing it): learn the session's
        version, each tool's header parameters, and what the endpoint speaks."""
        method = request["method"]
        if isinstance(answer, Response):
            if method == "initialize":
                self._session.agreed(answer.result)
                if self._session.version and self._discover_refused:
                    self._t._remember("legacy", self._session.version, "streamable")
            elif method == "server/discover":
                self._t._remember(None, "", "")
            elif method == "tools/list":
                self._tools.learn(answer.result)
        elif method == "server/discover" and answer.error.get("code") not in MODERN_ERRORS:
            self._discover_refused = True  # what the probe learnt; remembered once initialize works
        return answer

    async def _read_request_stream(
        self, response: WireResponse, request: dict[str, Any], modern: bool
    ) -> Message | McpError | None:
        """Deliver a request's SSE stream; resume a legacy stream that breaks off (SEP-1699)."""
        state = _StreamState()
        answer = await self._drain(response, request, state)
        if answer is not None:
            return answer
        rules = era_rules("modern" if modern else "legacy")
        if not rules.resumes_broken_streams or state.last_event_id is None:
            return transport_error(
                f"the response stream of {request['method']} from {self._where} ended before its answer; "
                "it may or may not have run on the server"
            )
        # Ended cleanly: the server polls us (SEP-1699), so resume after exactly its retry, however
        # often (the request's deadline bounds it). Broken off or refused: back off, give up at last.
        failures = 0
        while True:
            if state.broken:
                failures += 1
                if failures > _RESUME_FAILURES:
                    break
                await anyio.sleep(stream_backoff(state.retry, failures))
            else:
                failures = 0
                await anyio.sleep(state.retry)
            headers = self._legacy_headers() | {
                "Accept": "text/event-stream",
                "Last-Event-ID": state.last_event_id,
            }
            try:
                async with open_exchange(
                    self._engine, "GET", self._t.url, headers=headers, auth=self._t._auth
                ) as resumed:
                    outcome = _reopened(resumed)
                    if outcome == "stop":
                        break
                    if outcome == "retry":
                        state.broken = True
                        continue
                    answer = await self._drain(resumed, request, state)
            except WireError:
                state.broken = True
                continue
            if answer is not None:
                return answer
        return transport_error(
            f"the response stream of {request['method']} from {self._where} broke off "
            "and could not be resumed"
        )

    async def _drain(
        self, response: WireResponse, request: dict[str, Any] | None, state: _StreamState
    ) -> Message | McpError | None:
        """Read SSE events, delivering each message; return the final answer to ``request`` if it came.

        An event over ``max_message_bytes`` is dropped as it arrives (never buffered whole): it
        fails ``request``, or on a stream of its own (the GET stream) is counted and skipped.
        """
        decoder = SseDecoder(self._t.max_message_bytes)
        decoder.last_event_id = state.last_event_id
        state.broken = False
        try:
            async for chunk in response.chunks():
                for event in decoder.feed(chunk):
                    if isinstance(event, EventTooLarge):
                        if request is not None:
                            return McpError(
                                "transport",
                                f"the server's answer to {request['method']} was too large: "
                                f"{event.reason}; raise max_message_bytes to accept it",
                            )
                        self._push(OversizedFrame(event.size, event.limit, b""))
                        continue
                    if not event.data or event.event not in ("", "message"):
                        continue  # a priming event, or an event type that carries no message
                    try:
                        message = decode(event.data)
                    except FrameError as exc:
                        if request is not None and exc.id == request["id"]:
                            # Its answer, refused for a value in it: the call fails now, saying why.
                            self._push(exc)  # still logged and counted as a bad frame
                            exc.id = None
                            return McpError("protocol", f"refused the server's answer: {exc.reason}")
                        self._push(exc)
                        continue
                    if (
                        request is not None
                        and isinstance(message, (Response, ErrorResponse))
                        and message.id == request["id"]
                    ):
                        return self._inspect(request, message)
                    self._push(message)
                state.last_event_id = decoder.last_event_id
                if decoder.retry is not None:
                    state.retry = retry_delay(decoder.retry)
                    state.retry_given = True
        except WireError:
            state.broken = True
            return None  # broken off; the caller decides whether to resume
        finally:
            state.last_event_id = decoder.last_event_id
        return None

    def _network_error(self, exc: WireError) -> McpError:
        return transport_error(f"could not reach {self._where}: {exc}")

    # --- headers --------------------------------------------------------------------------------

    def _request_headers(self, message: dict[str, Any], modern: str | None) -> dict[str, str]:
        headers = {**self._t._headers, "Accept": _ACCEPT_POST, "Content-Type": "application/json"}
        if modern is not None:
            params = message.get("params")
            declared = self._tools.params_for(message["method"], params)
            headers.update(request_headers(message["method"], params, modern, declared))
        else:
            headers.update(self._legacy_headers())
        return headers

    def _legacy_headers(self) -> dict[str, str]:
        return {**self._t._headers, **self._session.headers()}

    # --- one-way messages, cancellation ---------------------------------------------------------

    async def _post_one_way(self, message: dict[str, Any]) -> None:
        """POST a notification or an answer to a server request; the server says 202."""
        modern = _modern_version(message)
        headers = (
            self._request_headers(message, modern)
            if "method" in message
            else {**self._legacy_headers(), "Accept": _ACCEPT_POST, "Content-Type": "application/json"}
        )
        try:
            async with open_exchange(
                self._engine,
                "POST",
                self._t.url,
                headers=headers,
                content=encode(message),
                auth=self._t._auth,
            ) as response:
                if response.status >= 400:
                    body = await read_error_body(response)
                    what = message.get("method") or "an answer to a server request"
                    error = jsonrpc_error_in(body)
                    detail = f": {error.get('message')}" if error else ""
                    raise transport_error(f"{self._where} refused {what} (HTTP {response.status}{detail})")
        except WireError as exc:
            raise self._network_error(exc) from None

    async def _cancel(self, message: dict[str, Any]) -> None:
        """Cancel a request: close its response stream; legacy servers are also told (§3.5, §4.2)."""
        params = message.get("params") or {}
        scope = self._posts.get(params.get("requestId"))  # type: ignore[arg-type]
        if scope is not None:
            scope.cancel()
        era: Era = "legacy" if _modern_version(message) is None else "modern"
        if era_rules(era).tells_cancellation and self._session.version is not None:
            await self._post_one_way(message)

    # --- legacy session: GET stream, re-initialize ----------------------------------------------

    def _start_get_stream(self) -> None:
        self.hears_server = True
        self._get_generation += 1
        self._tg.start_soon(self._listen_get, self._get_generation)

    async def _listen_get(self, generation: int) -> None:
        """The standalone GET stream of a legacy session, resumed with Last-Event-ID while it lives.

        Resuming follows SEP-1699: a stream the server ends cleanly after sending ``retry:`` is
        the server making us poll, so it is reopened after exactly that ``retry``, however often.
        Only failures back off (``retry`` doubled per failure, jittered): an error, a refusal or a
        5xx, a stream that breaks off, or one that ends without ever having asked us to poll (a
        proxy that closes idle streams gets a growing pause, not a request storm). A polled
        stream that reopens resets the count; after ``_GET_STREAM_FAILURES`` failures in a row
        the stream is given up. While there is no stream (refused, or given up) :attr:`hears_server`
        is False: list changes cannot reach us, and cached lists must not count as watched.
        """
        state = _StreamState()
        failures = 0
        try:
            while not self._closed and generation == self._get_generation:
                headers = self._legacy_headers() | {"Accept": "text/event-stream"}
                if state.last_event_id is not None:
                    headers["Last-Event-ID"] = state.last_event_id
                polled = False
                try:
                    async with open_exchange(
                        self._engine, "GET", self._t.url, headers=headers, auth=self._t._auth
                    ) as response:
                        outcome = _reopened(response)
                        if outcome == "stop":
                            return  # no GET stream here (or the session is gone: a request renews it)
                        if outcome == "open":
                            opened = anyio.current_time()
                            await self._drain(response, None, state)
                            polled = state.retry_given and not state.broken
                            if anyio.current_time() - opened >= _SHORT_LIVED:
                                failures = 0  # it was up a good while: whatever ended it is news
                except (WireError, McpError) as exc:
                    logger.debug("the GET stream broke: %s", type(exc).__name__)
                except Exception:  # never let the server-to-client stream take the connection down
                    logger.exception("the GET stream of %s failed unexpectedly", self._where)
                if polled:
                    failures = 0
                    await anyio.sleep(state.retry)
                    continue
                failures += 1
                if failures >= _GET_STREAM_FAILURES:
                    logger.warning(
                        "giving up the server-to-client stream of %s after %d failures; list changes "
                        "will not reach this client (lists are fetched again when asked for)",
                        self._where,
                        failures,
                    )
                    return
                await anyio.sleep(stream_backoff(state.retry, failures))
        finally:
            if generation == self._get_generation:
                self.hears_server = False


class _StreamState:
    """What resuming an SSE stream needs to know, carried across its reconnections."""

    __slots__ = ("broken", "last_event_id", "retry", "retry_given")

    def __init__(self) -> None:
        self.last_event_id: str | None = None
        #: Seconds to wait before resuming (the server's ``retry:``, clamped).
        self.retry = _DEFAULT_RETRY
        #: The server has sent ``retry:``: a clean end of the stream is it asking us to poll.
        self.retry_given = False
        #: The last read ended by a network error rather than the server ending the stream.
        self.broken = False


def _reopened(response: WireResponse) -> Literal["open", "retry", "stop"]:
    """What the answer to a GET (re)opening a stream means; a 2xx that is no event stream is a failure."""
    outcome = reopen_outcome(response.status)
    if outcome == "open" and body_kind(response.headers.get("content-type")) != "sse":
        return "retry"
    return outcome


def _modern_version(message: Mapping[str, Any]) -> str | None:
    """The version a modern message is stamped with; None for a legacy one."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
    return version if isinstance(version, str) else None
