"""The session's card, live (CSS class ``mcpnb-card``): what ``session`` shows as a cell's value.

Why: the card (status, server, protocol, tools, resources, prompts, calls) was the session's
``_repr_html_``, a picture taken when the cell ran, so after the notebook's calls it still said
"calls 0" (issue #38). Where a front end draws widgets, the card is this panel: the same HTML,
drawn again when the model's traits that it shows change, through a coalescer (at most
:data:`REDRAWS_PER_SECOND` a second, on the UI thread, always ending on the final state), so a
loop of calls costs the connection nothing. The picture stays the ``text/html`` beside it.
"""

from __future__ import annotations

from typing import Any

from ..notebook._coalesce import Coalescer
from . import _ui as W
from ._fallback import Fallback, status_line
from ._shown import HTML

__all__ = ["REDRAWS_PER_SECOND", "SessionCard", "session_card"]

#: How often at most the card redraws while its session changes.
REDRAWS_PER_SECOND = 4.0
#: The model's traits the card shows (``history``: its calls).
_WATCHED = [
    "status",
    "era",
    "protocol_version",
    "server_info",
    "tools",
    "resources",
    "prompts",
    "history",
    "last_error",
]


class SessionCard(Fallback, W.VBox):
    """The card of ``session``, following its model; ``close()`` stops following it."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.card = HTML()
        self.card.add_class("mcpnb-card-body")
        super().__init__([self.card], layout=W.Layout(width="100%"))
        self.add_class("mcpnb-card")
        self._redraw = Coalescer(self.refresh, 1.0 / REDRAWS_PER_SECOND, what="a session card")
        session.model.observe(self._changed, names=_WATCHED)
        self.refresh()

    def _changed(self, change: Any) -> None:
        self._redraw.poke()

    def refresh(self) -> None:
        """Draw the card from the model now (every server string escaped by the session's card)."""
        value = str(self.session._repr_html_())
        if self.card.value != value:
            self.card.value = value

    def summary(self) -> str:
        return f"<MCP session: {status_line(self.session)}>"

    def snapshot_html(self) -> str:
        return str(self.session._repr_html_())

    def close(self) -> None:
        if getattr(self, "_unfollowed", False):
            super().close()
            return
        self._unfollowed = True
        self.session.model.unobserve(self._changed, names=_WATCHED)
        self._redraw.close()
        super().close()


def session_card(session: Any) -> SessionCard:
    """The live card of ``session`` (CSS class ``mcpnb-card``)."""
    return SessionCard(session)
