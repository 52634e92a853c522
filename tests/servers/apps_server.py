"""A probe MCP server for MCP Apps (``io.modelcontextprotocol/ui``), over stdio.

The official SDK's low-level server, so every ``_meta`` is exactly what a test needs. Tools:

- ``show_chart(n)``: an app tool; its View ``ui://probe/chart.html`` declares a CSP
  (connectDomains, resourceDomains, plus one hostile entry a host must drop), permissions
  (clipboardWrite, camera) and prefersBorder; structured result ``{"points": [0..n-1]}``.
- ``app_refresh(n)``: visibility ``["app"]``, only a View may call it; ``{"refreshed": n}``.
- ``model_secret()``: visibility ``["model"]``: a View must never reach it.
- ``legacy_key()``: a View named only by the deprecated flat key ``_meta["ui/resourceUri"]``.
- ``blob_app()``: its View is served as a base64 ``blob``.
- ``wrong_mime()``: its "View" is served as plain ``text/html``, which a host must refuse.
- ``missing_resource()``: its View does not exist (reading it fails).
- ``not_ui()``: ``_meta.ui.resourceUri`` is an ``https://`` URL, so it has no View.
- ``failing_app()``: an app tool whose result is ``isError``.
- ``raising_app()``: an app tool that raises (a JSON-RPC error, or isError, by the SDK's choice).
- ``slow_app(delay)``: an app tool that answers after ``delay`` seconds.
- ``hostile_app()``: its View ``ui://probe/hostile.html`` is ``apps/hostile.html`` beside this
  file, read at every request (so it can be edited without restarting anything).
- ``export_app(title)``: its View ``ui://probe/export.html`` is ``apps/export.html`` beside this
  file: it shows the partial and final tool input the host streams to it and the result
  (``{"title": title, "rows": 2}``), and asks the host to save a CSV file (``ui/download-file``)
  when its Export button is clicked.
- ``call_counts()``: how often each tool was called, ``{"counts": {name: n}}``: the proof that
  a refused call never reached the server.
- ``client_capabilities()``: the capabilities the client declared, as the SDK saw them.

Run ``python apps_server.py`` (stdio only).
"""

from __future__ import annotations

import base64
import json
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

APP_MIME = "text/html;profile=mcp-app"
HERE = Path(__file__).resolve().parent
HOSTILE_FILE = HERE / "apps" / "hostile.html"
EXPORT_FILE = HERE / "apps" / "export.html"

CHART_CSP = {
    "connectDomains": ["https://api.example.com", "wss://live.example.com"],
    "resourceDomains": ["https://cdn.example.com", "https://x.example.com; script-src 'unsafe-eval'"],
}
CHART_PERMISSIONS = {"clipboardWrite": {}, "camera": {}}

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>{title}</title></head>
<body><h1>{title}</h1><p id="out">waiting for the host</p></body></html>
"""

calls: Counter[str] = Counter()


def _ui(uri: str | None = None, visibility: list[str] | None = None) -> dict[str, Any]:
    ui: dict[str, Any] = {}
    if uri is not None:
        ui["resourceUri"] = uri
    if visibility is not None:
        ui["visibility"] = visibility
    return {"ui": ui}


def _schema(properties: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": properties or {}}


TOOLS: list[dict[str, Any]] = [
    {
        "name": "show_chart",
        "title": "Show a chart",
        "description": "Points drawn by a View.",
        "inputSchema": _schema({"n": {"type": "integer"}}),
        "_meta": _ui("ui://probe/chart.html"),
    },
    {
        "name": "app_refresh",
        "description": "Only the chart's View calls this.",
        "inputSchema": _schema({"n": {"type": "integer"}}),
        "_meta": _ui("ui://probe/chart.html", ["app"]),
    },
    {
        "name": "model_secret",
        "description": "Only the model may call this; never a View.",
        "inputSchema": _schema(),
        "_meta": _ui(None, ["model"]),
    },
    {
        "name": "legacy_key",
        "description": "A View named by the deprecated flat key only.",
        "inputSchema": _schema(),
        "_meta": {"ui/resourceUri": "ui://probe/legacy.html"},
    },
    {
        "name": "blob_app",
        "description": "A View served as a base64 blob.",
        "inputSchema": _schema(),
        "_meta": _ui("ui://probe/blob.html"),
    },
    {
        "name": "wrong_mime",
        "description": "Its View is plain text/html.",
        "inputSchema": _schema(),
        "_meta": _ui("ui://probe/wrong.html"),
    },
    {
        "name": "missing_resource",
        "description": "Its View does not exist.",
        "inputSchema": _schema(),
        "_meta": _ui("ui://probe/missing.html"),
    },
    {
        "name": "not_ui",
        "description": "Names an https:// page, which is no View.",
        "inputSchema": _schema(),
        "_meta": _ui("https://example.com/app.html"),
    },
    {
        "name": "failing_app",
        "description": "An app tool whose result is an error.",
        "inputSchema": _schema(),
        "_meta": _ui("ui://probe/chart.html"),
    },
    {
        "name": "raising_app",
        "description": "An app tool that raises.",
        "inputSchema": _schema(),
        "_meta": _ui("ui://probe/chart.html"),
    },
    {
        "name": "slow_app",
        "description": "An app tool that answers late.",
        "inputSchema": _schema({"delay": {"type": "number"}}),
        "_meta": _ui("ui://probe/chart.html"),
    },
    {
        "name": "hostile_app",
        "description": "A View that tries everything it must not be able to do.",
        "inputSchema": _schema(),
        "_meta": _ui("ui://probe/hostile.html"),
    },
    {
        "name": "export_app",
        "description": "A View that shows its streamed input and exports a CSV file.",
        "inputSchema": _schema({"title": {"type": "string"}}),
        "_meta": _ui("ui://probe/export.html"),
    },
    {"name": "call_counts", "description": "How often each tool was called.", "inputSchema": _schema()},
    {
        "name": "client_capabilities",
        "description": "The capabilities the client declared.",
        "inputSchema": _schema(),
    },
]


def _result(text: str, structured: Any = None, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=structured,
        is_error=error,
    )


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[types.Tool.model_validate(tool) for tool in TOOLS])


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    name = params.name
    args = params.arguments or {}
    calls[name] += 1
    if name == "show_chart":
        n = int(args.get("n", 3))
        return _result(f"{n} points", {"points": list(range(n))})
    if name == "app_refresh":
        return _result("refreshed", {"refreshed": int(args.get("n", 0))})
    if name == "model_secret":
        return _result("the secret", {"secret": 42})
    if name == "failing_app":
        return _result("the chart could not be drawn", error=True)
    if name == "raising_app":
        raise RuntimeError("raising_app always raises")
    if name == "slow_app":
        await anyio.sleep(float(args.get("delay", 1.0)))
        return _result("late", {"late": True})
    if name == "export_app":
        return _result("exported", {"title": str(args.get("title", "")), "rows": 2})
    if name == "call_counts":
        return _result(json.dumps(dict(calls)), {"counts": dict(calls)})
    if name == "client_capabilities":
        caps = ctx.session.client_capabilities
        dumped = caps.model_dump(by_alias=True, exclude_none=True, mode="json") if caps else None
        return _result(json.dumps(dumped), {"capabilities": dumped})
    if name in {"legacy_key", "blob_app", "wrong_mime", "missing_resource", "not_ui", "hostile_app"}:
        return _result(name, {"tool": name})
    raise ValueError(f"unknown tool {name!r}")


def _page(title: str) -> str:
    return PAGE.format(title=title)


def _contents(uri: str) -> dict[str, Any]:
    if uri == "ui://probe/chart.html":
        return {
            "uri": uri,
            "mimeType": APP_MIME,
            "text": _page("chart"),
            "_meta": {"ui": {"csp": CHART_CSP, "permissions": CHART_PERMISSIONS, "prefersBorder": True}},
        }
    if uri == "ui://probe/legacy.html":
        return {"uri": uri, "mimeType": APP_MIME, "text": _page("legacy")}
    if uri == "ui://probe/blob.html":
        blob = base64.b64encode(_page("blob").encode()).decode()
        return {"uri": uri, "mimeType": APP_MIME, "blob": blob}
    if uri == "ui://probe/wrong.html":
        return {"uri": uri, "mimeType": "text/html", "text": _page("wrong")}
    if uri == "ui://probe/hostile.html":
        return {"uri": uri, "mimeType": APP_MIME, "text": HOSTILE_FILE.read_text(encoding="utf-8")}
    if uri == "ui://probe/export.html":
        return {"uri": uri, "mimeType": APP_MIME, "text": EXPORT_FILE.read_text(encoding="utf-8")}
    raise ValueError(f"no resource {uri!r}")


RESOURCES = [
    "ui://probe/chart.html",
    "ui://probe/legacy.html",
    "ui://probe/blob.html",
    "ui://probe/wrong.html",
    "ui://probe/hostile.html",
    "ui://probe/export.html",
]


async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
    return types.ListResourcesResult(
        resources=[types.Resource(uri=uri, name=uri, mime_type=APP_MIME) for uri in RESOURCES]
    )


async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
    calls["resources/read " + str(params.uri)] += 1
    return types.ReadResourceResult.model_validate({"contents": [_contents(str(params.uri))]})


server = Server(
    "mcp-apps-probe",
    version="1.0.0",
    on_list_tools=list_tools,
    on_call_tool=call_tool,
    on_list_resources=list_resources,
    on_read_resource=read_resource,
)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
