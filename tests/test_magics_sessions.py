"""One set of sessions: a session opened in code (``mcp_notebook.connect()``, ``Session()``,
``connect_all()``) is one the ``%mcp`` magics see, through a real IPython shell and the demo server
over stdio; ``%mcp use`` switches between them, ``%mcp servers`` lists them all however they were
opened, and a session closed in code leaves the set with a clear one-line error."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("IPython")
pytest.importorskip("pandas")

import pandas as pd
from IPython.core.completer import provisionalcompleter
from IPython.core.interactiveshell import InteractiveShell

import mcp_notebook
from mcp_notebook.jupyter._magics import McpMagics
from mcp_notebook.notebook import Group, Session
from mcp_notebook.notebook._registry import REGISTRY, Registry, describe_target

from .conftest import PYTHON, demo_server
from .test_magics import _magics, ip, ok, one_error_line  # the module's shell, its helpers

__all__ = ["ip"]  # a fixture, used by name

DEMO = "mcp-notebook-demo"  # the demo server's serverInfo.name
ARGV = demo_server()


@pytest.fixture
def magics(ip: InteractiveShell) -> Iterator[McpMagics]:
    """The shell's magics over an empty set of sessions (what other tests left open is set aside
    for the test and put back after); every session the test opens is closed by the test."""
    with REGISTRY._lock:
        saved = (REGISTRY.sessions, REGISTRY.groups, REGISTRY.groups_opened, REGISTRY.current)
        REGISTRY.sessions, REGISTRY.groups, REGISTRY.groups_opened, REGISTRY.current = {}, {}, {}, None
    try:
        yield _magics(ip)
    finally:
        leftovers = [e.session for e in REGISTRY.sessions.values()] + list(REGISTRY.groups.values())
        for thing in leftovers:
            thing.close()
        with REGISTRY._lock:
            REGISTRY.sessions, REGISTRY.groups, REGISTRY.groups_opened, REGISTRY.current = saved
        assert not leftovers, f"a test left these open: {leftovers}"


def cell(ip: InteractiveShell, source: str) -> Any:
    """Run ``source`` as a cell (it must succeed) and return its value."""
    result = ip.run_cell(source, store_history=False)
    assert result.success, result.error_in_exec
    return result.result


def test_a_session_from_connect_is_the_magics_current_session(
    ip: InteractiveShell, magics: McpMagics, capsys: pytest.CaptureFixture[str], no_leaked_processes: None
) -> None:
    cell(ip, f"import mcp_notebook\ns = mcp_notebook.connect({ARGV!r})")
    session = ip.user_ns["s"]
    assert isinstance(session, Session)
    assert session.name == DEMO
    assert magics.current == DEMO

    frame, _ = ok(ip, "%mcp tools", capsys)
    assert "add" in set(frame["name"])
    result, _ = ok(ip, "%mcp call add a=1.5 b=2", capsys)
    assert result.structured_content == {"result": 3.5}
    assert session.model.history[-1]["name"] == "add"  # the very session the code holds
    status, _ = ok(ip, "%mcp status", capsys)
    assert status is not None
    history, _ = ok(ip, "%mcp history", capsys)
    assert list(history["name"]) == ["add"]

    cell(ip, "s.close()")
    assert DEMO not in magics.sessions
    assert one_error_line(ip, "%mcp tools", capsys) == (
        f"mcp tools: no session named {DEMO!r} (it was closed); none is open: connect one first"
    )


def test_two_sessions_switched_with_use_and_listed_with_one_from_the_magic(
    ip: InteractiveShell, magics: McpMagics, capsys: pytest.CaptureFixture[str], no_leaked_processes: None
) -> None:
    first = mcp_notebook.connect(ARGV)
    second = mcp_notebook.connect(ARGV)
    try:
        assert (first.name, second.name) == (DEMO, f"{DEMO}-2")  # a taken name gets a suffix
        assert magics.current == second.name  # the last connected
        ok(ip, "%mcp call add a=1 b=1", capsys)
        assert [e["name"] for e in second.model.history] == ["add"]
        assert first.model.history == []

        with provisionalcompleter():
            assert magics.completions("%mcp use mcp") == ("mcp", [DEMO, f"{DEMO}-2"])
        _, text = ok(ip, f"%mcp use {DEMO}", capsys)
        assert text.strip() == f"current session: {DEMO!r}"
        ok(ip, "%mcp call add a=2 b=2", capsys)
        assert [e["arguments"] for e in first.model.history] == [{"a": 2, "b": 2}]
        result, _ = ok(ip, f"%mcp call -s {DEMO}-2 add a=3 b=3", capsys)
        assert result.structured_content == {"result": 6}
        assert len(second.model.history) == 2

        ok(ip, "%mcp connect magic -- " + " ".join(ARGV), capsys)
        frame, _ = ok(ip, "%mcp servers", capsys)
        assert isinstance(frame, pd.DataFrame)
        rows = frame.set_index("name")
        assert list(rows.index) == [DEMO, f"{DEMO}-2", "magic"]
        assert list(rows["opened"]) == ["connect()", "connect()", "%mcp connect"]
        assert list(rows["current"]) == [False, False, True]
        assert set(rows["status"]) == {"ready"}
        assert set(rows["era"]) <= {"modern", "legacy"}
        assert list(rows["tools"]) == [14, 14, 14]
        assert rows.loc[DEMO, "server"].startswith(DEMO)
        assert rows.loc[DEMO, "target"].endswith("-m mcp_notebook.demo")

        first.close()  # in code: it leaves the set, and the magics say so when it is named
        frame, _ = ok(ip, "%mcp servers", capsys)
        assert list(frame["name"]) == [f"{DEMO}-2", "magic"]
        assert one_error_line(ip, f"%mcp use {DEMO}", capsys) == (
            f"mcp use: no session named {DEMO!r} (it was closed); open sessions: {DEMO}-2, magic"
        )
        assert one_error_line(ip, f"%mcp call -s {DEMO} add a=1 b=1", capsys) == (
            f"mcp call: no session named {DEMO!r} (it was closed); open sessions: {DEMO}-2, magic"
        )
        assert magics.current == "magic"  # closing another session leaves the current one be
    finally:
        first.close()
        second.close()
        ok(ip, "%mcp disconnect magic", capsys)


def test_an_explicit_name_is_kept_and_code_never_closes_a_session_for_its_name(
    ip: InteractiveShell, magics: McpMagics, capsys: pytest.CaptureFixture[str], no_leaked_processes: None
) -> None:
    # Session() never takes a name away; connect() with the same name and call is the same session,
    # and with another call replaces it (issue #29: tests/test_connect_once.py).
    with mcp_notebook.connect(ARGV, name="calc") as calc, Session(ARGV, name="calc") as other:
        assert mcp_notebook.connect(ARGV, name="calc") is calc
        assert (calc.name, other.name) == ("calc", "calc-2")
        assert calc.status == "ready"
        hidden = mcp_notebook.connect(ARGV, register=False)
        own = Session(ARGV, name="own")
        try:
            assert hidden.name == DEMO
            frame, _ = ok(ip, "%mcp servers", capsys)
            assert list(frame["name"]) == ["calc", "calc-2", "own"]
            assert frame.set_index("name").loc["own", "opened"] == "Session()"
            # %mcp connect NAME replaces NAME's session, however it was opened (as documented).
            _, text = ok(ip, "%mcp connect own -- " + " ".join(ARGV), capsys)
            assert "(replaced the previous session)" in text
            assert own.status == "closed"
            assert magics.sessions["own"].opened == "%mcp connect"
        finally:
            hidden.close()
            own.close()
        ok(ip, "%mcp disconnect own", capsys)
    assert magics.sessions == {}


def test_a_group_from_connect_all_is_the_magics_group(
    ip: InteractiveShell, magics: McpMagics, capsys: pytest.CaptureFixture[str], no_leaked_processes: None
) -> None:
    config = {"mcpServers": {"gd": {"command": PYTHON, "args": ["-m", "mcp_notebook.demo"]}}}
    with mcp_notebook.connect_all(config) as group, mcp_notebook.connect(ARGV, name="solo") as solo:
        assert isinstance(group, Group)
        assert group.name == "group"
        assert magics.current == "solo"
        result, _ = ok(ip, "%mcp call gd.add a=4 b=1", capsys)
        assert result.structured_content == {"result": 5}
        frame, _ = ok(ip, "%mcp servers", capsys)
        rows = frame.set_index("name")
        assert list(rows.index) == ["solo", "gd"]
        assert rows.loc["gd", "opened"] == "connect_all()"
        assert rows.loc["gd", "group"] == "group"
        ok(ip, "%mcp use gd", capsys)
        assert solo.status == "ready"
    assert magics.groups == {}
    assert one_error_line(ip, "%mcp tools", capsys) == (
        "mcp tools: no session named 'gd' (it was closed); none is open: connect one first"
    )


def test_a_closed_session_is_not_kept_alive_by_the_set(magics: McpMagics, no_leaked_processes: None) -> None:
    session = mcp_notebook.connect(ARGV)
    assert magics.sessions[DEMO].session is session
    ref = weakref.ref(session)
    session.close()
    del session
    gc.collect()
    assert ref() is None
    assert magics.sessions == {}


# --- the registry alone ------------------------------------------------------------------------------


class _Fake:
    """What the registry reads of a Session."""

    def __init__(self) -> None:
        self.model = None


def test_names_are_made_unique_and_replace_moves_or_returns_the_old_one() -> None:
    registry = Registry()
    a, b, c = _Fake(), _Fake(), _Fake()
    assert registry.add(a, name="x", opened="connect()", target="t")[0] == "x"  # type: ignore[arg-type]
    assert registry.add(b, name="x", opened="connect()", target="t")[0] == "x-2"  # type: ignore[arg-type]
    assert registry.current == "x-2"
    assert registry.add(b, name="y", opened="connect()", target="t") == ("y", None)  # type: ignore[arg-type]
    assert list(registry.sessions) == ["x", "y"]
    assert registry.add(c, name="x", opened="%mcp connect", target="t", replace=True) == ("x", a)  # type: ignore[arg-type]
    registry.forget(a)  # closed after being replaced: nothing to forget, nothing remembered
    assert not registry.was_closed("x")
    registry.forget(b)
    assert list(registry.sessions) == ["x"]
    assert registry.was_closed("y")
    assert registry.current == "x"  # the last added, c
    with pytest.raises(KeyError):
        registry.use("y")


def test_targets_are_described_without_secrets() -> None:
    assert describe_target("https://user:pw@host:8080/mcp?key=s3cret#x") == "https://host:8080/mcp"
    assert describe_target("/usr/bin/python -m srv --api-key s3cret TOKEN=s3cret") == (
        "python -m srv --api-key *** TOKEN=***"
    )


def test_code_outside_ipython_registers_without_importing_it() -> None:
    code = (
        "import sys, json, mcp_notebook\n"
        "from mcp_notebook.notebook._registry import REGISTRY\n"
        f"s = mcp_notebook.connect({ARGV!r})\n"
        "named = list(REGISTRY.sessions)\n"
        "s.close()\n"
        "print(json.dumps([named, list(REGISTRY.sessions), 'IPython' in sys.modules]))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    out = subprocess.run(
        [PYTHON, "-c", code], capture_output=True, text=True, check=True, timeout=60, env=env
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [[DEMO], [], False]
