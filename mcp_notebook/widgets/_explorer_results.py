"""Each tool's last result in the explorer: shown when its tool is selected, and only then.

Why (issue #29): the result area kept the previous tool's result on screen after another tool was
selected, so the answer of ``add`` sat under the form of ``echo``. Now selecting a tool shows that
tool's own last result (with its status line and bar colour) or nothing. One view per tool is kept
(the tools listed bound them); a replaced one is closed, so repeated calls leave no widgets behind.
"""

from __future__ import annotations

import threading
from typing import Any

from . import _ui as W
from ._lean import close_tree

__all__ = ["LastResults"]


class LastResults:
    """The explorer's ``result_box``, ``status`` line, ``task_line`` and ``progress`` bar, per tool."""

    def __init__(self, result_box: W.Box, status: W.Label, task_line: W.Label, progress: W.FloatProgress):
        self._box, self._status, self._task_line, self._progress = result_box, status, task_line, progress
        self._kept: dict[str, tuple[W.Widget, str, str]] = {}  # view, status line, bar style
        self._lock = threading.Lock()

    def show(self, name: str, *, busy: bool) -> None:
        """``name`` was selected: its own last result, or an empty area. While a call runs, the
        status line and the bar stay the call's."""
        with self._lock:
            kept = self._kept.get(name)
        self._box.children = (kept[0],) if kept else ()
        if busy:
            return
        self._status.value = kept[1] if kept else ""
        self._task_line.value = ""
        self._progress.layout.visibility = "visible" if kept else "hidden"
        if kept:
            self._progress.value, self._progress.bar_style = self._progress.max, kept[2]

    def keep(self, name: str, view: W.Widget, status: str, *, selected: str | None, app: Any = None) -> None:
        """A call of ``name`` ended with ``view``: it is that tool's last result; shown now if the tool
        is still selected (else the status line names the tool). ``app``: a live App view, never
        closed here."""
        with self._lock:
            old = self._kept.get(name)
            self._kept[name] = (view, status, self._progress.bar_style)
        if selected == name:
            self._box.children = (view,)
            self._status.value = status
        else:
            self._status.value = f"{name}: {status}"
        if old is not None and old[0] is not view and old[0] is not app:
            close_tree(old[0])  # after it left the screen (it shows while its tool's next call runs)

    def forget(self, view: Any) -> None:
        """``view`` (an App's) is closed by its owner: no tool shows it again."""
        with self._lock:
            self._kept = {k: v for k, v in self._kept.items() if v[0] is not view}

    def close(self) -> None:
        """Close the views kept for tools not on show."""
        with self._lock:
            views, self._kept = [v[0] for v in self._kept.values()], {}
        for view in views:
            close_tree(view)
