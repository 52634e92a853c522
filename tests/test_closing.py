"""Closing a connection that is not ready, over real stdio servers: a close while the first
handshake waits and a close while a reconnect waits or negotiates both pass through ``closing``
and end in ``closed``, with the caller seeing only the connection's own ``closed`` error."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from mcp_notebook import McpClosed, McpError
from mcp_notebook.connection import ClientHandlers, Connection, ConnectionOptions, ConnectionState
from mcp_notebook.transports import StdioTransport

from .conftest import python_server

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaked_processes")]

#: A stdio "server" that reads every request and answers none: a handshake that never ends.
MUTE = [sys.executable, "-c", "import sys\nfor _ in sys.stdin:\n    pass\n"]


class _Watch:
    """Every state the connection passes through, in order, and a way to wait for a sequence."""

    def __init__(self, connection: Connection) -> None:
        self.seen: list[ConnectionState] = []
        self._changed = anyio.Event()
        connection.on_state_change(self._record)

    def _record(self, state: ConnectionState) -> None:
        self.seen.append(state)
        self._changed.set()
        self._changed = anyio.Event()

    async def until(self, *states: ConnectionState) -> None:
        """Wait until ``states`` were passed through in this order (others may lie between)."""
        with anyio.fail_after(20):
            while not self._passed(states):
                await self._changed.wait()

    def _passed(self, states: tuple[ConnectionState, ...]) -> bool:
        it = iter(self.seen)
        return all(state in it for state in states)


async def test_a_close_during_the_first_handshake_ends_closed() -> None:
    connection = Connection(StdioTransport(MUTE), ConnectionOptions(), ClientHandlers())
    watch = _Watch(connection)
    failure: list[BaseException] = []

    async def run() -> None:
        try:
            await connection.run()
        except McpError as exc:
            failure.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        await watch.until("negotiating")
        await connection.close()
    assert watch.seen == ["negotiating", "closing", "closed"]
    assert connection.state == "closed"
    # The first connection never became ready: the caller learns it was closed, nothing else.
    assert [type(e) for e in failure] == [McpClosed]
    assert failure[0].kind == "closed"


async def _ready_then_crash(connection: Connection, tg: anyio.abc.TaskGroup) -> None:
    await tg.start(connection.run)
    with pytest.raises(McpError):
        await connection.request("tools/call", {"name": "crash", "arguments": {}}, timeout=20)


async def test_a_close_while_waiting_to_reconnect_ends_closed() -> None:
    options = ConnectionOptions(backoff_initial=60, backoff_max=60)  # it waits until closed
    connection = Connection(StdioTransport(python_server("bad_server.py")), options, ClientHandlers())
    watch = _Watch(connection)
    async with anyio.create_task_group() as tg:
        await _ready_then_crash(connection, tg)
        await watch.until("ready", "reconnecting")
        await connection.close()
    assert watch.seen[-3:] == ["reconnecting", "closing", "closed"]
    assert connection.state == "closed"
    assert connection.closed_reason is not None
    assert connection.closed_reason.kind == "closed"


async def test_a_close_while_a_reconnect_negotiates_ends_closed(tmp_path: Path) -> None:
    # The first start is a real server; every later one never answers its handshake.
    marker = tmp_path / "started"
    launcher = (
        "import os, sys\n"
        f"marker = {str(marker)!r}\n"
        "if os.path.exists(marker):\n"
        "    for _ in sys.stdin:\n"
        "        pass\n"
        "    sys.exit(0)\n"
        "open(marker, 'w').close()\n"
        "os.execv(sys.executable, sys.argv[1:])\n"
    )
    command = [sys.executable, "-c", launcher, *python_server("bad_server.py")]
    options = ConnectionOptions(backoff_initial=0.01, backoff_max=0.01)
    connection = Connection(StdioTransport(command), options, ClientHandlers())
    watch = _Watch(connection)
    async with anyio.create_task_group() as tg:
        await _ready_then_crash(connection, tg)
        await watch.until("ready", "reconnecting", "negotiating")
        await connection.close()
    assert watch.seen[-4:] == ["reconnecting", "negotiating", "closing", "closed"]
    assert connection.state == "closed"
    assert connection.closed_reason is not None
    assert connection.closed_reason.kind == "closed"
