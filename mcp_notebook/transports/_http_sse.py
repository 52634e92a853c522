"""The 2024-11-05 HTTP+SSE binding (deprecated, still served by many deployed servers; §4.3).

The client holds one GET event stream open; its first event, ``endpoint``, names the URL to POST
messages to, and every server message (answers included) arrives on that stream. When the stream
ends the channel is over, and the connection reconnects with a new GET, which is what a restarted
server expects.

Unless the server makes us poll, as SEP-1699 lets a server do on any SSE stream: a stream that set
an event id and sent ``retry:`` is resumed with ``Last-Event-ID`` after exactly that ``retry``
whenever the server ends it cleanly, however often, and the session goes on (its endpoint stays).
Failures (errors, 5xx, a stream that breaks off) back off, jittered, and after
``_RESUME_FAILURES`` in a row the channel ends; so does a resumed stream that names another
endpoint (a new session: the connection starts over).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.abc
import httpx

from ..protocol._errors import McpError, McpTransportError
from ..protocol._http_binding import body_kind, reopen_outcome, retry_delay, stream_backoff
from ..protocol._jsonrpc import FrameError, decode, encode
from ..protocol._sse import EventTooLarge, SseDecoder, SseEvent
from ._base import OversizedFrame, RequestFailed
from ._http_common import (
    error_from_status,
    jsonrpc_error_in,
    open_exchange,
    read_error_body,
    safe_url,
    same_origin,
    transport_error,
)
from ._http_engine import Engine, WireError, WireResponse

__all__ = ["EndpointRefused", "SseSession"]

logger = logging.getLogger("mcp_notebook.transports.http")

ENDPOINT_TIMEOUT = 10.0
#: Failed attempts in a row to resume a polled stream before the channel ends.
_RESUME_FAILURES = 3


class EndpointRefused(McpTransportError):
    """The server does speak HTTP+SSE, but named an endpoint the client will not post to.

    Its own type so that ``mode="auto"`` reports it: a fallback that merely found no HTTP+SSE
    server there shows the Streamable HTTP refusal instead, which says more.
    """


@dataclass
class _Stream:
    """What :meth:`SseSession._run` learns from :meth:`SseSession._pump`, even when it raises."""

    started: bool = False  # the endpoint event came: the session is open
    decoder: SseDecoder | None = None


class SseSession:
    """One GET stream and the POST endpoint it named."""

    def __init__(
        self,
        engine: Engine,
        url: httpx.URL,
        headers: Mapping[str, str],
        auth: httpx.Auth | None,
        push: Callable[[Any], None],
        tg: anyio.abc.TaskGroup,
        *,
        max_message_bytes: int,
        credentials: bool,
    ) -> None:
        self._engine = engine
        self._url = url
        self._headers = dict(headers)
        self._auth = auth
        self._post_auth = auth  # the endpoint's, once it is known (see _endpoint_auth)
        self._push = push
        self._tg = tg
        self._max = max_message_bytes
        self._credentials = credentials
        self._where = safe_url(url)
        self._endpoint: httpx.URL | None = None
        self._scope = anyio.CancelScope()

    async def open(self) -> None:
        """Open the stream and wait for its ``endpoint`` event; raise McpError if none comes."""
        await self._tg.start(self._run)

    async def close(self) -> None:
        self._scope.cancel()

    async def post(self, message: dict[str, Any]) -> None:
        endpoint = self._endpoint
        if endpoint is None:
            raise transport_error(f"the HTTP+SSE stream of {self._where} is not open")
        headers = {**self._headers, "Content-Type": "application/json"}
        try:
            async with open_exchange(
                self._engine, "POST", endpoint, headers=headers, content=encode(message), auth=self._post_auth
            ) as response:
                if response.status < 400:
                    return
                body = await read_error_body(response)
        except WireError as exc:
            raise transport_error(f"could not reach {self._where}: {type(exc).__name__}") from None
        request_id = message.get("id")
        if request_id is not None and "method" in message:
            answer = error_from_status(
                request_id, response, body, where=self._where, credentials=self._credentials
            )
            self._push(RequestFailed(request_id, answer) if isinstance(answer, McpError) else answer)
            return
        error = jsonrpc_error_in(body)
        detail = f": {error.get('message')}" if error else ""
        raise transport_error(f"{self._where} refused a message (HTTP {response.status}{detail})")

    async def _run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        headers = {**self._headers, "Accept": "text/event-stream", "Cache-Control": "no-store"}
        stream = _Stream()
        ended = "broken"
        with self._scope:
            try:
                async with open_exchange(
                    self._engine, "GET", self._url, headers=headers, auth=self._auth
                ) as response:
                    await self._pump(response, stream, task_status)
                ended = "clean"
            except TimeoutError:
                raise McpError(
                    "transport",
                    f"{self._where} sent no endpoint event within {ENDPOINT_TIMEOUT:g}s; not an MCP server?",
                ) from None
            except (WireError, McpError) as exc:
                if not stream.started:
                    if isinstance(exc, McpError):
                        raise
                    raise transport_error(
                        f"could not open the HTTP+SSE stream of {self._where}: {exc}"
                    ) from None
                logger.debug("the HTTP+SSE stream broke: %s", type(exc).__name__)
            decoder = stream.decoder
            if stream.started and decoder is not None and decoder.retry is not None and decoder.last_event_id:
                await self._resume(decoder.last_event_id, retry_delay(decoder.retry), broken=ended != "clean")
        if stream.started:
            # The stream is the connection: once it ends, so does the channel.
            self._push(transport_error(f"the event stream of {self._where} ended"))

    async def _pump(
        self, response: WireResponse, stream: _Stream, task_status: anyio.abc.TaskStatus[None]
    ) -> None:
        """Read the open stream: its ``endpoint`` event first (then the session has started), then
        every message, until it ends."""
        if response.status >= 400:
            body = await read_error_body(response)
            answer = error_from_status(0, response, body, where=self._where, credentials=self._credentials)
            if isinstance(answer, McpError):
                raise answer
            raise McpError(
                "transport",
                f"{self._where} does not serve HTTP+SSE either: {answer.error['message']}",
            )
        decoder = stream.decoder = SseDecoder(self._max)
        chunks = response.chunks()
        backlog = await self._await_endpoint(chunks, decoder)
        stream.started = True
        task_status.started()
        for event in backlog:  # what came in the same chunk as the endpoint
            self._on_event(event)
        async for chunk in chunks:
            for event in decoder.feed(chunk):
                self._on_event(event)

    async def _await_endpoint(
        self, chunks: AsyncIterator[bytes], decoder: SseDecoder
    ) -> list[SseEvent | EventTooLarge]:
        """Read until the ``endpoint`` event (within ``ENDPOINT_TIMEOUT``); return the events that
        came after it in the same chunk."""
        backlog: list[SseEvent | EventTooLarge] = []
        with anyio.fail_after(ENDPOINT_TIMEOUT):
            async for chunk in chunks:
                backlog = decoder.feed(chunk)
                while backlog and self._endpoint is None:
                    event = backlog.pop(0)
                    if isinstance(event, SseEvent) and event.event == "endpoint":
                        self._endpoint = self._check_endpoint(event.data)
                        self._post_auth = self._endpoint_auth()
                if self._endpoint is not None:
                    break
        if self._endpoint is None:
            raise McpError("transport", f"{self._where} closed its event stream without naming an endpoint")
        return backlog

    async def _resume(self, last_event_id: str, retry: float, *, broken: bool) -> None:
        """Resume the stream while the server makes us poll; return when the channel is over."""
        headers = {**self._headers, "Accept": "text/event-stream", "Cache-Control": "no-store"}
        failures = 1 if broken else 0
        while failures < _RESUME_FAILURES:
            await anyio.sleep(stream_backoff(retry, failures) if failures else retry)
            decoder = SseDecoder(self._max)
            decoder.last_event_id = last_event_id
            polled = False
            try:
                async with open_exchange(
                    self._engine,
                    "GET",
                    self._url,
                    headers=headers | {"Last-Event-ID": last_event_id},
                    auth=self._auth,
                ) as response:
                    outcome = reopen_outcome(response.status)
                    if outcome == "open" and body_kind(response.headers.get("content-type")) != "sse":
                        outcome = "retry"
                    if outcome == "stop":
                        return
                    if outcome == "open":
                        async for chunk in response.chunks():
                            for event in decoder.feed(chunk):
                                if isinstance(event, SseEvent) and event.event == "endpoint":
                                    if self._check_endpoint(event.data) != self._endpoint:
                                        return  # a new session: ours is over
                                    continue
                                self._on_event(event)
                        polled = True
            except WireError as exc:
                logger.debug("resuming the HTTP+SSE stream failed: %s", type(exc).__name__)
            except McpError as exc:  # a redirect or endpoint we refuse: the session is over
                logger.debug("resuming the HTTP+SSE stream failed: %s", exc)
                return
            finally:
                if decoder.last_event_id is not None:
                    last_event_id = decoder.last_event_id
                if decoder.retry is not None:
                    retry = retry_delay(decoder.retry)
            failures = 0 if polled else failures + 1

    def _check_endpoint(self, data: bytes) -> httpx.URL:
        endpoint = self._url.join(data.decode("utf-8", "replace").strip())
        if not same_origin(self._url, endpoint):
            raise EndpointRefused(
                "transport",
                f"{self._where} speaks HTTP+SSE but named a POST endpoint on another origin "
                f"({safe_url(endpoint)}); refused, so no message or credential goes there. Use that URL "
                "as the server URL if you trust it.",
            )
        return endpoint

    def _endpoint_auth(self) -> httpx.Auth | None:
        """How POSTs to the endpoint are signed. The endpoint is this server's own, not another
        protected resource: an auth that keeps tokens per server (OAuth, duck-typed since transports
        do not import auth) signs them with the stream's tokens, not with a sign-in of their own."""
        for_server = getattr(self._auth, "for_server", None)
        if callable(for_server):
            bound: httpx.Auth = for_server(self._url)
            return bound
        return self._auth

    def _on_event(self, event: SseEvent | EventTooLarge) -> None:
        if isinstance(event, EventTooLarge):
            # Dropped as it arrived; the connection counts it and fails the request it names, if any.
            self._push(OversizedFrame(event.size, event.limit, b""))
            return
        if event.event not in ("message", "") or not event.data:
            return
        try:
            self._push(decode(event.data))
        except FrameError as exc:
            self._push(exc)
