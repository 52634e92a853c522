"""Live state against notifications whose values have the wrong type (found by tests/test_fuzz.py).

A listener that raises is caught by the connection (so the client survives) but is still a bug:
the notification is lost and an error is logged. Here each such value must be ignored quietly.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from mcp_notebook import Client

from .fakes import FakeServer

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
