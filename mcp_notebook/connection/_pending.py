"""One request waiting for its answer: its deadline, its progress, its outcome.

The reader task delivers into it; the caller's task waits on it; the connection's
:class:`~._deadlines.DeadlineSweeper` expires it. User code (progress callbacks) therefore runs in
the caller's task, never in the reader, and a slow callback slows only its caller. Deadlines are
absolute times, so a progress notification can extend one and a handler that waits for a human can
pause all of them.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Callable, Generator
from typing import Any, Protocol

from ..protocol._jsonrpc import ErrorResponse, RequestId, Response

__all__ = ["EXPIRED", "PendingRequest"]

_PROGRESS_BACKLOG = 64


class _Wakeup(Protocol):
    """What a request's caller awaits (see ``_wakeup.py``): on asyncio a bare future."""

    def done(self) -> bool: ...

    def set_result(self, result: None, /) -> None: ...

    def __await__(self) -> Generator[Any, None, Any]: ...


class _Cancellable(Protocol):
    def cancel(self) -> None: ...


class _Expired:
    """The outcome of a request whose deadline passed."""

    def __repr__(self) -> str:
        return "EXPIRED"


EXPIRED = _Expired()
#: What a finished request keeps once its caller has taken the outcome (a heap entry may outlive it).
TAKEN = _Expired()


class _Spent:
    """The wake-up of a request whose outcome was taken: set already, never waited on again."""

    def done(self) -> bool:
        return True

    def set_result(self, result: None, /) -> None:
        pass

    def __await__(self) -> Generator[Any, None, Any]:
        yield from ()


_SPENT = _Spent()


class PendingRequest:
    __slots__ = (
        "_new_event",
        "_wakeup",
        "deadline",
        "id",
        "max_deadline",
        "method",
        "outcome",
        "paused_remaining",
        "progress",
        "scope",
        "started",
        "timeout",
        "token",
    )

    def __init__(
        self,
        request_id: RequestId,
        method: str,
        *,
        now: float,
        timeout: float,
        max_total: float | None,
        new_event: Callable[[], _Wakeup],
        token: RequestId | None = None,
    ) -> None:
        self.id = request_id
        #: The ``progressToken`` the request was sent with: only progress under it is taken (and
        #: may extend the deadline); None when it asked for none.
        self.token = token
        self.method = method
        self.timeout = timeout
        self.started = now  # when it was sent (for the telemetry's duration)
        self.deadline = now + timeout
        self.max_deadline = now + max_total if max_total is not None else math.inf
        self.outcome: Response | ErrorResponse | BaseException | _Expired | None = None
        self.progress: collections.deque[dict[str, Any]] | None = None
        self.paused_remaining: float | None = None
        self._new_event = new_event
        self._wakeup = new_event()
        #: The cancel scope of an exchange run in the caller's task (HTTP): ended with the request.
        self.scope: _Cancellable | None = None

    def deliver(self, outcome: Response | ErrorResponse | BaseException) -> None:
        if self.outcome is None:
            self.outcome = outcome
            wakeup = self._wakeup
            if not wakeup.done():  # (done: its waiter was cancelled, which cancels a future)
                wakeup.set_result(None)
            if self.scope is not None:
                self.scope.cancel()

    def expire(self) -> None:
        if self.outcome is None:
            self.outcome = EXPIRED
            wakeup = self._wakeup
            if not wakeup.done():  # (done: its waiter was cancelled, which cancels a future)
                wakeup.set_result(None)
            if self.scope is not None:
                self.scope.cancel()

    def add_progress(self, params: dict[str, Any], now: float, *, extend: bool) -> None:
        if self.progress is None:
            self.progress = collections.deque(maxlen=_PROGRESS_BACKLOG)
        self.progress.append(params)
        if extend and self.paused_remaining is None:
            # Only moves the number: the sweeper re-reads it when the old deadline comes due.
            self.deadline = max(self.deadline, min(now + self.timeout, self.max_deadline))
        wakeup = self._wakeup
        if not wakeup.done():
            wakeup.set_result(None)

    def pause(self, now: float) -> None:
        """Stop the clock (a handler is waiting for a human)."""
        if self.paused_remaining is None:
            self.paused_remaining = max(0.0, self.deadline - now)
            self.deadline = math.inf

    def resume(self, now: float) -> None:
        """Restart the clock; the caller must hand the request to the sweeper again."""
        if self.paused_remaining is not None:
            remaining, self.paused_remaining = self.paused_remaining, None
            self.max_deadline = max(self.max_deadline, now + remaining)
            self.deadline = now + remaining

    async def wait(self) -> None:
        """Wait until something arrived: the outcome (or expiry), or progress."""
        await self._wakeup
        # Progress woke us: a fresh wake-up for what comes next. An answered request is not
        # waited on again, so the common call (no progress) makes one, not two.
        if self.outcome is None:
            self._wakeup = self._new_event()

    def take_outcome(self) -> Response | ErrorResponse | BaseException | _Expired | None:
        """The outcome, released (with the rest of the request's state) so that a lingering heap
        entry in the deadline sweeper keeps only a small shell alive."""
        outcome, self.outcome = self.outcome, TAKEN
        self.progress = None
        self._wakeup = _SPENT
        return outcome

    def take_progress(self) -> list[dict[str, Any]]:
        if not self.progress:
            return []
        items = list(self.progress)
        self.progress.clear()
        return items
