"""An idle client holds only the tasks its connection needs, and nothing of the calls it made
(issue #41: its Python heap, idle and across batches of calls).

Each asyncio task parked in a loop holds about 3 KB of heap, and a client once parked twenty of
them beside an idle stdio connection: a refresh loop per list kind, a delivery loop per change
notice, an event dispatcher with no hooks, a listen manager on a server that has no listen stream,
a log summary task per budget that was never exceeded, a task poller with no task. Each now starts
with its first work. What stays is what an idle connection does: host it, read the pipe, drain
stderr, time out requests, and the two owners of lazily started work (lists, tasks).

After a burst of calls the deadline sweeper kept an entry and a shell of every finished request
until the next call (up to twice the burst): the HTTP load benchmark saw it as ~400 KB of heap
growth across its batches. Once no call is in flight, no request record is left.
"""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import anyio
import pytest

from mcp_notebook import Client
from mcp_notebook.connection._pending import PendingRequest

from .conftest import demo_server

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaked_processes")]

#: The client's host, the connection's run, its reader, its stderr drain, its deadline sweeper,
#: the live lists' owner and the task tracker.
IDLE_TASKS = 7


def _describe(task: asyncio.Task[Any]) -> str:
    coro: Any = task.get_coro()
    chain = []
    while coro is not None and len(chain) < 3:
        chain.append(getattr(coro, "__qualname__", type(coro).__name__))
        coro = getattr(coro, "cr_await", None)
    return " > ".join(chain)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the count is of asyncio tasks


async def test_an_idle_legacy_stdio_client_holds_only_the_tasks_its_connection_needs() -> None:
    before = asyncio.all_tasks()
    async with Client(demo_server(), protocol="legacy") as client:
        # Used as a notebook uses it: the lists fetched (so kept fresh), a call, then nothing.
        assert await client.list_tools()
        await client.list_resources()
        await client.list_prompts()
        assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content is not None
        idle = [t for t in asyncio.all_tasks() - before if not t.done() and t is not asyncio.current_task()]

        assert len(idle) <= IDLE_TASKS, "\n".join(sorted(map(_describe, idle)))


def _request_records() -> int:
    gc.collect()
    return sum(1 for thing in gc.get_objects() if isinstance(thing, PendingRequest))


async def test_no_request_record_outlives_a_burst_of_calls() -> None:
    # Records of this test only: the worker process may hold one left by an earlier test file.
    earlier = _request_records()
    async with Client(demo_server(), protocol="legacy") as client:
        answers: list[Any] = []

        async def add(i: int) -> None:
            answers.append((await client.call_tool("add", {"a": i, "b": 1})).structured_content)

        for _ in range(2):
            async with anyio.create_task_group() as tg:
                for i in range(300):
                    tg.start_soon(add, i)
            assert len(answers) in (300, 600)

            assert _request_records() == earlier
