"""A legacy MCP server over stdio with as many tools, resources and prompts as it is told.

Run as ``python many_server.py TOOLS [RESOURCES [PROMPTS [TEMPLATES]]] [--hostile]`` (stdio). Stdlib only, so
it starts fast. Why it exists: the panels must stay usable however long a server's lists are (issue
#35: 20,000 tools took 11.7 s and 60,000 widgets to draw, 200,000 never finished), and they must
show every string a server sends with its control and bidi characters made visible.

Tool ``i`` is ``tool_i`` (six digits), described as "Tool number i, even." (or "odd."), and answers
a call with ``called tool_i`` and its arguments as JSON. Resources are ``res_i`` at ``mem://r/i``,
prompts ``prompt_i``, resource templates ``tpl_i`` at ``mem://t/i/{id}``. Lists come in pages of
:data:`PAGE` items.

With ``--hostile`` the first tool, resource and prompt carry :data:`HOSTILE` (a right-to-left
override, a right-to-left mark, NUL and a terminal escape) in their names and descriptions, and so
does everything the server returns: the text of a call (its arguments echoed too), of a read, of a
prompt, and a log message sent during each call; one more tool, ``ask``, asks the client a question
(a form elicitation) whose message, field titles and choices carry it.
"""

from __future__ import annotations

import json
import sys

#: a bidi override (the rest of a line reads backwards), a right-to-left mark, NUL, ESC (clear screen)
HOSTILE = "\u202eevil\u200f\x00\x1b[2J"
PAGE = 5000


def _counts() -> tuple[int, int, int, int, bool]:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    numbers = [int(a) for a in args] + [0, 0, 0, 0]
    return numbers[0], numbers[1], numbers[2], numbers[3], "--hostile" in sys.argv[1:]


TOOLS, RESOURCES, PROMPTS, TEMPLATES, HOSTILE_ON = _counts()
MARK = HOSTILE if HOSTILE_ON else ""


def tool(i: int) -> dict:
    mark = MARK if i == 0 else ""
    return {
        "name": f"tool_{i:06d}{mark}",
        "description": f"Tool number {i}, {'even' if i % 2 == 0 else 'odd'}.{mark}",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    }


def resource(i: int) -> dict:
    mark = MARK if i == 0 else ""
    return {"name": f"res_{i:06d}{mark}", "uri": f"mem://r/{i}{mark}", "mimeType": "text/plain"}


def prompt(i: int) -> dict:
    mark = MARK if i == 0 else ""
    return {"name": f"prompt_{i:06d}{mark}", "description": f"Prompt number {i}.{mark}", "arguments": []}


def template(i: int) -> dict:
    return {"name": f"tpl_{i:06d}", "uriTemplate": f"mem://t/{i}/{{id}}"}


def write(message: dict) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def page(key: str, make: object, total: int, params: dict) -> dict:
    start = int(params.get("cursor") or 0)
    end = min(start + PAGE, total)
    result: dict = {key: [make(i) for i in range(start, end)]}  # type: ignore[operator]
    if end < total:
        result["nextCursor"] = str(end)
    return result


def text(value: str) -> dict:
    return {"content": [{"type": "text", "text": value}]}


#: the id of an ``ask`` call waiting for the answer to its elicitation
asking: list[object] = []


def ask(request_id: object) -> None:
    """``ask`` (with --hostile): a form elicitation whose message, field and choices are hostile."""
    choice = {"type": "string", "enum": ["plain", f"pick{MARK}"], "title": f"choice{MARK}"}
    name = {"type": "string", "title": f"name{MARK}", "description": f"who{MARK}", "default": "Lin"}
    schema = {"type": "object", "properties": {"name": name, "choice": choice}}
    params = {"message": f"Who are you?{MARK}", "requestedSchema": schema}
    asking.append(request_id)
    write({"id": "ask-1", "method": "elicitation/create", "params": params})


def handle(message: dict) -> None:
    method = message.get("method")
    if method is None and message.get("id") == "ask-1" and asking:  # the answer to ask's question
        answer = json.dumps(message.get("result"), ensure_ascii=False)
        write({"id": asking.pop(), "result": text(f"answered {answer}")})
        return
    if not isinstance(method, str) or "id" not in message:
        return  # a notification or another response: ignored
    request_id = message["id"]
    params = message.get("params") or {}
    if method == "initialize":
        capabilities = {"tools": {}, "resources": {}, "prompts": {}, "logging": {}}
        info = {"name": "many", "version": "1"}
        result = {"protocolVersion": params.get("protocolVersion"), "capabilities": capabilities}
        write({"id": request_id, "result": {**result, "serverInfo": info}})
    elif method in ("ping", "logging/setLevel"):
        write({"id": request_id, "result": {}})
    elif method == "tools/list":
        result = page("tools", tool, TOOLS, params)
        if MARK and "nextCursor" not in result:
            result["tools"].append({"name": "ask", "inputSchema": {"type": "object"}})
        write({"id": request_id, "result": result})
    elif method == "resources/list":
        write({"id": request_id, "result": page("resources", resource, RESOURCES, params)})
    elif method == "resources/templates/list":
        write({"id": request_id, "result": page("resourceTemplates", template, TEMPLATES, params)})
    elif method == "prompts/list":
        write({"id": request_id, "result": page("prompts", prompt, PROMPTS, params)})
    elif method == "tools/call" and MARK and params.get("name") == "ask":
        ask(request_id)
    elif method == "tools/call":
        if MARK:
            params_log = {"level": "warning", "logger": f"log{MARK}", "data": f"said{MARK}"}
            write({"method": "notifications/message", "params": params_log})
        arguments = json.dumps(params.get("arguments"), ensure_ascii=False)
        write({"id": request_id, "result": text(f"called {params.get('name')}{MARK} {arguments}")})
    elif method == "resources/read":
        uri = params.get("uri")
        contents = [{"uri": uri, "mimeType": "text/plain", "text": f"read {uri}{MARK}"}]
        write({"id": request_id, "result": {"contents": contents}})
    elif method == "prompts/get":
        said = {"role": "user", "content": {"type": "text", "text": f"asked {params.get('name')}{MARK}"}}
        write({"id": request_id, "result": {"description": f"got{MARK}", "messages": [said]}})
    else:
        write({"id": request_id, "error": {"code": -32601, "message": "Method not found"}})


def main() -> None:
    from _lines import serve  # beside this script (run as one, its folder is on sys.path)

    serve(handle)


if __name__ == "__main__":
    main()
