"""The server's log messages and notifications, live (CSS class ``mcpnb-log``).

Entries come from ``session.model.log`` (``notifications/message``: level, logger, data) and
``session.model.notifications`` (everything else: method, params), merged by time, newest last,
at most ``max_entries``. The level Dropdown (``mcpnb-log-level``) hides log messages below a level
(RFC 5424 order, as MCP uses); the Checkbox (``mcpnb-log-notifications``) shows or hides the other
notifications. Every field is escaped; data is shown as text or JSON, never as markup.
"""

from __future__ import annotations

import datetime
import json
from typing import Any

import ipywidgets as W

from ._safe import escape, short

__all__ = ["LEVELS", "LogWidget", "log_widget"]

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


class LogWidget(W.VBox):
    """The log view; ``close()`` stops following the session."""

    def __init__(self, session: Any, *, max_entries: int = 200, level: str = "debug") -> None:
        self.session = session
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
        super().__init__(
            [W.HBox([self.level, self.show_notifications, self.clear_button]), self.table],
            layout=W.Layout(width="100%"),
        )
        self.add_class("mcpnb-log")
        self.level.observe(self._changed, names="value")
        self.show_notifications.observe(self._changed, names="value")
        self.clear_button.on_click(lambda _b: self.clear())
        session.model.observe(self._changed, names=["log", "notifications"])
        self.refresh()

    def _changed(self, change: Any) -> None:
        self.refresh()

    def clear(self) -> None:
        """Hide what was received so far (the model keeps it)."""
        entries = self.entries(filtered=False)
        self._since = max((float(e.get("time") or 0) for e in entries), default=self._since)
        self.refresh()

    def entries(self, *, filtered: bool = True) -> list[dict[str, Any]]:
        """The entries shown, oldest first: ``{time, kind, source, data}``.

        ``kind`` is a log level or "notification".
        """
        model = self.session.model
        merged: list[dict[str, Any]] = []
        minimum = _rank(self.level.value)
        for entry in list(model.log):
            if filtered and _rank(entry.get("level")) < minimum:
                continue
            merged.append(
                {
                    "time": entry.get("time"),
                    "kind": str(entry.get("level") or "info"),
                    "source": entry.get("logger") or "",
                    "data": entry.get("data"),
                }
            )
        if not filtered or self.show_notifications.value:
            for entry in list(model.notifications):
                merged.append(
                    {
                        "time": entry.get("time"),
                        "kind": "notification",
                        "source": entry.get("method") or "",
                        "data": entry.get("params"),
                    }
                )
        merged = [e for e in merged if float(e.get("time") or 0) > self._since]
        merged.sort(key=lambda e: float(e.get("time") or 0))
        return merged[-self.max_entries :]

    def refresh(self) -> None:
        entries = self.entries()
        if not entries:
            self.table.value = "<i>Nothing yet.</i>"
            return
        rows = []
        for entry in entries:
            kind = entry["kind"]
            colour = _COLOURS.get(kind)
            style = f' style="color:{colour}"' if colour else ""
            rows.append(
                f'<tr class="mcpnb-log-entry"><td>{_clock(entry["time"])}</td>'
                f"<td{style}>{escape(short(kind, 40))}</td>"
                f"<td><code>{escape(short(str(entry['source']), 200))}</code></td>"
                f'<td><pre style="white-space:pre-wrap;margin:0">{escape(_text(entry["data"]))}</pre>'
                "</td></tr>"
            )
        self.table.value = (
            '<table style="width:100%"><thead><tr><th>time</th><th>level</th><th>source</th>'
            f"<th>data</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        )

    def close(self) -> None:
        if getattr(self, "_unfollowed", False):
            super().close()
            return
        self._unfollowed = True
        self.session.model.unobserve(self._changed, names=["log", "notifications"])
        super().close()


def log_widget(session: Any, **options: Any) -> LogWidget:
    """The live log view for ``session`` (CSS class ``mcpnb-log``)."""
    return LogWidget(session, **options)
