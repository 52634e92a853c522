"""A legacy (initialize-handshake) MCP server over stdio whose schemas and numbers attack the client's walks.

Stdlib only, so it starts fast. Why it exists (issue #35, items 3 and 8): the "every schema walk
is bounded" and "frames keep values exact" tests need a real process that sends

    fanout    a 1 KB ``inputSchema`` and ``outputSchema`` whose definitions each refer to the next
              one :data:`FAN_OUT` times, :data:`LEVELS` deep (no cycle: 4**10 nodes expanded), and a
              result whose ``structuredContent`` matches it, :data:`VALUE_LEVELS` levels deep
    big_ints  ``structuredContent`` rows holding 9007199254740993 (2**53 + 1), 2**70 and a column of
              integers with a gap (``None``)
    choose    an ``inputSchema`` whose property ``x`` is an ``anyOf`` of four references to the next
              such definition, :data:`LEVELS` + 2 deep, ending in an integer (the magics' type lookup),
              answering ``{"result": x}``
    echo      ``{"result": n}`` for the argument ``n``, as it came (for ``map_tool``)

and one resource, ``walks://ids.csv``: a CSV whose integer column has a gap (:data:`IDS_CSV`).
Given a URL as its argument, it also offers ``remote``, whose ``inputSchema`` refers to that URL
(a listener of the test's, which must never be reached).
"""

from __future__ import annotations

import json
import sys
from typing import Any

FAN_OUT = 4
LEVELS = 10
VALUE_LEVELS = 6
NAMES = "abcdefgh"[:FAN_OUT]

#: ``d0`` .. ``d9`` each an object whose every property refers to the next one; ``d10`` a string
DEFINITIONS: dict[str, Any] = {
    f"d{level}": {"type": "object", "properties": {name: {"$ref": f"#/$defs/d{level + 1}"} for name in NAMES}}
    for level in range(LEVELS)
}
DEFINITIONS[f"d{LEVELS}"] = {"type": "string"}
FANOUT_SCHEMA = {"type": "object", "properties": {"root": {"$ref": "#/$defs/d0"}}, "$defs": DEFINITIONS}
#: ``c0`` .. ``c11`` each an ``anyOf`` of four references to the next one; ``c12`` an integer
BRANCHES: dict[str, Any] = {
    f"c{level}": {"anyOf": [{"$ref": f"#/$defs/c{level + 1}"}] * FAN_OUT} for level in range(LEVELS + 2)
}
BRANCHES[f"c{LEVELS + 2}"] = {"type": "integer"}
CHOOSE_SCHEMA = {
    "type": "object",
    "properties": {"x": {"$ref": "#/$defs/c0"}},
    "required": ["x"],
    "$defs": BRANCHES,
}

BEYOND_FLOAT = 2**53 + 1  # 9007199254740993: the first integer a float64 rounds
BEYOND_INT64 = 2**70
BIG_ROWS = [
    {"id": 1, "exact": BEYOND_FLOAT, "huge": BEYOND_INT64, "gappy": BEYOND_FLOAT},
    {"id": 2, "exact": 2, "huge": 3, "gappy": None},
]

IDS_CSV = f"id,n\n{BEYOND_FLOAT},1\n,2\n3,3\n"
RESOURCES = [{"uri": "walks://ids.csv", "name": "ids", "mimeType": "text/csv"}]

TOOLS = [
    {"name": "fanout", "inputSchema": FANOUT_SCHEMA, "outputSchema": FANOUT_SCHEMA},
    {"name": "choose", "inputSchema": CHOOSE_SCHEMA},
    {"name": "big_ints", "inputSchema": {"type": "object"}},
    {"name": "echo", "inputSchema": {"type": "object", "properties": {"n": {}}}},
]


if len(sys.argv) > 1:
    remote = {"type": "object", "properties": {"x": {"$ref": sys.argv[1]}, "n": {"type": "integer"}}}
    TOOLS.append({"name": "remote", "inputSchema": remote})


def fanned(levels: int) -> Any:
    """A value of the fan-out schema: every property present, ``levels`` objects deep."""
    return {} if levels == 0 else {name: fanned(levels - 1) for name in NAMES}


def write(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def call_tool(request_id: object, name: object, arguments: dict[str, Any]) -> None:
    if name == "fanout":
        structured: Any = {"root": fanned(VALUE_LEVELS)}
    elif name == "big_ints":
        structured = {"rows": BIG_ROWS}
    elif name == "choose":
        structured = {"result": arguments.get("x")}
    elif name == "echo":
        structured = {"result": arguments.get("n")}
    else:
        write({"id": request_id, "error": {"code": -32602, "message": "unknown tool"}})
        return
    text = json.dumps(structured)
    content = [{"type": "text", "text": text if len(text) < 1000 else "(structured)"}]
    write({"id": request_id, "result": {"content": content, "structuredContent": structured}})


def handle(message: dict[str, Any]) -> None:
    method = message.get("method")
    if not isinstance(method, str) or "id" not in message:
        return  # a notification or a response: ignored
    request_id = message["id"]
    params = message.get("params") or {}
    if method == "initialize":
        result = {
            "protocolVersion": params.get("protocolVersion"),
            "capabilities": {"tools": {}, "resources": {}},
            "serverInfo": {"name": "walks", "version": "1"},
        }
        write({"id": request_id, "result": result})
    elif method == "ping":
        write({"id": request_id, "result": {}})
    elif method == "tools/list":
        write({"id": request_id, "result": {"tools": TOOLS}})
    elif method == "resources/list":
        write({"id": request_id, "result": {"resources": RESOURCES}})
    elif method == "resources/read":
        contents = [{**RESOURCES[0], "text": IDS_CSV}]
        write({"id": request_id, "result": {"contents": contents}})
    elif method == "tools/call":
        arguments = params.get("arguments")
        call_tool(request_id, params.get("name"), arguments if isinstance(arguments, dict) else {})
    else:
        write({"id": request_id, "error": {"code": -32601, "message": "Method not found"}})


def main() -> None:
    from _lines import serve  # beside this script (run as one, its folder is on sys.path)

    serve(handle)


if __name__ == "__main__":
    main()
