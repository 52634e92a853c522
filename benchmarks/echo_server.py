"""A minimal, fast MCP server for benchmarks (stdlib only), so that the server is not the bottleneck.

stdio (default): newline-delimited JSON-RPC on stdin/stdout. It reads whatever is available in one
``os.read``, answers every complete line in it and writes all the answers with one write, so a burst
of requests in flight costs one system call each way instead of one per message.

HTTP (``--http PORT``): a tiny asyncio HTTP/1.1 server (keep-alive, ``Content-Length`` bodies) that
answers ``POST /mcp`` with ``application/json``, a notification with ``202``, and ``GET``/``DELETE``
with ``405`` (no server stream, no session). It prints ``listening <port>`` on stdout once ready.
``--delay MS`` makes every tool call take that long before its answer, as a remote server seen
through a network does; one connection carries one request at a time (HTTP/1.1 without
pipelining), so calls in flight need connections in flight.

Eras (``--era``): ``modern`` answers ``server/discover`` (2026-07-28, every result carries
``resultType``) and refuses ``initialize`` with -32022; ``legacy`` refuses ``server/discover`` with
-32601 and answers the ``initialize`` handshake; ``dual`` does both, like the SDK: a request whose
``_meta`` names a protocol version gets a modern result, any other a legacy one.

Tools: ``garbage()`` writes malformed and stray lines before its result (stdio; a server that
breaks the protocol); ``echo(text)`` returns its text; ``big(size)`` a text block of ``size`` bytes;
``flood(count, kind?)`` sends ``count`` notifications first (progress notifications if the request has a
progressToken, ``notifications/message`` otherwise or when ``kind`` is ``"log"``), then its result;
``records(count)`` returns ``count`` rows as ``structuredContent: {"result": [...]}``. ``--tools N``
pads tools/list to N tools, served in pages of 1000 with ``nextCursor``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import Any

MODERN_VERSION = "2026-07-28"
HANDSHAKE_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
META_VERSION = "io.modelcontextprotocol/protocolVersion"
PAGE_SIZE = 1000
SERVER_INFO = {"name": "echo", "version": "1"}

_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
_loads = json.loads


def _schema(**props: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": kind} for name, kind in props.items()},
        "required": list(props),
    }


BASE_TOOLS = [
    {"name": "echo", "description": "Return the text.", "inputSchema": _schema(text="string")},
    {
        "name": "big",
        "description": "Return a text block of `size` bytes.",
        "inputSchema": _schema(size="integer"),
    },
    {
        "name": "flood",
        "description": "Send `count` notifications, then the result.",
        "inputSchema": {
            **_schema(count="integer"),
            "properties": {"count": {"type": "integer"}, "kind": {"enum": ["auto", "log"]}},
        },
    },
    {
        "name": "records",
        "description": "Return `count` records as structured content.",
        "inputSchema": _schema(count="integer"),
    },
    {
        "name": "garbage",
        "description": "Write malformed and stray lines (stdio), then the result.",
        "inputSchema": {"type": "object", "properties": {}},
    },
]

#: Tools whose schemas use formats, served with ``--format-tools`` only (the first-call benchmark):
#: every other measurement (the idle heap holds the cached tool list) keeps the list it had.
FORMAT_TOOLS = [
    {
        # the way pydantic (the Python SDK, fastmcp) writes `url: AnyUrl, since: datetime | None = None`:
        # formats, and a union the client's quick check leaves to jsonschema (benchmarks/first_call_probe.py)
        "name": "visit",
        "description": "Return the URL.",
        "inputSchema": {
            "type": "object",
            "title": "visitArguments",
            "properties": {
                "url": {"type": "string", "format": "uri", "minLength": 1, "maxLength": 2083, "title": "Url"},
                "since": {
                    "anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}],
                    "default": None,
                    "title": "Since",
                },
            },
            "required": ["url"],
        },
    },
    {
        # pydantic's nested model (`at: Point, when: datetime`): a $ref, which only jsonschema judges
        "name": "place",
        "description": "Return nothing much.",
        "inputSchema": {
            "$defs": {
                "Point": {
                    "type": "object",
                    "title": "Point",
                    "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
                    "required": ["lat", "lon"],
                }
            },
            "type": "object",
            "properties": {
                "at": {"$ref": "#/$defs/Point"},
                "when": {"type": "string", "format": "date-time", "title": "When"},
            },
            "required": ["at"],
        },
    },
]

#: What ``garbage`` writes before its answer: each line something a broken server sends.
GARBAGE = (
    "this is not json",
    '{"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": [1], "progress": 1}}',
    '{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": {"a": 1}}}',
    '{"jsonrpc": "2.0", "id": 987654321, "result": {}}',
    '{"jsonrpc": "2.0", "id": [1, 2], "result": {}}',
    '{"jsonrpc": "2.0", "result": {"content": []}}',
    "[1, 2, 3]",
    '{"jsonrpc": "2.0", "method": "notifications/message", "params": "not an object"}',
)


def make_tools(total: int, *, format_tools: bool = False) -> list[dict[str, Any]]:
    tools = [*BASE_TOOLS, *(FORMAT_TOOLS if format_tools else ())]
    for i in range(len(tools), total):
        tools.append(
            {
                "name": f"tool_{i:05d}",
                "title": f"Tool {i}",
                "description": f"Filler tool number {i}, for listing benchmarks.",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "query": {"type": "string", "description": "What to look for"},
                        "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                    },
                    "required": ["query"],
                },
                "annotations": {"readOnlyHint": True},
            }
        )
    return tools


_REGIONS = ("north", "south", "east", "west")
_PRODUCTS = ("widget", "gadget", "doohickey", "gizmo", "sprocket")


def make_records(count: int) -> list[dict[str, Any]]:
    """Deterministic rows; the benchmark builds the same list to compare against."""
    return [
        {
            "id": i,
            "date": f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}",
            "region": _REGIONS[i % 4],
            "product": _PRODUCTS[i % 5],
            "units": i % 97,
            "price": round(1.5 + (i % 1000) * 0.25, 2),
        }
        for i in range(count)
    ]


class EchoServer:
    """The protocol logic, transport-free: ``handle`` maps one message to the messages to send."""

    def __init__(self, era: str, tools: int, *, format_tools: bool = False) -> None:
        self.era = era
        self.tools = make_tools(max(tools, len(BASE_TOOLS)), format_tools=format_tools)
        self._records: dict[int, list[dict[str, Any]]] = {}

    def handle(self, msg: Any) -> list[Any]:
        """The messages to send (dicts), or raw lines (str) for ``garbage``."""
        if not isinstance(msg, dict):
            return [_error(None, -32600, "not a JSON-RPC message")]
        method = msg.get("method")
        if "id" not in msg:
            return []  # notifications (initialized, cancelled, ...) and responses need no answer
        rid = msg["id"]
        if method is None:
            return []
        params = msg.get("params") or {}
        meta = params.get("_meta") or {}
        modern = self.era == "modern" or (self.era == "dual" and META_VERSION in meta)
        try:
            out = self._dispatch(rid, method, params, meta, modern)
        except (KeyError, TypeError, ValueError) as exc:
            return [_error(rid, -32602, f"invalid params: {exc}")]
        return out

    def _dispatch(
        self, rid: Any, method: str, params: dict[str, Any], meta: dict[str, Any], modern: bool
    ) -> list[Any]:
        if method == "tools/call":
            name = params["name"]
            args = params.get("arguments") or {}
            notes: list[Any] = []
            if name in ("echo", "visit", "place"):
                text = args.get("text", args.get("url", ""))
                result: dict[str, Any] = {"content": [{"type": "text", "text": str(text)}]}
            elif name == "big":
                result = {"content": [{"type": "text", "text": "x" * int(args["size"])}]}
            elif name == "flood":
                count = int(args["count"])
                token = meta.get("progressToken")
                if token is not None and args.get("kind") != "log":
                    notes = [
                        {
                            "jsonrpc": "2.0",
                            "method": "notifications/progress",
                            "params": {"progressToken": token, "progress": i + 1, "total": count},
                        }
                        for i in range(count)
                    ]
                else:
                    notes = [
                        {
                            "jsonrpc": "2.0",
                            "method": "notifications/message",
                            "params": {"level": "info", "logger": "flood", "data": f"message {i}"},
                        }
                        for i in range(count)
                    ]
                result = {"content": [{"type": "text", "text": f"sent {count}"}]}
            elif name == "garbage":
                notes = list(GARBAGE)
                result = {"content": [{"type": "text", "text": "after the garbage"}]}
            elif name == "records":
                count = int(args["count"])
                rows = self._records.get(count)
                if rows is None:
                    rows = self._records[count] = make_records(count)
                result = {
                    "content": [{"type": "text", "text": f"{count} records"}],
                    "structuredContent": {"result": rows},
                }
            else:
                return [_error(rid, -32602, f"unknown tool {name!r}")]
            result["isError"] = False
            if modern:
                result["resultType"] = "complete"
            return [*notes, {"jsonrpc": "2.0", "id": rid, "result": result}]
        if method == "tools/list":
            start = int(params.get("cursor") or 0)
            page: dict[str, Any] = {"tools": self.tools[start : start + PAGE_SIZE]}
            if start + PAGE_SIZE < len(self.tools):
                page["nextCursor"] = str(start + PAGE_SIZE)
            if modern:
                page.update(resultType="complete", ttlMs=0, cacheScope="private")
            return [{"jsonrpc": "2.0", "id": rid, "result": page}]
        if method == "server/discover":
            if self.era == "legacy":
                return [_error(rid, -32601, "Method not found: server/discover")]
            return [
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "result": {
                        "supportedVersions": [MODERN_VERSION],
                        "capabilities": {"tools": {}},
                        "resultType": "complete",
                        "ttlMs": 0,
                        "cacheScope": "private",
                        "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO},
                    },
                }
            ]
        if method == "initialize":
            if self.era == "modern":
                data = {"supported": [MODERN_VERSION], "requested": params.get("protocolVersion")}
                return [_error(rid, -32022, "Unsupported protocol version", data)]
            requested = params.get("protocolVersion")
            version = requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[0]
            return [
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "result": {
                        "protocolVersion": version,
                        "capabilities": {"tools": {}, "logging": {}},
                        "serverInfo": SERVER_INFO,
                    },
                }
            ]
        if method == "ping":
            return [{"jsonrpc": "2.0", "id": rid, "result": {}}]
        if method == "logging/setLevel":
            return [{"jsonrpc": "2.0", "id": rid, "result": {}}]
        return [_error(rid, -32601, f"Method not found: {method}")]


def _error(rid: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": error}


# --- stdio --------------------------------------------------------------------------------------


def serve_stdio(server: EchoServer) -> None:
    fd_in = sys.stdin.buffer.fileno()
    out = sys.stdout.buffer
    partial = b""
    handle = server.handle
    while True:
        chunk = os.read(fd_in, 1 << 20)
        if not chunk:
            return
        lines = (partial + chunk).split(b"\n") if partial else chunk.split(b"\n")
        partial = lines.pop()
        replies: list[str] = []
        for line in lines:
            if not line.strip():
                continue
            try:
                msg = _loads(line)
            except ValueError:
                replies.append(_dumps(_error(None, -32700, "parse error")))
                continue
            for reply in handle(msg):
                replies.append(reply if isinstance(reply, str) else _dumps(reply))
                if len(replies) >= 1000:  # a flood: let the client start reading
                    out.write(("\n".join(replies) + "\n").encode())
                    out.flush()
                    replies.clear()
        if replies:
            out.write(("\n".join(replies) + "\n").encode())
            out.flush()


# --- HTTP ---------------------------------------------------------------------------------------


async def _http_connection(
    server: EchoServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, delay: float
) -> None:
    try:
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            request_line, *header_lines = head.decode("latin-1").split("\r\n")
            method = request_line.split(" ", 1)[0]
            length = 0
            for header in header_lines:
                name, _, value = header.partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            body = await reader.readexactly(length) if length else b""
            if method != "POST":
                writer.write(b"HTTP/1.1 405 Method Not Allowed\r\nAllow: POST\r\nContent-Length: 0\r\n\r\n")
                continue
            try:
                msg = _loads(body)
            except ValueError:
                msg = None
            replies = server.handle(msg) if msg is not None else [_error(None, -32700, "parse error")]
            if delay and isinstance(msg, dict) and msg.get("method") == "tools/call":
                await asyncio.sleep(delay)  # a remote server: the network and the tool's own work
            # Over HTTP, only the response goes in the body; notifications sent before it are dropped
            # (a JSON answer cannot carry them). The flood tool is a stdio case.
            final = [r for r in replies if isinstance(r, dict) and "id" in r]
            if not final:
                writer.write(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
                continue
            data = _dumps(final[-1]).encode()
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(data)
                + data
            )
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass  # a client cut off mid-request or mid-answer (a benchmark row that timed out): done
    finally:
        writer.close()


async def serve_http(server: EchoServer, port: int, delay: float = 0.0) -> None:
    listener = await asyncio.start_server(
        lambda r, w: _http_connection(server, r, w, delay),
        "127.0.0.1",
        port,
        limit=64 * 1024 * 1024,
        backlog=2048,
    )
    bound = listener.sockets[0].getsockname()[1]
    print(f"listening {bound}", flush=True)
    async with listener:
        await listener.serve_forever()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--era", choices=("modern", "legacy", "dual"), default="dual")
    parser.add_argument("--tools", type=int, default=len(BASE_TOOLS), help="total tools in tools/list")
    parser.add_argument("--http", type=int, default=None, metavar="PORT", help="serve HTTP (0: any port)")
    parser.add_argument(
        "--delay", type=float, default=0.0, metavar="MS", help="HTTP: milliseconds each tool call takes"
    )
    parser.add_argument("--format-tools", action="store_true", help="serve `visit` and `place` too")
    args = parser.parse_args(argv)
    server = EchoServer(args.era, args.tools, format_tools=args.format_tools)
    try:
        if args.http is not None:
            asyncio.run(serve_http(server, args.http, args.delay / 1000))
        else:
            serve_stdio(server)
    except (KeyboardInterrupt, BrokenPipeError):
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
