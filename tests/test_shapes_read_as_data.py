"""The servers people use, read as data (issue #37): column-oriented objects (Chroma) and
FastMCP's object wrapper.

An in-process official-SDK server (``MCPServer``) answers each tool exactly as the server it stands
for does (the wire form: ``structuredContent`` or not, how many text blocks, what text); each answer
is called through the public ``Client`` and its DataFrame, its text and its HTML reprs must read it
the same way, every server string escaped.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

from mcp_notebook import Client, ToolResult

pd = pytest.importorskip("pandas")

HOSTILE = '<img src=x onerror="alert(1)">'

# --- C: column-oriented objects (Chroma) ---------------------------------------------------------

CHROMA_QUERY = {
    "ids": [["doc-2", "doc-7"]],
    "embeddings": None,
    "documents": [["red apples", HOSTILE]],
    "uris": None,
    "data": None,
    "metadatas": [[{"source": "a.txt", "page": 1}, {"source": "b.txt", "page": 4}]],
    "distances": [[0.12, 0.5]],
    "included": ["metadatas", "documents", "distances"],
}
CHROMA_GET = {
    "ids": ["doc-2", "doc-7"],
    "embeddings": None,
    "documents": ["red apples", HOSTILE],
    "uris": None,
    "data": None,
    "metadatas": [{"source": "a.txt", "page": 1}, {"source": "b.txt", "page": 4}],
    "included": ["metadatas", "documents"],  # as many names as rows: still not a column
}


# --- D: FastMCP's object wrapper --------------------------------------------------------------------


class User(BaseModel):
    name: str
    age: int


def _server() -> MCPServer:
    server = MCPServer("read-as-data")

    @server.tool()
    def chroma_query_documents() -> dict[str, Any]:
        """chroma-mcp: collection.query(...) returned as it is (a dict: structuredContent)."""
        return CHROMA_QUERY

    @server.tool()
    def chroma_get_documents() -> dict[str, Any]:
        return CHROMA_GET

    @server.tool()
    def get_user() -> User | None:
        """An optional object: the SDK (like FastMCP) wraps it as {"result": {...}}."""
        return User(name=HOSTILE, age=42)

    return server


async def _call(name: str, arguments: dict[str, Any] | None = None) -> ToolResult:
    async with Client(_server(), timeout=30) as client:
        return await client.call_tool(name, arguments or {})


def _pictures(result: ToolResult) -> tuple[str, str]:
    bundle = result._repr_mimebundle_()
    html = bundle["text/html"]
    assert HOSTILE not in html
    assert "<img" not in html
    return bundle["text/plain"], html


def _th(name: str) -> str:
    """A column's header cell in the HTML picture."""
    return f'<th style="text-align:left">{name}</th>'


# --- C ---------------------------------------------------------------------------------------------


CHROMA_COLUMNS = ["ids", "documents", "metadatas.source", "metadatas.page"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("tool", "columns"),
    [("chroma_query_documents", [*CHROMA_COLUMNS, "distances"]), ("chroma_get_documents", CHROMA_COLUMNS)],
)
async def test_chromas_parallel_lists_are_one_table(tool: str, columns: list[str]) -> None:
    result = await _call(tool)
    df = result.to_dataframe()
    assert list(df.columns) == columns
    assert df["ids"].tolist() == ["doc-2", "doc-7"]
    assert df["documents"].tolist() == ["red apples", HOSTILE]
    assert df["metadatas.page"].tolist() == [1, 4]
    assert df.attrs["rule"] == 2
    assert "included" in df.attrs["envelope"]
    text, html = _pictures(result)
    assert text.splitlines()[0].startswith(f"2 rows × {len(columns)} columns (structured content)")
    assert text.splitlines()[1].split() == columns
    assert "embeddings" not in text.splitlines()[1]
    assert _th("documents") in html


# --- D ---------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_fastmcps_object_wrapper_is_looked_through() -> None:
    result = await _call("get_user")
    assert result.structured_content == {"result": {"name": HOSTILE, "age": 42}}
    df = result.to_dataframe()
    assert list(df.columns) == ["name", "age"]
    assert df["age"].tolist() == [42]
    assert str(df["age"].dtype) == "Int64"  # typed from the wrapper's outputSchema
    text, _ = _pictures(result)
    assert [line.split()[0] for line in text.splitlines()[2:]] == ["name", "age"]
