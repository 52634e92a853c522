"""An MCP server over stdio that tries to outlast or stall a call's deadline, in either era.

Stdlib only, so it starts fast. By default a legacy server (``server/discover`` gets -32601,
``initialize`` echoes the requested version); with ``--modern`` a 2026-07-28 one (``server/discover``
answers, ``initialize`` gets -32601, results carry ``resultType``). Tools:

    echo    {"n": integer} -> the text str(n)
    hang    {anything} -> never answers
    tick    {"every": s, "for": s, "token": "id" | "given" | "other"} -> a
            ``notifications/progress`` every ``every`` seconds for ``for`` seconds, then the text
            "ticked". Its token is the call's own JSON-RPC id ("id", the default: progress nobody
            asked for when the client sent no token), the ``progressToken`` the client sent
            ("given"; none sent: no progress), or one the client never sent ("other").

Flags:

    --modern               speak the 2026-07-28 era
    --list-delay SECONDS   answer ``tools/list`` that much later (other requests are answered
                           meanwhile: each list answer waits in a thread of its own)
    --deaf-after-list      after answering the first ``tools/list``, never read stdin again (the
                           client's writes then fill the pipe and stall)
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time

MODERN_VERSION = "2026-07-28"
SERVER_INFO = {"name": "deadline-server", "version": "1.0"}

TOOLS = [
    {
        "name": "echo",
        "description": "Echo an integer back as text.",
        "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    },
    {"name": "hang", "description": "Never answer.", "inputSchema": {"type": "object"}},
    {
        "name": "tick",
        "description": "Send progress for a while, then answer.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "every": {"type": "number"},
                "for": {"type": "number"},
                "token": {"enum": ["id", "given", "other"]},
            },
        },
    },
]

out = sys.stdout.buffer
out_lock = threading.Lock()
opts = argparse.Namespace()


def write(message: dict) -> None:
    with out_lock:
        out.write(json.dumps(message).encode() + b"\n")
        out.flush()


def result(request_id: object, value: dict) -> None:
    if opts.modern:
        value = {"resultType": "complete", **value}
    write({"jsonrpc": "2.0", "id": request_id, "result": value})


def error(request_id: object, code: int, message: str) -> None:
    write({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})


def text(value: str) -> dict:
    return {"content": [{"type": "text", "text": value}], "isError": False}


def tick(request_id: object, params: dict, args: dict) -> None:
    every = float(args.get("every", 0.2))
    ends = time.monotonic() + float(args.get("for", 5))
    mode = args.get("token", "id")
    if mode == "given":
        meta = params.get("_meta") or {}
        token = meta.get("progressToken")
    elif mode == "other":
        token = request_id + 100_000 if isinstance(request_id, int) else f"not-{request_id}"
    else:
        token = request_id
    count = 0
    while time.monotonic() < ends:
        time.sleep(every)
        count += 1
        if token is not None:
            progress = {"progressToken": token, "progress": count}
            write({"jsonrpc": "2.0", "method": "notifications/progress", "params": progress})
    result(request_id, text("ticked"))


def handle(message: dict) -> bool:
    """Answer one message; True once the server has gone deaf."""
    method = message.get("method")
    if not isinstance(method, str) or "id" not in message:
        return False
    request_id = message["id"]
    params = message.get("params") or {}
    if method == "server/discover":
        if not opts.modern:
            error(request_id, -32601, "Method not found")
            return False
        discovered = {
            "supportedVersions": [MODERN_VERSION],
            "capabilities": {"tools": {}},
            "ttlMs": 0,
            "cacheScope": "public",
            "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO},
        }
        result(request_id, discovered)
    elif method == "initialize":
        if opts.modern:
            error(request_id, -32601, "Method not found")
            return False
        version = params.get("protocolVersion")
        initialized = {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": SERVER_INFO}
        result(request_id, initialized)
    elif method == "ping":
        result(request_id, {})
    elif method == "tools/list":
        if opts.list_delay:
            answer = threading.Timer(opts.list_delay, result, (request_id, {"tools": TOOLS}))
            answer.daemon = True
            answer.start()
        else:
            result(request_id, {"tools": TOOLS})
        return opts.deaf_after_list
    elif method == "tools/call":
        name = params.get("name")
        args = params.get("arguments") or {}
        if name == "echo":
            result(request_id, text(str(args.get("n"))))
        elif name == "tick":
            tick(request_id, params, args)
        elif name != "hang":
            error(request_id, -32602, f"unknown tool {name!r}")
    else:
        error(request_id, -32601, f"Method not found: {method}")
    return False


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--modern", action="store_true")
    parser.add_argument("--list-delay", type=float, default=0.0)
    parser.add_argument("--deaf-after-list", action="store_true")
    parser.parse_args(namespace=opts)
    for raw in sys.stdin.buffer:
        try:
            message = json.loads(raw)
        except ValueError:
            continue
        if isinstance(message, dict) and handle(message):
            while True:  # deaf: stdin is never read again; SIGTERM ends us
                time.sleep(3600)


if __name__ == "__main__":
    main()
