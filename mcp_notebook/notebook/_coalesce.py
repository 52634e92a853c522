"""The one rate limiter of the notebook layer: many pokes, at most a few runs a second (issue #28).

A server can send thousands of notifications a second; the engine thread that reads them must not
wait for what a notebook does with them (publishing to the model's traits, user observers, widget
redraws, progress bars, the ``in_flight`` count). So whoever has news only *pokes* a
:class:`Coalescer` (a lock and a dict entry: microseconds), and one shared daemon thread
(``mcp-notebook-ui``) runs each coalescer's function at most once per ``interval``, reading the
state as it is then. The contract every view relies on:

- the first poke after a quiet spell runs at once (``leading=False`` waits one interval instead:
  a count that settles within it is never shown);
- a run always follows the last poke, so what is shown ends on the final state;
- at most one run per ``interval`` and never two runs of one coalescer at once;
- no thread or timer per instance (one thread serves them all, earliest due first);
- :meth:`Coalescer.close` drops a pending run (``flush=True`` runs it once more, in the caller's
  thread); later pokes are ignored;
- ``fn`` raising is logged once (with its traceback), never propagated to whoever poked;
- :meth:`Coalescer.settle` waits until the runs due so far have happened, so a test can count
  runs without guessing how long the thread takes.

A slow function delays the other coalescers' runs (they then cover more pokes each), never the
connection.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable

__all__ = ["Coalescer"]

logger = logging.getLogger("mcp_notebook.notebook")

_THREAD_NAME = "mcp-notebook-ui"
#: The default interval: at most 10 runs a second.
INTERVAL = 0.1


class _Scheduler:
    """The shared thread: runs due coalescers, earliest first, one at a time."""

    def __init__(self) -> None:
        lock = threading.Lock()
        self._cond = threading.Condition(lock)  # the thread waits on it for something due
        self._ran = threading.Condition(lock)  # settle() waits on it for a run to end
        self._due: dict[Coalescer, float] = {}
        self._firing: Coalescer | None = None
        self._thread: threading.Thread | None = None

    def on_thread(self) -> bool:
        return threading.current_thread() is self._thread

    def schedule(self, coalescer: Coalescer, at: float) -> None:
        with self._cond:
            if coalescer in self._due:
                return  # already due: that run reads the newest state
            self._due[coalescer] = at
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name=_THREAD_NAME, daemon=True)
                self._thread.start()
            self._cond.notify()

    def cancel(self, coalescer: Coalescer) -> bool:
        """Drop a pending run; whether there was one."""
        with self._cond:
            return self._due.pop(coalescer, None) is not None

    def settle(self, coalescer: Coalescer, timeout: float) -> bool:
        """Wait until ``coalescer`` has no run due by now and none in progress; False on timeout."""
        since = time.monotonic()
        with self._ran:
            return self._ran.wait_for(
                lambda: self._firing is not coalescer and self._due.get(coalescer, math.inf) > since,
                timeout,
            )

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
                self._firing = coalescer
            try:
                coalescer._fire()
            finally:
                with self._ran:
                    self._firing = None
                    self._ran.notify_all()


_scheduler = _Scheduler()


class Coalescer:
    """Runs ``fn`` on the shared UI thread after :meth:`poke`, at most once per ``interval`` seconds.

    Pokes during a run schedule one more run after it. See the module's docstring for the contract.
    """

    def __init__(
        self,
        fn: Callable[[], object],
        interval: float = INTERVAL,
        *,
        what: str = "a view",
        leading: bool = True,
    ) -> None:
        self._fn = fn
        self.interval = interval
        self._what = what
        self._leading = leading
        self._last = -float("inf")
        self._lock = threading.Lock()  # guards _last, runs, _failed
        self._running = threading.Lock()  # held while fn runs: never two runs at once
        self._failed = False
        self.closed = False
        #: How many times ``fn`` ran (tests and benchmarks read it).
        self.runs = 0

    def poke(self) -> None:
        """Ask for a run, from any thread (cheap: the caller never waits for ``fn``)."""
        if self.closed:
            return
        now = time.monotonic()
        with self._lock:
            at = max(now if self._leading else now + self.interval, self._last + self.interval)
        _scheduler.schedule(self, at)

    def settle(self, timeout: float) -> bool:
        """Wait until every run due by now (pokes within the interval are due later) has
        happened; False if that took longer than ``timeout``. Not from the UI thread itself."""
        if _scheduler.on_thread():
            raise RuntimeError("Coalescer.settle() on the UI thread would wait for itself")
        return _scheduler.settle(self, timeout)

    def close(self, *, flush: bool = False) -> None:
        """Run no more; with ``flush``, a run still pending happens now, in this thread.

        From another thread than the UI thread, waits for a run in progress to end, so nothing of
        ``fn`` runs after this returns.
        """
        self.closed = True
        pending = _scheduler.cancel(self)
        if _scheduler.on_thread():
            if pending and flush:
                self._run()
            return
        with self._running:
            if pending and flush:
                self._run()

    def _fire(self) -> None:
        if self.closed:
            return
        with self._running:
            if not self.closed:
                self._run()

    def _run(self) -> None:
        with self._lock:
            self._last = time.monotonic()
            self.runs += 1
        try:
            self._fn()
        except Exception:
            with self._lock:
                first, self._failed = not self._failed, True
            if first:
                logger.exception("updating %s failed; ignored (said once)", self._what)
            else:
                logger.debug("updating %s failed again", self._what, exc_info=True)
