"""The progress bar of a blocking call or a ``map_tool`` run, throttled (issue #28).

A chatty tool sends thousands of progress notifications a second; redrawing a notebook bar for
each one is two widget messages, so the bar keeps the latest value and redraws through the
notebook's one rate limiter (:class:`~._coalesce.Coalescer`: at most 10 a second, the first change
at once, on the shared UI thread), and :meth:`ProgressBar.close` draws the final value, total and
message before closing.
"""

from __future__ import annotations

from typing import Any

from ..protocol._printable import printable
from ._coalesce import Coalescer

__all__ = ["ProgressBar"]


class ProgressBar:
    """A tqdm.auto bar created on the first progress report (no bar for calls without progress)."""

    def __init__(self, description: str, total: int | None = None) -> None:
        self._description = description
        self._bar: Any = None
        self._closed = False
        self._draws = Coalescer(self._draw, what="a progress bar")
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
        """Record a progress report; it is drawn within 0.1 s."""
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
        self._draws.poke()

    def advance(self) -> None:
        """One more step done (a ``map_tool`` row)."""
        if self._bar is not None and not self._closed:
            self._bar.n += 1
            self._draws.poke()

    def close(self) -> None:
        """Draw what was held back (the final value), then close the bar."""
        if self._closed:
            return
        self._closed = True
        self._draws.close(flush=True)
        if self._bar is not None:
            self._bar.close()

    def _draw(self) -> None:
        if self._bar is not None:
            self._bar.refresh()


def _whole(value: float) -> float:
    """A whole number as an int (JSON's 7.0 reads 7), anything else as it is."""
    return int(value) if isinstance(value, float) and value.is_integer() else value
