"""MCP Apps discovery: the ui extension declared in both eras, app-only tools hidden from every
list meant for people (and a model) unless asked for, and the ``ui`` column of tools_frame."""

from __future__ import annotations

import pytest

import mcp_notebook
from mcp_notebook import Client
from mcp_notebook.notebook import _frames as frames
from tests.apps_peers import EXAMPLES, PROBE, example_command

UI = "io.modelcontextprotocol/ui"
TASKS = "io.modelcontextprotocol/tasks"
UI_SETTINGS = {"mimeTypes": ["text/html;profile=mcp-app"]}


@pytest.mark.anyio
@pytest.mark.usefixtures("no_leaked_processes")
@pytest.mark.parametrize("protocol", ["legacy", "modern"])
async def test_the_ui_extension_is_declared_in_both_eras(protocol: str) -> None:
    async with Client(PROBE, protocol=protocol) as client:
        assert client.era == protocol
        seen = (await client.call_tool("client_capabilities")).structured_content["capabilities"]
    assert seen["extensions"][UI] == UI_SETTINGS
    assert TASKS not in seen["extensions"]  # legacy: no such field; modern: left out of a plain call


@pytest.mark.anyio
@pytest.mark.usefixtures("no_leaked_processes")
@pytest.mark.parametrize("name", list(EXAMPLES))
async def test_tools_frame_names_the_view_of_each_published_example(name: str) -> None:
    example = EXAMPLES[name]
    async with Client(example_command(name)) as client:
        df = frames.tools_frame(await client.list_tools())
    assert list(df["name"]) == [example.tool]
    assert list(df["ui"]) == [example.resource]
    assert str(df["ui"].dtype) == "string"


def test_a_session_hides_app_only_tools_unless_asked() -> None:
    with mcp_notebook.connect(PROBE, show_progress=False) as session:
        names = [t.name for t in session.list_tools()]
        assert "app_refresh" not in names
        assert {"show_chart", "model_secret"} <= set(names)
        assert "app_refresh" in [t.name for t in session.list_tools(include_app_only=True)]
        assert "app_refresh" not in [t.name for t in session.model.tools]

        df = session.tools_frame()
        assert "app_refresh" not in set(df["name"])
        ui = dict(zip(df["name"], df["ui"], strict=True))
        assert ui["show_chart"] == "ui://probe/chart.html"
        assert ui["legacy_key"] == "ui://probe/legacy.html"  # the deprecated key
        assert ui["not_ui"] is None or str(ui["not_ui"]) == "<NA>"  # https://: no View
        everything = session.tools_frame(include_app_only=True)
        assert "app_refresh" in set(everything["name"])

        # Hidden, not forbidden: a script may still call it (a View does, through the host).
        assert session.call_tool("app_refresh", {"n": 3}).structured_content == {"refreshed": 3}


def test_the_explorer_lists_app_only_tools_only_when_asked() -> None:
    pytest.importorskip("ipywidgets")
    with mcp_notebook.connect(PROBE, show_progress=False) as session:
        session.list_tools()
        assert "app_refresh" not in session.explorer().tool_names
        assert "show_chart" in session.explorer().tool_names
        assert "app_refresh" in session.explorer(include_app_only=True).tool_names


def test_a_group_table_hides_app_only_tools_unless_asked() -> None:
    config = {"mcpServers": {"probe": {"command": PROBE[0], "args": PROBE[1:]}}}
    with mcp_notebook.connect_all(config, show_progress=False, register=False) as group:
        group.list_tools()
        assert "probe.app_refresh" not in [t.name for t in group.list_tools()]
        assert "probe.app_refresh" in [t.name for t in group.list_tools(include_app_only=True)]
        assert "app_refresh" not in set(group.tools_frame()["name"])
        assert "app_refresh" in set(group.tools_frame(include_app_only=True)["name"])
