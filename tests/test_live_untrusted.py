"""Notifications and results whose values have the wrong type or size (found by tests/test_fuzz.py).

A listener that raises is caught by the connection (so the client survives) but is still a bug:
the notification is lost and an error is logged. Here each such value must be ignored quietly.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import anyio
import pytest

from mcp_notebook import Client
from mcp_notebook.protocol._jsonrpc import json_number

from .fakes import FakeServer, reply

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("subscription", [[], {"a": 1}, 1.5, None, True])
async def test_an_acknowledgement_with_an_odd_subscription_id_is_ignored(
    subscription: Any, caplog: pytest.LogCaptureFixture
) -> None:
    server = FakeServer("modern")
    async with Client(server, timeout=10) as client:
        with caplog.at_level(logging.ERROR, logger="mcp_notebook"):
            await server.connections[-1].notify(
                "notifications/subscriptions/acknowledged",
                {
                    "notifications": {"toolsListChanged": True},
                    "_meta": {"io.modelcontextprotocol/subscriptionId": subscription},
                },
            )
            await server.connections[-1].notify(
                "notifications/tools/list_changed",
                {"_meta": {"io.modelcontextprotocol/subscriptionId": subscription}},
            )
            with anyio.fail_after(5):
                await client.list_tools(refresh=True)
        assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
        assert client.status == "ready"


HUGE = 10**400  # JSON allows it; the standard library parses it; no float holds it


async def test_progress_with_an_integer_too_large_for_a_float_reaches_the_callback_as_infinity(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def huge_progress(message: dict[str, Any], conn: Any) -> Any:
        await conn.progress(message, HUGE, total=HUGE)
        return {"content": [{"type": "text", "text": "done"}]}

    server = FakeServer("modern")
    server.tool("huge", huge_progress)
    seen: list[tuple[float, float | None]] = []
    async with Client(server, timeout=10) as client:
        with caplog.at_level(logging.ERROR, logger="mcp_notebook"):
            result = await client.call_tool("huge", progress=lambda p, t, m: seen.append((p, t)))
        assert result.text == "done"
    assert seen == [(math.inf, math.inf)]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


async def test_a_list_whose_ttl_is_too_large_for_a_float_is_cached_forever() -> None:
    server = FakeServer("modern")
    server.tool("echo")
    server.on("tools/list", reply({"tools": server.tools, "ttlMs": HUGE}))
    async with Client(server, timeout=10) as client:
        tools = await client.list_tools()
        assert [t.name for t in tools] == ["echo"]
        assert client.freshness("tools").fresh


@pytest.mark.parametrize(
    ("value", "number"),
    [(5, 5.0), (-2.5, -2.5), (HUGE, math.inf), (-HUGE, -math.inf), (True, None), ("5", None), (None, None)],
    ids=repr,
)
def test_json_number(value: Any, number: float | None) -> None:
    assert json_number(value) == number
