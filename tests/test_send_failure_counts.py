"""A request whose write fails part-way is counted once, by its kind (found while splitting the
router for issue #27: it was counted twice, as its kind and as "error", and in_flight went to -1)."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_notebook import Client, McpError
from mcp_notebook.transports import _memory as memory

from .fakes import FakeServer, reply

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("era", ["modern", "legacy"])
async def test_a_write_that_fails_part_way_is_counted_once(era: str, monkeypatch: pytest.MonkeyPatch) -> None:
    server = FakeServer(era)
    server.tool("fine", reply())
    async with Client(server, timeout=10, reconnect=False) as client:
        await client.list_tools()
        send = memory._MemoryChannel.send

        async def breaks_mid_write(self: Any, message: dict[str, Any]) -> None:
            if message.get("method") == "tools/call":
                raise McpError("transport", "the pipe broke mid-write")
            await send(self, message)

        monkeypatch.setattr(memory._MemoryChannel, "send", breaks_mid_write)
        before = client.stats.outcomes
        with pytest.raises(McpError) as caught:
            await client.call_tool("fine", {})
        assert caught.value.kind == "transport"
        assert "may or may not have run" in caught.value.message
        stats = client.stats
        assert stats.outcomes.get("transport", 0) == before.get("transport", 0) + 1
        assert stats.outcomes.get("error", 0) == before.get("error", 0)
        assert stats.in_flight == 0
        assert sum(stats.outcomes.values()) + stats.in_flight + stats.streams == stats.requests
