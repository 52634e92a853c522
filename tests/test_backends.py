"""The stdio transport's two pipe implementations, and the core on trio as well as asyncio."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from mcp_notebook import Client, McpError
from mcp_notebook.transports import _pipes
from tests.conftest import python_server
from tests.raises import raises_mcp

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaked_processes")]


@pytest.fixture(params=["asyncio", "asyncio-anyio-pipes", "trio"])
def anyio_backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "asyncio-anyio-pipes":
        monkeypatch.setattr(_pipes, "on_asyncio", lambda: False)
        return "asyncio"
    return str(request.param)


async def test_calls_crash_and_restart_on_every_backend(anyio_backend: str) -> None:
    async with Client(python_server("bad_server.py"), timeout=10) as client:
        assert client.era == "legacy"
        assert (await client.call_tool("echo", {"n": 5})).text
        with pytest.raises(McpError) as caught:
            await client.call_tool("crash")
        assert caught.value.kind == "transport"
        assert (await client.call_tool("echo", {"n": 6})).text
        assert client.stats.reconnects == 1


async def test_a_call_that_may_have_reached_a_crashed_server_is_never_sent_again(
    anyio_backend: str, tmp_path: Path
) -> None:
    """The server dies while a large request is still being written (after reading its start).

    The bytes were handed to the OS, so the request may have run: the call fails as a transport
    error that says so, and the restarted server never sees it (it would crash that one too).
    """
    log = tmp_path / "log.jsonl"
    server = python_server("bad_server.py", "--log", str(log), "--max-line", str(64 * 1024))
    async with Client(server, timeout=10, backoff_initial=0.01) as client:
        with pytest.raises(McpError) as caught:
            await client.call_tool("crash", {"pad": "x" * (2 * 1024 * 1024)})
        assert caught.value.kind == "transport"
        assert "may or may not have run" in caught.value.message
        assert (await client.call_tool("echo", {"n": 7})).text == "7"  # the restarted server
        assert client.stats.reconnects == 1
    received = [json.loads(line) for line in log.read_text().splitlines()]
    assert len([m for m in received if "partial" in m]) == 1, "the request reached a server twice"


async def test_a_call_after_the_server_exited_is_sent_to_the_restarted_one(anyio_backend: str) -> None:
    """A write that starts after the server is gone provably wrote nothing: it goes to the next one."""
    async with Client(python_server("bad_server.py"), timeout=10, backoff_initial=0.01) as client:
        with raises_mcp("transport"):
            await client.call_tool("crash")
        assert (await client.call_tool("echo", {"n": 8})).text == "8"


async def test_connect_under_a_deadline_then_use_and_close_in_later_steps(anyio_backend: str) -> None:
    """connect() leaves no task group open in the caller's task, so a scope around it exits cleanly."""
    client = Client(python_server("bad_server.py"), timeout=10)
    try:
        with anyio.fail_after(5):
            await client.connect()
        assert (await client.call_tool("echo", {"n": 1})).text == "1"
    finally:
        with anyio.fail_after(10):
            await client.aclose()
    assert client.status == "closed"


async def test_a_client_connected_in_one_task_is_used_and_closed_in_another(anyio_backend: str) -> None:
    """The notebook pattern: each cell is a task of its own; the client outlives the cell that made it."""
    client = Client(python_server("bad_server.py"), timeout=10)
    async with anyio.create_task_group() as tg:
        tg.start_soon(client.connect)
    try:
        assert client.status == "ready"
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, "echo", {"n": 2})
    finally:
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.aclose)
    assert client.status == "closed"
