"""A stdio MCP server that floods the client with what it keeps or must answer (issue #35).

Stdlib only, so it starts fast. A legacy (initialize-handshake) server: ``server/discover`` gets
-32601, ``initialize`` echoes the requested version and declares ``tools`` and ``logging``;
``ping`` and ``tools/list`` are answered. Tools:

    flood_logs      {"count": int, "bytes": int, "shape": "text"|"object", "level": str = "info"}
                    writes ``count`` ``notifications/message`` whose ``data`` is ``bytes`` long in
                    its JSON text (a string, or an object holding a list of strings), each from
                    logger ``"flood"``, then answers with the text "flooded".
    flood_requests  {"count": int, "method": str = "ping"} -> writes ``count`` requests of
                    ``method`` (ids ``"r0"``, ``"r1"``, ...) and then never reads stdin again nor
                    answers the call: a server that asks and asks and never reads the answers.
"""

from __future__ import annotations

import json
import sys
import time

out = sys.stdout.buffer
TOOLS = [
    {"name": name, "inputSchema": {"type": "object"}} for name in ("flood_logs", "flood_requests", "echo")
]


def write(message: dict) -> None:
    out.write(json.dumps(message).encode() + b"\n")
    out.flush()


def result(request_id: object, value: dict) -> None:
    write({"jsonrpc": "2.0", "id": request_id, "result": value})


def log_data(size: int, shape: str) -> object:
    if shape == "object":
        piece = "y" * 1000
        return {"rows": [piece] * max(1, size // (len(piece) + 3))}
    return "x" * size


def flood_logs(args: dict) -> None:
    data = log_data(int(args.get("bytes", 1000)), str(args.get("shape", "text")))
    line = json.dumps(
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": args.get("level", "info"), "logger": "flood", "data": data},
        }
    ).encode()
    for _ in range(int(args.get("count", 1))):
        out.write(line + b"\n")
    out.flush()


def flood_requests(args: dict) -> None:
    method = str(args.get("method", "ping"))
    count = int(args.get("count", 1))
    block = []
    for n in range(count):
        block.append(json.dumps({"jsonrpc": "2.0", "id": f"r{n}", "method": method}).encode())
        if len(block) >= 1000:
            out.write(b"\n".join(block) + b"\n")
            block = []
    out.write(b"\n".join(block) + b"\n")
    out.flush()
    while True:  # never read stdin again, never answer: the client must not pile up our answers
        time.sleep(3600)


def handle(message: dict) -> None:
    method = message.get("method")
    if not isinstance(method, str) or "id" not in message:
        return
    request_id = message["id"]
    params = message.get("params") or {}
    if method == "initialize":
        result(
            request_id,
            {
                "protocolVersion": params.get("protocolVersion"),
                "capabilities": {"tools": {}, "logging": {}},
                "serverInfo": {"name": "hostile", "version": "1"},
            },
        )
    elif method == "tools/list":
        result(request_id, {"tools": TOOLS})
    elif method == "tools/call":
        name, args = params.get("name"), params.get("arguments") or {}
        if name == "flood_logs":
            flood_logs(args)
        elif name == "flood_requests":
            flood_requests(args)
        result(request_id, {"content": [{"type": "text", "text": "flooded" if name != "echo" else "echo"}]})
    elif method in ("ping", "logging/setLevel"):
        result(request_id, {})
    else:
        write({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}})


def main() -> None:
    from _lines import serve  # beside this script (run as one, its folder is on sys.path)

    serve(handle)


if __name__ == "__main__":
    main()
