"""A count shown at a bounded rate: the model's ``in_flight`` (issue #28).

Why: the connection reports every request's start and end, so a loop of calls moved ``in_flight``
0 → 1 → 0 twice per call, each a model write that every observer (panels, a group's board) paid
for. Nobody can read a count that changes a thousand times a second; what matters is that it is
right soon after it settles. So the gauge keeps the latest count at once (cheap) and shows it at
most ``1 / interval`` times a second, 100 ms after the first change since it last showed one,
always ending on the final count. A request shorter than that never moves the trait.

The delayed write runs on the event loop of the thread that wrote (the engine's, where the
connection's events arrive); a write from a thread without a running loop (a script or a test
setting the model directly) is shown at once.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

__all__ = ["Gauge"]


class Gauge:
    def __init__(
        self, show: Callable[[int], None], shown: Callable[[], int], *, interval: float = 0.1
    ) -> None:
        self._show = show
        self._shown = shown
        self._interval = interval
        self._latest = 0
        self._pending = False
        self._lock = threading.Lock()

    @property
    def latest(self) -> int:
        """The count as last reported (the trait may show it up to ``interval`` later)."""
        return self._latest

    def note(self, count: int) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        with self._lock:
            self._latest = count
            if self._pending:
                return  # the write already scheduled shows this count
            if loop is not None:
                self._pending = True
                loop.call_later(self._interval, self._flush)
                return
        self._show(count)

    def _flush(self) -> None:
        with self._lock:
            self._pending = False
            count = self._latest
        if count != self._shown():
            self._show(count)
