"""The server's log messages and notifications, live (CSS class ``mcpnb-log``).

Entries come from ``session.model.log`` (``notifications/message``: level, logger, data) and
``session.model.notifications`` (everything else: method, params), merged by time, newest last,
at most ``max_entries``. The level Dropdown (``mcpnb-log-level``) hides log messages below a level
(RFC 5424 order, as MCP uses); the Checkbox (``mcpnb-log-notifications``) shows or hides the other
notifications. Every field is escaped; data is shown as text or JSON, never as markup.

The view itself (:class:`LogView`) reads its entries through a function and follows the traits of
a model that change them, so a group's merged log (``_group.py``) is the same view with one more
column (the server) and a filter on it.

A flood of messages never redraws the view once per message: a change of the model only pokes a
coalescer (``notebook/_coalesce.py``), which redraws at most :data:`REDRAWS_PER_SECOND` times a
second on the UI thread, always ending on the final state. The controls (level, filter, Clear)
redraw at once.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Sequence
from typing import Any

import ipywidgets as W

from ..display._html import escape, short
from ..notebook._coalesce import Coalescer
from ._fallback import Fallback

__all__ = ["LEVELS", "REDRAWS_PER_SECOND", "LogView", "LogWidget", "log_entry", "log_widget"]

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


def _text(value: Any, limit: int = 2000) -> str:
    if isinstance(value, str):
        return short(value, limit)
    try:
        return short(json.dumps(value, ensure_ascii=False, default=str), limit)
    except (TypeError, ValueError):
        return short(repr(value), limit)


def _rank(level: Any) -> int:
    return LEVELS.index(level) if level in LEVELS else 0


def log_entry(entry: Any, *, notification: bool) -> dict[str, Any]:
    """A model's log message or notification as a view's row: ``{time, kind, source, data}``.

    ``kind`` is the level of a log message ("info" if it has none) or "notification"; any other
    key of the entry (a group's ``server``) is kept.
    """
    entry = entry if isinstance(entry, dict) else {}
    if notification:
        row = {
            "time": entry.get("time"),
            "kind": "notification",
            "source": entry.get("method") or "",
            "data": entry.get("params"),
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
        column: str | None = None,
        choices: Callable[[], Sequence[str]] | None = None,
        max_entries: int = 200,
        level: str = "debug",
    ) -> None:
        self._model = model
        self._names = list(names)
        self._read = read
        self.column = column
        self._choices = choices
        self.max_entries = max_entries
        self.level = W.Dropdown(options=list(LEVELS), value=level, description="Level ≥")
        self.level.add_class("mcpnb-log-level")
        self.show_notifications = W.Checkbox(value=True, description="notifications", indent=False)
        self.show_notifications.add_class("mcpnb-log-notifications")
        self.clear_button = W.Button(description="Clear", icon="trash")
        self.clear_button.add_class("mcpnb-log-clear")
        self.table = W.HTML()
        self.table.add_class("mcpnb-log-entries")
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
        self._redraw = Coalescer(self.refresh, 1.0 / REDRAWS_PER_SECOND, what="a log view")
        self._paused = False
        model.observe(self._model_changed, names=self._names)
        self.refresh()

    def _changed(self, change: Any) -> None:
        self.refresh()

    def _model_changed(self, change: Any) -> None:
        if not self._paused:
            self._redraw.poke()

    def pause(self, paused: bool) -> None:
        """Stop redrawing for the model's changes while nobody can see the view (a dashboard's
        hidden tab), or start again (redrawing at once: the model kept everything)."""
        self._paused = paused
        if not paused:
            self._redraw.poke()

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
        merged = []
        for entry in self._read():
            notification = entry["kind"] == "notification"
            if filtered and notification and not self.show_notifications.value:
                continue
            if filtered and not notification and _rank(entry["kind"]) < minimum:
                continue
            if filtered and wanted != _ALL and str(entry.get(self.column or "")) != wanted:
                continue
            merged.append(entry)
        merged = [e for e in merged if float(e.get("time") or 0) > self._since]
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
        if list(self.column_filter.options) != options:
            current = self.column_filter.value
            self.column_filter.options = options
            self.column_filter.value = current if current in options else _ALL

    def refresh(self) -> None:
        self._update_choices()
        entries = self.entries()
        if not entries:
            self.table.value = "<i>Nothing yet.</i>"
            return
        rows = []
        for entry in entries:
            kind = entry["kind"]
            colour = _COLOURS.get(kind)
            style = f' style="color:{colour}"' if colour else ""
            extra = ""
            if self.column is not None:
                value = escape(short(str(entry.get(self.column, "")), 200))
                extra = f'<td class="mcpnb-log-{escape(self.column)}"><b>{value}</b></td>'
            rows.append(
                f'<tr class="mcpnb-log-entry"><td>{_clock(entry["time"])}</td>{extra}'
                f"<td{style}>{escape(short(kind, 40))}</td>"
                f"<td><code>{escape(short(str(entry['source']), 200))}</code></td>"
                f'<td><pre style="white-space:pre-wrap;margin:0">{escape(_text(entry["data"]))}</pre>'
                "</td></tr>"
            )
        extra_head = f"<th>{escape(self.column)}</th>" if self.column is not None else ""
        self.table.value = (
            f'<table style="width:100%"><thead><tr><th>time</th>{extra_head}<th>level</th><th>source</th>'
            f"<th>data</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        )

    def summary(self) -> str:
        """The count shown, then the last three entries, a line each."""
        entries = self.entries()
        name = getattr(getattr(self, "session", None), "name", None)
        where = f"{short(name, 80)}, " if name else ""
        lines = [f"<MCP log: {where}{len(entries)} {'entry' if len(entries) == 1 else 'entries'}>"]
        for entry in entries[-3:]:
            column = f" {short(entry.get(self.column, ''), 40)}" if self.column is not None else ""
            text = " ".join(_text(entry["data"], 200).split())
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

        super().__init__(model, ["log", "notifications"], read, max_entries=max_entries, level=level)


def log_widget(session: Any, **options: Any) -> LogWidget:
    """The live log view for ``session`` (CSS class ``mcpnb-log``)."""
    return LogWidget(session, **options)
