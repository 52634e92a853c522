"""A call's progress bar as one of our panels (one anywidget), drawn where tqdm's notebook bar was.

Why not tqdm's: its notebook bar is three ipywidgets controls and their layouts and styles (seven
models in a saved notebook for each bar), and marimo draws none of them (it shows tqdm's text in
its terminal instead). :class:`ProgressPanel` keeps the few things the notebook layer's
:class:`~mcp_notebook.notebook._progress.ProgressBar` uses of a tqdm bar (``total``, ``n``,
``set_postfix_str``, ``refresh``, ``close``), so that class stays the one owner of the throttling
and the state; this only draws. Every string is the server's: set as text, never as markup.
"""

from __future__ import annotations

from typing import Any

from ..display._html import escape
from . import _ui as W
from ._fallback import Fallback
from ._lean import close_tree
from ._shown import HTML, Label

__all__ = ["ProgressPanel", "progress_panel"]


class ProgressPanel(Fallback, W.HBox):
    """``description`` ▕████░░▏ ``n/total · message``; gone once closed (as ``leave=False`` was)."""

    def __init__(self, description: str, total: float | None) -> None:
        self.total = total
        self.n: float = 0
        self._description = description
        self._postfix = ""
        self.label = HTML(f"<b>{escape(description)}</b>")
        self.label.add_class("mcpnb-progress-label")
        self.bar = W.FloatProgress(value=0, min=0, max=1)
        self.bar.add_class("mcpnb-progress-bar")
        self.text = Label("")
        self.text.add_class("mcpnb-progress-text")
        super().__init__([self.label, self.bar, self.text], layout=W.Layout(width="100%"))
        self.add_class("mcpnb-progress")
        self.refresh()

    def set_postfix_str(self, text: str = "", refresh: bool = True) -> None:
        self._postfix = text
        if refresh:
            self.refresh()

    def refresh(self) -> None:
        total, done = self.total, self.n
        if total:  # a known total: a bar that fills
            with self.bar.hold_sync():
                self.bar.max = float(total)
                self.bar.value = float(min(done, total))
                self.bar.bar_style = ""
            shown = f"{done:g}/{total:g}"
        else:  # no total: the count, and a bar drawn busy
            self.bar.bar_style = "info"
            shown = f"{done:g}"
        self.text.value = f"{shown} · {self._postfix}" if self._postfix else shown

    snapshot_note = "The progress of a call, as it was when shown."

    def summary(self) -> str:
        return f"<MCP progress: {self._description} {self.text.value}>"

    def close(self) -> None:
        if self.comm is None:
            return
        self.refresh()
        close_tree(*self.children)
        super().close()


def progress_panel(description: str, total: float | None) -> Any:
    """The bar the notebook layer draws a call's progress with in a notebook front end."""
    return ProgressPanel(description, total)
