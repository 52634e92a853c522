"""A legacy MCP server over stdio that echoes the secrets it was given in everything it sends back.

Stdlib only. Why it exists: values passed in ``env=`` are secrets (README), and a server knows them;
the masking tests need a real process that puts them wherever a client shows a server's text. Each
value of ``API_KEY`` and ``DB_PASSWORD`` from its environment goes, as it is and JSON-escaped, into:

    leak  -> a ``notifications/progress`` (when asked for) and a ``notifications/message`` (logger
             and data), then a result whose text block, JSON text block and structuredContent
             hold them
    fail  -> a JSON-RPC error whose message and data hold them

With ``--refuse`` it refuses the handshake with an error that holds them. They go also into the
text of its one resource (``secret://config``, JSON) and its one prompt (``login``:
description and message).
"""

from __future__ import annotations

import json
import os
import sys

KEY = os.environ["API_KEY"]
PASSWORD = os.environ["DB_PASSWORD"]
OUTPUT = {"type": "object", "properties": {"key": {"type": "string"}, "rows": {"type": "array"}}}
TOOLS = [
    {"name": "leak", "inputSchema": {"type": "object"}, "outputSchema": OUTPUT},
    {"name": "fail", "inputSchema": {"type": "object"}},
]


def write(message: dict) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
    sys.stdout.flush()


def call_tool(request_id: object, name: object, token: object) -> None:
    if name == "leak":
        if token is not None:
            progress = {"progressToken": token, "progress": 1, "message": f"trying {KEY}"}
            write({"method": "notifications/progress", "params": progress})
        log = {
            "level": "error",
            "logger": f"auth {KEY}",
            "data": {"message": f"login with {KEY} failed", "password": PASSWORD},
        }
        write({"method": "notifications/message", "params": log})
        write({"method": "notifications/message", "params": {"level": "warning", "data": f"key={KEY}"}})
        content = [
            {"type": "text", "text": f"the key is {KEY}"},
            {"type": "text", "text": json.dumps({"password": PASSWORD, "key": KEY})},
        ]
        structured = {"key": KEY, "rows": [{"user": "ada", "password": PASSWORD}]}
        write({"id": request_id, "result": {"content": content, "structuredContent": structured}})
    elif name == "fail":
        error = {
            "code": -32603,
            "message": f"the key {KEY} was refused ({json.dumps(PASSWORD)})",
            "data": {"key": KEY, "password": PASSWORD},
        }
        write({"id": request_id, "error": error})
    else:
        write({"id": request_id, "error": {"code": -32602, "message": "unknown tool"}})


def handle(message: dict) -> None:
    method = message.get("method")
    if not isinstance(method, str) or "id" not in message:
        return  # a notification or a response: ignored
    request_id = message["id"]
    params = message.get("params") or {}
    if method == "initialize" and "--refuse" in sys.argv:
        write({"id": request_id, "error": {"code": -32603, "message": f"bad key {KEY} ({PASSWORD})"}})
    elif method == "initialize":
        result = {
            "protocolVersion": params.get("protocolVersion"),
            "capabilities": {"tools": {}, "logging": {}, "resources": {}, "prompts": {}},
            "serverInfo": {"name": "secret-echo", "version": "1", "title": f"echo for {KEY}"},
            "instructions": f"Call leak; your key is {KEY}.",
        }
        write({"id": request_id, "result": result})
    elif method in ("ping", "logging/setLevel"):
        write({"id": request_id, "result": {}})
    elif method == "tools/list":
        write({"id": request_id, "result": {"tools": TOOLS}})
    elif method == "resources/list":
        resource = {"uri": "secret://config", "name": "config", "mimeType": "application/json"}
        write({"id": request_id, "result": {"resources": [resource]}})
    elif method == "resources/read":
        text = json.dumps([{"name": "db", "key": KEY, "password": PASSWORD}])
        content = {"uri": "secret://config", "mimeType": "application/json", "text": text}
        write({"id": request_id, "result": {"contents": [content]}})
    elif method == "prompts/list":
        write({"id": request_id, "result": {"prompts": [{"name": "login", "arguments": []}]}})
    elif method == "prompts/get":
        message = {"role": "user", "content": {"type": "text", "text": f"log in with {KEY} / {PASSWORD}"}}
        result = {"description": f"uses {KEY}", "messages": [message]}
        write({"id": request_id, "result": result})
    elif method == "tools/call":
        call_tool(request_id, params.get("name"), (params.get("_meta") or {}).get("progressToken"))
    else:
        write({"id": request_id, "error": {"code": -32601, "message": "Method not found"}})


def main() -> None:
    from _lines import serve  # beside this script (run as one, its folder is on sys.path)

    serve(handle)


if __name__ == "__main__":
    main()
