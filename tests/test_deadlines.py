"""Deadlines: no live request may lose its deadline, whatever order answers arrive in, and each
fires at its instant, not before and not late.

A request can be answered while its own ``send()`` is still returning (always on trio, where every
send is a checkpoint; on asyncio when the pipe is congested), so by the time the sweeper is told to
watch it, it is finished and another request may be the only live one.

Timing (see :mod:`tests.timing`): trio runs on a virtual clock, where an expiry is asserted to the
millisecond; asyncio on the real clock, within 50 ms plus the scheduling noise measured meanwhile.
"""

from __future__ import annotations

import math
import random

import anyio
import pytest

from mcp_notebook.connection._deadlines import DeadlineSweeper
from mcp_notebook.connection._pending import EXPIRED, PendingRequest
from mcp_notebook.connection._wakeup import EventWakeup
from mcp_notebook.protocol._jsonrpc import Response

from .timing import BACKENDS, VIRTUAL_SLOP, backend_param, scheduling_noise

pytestmark = pytest.mark.anyio


@pytest.fixture(params=BACKENDS)
def anyio_backend(request: pytest.FixtureRequest) -> object:
    return backend_param(request.param)


def pending(request_id: int, timeout: float) -> PendingRequest:
    return PendingRequest(
        request_id,
        "tools/call",
        now=anyio.current_time(),
        timeout=timeout,
        max_total=None,
        new_event=EventWakeup,
    )


async def expiry_time(request: PendingRequest) -> float:
    """When ``request`` expired (it must expire within 5 s)."""
    with anyio.fail_after(5):
        while request.outcome is None:
            await request.wait()
    assert request.outcome is EXPIRED
    return anyio.current_time()


async def test_a_request_answered_during_its_send_leaves_the_other_deadline_in_place() -> None:
    live: dict[int, PendingRequest] = {}
    sweeper = DeadlineSweeper(anyio.current_time, lambda: len(live))
    async with scheduling_noise() as noise, anyio.create_task_group() as tg:
        tg.start_soon(sweeper.run)
        waiting = live[1] = pending(1, timeout=0.05)
        sweeper.watch(waiting)
        # A second request, answered before the connection got round to watching it.
        answered = live[2] = pending(2, timeout=30)
        del live[2]
        answered.deliver(Response(2, {}))
        sweeper.watch(answered)
        expired = await expiry_time(waiting)
        tg.cancel_scope.cancel()
    assert waiting.deadline - VIRTUAL_SLOP <= expired <= waiting.deadline + noise.allowance()


async def test_each_of_many_requests_expires_at_its_own_deadline() -> None:
    """Twenty deadlines watched out of order, some shared: each fires at its instant."""
    live: dict[int, PendingRequest] = {}
    sweeper = DeadlineSweeper(anyio.current_time, lambda: len(live))
    timeouts = [0.01 * (1 + i % 15) for i in range(20)]
    random.Random(7).shuffle(timeouts)
    expired: dict[int, float] = {}

    async def note(request: PendingRequest) -> None:
        expired[request.id] = await expiry_time(request)  # type: ignore[index]

    async with scheduling_noise() as noise, anyio.create_task_group() as tg:
        tg.start_soon(sweeper.run)
        async with anyio.create_task_group() as waiters:
            for request_id, timeout in enumerate(timeouts):
                request = live[request_id] = pending(request_id, timeout)
                sweeper.watch(request)
                waiters.start_soon(note, request)
        tg.cancel_scope.cancel()
    late = noise.allowance()
    for request_id, request in live.items():
        lateness = expired[request_id] - request.deadline
        assert -VIRTUAL_SLOP <= lateness <= late, f"request {request_id}: {lateness * 1000:+.1f} ms"


async def test_an_extended_deadline_fires_at_its_new_instant() -> None:
    """Progress moves a deadline later without telling the sweeper: the old entry pops, is
    pushed again at the new deadline, and fires then (not at the old one, not later)."""
    live: dict[int, PendingRequest] = {}
    sweeper = DeadlineSweeper(anyio.current_time, lambda: len(live))
    request = live[1] = pending(1, timeout=0.1)
    async with scheduling_noise() as noise, anyio.create_task_group() as tg:
        tg.start_soon(sweeper.run)
        sweeper.watch(request)
        await anyio.sleep(0.06)
        request.add_progress({"progress": 1}, anyio.current_time(), extend=True)  # now + 0.1
        request.take_progress()
        extended = request.deadline
        expired = await expiry_time(request)
        tg.cancel_scope.cancel()
    assert extended - VIRTUAL_SLOP <= expired <= extended + noise.allowance()


async def test_a_paused_request_does_not_expire_and_resumes_with_what_it_had_left() -> None:
    live: dict[int, PendingRequest] = {}
    sweeper = DeadlineSweeper(anyio.current_time, lambda: len(live))
    request = live[1] = pending(1, timeout=0.1)
    async with scheduling_noise() as noise, anyio.create_task_group() as tg:
        tg.start_soon(sweeper.run)
        sweeper.watch(request)
        await anyio.sleep(0.04)
        request.pause(anyio.current_time())
        left = request.paused_remaining
        assert left is not None
        assert request.deadline == math.inf
        await anyio.sleep(0.5)  # well past the original deadline
        assert request.outcome is None
        request.resume(anyio.current_time())
        sweeper.watch(request)
        resumed = request.deadline
        assert resumed == pytest.approx(anyio.current_time() + left)
        expired = await expiry_time(request)
        tg.cancel_scope.cancel()
    assert resumed - VIRTUAL_SLOP <= expired <= resumed + noise.allowance()


async def test_watching_a_finished_request_adds_nothing_to_time() -> None:
    sweeper = DeadlineSweeper(anyio.current_time, lambda: 0)
    answered = pending(1, timeout=30)
    answered.deliver(Response(1, {}))
    sweeper.watch(answered)
    assert sweeper._heap == []
