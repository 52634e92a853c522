"""A legacy MCP server over stdio whose lists, names and errors are as long as it is told (issue #35).

Stdlib only, so it starts fast; newline-delimited JSON-RPC, the ``initialize`` handshake
(``server/discover`` gets -32601). It declares tools, resources and prompts, and answers
``tools/list``, ``resources/list``, ``resources/templates/list`` and ``prompts/list`` alike:

    --items N         each list holds N items (default 3), in pages of --page items
    --page P          items per page (default 1000)
    --forever         every list pages without end (each page with a new cursor)
    --delay S         each page is answered after S seconds (default 0)
    --name-length L   item names are padded with "x" to L characters (tool ``i`` is ``tool_i``)
    --tools A,B,...   the tools are exactly these names (instead of ``tool_i``)
    --label X         a tool call answers ``X:<tool name>``, so a test sees which server ran it

``tools/call`` of a listed tool answers ``<label>:<name>``; of the tool ``fail`` (always listed
with ``--tools``) a JSON-RPC error whose message is ``arguments.size`` characters; of any other
name a -32602 error that quotes the whole name, as the SDKs' "Unknown tool" errors do.
"""

from __future__ import annotations

import json
import sys
import time


def _option(name: str, default: str | None) -> str | None:
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


ITEMS = int(_option("--items", "3") or 3)
PAGE = int(_option("--page", "1000") or 1000)
FOREVER = "--forever" in sys.argv[1:]
DELAY = float(_option("--delay", "0") or 0)
NAME_LENGTH = int(_option("--name-length", "0") or 0)
LABEL = _option("--label", "server") or "server"
NAMED = _option("--tools", None)
TOOL_NAMES = [*NAMED.split(","), "fail"] if NAMED else None

out = sys.stdout.buffer


def write(message: dict) -> None:
    out.write(json.dumps(message).encode() + b"\n")
    out.flush()


def result(request_id: object, value: dict) -> None:
    write({"jsonrpc": "2.0", "id": request_id, "result": value})


def error(request_id: object, code: int, message: str) -> None:
    write({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})


def name(prefix: str, i: int) -> str:
    return f"{prefix}_{i}".ljust(NAME_LENGTH, "x")


def item(key: str, i: int) -> dict:
    if key == "tools":
        tool = TOOL_NAMES[i] if TOOL_NAMES else name("tool", i)
        return {"name": tool, "description": f"Tool {i}.", "inputSchema": {"type": "object"}}
    if key == "resources":
        return {"name": name("res", i), "uri": f"mem://r/{i}"}
    if key == "resourceTemplates":
        return {"name": name("tpl", i), "uriTemplate": f"mem://t/{i}/{{x}}"}
    return {"name": name("prompt", i)}


LISTS = {
    "tools/list": "tools",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
    "prompts/list": "prompts",
}


def list_page(request_id: object, key: str, cursor: object) -> None:
    if DELAY:
        time.sleep(DELAY)
    start = int(cursor) if isinstance(cursor, str) and cursor.isdigit() else 0
    total = len(TOOL_NAMES) if TOOL_NAMES and key == "tools" else ITEMS
    end = start + PAGE if FOREVER else min(start + PAGE, total)
    page: dict = {key: [item(key, i) for i in range(start, end)]}
    if FOREVER or end < total:
        page["nextCursor"] = str(end)
    result(request_id, page)


def listed(tool: str) -> bool:
    if TOOL_NAMES is not None:
        return tool in TOOL_NAMES
    number = tool.removeprefix("tool_").rstrip("x")
    return number.isdigit() and tool == name("tool", int(number)) and (FOREVER or int(number) < ITEMS)


def call_tool(request_id: object, params: dict) -> None:
    tool = params.get("name")
    arguments = params.get("arguments") or {}
    if tool == "fail":
        error(request_id, -32603, "E" * int(arguments.get("size", 10)))
    elif isinstance(tool, str) and listed(tool):
        result(request_id, {"content": [{"type": "text", "text": f"{LABEL}:{tool}"}]})
    else:
        error(request_id, -32602, f"Unknown tool: {tool}")


def handle(message: dict) -> None:
    method = message.get("method")
    if not isinstance(method, str) or "id" not in message:
        return
    request_id = message["id"]
    params = message.get("params") or {}
    if method == "initialize":
        capabilities = {"tools": {}, "resources": {}, "prompts": {}}
        info = {"name": "list-bounds", "version": "1.0"}
        version = params.get("protocolVersion")
        result(request_id, {"protocolVersion": version, "capabilities": capabilities, "serverInfo": info})
    elif method == "ping":
        result(request_id, {})
    elif method in LISTS:
        list_page(request_id, LISTS[method], params.get("cursor"))
    elif method == "tools/call":
        call_tool(request_id, params)
    else:
        error(request_id, -32601, f"Method not found: {method}")


def main() -> None:
    from _lines import serve  # beside this script (run as one, its folder is on sys.path)

    serve(handle)


if __name__ == "__main__":
    main()
