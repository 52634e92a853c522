"""A call the caller cancels tells the server so (``notifications/cancelled``), over real peers.

The in-memory server (tests/fakes.py) checks the notice in tests/test_connection.py; here a stdio
server and a legacy HTTP server of ours, each a real subprocess, report what they were sent, so
a client that stops sending the notice on either transport fails here. Each call is cancelled
once the server has said it started it (a progress notification), never after a guessed delay.
"""

from __future__ import annotations

import json

import anyio
import pytest

from mcp_notebook import Client
from tests.conftest import python_server
from tests.http_peers import FaultPeer
from tests.http_peers import fault_server_fixture as fault_server_fixture

pytestmark = [pytest.mark.anyio]

#: Only stops a hang: the cancellation itself is driven by the server's progress.
HANG_GUARD = 30


async def _cancel_once_started(client: Client, tool: str, arguments: dict[str, object]) -> None:
    """Call ``tool`` and cancel the call as the caller would, when its first progress arrives."""
    with anyio.fail_after(HANG_GUARD), anyio.CancelScope() as scope:
        await client.call_tool(tool, arguments, timeout=HANG_GUARD * 2, progress=lambda *_: scope.cancel())
    assert scope.cancelled_caught, "the call ended before it was cancelled"
    assert client.stats.cancellations == 1
    assert client.stats.in_flight == 0


async def test_a_cancelled_call_is_cancelled_on_a_stdio_server() -> None:
    async with Client(python_server("bad_server.py"), timeout=HANG_GUARD) as client:
        await _cancel_once_started(client, "stall", {})
        received = json.loads((await client.call_tool("received")).text)
    [[stall_id, _]] = [call for call in received["calls"] if call[1] == "stall"]
    assert [notice["requestId"] for notice in received["cancelled"]] == [stall_id]
    assert received["cancelled"][0]["reason"] == "cancelled by the client"


async def test_a_cancelled_call_is_cancelled_on_a_legacy_http_server(fault_server: FaultPeer) -> None:
    async with Client(fault_server.url, timeout=HANG_GUARD) as client:
        assert client.era == "legacy"  # the era that is told (a modern call ends with its stream)
        await _cancel_once_started(client, "slow", {"seconds": 60, "steps": 600})
        await client.ping()  # the connection goes on
    [call] = fault_server.requests(rpc_method="tools/call")
    assert len(fault_server.requests(rpc_method="notifications/cancelled")) == 1
    assert fault_server.seen()["cancelled"] == [call["rpc_id"]], "the server stopped the call it was told to"
