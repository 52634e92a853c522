"""An MCP server over stdio that floods ``tools/list_changed`` on request.

Stdlib only, so it starts fast. It speaks newline-delimited JSON-RPC. By default it is a legacy
(initialize-handshake) server: ``server/discover`` gets -32601 (so clients fall back to
``initialize``), ``initialize`` echoes the requested version and declares ``tools.listChanged``,
and the change notifications go straight to the client. With ``--modern`` it is a 2026-07-28
server instead: ``server/discover`` answers, ``initialize`` gets -32601, results carry
``resultType``/``ttlMs``, and the change notifications travel only on the newest open
``subscriptions/listen`` stream that asked for them (acknowledged first, stamped with its id;
``notifications/cancelled`` for the listen id closes it). Either way notifications from the client
are otherwise ignored, ``ping`` is answered, and ``tools/list`` is answered with the current tools
(and counted). ``--change-before-ack SECONDS`` (modern) delays every listen acknowledgement by that
much and adds a tool ``unannounced_<pid>_<n>`` during the delay: a change no open stream can announce, which
a client only learns of by re-fetching once its stream is acknowledged (no replay, PROTOCOL.md §3.7).
``tools/call`` is dispatched by tool name:

    flood_list_changed  {"count": int, "seconds": number} -> writes ``count``
                        ``notifications/tools/list_changed`` lines spread evenly over ``seconds``;
                        just before the last one the tool list changes (a tool ``flooded_<n>`` is
                        added), so only a client that refetches after the flood has the final list.
                        Then answers with the number of notifications written.
    list_requests       {} -> structured ``{"tools_list": <tools/list requests received so far>,
                        "generation": <how many floods changed the list>, "unannounced": <how
                        many listen acknowledgements changed it>, "tools": [<current tool names>]}``

The flood runs in a thread of its own, so ``tools/list`` requests sent during it are answered at
once, interleaved with the notifications, as a real server would.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time

NOTIFICATION = b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n'
BATCHES_PER_SECOND = 100
MODERN_VERSION = "2026-07-28"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
MODERN = "--modern" in sys.argv[1:]
#: ``--change-before-ack SECONDS`` (modern): wait that long before acknowledging a listen stream,
#: and change the tool list during the wait (a change no stream can announce: none is open yet).
CHANGE_BEFORE_ACK = (
    float(sys.argv[sys.argv.index("--change-before-ack") + 1]) if "--change-before-ack" in sys.argv else None
)

_write_lock = threading.Lock()
_state_lock = threading.Lock()
_state = {"tools_list": 0, "generation": 0, "unannounced": 0}
_listens: list = []  # ids of the open subscriptions/listen streams that want tools changes, oldest first

BASE_TOOLS = [
    {
        "name": "flood_list_changed",
        "description": "Send many tools/list_changed notifications, then answer.",
        "inputSchema": {
            "type": "object",
            "properties": {"count": {"type": "integer"}, "seconds": {"type": "number"}},
            "required": ["count"],
        },
    },
    {
        "name": "list_requests",
        "description": "How many tools/list requests this server has received.",
        "inputSchema": {"type": "object"},
    },
]


def _tools() -> list[dict]:
    with _state_lock:
        generation = _state["generation"]
        unannounced = _state["unannounced"]
    extra = [
        {"name": f"flooded_{n}", "description": "Added by a flood.", "inputSchema": {"type": "object"}}
        for n in range(1, generation + 1)
    ]
    extra += [
        {"name": f"unannounced_{os.getpid()}_{n}", "description": "Added before an ack.", "inputSchema": {}}
        for n in range(1, unannounced + 1)
    ]
    return BASE_TOOLS + extra


def _write(data: bytes) -> None:
    with _write_lock:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


def _send(message: dict) -> None:
    _write(json.dumps(message, separators=(",", ":")).encode() + b"\n")


def _answer(request_id, result: dict) -> None:
    if MODERN:
        result = {"resultType": "complete", **result}
    _send({"jsonrpc": "2.0", "id": request_id, "result": result})


def _error(request_id, code: int, message: str) -> None:
    _send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})


def _text(text: str) -> dict:
    return {"content": [{"type": "text", "text": text}], "isError": False}


def _notification() -> bytes:
    """One tools/list_changed line: bare (legacy), or on the newest listen stream (modern)."""
    if not MODERN:
        return NOTIFICATION
    with _state_lock:
        listen = _listens[-1] if _listens else None
    if listen is None:
        return b""
    message = {
        "jsonrpc": "2.0",
        "method": "notifications/tools/list_changed",
        "params": {"_meta": {SUBSCRIPTION_ID: listen}},
    }
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def _flood(request_id, count: int, seconds: float) -> None:
    notification = _notification()
    batches = max(1, int(seconds * BATCHES_PER_SECOND))
    started = time.monotonic()
    sent = 0
    for batch in range(batches):
        upto = count * (batch + 1) // batches
        lines = upto - sent
        if batch == batches - 1 and lines > 0:
            # The list changes just before the very last notification of the flood.
            _write(notification * (lines - 1))
            with _state_lock:
                _state["generation"] += 1
            _write(notification)
        elif lines > 0:
            _write(notification * lines)
        sent = upto
        pause = started + seconds * (batch + 1) / batches - time.monotonic()
        if pause > 0:
            time.sleep(pause)
    _answer(request_id, _text(f"sent {sent} notifications/tools/list_changed"))


def _acknowledge(request_id, honoured: dict) -> None:
    _send(
        {
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {"_meta": {SUBSCRIPTION_ID: request_id}, "notifications": honoured},
        }
    )
    if honoured:
        with _state_lock:
            _listens.append(request_id)


def _change_then_acknowledge(request_id, honoured: dict) -> None:
    time.sleep(CHANGE_BEFORE_ACK)
    with _state_lock:
        _state["unannounced"] += 1
    _acknowledge(request_id, honoured)


def _call(request_id, params: dict) -> None:
    name = params.get("name")
    arguments = params.get("arguments") or {}
    if name == "flood_list_changed":
        count = int(arguments.get("count", 0))
        seconds = float(arguments.get("seconds", 1.0))
        threading.Thread(target=_flood, args=(request_id, count, seconds), daemon=True).start()
    elif name == "list_requests":
        with _state_lock:
            snapshot = dict(_state)
        snapshot["tools"] = [tool["name"] for tool in _tools()]
        _answer(request_id, {**_text(json.dumps(snapshot)), "structuredContent": snapshot})
    else:
        _error(request_id, -32602, f"unknown tool {name!r}")


def _handle(message: dict) -> None:
    method = message.get("method")
    request_id = message.get("id")
    params = message.get("params") or {}
    if request_id is None:
        if method == "notifications/cancelled":
            with _state_lock:
                if params.get("requestId") in _listens:
                    _listens.remove(params.get("requestId"))
        return  # other notifications (and responses): nothing to do
    if MODERN and method == "server/discover":
        _answer(
            request_id,
            {
                "supportedVersions": [MODERN_VERSION],
                "capabilities": {"tools": {"listChanged": True}},
                "ttlMs": 0,
                "cacheScope": "private",
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "flood-server", "version": "1.0"}},
            },
        )
    elif MODERN and method == "subscriptions/listen":
        wanted = params.get("notifications") or {}
        honoured = {"toolsListChanged": True} if wanted.get("toolsListChanged") else {}
        if CHANGE_BEFORE_ACK is None:
            _acknowledge(request_id, honoured)
        else:
            threading.Thread(
                target=_change_then_acknowledge, args=(request_id, honoured), daemon=True
            ).start()
    elif not MODERN and method == "initialize":
        _answer(
            request_id,
            {
                "protocolVersion": params.get("protocolVersion", "2025-11-25"),
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "flood-server", "version": "1.0"},
            },
        )
    elif method == "ping":
        _answer(request_id, {})
    elif method == "tools/list":
        with _state_lock:
            _state["tools_list"] += 1
        _answer(
            request_id,
            {"tools": _tools(), "ttlMs": 0, "cacheScope": "private"} if MODERN else {"tools": _tools()},
        )
    elif method == "tools/call":
        _call(request_id, params)
    else:
        _error(request_id, -32601, f"Method not found: {method}")


def main() -> None:
    for line in sys.stdin.buffer:
        line = line.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict):
            _handle(message)


if __name__ == "__main__":
    main()
