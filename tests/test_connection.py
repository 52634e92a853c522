"""The connection logic, against a scripted fake server over the in-memory transport.

Each test is named for the behaviour it protects and asserts what a user of ``Client`` sees (results,
errors, status, stats) and what the server received on the wire.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_notebook import McpError
from mcp_notebook.client import Client
from mcp_notebook.transports import MemoryTransport
from tests.fakes import (
    MODERN_VERSION,
    NO_REPLY,
    FakeConnection,
    FakeServer,
    RpcError,
    after,
    eventually,
    fail,
    never,
    reply,
    text_result,
)
from tests.raises import raises_mcp
from tests.timing import BACKENDS, VIRTUAL_SLOP, backend_param, scheduling_noise

pytestmark = pytest.mark.anyio

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"
UI = "io.modelcontextprotocol/ui"
UI_SETTINGS = {"mimeTypes": ["text/html;profile=mcp-app"]}
META_INFO = "io.modelcontextprotocol/clientInfo"
ELICIT_PARAMS = {
    "message": "Your name?",
    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
}
SAMPLING_PARAMS = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 5}


async def crash(message: dict[str, Any], conn: FakeConnection) -> Any:
    """A tool whose server dies while running it."""
    conn.drop()
    return NO_REPLY


def file_uri(path: Path) -> str:
    return path.resolve().as_uri()


def cancelled_ids(server: FakeServer) -> list[Any]:
    return [m["params"]["requestId"] for m in server.notifications("notifications/cancelled")]


# --- era negotiation ----------------------------------------------------------------------------


async def test_modern_server_negotiates_modern_era_and_every_request_carries_the_meta_envelope():
    server = FakeServer("modern")
    server.tool("echo")
    async with Client(server, client_info={"name": "tester", "version": "9"}) as client:
        assert client.era == "modern"
        assert client.protocol_version == MODERN_VERSION
        await client.list_tools()
        await client.call_tool("echo", {"x": 1})
        await client.ping()
    assert [m["method"] for m in server.requests()] == [
        "server/discover",
        "tools/list",
        "tools/call",
        "server/discover",  # ping() on a modern server
    ]
    for request in server.requests():
        meta = request["params"]["_meta"]
        assert meta[META_VERSION] == MODERN_VERSION
        if request["method"] == "tools/call":
            # A call that is not to become a task leaves the tasks extension out (see test_tasks).
            assert meta[META_CAPS] == {"extensions": {UI: UI_SETTINGS}}
        else:
            assert meta[META_CAPS] == {"extensions": {"io.modelcontextprotocol/tasks": {}, UI: UI_SETTINGS}}
        assert meta[META_INFO] == {"name": "tester", "version": "9"}
    assert server.calls("echo")[0]["params"]["arguments"] == {"x": 1}
    assert not server.requests("initialize")
    assert not server.notifications("notifications/initialized")


async def test_legacy_server_that_refuses_discover_gets_initialize_then_initialized():
    server = FakeServer("legacy")
    async with Client(server) as client:
        assert client.era == "legacy"
        assert client.protocol_version == "2025-11-25"
        await client.ping()
    assert [m["method"] for m in server.received] == [
        "server/discover",
        "initialize",
        "notifications/initialized",
        "ping",
    ]
    init = server.requests("initialize")[0]["params"]
    assert init["protocolVersion"] == "2025-11-25"
    assert init["clientInfo"]["name"] == "mcp-notebook"
    assert init["capabilities"] == {"extensions": {UI: UI_SETTINGS}}  # the ui extension, in both eras
    assert "params" not in server.requests("ping")[0]  # no modern envelope in the legacy era


async def test_protocol_legacy_never_sends_discover():
    server = FakeServer("legacy")
    async with Client(server, protocol="legacy") as client:
        assert client.era == "legacy"
    assert [m["method"] for m in server.received] == ["initialize", "notifications/initialized"]


async def test_protocol_modern_does_not_fall_back_to_initialize():
    server = FakeServer("legacy")
    with pytest.raises(McpError):
        async with Client(server, protocol="modern"):
            pass
    assert not server.requests("initialize")


async def test_legacy_server_that_never_answers_discover_falls_back_after_probe_timeout():
    server = FakeServer("silent")
    start = anyio.current_time()
    async with Client(server, probe_timeout=0.15) as client:
        elapsed = anyio.current_time() - start
        assert client.era == "legacy"
    assert 0.14 <= elapsed < 1.5
    discover = server.requests("server/discover")[0]
    assert [m["method"] for m in server.received] == [
        "server/discover",
        "notifications/cancelled",
        "initialize",
        "notifications/initialized",
    ]
    assert cancelled_ids(server) == [discover["id"]]


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_server_info_capabilities_and_instructions_are_exposed(era: str):
    caps = {"tools": {"listChanged": True}, "logging": {}}
    server = FakeServer(era, name="weather", capabilities=caps, instructions="Ask about the weather.")
    async with Client(server) as client:
        assert client.server_info == {"name": "weather", "version": "1.0"}
        assert client.server_capabilities == caps
        assert client.instructions == "Ask about the weather."
        assert client.status == "ready"
        assert "weather" in repr(client)


# --- request ids --------------------------------------------------------------------------------


async def test_request_ids_are_never_reused_even_across_a_reconnect():
    server = FakeServer("legacy")
    server.tool("echo")
    server.tool("crash", crash)
    transport = MemoryTransport(server)
    async with Client(transport, backoff_initial=0.01) as client:
        await client.list_tools()
        await client.call_tool("echo")
        with pytest.raises(McpError):
            await client.call_tool("crash")
        await eventually(lambda: client.stats.reconnects == 1 and client.status == "ready")
        await client.call_tool("echo")
        await client.ping()
    ids = [m["id"] for m in server.requests()]
    assert len(server.connections) == 2
    assert all(isinstance(i, int) for i in ids)
    assert ids == sorted(set(ids)), ids  # strictly increasing, so never reused


# --- deadlines and cancellation -----------------------------------------------------------------


@pytest.mark.parametrize("anyio_backend", [backend_param(name) for name in BACKENDS], ids=BACKENDS)
async def test_unanswered_request_times_out_and_the_server_is_asked_to_cancel_it():
    server = FakeServer()
    server.tool("stuck", never())
    server.tool("echo")
    async with Client(server) as client:
        await client.list_tools()
        async with scheduling_noise() as noise:
            start = anyio.current_time()
            with pytest.raises(McpError) as info:
                await client.call_tool("stuck", timeout=0.2)
            elapsed = anyio.current_time() - start
        assert info.value.kind == "timeout"
        assert info.value.code == -32001
        # At its deadline: to the millisecond on trio's virtual clock, within 50 ms plus the
        # measured scheduling noise on asyncio's real one (tests/timing.py).
        assert 0.2 - VIRTUAL_SLOP <= elapsed <= 0.2 + noise.allowance(), f"{elapsed * 1000:.1f} ms"
        call_id = server.calls("stuck")[0]["id"]
        await server.wait_for("notifications/cancelled", lambda m: m["params"]["requestId"] == call_id)
        assert client.stats.timeouts == 1
        assert client.stats.in_flight == 0
        assert (await client.call_tool("echo")).text == "ok"  # still healthy
        assert client.status == "ready"


@pytest.mark.parametrize("anyio_backend", [backend_param(name) for name in BACKENDS], ids=BACKENDS)
async def test_a_call_that_lists_the_tools_first_has_one_deadline_for_both():
    """call_tool lists the tools to check the arguments when it has no list; the listing and the
    call used to get the whole timeout each, so a slow listing (a server busy starting, a
    reconnect) made a 0.5 s call take 0.8 s."""
    server = FakeServer()
    server.tool("stuck", never())

    async def slow_list(message: dict[str, Any], conn: FakeConnection) -> Any:
        await anyio.sleep(0.3)
        return {"tools": server.tools}

    server.on("tools/list", slow_list)
    async with Client(server) as client, scheduling_noise() as noise:
        start = anyio.current_time()
        with pytest.raises(McpError) as info:
            await client.call_tool("stuck", timeout=0.5)
        elapsed = anyio.current_time() - start
    assert info.value.kind == "timeout"
    assert len(server.calls("stuck")) == 1  # validated, then sent with what was left
    assert 0.5 - VIRTUAL_SLOP <= elapsed <= 0.5 + noise.allowance(), f"{elapsed * 1000:.1f} ms"


async def test_caller_cancellation_sends_notifications_cancelled():
    server = FakeServer()
    server.tool("stuck", never())
    async with Client(server) as client:
        await client.list_tools()
        with anyio.move_on_after(0.1) as scope:
            await client.call_tool("stuck", timeout=10)
        assert scope.cancelled_caught
        call_id = server.calls("stuck")[0]["id"]
        await server.wait_for("notifications/cancelled", lambda m: m["params"]["requestId"] == call_id)
        stats = client.stats
        assert stats.cancellations == 1
        assert stats.timeouts == 0
        assert stats.in_flight == 0
        await client.ping()


async def steps_then_done(message: dict[str, Any], conn: FakeConnection) -> Any:
    await conn.progress(message, 1, 3, "step 1")
    await anyio.sleep(0.02)
    await conn.progress(message, 2, 3, "step 2")
    await conn.progress(message, 3)
    return text_result("done")


async def test_progress_callback_receives_progress_total_and_message_in_order():
    server = FakeServer()
    server.tool("work", steps_then_done)
    seen: list[tuple[Any, ...]] = []
    async with Client(server) as client:
        result = await client.call_tool("work", progress=lambda *args: seen.append(args))
    assert result.text == "done"
    assert seen == [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, None, None)]
    token = server.calls("work")[0]["params"]["_meta"]["progressToken"]
    assert token == server.calls("work")[0]["id"]


async def test_async_progress_callback_receives_every_update_sent_before_the_result():
    server = FakeServer()
    server.tool("work", steps_then_done)
    seen: list[float] = []

    async def slow_callback(progress: float, total: float | None, message: str | None) -> None:
        seen.append(progress)
        await anyio.sleep(0.05)  # the result arrives while this runs

    async with Client(server) as client:
        result = await client.call_tool("work", progress=slow_callback)
    assert result.text == "done"
    assert seen == [1.0, 2.0, 3.0]


def progress_every(interval: float, count: int) -> Any:
    async def handler(message: dict[str, Any], conn: FakeConnection) -> Any:
        for i in range(count):
            await anyio.sleep(interval)
            await conn.progress(message, i + 1, count)
        return text_result("done")

    return handler


async def test_progress_extends_the_deadline_past_the_timeout():
    server = FakeServer()
    server.tool("long", progress_every(0.08, 8))  # ~0.64 s in all, progress every 0.08 s
    async with Client(server) as client:
        start = anyio.current_time()
        result = await client.call_tool("long", timeout=0.25, progress=lambda *a: None)
        assert result.text == "done"
        assert anyio.current_time() - start > 0.25


@pytest.mark.parametrize("anyio_backend", [backend_param(name) for name in BACKENDS], ids=BACKENDS)
async def test_max_total_timeout_bounds_progress_extensions():
    """Progress every 0.08 s keeps extending the 0.25 s deadline; max_total_timeout ends the call
    at 0.4 s all the same (to the millisecond on the virtual clock, within the measured noise on
    the real one: tests/timing.py)."""
    server = FakeServer()
    server.tool("long", progress_every(0.08, 12))  # ~0.96 s in all
    async with Client(server, max_total_timeout=0.4) as client:
        await client.list_tools()
        async with scheduling_noise() as noise:
            start = anyio.current_time()
            with raises_mcp("timeout"):
                await client.call_tool("long", timeout=0.25, progress=lambda *a: None)
            elapsed = anyio.current_time() - start
    assert 0.4 - VIRTUAL_SLOP <= elapsed <= 0.4 + noise.allowance(), f"{elapsed * 1000:.1f} ms"


@pytest.mark.parametrize("anyio_backend", [backend_param(name) for name in BACKENDS], ids=BACKENDS)
async def test_progress_does_not_extend_the_deadline_when_reset_is_off():
    server = FakeServer()
    server.tool("long", progress_every(0.08, 8))
    async with Client(server, reset_timeout_on_progress=False) as client:
        await client.list_tools()
        async with scheduling_noise() as noise:
            start = anyio.current_time()
            with raises_mcp("timeout"):
                await client.call_tool("long", timeout=0.25, progress=lambda *a: None)
            elapsed = anyio.current_time() - start
    assert 0.25 - VIRTUAL_SLOP <= elapsed <= 0.25 + noise.allowance(), f"{elapsed * 1000:.1f} ms"


def progress_under_the_call_id(interval: float, count: int) -> Any:
    """Progress every ``interval`` s naming the call's own id as its token, whether or not the
    call sent one; never an answer."""

    async def handler(message: dict[str, Any], conn: FakeConnection) -> Any:
        for i in range(count):
            await anyio.sleep(interval)
            await conn.notify("notifications/progress", {"progressToken": message["id"], "progress": i + 1})
        return NO_REPLY

    return handler


@pytest.mark.parametrize("era", ["modern", "legacy"])
@pytest.mark.parametrize("anyio_backend", [backend_param(name) for name in BACKENDS], ids=BACKENDS)
async def test_progress_under_the_call_id_does_not_extend_a_call_that_sent_no_token(era: str):
    """A call without a progress callback sends no token: progress the server sends under the
    call's id anyway is dropped, and the 0.25 s deadline stands (tests/test_call_deadline.py
    checks the same against a real server)."""
    server = FakeServer(era)
    server.tool("ticking", progress_under_the_call_id(0.05, 40))  # 2 s of progress, no answer
    async with Client(server) as client:
        await client.list_tools()
        async with scheduling_noise() as noise:
            start = anyio.current_time()
            with raises_mcp("timeout"):
                await client.call_tool("ticking", timeout=0.25)
            elapsed = anyio.current_time() - start
        assert 0.25 - VIRTUAL_SLOP <= elapsed <= 0.25 + noise.allowance(), f"{elapsed * 1000:.1f} ms"
        assert "progressToken" not in server.calls("ticking")[0]["params"].get("_meta", {})
        assert client.stats.dropped_progress >= 4  # one every 0.05 s until the deadline
        assert client.stats.timeouts == 1


# --- load limits --------------------------------------------------------------------------------


async def test_beyond_max_in_flight_a_request_is_refused_as_overloaded_without_sending():
    server = FakeServer()
    server.tool("stuck", never())
    async with Client(server, max_in_flight=2) as client:
        await client.list_tools()
        async with anyio.create_task_group() as tg:
            for _ in range(2):
                tg.start_soon(client.call_tool, "stuck")
            await eventually(lambda: len(server.calls("stuck")) == 2)
            with pytest.raises(McpError) as info:
                await client.call_tool("stuck")
            assert info.value.kind == "overloaded"
            assert client.stats.overloaded == 1
            tg.cancel_scope.cancel()
        await client.ping()  # ordered after anything the refused call could have sent
        assert len(server.calls("stuck")) == 2


# --- stray responses ----------------------------------------------------------------------------


async def test_response_after_the_timeout_is_dropped_and_counted():
    server = FakeServer()
    server.tool("late", after(0.3))
    server.tool("echo")
    async with Client(server) as client:
        await client.list_tools()
        with pytest.raises(McpError) as info:
            await client.call_tool("late", timeout=0.1)
        assert info.value.kind == "timeout"
        await eventually(lambda: client.stats.late_responses == 1)
        assert (await client.call_tool("echo")).text == "ok"
        assert client.status == "ready"


async def test_responses_with_unknown_or_wrong_ids_are_dropped_and_counted():
    async def wrong_id(message: dict[str, Any], conn: FakeConnection) -> Any:
        await conn.send({"jsonrpc": "2.0", "id": message["id"] + 1000, "result": text_result("wrong")})
        return NO_REPLY

    server = FakeServer()
    server.tool("wrong", wrong_id)
    server.tool("echo")
    async with Client(server) as client:
        await client.list_tools()
        await server.connection.send({"jsonrpc": "2.0", "id": 424242, "result": {}})
        await server.connection.send(
            {"jsonrpc": "2.0", "id": 424243, "error": {"code": -32603, "message": "who?"}}
        )
        await eventually(lambda: client.stats.late_responses == 2)
        with pytest.raises(McpError) as info:
            await client.call_tool("wrong", timeout=0.2)
        assert info.value.kind == "timeout"
        assert client.stats.late_responses == 3
        assert (await client.call_tool("echo")).text == "ok"


# --- notifications ------------------------------------------------------------------------------


async def test_notifications_iterator_receives_server_notifications():
    server = FakeServer()
    async with Client(server) as client:
        first, second = client.notifications(), client.notifications()
        await server.connection.notify("notifications/tools/list_changed")
        await server.connection.notify("notifications/message", {"level": "info", "data": "hello"})
        for queue in (first, second):
            with anyio.fail_after(2):
                a = await anext(queue)
                b = await anext(queue)
            assert a.method == "notifications/tools/list_changed"
            assert b.method == "notifications/message"
            assert b.params == {"level": "info", "data": "hello"}


async def test_notification_queue_drops_the_oldest_past_maxsize():
    server = FakeServer()
    async with Client(server) as client:
        queue = client.notifications(maxsize=2)
        before = client.stats.notifications
        for n in range(5):
            await server.connection.notify("notifications/message", {"level": "info", "data": n})
        await eventually(lambda: client.stats.notifications == before + 5)
        assert queue.dropped == 3
        assert len(queue) == 2
        assert [(await anext(queue)).params["data"] for _ in range(2)] == [3, 4]


async def test_notification_iteration_ends_when_the_client_closes():
    server = FakeServer()
    client = Client(server)
    await client.connect()
    queue = client.notifications()
    await client.aclose()
    with anyio.fail_after(2):
        assert [n async for n in queue] == []


# --- server-to-client requests (legacy era) -----------------------------------------------------


async def test_server_ping_and_unknown_methods():
    server = FakeServer("legacy")
    async with Client(server):
        response = await server.connection.request("ping")
        assert response["result"] == {}
        response = await server.connection.request("bogus/method", {})
        assert response["error"]["code"] == -32601


async def test_sync_sampling_handler_may_return_a_string():
    seen: list[dict[str, Any]] = []

    def sample(params: dict[str, Any]) -> str:
        seen.append(params)
        return "Hello there"

    server = FakeServer("legacy")
    async with Client(server, sampling=sample):
        response = await server.connection.request("sampling/createMessage", SAMPLING_PARAMS)
    assert response["result"] == {
        "role": "assistant",
        "content": {"type": "text", "text": "Hello there"},
        "model": "unknown",
    }
    assert seen == [SAMPLING_PARAMS]
    assert "sampling" in server.requests("initialize")[0]["params"]["capabilities"]


async def test_async_sampling_handler_result_is_sent():
    async def sample(params: dict[str, Any]) -> dict[str, Any]:
        await anyio.sleep(0.01)
        return {"content": {"type": "text", "text": "42"}, "model": "m-1", "stopReason": "endTurn"}

    server = FakeServer("legacy")
    async with Client(server, sampling=sample):
        response = await server.connection.request("sampling/createMessage", SAMPLING_PARAMS)
    assert response["result"] == {
        "role": "assistant",
        "content": {"type": "text", "text": "42"},
        "model": "m-1",
        "stopReason": "endTurn",
    }


async def test_elicitation_handler_returning_content_without_action_accepts():
    server = FakeServer("legacy")
    async with Client(server, elicitation=lambda params: {"name": "Ada"}):
        response = await server.connection.request("elicitation/create", ELICIT_PARAMS)
    assert response["result"] == {"action": "accept", "content": {"name": "Ada"}}
    caps = server.requests("initialize")[0]["params"]["capabilities"]
    assert set(caps["elicitation"]) == {"form", "url"}


async def test_roots_given_as_paths_are_sent_as_file_uris(tmp_path: Path):
    server = FakeServer("legacy")
    async with Client(server, roots=[tmp_path, "file:///srv/data"]):
        response = await server.connection.request("roots/list")
    uris = [root["uri"] for root in response["result"]["roots"]]
    assert uris == [file_uri(tmp_path), "file:///srv/data"]
    assert "roots" in server.requests("initialize")[0]["params"]["capabilities"]


async def test_roots_handler_may_return_a_list_of_paths(tmp_path: Path):
    async def roots(params: dict[str, Any]) -> list[Any]:
        return [tmp_path, str(tmp_path / "sub")]

    server = FakeServer("legacy")
    async with Client(server, roots=roots):
        response = await server.connection.request("roots/list")
    uris = [root["uri"] for root in response["result"]["roots"]]
    assert uris == [file_uri(tmp_path), file_uri(tmp_path / "sub")]
    assert all(uri.startswith("file://") for uri in uris)


@pytest.mark.parametrize("as_root", [str, Path], ids=["str", "Path"])
async def test_a_single_path_string_as_roots_is_one_root_not_one_per_character(tmp_path: Path, as_root):
    """The contract (connection/_handlers.py): one str or PathLike is one root, never refused and
    never iterated character by character."""
    server = FakeServer("legacy")
    async with Client(server, roots=as_root(tmp_path)):
        response = await server.connection.request("roots/list")
    assert [root["uri"] for root in response["result"]["roots"]] == [file_uri(tmp_path)]


async def test_handler_that_raises_gets_an_internal_error_and_the_client_survives():
    def sample(params: dict[str, Any]) -> Any:
        raise RuntimeError("kaboom SECRET-123")

    server = FakeServer("legacy")
    async with Client(server, sampling=sample) as client:
        response = await server.connection.request("sampling/createMessage", SAMPLING_PARAMS)
        assert response["error"]["code"] == -32603
        assert "SECRET-123" not in response["error"]["message"]
        await client.ping()
        assert client.status == "ready"
        response = await server.connection.request("ping")
        assert response["result"] == {}


async def test_undeclared_handler_gets_method_not_found_and_was_not_declared():
    server = FakeServer("legacy")
    async with Client(server, elicitation=lambda params: None):
        response = await server.connection.request("sampling/createMessage", SAMPLING_PARAMS)
        assert response["error"]["code"] == -32601
        response = await server.connection.request("roots/list")
        assert response["error"]["code"] == -32601
    caps = server.requests("initialize")[0]["params"]["capabilities"]
    assert "sampling" not in caps
    assert "roots" not in caps
    assert "elicitation" in caps


async def test_server_cancellation_cancels_the_running_handler_and_no_response_is_sent():
    started, cancelled = anyio.Event(), anyio.Event()

    async def elicit(params: dict[str, Any]) -> Any:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()

    server = FakeServer("legacy")
    async with Client(server, elicitation=elicit) as client:
        conn = server.connection
        request_id = conn.next_id()
        await conn.send(
            {"jsonrpc": "2.0", "id": request_id, "method": "elicitation/create", "params": ELICIT_PARAMS}
        )
        with anyio.fail_after(2):
            await started.wait()
        await conn.notify("notifications/cancelled", {"requestId": request_id, "reason": "user left"})
        with anyio.fail_after(2):
            await cancelled.wait()
        await client.ping()
        await anyio.sleep(0.05)
        assert [m for m in server.received if m.get("id") == request_id] == []
        assert client.status == "ready"


async def test_handler_timeout_sends_an_error_response():
    async def elicit(params: dict[str, Any]) -> Any:
        await anyio.sleep(10)

    server = FakeServer("legacy")
    async with Client(server, elicitation=elicit, handler_timeout=0.1) as client:
        start = anyio.current_time()
        response = await server.connection.request("elicitation/create", ELICIT_PARAMS)
        assert anyio.current_time() - start < 1.5
        assert "error" in response
        assert response["error"]["code"] == -32001
        await client.ping()


async def test_pending_request_deadline_pauses_while_an_elicitation_handler_waits():
    async def ask(message: dict[str, Any], conn: FakeConnection) -> Any:
        answer = await conn.request("elicitation/create", ELICIT_PARAMS, timeout=5)
        return text_result(answer["result"]["content"]["name"])

    async def elicit(params: dict[str, Any]) -> Any:
        await anyio.sleep(0.5)  # a human taking their time
        return {"name": "Ada"}

    server = FakeServer("legacy")
    server.tool("ask", ask)
    async with Client(server, elicitation=elicit) as client:
        await client.list_tools()
        result = await client.call_tool("ask", timeout=0.2)
        assert result.text == "Ada"
        assert client.stats.timeouts == 0


# --- modern input_required (MRTR) ---------------------------------------------------------------

STATE = 'opaque+/=state "é" {"round":1}\\u0000'


async def test_input_required_runs_the_handlers_and_retries_with_responses_and_state():
    async def book(message: dict[str, Any], conn: FakeConnection) -> Any:
        params = message["params"]
        if "inputResponses" not in params:
            return {
                "resultType": "input_required",
                "inputRequests": {
                    "confirm": {"method": "elicitation/create", "params": ELICIT_PARAMS},
                    "summary": {"method": "sampling/createMessage", "params": SAMPLING_PARAMS},
                },
                "requestState": STATE,
            }
        return {"resultType": "complete", **text_result(json.dumps(params["inputResponses"]))}

    async def sample(params: dict[str, Any]) -> str:
        return "a summary"

    server = FakeServer("modern")
    server.tool("book", book)
    async with Client(server, elicitation=lambda p: {"name": "Ada"}, sampling=sample) as client:
        result = await client.call_tool("book", {"city": "Paris"})
    first, retry = server.calls("book")
    expected = {
        "confirm": {"action": "accept", "content": {"name": "Ada"}},
        "summary": {
            "role": "assistant",
            "content": {"type": "text", "text": "a summary"},
            "model": "unknown",
        },
    }
    assert json.loads(result.text) == expected
    assert retry["params"]["inputResponses"] == expected
    assert retry["params"]["requestState"] == STATE
    assert retry["params"]["arguments"] == {"city": "Paris"}
    assert retry["id"] != first["id"]
    assert retry["id"] > first["id"]
    assert "requestState" not in first["params"]
    caps = retry["params"]["_meta"][META_CAPS]
    assert "sampling" in caps
    assert "elicitation" in caps


async def test_input_required_beyond_max_input_rounds_is_a_protocol_error():
    async def forever(message: dict[str, Any], conn: FakeConnection) -> Any:
        return {"resultType": "input_required", "requestState": "again"}

    server = FakeServer("modern")
    server.tool("loop", forever)
    async with Client(server, max_input_rounds=2) as client:
        with pytest.raises(McpError) as info:
            await client.call_tool("loop")
    assert info.value.kind == "protocol"
    assert len(server.calls("loop")) == 3  # the call and two retries


async def test_input_required_with_only_request_state_is_retried():
    async def busy(message: dict[str, Any], conn: FakeConnection) -> Any:
        if message["params"].get("requestState") != "token-1":
            return {"resultType": "input_required", "requestState": "token-1"}
        return text_result("finally")

    server = FakeServer("modern")
    server.tool("busy", busy)
    async with Client(server) as client:
        result = await client.call_tool("busy")
    assert result.text == "finally"
    first, retry = server.calls("busy")
    assert retry["params"]["requestState"] == "token-1"
    assert "inputResponses" not in retry["params"]
    assert retry["id"] > first["id"]


async def test_input_required_whose_handler_fails_raises_mcp_error():
    async def ask(message: dict[str, Any], conn: FakeConnection) -> Any:
        return {
            "resultType": "input_required",
            "inputRequests": {"q": {"method": "elicitation/create", "params": ELICIT_PARAMS}},
        }

    def elicit(params: dict[str, Any]) -> Any:
        raise RuntimeError("the dialog crashed")

    server = FakeServer("modern")
    server.tool("ask", ask)
    async with Client(server, elicitation=elicit) as client:
        with raises_mcp("protocol", match="a handler answering the server's input request failed"):
            await client.call_tool("ask")
        assert client.status == "ready"


async def test_input_required_for_an_undeclared_capability_raises_protocol_error():
    async def ask(message: dict[str, Any], conn: FakeConnection) -> Any:
        return {
            "resultType": "input_required",
            "inputRequests": {"llm": {"method": "sampling/createMessage", "params": SAMPLING_PARAMS}},
        }

    server = FakeServer("modern")
    server.tool("ask", ask)
    async with Client(server) as client:
        with pytest.raises(McpError) as info:
            await client.call_tool("ask")
        assert info.value.kind == "protocol"
    assert len(server.calls("ask")) == 1


# --- modern -32022 on a ready connection --------------------------------------------------------

UNSUPPORTED = RpcError(-32022, "unsupported version", {"supported": [MODERN_VERSION], "requested": "x"})


async def test_unsupported_version_on_a_ready_connection_rediscovers_and_retries_once():
    async def picky(message: dict[str, Any], conn: FakeConnection) -> Any:
        if len(server.calls("picky")) == 1:
            raise UNSUPPORTED
        return text_result("accepted")

    server = FakeServer("modern")
    server.tool("picky", picky)
    async with Client(server) as client:
        result = await client.call_tool("picky")
        assert result.text == "accepted"
        assert client.era == "modern"
    assert len(server.requests("server/discover")) == 2
    first, retry = server.calls("picky")
    assert retry["id"] > first["id"]


async def test_a_second_unsupported_version_answer_raises_a_version_error():
    async def refuse(message: dict[str, Any], conn: FakeConnection) -> Any:
        raise UNSUPPORTED

    server = FakeServer("modern")
    server.tool("refuse", refuse)
    async with Client(server) as client:
        with pytest.raises(McpError) as info:
            await client.call_tool("refuse")
        assert info.value.kind == "version"
        assert info.value.code == -32022
    assert len(server.calls("refuse")) == 2
    assert len(server.requests("server/discover")) == 2


# --- reconnect ----------------------------------------------------------------------------------


async def test_dropped_connection_fails_the_pending_call_fast_then_reconnects_by_itself():
    server = FakeServer("legacy")
    server.tool("echo")
    server.tool("crash", crash)
    transport = MemoryTransport(server)
    async with Client(transport, backoff_initial=0.01) as client:
        await client.list_tools()
        start = anyio.current_time()
        with pytest.raises(McpError) as info:
            await client.call_tool("crash", timeout=10)
        assert info.value.kind == "transport"
        assert anyio.current_time() - start < 1.0
        await eventually(lambda: client.stats.reconnects == 1 and client.status == "ready")
        assert transport.connections == 2
        assert (await client.call_tool("echo")).text == "ok"
        assert client.era == "legacy"
    assert len(server.calls("crash")) == 1  # never resent
    methods = [m["method"] for m in server.received]
    # The era is remembered: the second connection goes straight to initialize.
    first = ["server/discover", "initialize", "notifications/initialized", "tools/list", "tools/call"]
    assert methods[:5] == first
    assert methods[5:7] == ["initialize", "notifications/initialized"]
    # After the reconnect the cached tool list is fetched again by itself, beside the new call.
    assert sorted(methods[7:]) == ["tools/call", "tools/list"]


async def test_call_made_right_after_a_connection_loss_waits_for_the_reconnect():
    server = FakeServer("legacy")
    server.tool("echo")
    server.tool("crash", crash)
    async with Client(server, backoff_initial=0.01) as client:
        await client.list_tools()
        with pytest.raises(McpError) as info:
            await client.call_tool("crash")
        assert info.value.kind == "transport"
        result = await client.call_tool("echo", timeout=3)  # at once, as a retrying caller would
        assert result.text == "ok"


async def test_modern_server_keeps_its_era_when_discover_goes_unanswered_on_reconnect():
    async def discover(message: dict[str, Any], conn: FakeConnection) -> Any:
        if len(server.connections) == 2:
            return NO_REPLY  # the restarted server is slow to answer at first
        return await server._discover(message, conn)

    server = FakeServer("modern")
    server.tool("crash", crash)
    server.on("server/discover", discover)
    async with Client(server, probe_timeout=0.1, backoff_initial=0.01) as client:
        with raises_mcp("transport"):
            await client.call_tool("crash")
        await eventually(
            lambda: client.status == "closed" or (client.status == "ready" and len(server.connections) >= 3)
        )
        assert client.status == "ready", client.closed_reason
        assert client.era == "modern"
    assert not server.requests("initialize")


async def test_without_reconnect_a_dropped_connection_closes_the_client():
    server = FakeServer("legacy")
    server.tool("crash", crash)
    async with Client(server, reconnect=False) as client:
        with pytest.raises(McpError) as info:
            await client.call_tool("crash")
        assert info.value.kind == "transport"
        await eventually(lambda: client.status == "closed")
        assert client.closed_reason is not None
        assert client.closed_reason.kind == "transport"
        with pytest.raises(McpError) as info:
            await client.call_tool("crash")
        assert info.value.kind == "closed"
    assert len(server.connections) == 1


async def test_client_closes_after_max_reconnect_attempts():
    async def crash_for_good(message: dict[str, Any], conn: FakeConnection) -> Any:
        server.accepting = False  # the server will not come back
        return await crash(message, conn)

    server = FakeServer("legacy")
    server.tool("crash", crash_for_good)
    transport = MemoryTransport(server)
    async with Client(transport, max_reconnect_attempts=2, backoff_initial=0.01) as client:
        with pytest.raises(McpError):
            await client.call_tool("crash")
        await eventually(lambda: client.status == "closed")
        assert client.closed_reason is not None
        assert client.closed_reason.kind == "transport"
        with pytest.raises(McpError) as info:
            await client.ping()
        assert info.value.kind == "closed"
        # The first connection, then max_reconnect_attempts=2 failed attempts.
        assert transport.connections == 3


async def reconnecting_client(server: FakeServer, **options: Any) -> Client:
    """A client whose server just died; returned while it waits to reconnect."""
    server.tool("echo")
    server.tool("crash", crash)
    client = Client(server, backoff_initial=0.4, **options)
    await client.connect()
    await client.list_tools()
    with raises_mcp("transport"):
        await client.call_tool("crash")
    await eventually(lambda: client.status == "reconnecting")
    return client


async def test_requests_made_while_reconnecting_wait_and_succeed_once_ready():
    server = FakeServer("legacy")
    client = await reconnecting_client(server)
    try:
        results: list[str] = []

        async def call() -> None:
            results.append((await client.call_tool("echo", timeout=5)).text)

        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(call)
        assert results == ["ok"] * 3
        assert client.status == "ready"
    finally:
        await client.aclose()


async def test_beyond_max_queued_requests_while_reconnecting_are_overloaded():
    server = FakeServer("legacy")
    client = await reconnecting_client(server, max_queued=1)
    try:
        results: list[str] = []

        async def call() -> None:
            results.append((await client.call_tool("echo", timeout=5)).text)

        async with anyio.create_task_group() as tg:
            tg.start_soon(call)
            await anyio.wait_all_tasks_blocked()
            with pytest.raises(McpError) as info:
                await client.call_tool("echo", timeout=5)
            assert info.value.kind == "overloaded"
        assert results == ["ok"]
        assert client.stats.overloaded == 1
    finally:
        await client.aclose()


async def test_queued_request_whose_deadline_passes_while_reconnecting_times_out():
    server = FakeServer("legacy")
    client = await reconnecting_client(server)
    try:
        with pytest.raises(McpError) as info:
            await client.call_tool("echo", timeout=0.05)
        assert info.value.kind == "timeout"
        assert len(server.calls("echo")) == 0
    finally:
        await client.aclose()


# --- options ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "error", "name"),
    [
        ({"timeout": 0}, ValueError, "timeout"),
        ({"timeout": -1}, ValueError, "timeout"),
        ({"timeout": True}, TypeError, "timeout"),
        ({"timeout": float("nan")}, TypeError, "timeout"),
        ({"max_in_flight": 0}, ValueError, "max_in_flight"),
        ({"max_in_flight": 2.5}, TypeError, "max_in_flight"),
        ({"max_queued": -1}, ValueError, "max_queued"),
        ({"probe_timeout": 0}, ValueError, "probe_timeout"),
        ({"max_total_timeout": -5}, ValueError, "max_total_timeout"),
        ({"protocol": "1999-01-01"}, ValueError, "protocol"),
        ({"bogus_option": 1}, TypeError, "bogus_option"),
        ({"log_level": "loud"}, ValueError, "log_level"),
        ({"reconnect": "yes"}, TypeError, "reconnect"),
        ({"sampling": "not a function"}, TypeError, "sampling"),
        ({"elicitation": 42}, TypeError, "elicitation"),
        ({"elicitation_modes": ["sms"]}, ValueError, "elicitation_modes"),
        ({"roots": 42}, TypeError, "roots"),
        ({"client_info": {"version": "1"}}, ValueError, "client_info"),
    ],
)
def test_invalid_option_raises_at_construction_naming_the_option(
    options: dict[str, Any], error: type[Exception], name: str
):
    with pytest.raises(error, match=name):
        Client(FakeServer(), **options)


async def test_invalid_per_call_timeout_is_refused():
    server = FakeServer()
    server.tool("echo")
    async with Client(server) as client:
        await client.list_tools()
        with pytest.raises(ValueError, match="timeout"):
            await client.call_tool("echo", timeout=0)
    assert not server.calls("echo")


# --- lifetime -----------------------------------------------------------------------------------


async def test_aclose_is_idempotent_and_calls_afterwards_raise_closed():
    server = FakeServer()
    server.tool("echo")
    client = Client(server)
    await client.connect()
    await client.aclose()
    await client.aclose()
    assert client.status == "closed"
    for call in (client.call_tool("echo"), client.list_tools(), client.ping()):
        with pytest.raises(McpError) as info:
            await call
        assert info.value.kind == "closed"
    with pytest.raises(McpError) as info:
        await client.connect()
    assert info.value.kind == "closed"


async def test_aclose_before_connect_leaves_the_client_closed():
    client = Client(FakeServer())
    await client.aclose()
    assert client.status == "closed"
    with pytest.raises(McpError) as info:
        await client.ping()
    assert info.value.kind == "closed"


async def test_client_connected_in_one_task_is_used_and_closed_from_others():
    server = FakeServer()
    server.tool("echo")
    client = Client(server)
    async with anyio.create_task_group() as tg:
        tg.start_soon(client.connect)  # this task ends as soon as the client is ready
    assert client.status == "ready"
    assert (await client.call_tool("echo")).text == "ok"  # from the test's own task
    async with anyio.create_task_group() as tg:
        tg.start_soon(client.aclose)
    assert client.status == "closed"


async def test_aclose_from_another_task_while_connecting_makes_connect_raise_closed():
    server = FakeServer("silent")
    client = Client(server, probe_timeout=10)
    errors: list[BaseException] = []

    async def connect() -> None:
        try:
            await client.connect()
        except Exception as exc:
            errors.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(connect)
        await server.wait_for("server/discover")
        with anyio.fail_after(2):
            await client.aclose()
    assert client.status == "closed"
    assert len(errors) == 1
    assert isinstance(errors[0], McpError), repr(errors[0])
    assert errors[0].kind == "closed"


# --- tool arguments -----------------------------------------------------------------------------

SECRET = "SECRET-123"


@pytest.mark.parametrize(
    ("schema", "arguments", "path"),
    [
        ({"properties": {"n": {"type": "integer"}}, "required": ["n"]}, {"n": SECRET}, "arguments.n"),
        ({"properties": {"n": {"type": "string", "pattern": "^[0-9]+$"}}}, {"n": SECRET}, "arguments.n"),
        ({"properties": {"n": {"type": "string", "maxLength": 3}}}, {"n": SECRET}, "arguments.n"),
        ({"properties": {"n": {"enum": ["a", "b"]}}}, {"n": SECRET}, "arguments.n"),
        ({"properties": {"xs": {"type": "array", "items": {"type": "integer"}}}}, {"xs": [SECRET]}, "xs[0]"),
        (
            {"properties": {"o": {"type": "object", "properties": {"n": {"type": "integer"}}}}},
            {"o": {"n": SECRET}},
            "arguments.o.n",
        ),
    ],
)
async def test_invalid_arguments_are_refused_before_sending_and_the_value_is_not_shown(
    schema: dict[str, Any], arguments: dict[str, Any], path: str
):
    server = FakeServer()
    server.tool("square", schema={"type": "object", **schema})
    async with Client(server) as client:
        with pytest.raises(McpError) as info:
            await client.call_tool("square", arguments)
        assert info.value.kind == "invalid"
        assert path in str(info.value)
        assert SECRET not in str(info.value)
        assert SECRET not in repr(info.value)
        await client.ping()
    assert not server.calls("square")


async def test_validate_false_sends_invalid_arguments_anyway():
    server = FakeServer()
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    server.tool("square", schema=schema)
    async with Client(server) as client:
        result = await client.call_tool("square", {"n": SECRET}, validate=False)
    assert result.text == "ok"
    assert [c["params"]["arguments"] for c in server.calls("square")] == [{"n": SECRET}]


# --- list pagination ----------------------------------------------------------------------------


def paged_tools(pages: dict[str | None, tuple[list[str], str | None]]) -> Any:
    async def handler(message: dict[str, Any], conn: FakeConnection) -> Any:
        names, next_cursor = pages[message["params"].get("cursor")]
        result: dict[str, Any] = {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in names]}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result

    return handler


def cursors_sent(server: FakeServer) -> list[str | None]:
    return [m["params"].get("cursor") for m in server.requests("tools/list")]


async def test_list_follows_next_cursor_across_pages():
    server = FakeServer()
    server.on("tools/list", paged_tools({None: (["a", "b"], "c1"), "c1": (["c"], "c2"), "c2": (["d"], None)}))
    async with Client(server) as client:
        tools = await client.list_tools()
    assert [t.name for t in tools] == ["a", "b", "c", "d"]
    assert cursors_sent(server) == [None, "c1", "c2"]
    assert all(META_VERSION in m["params"]["_meta"] for m in server.requests("tools/list"))


@pytest.mark.parametrize(
    ("pages", "names", "cursors"),
    [
        ({None: (["a"], "c1"), "c1": (["b"], "c1")}, ["a", "b"], [None, "c1"]),
        (
            {None: (["a"], "c1"), "c1": (["b"], "c2"), "c2": (["c"], "c1")},
            ["a", "b", "c"],
            [None, "c1", "c2"],
        ),
    ],
)
async def test_a_repeated_cursor_ends_the_listing(
    pages: dict[str | None, tuple[list[str], str | None]], names: list[str], cursors: list[str | None]
):
    server = FakeServer()
    server.on("tools/list", paged_tools(pages))
    async with Client(server) as client:
        with anyio.fail_after(2):
            tools = await client.list_tools()
    assert [t.name for t in tools] == names
    assert cursors_sent(server) == cursors


async def test_reply_helper_answers_any_scripted_method():
    server = FakeServer("legacy", capabilities={"tools": {}, "prompts": {}})  # else no list is asked
    server.on("prompts/list", reply({"prompts": [{"name": "greet"}]}))
    async with Client(server) as client:
        prompts = await client.list_prompts()
    assert [p.name for p in prompts] == ["greet"]


async def test_a_modern_server_slower_to_start_than_the_probe_is_found_modern_after_all():
    # A dual-era stdio server under load: the probe times out, the server then reads it, serves the
    # modern protocol on this connection and refuses the fallback initialize with -32022 (as the
    # official SDK's servers do). One corrective probe finds it modern; nothing fails.
    server = FakeServer("modern")
    serving_modern = False

    async def slow_first_discover(message: dict[str, Any], conn: FakeConnection) -> Any:
        nonlocal serving_modern
        if not serving_modern:
            serving_modern = True
            await anyio.sleep(0.4)
        return await server._discover(message, conn)

    async def initialize(message: dict[str, Any], conn: FakeConnection) -> Any:
        if serving_modern:
            raise RpcError(
                -32022, "connection is serving the 2026-07-28 protocol", {"supported": [MODERN_VERSION]}
            )
        return await server._initialize(message, conn)

    server.on("server/discover", slow_first_discover)
    server.on("initialize", initialize)
    async with Client(server, probe_timeout=0.15) as client:
        assert client.era == "modern"
        assert client.protocol_version == MODERN_VERSION
    assert [m["method"] for m in server.requests()] == ["server/discover", "initialize", "server/discover"]


async def test_a_second_refusal_of_the_handshake_is_an_error_not_a_loop():
    server = FakeServer("silent")
    server.on(
        "initialize", after_error := fail(-32022, "no version in common", {"supported": ["1999-01-01"]})
    )
    assert after_error is not None
    with raises_mcp("version") as info:
        async with Client(server, probe_timeout=0.1, reconnect=False):
            pass
    assert info.value.code == -32022
    assert len(server.requests("initialize")) == 2
    assert len(server.requests("server/discover")) == 2
