"""``client.stats.outcomes``: how every request sent on the wire ended, by kind.

The counts must add up: every request is either still in flight (or an open stream) or counted
under exactly one outcome, so a dashboard can trust the totals.
"""

from __future__ import annotations

import contextlib
from typing import Any

import anyio
import pytest

from mcp_notebook import Client, McpError
from tests.raises import raises_mcp

from .fakes import FakeServer, fail, never, reply

pytestmark = pytest.mark.anyio


def add_up(client: Client) -> None:
    stats = client.stats
    assert sum(stats.outcomes.values()) + stats.in_flight + stats.streams == stats.requests


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_each_ending_is_counted_once_under_its_kind(era: str) -> None:
    server = FakeServer(era)
    server.tool("fine", reply())
    server.tool("broken", fail(-32603, "boom"))
    server.tool("hang", never())
    async with Client(server, timeout=10) as client:
        await client.list_tools()  # call_tool checks arguments against the listed tools
        start = client.stats.outcomes  # so far: the handshake (a legacy server refuses discover)
        add_up(client)
        await client.call_tool("fine")
        with raises_mcp("server"):
            await client.call_tool("broken")
        with pytest.raises(McpError) as timed_out:
            await client.call_tool("hang", timeout=0.05)
        assert timed_out.value.kind == "timeout"
        with anyio.move_on_after(0.05):
            await client.call_tool("hang")
        outcomes = client.stats.outcomes
        assert outcomes["ok"] == start["ok"] + 1
        assert outcomes["server"] == start.get("server", 0) + 1
        assert outcomes["timeout"] == 1
        assert outcomes["cancelled"] == 1
        add_up(client)


async def test_requests_failed_by_a_lost_connection_count_as_transport() -> None:
    server = FakeServer("modern")
    server.tool("hang", never())
    async with Client(server, timeout=10, backoff_initial=0.01, protocol="modern") as client:
        async with anyio.create_task_group() as tg:

            async def doomed() -> None:
                with pytest.raises(McpError) as caught:
                    await client.call_tool("hang")
                assert caught.value.kind == "transport"

            tg.start_soon(doomed)
            await anyio.sleep(0.05)
            server.connections[-1].drop()
        assert client.stats.outcomes["transport"] == 1
        add_up(client)


def test_a_snapshot_does_not_change_afterwards() -> None:
    server = FakeServer("modern")

    async def main() -> None:
        async with Client(server, timeout=10, protocol="modern") as client:
            before = client.stats
            await client.list_tools(refresh=True)
            assert client.stats.outcomes["ok"] == before.outcomes["ok"] + 1

    anyio.run(main)


async def test_the_counts_add_up_between_an_answer_and_its_caller_waking(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The moment after the reader delivers an answer and before the caller takes it, the request
    is still in flight: a snapshot taken then must add up too (found by tests/test_fuzz.py)."""
    server = FakeServer("modern")
    server.tool("fine", reply())
    async with Client(server, timeout=10, protocol="modern") as client:
        await client.list_tools()
        connection = client.connection
        deliver = connection._on_response
        snapshots = []

        def deliver_and_look(message: Any) -> None:
            deliver(message)
            snapshots.append(client.stats)

        monkeypatch.setattr(connection, "_on_response", deliver_and_look)
        await client.call_tool("fine")
        assert snapshots
        for stats in snapshots:
            assert stats.in_flight == 1
            assert sum(stats.outcomes.values()) + stats.in_flight + stats.streams == stats.requests
        add_up(client)


@pytest.mark.parametrize("tool", ["fine", "broken"])
async def test_a_listener_of_the_request_event_sees_the_request_ended(tool: str) -> None:
    """The notebook model reads ``in_flight`` when a request's event arrives: it must be 0 then."""
    server = FakeServer("modern")
    server.tool("fine", reply())
    server.tool("broken", fail(-32603, "boom"))
    async with Client(server, timeout=10, protocol="modern") as client:
        await client.list_tools()
        seen: list[tuple[int, int]] = []

        def look(event: Any) -> None:
            if event.kind == "request":
                stats = client.stats
                seen.append((stats.in_flight, sum(stats.outcomes.values())))

        client.connection.on_event(look)
        before = sum(client.stats.outcomes.values())
        with contextlib.suppress(McpError):
            await client.call_tool(tool)
        assert seen == [(0, before + 1)]
