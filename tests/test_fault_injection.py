"""Fault injection: the server process is SIGKILLed at random moments while 200 calls are in flight.

Twenty rounds in a row against a real stdio server (``tests/servers/bad_server.py``, whose ``slow``
tool answers after a delay): every call must end with its result or ``McpError(kind="transport")``
within its deadline (none may hang), the client must restart the server by itself, the next call
must succeed, every kill must be counted as one reconnect, and no process may be left behind.
Some rounds kill the restarted server again while it is still starting (or just started). The
random moments come from a seeded generator, so a failure can be replayed.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import time
from collections import Counter

import anyio
import psutil
import pytest

from mcp_notebook import Client, McpError

from .conftest import python_server

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaked_processes")]

ROUNDS = 20
CALLS = 200
DEADLINE = 10.0  # each call's; far above what a round needs, so no call should time out
SLACK = 0.5  # how late past its deadline a call may end (scheduling)
SEED = 4


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


async def wait_gone(pid: int, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not gone(pid) and time.monotonic() < deadline:  # noqa: ASYNC110 (no event for a pid)
        await anyio.sleep(0.02)
    return gone(pid)


def kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


class Round:
    """One round: CALLS concurrent ``slow`` calls, and the server killed once or twice meanwhile."""

    def __init__(self, client: Client, rng: random.Random) -> None:
        self.client = client
        self.kill_after = rng.uniform(0.0, 0.3)
        # a quarter of the rounds also kill the restarted server while it starts (or just started)
        self.kill_again_after = rng.uniform(0.0, 0.05) if rng.random() < 0.25 else None
        self.delays = [round(rng.uniform(0.0, 0.2), 3) for _ in range(CALLS)]
        self.outcomes: list[str | None] = [None] * CALLS
        self.durations = [0.0] * CALLS
        self.killed: list[int] = []

    async def run(self) -> None:
        with anyio.fail_after(DEADLINE + 5):  # nothing may hang
            async with anyio.create_task_group() as tg:
                for i in range(CALLS):
                    tg.start_soon(self._call, i)
                tg.start_soon(self._killer)

    async def _call(self, i: int) -> None:
        start = anyio.current_time()
        try:
            with anyio.fail_after(DEADLINE + SLACK):
                result = await self.client.call_tool("slow", {"seconds": self.delays[i]}, timeout=DEADLINE)
            assert result.text == "slow done"
            self.outcomes[i] = "ok"
        except McpError as exc:
            self.outcomes[i] = exc.kind
        except TimeoutError:
            self.outcomes[i] = "hung past its deadline"
        self.durations[i] = anyio.current_time() - start

    async def _killer(self) -> None:
        transport = self.client._transport
        pid = transport.pid
        assert pid is not None
        await anyio.sleep(self.kill_after)
        kill(pid)
        self.killed.append(pid)
        if self.kill_again_after is not None:
            with anyio.fail_after(5):
                while transport.pid in (pid, None):  # noqa: ASYNC110 (no event for a new pid)
                    await anyio.sleep(0.002)
            await anyio.sleep(self.kill_again_after)
            second = transport.pid
            assert second is not None
            kill(second)
            self.killed.append(second)


async def test_server_killed_at_random_moments_with_200_calls_in_flight():
    rng = random.Random(SEED)
    totals: Counter[str | None] = Counter()
    killed: list[int] = []
    async with Client(python_server("bad_server.py"), timeout=DEADLINE, backoff_initial=0.05) as client:
        await client.list_tools()
        for number in range(ROUNDS):
            assert client.status == "ready", number
            this = Round(client, rng)
            await this.run()
            killed += this.killed

            counts = Counter(this.outcomes)
            totals.update(counts)
            assert set(counts) <= {"ok", "transport"}, f"round {number}: {counts}"
            late = max(this.durations)
            assert late <= DEADLINE + SLACK, f"round {number}: a call took {late:.2f}s"

            # the client notices every kill, restarts the server by itself, and the next call succeeds
            with anyio.fail_after(DEADLINE):
                while client.stats.reconnects < len(killed) or client.status != "ready":  # noqa: ASYNC110
                    await anyio.sleep(0.005)
                assert (await client.call_tool("echo", {"n": number})).text == str(number)
            assert client._transport.pid not in killed
            assert client.stats.reconnects == len(killed), f"round {number}: {client.stats}"
            # (the background refresh of the tool list after the reconnect may still be running)
            with anyio.fail_after(DEADLINE):
                while client.stats.in_flight:  # noqa: ASYNC110
                    await anyio.sleep(0.01)
            assert client.stats.timeouts == 0
            for pid in this.killed:
                assert await wait_gone(pid), f"the killed server {pid} was not reaped"
    assert client.status == "closed"
    # the kills did land among calls in flight, not only between rounds
    assert totals["transport"] >= CALLS, totals
    assert totals["ok"] >= CALLS, totals
    assert len(set(killed)) == len(killed) > ROUNDS
