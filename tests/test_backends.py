"""The stdio transport's two pipe implementations, and the core on trio as well as asyncio."""

from __future__ import annotations

import pytest

from mcp_notebook import Client, McpError
from mcp_notebook.transports import _pipes
from tests.conftest import python_server

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaked_processes")]


@pytest.fixture(params=["asyncio", "asyncio-anyio-pipes", "trio"])
def anyio_backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "asyncio-anyio-pipes":
        monkeypatch.setattr(_pipes, "_on_asyncio", lambda: False)
        return "asyncio"
    return str(request.param)


async def test_calls_crash_and_restart_on_every_backend(anyio_backend: str) -> None:
    async with Client(python_server("bad_server.py"), timeout=10) as client:
        assert client.era == "legacy"
        assert (await client.call_tool("echo", {"n": 5})).text
        with pytest.raises(McpError) as caught:
            await client.call_tool("crash")
        assert caught.value.kind == "transport"
        assert (await client.call_tool("echo", {"n": 6})).text
        assert client.stats.reconnects == 1
