"""Roots as notebook state: :class:`RootsList`, an editable list usable as a client's ``roots=``.

The widgets' ``roots_widget`` edits one; the list itself needs no widgets, so it lives here
(issue #27: the notebook layer holds the state, the widgets draw it).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any

from ..connection._handlers import _root

__all__ = ["RootsList", "root_entry"]


class RootsList:
    """An editable list of roots, usable as a client's ``roots=`` handler.

    ``Client(..., roots=RootsList(["/data", "file:///srv/shared"]))`` declares the roots capability
    and answers every ``roots/list`` with the list as it is then; :func:`roots_widget` edits it.
    A modern server asks whenever it needs roots, so it sees edits on its next request; a legacy
    server asks when it likes, typically once. Telling it at once needs core support that does not
    exist yet: declaring ``roots.listChanged: true`` for such a handler and a
    ``Client.notify_roots_changed()`` that sends ``notifications/roots/list_changed``.
    """

    def __init__(self, roots: Iterable[Any] = ()) -> None:
        self._lock = threading.Lock()
        self._roots: list[dict[str, Any]] = [root_entry(r) for r in roots]
        self._callbacks: list[Callable[[list[dict[str, Any]]], Any]] = []

    def __call__(self, _params: dict[str, Any]) -> dict[str, Any]:
        return {"roots": self.roots}

    @property
    def roots(self) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(r) for r in self._roots]

    def set(self, roots: Iterable[Any]) -> None:
        entries = [root_entry(r) for r in roots]
        with self._lock:
            self._roots = entries
        for callback in list(self._callbacks):
            callback(self.roots)

    def add(self, root: Any) -> None:
        self.set([*self.roots, root_entry(root)])

    def remove(self, uri: str) -> None:
        self.set([r for r in self.roots if r.get("uri") != uri])

    def on_change(self, callback: Callable[[list[dict[str, Any]]], Any]) -> None:
        self._callbacks.append(callback)

    def __repr__(self) -> str:
        return f"RootsList({[r['uri'] for r in self.roots]!r})"


def root_entry(value: Any) -> dict[str, Any]:
    """A root as the protocol sends it (``{"uri": ..., "name": ...}``) from a URI, a path or a dict."""
    # The one rule for what a root may be lives with the handlers; reuse it.
    return _root(value)
