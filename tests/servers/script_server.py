"""A well-behaved MCP server over stdio that writes whatever lines a test hands it.

Stdlib only, so it starts fast. Why it exists: the reader's robustness tests and the protocol
fuzzer need a real process whose handshake is correct (so the client reaches ``ready``) and that
then, on demand, sends one malformed message or a burst of them and goes on answering normally.

Era: by default a legacy server (``server/discover`` gets -32601, ``initialize`` echoes the
requested version); with ``--modern`` a 2026-07-28 server (``server/discover`` answers,
``initialize`` gets -32601, results carry ``resultType``). Notifications and responses from the
client are ignored; ``ping`` and ``tools/list`` are answered. Tools:

    echo    {"n": integer} -> the text str(n)
    inject  {"lines": [base64 string, ...], "answer": bool = true, "repeat": int = 1}
            writes each decoded line verbatim to stdout (followed by a newline), with every
            ``__ID__`` replaced by the JSON id of this very call, so a line can pose as its answer,
            its progress or its cancellation; ``repeat`` times each (a flood, written in large
            blocks so it costs the server little); then answers "injected" unless ``answer`` is
            false.
    arm     {"lines": [base64 string, ...]} -> "armed"; the same lines are written, the same way,
            just before the answer to the next ``tools/list`` (so they can pose as that answer).

``--log FILE`` appends every line received from the client to FILE.

Base64 keeps bytes that are not UTF-8 (or not JSON at all) intact through the JSON-RPC call.
"""

from __future__ import annotations

import base64
import json
import sys

MODERN_VERSION = "2026-07-28"
MODERN = "--modern" in sys.argv[1:]
LOG = sys.argv[sys.argv.index("--log") + 1] if "--log" in sys.argv else None
SERVER_INFO = {"name": "script-server", "version": "1.0"}

TOOLS = [
    {
        "name": "echo",
        "description": "Echo an integer back as text.",
        "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    },
    {
        "name": "arm",
        "description": "Write the given raw lines before the next tools/list answer.",
        "inputSchema": {
            "type": "object",
            "properties": {"lines": {"type": "array", "items": {"type": "string"}}},
        },
    },
    {
        "name": "inject",
        "description": "Write the given raw lines, then answer.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "lines": {"type": "array", "items": {"type": "string"}},
                "answer": {"type": "boolean"},
                "repeat": {"type": "integer"},
            },
            "required": ["lines"],
        },
    },
]

out = sys.stdout.buffer
armed: list[str] = []


def write(data: bytes) -> None:
    out.write(data + b"\n")
    out.flush()


def result(request_id: object, value: dict) -> None:
    if MODERN:
        value = {"resultType": "complete", **value}
    write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": value}).encode())


def error(request_id: object, code: int, message: str) -> None:
    write(
        json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}).encode()
    )


def text(value: str) -> dict:
    return {"content": [{"type": "text", "text": value}], "isError": False}


def write_lines(request_id: object, lines: list[str], repeat: int = 1) -> None:
    own_id = json.dumps(request_id).encode()
    for line in lines:
        data = base64.b64decode(line).replace(b"__ID__", own_id) + b"\n"
        left = repeat
        while left > 0:
            block = min(left, 10_000)
            out.write(data * block)
            left -= block
        out.flush()


def call_tool(request_id: object, name: object, args: dict) -> None:
    if name == "echo":
        result(request_id, text(str(args.get("n"))))
    elif name == "inject":
        write_lines(request_id, args.get("lines") or [], int(args.get("repeat", 1)))
        if args.get("answer", True):
            result(request_id, text("injected"))
    elif name == "arm":
        armed[:] = args.get("lines") or []
        result(request_id, text("armed"))
    else:
        error(request_id, -32602, f"unknown tool {name!r}")


def handle(message: dict) -> None:
    method = message.get("method")
    if not isinstance(method, str) or "id" not in message:
        return  # a notification or a response (to a request the test injected): ignored
    request_id = message["id"]
    params = message.get("params") or {}
    if method == "server/discover":
        if not MODERN:
            error(request_id, -32601, "Method not found")
            return
        result(
            request_id,
            {
                "supportedVersions": [MODERN_VERSION],
                "capabilities": {"tools": {}},
                "ttlMs": 0,
                "cacheScope": "public",
                "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO},
            },
        )
    elif method == "initialize":
        if MODERN:
            error(request_id, -32601, "Method not found")
            return
        result(
            request_id,
            {
                "protocolVersion": params.get("protocolVersion"),
                "capabilities": {"tools": {}},
                "serverInfo": SERVER_INFO,
            },
        )
    elif method == "ping":
        result(request_id, {})
    elif method == "tools/list":
        write_lines(request_id, armed)
        armed.clear()
        result(request_id, {"tools": TOOLS})
    elif method == "tools/call":
        call_tool(request_id, params.get("name"), params.get("arguments") or {})
    else:
        error(request_id, -32601, f"Method not found: {method}")


def main() -> None:
    for raw in sys.stdin.buffer:
        if LOG:
            with open(LOG, "ab") as log:
                log.write(raw)
        try:
            message = json.loads(raw)
        except ValueError:
            continue
        if isinstance(message, dict):
            handle(message)


if __name__ == "__main__":
    main()
