"""Where the model's observers run: never on the engine thread that reads the connection (#28).

Why: the engine writes ``session.model`` (status, in_flight, history...) from the connection's
notification and response path, and traitlets calls observers synchronously inside the write. A
slow observer there (a user's ``model.observe(...)`` that sleeps, a redraw) stopped the connection
from reading: other calls, pings and notifications waited for it.

So a change made on the engine thread is handed to one daemon thread (``mcp-notebook-observers``)
and the write returns at once. The queue is coalesced per observer and trait: while an observer
is busy, the changes waiting for it merge into one (the first ``old``, the newest ``new``, the
``added`` entries concatenated, at most :data:`MAX_ADDED` kept), so it is bounded by observers x
traits, not by the number of changes. Observers run in the order their first waiting change came,
always ending on the newest state. An observer busy for more than ``slow`` seconds is logged once
(a warning naming it) when the engine next hands it work; a slow observer delays the other
observers, never the connection.

Changes made on any other thread (a cell setting the model, the UI thread publishing the log) call
their observers right there, as plain traitlets does.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from typing import Any

from traitlets import Bunch

__all__ = ["Dispatcher", "dispatcher"]

logger = logging.getLogger("mcp_notebook.notebook")

#: ``change.added`` entries kept per merged change (the newest); ``change.new`` has them all.
MAX_ADDED = 10_000
_THREAD_NAME = "mcp-notebook-observers"

_Handler = Callable[[Any], Any]


class Dispatcher:
    """One thread running observers' calls handed over by :meth:`submit`, coalesced."""

    def __init__(self, *, slow: float = 0.2) -> None:
        self.slow = slow
        self._cond = threading.Condition()
        self._pending: dict[tuple[int, str], tuple[_Handler, Any]] = {}  # insertion order = run order
        self._running: tuple[_Handler, float] | None = None
        self._warned: weakref.WeakSet[_Handler] = weakref.WeakSet()
        self._thread: threading.Thread | None = None
        self._idle = threading.Event()
        self._idle.set()

    def submit(self, handler: _Handler, change: Any) -> None:
        """Queue ``handler(change)`` (cheap: the caller never waits for it)."""
        key = (id(handler), str(getattr(change, "name", "")))
        with self._cond:
            waiting = self._pending.get(key)
            self._pending[key] = (handler, change if waiting is None else _merge(waiting[1], change))
            running = self._running
            self._idle.clear()
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name=_THREAD_NAME, daemon=True)
                self._thread.start()
            self._cond.notify()
        if running is not None:
            busy = time.monotonic() - running[1]
            if busy > self.slow:
                self.note_slow(running[0], busy, "has been running for")

    def note_slow(self, handler: _Handler, seconds: float, how: str = "took") -> None:
        """Log, once per observer, that it is slow."""
        with self._cond:
            if handler in self._warned:
                return
            self._warned.add(handler)
        logger.warning(
            "an observer of the session model (%s) %s %.1f s; the connection does not wait for it, "
            "but the other observers do: keep observers quick",
            label_of(handler),
            how,
            seconds,
        )

    def drop(self, handler: _Handler) -> None:
        """Forget the changes waiting for ``handler`` (it was unobserved)."""
        with self._cond:
            for key in [key for key, (waiting, _) in self._pending.items() if waiting is handler]:
                del self._pending[key]

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until every handed-over change has been observed (tests; code that must see them)."""
        return self._idle.wait(timeout)

    def _serve(self) -> None:
        while True:
            with self._cond:
                while not self._pending:
                    self._running = None
                    self._idle.set()
                    self._cond.wait()
                key = next(iter(self._pending))
                handler, change = self._pending.pop(key)
                self._running = (handler, time.monotonic())
            handler(change)  # guarded by the model: it logs what an observer raises


def _merge(old: Any, new: Any) -> Any:
    added = getattr(old, "added", None)
    more = getattr(new, "added", None)
    merged = Bunch(new)
    merged["old"] = old["old"]
    if added is not None or more is not None:
        entries: deque[Any] = deque(added or (), maxlen=MAX_ADDED)
        entries.extend(more or ())
        merged["added"] = list(entries)
    return merged


def label_of(handler: _Handler) -> str:
    """The observer's name for a log line (the model's wrapper names what it wraps)."""
    inner = getattr(handler, "__wrapped__", handler)
    return str(getattr(inner, "__qualname__", None) or type(inner).__name__)


_dispatcher = Dispatcher()


def dispatcher() -> Dispatcher:
    """The process's one observer thread."""
    return _dispatcher
