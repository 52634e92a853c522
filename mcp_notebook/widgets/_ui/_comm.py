"""The comm a virtual control talks through: it reaches the panel, not the kernel's front end.

Why: every ipywidgets control opens a comm of its own, so a panel was hundreds of widget models.
marimo draws none of them (it runs only anywidgets, marimo#5099), and a saved notebook stores each
one (218 models for notebook 02). ipywidgets' Python side is still the best model of a control we
know (its selection rules, its ``Output``, ``observe``/``on_click``, the property lock that keeps an
answer from echoing back): a control keeps all of it and swaps the comm. :class:`VirtualComm` takes
what ipywidgets would send to the browser and hands it to the :class:`~._root.Panel` roots whose
tree holds the control; a panel relays what its one anywidget view sends back.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any, Protocol

__all__ = ["VirtualComm", "open_controls"]

_open_lock = threading.Lock()
_open: set[str] = set()


def open_controls() -> int:
    """How many virtual controls are open (made and not closed): a panel that leaks controls
    shows here, as a leak of ipywidgets models shows in ``ipywidgets.widgets.widget._instances``."""
    with _open_lock:
        return len(_open)


class Panel(Protocol):
    """What a comm tells the panels showing its control (:class:`~._root.Panel` is one)."""

    def _control_sent(self, model_id: str, data: Any, buffers: Any) -> None: ...

    def _control_closed(self, model_id: str) -> None: ...


class VirtualComm:
    """Stands where ipywidgets keeps ``widget.comm``: ``send`` goes to the panels showing the control."""

    #: ipywidgets sends only when ``comm.kernel`` is set; there is always somewhere to send.
    kernel = True

    def __init__(self) -> None:
        self.comm_id = uuid.uuid4().hex
        with _open_lock:
            _open.add(self.comm_id)
        self._lock = threading.Lock()
        self._panels: list[Panel] = []
        self._handler: Callable[[dict[str, Any]], Any] | None = None

    def on_msg(self, handler: Callable[[dict[str, Any]], Any]) -> None:
        self._handler = handler

    def shown_by(self, panel: Panel) -> None:
        with self._lock:
            if panel not in self._panels:
                self._panels.append(panel)

    def hidden_from(self, panel: Panel) -> None:
        with self._lock:
            if panel in self._panels:
                self._panels.remove(panel)

    def panels(self) -> list[Panel]:
        with self._lock:
            return list(self._panels)

    def send(self, data: Any = None, metadata: Any = None, buffers: Any = None) -> None:
        for panel in self.panels():
            panel._control_sent(self.comm_id, data, buffers)

    def close(self, *_args: Any, **_kwargs: Any) -> None:
        with _open_lock:
            _open.discard(self.comm_id)
        for panel in self.panels():
            panel._control_closed(self.comm_id)

    def handle(self, data: dict[str, Any]) -> None:
        """A message from the view, for ipywidgets' own handler (an update, a click, a submit)."""
        if self._handler is not None:
            self._handler({"content": {"data": data}, "buffers": []})
