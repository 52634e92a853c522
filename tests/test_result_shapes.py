"""Results whose blocks carry values of the wrong type still display (found by tests/test_fuzz.py).

A notebook shows every result it gets; a server that puts a list where a MIME type belongs, or a
string where a resource object belongs, must get a "not shown" placeholder, not a traceback.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mcp_notebook import ResourceContents, ToolResult

ODD_BLOCKS = [
    {"type": "image", "mimeType": [], "data": "AAAA"},
    {"type": "audio", "mimeType": {"a": 1}, "data": "AAAA"},
    {"type": "resource", "resource": "file:///x"},
    {"type": "resource", "resource": [1, 2]},
    {"type": "resource", "resource": {"uri": "file:///x", "mimeType": ["text/plain"], "blob": "AAAA"}},
]


@pytest.mark.parametrize("block", ODD_BLOCKS, ids=lambda b: f"{b['type']}-{sorted(b)[-1]}")
def test_a_block_with_values_of_the_wrong_type_is_displayed_as_not_shown(block: dict) -> None:
    result = ToolResult.from_dict({"content": [block]})
    bundle = result._repr_mimebundle_()
    assert "text/html" in bundle
    repr(result)


def test_a_block_that_is_no_object_is_wrapped_and_the_rest_kept_as_sent() -> None:
    raw = {"content": [{"type": "text", "text": "a"}, "loose", 7]}
    result = ToolResult.from_dict(raw)
    assert result.content == [
        {"type": "text", "text": "a"},
        {"type": "unknown", "value": "loose"},
        {"type": "unknown", "value": 7},
    ]
    assert raw["content"] == [{"type": "text", "text": "a"}, "loose", 7]  # the server's, untouched
    assert result.text == "a"
    repr(result)


# --- third-party shapes (issue #29): one inference for the frame, the text and the HTML ----------

pd = pytest.importorskip("pandas")

HOSTILE = '<img src=x onerror="alert(1)">'
MARKDOWN = f"# Report\n\nTwo lines\nof text, and a tag: {HOSTILE}\n\n- first item\n- second item\n"


def wrapped(text: str) -> ToolResult:
    """A ``str`` return as the SDK and fastmcp send it: the text block and ``{"result": text}``."""
    return ToolResult.from_dict(
        {"content": [{"type": "text", "text": text}], "structuredContent": {"result": text}}
    )


def structured(value: Any) -> ToolResult:
    return ToolResult.from_dict(
        {"content": [{"type": "text", "text": json.dumps(value)}], "structuredContent": value}
    )


def text_only(text: str) -> ToolResult:
    return ToolResult.from_dict({"content": [{"type": "text", "text": text}]})


def bundle(result: ToolResult) -> tuple[str, str]:
    pictures = result._repr_mimebundle_()
    return pictures["text/plain"], pictures["text/html"]


def frame(result: ToolResult) -> tuple[tuple[int, int], list[Any]]:
    df = result.to_dataframe()
    return df.shape, list(df.columns)


def test_a_wrapped_markdown_text_is_text_with_its_lines_not_a_one_cell_table() -> None:
    result = wrapped(MARKDOWN)
    text, html = bundle(result)
    assert text.splitlines()[:4] == ["# Report", "", "Two lines", f"of text, and a tag: {HOSTILE}"]
    assert "\\n" not in text
    assert "key" not in text.split()
    assert "<table" not in html
    assert "<h1>Report</h1>" in html
    assert "<li>first item</li>" in html
    assert "Two lines<br />" in html  # a single line break is kept
    assert HOSTILE not in html
    assert "&lt;img" in html
    df = result.to_dataframe()
    assert df.shape == (1, 6)
    assert df.attrs["rule"] == 6
    assert df["text"][0] == MARKDOWN


def test_a_wrapped_plain_text_keeps_its_lines_in_html() -> None:
    text, html = bundle(wrapped("first line\nsecond line " + "x" * 40))
    assert text.splitlines() == ["first line", "second line " + "x" * 40]
    assert "<table" not in html
    assert "<pre" in html
    assert "first line\nsecond line" in html


def test_a_wrapped_text_with_no_content_block_is_still_shown() -> None:
    result = ToolResult.from_dict({"content": [], "structuredContent": {"result": "just text"}})
    text, html = bundle(result)
    assert text == "just text"
    assert "just text" in html
    assert frame(result) == ((1, 6), ["type", "text", "mime_type", "uri", "name", "data_size"])


def test_a_wrapped_json_text_is_read_as_that_json() -> None:
    result = wrapped(json.dumps([{"id": 1, "name": "x"}, {"id": 2, "name": "y"}]))
    assert frame(result) == ((2, 2), ["id", "name"])
    assert result.to_dataframe().attrs["rule"] == 5
    text, html = bundle(result)
    assert text.splitlines()[0].startswith("2 rows × 2 columns (JSON text)")
    assert "<table" in html


def test_a_grid_with_a_header_row_is_a_table_with_those_columns() -> None:
    result = structured({"values": [["name", "qty"], ["a", 1], ["b", 2]]})
    df = result.to_dataframe()
    assert df.shape == (2, 2)
    assert list(df.columns) == ["name", "qty"]
    assert df["qty"].tolist() == [1, 2]
    assert df.attrs["rule"] == 3
    text, _ = bundle(result)
    assert text.splitlines()[1].split() == ["name", "qty"]


@pytest.mark.parametrize(
    ("grid", "shape"),
    [
        ([[1, 2, 3], [4, 5, 6]], (2, 3)),  # numbers: no header
        ([["a", "b"], ["c", "d"]], (2, 2)),  # the first row's types are the other rows'
        ([["a", "b"]], (1, 2)),  # one row only: data, not an empty table
        ([[1, "x"], [2]], (2, 2)),  # a short row is padded
    ],
)
def test_a_grid_without_a_header_row_has_positional_columns(grid: list[Any], shape: tuple[int, int]) -> None:
    for result in (structured({"values": grid}), structured(grid), wrapped(json.dumps(grid))):
        assert frame(result) == (shape, list(range(shape[1])))


@pytest.mark.parametrize(
    "value",
    [
        {"columns": ["id", "name"], "rows": [[1, "x"], [2, "y"]]},
        {
            "columns": [{"name": "id", "type": "INTEGER"}, {"name": "name"}],
            "rows": [[1, "x"], [2, "y"]],
            "n": 2,
        },
    ],
)
def test_columns_and_rows_is_a_table(value: dict[str, Any]) -> None:
    for result in (structured(value), wrapped(json.dumps(value)), text_only(json.dumps(value))):
        assert frame(result) == ((2, 2), ["id", "name"])
    assert "<table" in bundle(wrapped(json.dumps(value)))[1]


def test_the_one_list_of_records_nested_in_an_object_is_found() -> None:
    dbhub = {"success": True, "data": {"statements": [{"sql": "SELECT", "rows": [{"id": 1}, {"id": 2}]}]}}
    result = text_only(json.dumps(dbhub, indent=2))
    df = result.to_dataframe()
    assert df.shape == (2, 1)
    assert list(df.columns) == ["id"]
    assert df.attrs["envelope"] == {"success": True}
    text, _html = bundle(result)
    assert text.splitlines()[0].startswith("2 rows × 1 column")
    assert "also: success=true" in text


def test_two_nested_lists_of_records_leave_the_object_whole() -> None:
    value = {"data": {"a": [{"x": 1}, {"x": 2}], "b": [{"y": 1}, {"y": 2}]}, "ok": True}
    df = structured(value).to_dataframe()
    assert df.shape == (1, 3)
    assert df.attrs["rule"] == 4


def test_an_empty_list_beside_other_fields_is_not_the_records() -> None:
    thought = {
        "thought": "First, look.",
        "thoughtNumber": 1,
        "totalThoughts": 3,
        "nextThoughtNeeded": True,
        "branches": [],
        "thoughtHistoryLength": 1,
    }
    for result in (structured(thought), text_only(json.dumps(thought, indent=2))):
        df = result.to_dataframe()
        assert df.shape == (1, 6)
        assert list(df.columns) == list(thought)
        text, html = bundle(result)
        assert text.splitlines()[1].split() == ["key", "value"]
        assert "branches" in html
    # the empty list alone is still an empty table
    assert frame(structured({"result": []})) == ((0, 0), [])


def test_python_literal_records_and_rows_are_read() -> None:
    records = text_only(str([{"id": 1, "name": "x"}, {"id": 2, "name": HOSTILE}]))
    df = records.to_dataframe()
    assert df.shape == (2, 2)
    assert list(df.columns) == ["id", "name"]
    assert df.attrs["text_format"] == "python"
    rows = text_only(str([(1, "x"), (2, "y"), (3, None)]))
    df = rows.to_dataframe()
    assert df.shape == (3, 2)
    assert list(df.columns) == [0, 1]
    assert df[1].tolist()[:2] == ["x", "y"]
    text, html = bundle(rows)
    assert "(Python-literal text)" in text
    assert "<table" in html
    assert HOSTILE not in bundle(records)[1]


@pytest.mark.parametrize(
    "text",
    [
        "[__import__('os').system('echo pwned')]",  # a call: never evaluated
        "[1, 2] + [3]",  # an expression, not a literal
        "[{1, 2}]",  # a set: no JSON value
        "[b'bytes']",
        "[{1: 'x'}]",  # a key that is not a string
        "(" * 500 + ")" * 500,  # nested past the parser's limit
        "[note] not data",
    ],
)
def test_text_that_is_not_a_python_literal_of_data_stays_text(text: str) -> None:
    result = text_only(text)
    assert result.to_dataframe().attrs["rule"] == 6


def test_python_literal_text_over_the_size_cap_is_not_parsed() -> None:
    from mcp_notebook.display._shapes import MAX_LITERAL_CHARS

    row = "(1, 'x'), "
    small = "[" + row * ((MAX_LITERAL_CHARS - 2) // len(row)) + "]"
    assert text_only(small).to_dataframe().attrs["rule"] == 5
    big = "[" + row * (MAX_LITERAL_CHARS // len(row) + 1) + "]"
    assert text_only(big).to_dataframe().attrs["rule"] == 6


@pytest.mark.parametrize("mime", [None, "text/plain"])
def test_resource_text_holding_data_is_a_table(mime: str | None) -> None:
    cases = {
        json.dumps({"values": [["name", "qty"], ["a", 1]]}): ["name", "qty"],
        json.dumps({"columns": ["id"], "rows": [[1], [2]]}): ["id"],
        str([{"id": 1, "name": "x"}]): ["id", "name"],
        str([(1, "x")]): [0, 1],
    }
    for text, columns in cases.items():
        content = {"uri": "x://r", "text": text} | ({"mimeType": mime} if mime else {})
        contents = ResourceContents.from_dict({"contents": [content]})
        df = contents.to_dataframe()
        assert list(df.columns) == columns
        assert df.attrs["rule"] == "json"
        assert "<table" in contents._repr_mimebundle_()["text/html"]


def test_a_markdown_resource_is_drawn_as_markdown_and_escaped() -> None:
    contents = ResourceContents.from_dict(
        {"contents": [{"uri": "x://doc", "mimeType": "text/markdown", "text": MARKDOWN}]}
    )
    html = contents._repr_mimebundle_()["text/html"]
    assert "<h1>Report</h1>" in html
    assert HOSTILE not in html
    assert contents.to_dataframe().attrs["rule"] == "contents"


SHAPES = [
    wrapped(MARKDOWN),
    wrapped(json.dumps({"columns": ["a", "b"], "rows": [[1, 2]]})),
    structured({"values": [["name", "qty"], ["a", 1]]}),
    structured([[1, 2], [3, 4]]),
    text_only(json.dumps({"ok": True, "data": {"items": [{"a": {"b": 1}}, {"a": {"b": 2}}]}})),
    structured({"thought": "t", "branches": []}),
    text_only(str([(1, "x")])),
]


@pytest.mark.parametrize("result", SHAPES, ids=range(len(SHAPES)))
def test_the_picture_and_the_frame_agree(result: ToolResult) -> None:
    from mcp_notebook.display._shapes import preview, result_shape

    df = result.to_dataframe()
    shape = result_shape(result.structured_content, result.content)
    table = preview(shape, 20)
    if table is None:
        assert df.attrs["rule"] == 6
        return
    assert table.columns == [str(c) for c in df.columns]
    assert table.total_rows == len(df)


def test_map_tool_and_the_pictures_share_the_wrapper() -> None:
    from mcp_notebook.dask import _rows  # map_tool's row loop, shared with the cluster's (no dask import)
    from mcp_notebook.display._shapes import unwrapped

    assert _rows.unwrapped is unwrapped
    assert unwrapped({"result": "x"}) == "x"
    assert unwrapped({"result": 1, "n": 2}) == {"result": 1, "n": 2}
