"""A bare ``python`` that the server's PATH lacks starts the running interpreter (#37, item 3).

Debian has no ``python`` on PATH, and the README's own set-up makes a virtualenv it never
activates, so ``connect("python -m mcp_notebook.demo")`` said "'python' was not found". The stdio
transport now starts the running interpreter for a bare ``python``/``python3`` it cannot find on
the PATH the server gets, and says so once in the log; a ``python`` that PATH has is used as it
is. PATH is set through ``env=``, as a user would, so the servers here are real subprocesses.
"""

from __future__ import annotations

import logging
import os
import stat
import sys
from pathlib import Path

import pytest

from mcp_notebook import Client

from .conftest import SERVERS
from .raises import raises_mcp

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaked_processes")]

SERVER = str(SERVERS / "early_sdk_server.py")


def _notes(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "with the running interpreter" in r.getMessage()]


@pytest.mark.parametrize("program", ["python", "python3"])
async def test_a_bare_python_not_on_path_is_the_running_interpreter_said_once(
    program: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    log = tmp_path / "sent.log"
    argv = [program, SERVER, "--log", str(log)]
    with caplog.at_level(logging.INFO, logger="mcp_notebook"):
        async with Client(argv, env={"PATH": str(empty)}, protocol="legacy", timeout=30) as client:
            assert (await client.call_tool("echo", {"n": 1})).text == "1"
            with raises_mcp("transport", match="exited with code 3"):
                await client.call_tool("crash")
            assert (await client.call_tool("echo", {"n": 2})).text == "2"  # restarted, the same way
    assert log.read_text().split().count("start") == 2
    (note,) = _notes(caplog)  # once, not once per start
    assert repr(program) in note
    assert sys.executable in note


async def test_a_python_on_path_is_used_as_it_is(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ran = tmp_path / "ran"
    wrapper = bin_dir / "python"
    wrapper.write_text(f'#!/bin/sh\necho ran > "{ran}"\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    with caplog.at_level(logging.INFO, logger="mcp_notebook"):
        async with Client(["python", SERVER], env={"PATH": str(bin_dir)}, protocol="legacy") as client:
            assert (await client.call_tool("echo", {"n": 3})).text == "3"
    assert ran.read_text().strip() == "ran"  # PATH's python started the server
    assert _notes(caplog) == []


async def test_any_other_missing_program_still_fails(tmp_path: Path) -> None:
    with raises_mcp("transport", match="'python2' was not found on PATH"):
        async with Client(["python2", SERVER], env={"PATH": os.fspath(tmp_path)}):
            pass
