"""The servers people use, read as data (issue #37): Markdown tables, each text block read on its
own, column-oriented objects, FastMCP's object wrapper and a scalar answer.

An in-process official-SDK server (``MCPServer``) answers each tool exactly as the server it stands
for does (the wire form: ``structuredContent`` or not, how many text blocks, what text); each answer
is called through the public ``Client`` and its DataFrame, its text and its HTML reprs must read it
the same way, every server string escaped.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel

from mcp_notebook import Client, ToolResult

pd = pytest.importorskip("pandas")
pytest.importorskip("markdown_it")

HOSTILE = '<img src=x onerror="alert(1)">'

# --- A: Markdown tables (excel-mcp-polars, mcp-server-fetch) -------------------------------------

DESCRIBE = (
    'Summary statistics for sales.xlsx (sheet "Q1"):\n'
    "\n"
    "| statistic  | units | price  | region |\n"
    "|:-----------|------:|-------:|:-------|\n"
    "| count      | 4     | 4      | 4      |\n"
    "| mean       | 2.5   | 10.25  |        |\n"
    f"| max        | 4     | 12     | {HOSTILE} |\n"
    "\n"
    "Null values were skipped."
)
VALUE_COUNTS = (
    "| region | count |\n"
    "|--------|------:|\n"
    "| north | 12 |\n"
    "| south \\| east | 7 |\n"
    "| west | 9007199254740993 |\n"
)
FETCHED = (
    "Contents of https://example.com/prices:\n"
    "# Prices\n"
    "\n"
    "Current prices, by size:\n"
    "\n"
    "| size | price | order |\n"
    "| ---- | ----- | ----- |\n"
    "| S | 1.5 | [buy](https://example.com/s) |\n"
    "| L | 3 | **sold out** &amp; gone |\n"
    "\n"
    "And the discounts:\n"
    "\n"
    "| code | off |\n"
    "| :--: | --: |\n"
    "| A | 10 |\n"
    "| B |  |\n"
    "| C | 30 |\n"
)
FENCED_TABLE = "An example of a table, not an answer:\n\n```\n| a | b |\n|---|---|\n| 1 | 2 |\n```\n"

# --- B: text blocks read on their own (ESLint, Playwright, fenced JSON) --------------------------

ESLINT_BEFORE = (
    "Here are the results of running ESLint on the provided files. Before doing anything else, "
    "you must display the full list to the user:"
)
ESLINT_AFTER = (
    "If the user asked to fix any issues found, proceed in fixing them. If the user did not ask to "
    "fix issues found, you must ask the user for confirmation before attempting to fix the issues found."
)


def _lint_result(path: str, unused: str) -> dict[str, Any]:
    """One file's LintResult, as ESLint's ``lintFiles`` gives it."""
    return {
        "filePath": path,
        "messages": [
            {
                "ruleId": "no-unused-vars",
                "severity": 2,
                "message": f"'{unused}' is assigned a value but never used.",
                "line": 1,
                "column": 7,
                "nodeType": "Identifier",
                "messageId": "unusedVar",
                "endLine": 1,
                "endColumn": 8,
            },
            {
                "ruleId": "no-undef",
                "severity": 2,
                "message": f"'{HOSTILE}' is not defined.",
                "line": 2,
                "column": 1,
                "nodeType": "Identifier",
                "messageId": "undef",
                "endLine": 2,
                "endColumn": 8,
            },
        ],
        "suppressedMessages": [],
        "errorCount": 2,
        "fatalErrorCount": 0,
        "warningCount": 0,
        "fixableErrorCount": 0,
        "fixableWarningCount": 0,
        "source": f"const {unused} = 1;\nconsole.log(y);\n",
        "usedDeprecatedRules": [],
    }


def _js_stringify(value: Any, indent: int | None = None) -> str:
    """``JSON.stringify(value)`` (compact) or ``JSON.stringify(value, null, 2)``."""
    separators = (",", ":") if indent is None else (",", ": ")
    return json.dumps(value, separators=separators, indent=indent, ensure_ascii=False)


EVALUATED = [{"a": 1, "text": "first"}, {"a": 2, "text": HOSTILE}]
PLAYWRIGHT = (
    f"### Result\n{_js_stringify(EVALUATED, 2)}\n\n"
    "### Ran Playwright code\n```js\nawait page.evaluate('() => rows()');\n```"
)
FENCED_JSON = (
    "Found 2 open issues:\n\n```json\n"
    + json.dumps({"total": 2, "issues": [{"id": 7, "title": "a"}, {"id": 9, "title": HOSTILE}]}, indent=2)
    + "\n```\n\nAsk for more with `page=2`."
)

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


# --- D: FastMCP's object wrapper and a scalar ----------------------------------------------------


class User(BaseModel):
    name: str
    age: int


def _text_only(*texts: str) -> CallToolResult:
    """Text content only, no structuredContent: what TypeScript-SDK and low-level servers send."""
    return CallToolResult(content=[TextContent(type="text", text=text) for text in texts])


def _server() -> MCPServer:
    server = MCPServer("read-as-data")

    @server.tool()
    def describe() -> str:
        """excel-mcp-polars' describe: a str return (the SDK wraps it as {"result": text})."""
        return DESCRIBE

    @server.tool()
    def value_counts() -> CallToolResult:
        return _text_only(VALUE_COUNTS)

    @server.tool()
    def fetch() -> CallToolResult:
        """mcp-server-fetch: one text block, the page as Markdown."""
        return _text_only(FETCHED)

    @server.tool()
    def fenced_table() -> CallToolResult:
        return _text_only(FENCED_TABLE)

    @server.tool()
    def lint_files(files: int = 1) -> CallToolResult:
        """ESLint's MCP server: a sentence, one JSON.stringify(result) per file, a sentence."""
        results = [_lint_result(f"/x/{name}.js", name) for name in "ab"[:files]]
        return _text_only(ESLINT_BEFORE, *(_js_stringify(r) for r in results), ESLINT_AFTER)

    @server.tool()
    def browser_evaluate() -> CallToolResult:
        """Playwright MCP: the value under ### Result, then the code it ran."""
        return _text_only(PLAYWRIGHT)

    @server.tool()
    def list_issues() -> CallToolResult:
        return _text_only(FENCED_JSON)

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

    @server.tool()
    def add(a: int, b: int) -> int:
        """A calculator: text "42" and structuredContent {"result": 42}."""
        return a + b

    @server.tool()
    def add_text(a: int, b: int) -> CallToolResult:
        """The same calculator on a server that sends the text alone."""
        return _text_only(str(a + b))

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


def _caption_line(text: str) -> int:
    """The index of the text picture's caption line (``N rows × M columns (...)``)."""
    return next(i for i, line in enumerate(text.splitlines()) if "; .to_dataframe()" in line)


# --- A ---------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_markdown_table_among_prose_is_that_table_with_typed_columns() -> None:
    result = await _call("describe")
    assert result.structured_content == {"result": DESCRIBE}
    df = result.to_dataframe()
    assert list(df.columns) == ["statistic", "units", "price", "region"]
    assert df.shape == (3, 4)
    assert df["statistic"].tolist() == ["count", "mean", "max"]
    assert df["units"].tolist() == [4, 2.5, 4]
    assert df["price"].tolist() == [4, 10.25, 12]
    assert pd.api.types.is_float_dtype(df["units"])
    assert pd.api.types.is_float_dtype(df["price"])
    assert df["region"].tolist()[::2] == ["4", HOSTILE]  # a column with text stays text
    assert df["region"].isna().tolist() == [False, True, False]  # an empty cell is missing
    assert (df.attrs["rule"], df.attrs["text_format"]) == (5, "markdown")

    text, html = _pictures(result)
    lines = text.splitlines()
    caption = _caption_line(text)
    assert lines[0] == 'Summary statistics for sales.xlsx (sheet "Q1"):'
    assert lines[caption].startswith("3 rows × 4 columns (Markdown table)")
    assert lines[caption + 1].split() == ["statistic", "units", "price", "region"]
    assert lines[-1] == "Null values were skipped."
    assert "|---" not in text
    assert "3 rows × 4 columns (Markdown table)" in html
    assert _th("statistic") in html
    assert "Null values were skipped." in html
    assert "&lt;img src=x" in html

    fenced = await _call("fenced_table")  # a table drawn in a code fence is an example: text
    assert fenced.to_dataframe().attrs["rule"] == 6
    assert "<table" not in _pictures(fenced)[1]


@pytest.mark.anyio
async def test_a_table_alone_keeps_escaped_pipes_and_exact_integers() -> None:
    result = await _call("value_counts")
    df = result.to_dataframe()
    assert list(df.columns) == ["region", "count"]
    assert df["region"].tolist() == ["north", "south | east", "west"]
    assert df["count"].tolist() == [12, 7, 9007199254740993]
    assert pd.api.types.is_integer_dtype(df["count"])
    text, html = _pictures(result)
    assert text.splitlines()[0].startswith("3 rows × 2 columns (Markdown table)")
    assert "south | east" in html


@pytest.mark.anyio
async def test_several_tables_give_the_first_and_the_rest_in_attrs() -> None:
    result = await _call("fetch")
    df = result.to_dataframe()
    assert list(df.columns) == ["size", "price", "order"]
    assert df["price"].tolist() == [1.5, 3.0]
    assert df["order"].tolist() == ["buy", "sold out & gone"]  # each cell as a reader sees it
    [discounts] = df.attrs["more_tables"]
    assert list(discounts.columns) == ["code", "off"]
    assert discounts["code"].tolist() == ["A", "B", "C"]
    assert discounts["off"].dtype == "Int64"  # numbers with a gap: nullable, exact
    assert discounts["off"].tolist()[::2] == [10, 30]
    assert discounts["off"].isna().tolist()[1]
    again = (await _call("fetch")).to_dataframe()
    assert pd.concat([df, again])["size"].tolist() == ["S", "L", "S", "L"]  # attrs holding frames concat
    text, html = _pictures(result)
    assert text.splitlines()[:2] == ["Contents of https://example.com/prices:", "# Prices"]
    assert '1 more table in df.attrs["more_tables"]' in text
    assert "1 more table in df.attrs[&#34;more_tables&#34;]" in html
    assert "And the discounts:" in text


# --- B ---------------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_eslints_json_report_between_two_sentences_is_its_messages() -> None:
    result = await _call("lint_files")
    assert [block["type"] for block in result.content] == ["text"] * 3
    df = result.to_dataframe()
    assert df.shape[0] == 2
    assert list(df.columns)[:5] == ["ruleId", "severity", "message", "line", "column"]
    assert df["ruleId"].tolist() == ["no-unused-vars", "no-undef"]
    assert df.attrs["envelope"]["filePath"] == "/x/a.js"
    assert df.attrs["envelope"]["errorCount"] == 2

    text, html = _pictures(result)
    lines = text.splitlines()
    caption = _caption_line(text)
    assert lines[0].startswith(ESLINT_BEFORE[:100])  # a long line is cut in text
    assert lines[caption].startswith("2 rows × 9 columns (JSON text)")
    assert lines[caption + 1].split()[:3] == ["ruleId", "severity", "message"]
    assert any(line.startswith(ESLINT_AFTER[:100]) for line in lines[caption + 4 :])
    assert '{"filePath"' not in text  # not drawn as one minified line
    assert html.index(ESLINT_BEFORE) < html.index("<table") < html.index(ESLINT_AFTER)
    assert _th("ruleId") in html


@pytest.mark.anyio
async def test_several_json_blocks_among_prose_are_one_record_each() -> None:
    result = await _call("lint_files", {"files": 2})
    df = result.to_dataframe()
    assert df["filePath"].tolist() == ["/x/a.js", "/x/b.js"]
    assert df["errorCount"].tolist() == [2, 2]
    text, _ = _pictures(result)
    lines = text.splitlines()
    caption = _caption_line(text)
    assert lines[0].startswith(ESLINT_BEFORE[:100])
    assert lines[caption].startswith("2 rows × ")
    assert any(line.startswith(ESLINT_AFTER[:100]) for line in lines[caption + 3 :])


@pytest.mark.anyio
async def test_json_under_a_markdown_heading_is_read_as_that_json() -> None:
    result = await _call("browser_evaluate")
    df = result.to_dataframe()
    assert list(df.columns) == ["a", "text"]
    assert df["text"].tolist() == ["first", HOSTILE]
    text, html = _pictures(result)
    lines = text.splitlines()
    assert lines[0] == "### Result"
    assert lines[1].startswith("2 rows × 2 columns (JSON text)")
    assert lines[-1] == "```"
    assert "await page.evaluate" in html
    assert _th("text") in html


@pytest.mark.anyio
async def test_a_fenced_json_block_is_read_as_that_json() -> None:
    result = await _call("list_issues")
    df = result.to_dataframe()
    assert list(df.columns) == ["id", "title"]
    assert df["id"].tolist() == [7, 9]
    assert df.attrs["envelope"] == {"total": 2}
    text, _ = _pictures(result)
    assert text.splitlines()[0] == "Found 2 open issues:"
    assert "Ask for more with `page=2`." in text


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


@pytest.mark.anyio
async def test_a_scalar_answer_is_one_row_with_one_column_result() -> None:
    structured = await _call("add", {"a": 40, "b": 2})
    text_only = await _call("add_text", {"a": 40, "b": 2})
    assert structured.structured_content == {"result": 42}
    assert text_only.structured_content is None
    for result in (structured, text_only):
        df = result.to_dataframe()
        assert list(df.columns) == ["result"]
        assert df["result"].tolist() == [42]
        text, html = _pictures(result)
        assert text.splitlines()[0].startswith("1 row × 1 column")
        assert text.splitlines()[2].split() == ["result", "42"]
        assert "<table" in html


def _html_of(widget: Any) -> str:
    """Every HTML value in a widget tree."""
    value = getattr(widget, "value", None)
    own = value if isinstance(value, str) else ""
    return own + "".join(_html_of(child) for child in getattr(widget, "children", ()))


@pytest.mark.anyio
async def test_the_explorer_draws_the_prose_around_the_table() -> None:
    pytest.importorskip("ipywidgets")
    from mcp_notebook.widgets._result_view import result_widget

    html = _html_of(result_widget(await _call("lint_files")))
    assert html.index(ESLINT_BEFORE) < html.index("<table") < html.index(ESLINT_AFTER)
    assert _th("ruleId") in html
    assert HOSTILE not in html
