"""An answer the client refuses fails its own request at once, saying what was refused (issue #35).

A frame that is not strict JSON (a NaN, a lone surrogate, bytes that are not UTF-8, an integer past
the digit limit, nesting past the limit) is refused whole; but when its id can still be read, the
request it answers must fail now with ``McpError(kind="protocol")`` naming the refused value, not
wait for its deadline and report a timeout although the server did answer. The servers are real:
``tests/servers/script_server.py`` over stdio (its ``inject`` tool writes the bad line posing as
the call's answer) and a raw HTTP server on loopback whose ``tools/call`` answers in an SSE event.

No timing is asserted: each call has a 20 s timeout, and before the fix every case ended in a
``timeout`` error after it; now the kind is ``protocol``, which only an immediate refusal gives.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from mcp_notebook import Client
from mcp_notebook.transports._http import HttpTransport

from .conftest import python_server
from .raises import raises_mcp
from .raw_http import RawRequest, Reply, raw_http_server

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaked_processes")]

#: Long enough that only a refusal (not the deadline) can end the call first.
CALL_TIMEOUT = 20


def answer_with(value: bytes, request_id: bytes = b"__ID__") -> bytes:
    """A response to the call whose result holds ``value`` (raw JSON text) inside its content."""
    return (
        b'{"jsonrpc": "2.0", "id": ' + request_id + b', "result": {"content": '
        b'[{"type": "text", "text": "x"}], "structuredContent": {"v": ' + value + b"}}}"
    )


#: case -> (the raw value inside the answer, what the error must name)
REFUSED = {
    "NaN": (b"NaN", r"NaN \(not JSON\)"),
    "Infinity": (b"-Infinity", r"-Infinity \(not JSON\)"),
    "lone surrogate": (b'"\\ud800"', "a lone surrogate"),
    "not UTF-8": (b'"\xff\xfe"', "not UTF-8"),
    "integer beyond the digit limit": (b"9" * 5000, "an integer of 5,000 digits"),
    "nested too deeply": (b"[" * 5000 + b"]" * 5000, "nested too deeply"),
}


def script_server(era: str) -> list[str]:
    return python_server("script_server.py", *(["--modern"] if era == "modern" else []))


@pytest.mark.parametrize("era", ["legacy", "modern"])
@pytest.mark.parametrize("case", sorted(REFUSED))
async def test_a_refused_answer_over_stdio_fails_its_call_with_what_was_refused(era: str, case: str) -> None:
    value, named = REFUSED[case]
    line = base64.b64encode(answer_with(value)).decode()
    async with Client(script_server(era), timeout=CALL_TIMEOUT) as client:
        with raises_mcp("protocol", match=f"refused the server's answer: .*{named}"):
            await client.call_tool("inject", {"lines": [line], "answer": False})
        assert client.stats.malformed_frames == 1
        assert client.stats.outcomes.get("timeout", 0) == 0
        assert (await client.call_tool("echo", {"n": 7})).text == "7"  # the connection goes on
        assert client.status == "ready"


async def test_an_integer_no_double_holds_is_read_exactly_not_refused() -> None:
    """400 digits fit no double, but JSON allows them and a frame keeps them exact (item 8):
    only an integer past the interpreter's digit limit is refused (the table above)."""
    line = base64.b64encode(answer_with(b"9" * 400)).decode()
    async with Client(script_server("legacy"), timeout=CALL_TIMEOUT) as client:
        result = await client.call_tool("inject", {"lines": [line], "answer": False})
        assert result.structured_content == {"v": int("9" * 400)}
        assert client.stats.malformed_frames == 0


def test_a_deep_answer_is_failed_by_its_id_only_when_it_is_plainly_a_response() -> None:
    """A request of the server's nested too deeply shares no fate with our request of that id."""
    from mcp_notebook.protocol._jsonrpc import FrameError, decode

    deep = b"[" * 5000 + b"]" * 5000
    frames = {
        b'{"jsonrpc": "2.0", "id": 3, "result": {"v": ' + deep + b"}}": 3,
        b'{"jsonrpc": "2.0", "result": {"v": ' + deep + b'}, "id": "late"}': "late",
        b'{"jsonrpc": "2.0", "id": 3, "method": "m", "params": {"v": ' + deep + b"}}": None,
        b'{"jsonrpc": "2.0", "id": 3, "params": {"v": ' + deep + b'}, "method": "m"}': None,
    }
    for frame, expected in frames.items():
        with pytest.raises(FrameError) as caught:
            decode(frame)
        assert caught.value.id == expected, frame[:60]


class SseAnswers:
    """Legacy Streamable HTTP: ``tools/call`` answers in one SSE event whose data is the refused
    frame named by the tool (``bad``) or a good answer (``echo``)."""

    def __init__(self, value: bytes) -> None:
        self.value = value

    async def __call__(self, request: RawRequest, reply: Reply) -> None:
        if request.method != "POST":
            await reply.send(405)
            return
        message = json.loads(request.body)
        method, request_id = message.get("method"), message.get("id")
        if request_id is None:
            await reply.send(202)
            return
        if method == "server/discover":
            error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32600, "message": "no"}}
            await reply.send(400, json.dumps(error).encode())
            return
        result: dict[str, Any] = {}
        if method == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "refused", "version": "1"},
            }
        elif method == "tools/list":
            result = {
                "tools": [{"name": name, "inputSchema": {"type": "object"}} for name in ("bad", "echo")]
            }
        elif method == "tools/call":
            rid = json.dumps(request_id).encode()
            if message["params"]["name"] == "bad":
                data = answer_with(self.value, rid)
            else:
                data = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": {"content": []}}).encode()
            await reply.send(200, b"data: " + data + b"\n\n", content_type="text/event-stream")
            return
        body = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()
        await reply.send(200, body, headers={"Mcp-Session-Id": "refused-1"})


@pytest.mark.parametrize("engine", ["aiohttp", "httpx"])
@pytest.mark.parametrize("case", ["NaN", "lone surrogate", "nested too deeply"])
async def test_a_refused_answer_in_an_sse_event_fails_its_call_with_what_was_refused(
    engine: str, case: str
) -> None:
    value, named = REFUSED[case]
    async with raw_http_server(SseAnswers(value)) as url:
        transport = HttpTransport(f"{url}/mcp", engine=engine, mode="streamable")  # type: ignore[arg-type]
        async with Client(transport, timeout=CALL_TIMEOUT) as client:
            with raises_mcp("protocol", match=f"refused the server's answer: .*{named}"):
                await client.call_tool("bad", {})
            assert client.stats.outcomes.get("timeout", 0) == 0
            await client.call_tool("echo", {})
