"""A count shown at a bounded rate: the model's ``in_flight`` (issue #28).

Why: the connection reports every request's start and end, so a loop of calls moved ``in_flight``
0 → 1 → 0 twice per call, each a model write that every observer (panels, a group's board) paid
for. Nobody can read a count that changes a thousand times a second; what matters is that it is
right soon after it settles. So the gauge keeps the latest count at once (cheap) and shows it
through the notebook's one rate limiter (:class:`~._coalesce.Coalescer`, trailing: one interval
after the first change since it last showed one), always ending on the final count. A request
shorter than that never moves the trait. The write itself is handed back to the event loop the
count came from (the engine's), so the model's traits are written on one thread, as before.

A write from a thread without a running event loop (a script or a test setting the model
directly) is shown at once, in that thread.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from ._coalesce import INTERVAL, Coalescer

__all__ = ["Gauge"]


class Gauge:
    def __init__(
        self, show: Callable[[int], None], shown: Callable[[], int], *, interval: float = INTERVAL
    ) -> None:
        self._show = show
        self._shown = shown
        self._latest = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._shows = Coalescer(self._flush, interval, what="a count", leading=False)

    @property
    def latest(self) -> int:
        """The count as last reported (the trait may show it up to ``interval`` later)."""
        return self._latest

    def note(self, count: int) -> None:
        self._latest = count
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            self._show(count)  # no loop: a direct write, shown now
            return
        self._shows.poke()

    def _flush(self) -> None:  # on the UI thread: the write goes back to the loop
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody reads it any more
            loop.call_soon_threadsafe(self._apply)

    def _apply(self) -> None:
        count = self._latest
        if count != self._shown():
            self._show(count)
