"""Work started on demand runs in its owner's context, not in the context of the task that asked."""

from __future__ import annotations

import contextvars

import anyio
import pytest

from mcp_notebook.connection import Home

pytestmark = pytest.mark.anyio

WHO = contextvars.ContextVar("who", default="nobody")


async def test_a_loop_started_by_a_caller_runs_in_the_owners_context() -> None:
    home = Home()
    seen: list[str] = []
    ran = anyio.Event()

    async def loop() -> None:
        seen.append(WHO.get())
        ran.set()

    async def owner(*, task_status: anyio.abc.TaskStatus[None]) -> None:
        WHO.set("owner")
        async with anyio.create_task_group() as group:
            home.settle(group)
            task_status.started()
            await anyio.sleep_forever()

    async with anyio.create_task_group() as tg:
        await tg.start(owner)

        async def caller() -> None:  # a cell's call, say, that brings the loop its first work
            WHO.set("a cell")
            assert home.start_soon(loop)

        tg.start_soon(caller)
        with anyio.fail_after(5):
            await ran.wait()
        tg.cancel_scope.cancel()
    assert seen == ["owner"]


async def test_without_a_group_nothing_starts() -> None:
    home = Home()

    async def loop() -> None:
        raise AssertionError("started")

    assert home.start_soon(loop) is False
