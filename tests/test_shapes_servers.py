"""Third-party result shapes read as data, from a real fastmcp server (issue #29 item 9).

``tests/servers/shapes_server.py`` answers the way markitdown, mcp-alchemy, MotherDuck, an Excel
server, dbhub, sequential-thinking, mcp-server-sqlite and mcp-server-duckdb do; each answer is
called through the core ``Client`` and through the notebook ``Session``, and its DataFrame, its
text and HTML reprs and the explorer's result view must all read it the same way, every server
string escaped.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import mcp_notebook
from mcp_notebook import Client, ResourceContents, ToolResult
from tests.conftest import python_server
from tests.servers.shapes_server import HOSTILE, MARKDOWN, THOUGHT

pd = pytest.importorskip("pandas")

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

SERVER = python_server("shapes_server.py")
BLOCK_COLUMNS = ["type", "text", "mime_type", "uri", "name", "data_size"]


@dataclasses.dataclass(frozen=True)
class Expected:
    """The DataFrame a tool's answer gives, and what its text repr's header line holds."""

    shape: tuple[int, int]
    columns: list[Any]
    #: the text repr's first line starts so (a table's size and source), None for text
    caption: str | None
    hostile: bool = True


TOOLS = {
    "markdown_text": Expected((1, 6), BLOCK_COLUMNS, None),
    "json_text": Expected((3, 2), ["id", "name"], "3 rows × 2 columns (JSON text)"),
    "excel_range": Expected((2, 2), ["name", "qty"], "2 rows × 2 columns (structured content)"),
    "excel_grid": Expected((2, 3), [0, 1, 2], "2 rows × 3 columns (structured content)", hostile=False),
    "dbhub_query": Expected((2, 2), ["id", "name"], "2 rows × 2 columns (JSON text)"),
    "think": Expected((1, 6), list(THOUGHT), "1 row × 6 columns (JSON text)", hostile=False),
    "sqlite_query": Expected((2, 2), ["id", "name"], "2 rows × 2 columns (Python-literal text)"),
    "duckdb_query": Expected((3, 2), [0, 1], "3 rows × 2 columns (Python-literal text)"),
}
RESOURCES = {
    "shapes://excel": Expected((2, 2), ["name", "qty"], None),
    "shapes://sqlite": Expected((2, 2), ["id", "name"], None),
    "shapes://markdown": Expected((1, 4), ["uri", "mime_type", "text", "data_size"], None),
}


def _check_escaped(html: str, hostile: bool) -> None:
    assert HOSTILE not in html
    assert "<img" not in html
    assert "<script" not in html
    if hostile:
        assert "&lt;img src=x onerror=" in html


def _check_result(name: str, result: ToolResult) -> None:
    expected = TOOLS[name]
    df = result.to_dataframe()
    assert (df.shape, list(df.columns)) == (expected.shape, expected.columns), name
    bundle = result._repr_mimebundle_()
    text, html = bundle["text/plain"], bundle["text/html"]
    _check_escaped(html, expected.hostile)
    if expected.caption is None:  # text: its own lines, not a one-cell table
        assert "<table" not in html
        assert text.splitlines()[:3] == ["# Report", "", "Two lines"]
        assert "Two lines<br />" in html
        assert "<h1>Report</h1>" in html
    else:
        assert text.splitlines()[0].startswith(expected.caption), text
        assert "<table" in html
        head = text.splitlines()[1].split()
        if df.shape[0] == 1 and name == "think":
            assert head == ["key", "value"]
        else:
            assert head == [str(c) for c in expected.columns]


@pytest.mark.anyio
async def test_each_shape_through_the_client() -> None:
    async with Client(SERVER, timeout=30) as client:
        assert {tool.name for tool in await client.list_tools()} == set(TOOLS)
        for name in TOOLS:
            _check_result(name, await client.call_tool(name))
        for uri, expected in RESOURCES.items():
            contents = await client.read_resource(uri)
            df = contents.to_dataframe()
            assert (df.shape, list(df.columns)) == (expected.shape, expected.columns), uri
            _check_contents(uri, contents)


def _check_contents(uri: str, contents: ResourceContents) -> None:
    html = contents._repr_mimebundle_()["text/html"]
    _check_escaped(html, True)
    if uri == "shapes://markdown":
        assert "<h1>Report</h1>" in html
        assert "<table" not in html
    else:
        assert "<table" in html


def test_each_shape_through_the_notebook_session() -> None:
    with mcp_notebook.connect(SERVER, show_progress=False) as session:
        for name in TOOLS:
            _check_result(name, session.call_tool(name))
        for uri, expected in RESOURCES.items():
            contents = session.read_resource(uri)
            df = contents.to_dataframe()
            assert (df.shape, list(df.columns)) == (expected.shape, expected.columns), uri
            _check_contents(uri, contents)
        # map_tool reads the {"result": text} wrapper as the pictures do: the text itself
        frame = session.map_tool("markdown_text", pd.DataFrame({"x": [1]}).drop(columns="x"))
        assert frame["result"].tolist() == [MARKDOWN]


def _html_of(widget: Any) -> str:
    """Every HTML value in a widget tree."""
    value = getattr(widget, "value", None)
    own = value if isinstance(value, str) else ""
    return own + "".join(_html_of(child) for child in getattr(widget, "children", ()))


def test_the_explorer_result_view_draws_the_same_shapes() -> None:
    pytest.importorskip("ipywidgets")
    from mcp_notebook.widgets._result_view import result_widget

    with mcp_notebook.connect(SERVER, show_progress=False) as session:
        markdown = _html_of(result_widget(session.call_tool("markdown_text")))
        _check_escaped(markdown, True)
        assert "<h1>Report</h1>" in markdown
        assert "Two lines<br />" in markdown
        assert "<table" not in markdown
        for name in ("json_text", "excel_range", "dbhub_query", "sqlite_query", "duckdb_query"):
            html = _html_of(result_widget(session.call_tool(name)))
            _check_escaped(html, True)
            assert TOOLS[name].caption is not None
            assert TOOLS[name].caption.split(" (")[0] in html, name
        think = _html_of(result_widget(session.call_tool("think")))
        assert "1 row × 6 columns" in think
        assert "branches" in think
