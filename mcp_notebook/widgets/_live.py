"""The display of a live view (:mod:`mcp_notebook.notebook._views`): a header line over the frame's
HTML, drawn by a panel of ours (one anywidget, :mod:`._ui`; CSS class ``mcpnb-live``), so it shows
in JupyterLab, Notebook 7, VS Code, Colab and marimo alike.

This module only draws: the view owns the state, builds both pieces of HTML (server text escaped)
after each run and hands them here. Nothing here waits, reads the model or talks to a server.
"""

from __future__ import annotations

from typing import Any

from . import _ui as W
from ._shown import HTML

__all__ = ["LiveViewWidget"]


class LiveViewWidget(W.VBox):
    """A live view's display; ``view`` is the LiveFrame or watch that writes it."""

    def __init__(self, view: Any, header: str = "", body: str = "") -> None:
        self.view = view
        self.header = HTML(header)
        self.header.add_class("mcpnb-live-header")
        self.body = HTML(body, layout=W.Layout(width="100%", overflow="auto"))
        self.body.add_class("mcpnb-live-body")
        super().__init__([self.header, self.body], layout=W.Layout(width="100%"))
        self.add_class("mcpnb-live")

    def show(self, header: str, body: str) -> None:
        """Draw a new state (an unchanged body is not sent to the front end again)."""
        self.header.value = header
        if self.body.value != body:
            self.body.value = body
