"""Tasks leave nothing behind: after every client or session is closed, with tasks still running on
both kinds of server (the modern extension on tests/servers/tasks_server.py, the 2025-11-25 core
tasks of npm server-everything), no server process is left, no asyncio task is left on the
caller's loop, and no task is left on the notebook engine's loop. Someone still waiting on a
task's result when its client closes is woken with McpError(kind="closed"), not left hanging."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import anyio
import pytest

from mcp_notebook import Client, McpError

from .conftest import everything_server, python_server
from .fakes import eventually

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

SETTLE = 10.0  # seconds the engine gets to finish cancelling what a closed session started


def _alive(tasks: set[asyncio.Task[Any]]) -> list[str]:
    return sorted(t.get_name() + f" {t.get_coro()!r}" for t in tasks if not t.done())


@pytest.mark.anyio
async def test_closed_clients_leave_no_task_or_process() -> None:
    mine = asyncio.current_task()
    before = asyncio.all_tasks()
    modern = Client(python_server("tasks_server.py"))
    legacy = Client(everything_server())
    outcomes: list[tuple[str, str]] = []

    async def wait(name: str, handle: Any, waiting: anyio.Event) -> None:
        waiting.set()  # the next await is the wait itself: no other task runs in between
        try:
            await handle.result()
            outcomes.append((name, "result"))
        except McpError as exc:
            outcomes.append((name, exc.kind))

    try:
        await modern.connect()
        await legacy.connect()
        finished = await modern.start_tool("crunch", {"steps": 1, "delay": 0.0})
        assert (await finished.result()).structured_content == {"steps": 1}
        running = await modern.start_tool("crunch", {"steps": 600, "delay": 0.1})
        stuck = await modern.start_tool("ask_name", {})  # input this client cannot give
        # Its first poll (one interval after it started) finds it waiting for input.
        await eventually(lambda: stuck.status == "input_required", timeout=10)
        research = await legacy.start_tool("simulate-research-query", {"topic": "leaks"})
        assert research.flavour == "core"
        assert running.flavour == "extension"
        assert {h.task_id for h in await legacy.list_tasks()} == {research.task_id}
        opened = {t for t in asyncio.all_tasks() - before if not t.done()}
        assert opened, "the clients run no task of their own: this check would prove nothing"
        async with anyio.create_task_group() as group:
            for name, handle in (("running", running), ("research", research)):
                waiting = anyio.Event()
                group.start_soon(wait, name, handle, waiting)
                await waiting.wait()
            assert not outcomes
            await modern.aclose()
            await legacy.aclose()
    finally:
        await modern.aclose()
        await legacy.aclose()

    assert sorted(outcomes) == [("research", "closed"), ("running", "closed")]
    assert not running.done
    assert not research.done
    assert stuck.status == "input_required"
    with pytest.raises(McpError) as caught:
        await running.result()
    assert caught.value.kind == "closed"
    assert "attach again with get_task()" in caught.value.message
    for client in (modern, legacy):
        assert client.status == "closed"
        assert client._tasks.closed
        assert client._host is not None
        assert client._host.task is not None
        assert client._host.task.done()
    left = _alive(asyncio.all_tasks() - before - {mine})  # type: ignore[operator]
    assert not left, f"tasks left running on the loop after both clients closed: {left}"


def _engine_tasks() -> set[asyncio.Task[Any]]:
    """The tasks running on the notebook engine's loop now (without the one that looks)."""
    from mcp_notebook.notebook._engine import get_engine

    async def snapshot() -> set[asyncio.Task[Any]]:
        me = asyncio.current_task()
        return {t for t in asyncio.all_tasks() if t is not me and not t.done()}

    return get_engine().call(snapshot)


def test_closed_sessions_leave_nothing_on_the_engine() -> None:
    pytest.importorskip("pandas")
    from mcp_notebook.notebook import Session

    baseline = _engine_tasks()  # other tests' open sessions, the engine's own host task
    modern = Session(python_server("tasks_server.py"), show_progress=False, dialogs=False)
    legacy = Session(everything_server(), show_progress=False, dialogs=False)
    waited: list[str] = []

    def wait(task: Any) -> None:
        try:
            task.result()
            waited.append("result")
        except McpError as exc:
            waited.append(exc.kind)

    threads: list[threading.Thread] = []
    try:
        done = modern.start_tool("crunch", {"steps": 1, "delay": 0.0})
        assert done.result().structured_content == {"steps": 1}
        running = modern.start_tool("crunch", {"steps": 600, "delay": 0.1})
        research = legacy.start_tool("simulate-research-query", {"topic": "leaks"})
        listed = legacy.tasks_frame(server=True)
        assert research.task_id in set(listed["task_id"])
        assert {r["task_id"] for r in modern.model.tasks} == {done.task_id, running.task_id}
        for task in (running, research):
            threads.append(threading.Thread(target=wait, args=(task,), daemon=True))
            threads[-1].start()
        assert _engine_tasks() - baseline, "the sessions run nothing on the engine: this check proves nothing"
    finally:
        modern.close()
        legacy.close()
    for thread in threads:
        thread.join(timeout=30)
        assert not thread.is_alive(), "a blocked result() was not woken when its session closed"
    assert waited == ["closed", "closed"]

    deadline = time.monotonic() + SETTLE  # cancelling from another thread takes a loop turn or two
    left = _alive(_engine_tasks() - baseline)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = _alive(_engine_tasks() - baseline)
    assert not left, f"tasks left on the engine's loop after both sessions closed: {left}"
    assert modern.model.status == legacy.model.status == "closed"
