"""One request waiting for its answer: its deadline, its progress, its outcome.

The reader task delivers into it; the caller's task waits on it. User code (progress callbacks)
therefore runs in the caller's task, never in the reader, and a slow callback slows only its caller.
Deadlines live here as absolute times so a progress notification can extend one and a handler that
waits for a human can pause all of them.
"""

from __future__ import annotations

import collections
import math
from typing import Any

import anyio

from ..protocol.jsonrpc import ErrorResponse, RequestId, Response

__all__ = ["PendingRequest"]

_PROGRESS_BACKLOG = 64


class PendingRequest:
    __slots__ = (
        "_wakeup",
        "deadline",
        "id",
        "max_deadline",
        "method",
        "outcome",
        "paused_remaining",
        "progress",
        "scope",
        "timeout",
    )

    def __init__(
        self, request_id: RequestId, method: str, *, now: float, timeout: float, max_total: float | None
    ) -> None:
        self.id = request_id
        self.method = method
        self.timeout = timeout
        self.deadline = now + timeout
        self.max_deadline = now + max_total if max_total is not None else math.inf
        self.outcome: Response | ErrorResponse | BaseException | None = None
        self.progress: collections.deque[dict[str, Any]] | None = None
        self.scope: anyio.CancelScope | None = None
        self.paused_remaining: float | None = None
        self._wakeup = anyio.Event()

    def deliver(self, outcome: Response | ErrorResponse | BaseException) -> None:
        if self.outcome is None:
            self.outcome = outcome
            self._wakeup.set()

    def add_progress(self, params: dict[str, Any], now: float, *, extend: bool) -> None:
        if self.progress is None:
            self.progress = collections.deque(maxlen=_PROGRESS_BACKLOG)
        self.progress.append(params)
        if extend and self.paused_remaining is None:
            self._set_deadline(max(self.deadline, min(now + self.timeout, self.max_deadline)))
        self._wakeup.set()

    def pause(self, now: float) -> None:
        """Stop the clock (a handler is waiting for a human)."""
        if self.paused_remaining is None:
            self.paused_remaining = max(0.0, self.deadline - now)
            self._set_deadline(math.inf)

    def resume(self, now: float) -> None:
        if self.paused_remaining is not None:
            remaining, self.paused_remaining = self.paused_remaining, None
            self.max_deadline = max(self.max_deadline, now + remaining)
            self._set_deadline(now + remaining)

    def _set_deadline(self, deadline: float) -> None:
        self.deadline = deadline
        if self.scope is not None:
            self.scope.deadline = deadline

    async def wait(self) -> None:
        """Wait until something arrived (outcome or progress); raise TimeoutError past the deadline."""
        while True:
            with anyio.CancelScope(deadline=self.deadline) as scope:
                self.scope = scope
                await self._wakeup.wait()
            self.scope = None
            if not scope.cancelled_caught:
                self._wakeup = anyio.Event()
                return
            if self.deadline <= anyio.current_time():
                raise TimeoutError
            # The deadline moved while we waited (pause or progress): wait again.

    def take_progress(self) -> list[dict[str, Any]]:
        if not self.progress:
            return []
        items = list(self.progress)
        self.progress.clear()
        return items
