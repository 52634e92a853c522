"""The progress bar of a blocking call or a ``map_tool`` run, throttled (issue #28).

A chatty tool sends thousands of progress notifications a second; redrawing a notebook bar for
each one is two widget messages, so the bar keeps the latest value and redraws through the
notebook's one rate limiter (:class:`~._coalesce.Coalescer`: at most 10 a second, the first change
at once, on the shared UI thread), and :meth:`ProgressBar.close` draws the final value, total and
message before closing.

Where it is drawn: in a notebook (Jupyter or marimo) by the bar the top layer hands in with
:func:`draw_bars_with` (one of our panels: this layer never imports the widgets), under the cell
that made the call; elsewhere (a terminal, a script) by tqdm.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from ..protocol._printable import printable
from . import _host
from ._coalesce import Coalescer

__all__ = ["BarPlace", "ProgressBar", "draw_bars_with"]

logger = logging.getLogger("mcp_notebook.notebook")

#: Makes a notebook's bar from (description, total); set by the top layer (mcp_notebook.jupyter).
_notebook_bar: Callable[[str, float | None], Any] | None = None


def draw_bars_with(make: Callable[[str, float | None], Any] | None) -> None:
    """Draw the bars of calls made in a notebook with ``make`` (a tqdm-like object: ``total``,
    ``n``, ``set_postfix_str``, ``refresh``, ``close``); None: tqdm everywhere."""
    global _notebook_bar
    _notebook_bar = make


class BarPlace:
    """Where a bar goes, known on the cell's thread only (a call's bar is made on the engine's):
    the notebook's front end, and in marimo the writer to the calling cell's output."""

    __slots__ = ("front", "writer")

    def __init__(self, front: str | None, writer: Callable[[Any], None] | None) -> None:
        self.front = front
        self.writer = writer

    @classmethod
    def here(cls) -> BarPlace:
        """The place of a bar made now, on this thread."""
        front = _host.front_end() if _notebook_bar is not None else None
        return cls(front, _host.cell_writer() if front == "marimo" else None)


class ProgressBar:
    """A bar created on the first progress report (no bar for calls without progress): the
    notebook's (:func:`draw_bars_with`) in a notebook, else tqdm's."""

    def __init__(self, description: str, total: int | None = None, place: BarPlace | None = None) -> None:
        self._description = description
        self._bar: Any = None
        self._place = place if place is not None else BarPlace.here()
        self._closed = False
        self._draws = Coalescer(self._draw, what="a progress bar")
        if total is not None:
            self._open(total)

    def _open(self, total: float | None) -> None:
        if self._open_in_notebook(total):
            return
        try:
            from tqdm.auto import tqdm
        except ImportError:
            return
        # tqdm's own rate limit (mininterval) is per update(); our redraws go through refresh().
        self._bar = tqdm(total=total, desc=self._description, leave=False)

    def _open_in_notebook(self, total: float | None) -> bool:
        make, place = _notebook_bar, self._place
        if make is None or place.front is None or (place.front == "marimo" and place.writer is None):
            return False
        try:
            bar = make(self._description, total)
            if place.writer is not None:
                place.writer(bar)
            else:
                from IPython.display import display

                display(bar)
        except Exception:  # a bar that cannot be drawn must not fail the call: tqdm draws it
            logger.debug("could not draw a notebook progress bar", exc_info=True)
            return False
        self._bar = bar
        return True

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
