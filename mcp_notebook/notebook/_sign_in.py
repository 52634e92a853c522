"""Where a session's OAuth sign-in is shown to the person at the notebook.

The core shows a device sign-in (``OAuth(flow="device")``: a code to enter on any device) as a
printed line, which in a notebook scrolls away among the cell's other output. A session opened in
a notebook kernel hands its OAuth object a presenter instead (``OAuth.on_device_code``): the top
layer's panel (``widgets/_sign_in.py``, handed in with :func:`show_device_codes_with`, since this
layer never imports widgets), under the cell that opened the session (marimo: that cell's writer,
taken now, on the cell's thread; Jupyter: the running cell, which ``display`` finds by itself).

One OAuth object may serve several sessions: it gets one presenter however many sessions use it,
removed when the last of them closes, so a sign-in is shown once.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable
from typing import Any

from . import _host, _uipoll

__all__ = ["hook_sign_in", "no_sign_in", "show_device_codes_with", "undo_both"]

logger = logging.getLogger("mcp_notebook.notebook")

#: Shows a device sign-in: ``(sign_in, write)``, ``write`` a marimo cell's writer or None.
_show: Callable[[Any, Callable[[Any], None] | None], Any] | None = None
#: Each OAuth object with a presenter: [the undo, how many sessions use it].
_hooked: weakref.WeakKeyDictionary[Any, list[Any]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def show_device_codes_with(show: Callable[[Any, Callable[[Any], None] | None], Any] | None) -> None:
    """Show the device sign-ins of sessions opened in a notebook with ``show``; None: printed."""
    global _show
    _show = show


def no_sign_in() -> None:
    """The undo of a session that hooked nothing."""


def hook_sign_in(auth: Any) -> Callable[[], None]:
    """Have ``auth`` (an OAuth object, else nothing happens) show its device sign-ins in the
    notebook, when this runs in a notebook kernel; returns the undo the session calls at close."""
    show = _show
    subscribe = getattr(auth, "on_device_code", None)
    if show is None or not callable(subscribe) or not _host.in_notebook():
        return no_sign_in
    write = _host.cell_writer()

    def present(sign_in: Any) -> None:
        # While the person signs in, a cell blocked in a call lets the kernel handle widget
        # messages (notebook/_uipoll.py), as for an open dialog: the panel's view must be answered
        # to be drawn at all, and the sign-in happens inside a call.
        _uipoll.dialog_opened()
        sign_in.on_change(lambda _ended: _uipoll.dialog_closed())
        show(sign_in, write)

    with _lock:
        entry = _hooked.get(auth)
        if entry is None:
            entry = _hooked[auth] = [subscribe(present), 0]
        entry[1] += 1
    undone = False

    def unhook() -> None:
        nonlocal undone
        with _lock:
            if undone:
                return
            undone = True
            entry[1] -= 1
            if entry[1] == 0:
                entry[0]()
                _hooked.pop(auth, None)

    return unhook


def undo_both(first: Callable[[], None], second: Callable[[], None]) -> Callable[[], None]:
    """One undo for the two sign-in hooks a session plugs into its OAuth (paste-back, device)."""

    def undo() -> None:
        first()
        second()

    return undo
