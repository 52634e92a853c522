"""``start_tool`` on a tool the server runs at once (no task): the handle it returns is already done
and holds that call's result, one handle per call."""

from __future__ import annotations

import pytest

from mcp_notebook import Client

from .conftest import python_server

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaked_processes")]


async def test_a_tool_run_at_once_keeps_its_result_on_a_done_handle() -> None:
    async with Client(python_server("tasks_server.py")) as client:
        first = await client.start_tool("echo", {"text": "one"})
        second = await client.start_tool("echo", {"text": "two"})
        assert first is not second
        for handle, text in ((first, "one"), (second, "two")):
            assert handle.done
            assert handle.task_id == ""
            assert handle.status == "completed"
            assert handle.tool == "echo"
            assert handle.error is None
            assert (await handle.result()).text == text
        assert client.tasks == []  # not tasks: nothing to follow or attach to
