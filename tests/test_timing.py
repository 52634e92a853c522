"""The timing helpers themselves (tests/timing.py): the scheduling-noise probe sees every stall.

A stall of the whole process (a full garbage collection, the OS running other workers) is what the
probe is for: a deadline test's bound widens by exactly that much. These tests stall the event loop
on a clock that can be moved on at once (:class:`StallingClock`): no real time is waited, and the
probe is the real one (the clock is not trio's ``MockClock``, on which the probe is left out).
"""

from __future__ import annotations

import time

import anyio
import anyio.lowlevel
import pytest
import trio
import trio.lowlevel

from .timing import ON_TIME, scheduling_noise, virtual

pytestmark = pytest.mark.anyio

_STALL = 1.0


class StallingClock(trio.abc.Clock):
    """trio's clock as the real one, plus stalls: :meth:`stall` moves time on the way a process
    that was frozen sees it when it runs again, without waiting."""

    def __init__(self) -> None:
        self._offset = 0.0

    def start_clock(self) -> None:
        pass

    def current_time(self) -> float:
        return time.perf_counter() + self._offset

    def deadline_to_sleep_time(self, deadline: float) -> float:
        return deadline - self.current_time()

    def stall(self, seconds: float) -> None:
        """The process was frozen for ``seconds`` just now (nothing ran meanwhile)."""
        self._offset += seconds


@pytest.fixture
def anyio_backend() -> tuple[str, dict[str, StallingClock]]:
    return ("trio", {"clock": StallingClock()})


def stall(seconds: float) -> None:
    clock = trio.lowlevel.current_clock()
    assert isinstance(clock, StallingClock)
    clock.stall(seconds)


async def test_a_stall_before_the_block_first_awaits_is_measured() -> None:
    """Where a CI run's deadline test lost a second: a call's synchronous start (before its first
    await, when its deadline begins) stalled 1.03 s, before the probe task had first run, and the
    probe reported no noise at all (#36)."""
    async with scheduling_noise() as noise:
        assert not virtual()  # the real probe runs
        stall(_STALL)  # a full collection in the call's first steps, say
        await anyio.lowlevel.checkpoint()
        await anyio.sleep(0.01)
    assert noise.worst >= _STALL
    assert noise.allowance() >= ON_TIME + _STALL


async def test_a_stall_while_the_probe_sleeps_is_measured() -> None:
    """Measured against the probe's next wakeup, so up to one probe interval less than the stall:
    the allowance (what a deadline test adds to its deadline) covers it whole."""
    async with scheduling_noise() as noise:
        await anyio.sleep(0.01)  # the probe has run and sleeps
        stall(_STALL)
        await anyio.sleep(0.01)
    assert noise.allowance() >= _STALL


async def test_a_stall_at_the_end_of_the_block_is_measured() -> None:
    """Between the probe's last wakeup and the end of the block (where a test reads its clock)."""
    async with scheduling_noise() as noise:
        await anyio.sleep(0.01)
        stall(_STALL)
    assert noise.allowance() >= _STALL
