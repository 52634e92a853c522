"""The handshake under fuzz: whatever a server answers to ``server/discover`` or ``initialize``.

A client that cannot agree with a server must say so with an ``McpError`` (a version, protocol or
timeout error), never crash with another exception, hang, or leave a task behind; one that does
connect must then work. The server is in memory (negotiation is connection logic, and a fresh
event loop per example keeps each one to milliseconds); the answers come from
:data:`tests.fuzz_traffic.handshake_answers`, for each of ``protocol="auto"``, ``"modern"`` and
``"legacy"``.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_notebook import Client, McpError

from .fuzz_traffic import budget, handshake_answers

pytestmark = pytest.mark.fuzz

TOOLS = [{"name": "echo", "inputSchema": {"type": "object"}}]


def _server(discover: dict[str, Any] | None, initialize: dict[str, Any] | None) -> Any:
    """A server answering the two handshake requests as told (None: never), the rest correctly."""

    async def serve(incoming: Any, outgoing: Any) -> None:
        async for message in incoming:
            method, request_id = message.get("method"), message.get("id")
            if request_id is None:
                continue
            answer = {"server/discover": discover, "initialize": initialize}.get(
                method, {"result": {"tools": TOOLS}} if method == "tools/list" else {"result": {}}
            )
            if answer is not None:
                await outgoing.send({"jsonrpc": "2.0", "id": request_id, **answer})

    return serve


async def _connect(protocol: str, discover: dict[str, Any] | None, initialize: dict[str, Any] | None) -> None:
    client = Client(
        _server(discover, initialize), protocol=protocol, timeout=2, probe_timeout=0.2, connect_timeout=1
    )
    with anyio.fail_after(10):
        refused: McpError | None = None
        try:
            await client.connect()
        except McpError as exc:
            refused = exc
        if refused is not None:
            # The real reason, which the client keeps: not "the client is closed".
            assert refused.kind in ("version", "protocol", "server", "timeout", "transport"), refused
            assert client.status == "closed"
            assert client.closed_reason is refused
            return
        try:
            assert client.status == "ready"
            assert client.era in ("modern", "legacy")
            await client.list_tools()
        finally:
            await client.aclose()
    assert client.status == "closed"


def test_any_handshake_answer_ends_in_a_connection_or_a_clear_error(pytestconfig: pytest.Config) -> None:
    @settings(
        max_examples=budget(pytestconfig, short=100),
        deadline=None,
        database=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(
        protocol=st.sampled_from(["auto", "modern", "legacy"]),
        discover=handshake_answers,
        initialize=handshake_answers,
    )
    def connects_or_refuses(protocol: str, discover: Any, initialize: Any) -> None:
        anyio.run(_connect, protocol, discover, initialize)

    connects_or_refuses()
