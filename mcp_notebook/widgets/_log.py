"""The server's log messages and notifications, live (CSS class ``mcpnb-log``).

Entries come from ``session.model.log`` (``notifications/message``: level, logger, data) and
``session.model.notifications`` (everything else: method, params), merged by time, newest last,
at most ``max_entries``. The level Dropdown (``mcpnb-log-level``) hides log messages below a level
(RFC 5424 order, as MCP uses); the Checkbox (``mcpnb-log-notifications``) shows or hides the other
notifications. Every field is escaped; data is shown as text or JSON, never as markup.

The view itself (:class:`LogView`) reads its entries through a function and follows the traits of
a model that change them, so a group's merged log (``_group.py``) is the same view with one more
column (the server) and a filter on it.

A flood of messages never redraws the view once per message: a change of the model only notes
the new entries (``change.added``) and pokes a coalescer (``notebook/_coalesce.py``), which
redraws at most :data:`REDRAWS_PER_SECOND` times a second on the UI thread, always ending on the
final state. A redraw sends only what changed: the rows live in a fixed ring of HTML widgets
(:class:`_Rows`, chunks of ``max_entries / 16`` rows); new rows fill the newest chunk, then the
next free one, and the oldest chunks are dropped as the view fills. So a redraw sends its new rows
and at most one partly filled chunk; more new rows than the view holds are drawn as one chunk (one
message), split into regular chunks once when the first of its rows must go. The rows in the page never exceed
``max_entries``, and no widget model is made after the view. The controls (level, filter,
Clear) redraw everything at once.
"""

from __future__ import annotations

import datetime
import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from ..display._html import escape, short, state_badge
from ..notebook._coalesce import Coalescer
from ..protocol._cut import already_cut, cut_text, text_form
from . import _ui as W
from ._fallback import Fallback
from ._shown import HTML, shown

__all__ = ["LEVELS", "REDRAWS_PER_SECOND", "LogView", "LogWidget", "log_entry", "log_widget"]

#: The most of one entry's data a row shows, in UTF-8 bytes (the model keeps up to 16 KiB of it).
SHOWN_BYTES = 2000
#: How often at most a log view redraws while its model changes.
REDRAWS_PER_SECOND = 4.0

#: MCP's log levels, least severe first (RFC 5424).
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_COLOURS = {
    "warning": "#b08800",
    "error": "#b00020",
    "critical": "#b00020",
    "alert": "#b00020",
    "emergency": "#b00020",
}


def _clock(timestamp: Any) -> str:
    try:
        return datetime.datetime.fromtimestamp(float(timestamp)).strftime("%H:%M:%S.%f")[:-3]
    except (TypeError, ValueError, OverflowError, OSError):
        return "?"


def _text(value: Any, cut: int = 0, limit: int = SHOWN_BYTES) -> str:
    """A row's data as shown: its text form within ``limit`` bytes, ending with a note of the bytes
    left out, those the model already cut (``cut``) included."""
    text = text_form(value)
    if cut and isinstance(value, str):
        text, cut = already_cut(value)
    return cut_text(text, limit, more=cut)[0]


def _breakable(name: str) -> str:
    """``name`` escaped, with a line-break opportunity after each "/" and "." (``<wbr>``): a method
    (``notifications/tools/list_changed``) or a logger (``app.db.pool``) in its narrow column
    breaks between its parts, not in the middle of one (issue #38)."""
    return str(escape(name)).replace("/", "/<wbr>").replace(".", ".<wbr>")


def _rank(level: Any) -> int:
    return LEVELS.index(level) if level in LEVELS else 0


def log_entry(entry: Any, *, notification: bool) -> dict[str, Any]:
    """A model's log message or notification as a view's row: ``{time, kind, source, data}``.

    ``kind`` is the level of a log message ("info" if it has none) or "notification"; any other
    key of the entry (a group's ``server``) is kept.
    """
    entry = entry if isinstance(entry, dict) else {}
    if notification:
        params = entry.get("params")
        if entry.get("cut") and isinstance(params, dict) and isinstance(params.get("cut"), str):
            params = params["cut"]  # params the model cut: their text, with its note
        row = {
            "time": entry.get("time"),
            "kind": "notification",
            "source": entry.get("method") or "",
            "data": params,
        }
    else:
        row = {
            "time": entry.get("time"),
            "kind": str(entry.get("level") or "info"),
            "source": entry.get("logger") or "",
            "data": entry.get("data"),
        }
    extra = {k: v for k, v in entry.items() if k not in _ENTRY_KEYS}
    return {**extra, **row}


_ENTRY_KEYS = frozenset({"time", "kind", "level", "logger", "data", "method", "params", "source"})
_ALL = "all"
#: The chunks a view's rows are split in (each an HTML widget): a redraw re-sends at most one
#: partly filled chunk besides its new rows.
_CHUNKS = 16
_TABLE = '<table style="width:100%;table-layout:fixed">'
# The time ("12:03:04.567") and the kind ("notification", the longest) each fit their column on one
# line: widths in the font's digit width (ch) plus the cells' padding, not in em (issue #38: 7.5em
# and 6em broke both mid-word, "12:03:04.56 / 7" and "notificatio / n").
_CLOCK_WIDTH = "calc(12ch + 16px)"
_KIND_WIDTH = "calc(12ch + 16px)"
_EMPTY = "<i>Nothing yet.</i>"


class _Chunk:
    """One HTML widget of the ring and the rows it shows."""

    def __init__(self) -> None:
        self.widget = HTML()
        self.rows: list[str] = []
        #: how many rows the widget's value holds (what the page shows of it)
        self.drawn = 0


class _Rows(W.VBox):
    """The rows of a log view, newest last, at most ``limit`` of them, in a fixed ring of chunks.

    New rows fill the newest chunk up to ``size`` rows, then the next free chunk; the oldest
    chunks are dropped (or trimmed by whole ``size`` steps) to keep ``limit`` rows at most. More
    new rows than the view holds (a flood) are drawn as one chunk: one message, as one table was.
    ``value`` is the HTML of everything shown (the heading and every chunk), as one table would be.
    """

    def __init__(self, limit: int, head: str, columns: str) -> None:
        self.limit = max(1, limit)
        self.size = max(1, -(-self.limit // _CHUNKS))  # rows per chunk
        self._ring = [_Chunk() for _ in range(-(-self.limit // self.size) + 2)]
        self._shown: deque[_Chunk] = deque()
        self._columns = columns
        self.head = HTML(f"{_TABLE}{columns}<thead>{head}</thead></table>")
        self.empty = HTML(_EMPTY)
        super().__init__([self.empty], layout=W.Layout(width="100%"))

    @property
    def value(self) -> str:
        box: W.Box = self
        return "".join(child.value for child in box.children if isinstance(child, W.HTML))

    def widgets(self) -> list[W.Widget]:
        return [self.head, self.empty, *(chunk.widget for chunk in self._ring)]

    def reset(self, rows: list[str]) -> None:
        """Show ``rows`` (newest last) and nothing else, as one chunk."""
        rows = rows[-self.limit :]
        first = self._shown[0] if self._shown else self._ring[0]
        for chunk in self._shown:
            chunk.rows = []
        self._shown.clear()
        if rows:
            first.rows = rows
            self._shown.append(first)
        self._draw({first})

    def append(self, rows: list[str]) -> None:
        """Show ``rows`` after the others, dropping the oldest as the view fills."""
        if len(rows) >= self.limit:
            self.reset(rows)
            return
        dirty: set[_Chunk] = set()
        newest = self._shown[-1] if self._shown else None
        if newest is not None and len(newest.rows) < self.size:
            room = self.size - len(newest.rows)
            newest.rows += rows[:room]
            rows = rows[room:]
            dirty.add(newest)
        self._trim(len(rows), dirty)
        while rows:
            chunk = next(c for c in self._ring if c not in self._shown)
            chunk.rows, rows = rows[: self.size], rows[self.size :]
            self._shown.append(chunk)
            dirty.add(chunk)
        self._draw(dirty)

    def _trim(self, coming: int, dirty: set[_Chunk]) -> None:
        """Make room for ``coming`` rows: drop whole old chunks, or trim the oldest by whole chunks."""
        excess = sum(len(c.rows) for c in self._shown) + coming - self.limit
        chunks_needed = -(-coming // self.size)
        while self._shown and (excess > 0 or len(self._shown) + chunks_needed > len(self._ring)):
            oldest = self._shown[0]
            cut = max(self.size, -(-max(excess, 0) // self.size) * self.size)
            if cut >= len(oldest.rows):
                excess -= len(oldest.rows)
                oldest.rows = []
                self._shown.popleft()
                dirty.discard(oldest)
            else:
                excess -= cut
                self._split(self._shown.popleft(), oldest.rows[cut:], dirty)

    def _split(self, oldest: _Chunk, rest: list[str], dirty: set[_Chunk]) -> None:
        """Put back the rows left of the oldest chunk as regular chunks (once, after a flood's
        one big chunk: trimming it again and again would re-send it whole each time)."""
        free = [c for c in self._ring if c not in self._shown and c is not oldest]
        pieces = [rest[i : i + self.size] for i in range(0, len(rest), self.size)]
        if len(pieces) - 1 > len(free):
            pieces = [rest]
        chunks = [oldest, *free[: len(pieces) - 1]]
        for chunk, piece in zip(reversed(chunks), reversed(pieces), strict=True):
            chunk.rows = piece
            self._shown.appendleft(chunk)
            dirty.add(chunk)

    def _draw(self, dirty: set[_Chunk]) -> None:
        """Send the changes in an order that never shows more than ``limit`` rows, even between two
        messages: the chunks leaving the view go first, then the chunks that shrink, then those
        that grow, then the final order. (One order, values first, let a page hold 212 rows of
        200 for a moment: the newest chunk grown before the oldest one left.)"""
        shown: tuple[W.Widget, ...] = (
            (self.head, *(chunk.widget for chunk in self._shown)) if self._shown else (self.empty,)
        )
        box: W.Box = self
        if self._shown and any(w not in shown for w in box.children):
            box.children = tuple(w for w in box.children if w in shown)
        for chunk in sorted((c for c in dirty if c in self._shown), key=lambda c: len(c.rows) - c.drawn):
            chunk.widget.value = f"{_TABLE}{self._columns}<tbody>{''.join(chunk.rows)}</tbody></table>"
            chunk.drawn = len(chunk.rows)
        if box.children != shown:
            box.children = shown


class LogView(Fallback, W.VBox):
    """A live log view over ``read()`` (rows as :func:`log_entry` makes them), refreshed when the
    traits ``names`` of ``model`` change; ``close()`` stops following the model.

    ``column`` names one more key of the rows to show (after the time) and to filter on: a
    Dropdown (``mcpnb-log-column``) of "all" and ``choices()`` (by default the values seen).
    """

    def __init__(
        self,
        model: Any,
        names: Sequence[str],
        read: Callable[[], list[dict[str, Any]]],
        *,
        row: Callable[[str, Any], dict[str, Any]],
        column: str | None = None,
        choices: Callable[[], Sequence[str]] | None = None,
        max_entries: int = 200,
        level: str = "debug",
    ) -> None:
        self._model = model
        self._names = list(names)
        self._read = read
        self._row = row
        self.column = column
        self._choices = choices
        self.max_entries = max_entries
        self.level = W.Dropdown(options=list(LEVELS), value=level, description="Level ≥")
        self.level.add_class("mcpnb-log-level")
        self.show_notifications = W.Checkbox(value=True, description="notifications", indent=False)
        self.show_notifications.add_class("mcpnb-log-notifications")
        self.clear_button = W.Button(description="Clear", icon="trash")
        self.clear_button.add_class("mcpnb-log-clear")
        extra_head = f"<th>{escape(column)}</th>" if column is not None else ""
        extra_col = '<col style="width:9em">' if column is not None else ""
        self.table = _Rows(
            max_entries,
            f"<tr><th>time</th>{extra_head}<th>level</th><th>source</th><th>data</th></tr>",
            f'<colgroup><col style="width:{_CLOCK_WIDTH}">{extra_col}<col style="width:{_KIND_WIDTH}">'
            '<col style="width:12em"><col></colgroup>',
        )
        self.table.add_class("mcpnb-log-entries")
        # What the model added since the last redraw (trait name, entry); None: redraw it all.
        self._added: deque[tuple[str, Any]] | None = None
        self._lock = threading.Lock()
        self._since = 0.0
        controls: list[W.Widget] = [self.level]
        self.column_filter: W.Dropdown | None = None
        if column is not None:
            # Choices are server strings: a Dropdown shows them as text, never as markup.
            self.column_filter = W.Dropdown(options=[_ALL], value=_ALL, description=short(column, 40))
            self.column_filter.add_class("mcpnb-log-column")
            self.column_filter.observe(self._changed, names="value")
            controls.append(self.column_filter)
        controls += [self.show_notifications, self.clear_button]
        super().__init__([W.HBox(controls), self.table], layout=W.Layout(width="100%"))
        self.add_class("mcpnb-log")
        self.level.observe(self._changed, names="value")
        self.show_notifications.observe(self._changed, names="value")
        self.clear_button.on_click(lambda _b: self.clear())
        self._redraw = Coalescer(self._redraw_new, 1.0 / REDRAWS_PER_SECOND, what="a log view")
        self._paused = False
        model.observe(self._model_changed, names=self._names)
        self.refresh()

    def _changed(self, change: Any) -> None:
        self.refresh()

    def _model_changed(self, change: Any) -> None:
        added = change.get("added")
        with self._lock:
            if (
                self._paused
                or added is None
                or (self._added is not None and len(self._added) + len(added) > self.max_entries)
            ):
                self._added = None  # too much, or not said what: the next redraw reads it all
            elif self._added is not None:
                self._added.extend((change["name"], entry) for entry in added)
        if not self._paused:
            self._redraw.poke()

    def pause(self, paused: bool) -> None:
        """Stop redrawing for the model's changes while nobody can see the view (a dashboard's
        hidden tab), or start again (redrawing at once: the model kept everything)."""
        self._paused = paused
        if not paused:
            with self._lock:
                self._added = None
            self._redraw.poke()

    def _wanted(self, entry: dict[str, Any], minimum: int, wanted: str) -> bool:
        if entry["kind"] == "notification":
            if not self.show_notifications.value:
                return False
        elif _rank(entry["kind"]) < minimum:
            return False
        return wanted == _ALL or str(entry.get(self.column or "")) == wanted

    def clear(self) -> None:
        """Hide what was received so far (the model keeps it)."""
        entries = self.entries(filtered=False)
        self._since = max((float(e.get("time") or 0) for e in entries), default=self._since)
        self.refresh()

    def entries(self, *, filtered: bool = True) -> list[dict[str, Any]]:
        """The entries shown, oldest first: ``{time, kind, source, data}`` (and the column's key).

        ``kind`` is a log level or "notification".
        """
        minimum = _rank(self.level.value)
        wanted = self.column_filter.value if self.column_filter is not None else _ALL
        return self._kept(self._read(), filtered=filtered, minimum=minimum, wanted=wanted)

    def _kept(
        self, rows: list[dict[str, Any]], *, filtered: bool, minimum: int, wanted: str
    ) -> list[dict[str, Any]]:
        merged = [
            e
            for e in rows
            if (not filtered or self._wanted(e, minimum, wanted)) and float(e.get("time") or 0) > self._since
        ]
        merged.sort(key=lambda e: float(e.get("time") or 0))
        return merged[-self.max_entries :]

    def _update_choices(self) -> None:
        if self.column_filter is None:
            return
        if self._choices is not None:
            values = [str(v) for v in self._choices()]
        else:
            values = []
            for entry in self._read():
                value = str(entry.get(self.column or "", ""))
                if value not in values:
                    values.append(value)
        options = [_ALL, *(v for v in values if v != _ALL)]
        # a server's value with its controls made visible (plain values stay plain options)
        labels = [shown(v) for v in options]
        labelled: list[Any] = options if labels == options else list(zip(labels, options, strict=True))
        if list(self.column_filter.options) != labelled:
            current = self.column_filter.value
            self.column_filter.options = labelled
            self.column_filter.value = current if current in options else _ALL

    def refresh(self) -> None:
        """Redraw every row now (the controls changed, or the view was behind)."""
        with self._lock:
            self._added = deque()
            self._update_choices()
            self.table.reset([self._html(entry) for entry in self.entries()])

    def _redraw_new(self) -> None:
        """Draw what the model added since the last redraw (on the UI thread, coalesced).

        A redraw poked before :meth:`pause` may come due after it: a hidden view draws nothing
        then either (and reads everything when shown again)."""
        with self._lock:
            if self._paused:
                self._added = None
                return
            added, self._added = self._added, deque()
            self._update_choices()
            if added is None:
                self.table.reset([self._html(entry) for entry in self.entries()])
                return
            if not added:
                return
            minimum = _rank(self.level.value)
            wanted = self.column_filter.value if self.column_filter is not None else _ALL
            rows = [self._row(name, entry) for name, entry in added]
            new = self._kept(rows, filtered=True, minimum=minimum, wanted=wanted)
            if new:
                self.table.append([self._html(entry) for entry in new])

    def _html(self, entry: dict[str, Any]) -> str:
        kind = entry["kind"]
        colour = _COLOURS.get(kind)
        style = f' style="color:{colour}"' if colour else ""
        extra = ""
        if self.column is not None:
            value = escape(short(str(entry.get(self.column, "")), 200))
            extra = f'<td class="mcpnb-log-{escape(self.column)}"><b>{value}</b></td>'
        data = escape(_text(entry["data"], entry.get("cut", 0)))
        return (
            f'<tr class="mcpnb-log-entry"><td>{_clock(entry["time"])}</td>{extra}'
            f"<td{style}>{escape(short(kind, 40))}</td>"
            f"<td><code>{_breakable(short(str(entry['source']), 200))}</code></td>"
            f'<td><pre style="white-space:pre-wrap;margin:0">{data}</pre>'
            "</td></tr>"
        )

    def summary(self) -> str:
        """The count shown, then the last three entries, a line each."""
        entries = self.entries()
        name = getattr(getattr(self, "session", None), "name", None)
        where = f"{short(name, 80)}, " if name else ""
        lines = [f"<MCP log: {where}{len(entries)} {'entry' if len(entries) == 1 else 'entries'}>"]
        for entry in entries[-3:]:
            column = f" {short(entry.get(self.column, ''), 40)}" if self.column is not None else ""
            text = " ".join(_text(entry["data"], entry.get("cut", 0), limit=200).split())
            source = short(entry["source"], 60)
            lines.append(f"  {_clock(entry['time'])}{column} {entry['kind']} {source}: {text}")
        return "\n".join(lines)

    def close(self) -> None:
        if getattr(self, "_unfollowed", False):
            super().close()
            return
        self._unfollowed = True
        self._model.unobserve(self._model_changed, names=self._names)
        self._redraw.close()
        for widget in self.table.widgets():
            widget.close()
        super().close()


class LogWidget(LogView):
    """The log view of one session (``session.model.log`` and ``.notifications``)."""

    def __init__(self, session: Any, *, max_entries: int = 200, level: str = "debug") -> None:
        self.session = session
        model = session.model

        def read() -> list[dict[str, Any]]:
            return [log_entry(e, notification=False) for e in list(model.log)] + [
                log_entry(e, notification=True) for e in list(model.notifications)
            ]

        def row(name: str, entry: Any) -> dict[str, Any]:
            return log_entry(entry, notification=name == "notifications")

        super().__init__(model, ["log", "notifications"], read, row=row, max_entries=max_entries, level=level)
        # When the session closes, the entries stay and a "closed" badge says why no more come
        # (issue #29: a panel keeps its last picture).
        self.closed_badge = HTML("")
        self.closed_badge.add_class("mcpnb-log-closed")
        controls = self.children[0]
        controls.children = (*controls.children, self.closed_badge)
        model.observe(self._status_changed, names="status")
        self._status_changed(None)

    def _session_closed(self) -> bool:
        return getattr(self.session.model, "status", "") == "closed"

    def _status_changed(self, change: Any) -> None:
        value = str(state_badge("closed")) if self._session_closed() else ""
        if self.closed_badge.value != value:
            self.closed_badge.value = value

    def summary(self) -> str:
        line = super().summary()
        if self._session_closed():
            line = line.replace("<MCP log: ", "<MCP log: closed, ", 1)
        return line

    def close(self) -> None:
        if not getattr(self, "_unfollowed", False):
            self.session.model.unobserve(self._status_changed, names="status")
            self.closed_badge.close()
        super().close()


def log_widget(session: Any, **options: Any) -> LogWidget:
    """The live log view for ``session`` (CSS class ``mcpnb-log``)."""
    return LogWidget(session, **options)
