"""Deadlines: no live request may lose its deadline, whatever order answers arrive in.

A request can be answered while its own ``send()`` is still returning (always on trio, where every
send is a checkpoint; on asyncio when the pipe is congested), so by the time the sweeper is told to
watch it, it is finished and another request may be the only live one.
"""

from __future__ import annotations

import anyio
import pytest

from mcp_notebook.connection._deadlines import DeadlineSweeper
from mcp_notebook.connection._pending import EXPIRED, PendingRequest
from mcp_notebook.protocol.jsonrpc import Response

pytestmark = pytest.mark.anyio


def pending(request_id: int, timeout: float) -> PendingRequest:
    return PendingRequest(
        request_id,
        "tools/call",
        now=anyio.current_time(),
        timeout=timeout,
        max_total=None,
        new_event=anyio.Event,
    )


async def test_a_request_answered_during_its_send_leaves_the_other_deadline_in_place() -> None:
    live: dict[int, PendingRequest] = {}
    sweeper = DeadlineSweeper(anyio.current_time, lambda: len(live))
    async with anyio.create_task_group() as tg:
        tg.start_soon(sweeper.run)
        waiting = live[1] = pending(1, timeout=0.05)
        sweeper.watch(waiting)
        # A second request, answered before the connection got round to watching it.
        answered = live[2] = pending(2, timeout=30)
        del live[2]
        answered.deliver(Response(2, {}))
        sweeper.watch(answered)
        with anyio.fail_after(5):
            while waiting.outcome is None:
                await waiting.wait()
        assert waiting.outcome is EXPIRED
        tg.cancel_scope.cancel()


async def test_watching_a_finished_request_adds_nothing_to_time() -> None:
    sweeper = DeadlineSweeper(anyio.current_time, lambda: 0)
    answered = pending(1, timeout=30)
    answered.deliver(Response(1, {}))
    sweeper.watch(answered)
    assert sweeper._heap == []
