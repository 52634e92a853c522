"""A legacy (initialize-handshake) MCP server over stdio that misbehaves on request.

Stdlib only, so it starts fast. It speaks newline-delimited JSON-RPC: ``server/discover`` gets
-32601 (so clients fall back to ``initialize``), ``initialize`` echoes the requested version,
notifications are ignored, and ``tools/call`` is dispatched by tool name:

    echo           {"n": integer} -> the text str(n)
    huge           {"mb": number} -> one text result of that many MiB, as a single line
    crash          prints a distinctive line to stderr, then os._exit(3)
    hang           never answers
    stall          never answers, but first sends progress 0 if the request has a progressToken
                   (so a caller knows the call has arrived and can cancel it then)
    received       -> JSON text ``{"calls": [[id, tool], ...], "cancelled": [params, ...]}``: the
                   tools/call requests and the ``notifications/cancelled`` received so far
    slow           {"seconds": number} -> answers "slow done" that much later (ignores cancellation)
    flood_stderr   {"mb": number, "newlines": bool} -> writes that much to stderr, then answers
    report         {"shape": "good" | "bad" | "missing" | "error"} -> a result for its declared
                   outputSchema that matches it, breaks it, lacks structuredContent, or is an error

Flags select misbehaviours that apply to the whole session:

    --log FILE         append every message received (one JSON line each) to FILE
    --pidfile FILE     write our pid to FILE at startup
    --garbage          before every answer, print lines that are not JSON-RPC messages
    --crlf             end our lines with \\r\\n
    --stray-ids        before every tools/call answer, send answers to ids nobody asked for
    --fail-startup     print an error to stderr and exit with code 2 at once
    --stubborn         ignore SIGTERM and keep running after stdin EOF
    --grandchild FILE  spawn a sleeping grandchild process and write its pid to FILE
    --stubborn-grandchild  make that grandchild ignore SIGTERM
    --id-last          write the huge answer with "id" after "result" (the TypeScript SDK's order)
    --max-line BYTES   a line longer than BYTES is fatal: log its head as {"partial": head} and
                       exit with code 4 before reading the rest (a server that acts on the start of
                       a request, then dies while the client is still writing it)
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time

GARBAGE = [
    b"this is not json at all",
    b"[1, 2, 3]",
    b"42",
    b"\xff\xfe\x80 invalid utf-8 \xc3\x28",
    b'{"hello": "world"}',
    b'{"jsonrpc": "2.0", "id": true, "result": {}}',
]
CRASH_LINE = "bad_server: FATAL: the flux capacitor melted (exit 3)"
STARTUP_LINE = "bad_server: cannot start: config file /etc/bad_server.toml is missing"

TOOLS = [
    {
        "name": "echo",
        "description": "Echo an integer back as text.",
        "inputSchema": {
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
            "additionalProperties": False,
        },
    },
    {
        "name": "huge",
        "description": "Answer with one very large text result.",
        "inputSchema": {"type": "object", "properties": {"mb": {"type": "number"}}},
    },
    {"name": "crash", "description": "Exit mid-call.", "inputSchema": {"type": "object"}},
    {"name": "hang", "description": "Never answer.", "inputSchema": {"type": "object"}},
    {"name": "stall", "description": "Say it started, never answer.", "inputSchema": {"type": "object"}},
    {"name": "received", "description": "What this server was sent.", "inputSchema": {"type": "object"}},
    {
        "name": "report",
        "description": "Structured output that may or may not match the declared outputSchema.",
        "inputSchema": {"type": "object", "properties": {"shape": {"type": "string"}}},
        "outputSchema": {
            "type": "object",
            "properties": {
                "count": {"type": "integer"},
                "rows": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"price": {"type": "number"}},
                        "required": ["price"],
                    },
                },
            },
            "required": ["count", "rows"],
        },
    },
    {
        "name": "slow",
        "description": "Answer late.",
        "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}}},
    },
    {
        "name": "flood_stderr",
        "description": "Write a lot to stderr, then answer.",
        "inputSchema": {
            "type": "object",
            "properties": {"mb": {"type": "number"}, "newlines": {"type": "boolean"}},
        },
    },
]

out = sys.stdout.buffer
#: What ``received`` reports: (id, tool) of each tools/call, and each notifications/cancelled's params.
calls_seen: list[list] = []
cancels_seen: list = []
write_lock = threading.Lock()
opts: argparse.Namespace


def write_line(data: bytes) -> None:
    with write_lock:
        out.write(data + (b"\r\n" if opts.crlf else b"\n"))
        out.flush()


def send(message: dict) -> None:
    if opts.garbage:
        for line in GARBAGE:
            write_line(line)
    write_line(json.dumps(message).encode())


def result(request_id, value: dict) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "result": value})


def error(request_id, code: int, message: str) -> None:
    send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})


def text(value: str) -> dict:
    return {"content": [{"type": "text", "text": value}], "isError": False}


def log(raw: bytes) -> None:
    if opts.log:
        with open(opts.log, "ab") as f:
            f.write(raw.rstrip(b"\r\n") + b"\n")


def send_huge(request_id, mb: float) -> None:
    """One answer of ``mb`` MiB on a single line, streamed so this server stays small."""
    size = int(mb * 1024 * 1024)
    rid = json.dumps(request_id).encode()
    chunk = b"x" * (1024 * 1024)
    with write_lock:
        if opts.id_last:
            out.write(b'{"result": {"content": [{"type": "text", "text": "')
        else:
            out.write(
                b'{"jsonrpc": "2.0", "id": ' + rid + b', "result": {"content": [{"type": "text", "text": "'
            )
        left = size
        while left > 0:
            out.write(chunk[: min(left, len(chunk))])
            left -= len(chunk)
        out.write(b'"}], "isError": false}')
        out.write(b', "jsonrpc": "2.0", "id": ' + rid + b"}\n" if opts.id_last else b"}\n")
        out.flush()


def call_tool(request_id, name: str, args: dict, meta: dict) -> None:
    calls_seen.append([request_id, name])
    if opts.stray_ids:
        write_line(json.dumps({"jsonrpc": "2.0", "id": 99999, "result": {"content": []}}).encode())
        write_line(
            json.dumps({"jsonrpc": "2.0", "id": 99998, "error": {"code": -1, "message": "stray"}}).encode()
        )
        write_line(json.dumps({"jsonrpc": "2.0", "id": "not-a-request", "result": {}}).encode())
    if name == "echo":
        result(request_id, text(str(args.get("n"))))
    elif name == "huge":
        send_huge(request_id, float(args.get("mb", 50)))
    elif name == "crash":
        sys.stderr.write("bad_server: about to crash\n")
        sys.stderr.write(CRASH_LINE + "\n")
        sys.stderr.flush()
        os._exit(3)
    elif name == "report":
        shape = args.get("shape", "good")
        good = {"count": 1, "rows": [{"price": 1.5}]}
        bad = {"count": "many", "rows": [{"price": "cheap-" + "x" * 100_000}]}
        answer = text("a report")
        if shape in ("good", "bad"):
            answer["structuredContent"] = good if shape == "good" else bad
        elif shape == "error":
            answer["isError"] = True
        result(request_id, answer)
    elif name == "hang":
        pass
    elif name == "stall":
        if "progressToken" in meta:
            send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": meta["progressToken"], "progress": 0},
                }
            )
    elif name == "received":
        result(request_id, text(json.dumps({"calls": calls_seen, "cancelled": cancels_seen})))
    elif name == "slow":
        seconds = float(args.get("seconds", 1.0))
        threading.Timer(seconds, result, (request_id, text("slow done"))).start()
    elif name == "flood_stderr":
        size = int(float(args.get("mb", 10)) * 1024 * 1024)
        line = b"e" * 99 + b"\n" if args.get("newlines", True) else b"e" * 100
        block = line * 10_000
        written = 0
        while written < size:
            sys.stderr.buffer.write(block)
            written += len(block)
        sys.stderr.buffer.write(b"\nflood done\n")
        sys.stderr.flush()
        result(request_id, text(f"flooded {written} bytes"))
    else:
        error(request_id, -32602, f"unknown tool {name!r}")


def handle(message: dict) -> None:
    method = message.get("method")
    request_id = message.get("id")
    params = message.get("params") or {}
    if method == "notifications/cancelled" and "id" not in message:
        cancels_seen.append(params)
    if method is None or "id" not in message:
        return  # a notification (or a response): otherwise ignored
    if method == "server/discover":
        error(request_id, -32601, "Method not found")
    elif method == "initialize":
        result(
            request_id,
            {
                "protocolVersion": params.get("protocolVersion"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "bad-server", "version": "0.0.1"},
            },
        )
    elif method == "ping":
        result(request_id, {})
    elif method == "tools/list":
        result(request_id, {"tools": TOOLS})
    elif method == "tools/call":
        call_tool(request_id, params.get("name"), params.get("arguments") or {}, params.get("_meta") or {})
    else:
        error(request_id, -32601, f"Method not found: {method}")


def main() -> None:
    global opts
    parser = argparse.ArgumentParser()
    parser.add_argument("--log")
    parser.add_argument("--pidfile")
    parser.add_argument("--garbage", action="store_true")
    parser.add_argument("--crlf", action="store_true")
    parser.add_argument("--stray-ids", action="store_true")
    parser.add_argument("--fail-startup", action="store_true")
    parser.add_argument("--stubborn", action="store_true")
    parser.add_argument("--grandchild")
    parser.add_argument("--stubborn-grandchild", action="store_true")
    parser.add_argument("--id-last", action="store_true")
    parser.add_argument("--max-line", type=int)
    opts = parser.parse_args()

    if opts.fail_startup:
        sys.stderr.write(STARTUP_LINE + "\n")
        sys.stderr.flush()
        sys.exit(2)
    if opts.pidfile:
        with open(opts.pidfile, "w") as f:
            f.write(str(os.getpid()))
    if opts.stubborn:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if opts.grandchild:
        # The grandchild writes its own pid once its signal disposition is set, so a test that has
        # read the pid knows a SIGTERM will be ignored.
        ignore = "signal.signal(signal.SIGTERM, signal.SIG_IGN)" if opts.stubborn_grandchild else "pass"
        code = (
            f"import os, signal, sys, time; {ignore}; "
            "open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(60)"
        )
        subprocess.Popen([sys.executable, "-c", code, opts.grandchild], stdin=subprocess.DEVNULL)

    stdin = sys.stdin.buffer
    while True:
        raw = stdin.readline(opts.max_line + 1) if opts.max_line else stdin.readline()
        if not raw:
            break
        if opts.max_line and len(raw) > opts.max_line and not raw.endswith(b"\n"):
            if opts.log:
                with open(opts.log, "a") as f:
                    f.write(json.dumps({"partial": raw[:200].decode(errors="replace")}) + "\n")
            sys.stderr.write("bad_server: a line longer than --max-line; giving up\n")
            sys.stderr.flush()
            os._exit(4)
        log(raw)
        try:
            message = json.loads(raw)
        except ValueError:
            continue
        if isinstance(message, dict):
            handle(message)
    if opts.stubborn:
        while True:  # stdin is closed, but we keep running anyway
            time.sleep(1)


if __name__ == "__main__":
    main()
