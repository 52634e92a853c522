"""A stdio MCP server that writes down every tool execution, for the dask map's tests (issue #30).

Stdlib only, so a worker starts it fast. Legacy era (``initialize``). Tools, each taking
``{"row": integer}`` and answering ``{"result": row}``:

    mark        no annotations: neither read-only nor idempotent (must never run twice)
    mark_safe   ``idempotentHint: true`` (may run again)

Options:
    --log FILE        appends ``<tool> <row> <pid>`` to FILE for every execution, before answering
    --starts FILE     appends ``<pid> <parent pid>`` to FILE when the server starts
    --kill-row N      on executing row N, if ``--marker FILE`` does not exist yet: creates it, and
                      kills this server's parent process (the Dask worker that started it) with
                      SIGKILL; the server itself then ends when its stdin closes
"""

from __future__ import annotations

import json
import os
import signal
import sys


def _option(name: str) -> str | None:
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else None


LOG = _option("--log")
STARTS = _option("--starts")
KILL_ROW = int(_option("--kill-row") or -1)
MARKER = _option("--marker")

SCHEMA = {"type": "object", "properties": {"row": {"type": "integer"}}, "required": ["row"]}
TOOLS = [
    {"name": "mark", "description": "Record a row (not idempotent).", "inputSchema": SCHEMA},
    {
        "name": "mark_safe",
        "description": "Record a row (idempotent).",
        "inputSchema": SCHEMA,
        "annotations": {"idempotentHint": True},
    },
]


def _append(path: str, line: str) -> None:
    with open(path, "a") as file:
        file.write(line + "\n")
        file.flush()


def _send(message: dict) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def _call(request_id: object, name: object, arguments: dict) -> None:
    if name not in ("mark", "mark_safe"):
        _send({"id": request_id, "error": {"code": -32602, "message": f"unknown tool {name!r}"}})
        return
    row = int(arguments.get("row", -1))
    if LOG:
        _append(LOG, f"{name} {row} {os.getpid()}")
    if row == KILL_ROW and MARKER and not os.path.exists(MARKER):
        _append(MARKER, str(os.getppid()))
        os.kill(os.getppid(), signal.SIGKILL)
        return
    _send(
        {
            "id": request_id,
            "result": {
                "content": [{"type": "text", "text": str(row)}],
                "structuredContent": {"result": row},
                "isError": False,
            },
        }
    )


def _handle(message: dict) -> None:
    method, request_id = message.get("method"), message.get("id")
    if not isinstance(method, str) or request_id is None:
        return
    params = message.get("params") or {}
    if method == "initialize":
        result = {
            "protocolVersion": params.get("protocolVersion"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "ledger-server", "version": "1.0"},
        }
        _send({"id": request_id, "result": result})
    elif method == "ping":
        _send({"id": request_id, "result": {}})
    elif method == "tools/list":
        _send({"id": request_id, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        _call(request_id, params.get("name"), params.get("arguments") or {})
    else:
        _send({"id": request_id, "error": {"code": -32601, "message": f"Method not found: {method}"}})


def main() -> None:
    if STARTS:
        _append(STARTS, f"{os.getpid()} {os.getppid()}")
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict):
            _handle(message)


if __name__ == "__main__":
    main()
