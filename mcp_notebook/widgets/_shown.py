"""Server text in a widget: control and bidi characters made visible, by the one rule text forms use.

Why: escaping markup is not enough. A tool result or argument holding U+202E (a right-to-left
override) reversed the rest of the explorer's history row, so "ok 12 ms" read "sm 21 ko", and the
result view with it (issue #35), although reprs, errors and log records already showed such
characters as ``\\u202e``. :func:`~mcp_notebook.protocol.printable` is that rule; this module
applies it where a widget's text is set, so no panel can forget it:

- :class:`HTML`, the HTML widget every panel uses: each value set is passed through ``printable``
  (multi-line: line breaks and tabs stay). The markup the panels write holds no such character, so
  only server text changes, and no value can skip it, however late it is set.
- :class:`Label`, the same for a one-line text (a status line: the server's progress message).
- :func:`shown`, for the text traits of other controls (a button's description, a tooltip, a
  Dropdown's option labels).
"""

from __future__ import annotations

from typing import Any

import traitlets

from ..protocol._printable import printable
from . import _ui as W

__all__ = ["HTML", "Label", "shown"]


def shown(text: Any, *, multiline: bool = False) -> str:
    """``text`` as a widget may show it (:func:`~mcp_notebook.protocol.printable`)."""
    return printable(text, multiline=multiline)


class HTML(W.HTML):
    """``ipywidgets.HTML`` whose value never holds a raw control or bidi character."""

    @traitlets.validate("value")
    def _printable(self, proposal: Any) -> str:
        return printable(proposal["value"], multiline=True)


class Label(W.Label):
    """``ipywidgets.Label`` whose value is one printable line."""

    @traitlets.validate("value")
    def _printable(self, proposal: Any) -> str:
        return printable(proposal["value"])
