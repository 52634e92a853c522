"""A legacy stdio server that exits on ``server/discover``, as servers on early mcp 1.x SDKs do.

Why it exists: chroma-mcp 0.2.6 (on mcp 1.6.0) cannot parse a method it does not know and exits
with a traceback on stderr when the first message it reads is the modern era's discover probe;
``protocol="auto"`` must start it again and speak ``initialize``. Stdlib only, so it starts fast.

Otherwise it speaks the legacy era: ``initialize`` answers 2025-03-26 (mcp 1.6.0's newest), ``ping``
and ``tools/list`` are answered, notifications are ignored. Tools:

    echo    {"n": integer} -> the text str(n)
    crash   exits with code 3 mid-call (a crash later in the session)

Flags:

    --log FILE             append a line per start ("start") and per request (its method) to FILE
    --die-on-initialize    exit with a traceback on ``initialize`` as well (a server that is
                           broken, not old)
"""

from __future__ import annotations

import argparse
import json
import os
import sys

VERSION = "2025-03-26"
TOOLS = [
    {
        "name": "echo",
        "description": "Echo an integer back as text.",
        "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    },
    {"name": "crash", "description": "Exit mid-call.", "inputSchema": {"type": "object"}},
]

opts: argparse.Namespace


def note(line: str) -> None:
    if opts.log:
        with open(opts.log, "a", encoding="utf-8") as f:
            f.write(line + "\n")


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def die(method: str) -> None:
    """What an early SDK's session does with a request it cannot validate: a traceback, exit 1."""
    raise ValueError(f"1 validation error for ClientRequest: unknown method {method!r}")


def handle(message: dict) -> None:
    method = message.get("method")
    if method is None or "id" not in message:
        return  # a notification (or a response): ignored
    note(method)
    request_id = message["id"]
    params = message.get("params") or {}
    if method == "server/discover" or (method == "initialize" and opts.die_on_initialize):
        die(method)
    elif method == "initialize":
        info = {"name": "early-sdk-server", "version": "0.2.6"}
        send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "result": {"protocolVersion": VERSION, "capabilities": {"tools": {}}, "serverInfo": info},
            }
        )
    elif method == "ping":
        send({"jsonrpc": "2.0", "id": request_id, "result": {}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": request_id, "result": {"tools": TOOLS}})
    elif method == "tools/call" and params.get("name") == "crash":
        sys.stderr.write("early-sdk-server: crashing as asked\n")
        sys.stderr.flush()
        os._exit(3)
    elif method == "tools/call" and params.get("name") == "echo":
        text = str((params.get("arguments") or {}).get("n"))
        send({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": text}]}})
    else:
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "Method not found"}})


def main() -> None:
    global opts
    parser = argparse.ArgumentParser()
    parser.add_argument("--log")
    parser.add_argument("--die-on-initialize", action="store_true")
    opts = parser.parse_args()
    note("start")
    from _lines import serve  # beside this script (run as one, its folder is on sys.path)

    serve(handle)


if __name__ == "__main__":
    main()
