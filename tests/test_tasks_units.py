"""The task poller's behaviour in the cases real servers do not produce on demand (in-memory fake).

Status pushed instead of polled, a server that forgets a task, malformed task readings, input this
client cannot give, the same input request seen twice, waits that end with the client, and the
poller ending with the client. Real servers are in test_tasks.py.
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import anyio
import pytest

from mcp_notebook import Client, McpError
from mcp_notebook.protocol._task_shapes import TASKS_EXTENSION
from tests.fakes import NO_REPLY, FakeConnection, FakeServer, RpcError, eventually, text_result
from tests.raises import raises_mcp

pytestmark = pytest.mark.anyio

CORE_CAPS = {"tools": {}, "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}
EXT_CAPS = {"tools": {}, "extensions": {TASKS_EXTENSION: {}}}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class ScriptedTasks:
    """A task store for a FakeServer: tasks move only when a test says so."""

    def __init__(self, server: FakeServer, flavour: str, *, poll_ms: int = 50) -> None:
        self.server = server
        self.flavour = flavour
        self.poll_ms = poll_ms
        self.tasks: dict[str, dict[str, Any]] = {}
        self.results: dict[str, dict[str, Any]] = {}
        self.ended: dict[str, anyio.Event] = {}
        self.updates: list[dict[str, Any]] = []
        self.forget_all = False
        self.get_answer: Any = None  # when set, tasks/get answers this instead
        self._ids = itertools.count(1)
        server.on("tasks/get", self._get)
        server.on("tasks/result", self._result)
        server.on("tasks/cancel", self._cancel)
        server.on("tasks/update", self._update)

    def tool(self, name: str, support: str | None = "required") -> None:
        self.server.tool(name, self._call)
        if support is not None and self.flavour == "core":
            self.server.tools[-1]["execution"] = {"taskSupport": support}

    def wire(self, task_id: str) -> dict[str, Any]:
        task = dict(self.tasks[task_id])
        if self.flavour == "extension":
            task["pollIntervalMs"] = task.pop("pollInterval")
            if task["status"] == "completed":
                task["result"] = self.results[task_id]
        return task

    async def _call(self, message: dict[str, Any], conn: FakeConnection) -> Any:
        task_id = f"task-{next(self._ids)}"
        self.tasks[task_id] = {"taskId": task_id, "status": "working", "pollInterval": self.poll_ms}
        self.ended[task_id] = anyio.Event()
        if self.flavour == "core":
            return {"task": self.wire(task_id)}
        return {**self.wire(task_id), "resultType": "task"}

    async def move(
        self, task_id: str, status: str, message: str | None = None, *, push: bool = False, **extra: Any
    ) -> None:
        self.tasks[task_id].update(status=status, **extra)
        if message is not None:
            self.tasks[task_id]["statusMessage"] = message
        if status in ("completed", "failed", "cancelled"):
            self.results.setdefault(task_id, text_result(f"done {task_id}"))
            self.ended[task_id].set()
        if push:
            method = "notifications/tasks/status" if self.flavour == "core" else "notifications/tasks"
            await self.server.connection.notify(method, self.wire(task_id))

    async def _get(self, message: dict[str, Any], conn: FakeConnection) -> Any:
        task_id = message["params"]["taskId"]
        if self.forget_all or task_id not in self.tasks:
            raise RpcError(-32602, f"Task {task_id} not found")
        if self.get_answer is not None:
            return self.get_answer
        return self.wire(task_id)

    async def _result(self, message: dict[str, Any], conn: FakeConnection) -> Any:
        task_id = message["params"]["taskId"]
        await self.ended[task_id].wait()
        if self.tasks[task_id]["status"] == "cancelled":
            raise RpcError(-32603, "no result stored")
        return self.results[task_id]

    async def _cancel(self, message: dict[str, Any], conn: FakeConnection) -> Any:
        task_id = message["params"]["taskId"]
        await self.move(task_id, "cancelled", "Client cancelled task execution.")
        return self.wire(task_id) if self.flavour == "core" else {}

    async def _update(self, message: dict[str, Any], conn: FakeConnection) -> Any:
        self.updates.append(message["params"])
        return {}


def _setup(flavour: str, **options: Any) -> tuple[FakeServer, ScriptedTasks]:
    era = "legacy" if flavour == "core" else "modern"
    server = FakeServer(era, capabilities=CORE_CAPS if flavour == "core" else EXT_CAPS)
    return server, ScriptedTasks(server, flavour, **options)


def _gets(server: FakeServer) -> int:
    return len(server.requests("tasks/get"))


@pytest.mark.parametrize("flavour", ["core", "extension"])
async def test_pushed_status_updates_the_handle_and_quiets_the_polls(flavour: str) -> None:
    server, tasks = _setup(flavour, poll_ms=200)
    tasks.tool("job")
    async with Client(server) as client:
        handle = await client.start_tool("job")
        seen: list[str | None] = []
        handle.on_change(lambda h: seen.append(h.status_message))
        before = _gets(server)
        for step in range(5):
            await tasks.move(handle.task_id, "working", f"step {step}", push=True)
            await anyio.sleep(0.1)
        assert handle.status_message == "step 4"
        assert seen == [f"step {n}" for n in range(5)]
        # Five pushes in 0.5 s at a 0.2 s interval: polling waits while the server keeps talking.
        assert _gets(server) - before <= 1
        await tasks.move(handle.task_id, "completed", push=True)
        result = await handle.result(timeout=5)
        assert result.text == f"done {handle.task_id}"


async def test_without_pushes_the_task_is_polled_at_its_interval() -> None:
    server, tasks = _setup("extension", poll_ms=50)
    tasks.tool("job")
    async with Client(server) as client:
        handle = await client.start_tool("job")
        await anyio.sleep(0.6)
        assert _gets(server) >= 4  # about a dozen at 50 ms; a floor that survives a slow machine
        await tasks.move(handle.task_id, "working", "moving")
        await eventually(lambda: handle.status_message == "moving")
        await tasks.move(handle.task_id, "completed")
        await handle.result(timeout=5)
        polls = _gets(server)
        await anyio.sleep(0.3)
        assert _gets(server) == polls, "a finished task is not polled any more"


@pytest.mark.parametrize("flavour", ["core", "extension"])
async def test_a_task_the_server_forgot_ends_with_an_error_that_says_so(flavour: str) -> None:
    server, tasks = _setup(flavour)
    tasks.tool("job")
    async with Client(server) as client:
        handle = await client.start_tool("job")
        tasks.forget_all = True
        with pytest.raises(McpError) as info:
            await handle.result(timeout=5)
        assert info.value.kind == "server"
        assert "no longer knows" in info.value.message
        assert handle.done
        assert handle.error is info.value


async def test_malformed_readings_are_retried_with_backoff_not_fatal() -> None:
    server, tasks = _setup("extension", poll_ms=50)
    tasks.tool("job")
    async with Client(server) as client:
        handle = await client.start_tool("job")
        tasks.get_answer = {"taskId": handle.task_id, "status": "exploded"}
        await anyio.sleep(1.2)
        bad = _gets(server)
        # Backing off: 50 ms polls would be ~24 in 1.2 s; with backoff from 0.5 s, at most a few.
        assert 1 <= bad <= 6
        assert not handle.done
        assert client.status == "ready"
        tasks.get_answer = None
        await tasks.move(handle.task_id, "completed")
        assert (await handle.result(timeout=20)).text == f"done {handle.task_id}"


async def test_input_this_client_cannot_give_is_reported_not_waited_for_forever() -> None:
    server, tasks = _setup("extension")
    tasks.tool("job")
    async with Client(server) as client:  # no elicitation handler
        handle = await client.start_tool("job")
        request = {"method": "elicitation/create", "params": {"message": "name?", "requestedSchema": {}}}
        await tasks.move(handle.task_id, "input_required", inputRequests={"k1": request})
        with raises_mcp("protocol") as info:
            await handle.result(timeout=5)
        assert "elicitation" in info.value.message
        assert "cancel" in info.value.message
        assert handle.status == "input_required"
        assert not handle.done
        assert tasks.updates == []


async def test_each_input_request_is_answered_once_across_polls() -> None:
    server, tasks = _setup("extension", poll_ms=30)
    tasks.tool("job")
    answered: list[dict[str, Any]] = []

    def elicitation(params: dict[str, Any]) -> dict[str, Any]:
        answered.append(params)
        return {"name": "Ada"}

    async with Client(server, elicitation=elicitation) as client:
        handle = await client.start_tool("job")
        request = {"method": "elicitation/create", "params": {"message": "name?", "requestedSchema": {}}}
        await tasks.move(handle.task_id, "input_required", inputRequests={"k1": request})
        await eventually(lambda: tasks.updates)
        await anyio.sleep(0.3)  # ~10 more polls that still show k1 pending
        assert len(answered) == 1
        assert tasks.updates == [
            {
                "taskId": handle.task_id,
                "inputResponses": {"k1": {"action": "accept", "content": {"name": "Ada"}}},
                "_meta": tasks.updates[0]["_meta"],
            }
        ]
        # A second round asks a new key: answered too.
        await tasks.move(handle.task_id, "input_required", inputRequests={"k1": request, "k2": request})
        await eventually(lambda: len(tasks.updates) == 2)
        assert list(tasks.updates[1]["inputResponses"]) == ["k2"]
        await tasks.move(handle.task_id, "completed")
        await handle.result(timeout=5)


async def test_a_wait_ends_when_the_client_closes_and_names_the_task() -> None:
    server, tasks = _setup("core")
    tasks.tool("job")
    client = Client(server)
    await client.connect()
    handle = await client.start_tool("job")
    failure: list[McpError] = []

    async def waiter() -> None:
        try:
            await handle.result()
        except McpError as exc:
            failure.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(waiter)
        await anyio.sleep(0.1)
        await client.aclose()
    (error,) = failure
    assert error.kind == "closed"
    assert handle.task_id in error.message
    assert "get_task" in error.message


async def test_the_poller_and_its_requests_end_with_the_client() -> None:
    server, tasks = _setup("core", poll_ms=20)
    tasks.tool("job")
    before = {t for t in asyncio.all_tasks() if not t.done()}
    async with Client(server) as client:
        handles = [await client.start_tool("job") for _ in range(3)]
        await anyio.sleep(0.2)
        assert client._tasks.following == 3
        assert all(not h.done for h in handles)
    await anyio.sleep(0.05)
    leftover = {t for t in asyncio.all_tasks() if not t.done()} - before
    assert leftover == set()


async def test_cancelling_an_interrupted_wait_sends_nothing_but_an_abandoned_call_cancels() -> None:
    server, tasks = _setup("core")
    tasks.tool("job")
    async with Client(server) as client:
        handle = await client.start_tool("job")
        with anyio.move_on_after(0.2):
            await handle.result()
        assert server.requests("tasks/cancel") == []
        with anyio.move_on_after(0.2):
            await client.call_tool("job")
        (cancel,) = server.requests("tasks/cancel")
        assert cancel["params"]["taskId"] == client.tasks[-1].task_id
        assert client.tasks[-1].status == "cancelled"
        assert not handle.done


async def test_a_finished_task_stays_finished_when_a_stale_reading_arrives() -> None:
    server, tasks = _setup("core")
    tasks.tool("job")
    async with Client(server) as client:
        handle = await client.start_tool("job")
        await tasks.move(handle.task_id, "completed", push=True)
        await handle.result(timeout=5)
        # A reading from before the end, delivered late.
        await server.connection.notify(
            "notifications/tasks/status",
            {"taskId": handle.task_id, "status": "working", "statusMessage": "late"},
        )
        await anyio.sleep(0.1)
        assert handle.status == "completed"
        assert handle.status_message != "late"


async def test_task_calls_are_refused_before_sending_when_they_cannot_be_met() -> None:
    server, tasks = _setup("core")
    tasks.tool("needs", "required")
    tasks.tool("never", "forbidden")
    server.tool("plain")
    async with Client(server) as client:
        for name, task in (("needs", False), ("never", True), ("plain", True)):
            with pytest.raises(McpError) as info:
                await client.call_tool(name, task=task)
            assert info.value.kind == "invalid"
        with raises_mcp("invalid"):
            await client.start_tool("never")
        assert server.calls("needs") == server.calls("never") == server.calls("plain") == []


async def test_a_server_without_tasks_refuses_task_calls_and_runs_the_rest() -> None:
    server = FakeServer("modern")
    server.tool("plain")
    async with Client(server) as client:
        assert client.tasks_flavour is None
        assert (await client.call_tool("plain")).text == "ok"
        for attempt in (client.start_tool("plain"), client.get_task("x"), client.list_tasks()):
            with pytest.raises(McpError) as info:
                await attempt
            assert info.value.kind == "invalid"


async def test_status_notifications_for_unknown_or_malformed_tasks_are_ignored() -> None:
    server, tasks = _setup("core")
    tasks.tool("job")
    async with Client(server) as client:
        handle = await client.start_tool("job")
        for params in (
            {"taskId": "stranger", "status": "completed"},
            {"taskId": handle.task_id},
            {"status": 3},
            None,
        ):
            await server.connection.notify("notifications/tasks/status", params)
        await anyio.sleep(0.1)
        assert client.status == "ready"
        assert [h.task_id for h in client.tasks] == [handle.task_id]
        assert handle.status == "working"
        server.tool_handlers["job"] = _no_reply
        await handle.cancel()


async def _no_reply(message: dict[str, Any], conn: FakeConnection) -> Any:
    return NO_REPLY


async def test_a_client_forgets_its_oldest_finished_tasks_beyond_its_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("mcp_notebook.client._task_handles._MAX_KEPT", 3)
    server, tasks = _setup("core")
    tasks.tool("job")
    async with Client(server) as client:
        first = [await client.start_tool("job") for _ in range(3)]
        for handle in first[:2]:
            await tasks.move(handle.task_id, "completed", push=True)
            await handle.result(timeout=5)
        newer = [await client.start_tool("job") for _ in range(2)]
        # The two finished ones made room; the running one is kept though it is the oldest.
        assert [h.task_id for h in client.tasks] == [first[2].task_id, *(h.task_id for h in newer)]
        extra = await client.start_tool("job")
        assert len(client.tasks) == 4  # nothing finished to forget: running tasks are never dropped
        assert client.tasks[-1] is extra


async def test_a_core_task_waiting_for_input_this_client_cannot_give_is_not_called_failed() -> None:
    server, tasks = _setup("core")
    tasks.tool("job")
    asked: list[dict[str, Any]] = []

    async def result_that_asks(message: dict[str, Any], conn: FakeConnection) -> Any:
        answer = await conn.request("elicitation/create", {"message": "name?", "requestedSchema": {}})
        asked.append(answer)
        raise RpcError(-32603, "the client could not answer the elicitation")

    server.on("tasks/result", result_that_asks)
    async with Client(server) as client:  # no elicitation handler
        handle = await client.start_tool("job")
        await tasks.move(handle.task_id, "input_required", "waiting for a name", push=True)
        with raises_mcp("server") as info:
            await handle.result(timeout=5)
        assert "elicitation" in info.value.message
        assert "error" in asked[0], "the client refused the request it has no handler for"
        assert handle.status == "input_required"  # as the server says; not made up as "failed"
        assert not handle.done
        await anyio.sleep(0.3)
        assert len(asked) == 1, "not asked again while the task still waits"
        # Once the task moves on, it is followed to its end as usual.
        server.handlers["tasks/result"] = tasks._result
        await tasks.move(handle.task_id, "completed", push=True)
        await eventually(lambda: handle.status == "completed")
        assert (await handle.result(timeout=5)).text == f"done {handle.task_id}"
