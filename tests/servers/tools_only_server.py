"""An official-SDK server (the low-level ``Server``) that declares tools and nothing else.

Run as ``python tools_only_server.py [--broken-prompts]`` (stdio); with ``--broken-prompts`` it
also declares prompts, and ``prompts/list`` fails with an internal error. The SDK's ``MCPServer``
declares resources and prompts even with none registered; the low-level server declares only the
lists it has handlers for, as many published servers do. Used to check that the core answers the
lists a server does not offer with empty lists instead of passing on "method not found".
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
from mcp import types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

ADD = types.Tool(
    name="add",
    description="Add two numbers.",
    input_schema={"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}},
)


async def _list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[ADD])


async def _call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    arguments = params.arguments or {}
    total = int(arguments.get("a", 0)) + int(arguments.get("b", 0))
    return types.CallToolResult(content=[types.TextContent(text=str(total))])


async def _broken_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
    raise RuntimeError("the prompt store is unreachable")


server = Server(
    "tools-only",
    on_list_tools=_list_tools,
    on_call_tool=_call_tool,
    on_list_prompts=_broken_prompts if "--broken-prompts" in sys.argv[1:] else None,
)


async def _main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(_main)
