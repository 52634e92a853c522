"""Errors fit a cell (issue #35, item 12), against a real stdio server.

``tests/servers/list_bounds_server.py`` lists tools with 200,000-character names and answers a
call of ``fail`` with a JSON-RPC error of any size. A mistyped name quoted with its neighbours made
a 2.4 MB error, a server's 1 MB message a 1 MB one; now ``str()``, ``repr()``, ``message`` and the
notebook's short block stay within ``MAX_ERROR_CHARS`` and ``full_message`` keeps the whole text.
"""

from __future__ import annotations

import pickle

import anyio
import pytest

from mcp_notebook import Client
from mcp_notebook.protocol._errors import McpError, short_traceback
from tests.conftest import python_server
from tests.raises import raises_mcp

pytestmark = pytest.mark.anyio

HANG_GUARD = 120
#: The documented bound (README, Reliability; protocol._errors.MAX_ERROR_CHARS).
MAX_ERROR_CHARS = 2_000
LONG = 200_000
#: str() adds " (code -32602)" to the bounded message.
BOUND = MAX_ERROR_CHARS + 20


def assert_bounded(err: McpError) -> None:
    assert len(err.message) <= MAX_ERROR_CHARS
    assert len(str(err)) <= BOUND
    assert len(repr(err)) <= 2 * BOUND  # repr quotes the message, escapes and all
    assert sum(len(line) for line in short_traceback(err)) <= 3 * BOUND
    assert len(str(pickle.loads(pickle.dumps(err)))) <= BOUND


async def test_a_mistyped_name_among_huge_names_gives_a_bounded_error(no_leaked_processes):
    names = server_of("--items", "12", "--name-length", str(LONG))
    async with Client(names, timeout=60) as client:
        mistyped = "tool-3".ljust(LONG, "x")  # "tool_3" with a dash
        with anyio.fail_after(HANG_GUARD), raises_mcp("invalid", match="no tool") as info:
            await client.call_tool(mistyped, {})
        err = info.value
        assert_bounded(err)
        assert "did you mean 'tool_3xxx" in str(err)  # the suggestion survives, its name cut…
        assert "…" in str(err)
        assert "nothing was sent" in str(err)  # …and what to do, said last
        assert mistyped in err.full_message  # the whole text is kept
        assert "tool_3".ljust(LONG, "x") in err.full_message

        # Sent anyway, the server's own error quotes the whole name: bounded the same way.
        with anyio.fail_after(HANG_GUARD), raises_mcp("server", match="Unknown tool") as info:
            await client.call_tool(mistyped, {}, validate=False, raise_on_error=True)
        assert_bounded(info.value)
        assert info.value.full_message.endswith(f": Unknown tool: {mistyped}")


async def test_a_megabyte_server_message_gives_a_bounded_error(no_leaked_processes):
    async with Client(server_of("--tools", "a"), timeout=60) as client:
        with anyio.fail_after(HANG_GUARD), raises_mcp("server") as info:
            await client.call_tool("fail", {"size": 1_000_000})
        err = info.value
        assert_bounded(err)
        assert err.code == -32603
        assert err.full_message == "tools/call 'fail': " + "E" * 1_000_000
        assert "characters cut" in str(err)
        assert pickle.loads(pickle.dumps(err)).full_message == err.full_message


def server_of(*args: str) -> list[str]:
    return python_server("list_bounds_server.py", *args)
