"""A refused reconnect is one failed attempt, backed off and retried, never the end of the client.

The HTTP+SSE binding (2024-11-05) opens its event stream inside the transport's task group, so a
refused reconnect surfaced as an exception group, which the run loop did not expect: the first
refused reconnect closed the client. The server here is a real one on localhost
(:mod:`tests.raw_http`) that ends its stream and then refuses the next GETs, as a restarting
server does.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import anyio.abc
import pytest

from mcp_notebook import Client, McpError
from mcp_notebook.transports import HttpTransport

from .raw_http import RawRequest, Reply, raw_http_server

pytestmark = pytest.mark.anyio

ECHO = {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}


class SseServer:
    """A legacy HTTP+SSE MCP server: GET /sse streams, POST /messages accepts (202)."""

    def __init__(self) -> None:
        self.refuse = 0  # how many of the next GETs get 503
        self.refused = 0
        self.streams = 0
        self._send: anyio.abc.ObjectSendStream[bytes] | None = None

    def drop(self) -> None:
        """End the open event stream, as a server restart would."""
        if self._send is not None:
            self._send.close()
            self._send = None

    async def __call__(self, request: RawRequest, reply: Reply) -> None:
        if request.method == "GET" and request.path == "/sse":
            if self.refuse:
                self.refuse -= 1
                self.refused += 1
                await reply.send(503, b"restarting", content_type="text/plain")
                return
            send, receive = anyio.create_memory_object_stream[bytes](100)
            self._send = send
            self.streams += 1
            await reply.start(200, content_type="text/event-stream")
            await reply.write(b"event: endpoint\ndata: /messages\n\n")
            async with receive:
                async for event in receive:
                    await reply.write(event)
        elif request.method == "POST" and request.path == "/messages":
            await reply.send(202)
            answer = self._answer(json.loads(request.body))
            if answer is not None and self._send is not None:
                self._send.send_nowait(b"event: message\ndata: " + json.dumps(answer).encode() + b"\n\n")
        else:
            await reply.send(404, b"")

    def _answer(self, message: dict[str, Any]) -> dict[str, Any] | None:
        method, request_id = message.get("method"), message.get("id")
        if method is None or request_id is None:
            return None
        params = message.get("params") or {}
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": params.get("protocolVersion"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "sse", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": [ECHO]}
        elif method == "tools/call":
            text = params.get("arguments", {}).get("text", "")
            result = {"content": [{"type": "text", "text": text}]}
        elif method == "ping":
            result = {}
        else:
            return {
                "jsonrpc": "2.0",
                "id": request_id,
                "error": {"code": -32601, "message": "no such method"},
            }
        return {"jsonrpc": "2.0", "id": request_id, "result": result}


async def _until_noticed(client: Client) -> None:
    """Wait until the client saw its stream end: a call sent before that was in flight on the dying
    channel, and fails as "may have run" (it is never resent), which is not what these tests test."""
    with anyio.fail_after(10):
        while client.status == "ready":  # noqa: ASYNC110 - the connection's own state
            await anyio.sleep(0.005)


async def test_refused_http_sse_reconnects_are_backed_off_until_the_server_is_back() -> None:
    server = SseServer()
    async with raw_http_server(server) as base:
        transport = HttpTransport(f"{base}/sse", mode="sse")
        async with Client(transport, timeout=10, backoff_initial=0.01, backoff_max=0.05) as client:
            assert (await client.call_tool("echo", {"text": "before"})).text == "before"
            server.refuse = 2
            server.drop()
            await _until_noticed(client)
            with anyio.fail_after(10):
                assert (await client.call_tool("echo", {"text": "after"})).text == "after"
            assert client.status == "ready"
            assert server.refused == 2
            assert client.stats.reconnects == 3
            assert client.last_error is not None
            assert "503" in client.last_error.message


async def test_http_sse_that_stays_down_closes_the_client_with_the_real_reason() -> None:
    server = SseServer()
    async with raw_http_server(server) as base:
        transport = HttpTransport(f"{base}/sse", mode="sse")
        async with Client(
            transport, timeout=10, backoff_initial=0.01, backoff_max=0.05, max_reconnect_attempts=3
        ) as client:
            await client.call_tool("echo", {"text": "before"})
            server.refuse = 100
            server.drop()
            await _until_noticed(client)
            with anyio.fail_after(10), pytest.raises(McpError) as caught:
                await client.call_tool("echo", {"text": "after"})
            assert caught.value.kind == "closed"
            assert client.status == "closed"
            reason = client.closed_reason
            assert reason is not None
            assert "gave up reconnecting after 3 failed attempts" in reason.message
            assert "503" in reason.message
            assert server.refused == 3
