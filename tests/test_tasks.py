"""Tasks against real servers, in both flavours and over both transports.

- npm server-everything (2025-11-25 core tasks, legacy era): ``simulate-research-query`` is a
  required task of four stages, about a second each; ``ambiguous: true`` makes it ask for input
  (an elicitation that arrives during the blocking ``tasks/result``).
- ``tests/servers/tasks_server.py``: fastmcp with the fastmcp-tasks extension (2026-07-28
  ``io.modelcontextprotocol/tasks``, modern era): ``crunch`` (required), ``optional_sum``
  (optional), ``ask_name`` (asks for input through ``inputRequests``), ``breaks``, ``echo``.

Each is reached over stdio and over Streamable HTTP.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import pytest

from mcp_notebook import Client, McpError
from tests.conftest import SERVERS, everything_server
from tests.http_peers import everything_http, tasks_http

pytestmark = pytest.mark.anyio

TASKS_SERVER = [sys.executable, str(SERVERS / "tasks_server.py")]
RESEARCH = "simulate-research-query"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@contextlib.contextmanager
def _target(kind: str) -> Iterator[Any]:
    if kind == "everything-stdio":
        yield everything_server()
    elif kind == "tasks-stdio":
        yield TASKS_SERVER
    elif kind == "everything-http":
        with everything_http() as peer:
            yield peer.url
    elif kind == "tasks-http":
        with tasks_http() as peer:
            yield peer.url
    else:
        raise ValueError(kind)


def _answers(params: dict[str, Any]) -> dict[str, Any]:
    """An elicitation handler that fills whatever form either server asks for."""
    properties = params.get("requestedSchema", {}).get("properties", {})
    if "name" in properties:
        return {"name": "Ada"}
    answer: dict[str, Any] = {}
    for key, spec in properties.items():
        choices = spec.get("enum") or [option.get("const") for option in spec.get("oneOf", [])]
        answer[key] = choices[0] if choices else "the second one"
    return answer


@contextlib.asynccontextmanager
async def _client(kind: str, **options: Any) -> AsyncIterator[Client]:
    with _target(kind) as target:
        async with Client(target, elicitation=options.pop("elicitation", _answers), **options) as client:
            yield client


# What each server's long tool is, with arguments that keep it running a while.
LONG = {
    "everything": (RESEARCH, {"topic": "owls"}),
    "tasks": ("crunch", {"steps": 6, "delay": 0.4}),
}
ASKING = {
    "everything": (RESEARCH, {"topic": "bats", "ambiguous": True}),
    "tasks": ("ask_name", {"greeting": "Hi"}),
}
FLAVOUR = {"everything": "core", "tasks": "extension"}
PEERS = ["everything-stdio", "everything-http", "tasks-stdio", "tasks-http"]


def _server(kind: str) -> str:
    return kind.split("-")[0]


@pytest.mark.parametrize("kind", PEERS)
async def test_call_tool_on_a_task_tool_returns_the_final_result(
    kind: str, no_leaked_processes: None
) -> None:
    server = _server(kind)
    async with _client(kind) as client:
        assert client.tasks_flavour == FLAVOUR[server]
        name, arguments = LONG[server]
        if server == "tasks":
            arguments = {"steps": 3, "delay": 0.1}
        messages: list[str] = []
        result = await client.call_tool(name, arguments, progress=lambda _p, _t, m: messages.append(m))
        assert not result.is_error
        if server == "tasks":
            assert result.structured_content == {"steps": 3}
        else:
            assert "Research Report: owls" in result.text
        # The call made a task and followed it to its end; its status messages were its progress.
        (handle,) = client.tasks
        assert handle.tool == name
        assert handle.status == "completed"
        assert handle.done
        assert messages, "the task's status messages reach the progress callback"


@pytest.mark.parametrize("kind", PEERS)
async def test_start_tool_returns_at_once_then_refresh_result_and_attach(
    kind: str, no_leaked_processes: None
) -> None:
    server = _server(kind)
    name, arguments = LONG[server]
    async with _client(kind) as client:
        handle = await client.start_tool(name, arguments)
        assert handle.status == "working"
        assert not handle.done
        assert handle.task_id
        assert handle.task_id in repr(handle)
        # The server's status message shows after a refresh (it says which stage or step).
        with anyio.fail_after(30):
            while not handle.status_message:
                await anyio.sleep(0.1)
                await handle.refresh()
        assert handle.status in ("working", "completed")
        attached = await client.get_task(handle.task_id)
        assert attached is handle
        result = await handle.result(timeout=60)
        assert handle.status == "completed"
        assert handle.ended is not None
        assert handle.ended >= handle.started
        assert not result.is_error
        # The server agrees.
        await handle.refresh()
        assert handle.status == "completed"


@pytest.mark.parametrize("kind", PEERS)
async def test_cancel_ends_the_task_cancelled_and_the_server_agrees(
    kind: str, no_leaked_processes: None
) -> None:
    server = _server(kind)
    name, arguments = LONG[server]
    if server == "tasks":
        arguments = {"steps": 50, "delay": 0.2}
    async with _client(kind) as client:
        handle = await client.start_tool(name, arguments)
        assert await handle.cancel() is True
        assert handle.status == "cancelled"
        with pytest.raises(McpError) as info:
            await handle.result(timeout=10)
        assert info.value.kind == "cancelled"
        # The server itself says so.
        raw = await client.connection.request("tasks/get", {"taskId": handle.task_id})
        assert raw["status"] == "cancelled"
        # Cancelling again is harmless and says it is cancelled.
        assert await handle.cancel() is True


@pytest.mark.parametrize("kind", PEERS)
async def test_an_input_request_is_answered_by_the_elicitation_handler(
    kind: str, no_leaked_processes: None
) -> None:
    server = _server(kind)
    asked: list[dict[str, Any]] = []

    async def elicitation(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return _answers(params)

    name, arguments = ASKING[server]
    async with _client(kind, elicitation=elicitation) as client:
        handle = await client.start_tool(name, arguments)
        result = await handle.result(timeout=60)
        assert handle.status == "completed"
        assert len(asked) == 1, "asked once, answered once"
        if server == "tasks":
            assert result.text == "Hi, Ada!"
        else:
            assert "Research Report: bats" in result.text


@pytest.mark.parametrize("kind", ["everything-stdio", "tasks-http"])
async def test_an_ordinary_tool_on_the_same_server_is_unaffected(
    kind: str, no_leaked_processes: None
) -> None:
    server = _server(kind)
    name, arguments = LONG[server]
    async with _client(kind) as client:
        handle = await client.start_tool(name, arguments)
        if server == "everything":
            result = await client.call_tool("echo", {"message": "plain"})
            assert result.text == "Echo: plain"
        else:
            result = await client.call_tool("echo", {"text": "plain"})
            assert result.text == "plain"
        assert len(client.tasks) == 1, "the ordinary call made no task"
        assert not handle.done
        await handle.cancel()


async def test_an_optional_tool_runs_inline_unless_asked(no_leaked_processes: None) -> None:
    async with _client("tasks-stdio") as client:
        inline = await client.call_tool("optional_sum", {"a": 2, "b": 3})
        assert inline.structured_content == {"result": 5}
        assert client.tasks == []
        as_task = await client.call_tool("optional_sum", {"a": 2, "b": 3}, task=True)
        assert as_task.structured_content == {"result": 5}
        (handle,) = client.tasks
        assert handle.tool == "optional_sum"
        assert handle.status == "completed"
        started = await client.start_tool("optional_sum", {"a": 1, "b": 1})
        assert (await started.result(timeout=10)).structured_content == {"result": 2}


async def test_a_required_tool_is_learned_from_the_servers_refusal_once(no_leaked_processes: None) -> None:
    """fastmcp's tools do not say they need a task: the first call is refused (-32021, unexecuted)
    and resent with the extension; later calls go straight with it."""
    async with _client("tasks-stdio") as client:
        for _ in range(2):
            result = await client.call_tool("crunch", {"steps": 1, "delay": 0.05})
            assert result.structured_content == {"steps": 1}
        assert client.stats.outcomes.get("server", 0) == 1  # the one -32021
        with pytest.raises(McpError) as info:
            await client.call_tool("crunch", {"steps": 1, "delay": 0.05}, task=False)
        assert info.value.kind == "invalid"


async def test_a_task_the_tool_fails_reports_the_error_result(no_leaked_processes: None) -> None:
    async with _client("tasks-stdio") as client:
        handle = await client.start_tool("breaks")
        result = await handle.result(timeout=10)
        assert result.is_error
        assert result.text == "it broke on purpose"
        with pytest.raises(McpError) as info:
            await handle.result(raise_on_error=True)
        assert info.value.kind == "server"
        assert "it broke on purpose" in info.value.message


async def test_core_tasks_are_listed_and_unknown_ids_are_refused(no_leaked_processes: None) -> None:
    async with _client("everything-stdio") as client:
        first = await client.start_tool(RESEARCH, {"topic": "a"})
        second = await client.start_tool(RESEARCH, {"topic": "b"})
        listed = await client.list_tasks()
        ids = {handle.task_id for handle in listed}
        assert {first.task_id, second.task_id} <= ids
        assert next(h for h in listed if h.task_id == first.task_id) is first
        with pytest.raises(McpError) as info:
            await client.get_task("no-such-task")
        assert info.value.kind == "server"
        for handle in (first, second):
            await handle.cancel()


async def test_the_extension_has_no_task_list(no_leaked_processes: None) -> None:
    async with _client("tasks-stdio") as client:
        with pytest.raises(McpError) as info:
            await client.list_tasks()
        assert info.value.kind == "invalid"
        assert "get_task" in info.value.message


async def test_waiting_is_not_owning_an_interrupted_wait_leaves_the_task_running(
    no_leaked_processes: None,
) -> None:
    async with _client("tasks-stdio") as client:
        handle = await client.start_tool("crunch", {"steps": 8, "delay": 0.2})
        with anyio.move_on_after(0.3):
            await handle.result()
        assert not handle.done
        # A later wait picks it up where it is, and it completes.
        result = await handle.result(timeout=30)
        assert result.structured_content == {"steps": 8}


async def test_an_abandoned_call_tool_cancels_its_task(no_leaked_processes: None) -> None:
    async with _client("everything-stdio") as client:
        with anyio.move_on_after(1.5):
            await client.call_tool(RESEARCH, {"topic": "abandoned"})
        (handle,) = client.tasks
        assert handle.status == "cancelled"
        with pytest.raises(McpError) as info:
            await client.call_tool(RESEARCH, {"topic": "too slow"}, timeout=1.0)
        assert info.value.kind == "timeout"
        assert "cancelled" in info.value.message
        assert client.tasks[-1].status == "cancelled"


async def test_a_task_survives_its_client_and_is_found_by_id_from_another(no_leaked_processes: None) -> None:
    """What a notebook does after a kernel restart: a new client attaches by the task id.

    Over the stateless modern binding the task belongs to the server, not to a connection.
    """
    with tasks_http() as peer:
        async with Client(peer.url) as first:
            handle = await first.start_tool("crunch", {"steps": 4, "delay": 0.3})
            task_id = handle.task_id
        async with Client(peer.url) as second:
            attached = await second.get_task(task_id)
            assert attached.tool is None  # the server does not say which tool; the id is enough
            result = await attached.result(timeout=60)
            assert result.structured_content == {"steps": 4}


async def test_a_core_task_belongs_to_its_http_session(no_leaked_processes: None) -> None:
    """server-everything keeps tasks per legacy session: a new session cannot see them, and says so."""
    with everything_http() as peer:
        async with Client(peer.url) as first:
            handle = await first.start_tool(RESEARCH, {"topic": "restart"})
            task_id = handle.task_id
            assert task_id in {h.task_id for h in await first.list_tasks()}
            async with Client(peer.url) as second:
                with pytest.raises(McpError) as info:
                    await second.get_task(task_id)
                assert info.value.kind == "server"
                assert task_id not in {h.task_id for h in await second.list_tasks()}
            await handle.cancel()
