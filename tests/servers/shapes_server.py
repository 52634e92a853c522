"""A fastmcp server whose tools answer in the shapes popular third-party servers use (issue #29).

Each tool returns its data the way the server it stands for does, so the tests see the exact wire
form (``structuredContent``, text blocks) that fastmcp and the SDK build from it:

- ``markdown_text``: a ``str`` return (fastmcp and the SDK wrap it as ``{"result": "<text>"}``), as
  markitdown and mcp-alchemy answer; Markdown with several lines and a hostile tag.
- ``json_text``: a ``str`` return that is JSON text of ``columns`` + ``rows`` (MotherDuck).
- ``excel_range``: a dict whose ``values`` is a grid with a header row (an Excel server).
- ``excel_grid``: a dict whose ``values`` is a grid without a header row (numbers only).
- ``dbhub_query``: JSON text (no structuredContent) with the rows two levels down (dbhub).
- ``think``: JSON text of one flat object with empty list fields (sequential-thinking).
- ``sqlite_query``: Python-literal text of records (mcp-server-sqlite: ``str(list_of_dicts)``).
- ``duckdb_query``: Python-literal text of tuples (mcp-server-duckdb: ``str(rows)``).

Resources give the same texts as a resource's contents. Run ``python shapes_server.py`` (stdio).
"""

from __future__ import annotations

import json
from typing import Any

from fastmcp import FastMCP
from fastmcp.tools import ToolResult
from mcp_types import TextContent

#: a string a browser would run if it were ever markup
HOSTILE = '<img src=x onerror="alert(1)">'

MARKDOWN = f"# Report\n\nTwo lines\nof text, and a tag: {HOSTILE}\n\n- first item\n- second item\n"
COLUMNS_ROWS = {"columns": ["id", "name"], "rows": [[1, "x"], [2, HOSTILE], [3, "z"]]}
EXCEL = {"values": [["name", "qty"], ["a", 1], [HOSTILE, 2]]}
GRID = {"values": [[1, 2, 3], [4, 5, 6]]}
DBHUB = {
    "success": True,
    "data": {
        "statements": [
            {"sql": "SELECT id, name FROM t", "rows": [{"id": 1, "name": "x"}, {"id": 2, "name": HOSTILE}]}
        ]
    },
}
THOUGHT = {
    "thought": "First, look at the data.",
    "thoughtNumber": 1,
    "totalThoughts": 3,
    "nextThoughtNeeded": True,
    "branches": [],
    "thoughtHistoryLength": 1,
}
SQLITE_RECORDS: list[dict[str, Any]] = [{"id": 1, "name": "x"}, {"id": 2, "name": HOSTILE}]
DUCKDB_ROWS = [(1, "x"), (2, HOSTILE), (3, None)]

mcp = FastMCP("shapes-test-server")


def _text(text: str) -> ToolResult:
    """Text content only, no structuredContent: what TypeScript-SDK and low-level servers send."""
    return ToolResult(content=[TextContent(type="text", text=text)])


@mcp.tool
def markdown_text() -> str:
    """A document as Markdown text (markitdown, mcp-alchemy)."""
    return MARKDOWN


@mcp.tool
def json_text() -> str:
    """A query's answer as JSON text of columns and rows (MotherDuck)."""
    return json.dumps(COLUMNS_ROWS)


@mcp.tool
def excel_range() -> dict[str, Any]:
    """A sheet's range, its first row the header (an Excel server)."""
    return EXCEL


@mcp.tool
def excel_grid() -> dict[str, Any]:
    """A range of numbers only: no header row."""
    return GRID


@mcp.tool
def dbhub_query() -> ToolResult:
    """A query's rows two levels down, as JSON text (dbhub)."""
    return _text(json.dumps(DBHUB, indent=2))


@mcp.tool
def think() -> ToolResult:
    """One thought, as JSON text of a flat object (sequential-thinking)."""
    return _text(json.dumps(THOUGHT, indent=2))


@mcp.tool
def sqlite_query() -> ToolResult:
    """Rows as the Python repr of a list of dicts (mcp-server-sqlite)."""
    return _text(str(SQLITE_RECORDS))


@mcp.tool
def duckdb_query() -> ToolResult:
    """Rows as the Python repr of a list of tuples (mcp-server-duckdb)."""
    return _text(str(DUCKDB_ROWS))


@mcp.resource("shapes://excel", mime_type="application/json")
def excel_resource() -> str:
    return json.dumps(EXCEL)


@mcp.resource("shapes://sqlite")
def sqlite_resource() -> str:
    return str(SQLITE_RECORDS)


@mcp.resource("shapes://markdown", mime_type="text/markdown")
def markdown_resource() -> str:
    return MARKDOWN


if __name__ == "__main__":
    mcp.run(show_banner=False)
