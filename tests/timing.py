"""How a test asserts "on time" (see the note at the top of tests/conftest.py).

Two ways, never a fixed allowance of seconds:

- On a virtual clock (trio's ``MockClock`` with ``autojump_threshold=0``): time jumps to the next
  deadline whenever every task is waiting, so a deadline fires at its instant and a test can ask
  for it to the millisecond (:data:`VIRTUAL_SLOP`), in no real time at all. Fit for anything that
  runs entirely in the event loop: the connection over the in-memory transport (tests/fakes.py),
  the deadline sweeper. Not for real processes, sockets or threads, whose time is real.
- On the real clock: the deadline plus :data:`ON_TIME`, plus the scheduling noise measured on the
  same event loop during the same run (:func:`scheduling_noise`), so a busy machine widens the
  bound by exactly how late it woke a sleeping task, and an idle one catches 50 ms of lateness.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
from trio.testing import MockClock

__all__ = [
    "BACKENDS",
    "ON_TIME",
    "VIRTUAL_SLOP",
    "Noise",
    "backend_param",
    "run_on",
    "scheduling_noise",
    "virtual",
]

#: A deadline on the virtual clock fires at its instant; this covers float rounding only.
VIRTUAL_SLOP = 0.001
#: What a deadline on the real clock may add to the measured scheduling noise: the sweeper's wakeup
#: and the hand-over to the caller's task, a few loop iterations.
ON_TIME = 0.05
#: The backends a timing test runs on: asyncio on the real clock, trio on the virtual one.
BACKENDS = ["asyncio", "trio-virtual"]

_PROBE_INTERVAL = 0.005


def backend_param(name: str) -> Any:
    """What an ``anyio_backend`` fixture returns for one of :data:`BACKENDS` (a fresh clock)."""
    if name == "trio-virtual":
        return ("trio", {"clock": MockClock(autojump_threshold=0)})
    return name


def run_on(name: str, func: Callable[..., Awaitable[Any]], *args: Any) -> Any:
    """``anyio.run`` on one of :data:`BACKENDS` (for a Hypothesis example, say)."""
    backend = backend_param(name)
    if isinstance(backend, tuple):
        return anyio.run(func, *args, backend=backend[0], backend_options=backend[1])
    return anyio.run(func, *args, backend=backend)


def virtual() -> bool:
    """True on trio's MockClock (the current event loop's clock is virtual)."""
    try:
        import trio
        import trio.lowlevel

        trio.lowlevel.current_trio_token()
    except (ImportError, RuntimeError):
        return False
    return isinstance(trio.lowlevel.current_clock(), MockClock)


class Noise:
    """How late the event loop woke a sleeping task, at worst, while :func:`scheduling_noise` ran."""

    def __init__(self) -> None:
        self.worst = 0.0
        self.samples = 0
        self._asked = math.inf  # when the probe's current sleep should end

    def allowance(self) -> float:
        """How late a deadline may fire: :data:`VIRTUAL_SLOP` on the virtual clock, else
        :data:`ON_TIME` plus the worst wakeup delay measured."""
        return VIRTUAL_SLOP if virtual() else ON_TIME + self.worst

    async def _probe(self) -> None:
        while True:
            self._sample()  # (the first turn: how long the block held the loop before the probe ran)
            self._asked = anyio.current_time() + _PROBE_INTERVAL
            await anyio.sleep(_PROBE_INTERVAL)

    def _sample(self) -> None:
        self.worst = max(self.worst, anyio.current_time() - self._asked)
        self.samples += 1


@asynccontextmanager
async def scheduling_noise() -> AsyncIterator[Noise]:
    """Measure the loop's wakeup delays during the block (not on the virtual clock, where there
    are none and a probe would only make time crawl in 5 ms jumps).

    The probe is due from the block's first instant, not from its own first turn: a task started
    here first runs when the block first awaits, and the block's synchronous start (a call up to
    its first write: where its deadline begins) is when a stall of the whole process (a full
    garbage collection, the OS running others) went unseen. A 1.03 s one there made a 0.25 s
    deadline fire at 1.28 s "with no noise" in a four-worker CI run (#36).
    """
    noise = Noise()
    if virtual():
        yield noise
        return
    async with anyio.create_task_group() as tg:
        noise._asked = anyio.current_time()
        tg.start_soon(noise._probe)
        try:
            yield noise
        finally:
            noise._sample()  # a stall the probe has not woken from yet is noise too
            tg.cancel_scope.cancel()
