"""One display for a session (CSS class ``mcpnb-dashboard``): the status panel on top, then a Tab
with the tool explorer, the tasks, the resources and the log.

Each part is the widget its own factory makes, following the session by itself; the dashboard only
lays them out and closes them together, and pauses the log view while its tab is hidden (a chatty
server then costs that view nothing; it redraws when its tab is chosen).
"""

from __future__ import annotations

from typing import Any

from . import _ui as W
from ._explorer import explorer
from ._fallback import Fallback
from ._log import log_widget
from ._resources import resources_widget
from ._status import status_widget
from ._tasks_panel import tasks_widget

__all__ = ["Dashboard", "dashboard"]

TITLES = ("Tools", "Tasks", "Resources", "Log")
_LOG_TAB = TITLES.index("Log")


class Dashboard(Fallback, W.VBox):
    """``status``, ``explorer``, ``tasks``, ``resources``, ``log_view``: the parts; ``tab`` holds the
    last four."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.status = status_widget(session)
        self.explorer = explorer(session)
        self.tasks = tasks_widget(session)
        self.resources = resources_widget(session)
        self.log_view = log_widget(session)  # (``log`` is a traitlets Logger)
        self.tab = W.Tab(
            children=[self.explorer, self.tasks, self.resources, self.log_view],
            titles=TITLES,
            layout=W.Layout(width="100%"),
        )
        self.tab.add_class("mcpnb-dashboard-tabs")
        self.tab.observe(self._tab_chosen, names="selected_index")
        self.log_view.pause(self.tab.selected_index != _LOG_TAB)
        super().__init__([self.status, self.tab], layout=W.Layout(width="100%"))
        self.add_class("mcpnb-dashboard")

    def _tab_chosen(self, change: Any) -> None:
        self.log_view.pause(change["new"] != _LOG_TAB)

    def summary(self) -> str:
        """The status line, then a line for each part."""
        parts = (self.status, self.explorer, self.tasks, self.resources, self.log_view)
        return "\n".join(part.summary().split("\n")[0] for part in parts)

    def snapshot_html(self) -> str:
        """Every part, one after the other (a snapshot has no tabs to click)."""
        parts = [self.status, self.explorer, self.tasks, self.resources, self.log_view]
        self.log_view.refresh()  # a paused (hidden) view is behind the model
        return "".join(
            f"<h4>{title}</h4>{part.snapshot_html()}" if title else part.snapshot_html()
            for title, part in zip(("", *TITLES), parts, strict=True)
        )

    def close(self) -> None:
        if getattr(self, "_closed_parts", False):
            super().close()
            return
        self._closed_parts = True
        parts = ("status", "tasks", "resources", "log_view", "tab")
        if hasattr(self, "explorer"):
            self.explorer.close()
        for part in [getattr(self, name) for name in parts if hasattr(self, name)]:
            part.close()
        super().close()


def dashboard(session: Any) -> Dashboard:
    """Status, and a Tab of explorer, tasks, resources and log, for ``session``."""
    return Dashboard(session)
