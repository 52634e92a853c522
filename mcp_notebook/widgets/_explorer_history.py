"""The explorer's list of the last calls: one HTML table and four controls, made once (issues #28, #29).

Why: the list used to be rebuilt from new widgets on every call (about 200 widget models for 20
rows, never closed), then it was 20 fixed rows of 4 models, made up front (80 models, which a saved
notebook stores, closed or not: issue #29). Now the rows are one escaped HTML table (newest first,
``class="mcpnb-history-entry"``, the whole arguments in each row's ``title``) and one Dropdown picks
the row that "re-run" and "copy as Python" act on (the newest after each new call): the list is a
fixed handful of widget models, a flood of calls creates none, and a redraw sends one HTML value
and the Dropdown's options. Redraws go through the notebook's one rate limiter
(:class:`~..notebook._coalesce.Coalescer`): at most ``1 / interval`` a second (4 by default), off
the caller's thread, always ending on the final state.

Each row is numbered as the Python API counts the calls, oldest first from 0 (the row numbered
``n`` is ``explorer.calls()[n]``, what ``explorer.rerun(n)`` runs; issue #38: the list counted from
the newest, so "1" was the newest call here and the first one there), and reads
``12:03:04  add(a=2, b=3)  ok  7 ms``: the call's arguments in one short line (JSON
values, so a newline or a quote in a string shows escaped; cut at :data:`ARGUMENTS_WIDTH`), the
whole arguments in the tooltip, the duration in the short human form of every picture
(:func:`~..display._durations.short_duration`); the line is :func:`~..display._calls.call_line`'s,
the one rule of every text form of a call.

A call an agent framework made through :mod:`mcp_notebook.agents` (the entry's ``via``) ends its
row with a small badge, ``via pydantic-ai`` (``class="mcpnb-via"``), and its picker label with the
same words; the notebook's own calls have neither (issue #39: a user watching an agent sees which
calls were the agent's, as they happen).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from ..display._calls import ARGUMENTS_WIDTH, arguments_line, call_line, via_of
from ..display._html import escape, short
from ..notebook._coalesce import Coalescer
from . import _ui as W
from ._buttons import set_enabled
from ._lean import lean
from ._result_view import html_widget

__all__ = ["ARGUMENTS_WIDTH", "HistoryRows", "arguments_line", "call_line", "via_badge"]

_Entry = dict[str, Any]


_RERUN_TIP = "load these arguments and call again"
_NO_CALLS = "<i>No calls yet.</i>"
_CELL = "text-align:left;white-space:pre;font-family:monospace"
_TABLE = "border-collapse:collapse"
_VIA = (
    "font-size:0.75em;border:1px solid #8250df;color:#8250df;border-radius:3px;padding:0 3px;"
    "margin-left:0.6em;white-space:nowrap"
)


def via_badge(entry: _Entry) -> str:
    """``via pydantic-ai`` as a small badge (``mcpnb-via``) for a call an agent framework made
    (``mcp_notebook.agents``), escaped; ``""`` for the notebook's own calls."""
    who = via_of(entry)
    if who is None:
        return ""
    tip = _attribute(f"called by a {who} agent through mcp_notebook.agents")
    return f'<span class="mcpnb-via" title="{tip}" style="{_VIA}">via {escape(who)}</span>'


def _table(entries: list[_Entry], numbers: list[int]) -> str:
    """The rows, newest first, numbered as the Dropdown numbers them; everything escaped."""
    rows = "".join(
        f'<tr class="mcpnb-history-entry" title="{_attribute(_tooltip(e))}">'
        f'<td style="color:#888;padding-right:0.6em">{n}</td>'
        f'<td style="{_CELL}">{escape(call_line(e, 160, via=False))}</td>{_via_cell(e)}</tr>'
        for n, e in zip(numbers, entries, strict=True)
    )
    return f'<table class="mcpnb-history-table" style="{_TABLE}">{rows}</table>' if rows else _NO_CALLS


def _via_cell(entry: _Entry) -> str:
    """An agent's row ends with its badge; the notebook's own rows have no such cell."""
    badge = via_badge(entry)
    return f'<td class="mcpnb-history-via">{badge}</td>' if badge else ""


def _attribute(text: str) -> str:
    """Escaped for an attribute, ``=`` too (no ``src=`` or ``onx=`` shape even inside the value)."""
    return str(escape(text)).replace("=", "&#61;")


def _tooltip(entry: _Entry) -> str:
    return short(json.dumps(entry.get("arguments"), default=str), 1000)


class HistoryRows:
    """``box`` lists the newest ``rows`` calls that ``recent(rows)`` returns (newest first), each
    numbered by its index among the ``count()`` calls (oldest first); ``pick`` chooses the one the
    ``rerun`` and ``copy`` buttons act on: the newest after each new call, else the user's pick."""

    def __init__(
        self,
        recent: Callable[[int], list[_Entry]],
        on_rerun: Callable[[_Entry], Any],
        on_copy: Callable[[_Entry], Any],
        *,
        count: Callable[[], int] | None = None,
        rows: int = 20,
        interval: float = 0.25,
    ) -> None:
        self._recent = recent
        self._count = count
        self._size = rows
        #: The entries shown, newest first (what the table's rows and the Dropdown's options are).
        self.entries: list[_Entry] = []
        self._lock = threading.RLock()  # the Dropdown calls back into selected() while redraw holds it
        self.table = html_widget(_NO_CALLS, "mcpnb-history-rows")
        self.pick = lean(W.Dropdown, {"width": "auto", "max_width": "60%"}, options=[], description="call")
        self.pick.add_class("mcpnb-history-pick")
        self.pick.observe(lambda _: self._enable(), names="value")
        self.rerun = lean(W.Button, description="re-run", icon="repeat", tooltip=_RERUN_TIP)
        self.rerun.add_class("mcpnb-rerun")
        self.rerun.on_click(lambda _: self._act(on_rerun))
        self.copy = lean(
            W.Button, description="copy as Python", icon="copy", tooltip="show this call as Python code"
        )
        self.copy.add_class("mcpnb-copy")
        self.copy.on_click(lambda _: self._act(on_copy))
        self.controls = lean(W.HBox, {"align_items": "center"}, children=[self.pick, self.rerun, self.copy])
        self.box = lean(W.VBox, children=[self.table])
        self.redraws = Coalescer(self.redraw, interval, what="the explorer's history")
        self._enable()

    def selected(self) -> _Entry | None:
        """The entry the buttons act on: the picked row, else the newest."""
        with self._lock:
            index = self.pick.index
            entries = self.entries
            if entries and isinstance(index, int) and 0 <= index < len(entries):
                return entries[index]
            return entries[0] if entries else None

    def choose(self, index: int) -> None:
        """Pick the ``index``-th row shown (0 is the newest)."""
        self.pick.index = index

    def _act(self, action: Callable[[_Entry], Any]) -> None:
        entry = self.selected()
        if entry is not None:
            action(entry)

    def _enable(self) -> None:
        entry = self.selected()
        recorded = entry is not None and isinstance(entry.get("arguments"), dict)
        why = "no call yet" if entry is None else "the arguments were not recorded"
        set_enabled(self.rerun, recorded, tip=_RERUN_TIP, why=why)

    def changed(self) -> None:
        """The history grew: redraw soon (cheap; from any thread)."""
        self.redraws.poke()

    def redraw(self) -> None:
        """Show the newest calls now (the picked call stays picked while it is shown)."""
        entries = list(self._recent(self._size))
        total = self._count() if self._count is not None else len(entries)
        total = max(total, len(entries))
        numbers = [total - 1 - n for n in range(len(entries))]  # newest first, counted oldest first
        with self._lock:
            if [id(e) for e in entries] == [id(e) for e in self.entries]:
                return
            newest = self.entries[0] if self.entries else None
            picked = self.entries[self.pick.index] if self.entries and self.pick.index is not None else None
            if entries and entries[0] is not newest:
                picked = entries[0]  # a new call: the buttons act on it, as the picker says
            self.entries = entries
            table = _table(entries, numbers)
            if self.table.value != table:
                self.table.value = table
            where = next((n for n, e in enumerate(entries) if e is picked), 0)
            with self.pick.hold_sync():
                labels = [f"{number}  {call_line(e, 80)}" for number, e in zip(numbers, entries, strict=True)]
                self.pick.options = [(label, n) for n, label in enumerate(labels)]
                self.pick.index = where if entries else None
            shown = (self.table, self.controls) if entries else (self.table,)
            if self.box.children != shown:
                self.box.children = shown
        self._enable()

    def widgets(self) -> list[W.Widget]:
        """Every widget this list made (for closing)."""
        return [self.table, self.pick, self.rerun, self.copy, self.controls, self.box]

    def close(self) -> None:
        self.redraws.close()
