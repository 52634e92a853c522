"""The ``%mcp`` commands as functions (issue #38): what marimo and scripts use, with no IPython shell.

``mcp_notebook.servers()``, ``use()``, ``session()``, ``tools()``, ``disconnect()`` and
``show_full_tracebacks()`` over a real demo server on stdio, as a marimo cell calls them; the
magics call the same functions (tests/test_magics*.py hold the magic face to its words).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("pandas")

import mcp_notebook
from mcp_notebook.notebook._registry import REGISTRY
from mcp_notebook.protocol._errors import full_tracebacks

from .conftest import demo_server

DEMO = "mcp-notebook-demo"  # the demo server's serverInfo.name


@pytest.fixture
def empty_registry() -> Iterator[None]:
    """The notebook's set of sessions, empty for the test (what others left is put back after)."""
    with REGISTRY._lock:
        saved = (REGISTRY.sessions, REGISTRY.groups, REGISTRY.groups_opened, REGISTRY.current)
        REGISTRY.sessions, REGISTRY.groups, REGISTRY.groups_opened, REGISTRY.current = {}, {}, {}, None
    try:
        yield
    finally:
        leftovers = [e.session for e in REGISTRY.sessions.values()] + list(REGISTRY.groups.values())
        for thing in leftovers:
            thing.close()
        with REGISTRY._lock:
            REGISTRY.sessions, REGISTRY.groups, REGISTRY.groups_opened, REGISTRY.current = saved
        assert not leftovers, f"a test left these open: {leftovers}"


@pytest.mark.usefixtures("empty_registry", "no_leaked_processes")
def test_the_commands_work_on_the_notebooks_sessions_without_magics() -> None:
    with pytest.raises(ValueError, match=r"^no MCP session: connect one first"):
        mcp_notebook.session()
    demo = mcp_notebook.connect(demo_server())
    try:
        assert mcp_notebook.session() is demo
        assert mcp_notebook.session(DEMO) is demo

        servers = mcp_notebook.servers()
        assert list(servers["name"]) == [DEMO]
        assert bool(servers["current"].iloc[0])
        assert servers["opened"].iloc[0] == "connect()"

        matching = mcp_notebook.tools("sales*")
        assert list(matching["name"])
        assert all(name.startswith("sales") for name in matching["name"])
        assert set(mcp_notebook.tools(DEMO)["name"]) == {tool.name for tool in demo.model.tools}
        assert "add" in set(mcp_notebook.tools("ADD")["name"])  # a part of the name, any case

        second = mcp_notebook.connect(demo_server(), name="second")
        assert mcp_notebook.session() is second  # the last connected is current
        assert mcp_notebook.use(DEMO) is demo
        assert mcp_notebook.session() is demo
        assert mcp_notebook.disconnect("second") == ["disconnected 'second'"]
        assert second.model.status == "closed"
        assert list(mcp_notebook.servers()["name"]) == [DEMO]

        with pytest.raises(ValueError, match=r"^no session named 'nope'"):
            mcp_notebook.use("nope")
        with pytest.raises(ValueError, match=r"^no session named 'second' \(it was closed\)"):
            mcp_notebook.session("second")
        assert mcp_notebook.disconnect() == [f"disconnected {DEMO!r}"]
        assert demo.model.status == "closed"
        assert mcp_notebook.disconnect(all=True) == []
    finally:
        demo.close()


def test_show_full_tracebacks_is_what_tb_full_sets() -> None:
    assert not full_tracebacks()
    mcp_notebook.show_full_tracebacks()
    try:
        assert full_tracebacks()
    finally:
        mcp_notebook.show_full_tracebacks(False)
    assert not full_tracebacks()
