"""A legacy (initialize-handshake) MCP server over stdio whose tools carry whatever schemas a test gives.

Stdlib only, so it starts fast. Why it exists: the "a schema cannot fetch or freeze the client" tests
(issue #35) need a real process whose ``tools/list`` holds hostile ``inputSchema``/``outputSchema``
(``$ref`` to a listener, ``$id``-relative and ``$dynamicRef`` refs, ``file://``, ReDoS patterns)
and whose results carry the ``structuredContent`` that meets them.

    python schema_server.py --spec FILE [--log FILE]

``--spec FILE`` is JSON: ``{"tools": [tool, ...], "answers": {"<tool name>": structuredContent}}``.
Every ``tools/call`` answers with a text block and, when ``answers`` has the tool, that
``structuredContent`` (with ``"echo_arguments": true`` in the spec, the text block is the arguments
it received, as sorted JSON, so a test sees what was sent). ``--log FILE`` appends the name of every
tool called (one line each), so a test can prove a refused call never reached the server.
"""

from __future__ import annotations

import json
import sys

with open(sys.argv[sys.argv.index("--spec") + 1], encoding="utf-8") as spec_file:
    SPEC = json.load(spec_file)
LOG = sys.argv[sys.argv.index("--log") + 1] if "--log" in sys.argv else None

out = sys.stdout.buffer


def send(message: dict) -> None:
    out.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
    out.flush()


def call_tool(request_id: object, name: object, arguments: object) -> None:
    if LOG:
        with open(LOG, "a", encoding="utf-8") as log:
            log.write(f"{name}\n")
    text = json.dumps(arguments, sort_keys=True) if SPEC.get("echo_arguments") else f"called {name}"
    result: dict = {"content": [{"type": "text", "text": text}], "isError": False}
    if name in SPEC.get("answers", {}):
        result["structuredContent"] = SPEC["answers"][name]
    send({"id": request_id, "result": result})


def handle(message: dict) -> None:
    method = message.get("method")
    if not isinstance(method, str) or "id" not in message:
        return  # notifications and responses: ignored
    request_id = message["id"]
    params = message.get("params") or {}
    if method == "initialize":
        info = {"name": "schema-server", "version": "1.0"}
        answer = {
            "protocolVersion": params.get("protocolVersion"),
            "capabilities": {"tools": {}},
            "serverInfo": info,
        }
        send({"id": request_id, "result": answer})
    elif method == "ping":
        send({"id": request_id, "result": {}})
    elif method == "tools/list":
        send({"id": request_id, "result": {"tools": SPEC["tools"]}})
    elif method == "tools/call":
        call_tool(request_id, params.get("name"), params.get("arguments"))
    else:  # server/discover too: a legacy server
        send({"id": request_id, "error": {"code": -32601, "message": f"Method not found: {method}"}})


def main() -> None:
    from _lines import serve  # beside this script (run as one, its folder is on sys.path)

    serve(handle)


if __name__ == "__main__":
    main()
