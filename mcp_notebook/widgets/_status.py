"""A live status panel for one session (CSS class ``mcpnb-status``).

It shows the connection's state as a coloured badge (``mcpnb-status-badge`` plus
``mcpnb-state-<state>``), the protocol era and version, the server's name, title and version, the
reconnect count and last error, and the requests in flight. It observes ``session.model``, which the
engine thread writes, so it updates while cells run; every server string is escaped. A change
only pokes a coalescer: the panel redraws on the UI thread (``notebook/_coalesce.py``), at most
ten times a second and always ending on the final state, never on the thread reading the
connection.
"""

from __future__ import annotations

from typing import Any

from ..display._html import STATE_COLOURS, escape, short, state_badge
from ..notebook._coalesce import Coalescer
from . import _ui as W
from ._fallback import Fallback, status_line
from ._shown import HTML

__all__ = ["StatusWidget", "state_class", "status_widget"]

#: The colour of each connection state's badge (anything else is grey).
COLOURS = STATE_COLOURS
_WATCHED = ["status", "era", "protocol_version", "server_info", "reconnects", "last_error", "in_flight"]


def state_class(state: str) -> str:
    """The badge's CSS class for ``state``: ``mcpnb-state-<state>``, or ``mcpnb-state-other``."""
    return f"mcpnb-state-{state if state in COLOURS else 'other'}"


class StatusWidget(Fallback, W.VBox):
    """The status panel; ``close()`` stops following the session."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.badge = HTML()
        self.badge.add_class("mcpnb-status-badge")
        self.details = HTML()
        self.details.add_class("mcpnb-status-details")
        super().__init__([self.badge, self.details], layout=W.Layout(width="100%"))
        self.add_class("mcpnb-status")
        self._state_class = ""
        self._redraw = Coalescer(self.refresh, 0.1, what="a status panel")
        session.model.observe(self._changed, names=_WATCHED)
        self.refresh()

    def _changed(self, change: Any) -> None:
        self._redraw.poke()

    def refresh(self) -> None:
        model = self.session.model
        state = str(model.status)
        css = state_class(state)
        if css != self._state_class:
            if self._state_class:
                self.badge.remove_class(self._state_class)
            self.badge.add_class(css)
            self._state_class = css
        name = escape(short(getattr(self.session, "name", ""), 200))
        self.badge.value = f'<span style="font-weight:bold">{name}</span> {state_badge(state)}'
        info = model.server_info or {}
        server = " ".join(
            str(part)
            for part in (info.get("name"), info.get("version"))
            if isinstance(part, str | int | float)
        )
        rows: list[tuple[str, str]] = [
            ("server", escape(short(server or "?", 300))),
        ]
        title = info.get("title")
        if isinstance(title, str) and title:
            rows.append(("title", escape(short(title, 300))))
        rows.append(("protocol", escape(f"{model.era or '?'} {model.protocol_version or ''}".strip())))
        rows.append(("in flight", f'<span class="mcpnb-in-flight">{int(model.in_flight)}</span>'))
        rows.append(("reconnects", f'<span class="mcpnb-reconnects">{int(model.reconnects)}</span>'))
        if model.last_error:
            rows.append(
                (
                    "last error",
                    f'<span class="mcpnb-last-error" style="color:#b00020">'
                    f"{escape(short(model.last_error, 1000))}</span>",
                )
            )
        body = "".join(
            f'<tr><th style="text-align:left;padding-right:1em">{label}</th>'
            f'<td style="text-align:left">{value}</td></tr>'
            for label, value in rows
        )
        self.details.value = f"<table>{body}</table>"

    def summary(self) -> str:
        return f"<MCP status: {status_line(self.session)}>"

    def close(self) -> None:
        if getattr(self, "_unfollowed", False):
            super().close()
            return
        self._unfollowed = True
        self.session.model.unobserve(self._changed, names=_WATCHED)
        self._redraw.close()
        super().close()


def status_widget(session: Any) -> StatusWidget:
    """A live status panel for ``session`` (CSS class ``mcpnb-status``)."""
    return StatusWidget(session)
