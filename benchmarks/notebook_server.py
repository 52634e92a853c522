"""The server the notebook benchmark's kernels talk to: a chatty stdio MCP server (stdlib only).

It is the echo server (:mod:`benchmarks.echo_server`, legacy era: ``initialize``, so log messages
are session-wide and reach the log panel) with two tools that pace their notifications in time, as
a real chatty server does, instead of sending them all at once:

    log_flood       {"count": int, "seconds": number} -> ``count`` ``notifications/message``
                    spread evenly over ``seconds`` (100 writes a second), then the result.
    progress_flood  {"count": int, "seconds": number} -> ``count`` progress notifications for the
                    call's progressToken (none without one), spread the same way, then the result.

Both answer with ``structuredContent`` ``{"first": t, "last": t, "sent": n}``: the wall-clock
times (``time.time()``) of the first and last write. A client that stops reading fills the pipe
and blocks those writes, so ``last - first`` grows past ``seconds``: the benchmark shows it.

Floods run in a thread of their own, so calls made during one (``echo``) are answered at once.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.echo_server import EchoServer

WRITES_PER_SECOND = 100
_PACED = {
    "log_flood": "Send `count` log messages over `seconds`, then the result.",
    "progress_flood": "Send `count` progress notifications over `seconds`, then the result.",
}
_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


class _Writer:
    """Whole lines to stdout, one thread at a time (the flood threads and the reader share it)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._out = sys.stdout.buffer

    def write(self, messages: list[Any]) -> None:
        if not messages:
            return
        data = "".join(_dumps(m) + "\n" for m in messages).encode()
        with self._lock:
            self._out.write(data)
            self._out.flush()


def _note(name: str, token: Any, index: int, count: int) -> dict[str, Any]:
    if name == "progress_flood":
        params = {"progressToken": token, "progress": index + 1, "total": count}
        return {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}
    params = {"level": "info", "logger": "flood", "data": f"message {index}"}
    return {"jsonrpc": "2.0", "method": "notifications/message", "params": params}


def _paced(writer: _Writer, rid: Any, name: str, count: int, seconds: float, token: Any) -> None:
    """Send the notifications in even batches over ``seconds``, then the result with the times."""
    send = name == "log_flood" or token is not None
    batches = max(1, int(seconds * WRITES_PER_SECOND))
    started = time.monotonic()
    first = last = time.time()
    sent = 0
    for batch in range(batches):
        upto = count * (batch + 1) // batches
        if send and upto > sent:
            writer.write([_note(name, token, i, count) for i in range(sent, upto)])
            last = time.time()
        sent = upto
        pause = started + seconds * (batch + 1) / batches - time.monotonic()
        if pause > 0:
            time.sleep(pause)
    data = {"first": first, "last": last, "sent": sent if send else 0}
    result = {
        "content": [{"type": "text", "text": json.dumps(data)}],
        "structuredContent": data,
        "isError": False,
    }
    writer.write([{"jsonrpc": "2.0", "id": rid, "result": result}])


def main() -> None:
    server = EchoServer("legacy", 0)
    for tool, description in _PACED.items():
        schema = {
            "type": "object",
            "properties": {"count": {"type": "integer"}, "seconds": {"type": "number"}},
            "required": ["count"],
        }
        server.tools.append({"name": tool, "description": description, "inputSchema": schema})
    writer = _Writer()
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        params = msg.get("params") or {} if isinstance(msg, dict) else {}
        if isinstance(msg, dict) and msg.get("method") == "tools/call" and params.get("name") in _PACED:
            args = params.get("arguments") or {}
            token = (params.get("_meta") or {}).get("progressToken")
            flood = (msg["id"], params["name"], int(args["count"]), float(args.get("seconds", 1.0)), token)
            threading.Thread(target=_paced, args=(writer, *flood), daemon=True).start()
            continue
        writer.write(server.handle(msg))


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt, BrokenPipeError):
        main()
