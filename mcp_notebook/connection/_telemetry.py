"""What a connection tells about itself: exact counters, a stats snapshot, and telemetry events.

Why a part of its own: the router counts and emits on every request, but what a count or an event
looks like (and that a listener's bug never reaches the router) is one job, kept here. The router
owns one :class:`Telemetry` and reads ``counters`` directly on its hot path.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from ..protocol._errors import McpError
from ..protocol._jsonrpc import ErrorResponse, RequestId, Response
from ._log_budget import LogBudget
from ._pending import EXPIRED
from ._wakeup import EventWakeup, future_wakeups

__all__ = [
    "ConnectionEvent",
    "ConnectionStats",
    "Counters",
    "Telemetry",
    "clock_and_events",
    "with_trace_context",
]

logger = logging.getLogger("mcp_notebook.connection")


@dataclass(frozen=True, slots=True)
class ConnectionStats:
    """Counters since the client was created (a snapshot)."""

    requests: int
    #: Requests waiting for their answer (long-lived streams are counted in ``streams``).
    in_flight: int
    #: Open long-lived requests (``subscriptions/listen`` streams).
    streams: int
    timeouts: int
    cancellations: int
    late_responses: int
    reconnects: int
    overloaded: int
    notifications: int
    server_requests: int
    malformed_frames: int
    oversized_frames: int
    #: How each request sent on the wire ended: ``"ok"`` (a result), ``"server"`` (a JSON-RPC
    #: error), the :class:`McpError` kind it failed with (``"timeout"``, ``"cancelled"``,
    #: ``"transport"``, ``"protocol"``, ``"closed"``, ...), or ``"error"`` (another exception: a
    #: bug). Together with ``in_flight`` and ``streams`` these add up to ``requests``.
    outcomes: dict[str, int]
    #: Progress notifications dropped because no waiting request asked for them under that token
    #: (a request that sent no ``progressToken``, one that ended, or a token that was never ours):
    #: such progress never reaches a callback nor extends a deadline.
    dropped_progress: int = 0
    #: Times the connection was closed because the server sent requests without reading our
    #: answers (more than 1,000 answers, or 64 MiB of them, waiting to be written).
    unread_answer_closes: int = 0


@dataclass(slots=True)
class Counters:
    requests: int = 0
    timeouts: int = 0
    cancellations: int = 0
    late_responses: int = 0
    reconnects: int = 0
    overloaded: int = 0
    notifications: int = 0
    server_requests: int = 0
    malformed_frames: int = 0
    oversized_frames: int = 0
    dropped_progress: int = 0
    #: Connections closed because the server's requests outran its reading of our answers.
    unread_answer_closes: int = 0
    #: Requests answered with a result: the common ending, a plain field to keep the hot path cheap.
    ok: int = 0
    #: Every other ending, by kind (rare, so a dict is fine).
    failed: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ConnectionEvent:
    """A telemetry event: ``kind`` (state, request_start, request, cancel, late_response, ...), the
    wall-clock ``time``, and ``data`` with ids, methods, durations and outcomes, never payloads."""

    kind: str
    time: float
    data: dict[str, Any]


class Telemetry:
    """The counters and the event listeners of one connection.

    ``clock`` is the connection's monotonic clock (for durations); ``warnings`` is the budgeted
    log a failing listener is reported to.
    """

    __slots__ = ("_clock", "_warnings", "counters", "listeners")

    def __init__(self, clock: Callable[[], float], warnings: LogBudget) -> None:
        self._clock = clock
        self._warnings = warnings
        self.counters = Counters()
        #: Event listeners; the router checks this list is non-empty before building an event.
        self.listeners: list[Callable[[ConnectionEvent], None]] = []

    def snapshot(self, *, active: int, streams: int) -> ConnectionStats:
        c = self.counters
        return ConnectionStats(
            requests=c.requests,
            in_flight=active - streams,
            streams=streams,
            timeouts=c.timeouts,
            cancellations=c.cancellations,
            late_responses=c.late_responses,
            reconnects=c.reconnects,
            overloaded=c.overloaded,
            notifications=c.notifications,
            server_requests=c.server_requests,
            malformed_frames=c.malformed_frames,
            oversized_frames=c.oversized_frames,
            outcomes={"ok": c.ok, **c.failed},
            dropped_progress=c.dropped_progress,
            unread_answer_closes=c.unread_answer_closes,
        )

    def ended(self, kind: str) -> None:
        """Count a request that ended other than with a result."""
        failed = self.counters.failed
        failed[kind] = failed.get(kind, 0) + 1

    def on_event(self, callback: Callable[[ConnectionEvent], None]) -> Callable[[], None]:
        self.listeners.append(callback)
        return lambda: self.listeners.remove(callback) if callback in self.listeners else None

    def emit(self, kind: str, **data: Any) -> None:
        event = ConnectionEvent(kind, time.time(), data)
        for listener in list(self.listeners):
            try:
                listener(event)
            except Exception:
                self._warnings.log(
                    logging.ERROR,
                    "event listener failure",
                    "an event listener raised; ignored",
                    exc_info=True,
                )

    def emit_request_end(self, request_id: RequestId, method: str, started: float, outcome: Any) -> None:
        if isinstance(outcome, Response):
            result = "ok"
        elif outcome is EXPIRED:
            result = "timeout"
        elif isinstance(outcome, ErrorResponse):
            result = "server"
        elif isinstance(outcome, McpError):
            result = outcome.kind
        else:
            result = "unknown"
        self.emit("request", id=request_id, method=method, duration=self._clock() - started, outcome=result)


def with_trace_context(
    params: dict[str, Any] | None, trace: Callable[[], dict[str, str] | None]
) -> dict[str, Any] | None:
    """W3C trace context (SEP-414) in ``_meta``: ``traceparent``/``tracestate`` from the callable."""
    try:
        context = trace()
    except Exception:
        logger.exception("the trace_context callable raised; no trace context sent")
        return params
    if not context:
        return params
    fields = {
        k: v
        for k, v in context.items()
        if k in ("traceparent", "tracestate", "baggage") and isinstance(v, str)
    }
    if not fields:
        return params
    stamped = dict(params) if params else {}
    meta = stamped.get("_meta")
    stamped["_meta"] = {**meta, **fields} if isinstance(meta, dict) else fields
    return stamped


def clock_and_events() -> tuple[Callable[[], float], Callable[[], Any]]:
    """The running loop's clock and what makes a request's wake-up: on asyncio, the loop's own
    clock (no backend lookup) and a bare future (:mod:`._wakeup`); elsewhere anyio's."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return anyio.current_time, EventWakeup
    # anyio's asyncio backend reads this same clock; a request's wake-up is a bare future there.
    return loop.time, future_wakeups(loop)
