"""The progress bar of a blocking call or a ``map_tool`` run, throttled (issue #28).

A chatty tool sends thousands of progress notifications a second; redrawing a notebook bar for
each one is two widget messages, so the bar keeps the latest value and redraws at most every
:data:`_INTERVAL` seconds. A value held back is drawn later by one pending ``call_later`` on the
engine's event loop (no timer thread), and :meth:`ProgressBar.close` draws the final value,
total and message before closing, then cancels that pending draw.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from ..protocol._printable import printable

__all__ = ["ProgressBar"]

_INTERVAL = 0.1  # seconds between redraws: at most ~10 a second


class ProgressBar:
    """A tqdm.auto bar created on the first progress report (no bar for calls without progress)."""

    def __init__(self, description: str, total: int | None = None) -> None:
        self._description = description
        self._bar: Any = None
        self._last_draw = float("-inf")
        self._dirty = False
        self._pending: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        if total is not None:
            self._open(total)

    def _open(self, total: float | None) -> None:
        try:
            from tqdm.auto import tqdm
        except ImportError:
            return
        # tqdm's own rate limit (mininterval) is per update(); our redraws go through refresh().
        self._bar = tqdm(total=total, desc=self._description, leave=False)

    def update(self, progress: float, total: float | None, message: str | None) -> None:
        """Record a progress report; draw it now unless the bar was drawn less than 0.1 s ago."""
        if self._closed:
            return
        if self._bar is None:
            self._open(total)
            if self._bar is None:
                return
        total = _whole(total) if total is not None else None
        if total is not None and self._bar.total != total:
            self._bar.total = total
        self._bar.n = _whole(progress)  # tqdm writes 7.0/100.0 for floats that are whole
        if message:
            self._bar.set_postfix_str(printable(message[:60]), refresh=False)  # tqdm may draw on a terminal
        self._changed()

    def advance(self) -> None:
        """One more step done (a ``map_tool`` row)."""
        if self._bar is not None and not self._closed:
            self._bar.n += 1
            self._changed()

    def close(self) -> None:
        """Draw what was held back (the final value), close the bar, cancel the pending draw."""
        if self._closed:
            return
        self._closed = True
        self._cancel_pending()
        if self._bar is not None:
            if self._dirty:
                self._draw()
            self._bar.close()

    def _changed(self) -> None:
        self._dirty = True
        wait = self._last_draw + _INTERVAL - time.monotonic()
        if wait <= 0:
            self._draw()
        elif self._pending is None:
            self._schedule(wait)

    def _draw(self) -> None:
        self._dirty = False
        self._last_draw = time.monotonic()
        self._bar.refresh()

    def _schedule(self, wait: float) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop (a plain thread): close() draws the final value
        self._loop = loop
        self._pending = loop.call_later(wait, self._flush)

    def _flush(self) -> None:
        self._pending = None
        if self._dirty and not self._closed:
            self._draw()

    def _cancel_pending(self) -> None:
        pending, loop = self._pending, self._loop
        self._pending = None
        if pending is None or loop is None:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop or loop.is_closed():
            pending.cancel()
        else:  # closed from the cell's thread (map_tool): cancel on the loop's own thread
            try:
                loop.call_soon_threadsafe(pending.cancel)
            except RuntimeError:  # the loop closed meanwhile
                pending.cancel()


def _whole(value: float) -> float:
    """A whole number as an int (JSON's 7.0 reads 7), anything else as it is."""
    return int(value) if isinstance(value, float) and value.is_integer() else value
