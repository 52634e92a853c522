"""A server that ends is reported by its exit code and stderr tail, whichever pipe fails first.

The pipes close as the process exits, while the exit status (a SIGCHLD, asyncio's watcher thread)
and the last stderr bytes arrive by other routes: under load a write could fail before the exit
was seen, and a server that exited at start-up was reported as "the server closed its stdout",
with neither its code nor its stderr. These servers make that order certain instead of likely:
they close stdin and stdout first, and only later write to stderr and exit.
"""

from __future__ import annotations

import textwrap
from typing import Any

import anyio
import pytest

from mcp_notebook import McpError
from mcp_notebook.transports import NotDelivered, StdioTransport

from .conftest import PYTHON

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaked_processes")]

LAST_WORDS = "closing-server: cannot open /etc/closing.toml"
#: Says it is about to go (one frame), closes stdin and stdout, and exits 0.3 s later.
CLOSES_FIRST = textwrap.dedent(
    f"""
    import os, sys, time
    sys.stdout.write('{{"jsonrpc": "2.0", "method": "notifications/message", "params": {{}}}}\\n')
    sys.stdout.flush()
    os.close(0)
    os.close(1)
    time.sleep(0.3)
    sys.stderr.write({LAST_WORDS!r} + "\\n")
    sys.exit(3)
    """
)
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def assert_reports_the_exit(error: McpError) -> None:
    assert "exited with code 3" in error.message, error.message
    assert f"its last stderr lines:\n  {LAST_WORDS}" in error.message, error.message
    assert "closed its stdout" not in error.message


async def write_until_refused(channel: Any) -> None:
    """Write until a write fails: a write into a pipe whose reader is gone may still be accepted
    (asyncio queues it, and it fails in the background), so only a later write is refused."""
    while True:
        await channel.send(PING)
        await anyio.sleep(0.01)


async def test_a_write_that_fails_before_the_exit_reports_the_exit(anyio_backend: str) -> None:
    transport = StdioTransport([PYTHON, "-c", CLOSES_FIRST])
    with anyio.fail_after(10):
        async with transport.connect() as channel:
            await channel.receive()  # the server's stdin is closed from here on
            with pytest.raises(McpError) as caught:
                await write_until_refused(channel)
    if anyio_backend == "asyncio":  # refused before a byte went out: safe to resend elsewhere
        assert isinstance(caught.value, NotDelivered)
    else:  # anyio's stream finds out during the write itself
        assert caught.value.message.startswith("the server stopped reading while we wrote to it")
    assert_reports_the_exit(caught.value)


async def test_an_end_of_output_before_the_exit_reports_the_exit() -> None:
    transport = StdioTransport([PYTHON, "-c", CLOSES_FIRST])
    with anyio.fail_after(10):
        async with transport.connect() as channel:
            await channel.receive()
            with pytest.raises(McpError) as caught:
                await channel.receive()
    assert_reports_the_exit(caught.value)
