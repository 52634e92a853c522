"""One session per name (issue #29): running a connect cell again starts no second server.

Through ``mcp_notebook.connect`` (what a notebook's cell calls) with the real demo server over
stdio; the servers are counted among this process's children, as a person would with ``ps``.
"""

from __future__ import annotations

import itertools
import os
from unittest import mock

import psutil
import pytest

import mcp_notebook
from mcp_notebook.notebook import _once
from mcp_notebook.notebook._registry import REGISTRY
from tests.conftest import demo_server

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

OPTIONS = {"show_progress": False, "dialogs": False}


_runs = itertools.count()


def connect_cell(target: object = None, **options: object) -> mcp_notebook.Session:
    """A notebook's connect cell: each call is the cell run (again). Outside a kernel the cell is
    the calling line, so every run calls ``connect`` from this one line; a kernel would give each
    run its execute request's id, which this gives here (a script has none, so nothing matches)."""
    with mock.patch.object(_once, "current_run", return_value=f"run-{next(_runs)}"):
        return mcp_notebook.connect(demo_server() if target is None else target, **OPTIONS, **options)


def _demo_servers() -> list[int]:
    """The demo servers running as children of this test process (zombies excluded)."""
    found = []
    for child in psutil.Process(os.getpid()).children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE and "mcp_notebook.demo" in child.cmdline():
                found.append(child.pid)
        except psutil.NoSuchProcess:
            continue
    return found


def test_the_same_call_again_returns_the_open_session_and_starts_no_server(capsys) -> None:
    first = connect_cell()
    try:
        servers = _demo_servers()
        assert len(servers) == 1
        again = connect_cell()  # the cell, run again
        assert again is first
        assert _demo_servers() == servers
        assert first.name == "mcp-notebook-demo"
        assert [n for n, e in REGISTRY.sessions.items() if e.session is first] == ["mcp-notebook-demo"]
        assert float(again.call_tool("add", {"a": 1, "b": 2}).text) == 3
        assert capsys.readouterr().out == ""
    finally:
        first.close()
    assert _demo_servers() == []


def test_other_options_close_the_old_session_with_a_note_and_keep_its_name(capsys) -> None:
    first = connect_cell()
    second = None
    try:
        old_server = _demo_servers()
        second = connect_cell(timeout=42)
        assert second is not first
        assert first.model.status == "closed"
        with pytest.raises(mcp_notebook.McpError, match="closed"):
            first.call_tool("add", {"a": 1, "b": 2})
        note = capsys.readouterr().out.strip().splitlines()
        assert len(note) == 1
        assert "closed the session 'mcp-notebook-demo'" in note[0]
        assert "options differ (timeout)" in note[0]
        assert "42" not in note[0]  # option names, never their values
        servers = _demo_servers()
        assert len(servers) == 1
        assert servers != old_server
        assert second.name == "mcp-notebook-demo"
        assert float(second.call_tool("add", {"a": 2, "b": 2}).text) == 4
        # The new call is now the one a re-run matches.
        assert connect_cell(timeout=42) is second
    finally:
        first.close()
        if second is not None:
            second.close()
    assert _demo_servers() == []


def test_a_name_is_one_session_and_two_names_are_two(capsys) -> None:
    a = connect_cell(name="a")
    b = connect_cell(name="b")
    replaced = None
    try:
        assert a is not b
        assert (a.name, b.name) == ("a", "b")
        assert len(_demo_servers()) == 2
        assert connect_cell(name="a") is a
        # The name "a" with another target: the old "a" goes, and the new server takes its name.
        other = " ".join(demo_server())  # the same server, spelt as one command line
        replaced = connect_cell(other, name="a")
        assert replaced is not a
        assert a.model.status == "closed"
        assert replaced.name == "a"
        note = capsys.readouterr().out
        assert "closed the session 'a'" in note
        assert "the target differs" in note
        assert len(_demo_servers()) == 2
    finally:
        for session in (a, b, replaced):
            if session is not None:
                session.close()
    assert _demo_servers() == []


def test_another_cell_with_other_options_gets_a_session_of_its_own(capsys) -> None:
    # Notebook 05's pattern: `demo` stays usable while a later cell opens its own session of the
    # same server with other options (inside `with`, which closes that one only).
    demo = connect_cell()
    try:
        with mcp_notebook.connect(demo_server(), elicitation=lambda params: None, **OPTIONS) as other:
            assert other is not demo
            assert len(_demo_servers()) == 2
        assert demo.model.status == "ready"
        assert float(demo.call_tool("add", {"a": 1, "b": 1}).text) == 2
        assert capsys.readouterr().out == ""
    finally:
        demo.close()


def test_a_session_whose_server_is_gone_is_replaced_not_returned(capsys) -> None:
    first = connect_cell(reconnect=False)
    second = None
    try:
        (pid,) = _demo_servers()
        psutil.Process(pid).kill()
        from tests.fakes import wait_until

        wait_until(lambda: first.model.status == "closed")
        second = connect_cell(reconnect=False)
        assert second is not first
        assert "its connection had closed" in capsys.readouterr().out
        assert float(second.call_tool("add", {"a": 1, "b": 1}).text) == 2
    finally:
        first.close()
        if second is not None:
            second.close()


def test_the_calls_of_one_script_never_replace_each_other(capsys) -> None:
    """A script (no kernel, so no runs) that connects in a loop keeps every session it opened."""
    sessions = [mcp_notebook.connect(demo_server(), **OPTIONS) for _ in range(2)]
    try:
        assert sessions[0] is not sessions[1]
        assert [s.model.status for s in sessions] == ["ready", "ready"]
        assert len(_demo_servers()) == 2
        assert capsys.readouterr().out == ""
    finally:
        for session in sessions:
            session.close()
    assert _demo_servers() == []
