"""Serving the server's requests: ``ping``, sampling, elicitation, roots, and ``input_required`` rounds.

Why a part of its own: answering the server is the client's user code running (the handlers),
so it has its own bounds (``max_concurrent_handlers``, a queue of four times that, then "busy";
``handler_timeout`` each) and its own cancellation (the server's ``notifications/cancelled``
cancels a handler's scope in :attr:`ServerRequests.scopes`). A handler that waits for a person
pauses every request's deadline meanwhile. Handlers never run in the reader task.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import anyio
import anyio.abc

from ..protocol._errors import INTERNAL_ERROR, METHOD_NOT_FOUND, REQUEST_TIMEOUT, McpError
from ..protocol._jsonrpc import Request, RequestId, error_response
from ..transports._base import Channel
from ._deadlines import DeadlinePause
from ._handlers import ELICITATION, SAMPLING, ClientHandlers
from ._log_budget import LogBudget
from ._options import ConnectionOptions
from ._telemetry import Counters

__all__ = ["ServerRequests"]

logger = logging.getLogger("mcp_notebook.connection")

_HUMAN_METHODS = frozenset({SAMPLING, ELICITATION})


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
    ) -> None:
        self._handlers = handlers
        self._opts = options
        self._counters = counters
        self._warnings = warnings
        self._pauses = pauses
        self._channel = channel
        #: The running handlers' scopes by request id, for the server's ``notifications/cancelled``.
        self.scopes: dict[RequestId, anyio.CancelScope] = {}
        self._limiter = anyio.CapacityLimiter(options.max_concurrent_handlers)
        self._waiting = 0

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
        """Answer one request of the server's in its own task of ``tg`` (None: the channel is ending)."""
        self._counters.server_requests += 1
        if tg is None:
            return
        if request.method == "ping":
            tg.start_soon(self.reply, request.id, {})
        elif not self._handlers.supports(request.method):
            tg.start_soon(
                self.reply_error,
                request.id,
                METHOD_NOT_FOUND,
                f"the client does not support {request.method!r}",
            )
        elif self._waiting >= 4 * self._opts.max_concurrent_handlers:
            tg.start_soon(self.reply_error, request.id, INTERNAL_ERROR, "the client is busy; try again later")
        else:
            tg.start_soon(self._run_handler, request)

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
        await self._send_quietly({"jsonrpc": "2.0", "id": request_id, "result": result})

    async def reply_error(self, request_id: RequestId, code: int, message: str) -> None:
        await self._send_quietly(error_response(request_id, code, message))

    async def _send_quietly(self, message: dict[str, Any]) -> None:
        channel = self._channel()
        if channel is None:
            return
        try:
            await channel.send(message)
        except McpError as exc:
            logger.debug("could not answer the server: %s", exc)
