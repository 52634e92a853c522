"""``protocol="auto"`` reaches a stdio server that exits on the ``server/discover`` probe (#37, item 1).

chroma-mcp 0.2.6 (on mcp 1.6.0) exits with a traceback when the first message it reads is the
modern era's probe, so the auto connect used to fail while ``protocol="legacy"`` worked (the
official SDK fails there too). Now the server is started again and spoken to with ``initialize``,
once, with one WARNING naming it. The server here (tests/servers/early_sdk_server.py) is a real
subprocess that logs each start and each request method, so the tests count what it was sent.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

import mcp_notebook
from mcp_notebook import Client

from .conftest import python_server
from .raises import raises_mcp

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

SERVER = "early_sdk_server.py"


def _sent(log: Path) -> list[str]:
    """What the server saw: "start" for each process, then each request's method."""
    return log.read_text(encoding="utf-8").split()


def _notes(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if "server/discover probe" in r.getMessage()]


@pytest.mark.anyio
async def test_auto_starts_it_again_and_speaks_legacy(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    log = tmp_path / "sent.log"
    argv = python_server(SERVER, "--log", str(log))
    with caplog.at_level(logging.INFO, logger="mcp_notebook"):
        async with Client(argv, protocol="auto") as client:
            assert client.era == "legacy"
            assert client.protocol_version == "2025-03-26"
            assert client.server_info["name"] == "early-sdk-server"
            assert (await client.call_tool("echo", {"n": 7})).text == "7"
    assert _sent(log)[:4] == ["start", "server/discover", "start", "initialize"]
    assert _sent(log).count("start") == 2
    (note,) = _notes(caplog)
    assert note.levelno == logging.WARNING
    text = note.getMessage()
    assert SERVER in text  # names the server
    assert "exited with code 1" in text  # and what happened
    assert "initialize" in text
    assert "\n" not in text  # one line: no stderr quoted
    assert "ValueError" not in text


def test_connect_in_a_notebook_reaches_it_too(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    log = tmp_path / "sent.log"
    with caplog.at_level(logging.INFO, logger="mcp_notebook"):
        session = mcp_notebook.connect(
            python_server(SERVER, "--log", str(log)), show_progress=False, register=False
        )
        try:
            assert session.call_tool("echo", {"n": 5}).text == "5"
        finally:
            session.close()
    assert _sent(log).count("start") == 2
    assert _sent(log).count("server/discover") == 1
    assert len(_notes(caplog)) == 1


@pytest.mark.anyio
async def test_a_server_that_also_dies_on_initialize_fails_clearly_after_one_restart(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    log = tmp_path / "sent.log"
    argv = python_server(SERVER, "--log", str(log), "--die-on-initialize")
    with (
        caplog.at_level(logging.INFO, logger="mcp_notebook"),
        raises_mcp("transport", match="exited with code 1") as caught,
    ):
        async with Client(argv, protocol="auto"):
            pass
    assert "unknown method 'initialize'" in caught.value.message  # the stderr of the second start
    assert _sent(log) == ["start", "server/discover", "start", "initialize"]
    assert _notes(caplog) == []  # not known to be the probe's doing: it failed without it too


@pytest.mark.anyio
async def test_a_server_that_exits_at_start_is_not_said_to_die_on_the_probe(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with (
        caplog.at_level(logging.INFO, logger="mcp_notebook"),
        raises_mcp("transport", match="exited with code 2"),
    ):
        async with Client([sys.executable, "-c", "import sys; sys.exit(2)"], protocol="auto"):
            pass
    assert _notes(caplog) == []


@pytest.mark.anyio
async def test_a_crash_later_restarts_it_in_the_legacy_era_without_a_probe(tmp_path: Path) -> None:
    log = tmp_path / "sent.log"
    async with Client(python_server(SERVER, "--log", str(log)), protocol="auto", timeout=30) as client:
        await client.list_tools()
        with raises_mcp("transport", match="exited with code 3"):
            await client.call_tool("crash")
        assert (await client.call_tool("echo", {"n": 4})).text == "4"  # waits for the restart
        assert client.era == "legacy"
    sent = _sent(log)
    assert sent.count("start") == 3
    assert sent.count("server/discover") == 1  # the first start's only
    crash = sent.index("tools/call")
    assert sent[crash + 1 : crash + 3] == ["start", "initialize"]


@pytest.mark.anyio
async def test_protocol_modern_does_not_fall_back(tmp_path: Path) -> None:
    log = tmp_path / "sent.log"
    with raises_mcp("transport", match="exited with code 1"):
        async with Client(python_server(SERVER, "--log", str(log)), protocol="modern"):
            pass
    assert _sent(log) == ["start", "server/discover"]
