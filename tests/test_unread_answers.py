"""Answers a server does not read are bounded: it is closed, with the reason (issue #35).

A server that sends request after request (``ping``, or a method the client does not know) and
never reads our answers used to cost one task and one answer per request: 100,000 pings, +470 MB
and the call waiting for its deadline. Now the answers waiting to be written are bounded per
connection (``MAX_UNSENT_ANSWERS``, ``MAX_UNSENT_ANSWER_BYTES``); past the bound the connection is
closed for good with ``McpError(kind="protocol")`` saying the server sent requests without reading
our answers, counted in ``client.stats.unread_answer_closes``. A server that asks as fast but
reads its answers is never closed. The servers are real stdio processes
(``tests/servers/hostile_server.py``, ``tests/servers/script_server.py``) and a raw HTTP server on
loopback that sends its pings in a call's answer stream and never answers the POSTs of ours.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import anyio
import pytest

from mcp_notebook import Client
from mcp_notebook.connection._server_requests import MAX_UNSENT_ANSWERS
from mcp_notebook.transports._http import HttpTransport

from .bomb_http import peak_rss_growth
from .conftest import python_server
from .raises import raises_mcp
from .raw_http import RawRequest, Reply, raw_http_server

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaked_processes")]

MIB = 1 << 20
#: Well past the bound plus what the pipe and the write buffer take before a write waits.
FLOOD = 4 * MAX_UNSENT_ANSWERS


@pytest.mark.parametrize("method", ["ping", "x/unknown"])
async def test_a_server_that_never_reads_our_answers_is_closed_with_the_reason(method: str) -> None:
    async with Client(python_server("hostile_server.py"), timeout=20) as client:
        unread = r"the server sent [\d,]+ requests without reading our answers"
        with peak_rss_growth() as grew, raises_mcp("protocol", match=unread):
            await client.call_tool("flood_requests", {"count": FLOOD, "method": method})
        assert client.stats.unread_answer_closes == 1
        assert client.stats.outcomes.get("timeout", 0) == 0
        assert client.status == "closed"  # not restarted: a new server would do the same
        assert client.closed_reason is not None
        assert "without reading our answers" in client.closed_reason.message
        with raises_mcp("closed", match="without reading our answers"):
            await client.call_tool("echo", {})
    assert grew[0] < 48 * MIB, f"the flood cost {grew[0] / MIB:.0f} MiB"


async def test_a_server_that_asks_as_fast_but_reads_its_answers_is_never_closed() -> None:
    """As many pings as the bound in one burst, from a server that reads them after: all answered."""
    ping = base64.b64encode(json.dumps({"jsonrpc": "2.0", "id": "p", "method": "ping"}).encode()).decode()
    argv = python_server("script_server.py")
    async with Client(argv, timeout=20) as client:
        result = await client.call_tool("inject", {"lines": [ping], "repeat": MAX_UNSENT_ANSWERS})
        assert result.text == "injected"
        assert (await client.call_tool("echo", {"n": 7})).text == "7"
        assert client.status == "ready"
        assert client.stats.unread_answer_closes == 0
        assert client.stats.server_requests == MAX_UNSENT_ANSWERS


class PingsOverHttp:
    """Legacy Streamable HTTP: ``tools/call`` answers with an SSE stream of ``count`` pings and no
    answer; a POST of our answers (a message with no method) is never answered."""

    def __init__(self, count: int) -> None:
        self.count = count

    async def __call__(self, request: RawRequest, reply: Reply) -> None:
        if request.method != "POST":
            await reply.send(405)
            return
        message = json.loads(request.body)
        method, request_id = message.get("method"), message.get("id")
        if method is None:
            await anyio.sleep_forever()  # our answer: never read
        if request_id is None:
            await reply.send(202)
            return
        result: dict[str, Any] = {}
        if method == "server/discover":
            error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32600, "message": "no"}}
            await reply.send(400, json.dumps(error).encode())
            return
        if method == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "pings", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": [{"name": "flood_requests", "inputSchema": {"type": "object"}}]}
        elif method == "tools/call":
            await reply.start(200, content_type="text/event-stream")
            for start in range(0, self.count, 1000):
                pings = (
                    b'data: {"jsonrpc": "2.0", "id": "r%d", "method": "ping"}\n\n' % n
                    for n in range(start, min(start + 1000, self.count))
                )
                await reply.write(b"".join(pings))
            await anyio.sleep_forever()
        body = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()
        await reply.send(200, body, headers={"Mcp-Session-Id": "pings-1"})


@pytest.mark.parametrize("engine", ["aiohttp", "httpx"])
async def test_an_http_server_that_never_reads_our_answers_is_closed_with_the_reason(engine: str) -> None:
    async with raw_http_server(PingsOverHttp(2 * MAX_UNSENT_ANSWERS)) as url:
        transport = HttpTransport(f"{url}/mcp", engine=engine, mode="streamable")  # type: ignore[arg-type]
        async with Client(transport, timeout=20) as client:
            unread = r"the server sent [\d,]+ requests without reading our answers"
            with raises_mcp("protocol", match=unread):
                await client.call_tool("flood_requests", {})
            assert client.stats.unread_answer_closes == 1
            assert client.status == "closed"
