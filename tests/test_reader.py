"""The reader against a real stdio server that sends one malformed message, then answers normally.

Each case is a value only a server controls (a progress token, a cancelled request id, a response
id) in a shape the spec does not allow. The client must drop that one frame, count it in
``stats.malformed_frames``, stay ``ready`` and keep answering; at most the request the frame
belongs to fails, with an ``McpError``. The server is ``tests/servers/script_server.py``.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import anyio
import pytest

from mcp_notebook import Client, McpError

from .conftest import python_server
from .fakes import FakeServer

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaked_processes")]

ERAS = ["legacy", "modern"]


def script_server(era: str, *args: str) -> list[str]:
    return python_server("script_server.py", *(["--modern"] if era == "modern" else []), *args)


def lines(*messages: Any) -> list[str]:
    """The ``inject`` tool's argument: each message as one base64 line (bytes are sent as they are)."""
    raw = [m if isinstance(m, bytes) else json.dumps(m).encode() for m in messages]
    return [base64.b64encode(line).decode() for line in raw]


async def inject(client: Client, *messages: Any, answer: bool = True) -> Any:
    with anyio.fail_after(10):
        return await client.call_tool("inject", {"lines": lines(*messages), "answer": answer})


async def assert_still_usable(client: Client) -> None:
    with anyio.fail_after(10):
        assert (await client.call_tool("echo", {"n": 7})).text == "7"
    assert client.status == "ready"


BAD_NOTIFICATIONS = {
    "progress token is a list": {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": [1, 2], "progress": 1},
    },
    "progress token is an object": {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": {"a": 1}, "progress": 1},
    },
    "cancelled request id is a list": {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": [1], "reason": "x"},
    },
    "cancelled request id is an object": {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": {"id": 1}},
    },
}


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("case", sorted(BAD_NOTIFICATIONS))
async def test_a_notification_with_an_unhashable_id_is_dropped_and_counted(era: str, case: str) -> None:
    async with Client(script_server(era), timeout=10) as client:
        assert client.era == era
        result = await inject(client, BAD_NOTIFICATIONS[case])
        assert result.text == "injected"
        await assert_still_usable(client)
        assert client.stats.malformed_frames == 1
        assert client.stats.reconnects == 0


@pytest.mark.parametrize("era", ERAS)
async def test_a_progress_token_that_is_our_id_as_a_float_is_dropped(era: str) -> None:
    """A token is a string or an integer: ``7.0`` does not name request 7 (in Python it would
    find it in a dict, since 7.0 == 7), so its progress is dropped and counted, not reported."""
    seen: list[float] = []
    async with Client(script_server(era), timeout=10) as client:
        progress = b'{"jsonrpc": "2.0", "method": "notifications/progress", '
        progress += b'"params": {"progressToken": __ID__.0, "progress": 1}}'
        result = await client.call_tool(
            "inject", {"lines": lines(progress)}, progress=lambda p, t, m: seen.append(p)
        )
        assert result.text == "injected"
        assert seen == []
        await assert_still_usable(client)
        assert client.stats.malformed_frames == 1


@pytest.mark.parametrize("era", ERAS)
async def test_progress_for_our_request_still_arrives_after_a_bad_one(era: str) -> None:
    seen: list[float] = []
    async with Client(script_server(era), timeout=10) as client:
        bad = BAD_NOTIFICATIONS["progress token is a list"]
        good = {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": "__ID__", "progress": 3},
        }
        raw = json.dumps(good).replace('"__ID__"', "__ID__").encode()
        result = await client.call_tool(
            "inject", {"lines": lines(bad, raw)}, progress=lambda p, t, m: seen.append(p)
        )
        assert result.text == "injected"
        assert seen == [3.0]


@pytest.mark.parametrize("era", ERAS)
async def test_without_reconnect_a_bad_frame_still_leaves_the_client_open(era: str) -> None:
    """With nothing to recover by, a dropped frame must not end the connection (it used to close
    the client, saying the user had)."""
    async with Client(script_server(era), timeout=10, reconnect=False) as client:
        await inject(client, BAD_NOTIFICATIONS["cancelled request id is a list"])
        await assert_still_usable(client)
        assert client.closed_reason is None


@pytest.mark.parametrize("era", ERAS)
async def test_a_frame_that_breaks_a_listener_is_dropped_not_fatal(era: str) -> None:
    """A notification listener that raises on a strange value costs that frame, not the client."""
    async with Client(script_server(era), timeout=10) as client:
        calls: list[str] = []

        def fragile(message: Any) -> None:
            calls.append(message.method)
            raise KeyError("boom")

        client.connection.on_notification(fragile)
        await inject(client, {"jsonrpc": "2.0", "method": "notifications/whatever", "params": {}})
        await assert_still_usable(client)
        assert calls == ["notifications/whatever"]


@pytest.mark.parametrize("era", ERAS)
async def test_a_response_to_our_call_with_a_non_object_result_fails_only_that_call(era: str) -> None:
    """A response to the in-flight call whose result is not an object: that call fails, clearly."""
    async with Client(script_server(era), timeout=10) as client:
        raw = b'{"jsonrpc": "2.0", "id": __ID__, "result": [1, 2]}'
        with pytest.raises(McpError) as caught:
            await inject(client, raw, answer=False)
        assert caught.value.kind == "protocol"
        await assert_still_usable(client)
        assert client.stats.malformed_frames == 1


@pytest.mark.parametrize("era", ERAS)
async def test_an_unforeseen_error_while_routing_a_frame_costs_only_that_frame(
    era: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reader's safety net: whatever a handler did not foresee, the next frame is still read."""
    async with Client(script_server(era), timeout=10) as client:
        connection = client.connection
        route = connection._on_notification

        def unforeseen(message: Any) -> None:
            if message.method == "notifications/unforeseen":
                raise RuntimeError("a bug in routing")
            route(message)

        monkeypatch.setattr(connection, "_on_notification", unforeseen)
        result = await inject(client, {"jsonrpc": "2.0", "method": "notifications/unforeseen"})
        assert result.text == "injected"
        await assert_still_usable(client)
        assert client.stats.malformed_frames == 1
        assert client.stats.reconnects == 0


async def test_a_bug_that_ends_the_run_loop_is_the_closed_reason_not_a_user_close() -> None:
    server = FakeServer("modern")
    async with Client(server, timeout=10, backoff_initial=0.01) as client:
        transport = client.connection._transport

        def broken_connect() -> Any:
            raise RuntimeError("a bug while reconnecting")

        transport.connect = broken_connect  # type: ignore[method-assign]
        closed = anyio.Event()
        client.connection.on_state_change(lambda state: closed.set() if state == "closed" else None)
        server.connections[-1].drop()
        with anyio.fail_after(10):
            await closed.wait()
        reason = client.closed_reason
        assert reason is not None
        assert reason.kind != "closed"
        assert "RuntimeError" in reason.message


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(
    "request_",
    [
        {"jsonrpc": "2.0", "id": "srv-1", "method": "roots/list", "params": [1, 2]},
        {"jsonrpc": "2.0", "id": "srv-1", "method": 42},
        {"jsonrpc": "1.0", "id": "srv-1", "method": "ping"},
    ],
    ids=["params not an object", "method not a string", "wrong version"],
)
async def test_a_server_request_that_cannot_be_read_is_refused_not_left_waiting(
    era: str, request_: dict[str, Any], tmp_path: Any
) -> None:
    log = tmp_path / "received.jsonl"
    async with Client(script_server(era, "--log", str(log)), timeout=10, roots=["file:///tmp"]) as client:
        await inject(client, request_)
        await assert_still_usable(client)
        assert client.stats.malformed_frames == 1
        answer = None
        with anyio.fail_after(10):
            for _ in range(500):
                received = [json.loads(line) for line in log.read_text().splitlines()]
                answer = next((m for m in received if m.get("id") == "srv-1"), None)
                if answer is not None:
                    break
                await anyio.sleep(0.02)
    assert answer is not None, "the client never answered the server's request"
    assert answer["error"]["code"] == -32600
