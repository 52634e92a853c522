"""Notifications: the router for those the server sends, and a bounded buffer for one consumer.

The buffer is drop-oldest with an async iterator face.
A consumer that stops reading must never stall the connection or grow memory without bound, so a
full buffer drops its oldest entry and counts it in ``dropped`` (the newest state of a server is
what a notebook wants to see).
"""

from __future__ import annotations

import collections
import logging
import math
from collections.abc import Callable
from typing import Any

import anyio
import anyio.abc

from ..protocol._cut import LOG_NAME_CHARS, cut_log_data
from ..protocol._errors import INVALID_REQUEST, McpError
from ..protocol._jsonrpc import FrameError, Notification, RequestId, json_number, probable_response_id
from ..protocol._printable import printable
from ..protocol._secrets import NO_SECRETS, Secrets
from ..transports._base import OversizedFrame, RequestFailed
from ._log_budget import LogBudget
from ._pending import PendingRequest
from ._progress import GuardedProgress
from ._states import ConnectionState
from ._telemetry import Counters

__all__ = ["NotificationQueue", "NotificationRouter", "report_progress"]

logger = logging.getLogger("mcp_notebook.connection")
server_log = logging.getLogger("mcp_notebook.server")

_LOG_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}


class NotificationQueue:
    """Notifications for one consumer. Iterate with ``async for``; ``close()`` ends the iteration."""

    def __init__(self, maxsize: int, on_close: Callable[[NotificationQueue], None] | None = None) -> None:
        if maxsize < 1:
            raise ValueError(f"maxsize={maxsize} must be >= 1")
        self._items: collections.deque[Notification] = collections.deque(maxlen=maxsize)
        self._wakeup = anyio.Event()
        self._closed = False
        self._on_close = on_close
        #: How many notifications were dropped because the consumer fell behind.
        self.dropped = 0

    def put(self, notification: Notification) -> None:
        if self._closed:
            return
        if len(self._items) == self._items.maxlen:
            self.dropped += 1
        self._items.append(notification)
        self._wakeup.set()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._wakeup.set()
            if self._on_close is not None:
                self._on_close(self)

    def __len__(self) -> int:
        return len(self._items)

    def __aiter__(self) -> NotificationQueue:
        return self

    async def __anext__(self) -> Notification:
        while not self._items:
            if self._closed:
                raise StopAsyncIteration
            await self._wakeup.wait()
            self._wakeup = anyio.Event()
        return self._items.popleft()

    async def __aenter__(self) -> NotificationQueue:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.close()


class NotificationRouter:
    """What the server sends on its own, routed: progress to the request that asked for it, a
    cancellation to the stream or handler it names, log messages to the ``mcp_notebook.server``
    logger (within budget), everything to the listeners; malformed frames counted and dropped.

    The router gives it what it routes to: ``pending`` (the current map of waiting requests),
    ``streams`` (ids of long-lived requests) and ``scopes`` (running handlers by request id).
    State-change listeners live here too, told by :meth:`tell_state`.
    """

    def __init__(
        self,
        *,
        counters: Counters,
        warnings: LogBudget,
        server_logs: LogBudget,
        clock: Callable[[], float],
        secrets: Secrets = NO_SECRETS,
        pending: Callable[[], dict[RequestId, PendingRequest]],
        streams: set[RequestId],
        scopes: dict[RequestId, anyio.CancelScope],
        extend_on_progress: bool,
    ) -> None:
        self._counters = counters
        self._warnings = warnings
        self._server_logs = server_logs
        self._clock = clock
        self._secrets = secrets
        self._pending = pending
        self._streams = streams
        self._scopes = scopes
        self._extend_on_progress = extend_on_progress
        self.listeners: list[Callable[[Notification], None]] = []
        self.state_listeners: list[Callable[[ConnectionState], None]] = []

    def on_notification(self, callback: Callable[[Notification], None]) -> Callable[[], None]:
        self.listeners.append(callback)
        return lambda: self.listeners.remove(callback) if callback in self.listeners else None

    def on_state_change(self, callback: Callable[[ConnectionState], None]) -> Callable[[], None]:
        self.state_listeners.append(callback)
        return lambda: self.state_listeners.remove(callback) if callback in self.state_listeners else None

    def tell_state(self, state: ConnectionState) -> None:
        for listener in list(self.state_listeners):
            try:
                listener(state)
            except Exception:
                logger.exception("a connection state listener raised; ignored")

    def announce(self, notification: Notification) -> None:
        """Tell the listeners of a notification the client makes up itself (a list change it learnt)."""
        for listener in list(self.listeners):
            try:
                listener(notification)
            except Exception:
                logger.exception("a notification listener raised; ignored")

    def route(self, message: Notification) -> None:
        """Route one notification from the reader (never awaits: no user code runs here)."""
        self._counters.notifications += 1
        method = message.method
        params = message.params or {}
        if method == "notifications/progress":
            token = params.get("progressToken")
            if type(token) is int or type(token) is str:
                # Only a request that sent this very token takes it (ours are request ids, sent
                # only with a callback): a server cannot keep any other call alive by naming its id.
                pending = self._pending().get(token) if type(token) is int else None
                if pending is not None and pending.token == token:
                    if self._secrets and isinstance(params.get("message"), str):
                        # what the caller's callback shows: a secret the server echoes is masked
                        params = {**params, "message": self._secrets.mask(params["message"])}
                    pending.add_progress(params, self._clock(), extend=self._extend_on_progress)
                else:
                    self._counters.dropped_progress += 1
            else:
                self._malformed(f"a progress notification with a {type(token).__name__} token")
            return
        if method == "notifications/cancelled":
            request_id = params.get("requestId")
            if type(request_id) is not int and type(request_id) is not str:
                self._malformed(f"a cancellation with a {type(request_id).__name__} request id")
                return
            if request_id in self._streams:
                # A modern server tears down one of our subscriptions/listen streams this way.
                stream = self._pending().pop(request_id, None)
                if stream is not None:
                    reason = params.get("reason")
                    text = f": {reason}" if isinstance(reason, str) else ""
                    stream.deliver(McpError("cancelled", f"the server ended the stream{text}"))
            else:
                scope = self._scopes.get(request_id)
                if scope is not None:
                    scope.cancel()
        elif method == "notifications/message":
            self._log_server_message(params)
        for listener in list(self.listeners):
            try:
                listener(message)
            except Exception:
                self._warnings.log(
                    logging.ERROR,
                    "listener failure",
                    "a notification listener raised; ignored",
                    exc_info=True,
                )

    def _log_server_message(self, params: dict[str, Any]) -> None:
        """A ``notifications/message`` onto the ``mcp_notebook.server`` logger, within its budget
        (one per level, so a flood of debug chatter cannot hide the server's errors)."""
        name = params.get("level")
        level = _LOG_LEVELS.get(name) if isinstance(name, str) else None
        if level is None:
            name, level = "info", logging.INFO
        if not server_log.isEnabledFor(level):
            return  # nobody would see it: spare the escaping
        # One line per record, escapes shown: a server cannot forge log lines or drive a terminal;
        # and cut (LOG_DATA_BYTES, with a note), so 30 messages of 4 MB do not print 80 MB. Masked
        # before the cut, so a secret the server echoes (see protocol/_secrets) is never half shown.
        source, data = str(params.get("logger") or "server"), params.get("data")
        if self._secrets:
            source, data = self._secrets.mask(source), self._secrets.mask_value(data)
        source = printable(source[:LOG_NAME_CHARS])
        data = printable(cut_log_data(data).value)
        self._server_logs.log(level, f"{name} message", "%s: %s", source, data)

    def _malformed(self, what: str) -> None:
        """A frame that parsed but carries a value the spec does not allow: dropped, counted."""
        self._counters.malformed_frames += 1
        self._warnings.log(
            logging.WARNING, "malformed notification", "dropped %s from the server (malformed)", what
        )

    def on_bad_frame(
        self,
        error: FrameError | RequestFailed,
        refuse: Callable[[RequestId, int, str, anyio.abc.TaskGroup | None], None],
        tg: anyio.abc.TaskGroup | None,
    ) -> None:
        """A frame that could not be read: fail the request it answers, refuse the request it was."""
        if isinstance(error, RequestFailed):
            failed = self._pending().pop(error.id, None)
            if failed is not None:
                failed.deliver(error.error)
            return
        if isinstance(error, OversizedFrame):
            self._counters.oversized_frames += 1
            request_id = probable_response_id(error.head, error.tail)
            pending = self._pending().pop(request_id, None) if request_id is not None else None
            self._warnings.log(
                logging.WARNING, "oversized message", "discarded a message from the server: %s", error.reason
            )
            if pending is not None:
                pending.deliver(
                    McpError(
                        "transport",
                        f"the server's answer was too large: {error.reason}; "
                        "raise max_message_bytes to accept it",
                    )
                )
            return
        self._counters.malformed_frames += 1
        self._warnings.log(
            logging.WARNING,
            "bad frame",
            "skipped a line from the server that is not JSON-RPC (%s): %r",
            error.reason,
            self._secrets.mask_bytes(error.head)[:120],
        )
        failed = self._pending().pop(error.id, None) if error.id is not None else None
        if failed is not None:  # it answers one of our requests: fail that one now, not at its deadline
            failed.deliver(McpError("protocol", f"refused the server's answer: {error.reason}"))
        if error.request_id is not None:
            # A request of the server's that we cannot read: say so, or it waits for an answer.
            refuse(error.request_id, INVALID_REQUEST, f"invalid request: {error.reason}", tg)


async def report_progress(callback: GuardedProgress, params: dict[str, Any]) -> None:
    progress = json_number(params.get("progress"))
    message = params.get("message")
    await callback(
        math.nan if progress is None else progress,
        json_number(params.get("total")),
        message if isinstance(message, str) else None,
    )
