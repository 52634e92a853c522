"""Serving the server's requests: ``ping``, sampling, elicitation, roots, and ``input_required`` rounds.

Why a part of its own: answering the server is the client's user code running (the handlers),
so it has its own bounds (``max_concurrent_handlers``, a queue of four times that, then "busy";
``handler_timeout`` each) and its own cancellation (the server's ``notifications/cancelled``
cancels a handler's scope in :attr:`ServerRequests.scopes`). A handler that waits for a person
pauses every request's deadline meanwhile. Handlers never run in the reader task.

Answers the server does not read are bounded too. Every answer (a ``ping``'s, a refusal, a
handler's result) joins one queue per channel, written in order by one writer task, and counts
(how many, and their bytes) until it is written. A server that asks and asks without reading our
answers (100,000 pings into a pipe it never reads) used to hold one task and one answer per
request, hundreds of MB; now, past :data:`MAX_UNSENT_ANSWERS` or :data:`MAX_UNSENT_ANSWER_BYTES`,
the connection is closed for good (``give_up``) with a reason that says so, counted in
``client.stats.unread_answer_closes``. Refusing the excess instead would not help: a refusal is
one more answer the server does not read.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Callable
from typing import Any

import anyio
import anyio.abc

from ..protocol._errors import INTERNAL_ERROR, METHOD_NOT_FOUND, REQUEST_TIMEOUT, McpError
from ..protocol._jsonrpc import Request, RequestId, encode, error_response
from ..transports._base import Channel
from ._deadlines import DeadlinePause
from ._handlers import ELICITATION, SAMPLING, ClientHandlers
from ._log_budget import LogBudget
from ._options import ConnectionOptions
from ._telemetry import Counters

__all__ = ["MAX_UNSENT_ANSWERS", "MAX_UNSENT_ANSWER_BYTES", "ServerRequests"]

logger = logging.getLogger("mcp_notebook.connection")

_HUMAN_METHODS = frozenset({SAMPLING, ELICITATION})

#: Answers to the server's requests waiting to be written (per connection): past this the server
#: is taken to have stopped reading, and the connection is closed. A queued answer is a small dict
#: (a few hundred bytes), and the bound is well above one read's burst of requests (a 256 KiB read
#: holds at most about 6,500 pings), so a server that reads, however fast it asks, never meets it.
MAX_UNSENT_ANSWERS = 10_000
#: The same bound in bytes of those answers (their JSON text). A single answer larger than this
#: (a handler's big result) is still sent: the bound is checked before an answer joins the queue.
MAX_UNSENT_ANSWER_BYTES = 16 * 1024 * 1024


class ServerRequests:
    """The client's side of the server's requests, for one connection.

    ``channel`` gives the current channel (None between channels: an answer then is dropped, as
    the request died with its channel).
    """

    def __init__(
        self,
        handlers: ClientHandlers,
        options: ConnectionOptions,
        *,
        counters: Counters,
        warnings: LogBudget,
        pauses: DeadlinePause,
        channel: Callable[[], Channel | None],
        give_up: Callable[[McpError], None],
    ) -> None:
        self._handlers = handlers
        self._opts = options
        self._counters = counters
        self._warnings = warnings
        self._pauses = pauses
        self._channel = channel
        self._give_up = give_up
        #: The running handlers' scopes by request id, for the server's ``notifications/cancelled``.
        self.scopes: dict[RequestId, anyio.CancelScope] = {}
        self._limiter = anyio.CapacityLimiter(options.max_concurrent_handlers)
        self._waiting = 0
        # Answers waiting to be written, oldest first, each with its size; the one being written
        # stays first (and counted) until its write returns.
        self._unsent: collections.deque[tuple[dict[str, Any], int]] = collections.deque()
        self._unsent_bytes = 0
        self._unsent_added: anyio.Event | None = None  # set when the idle writer has work
        self._tg: anyio.abc.TaskGroup | None = None  # the current channel's task group
        self._writer_tg: anyio.abc.TaskGroup | None = None  # the task group the writer runs in
        self._gave_up = False  # past the bound: the channel is ending, nothing more is answered

    async def answer_input_required(
        self, params: dict[str, Any] | None, result: dict[str, Any], label: str
    ) -> dict[str, Any]:
        """The params of the next round: the original ones plus our answers and the server's state."""
        requests = result.get("inputRequests")
        state = result.get("requestState")
        if requests is not None and not isinstance(requests, dict):
            raise McpError("protocol", f"{label}: inputRequests is not an object")
        if not requests and state is None:
            raise McpError("protocol", f"{label}: input_required without inputRequests or requestState")
        following = {k: v for k, v in (params or {}).items() if k not in ("inputResponses", "requestState")}
        if requests:
            following["inputResponses"] = await self.fulfil(requests, label)
        if state is not None:
            following["requestState"] = state
        return following

    async def fulfil(self, input_requests: dict[str, Any], label: str) -> dict[str, Any]:
        """Answer a modern ``inputRequests`` map through the client's handlers, within
        ``handler_timeout``: for an ``input_required`` round and for a task that waits for input."""
        try:
            with anyio.fail_after(self._opts.handler_timeout):
                return await self._handlers.fulfil(input_requests)
        except TimeoutError:
            raise McpError(
                "timeout",
                f"{label}: the client's handlers did not answer within handler_timeout="
                f"{self._opts.handler_timeout:g}s",
                code=REQUEST_TIMEOUT,
            ) from None

    def on_request(self, request: Request, tg: anyio.abc.TaskGroup | None) -> None:
        """Answer one request of the server's: at once, or through a handler in its own task of
        ``tg`` (None: the channel is ending, and nothing is answered)."""
        self._counters.server_requests += 1
        if tg is None:
            return
        self._tg = tg
        if request.method == "ping":
            self._queue_answer({"jsonrpc": "2.0", "id": request.id, "result": {}})
        elif not self._handlers.supports(request.method):
            message = f"the client does not support {request.method!r}"
            self._queue_answer(error_response(request.id, METHOD_NOT_FOUND, message))
        elif self._waiting >= 4 * self._opts.max_concurrent_handlers:
            busy = "the client is busy; try again later"
            self._queue_answer(error_response(request.id, INTERNAL_ERROR, busy))
        else:
            tg.start_soon(self._run_handler, request)

    def refuse(self, request_id: RequestId, code: int, message: str, tg: anyio.abc.TaskGroup | None) -> None:
        """Answer a request of the server's that could not be read with an error."""
        if tg is not None:
            self._tg = tg
            self._queue_answer(error_response(request_id, code, message))

    def _queue_answer(self, message: dict[str, Any]) -> None:
        """Queue an answer on the current channel (its writer starts in the channel's task group
        with the first answer), unless the server has stopped reading the ones before it."""
        tg = self._tg
        if tg is None or self._gave_up:
            return
        if len(self._unsent) >= MAX_UNSENT_ANSWERS or self._unsent_bytes >= MAX_UNSENT_ANSWER_BYTES:
            self._stop_answering()
            return
        if self._writer_tg is not tg:
            self._writer_tg = tg
            tg.start_soon(self._write_answers, tg)
        size = len(encode(message))
        self._unsent.append((message, size))
        self._unsent_bytes += size
        if self._unsent_added is not None:
            self._unsent_added.set()

    def _stop_answering(self) -> None:
        """The server is not reading our answers: give up on the channel, once, saying so."""
        self._gave_up = True
        self._counters.unread_answer_closes += 1
        self._give_up(
            McpError(
                "protocol",
                f"the server sent {self._counters.server_requests:,} requests without reading our "
                f"answers ({len(self._unsent):,} answers, {self._unsent_bytes:,} bytes waiting to "
                f"be written; the bound is {MAX_UNSENT_ANSWERS:,} answers or "
                f"{MAX_UNSENT_ANSWER_BYTES // (1024 * 1024)} MiB): closed the connection",
            )
        )

    async def _write_answers(self, tg: anyio.abc.TaskGroup) -> None:
        """Write the queued answers in order, for as long as the channel lasts (a task of ``tg``)."""
        try:
            while True:
                if not self._unsent:
                    self._unsent_added = anyio.Event()
                    await self._unsent_added.wait()
                    self._unsent_added = None
                    continue
                message, size = self._unsent[0]
                try:
                    await self._send_quietly(message)
                finally:
                    self._unsent.popleft()
                    self._unsent_bytes -= size
        finally:
            if self._writer_tg is tg:  # the channel ended: its answers die with it
                self._writer_tg = self._unsent_added = None
                if self._tg is tg:
                    self._tg = None
                self._unsent.clear()
                self._unsent_bytes = 0
                self._gave_up = False

    async def _run_handler(self, request: Request) -> None:
        self._waiting += 1
        started = False
        try:
            async with self._limiter:
                self._waiting -= 1
                started = True
                human = request.method in _HUMAN_METHODS
                with anyio.CancelScope() as scope:  # cancelled by the server's notifications/cancelled
                    self.scopes[request.id] = scope
                    if human:
                        self._pauses.pause()
                    try:
                        await self.reply(request.id, await self._answer_with_timeout(request))
                    except McpError as exc:
                        await self.reply_error(request.id, exc.code or INTERNAL_ERROR, exc.message)
                    except Exception as exc:
                        self._warnings.log(
                            logging.ERROR,
                            "handler failure",
                            "the %s handler raised %s",
                            request.method,
                            type(exc).__name__,
                            exc_info=True,
                        )
                        await self.reply_error(
                            request.id, INTERNAL_ERROR, f"the client's handler failed ({type(exc).__name__})"
                        )
                    finally:
                        if self.scopes.get(request.id) is scope:  # not a duplicate id's
                            del self.scopes[request.id]
                        if human:
                            self._pauses.resume()
        finally:
            if not started:
                self._waiting -= 1

    async def _answer_with_timeout(self, request: Request) -> dict[str, Any]:
        try:
            with anyio.fail_after(self._opts.handler_timeout):
                return await self._handlers.answer(request.method, request.params)
        except TimeoutError:
            raise McpError(
                "timeout",
                f"the client's {request.method} handler did not answer within "
                f"{self._opts.handler_timeout:g}s",
                code=REQUEST_TIMEOUT,
            ) from None

    async def reply(self, request_id: RequestId, result: dict[str, Any]) -> None:
        """A handler's answer, queued behind the others (written by the channel's writer)."""
        self._queue_answer({"jsonrpc": "2.0", "id": request_id, "result": result})

    async def reply_error(self, request_id: RequestId, code: int, message: str) -> None:
        self._queue_answer(error_response(request_id, code, message))

    async def _send_quietly(self, message: dict[str, Any]) -> None:
        channel = self._channel()
        if channel is None:
            return
        try:
            await channel.send(message)
        except McpError as exc:
            logger.debug("could not answer the server: %s", exc)
