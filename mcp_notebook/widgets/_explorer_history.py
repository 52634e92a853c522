"""The explorer's list of the last calls: a fixed set of rows whose values change (issue #28).

Why: the list used to be rebuilt from new widgets on every call (about 200 widget models for 20
rows, never closed), so a loop of calls with an explorer on screen ran at a few calls a second and
grew the kernel by megabytes. Now the ``rows`` rows are made once, with the list (so a flood of
calls creates no widget model, not even the first ones), and a redraw only sets the values that
changed; redraws go through the notebook's one rate limiter (:class:`~..notebook._coalesce.Coalescer`):
at most ``1 / interval`` a second (4 by default: each redraw of a busy list sends one message a
row, and a kernel's threads share one GIL), off the caller's thread, always ending on the final
state.

Each row reads ``12:03:04  add(a=2, b=3)  ok  7 ms``: the call's arguments in one short line (JSON
values, so a newline or a quote in a string shows escaped; cut at :data:`ARGUMENTS_WIDTH`), the
whole arguments in the tooltip, the duration in the short human form of every picture
(:func:`~..display._durations.short_duration`).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import ipywidgets as W
from ipywidgets.widgets.widget_string import LabelStyle

from ..display._durations import short_duration
from ..display._html import short
from ..notebook._coalesce import Coalescer
from ._buttons import set_enabled
from ._result_view import html_widget

__all__ = ["ARGUMENTS_WIDTH", "HistoryRows", "arguments_line", "call_line"]

_Entry = dict[str, Any]
#: How many characters of a call's arguments a history row shows (the tooltip holds them all).
ARGUMENTS_WIDTH = 80


def arguments_line(arguments: Any, width: int = ARGUMENTS_WIDTH) -> str:
    """``a=2, b="x\\ny"``: the arguments on one line, each value as JSON (control characters and
    quotes escaped), cut at ``width``; ``…`` when they were not recorded (redacted)."""
    if not isinstance(arguments, dict):
        return "…"
    parts = []
    for name, value in arguments.items():
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
        parts.append(f"{json.dumps(str(name))[1:-1]}={text}")
    return short(", ".join(parts), width)


def call_line(entry: _Entry, width: int = 200) -> str:
    """``12:03:04  add(a=2, b=3)  ok  7 ms``: one call of the history, on one line."""
    when = time.strftime("%H:%M:%S", time.localtime(entry.get("time") or 0))
    took = short_duration(entry.get("duration"))
    call = f"{entry.get('name')}({arguments_line(entry.get('arguments'))})"
    return short(f"{when}  {call}  {entry.get('outcome')}  {took}".rstrip(), width)


_RERUN_TIP = "load these arguments and call again"


class _Shared:
    """The layout and style models every row uses (ipywidgets lets widgets share them): a row is
    then four widget models, not eleven."""

    def __init__(self) -> None:
        self.row = W.Layout(align_items="center")
        self.button = W.Layout()
        self.button_style = W.ButtonStyle()
        self.label = W.Layout()
        self.label_style = LabelStyle()

    def widgets(self) -> list[W.Widget]:
        return [self.row, self.button, self.button_style, self.label, self.label_style]


class _Row:
    """One line of the list: re-run, copy as Python, and the call's text; ``entry`` is what it shows."""

    def __init__(
        self, shared: _Shared, on_rerun: Callable[[_Entry], Any], on_copy: Callable[[_Entry], Any]
    ) -> None:
        self.entry: _Entry = {}
        self.label = W.Label(layout=shared.label, style=shared.label_style)
        looks = {"layout": shared.button, "style": shared.button_style}
        self.rerun = W.Button(description="re-run", icon="repeat", tooltip=_RERUN_TIP, **looks)
        self.rerun.add_class("mcpnb-rerun")
        self.rerun.on_click(lambda _: on_rerun(self.entry))
        self.copy = W.Button(
            description="copy as Python", icon="copy", tooltip="show this call as Python code", **looks
        )
        self.copy.add_class("mcpnb-copy")
        self.copy.on_click(lambda _: on_copy(self.entry))
        self.box = W.HBox([self.rerun, self.copy, self.label], layout=shared.row)
        self.box.add_class("mcpnb-history-entry")

    def show(self, entry: _Entry) -> None:
        if entry is self.entry:
            return
        self.entry = entry
        # Traits sync only when a value changes: an unchanged tooltip or state sends nothing.
        self.label.tooltip = short(json.dumps(entry.get("arguments"), default=str), 1000)
        self.label.value = call_line(entry, 160)
        recorded = isinstance(entry.get("arguments"), dict)
        set_enabled(self.rerun, recorded, tip=_RERUN_TIP, why="the arguments were not recorded")


class HistoryRows:
    """``box`` lists the newest ``rows`` calls that ``recent(rows)`` returns (newest first)."""

    def __init__(
        self,
        recent: Callable[[int], list[_Entry]],
        on_rerun: Callable[[_Entry], Any],
        on_copy: Callable[[_Entry], Any],
        *,
        rows: int = 20,
        interval: float = 0.25,
    ) -> None:
        self._recent = recent
        self._on_rerun = on_rerun
        self._on_copy = on_copy
        self._size = rows
        self._shared = _Shared()
        # Every row now: live widget models stay flat from the first call on.
        self._rows = [_Row(self._shared, on_rerun, on_copy) for _ in range(rows)]
        self._lock = threading.Lock()
        self.empty = html_widget("<i>No calls yet.</i>")
        self.box = W.VBox([self.empty])
        self.redraws = Coalescer(self.redraw, interval, what="the explorer's history")

    def changed(self) -> None:
        """The history grew: redraw soon (cheap; from any thread)."""
        self.redraws.poke()

    def redraw(self) -> None:
        """Show the newest calls now."""
        entries = self._recent(self._size)
        with self._lock:
            for row, entry in zip(self._rows, entries, strict=False):
                row.show(entry)
            shown = tuple(row.box for row in self._rows[: len(entries)]) or (self.empty,)
            if self.box.children != shown:
                self.box.children = shown

    def widgets(self) -> list[W.Widget]:
        """Every widget this list made (for closing)."""
        made: list[W.Widget] = [self.empty, self.box]
        for row in self._rows:
            made += [row.rerun, row.copy, row.label, row.box]
        return made + self._shared.widgets()

    def close(self) -> None:
        self.redraws.close()
