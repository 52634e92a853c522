"""Coalesced work off the connection's thread: many pokes, at most a few runs a second.

A server can send thousands of notifications a second; the engine thread that reads them must not
wait for what a notebook does with them (publishing to the model's traits, user observers, widget
redraws). So the reader only *pokes* a :class:`Coalescer` (a lock and a condition: microseconds),
and one shared daemon thread (``mcp-notebook-ui``) runs each coalescer's function at most once per
``interval``, reading the state as it is then. A run always follows the last poke, so what is shown
ends on the final state, the way ``LiveFrame`` coalesces on the engine. A slow function delays the
other coalescers' runs (they then cover more pokes each), never the connection.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

__all__ = ["Coalescer"]

logger = logging.getLogger("mcp_notebook.notebook")

_THREAD_NAME = "mcp-notebook-ui"


class _Scheduler:
    """The shared thread: runs due coalescers, earliest first, one at a time."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._due: dict[Coalescer, float] = {}
        self._thread: threading.Thread | None = None

    def schedule(self, coalescer: Coalescer, at: float) -> None:
        with self._cond:
            if coalescer in self._due:
                return  # already due: that run reads the newest state
            self._due[coalescer] = at
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name=_THREAD_NAME, daemon=True)
                self._thread.start()
            self._cond.notify()

    def cancel(self, coalescer: Coalescer) -> None:
        with self._cond:
            self._due.pop(coalescer, None)

    def _serve(self) -> None:
        while True:
            with self._cond:
                while not self._due:
                    self._cond.wait()
                coalescer, at = min(self._due.items(), key=lambda item: item[1])
                delay = at - time.monotonic()
                if delay > 0:
                    self._cond.wait(delay)
                    continue  # something earlier may have come meanwhile
                del self._due[coalescer]
            coalescer._fire()


_scheduler = _Scheduler()


class Coalescer:
    """Runs ``fn`` on the shared UI thread after :meth:`poke`, at most once per ``interval`` seconds.

    Pokes during a run schedule one more run after it; :meth:`close` drops a pending run and
    ignores later pokes. ``fn`` raising is logged, never propagated.
    """

    def __init__(self, fn: Callable[[], object], interval: float, *, what: str = "a view") -> None:
        self._fn = fn
        self.interval = interval
        self._what = what
        self._last = -float("inf")
        self._lock = threading.Lock()
        self.closed = False
        #: How many times ``fn`` ran.
        self.runs = 0

    def poke(self) -> None:
        """Ask for a run, from any thread (cheap: the caller never waits for ``fn``)."""
        if self.closed:
            return
        with self._lock:
            at = max(time.monotonic(), self._last + self.interval)
        _scheduler.schedule(self, at)

    def close(self) -> None:
        self.closed = True
        _scheduler.cancel(self)

    def _fire(self) -> None:
        if self.closed:
            return
        with self._lock:
            self._last = time.monotonic()
        self.runs += 1
        try:
            self._fn()
        except Exception:
            logger.exception("updating %s failed; ignored", self._what)
