"""Official-SDK server objects (``mcp`` and fastmcp) served in this process over memory."""

from __future__ import annotations

import fastmcp
import pytest

from mcp_notebook import Client
from mcp_notebook.demo import build_server

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_sdk_server_object_in_process(protocol: str) -> None:
    async with Client(build_server(), protocol=protocol, elicitation=lambda p: {"name": "Bo"}) as client:
        assert client.era == ("modern" if protocol == "auto" else "legacy")
        assert "add" in {t.name for t in await client.list_tools()}
        assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {"result": 3.0}
        assert "Bo" in (await client.call_tool("ask_user_name")).text


async def test_fastmcp_server_object_in_process() -> None:
    server = fastmcp.FastMCP("in-process")

    @server.tool
    def multiply(a: int, b: int) -> int:
        return a * b

    async with Client(server) as client:
        assert client.server_info["name"] == "in-process"
        assert (await client.call_tool("multiply", {"a": 6, "b": 7})).data == {"result": 42}
