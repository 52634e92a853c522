"""A connect that fails says what fits what failed (#37, item 2).

Before this every transport error, a first connect's included, advised "the session reconnects by
itself: call again", where there was no session and nothing reconnected. Now a program that was
not found says there is nothing to retry and how to name it (its full path, a virtualenv's bin);
an address that cannot be reached is named with what answered, or did not: connection refused, a
host name that does not resolve, an HTTP status with its reason. Asserted on what a user sees: the
message, and the short block a notebook draws (IPython's ``_render_traceback_``).
"""

from __future__ import annotations

import re
import socket

import anyio
import pytest

import mcp_notebook
from mcp_notebook import Client, McpError

from .raises import raises_mcp
from .raw_http import RawRequest, Reply, raw_http_server

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

ANSI = re.compile(r"\x1b\[[0-9;]*m")
WRONG_ADVICE = "reconnects by itself"
MISSING = "no-such-mcp-server-37"


def what_to_do(error: McpError) -> str:
    """The "what to do" line of the block a notebook shows for ``error``."""
    lines = [ANSI.sub("", line).strip() for line in error._render_traceback_()]
    (line,) = [line for line in lines if line.startswith("what to do:")]
    return line


def free_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.mark.anyio
async def test_a_missing_program_says_how_to_name_it() -> None:
    with raises_mcp("transport", match=f"{MISSING!r} was not found on PATH") as caught:
        async with Client(f"{MISSING} --stdio"):
            pass
    message = caught.value.message
    assert "full path" in message
    assert f".venv/bin/{MISSING}" in message  # the virtualenv's bin, with its name
    advice = what_to_do(caught.value)
    assert "nothing to retry" in advice
    assert "full path" in advice
    assert WRONG_ADVICE not in advice


def test_connect_in_a_notebook_says_the_same() -> None:
    with raises_mcp("transport", match=f"{MISSING!r} was not found on PATH") as caught:
        mcp_notebook.connect([MISSING], show_progress=False, register=False)
    advice = what_to_do(caught.value)
    assert "full path" in advice
    assert WRONG_ADVICE not in advice


@pytest.mark.anyio
async def test_a_server_that_exits_at_start_is_not_promised_a_reconnect() -> None:
    with raises_mcp("transport", match="exited with code 2") as caught:
        async with Client(["sh", "-c", "echo 'no config' >&2; exit 2"]):
            pass
    advice = what_to_do(caught.value)
    assert "connect again" in advice
    assert WRONG_ADVICE not in advice


@pytest.mark.anyio
async def test_a_refused_address_is_named_with_what_happened() -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    with raises_mcp("transport") as caught:
        async with Client(url):
            pass
    message = caught.value.message
    assert url in message
    assert "connection refused" in message
    advice = what_to_do(caught.value)
    assert WRONG_ADVICE not in advice
    assert "address" in advice


def test_a_refused_address_is_named_on_trio_too() -> None:
    """On trio the engine is httpx, and trio groups one refusal per address it tried."""
    url = f"http://127.0.0.1:{free_port()}/mcp"

    async def connect() -> None:
        async with Client(url):
            pass

    with raises_mcp("transport", match="connection refused: nothing listens at that address") as caught:
        anyio.run(connect, backend="trio")
    assert url in caught.value.message


@pytest.mark.anyio
async def test_a_host_name_that_does_not_resolve_is_named() -> None:
    url = "http://no-such-host-37.invalid/mcp"
    with raises_mcp("transport") as caught:
        async with Client(url):
            pass
    message = caught.value.message
    assert url in message
    assert "could not be resolved" in message
    assert WRONG_ADVICE not in what_to_do(caught.value)


async def _unavailable(request: RawRequest, reply: Reply) -> None:
    await reply.send(503, b"down for maintenance", content_type="text/plain")


@pytest.mark.anyio
async def test_an_address_that_answers_503_is_named_with_the_status_and_its_reason() -> None:
    async with raw_http_server(_unavailable) as base:
        url = f"{base}/mcp"
        with raises_mcp("transport", match="HTTP 503 Service Unavailable") as caught:
            async with Client(url):
                pass
    assert url in caught.value.message
    advice = what_to_do(caught.value)
    assert WRONG_ADVICE not in advice
    assert "connect again" in advice
