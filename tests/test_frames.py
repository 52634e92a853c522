"""DataFrames from tool results (every mapping rule, dtypes from outputSchema) and from the server's lists."""

from __future__ import annotations

import base64
import datetime as dt
import random
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

pd = pytest.importorskip("pandas", reason="the DataFrame layer needs pandas (the notebook extra)")

from mcp_notebook import Client, Prompt, Resource, ResourceTemplate, Tool, ToolResult  # noqa: E402
from mcp_notebook.notebook._frames import (  # noqa: E402
    BLOCK_COLUMNS,
    HISTORY_COLUMNS,
    history_frame,
    prompts_frame,
    resource_templates_frame,
    resources_frame,
    result_to_dataframe,
    tools_frame,
)

HOSTILE = '<script>alert("pwned")</script>'


def structured(value: Any, *, content: list[dict[str, Any]] | None = None, error: bool = False) -> ToolResult:
    raw: dict[str, Any] = {"content": content or [], "structuredContent": value}
    if error:
        raw["isError"] = True
    return ToolResult.from_dict(raw)


def blocks(*content: dict[str, Any], error: bool = False) -> ToolResult:
    raw: dict[str, Any] = {"content": list(content)}
    if error:
        raw["isError"] = True
    return ToolResult.from_dict(raw)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def block_row(kind: str, **fields: Any) -> dict[str, Any]:
    """A rule-6 row: every column, None where the block has nothing."""
    return {"type": kind, **dict.fromkeys(BLOCK_COLUMNS[1:]), **fields}


def dtypes(df: Any) -> dict[str, str]:
    """Column -> dtype name; datetimes as ``datetime64`` or ``datetime64[UTC]`` (the unit varies by pandas
    version: ns before 3.0, us since)."""
    return {str(name): _dtype_name(dtype) for name, dtype in df.dtypes.items()}


def _dtype_name(dtype: Any) -> str:
    if pd.api.types.is_datetime64_any_dtype(dtype):
        tz = getattr(dtype, "tz", None)
        return f"datetime64[{tz}]" if tz else "datetime64"
    return str(dtype)


def rows(df: Any) -> list[dict[str, Any]]:
    """Rows as plain dicts, with pandas' missing values as None (for exact comparisons)."""
    return [{k: (None if _missing(v) else v) for k, v in row.items()} for row in df.to_dict("records")]


def _missing(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False  # a list or dict cell


# --------------------------------------------------------------------------- the mapping rules

# (id, result, rule, columns, rows)
CASES = [
    # rule 1: a list of records, columns in the first record's key order, then new keys as they appear
    (
        "1-records",
        structured([{"b": 1, "a": "x"}, {"a": "y", "c": True}]),
        1,
        ["b", "a", "c"],
        [{"b": 1, "a": "x", "c": None}, {"b": None, "a": "y", "c": True}],
    ),
    # rule 1: nested objects flattened with ".", in place (json_normalize would move them to the end)
    (
        "1-nested",
        structured([{"id": 1, "loc": {"lat": 1.5, "geo": {"alt": 9}}, "tag": "t"}]),
        1,
        ["id", "loc.lat", "loc.geo.alt", "tag"],
        [{"id": 1, "loc.lat": 1.5, "loc.geo.alt": 9, "tag": "t"}],
    ),
    # rule 1: a list of scalars is one column, "value"
    ("1-scalars", structured([3, 1, 2]), 1, ["value"], [{"value": 3}, {"value": 1}, {"value": 2}]),
    # rule 1: a list that is not all objects keeps its items as they are, in "value"
    (
        "1-mixed",
        structured([1, {"a": 1}, [2]]),
        1,
        ["value"],
        [{"value": 1}, {"value": {"a": 1}}, {"value": [2]}],
    ),
    ("1-empty", structured([]), 1, [], []),
    # rule 2: a dict of equal-length lists is columns
    (
        "2-columns",
        structured({"x": [1, 2], "y": ["a", "b"]}),
        2,
        ["x", "y"],
        [{"x": 1, "y": "a"}, {"x": 2, "y": "b"}],
    ),
    # rule 2: a single list of scalars is one column named by its key (not rule 3: no records)
    ("2-one-column", structured({"result": [1, 2]}), 2, ["result"], [{"result": 1}, {"result": 2}]),
    # rule 2: two lists of objects are two columns of objects, flattened
    (
        "2-object-columns",
        structured({"a": [{"x": 1}], "b": [{"y": 2}]}),
        2,
        ["a.x", "b.y"],
        [{"a.x": 1, "b.y": 2}],
    ),
    ("2-empty-columns", structured({"a": [], "b": []}), 2, ["a", "b"], []),
    # rule 3: the SDK's wrapping of a list return
    (
        "3-sdk-wrapper",
        structured({"result": [{"a": 1}, {"a": 2}]}),
        3,
        ["a"],
        [{"a": 1}, {"a": 2}],
    ),
    # rule 3: a paginated envelope (the other keys go to df.attrs["envelope"], tested below)
    (
        "3-envelope",
        structured({"total": 2, "items": [{"a": 1}, {"a": 2}], "next": None}),
        3,
        ["a"],
        [{"a": 1}, {"a": 2}],
    ),
    ("3-empty-wrapper", structured({"result": []}), 3, [], []),
    # rule 4: any other dict is one row (flattened); lists in it stay cells
    (
        "4-object",
        structured({"name": "n", "size": {"w": 2, "h": 3}, "tags": ["a", "b"]}),
        4,
        ["name", "size.w", "size.h", "tags"],
        [{"name": "n", "size.w": 2, "size.h": 3, "tags": ["a", "b"]}],
    ),
    # rule 4, not rule 2: lists of different lengths are not columns
    (
        "4-unequal-lists",
        structured({"a": [1, 2], "b": [1]}),
        4,
        ["a", "b"],
        [{"a": [1, 2], "b": [1]}],
    ),
    # rule 4, not rule 3: two lists of records
    (
        "4-two-record-lists",
        structured({"a": [{"x": 1}], "b": [{"y": 1}, {"y": 2}]}),
        4,
        ["a", "b"],
        [{"a": [{"x": 1}], "b": [{"y": 1}, {"y": 2}]}],
    ),
    # rule 4: a bare scalar (allowed since 2026-07-28) is one row
    ("4-scalar", structured(42), 4, ["value"], [{"value": 42}]),
    ("4-empty-object", structured({}), 4, [], [{}]),
    # rules 1-4 win over rule 5: structuredContent beats the text, even when the text is JSON
    (
        "structured-beats-text",
        structured([{"a": 1}], content=[text('[{"b": 2}]')]),
        1,
        ["a"],
        [{"a": 1}],
    ),
    # rule 5: one text block holding a JSON array of records (then rule 1)
    (
        "5-json-records",
        blocks(text('[{"a": 1, "b": {"c": 2}}, {"a": 3}]')),
        5,
        ["a", "b.c"],
        [{"a": 1, "b.c": 2}, {"a": 3, "b.c": None}],
    ),
    # rule 5: one text block holding JSON columns (then rule 2)
    ("5-json-columns", blocks(text('{"x": [1, 2]}')), 5, ["x"], [{"x": 1}, {"x": 2}]),
    # rule 5: several text blocks, each a JSON object (what the SDK sends for a list return): one row each
    (
        "5-json-per-block",
        blocks(text('{"a": 1}'), text('{"a": 2, "b": "x"}')),
        5,
        ["a", "b"],
        [{"a": 1, "b": None}, {"a": 2, "b": "x"}],
    ),
    # rule 6: plain text
    (
        "6-plain-text",
        blocks(text("hello")),
        6,
        BLOCK_COLUMNS,
        [block_row("text", text="hello")],
    ),
    # rule 5: one text that is a number (a calculator's "42") is fastmcp's {"result": 42} (issue #37)
    ("5-scalar-text", blocks(text("42")), 5, ["result"], [{"result": 42}]),
    # rule 5: several blocks, each read on its own: the JSON one is the data, the other prose (issue #37)
    ("5-json-among-prose", blocks(text('{"a": 1}'), text("not json")), 5, ["a"], [{"a": 1}]),
    # rule 6: several blocks of prose
    (
        "6-prose-blocks",
        blocks(text("hello"), text("world")),
        6,
        BLOCK_COLUMNS,
        [block_row("text", text="hello"), block_row("text", text="world")],
    ),
    # rule 6, not 5: a non-text block next to JSON text (rule 5 would drop the image)
    (
        "6-json-and-image",
        blocks(text('[{"a": 1}]'), {"type": "image", "data": "AAAA", "mimeType": "image/png"}),
        6,
        BLOCK_COLUMNS,
        [
            block_row("text", text='[{"a": 1}]'),
            block_row("image", mime_type="image/png", data_size=3),
        ],
    ),
    ("6-no-content", blocks(), 6, BLOCK_COLUMNS, []),
]


@pytest.mark.parametrize(
    ("result", "rule", "columns", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_mapping_rules(
    result: ToolResult, rule: int, columns: list[str], expected: list[dict[str, Any]]
) -> None:
    df = result_to_dataframe(result)
    assert df.attrs["rule"] == rule
    assert df.attrs["is_error"] is False
    assert list(df.columns) == columns
    assert rows(df) == expected


def test_rule_3_keeps_the_envelope_in_attrs() -> None:
    df = result_to_dataframe(structured({"total": 2, "items": [{"a": 1}, {"a": 2}], "next": "c2"}))
    assert df.attrs["envelope"] == {"total": 2, "next": "c2"}
    assert "envelope" not in result_to_dataframe(structured({"result": [{"a": 1}]})).attrs


def test_rule_5_says_which_rule_shaped_the_text() -> None:
    assert result_to_dataframe(blocks(text('[{"a": 1}]'))).attrs["text_rule"] == 1
    assert result_to_dataframe(blocks(text('{"x": [1]}'))).attrs["text_rule"] == 2
    assert result_to_dataframe(blocks(text('{"result": [{"a": 1}]}'))).attrs["text_rule"] == 3
    assert result_to_dataframe(blocks(text('{"a": 1}'))).attrs["text_rule"] == 4


def test_nesting_found_anywhere_not_just_in_a_sample() -> None:
    records: list[dict[str, Any]] = [{"id": i, "meta": None} for i in range(5000)]
    records[4321] = {"id": 4321, "meta": {"k": "v"}}
    df = result_to_dataframe(structured(records))
    assert list(df.columns) == ["id", "meta", "meta.k"]
    assert df.loc[4321, "meta.k"] == "v"
    assert df["meta.k"].isna().sum() == 4999


def test_flatten_false_keeps_objects_in_cells() -> None:
    df = result_to_dataframe(structured([{"id": 1, "loc": {"lat": 1.5}}]), flatten=False)
    assert list(df.columns) == ["id", "loc"]
    assert df.loc[0, "loc"] == {"lat": 1.5}


def test_empty_objects_are_kept_as_values() -> None:
    df = result_to_dataframe(structured([{"a": 1, "opts": {}}, {"a": 2, "opts": {"x": 1}}]))
    assert list(df.columns) == ["a", "opts", "opts.x"]
    assert df.loc[0, "opts"] == {}


def test_content_blocks_never_hold_base64_data() -> None:
    image = base64.b64encode(b"\x89PNG" + bytes(range(256)) * 40).decode()
    audio = base64.b64encode(b"RIFF" * 1001).decode()
    blob = base64.b64encode(b"%PDF-1.7 " * 77).decode()
    result = blocks(
        text("see attached"),
        {"type": "image", "data": image, "mimeType": "image/png"},
        {"type": "audio", "data": audio, "mimeType": "audio/wav"},
        {
            "type": "resource",
            "resource": {"uri": "file:///r.pdf", "mimeType": "application/pdf", "blob": blob},
        },
        {
            "type": "resource",
            "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "inline"},
        },
        {"type": "resource_link", "uri": "file:///big.bin", "name": "big.bin", "mimeType": "application/x"},
    )
    df = result_to_dataframe(result)
    assert df.attrs["rule"] == 6
    assert list(df.columns) == BLOCK_COLUMNS
    assert list(df["type"]) == ["text", "image", "audio", "resource", "resource", "resource_link"]
    assert rows(df)[1:] == [
        block_row("image", mime_type="image/png", data_size=10244),
        block_row("audio", mime_type="audio/wav", data_size=4004),
        block_row("resource", mime_type="application/pdf", uri="file:///r.pdf", data_size=693),
        block_row("resource", text="inline", mime_type="text/plain", uri="file:///a.txt"),
        block_row("resource_link", mime_type="application/x", uri="file:///big.bin", name="big.bin"),
    ]
    assert dtypes(df) == {**dict.fromkeys(BLOCK_COLUMNS[:-1], "string"), "data_size": "Int64"}
    everything = df.to_csv() + df.to_html() + repr(df)
    for data in (image, audio, blob):
        assert data not in everything
        assert data[:40] not in everything


@pytest.mark.parametrize(
    "result",
    [
        blocks(text("Error: the database is locked"), error=True),
        structured({"error": "locked", "retry_after": 3}, error=True),
        blocks(text('{"error": "locked"}'), error=True),
    ],
    ids=["text", "structured", "json-text"],
)
def test_error_results_still_convert_and_say_so(result: ToolResult) -> None:
    df = result_to_dataframe(result)
    assert df.attrs["is_error"] is True
    assert len(df) == 1


def test_a_raw_call_tool_result_dict_is_accepted() -> None:
    df = result_to_dataframe({"content": [], "structuredContent": {"result": [{"a": 1}]}})
    assert rows(df) == [{"a": 1}]


# --------------------------------------------------------------------------- dtypes from outputSchema

SDK_SCHEMA = {
    "type": "object",
    "properties": {"result": {"type": "array", "items": {"$ref": "#/$defs/Row"}}},
    "required": ["result"],
    "$defs": {
        "Row": {
            "type": "object",
            "properties": {
                "id": {"type": "integer"},
                "score": {"type": "number"},
                "ok": {"type": "boolean"},
                "label": {"type": "string"},
                "when": {"type": "string", "format": "date-time"},
                "day": {"type": "string", "format": "date"},
                "blob": {},
            },
        }
    },
}
ROWS = [
    {
        "id": 1,
        "score": 2,
        "ok": True,
        "label": "a",
        "when": "2026-07-28T10:00:00Z",
        "day": "2026-07-28",
        "blob": 1,
    },
    {
        "id": 2,
        "score": 2.5,
        "ok": False,
        "label": "b",
        "when": "2026-07-29T12:30:00Z",
        "day": "2026-07-29",
        "blob": "x",
    },
]
ROW_DTYPES = {
    "id": "Int64",
    "score": "Float64",
    "ok": "boolean",
    "label": "string",
    "when": "datetime64[UTC]",
    "day": "datetime64",
    "blob": "object",  # no type stated: what pandas inferred
}


def test_dtypes_through_ref_and_defs_in_the_sdk_wrapper() -> None:
    df = result_to_dataframe(structured({"result": ROWS}), output_schema=SDK_SCHEMA)
    assert dtypes(df) == ROW_DTYPES
    assert df.loc[1, "when"] == pd.Timestamp("2026-07-29T12:30:00Z")
    assert df.loc[0, "day"] == pd.Timestamp("2026-07-28")
    assert df.loc[0, "score"] == 2.0


def test_dtypes_for_a_top_level_array_schema() -> None:
    schema = {"type": "array", "items": SDK_SCHEMA["$defs"]["Row"]}
    df = result_to_dataframe(structured(ROWS), output_schema=schema)
    assert dtypes(df) == ROW_DTYPES


def test_dtypes_follow_the_text_when_there_is_no_structured_content() -> None:
    """The SDK's text blocks (one JSON object per row) meet the wrapper schema through its one array."""
    import json

    df = result_to_dataframe(blocks(*(text(json.dumps(r)) for r in ROWS)), output_schema=SDK_SCHEMA)
    assert df.attrs["rule"] == 5
    assert dtypes(df) == ROW_DTYPES


def test_nullable_integers_stay_exact() -> None:
    big = 2**60 + 1  # not representable as float64
    schema = {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "id": {"type": ["integer", "null"]},
                "n": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                "x": {"oneOf": [{"type": "null"}, {"$ref": "#/$defs/Num"}]},
            },
        },
        "$defs": {"Num": {"type": "number"}},
    }
    data = [{"id": big, "n": 1, "x": None}, {"id": None, "n": None, "x": 1}, {"id": 3, "n": 2, "x": 1.5}]
    df = result_to_dataframe(structured(data), output_schema=schema)
    assert dtypes(df) == {"id": "Int64", "n": "Int64", "x": "Float64"}
    assert df.loc[0, "id"] == big
    assert df["id"].isna().tolist() == [False, True, False]
    assert rows(df) == [
        {"id": big, "n": 1, "x": None},
        {"id": None, "n": None, "x": 1.0},
        {"id": 3, "n": 2, "x": 1.5},
    ]


def test_date_times_with_mixed_offsets_and_bad_values() -> None:
    schema = {
        "type": "object",
        "properties": {
            "rows": {
                "type": "array",
                "items": {"type": "object", "properties": {"t": {"type": "string", "format": "date-time"}}},
            }
        },
    }
    data = {
        "rows": [
            {"t": "2026-01-01T10:00:00+02:00"},
            {"t": "2026-01-01T08:00:00Z"},
            {"t": "soon"},
            {"t": None},
        ]
    }
    df = result_to_dataframe(structured(data), output_schema=schema)
    assert dtypes(df) == {"t": "datetime64[UTC]"}
    assert df.loc[0, "t"] == df.loc[1, "t"] == pd.Timestamp("2026-01-01T08:00:00Z")
    assert df["t"].isna().tolist() == [False, False, True, True]


def test_dtypes_for_columns_one_row_and_flattened_nested_properties() -> None:
    columns_schema = {
        "type": "object",
        "properties": {"x": {"type": "array", "items": {"type": "number"}}, "y": {"type": "array"}},
    }
    df = result_to_dataframe(structured({"x": [1, 2], "y": [1, 2]}), output_schema=columns_schema)
    assert dtypes(df) == {"x": "Float64", "y": "int64"}

    object_schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "size": {"$ref": "#/$defs/Size"},
        },
        "$defs": {
            "Size": {"type": "object", "properties": {"w": {"type": "number"}, "h": {"type": "integer"}}}
        },
    }
    df = result_to_dataframe(structured({"name": "n", "size": {"w": 2, "h": 3}}), output_schema=object_schema)
    assert dtypes(df) == {"name": "string", "size.w": "Float64", "size.h": "Int64"}

    df = result_to_dataframe(
        structured([1, None, 3]), output_schema={"type": "array", "items": {"type": "integer"}}
    )
    assert dtypes(df) == {"value": "Int64"}


def test_an_empty_list_gets_the_columns_the_schema_names() -> None:
    df = result_to_dataframe(structured({"result": []}), output_schema=SDK_SCHEMA)
    assert df.shape == (0, 7)
    assert list(df.columns) == list(ROW_DTYPES)
    assert dtypes(df)["id"] == "Int64"
    assert dtypes(df)["when"] == "datetime64"  # no values, so no offset to go by


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "array", "items": {"type": "object", "properties": {"v": {"type": ["integer", "string"]}}}},
        {
            "type": "array",
            "items": {"type": "object", "properties": {"v": {"$ref": "https://example.com/s"}}},
        },
        {"type": "array", "items": {"type": "object", "properties": {"v": {"$ref": "other.json#/$defs/V"}}}},
        {"type": "array", "items": {"type": "object", "properties": {"v": {"$ref": "#/$defs/Missing"}}}},
        {
            "type": "array",
            "items": {"$ref": "#/$defs/A"},
            "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}},
        },
        {
            "type": "array",
            "items": {"type": "object", "properties": {"v": {"type": "integer"}}},
        },  # data is not ints
        {"type": "array", "items": {"type": "object", "properties": {"v": {"type": "boolean"}}}},
    ],
    ids=["two-types", "url-ref", "other-document", "missing-def", "ref-cycle", "wrong-type", "not-bool"],
)
def test_unknown_or_unfit_types_keep_the_inferred_dtype(schema: dict[str, Any], monkeypatch: Any) -> None:
    def no_network(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a $ref must never be fetched")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    df = result_to_dataframe(structured([{"v": "one"}, {"v": 2}]), output_schema=schema)
    assert dtypes(df) == {"v": "object"}
    assert list(df["v"]) == ["one", 2]


def test_a_recursive_schema_flattens_as_deep_as_the_data() -> None:
    schema = {
        "$ref": "#/$defs/Node",
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"v": {"type": "integer"}, "child": {"$ref": "#/$defs/Node"}},
            }
        },
    }
    data = {"v": 1, "child": {"v": 2, "child": {"v": 3}}}
    df = result_to_dataframe(structured(data), output_schema=schema)
    assert list(df.columns) == ["v", "child.v", "child.child.v"]
    assert set(dtypes(df).values()) == {"Int64"}


def test_100k_row_structured_result() -> None:
    """100,000 records of 5 fields, wrapped the SDK's way, with an outputSchema using $ref."""
    rng = random.Random(7)
    regions = ["north", "south", "east", "west"]
    records = [
        {
            "id": i,
            "region": regions[i % 4],
            "amount": round(rng.uniform(0, 1000), 2),
            "paid": i % 3 == 0,
            "at": f"2026-{i % 12 + 1:02d}-{i % 28 + 1:02d}T{i % 24:02d}:00:00Z",
        }
        for i in range(100_000)
    ]
    schema = {
        "type": "object",
        "properties": {"result": {"type": "array", "items": {"$ref": "#/$defs/Sale"}}},
        "$defs": {
            "Sale": {
                "type": "object",
                "properties": {
                    "id": {"type": "integer"},
                    "region": {"type": "string"},
                    "amount": {"type": "number"},
                    "paid": {"type": "boolean"},
                    "at": {"type": "string", "format": "date-time"},
                },
            }
        },
    }
    df = result_to_dataframe(structured({"result": records}), output_schema=schema)
    assert df.shape == (100_000, 5)
    assert df.attrs["rule"] == 3
    assert dtypes(df) == {
        "id": "Int64",
        "region": "string",
        "amount": "Float64",
        "paid": "boolean",
        "at": "datetime64[UTC]",
    }
    for i in (0, 1, 54_321, 99_999):
        row = df.iloc[i]
        assert row["id"] == i
        assert row["region"] == records[i]["region"]
        assert row["amount"] == records[i]["amount"]
        assert row["paid"] == records[i]["paid"]
        assert row["at"] == pd.Timestamp(records[i]["at"])
    assert int(df["paid"].sum()) == 33_334
    assert not df.isna().any().any()


# --------------------------------------------------------------------------- server strings stay data


def test_hostile_strings_stay_data_and_to_html_escapes_them() -> None:
    result = structured([{"name": HOSTILE, HOSTILE: 1}], content=[text(HOSTILE)])
    df = result_to_dataframe(result)
    assert df.loc[0, "name"] == HOSTILE  # kept exactly, not escaped or stripped
    assert HOSTILE in df.columns
    tools = tools_frame([Tool.from_dict({"name": "t", "description": HOSTILE, "inputSchema": {}})])
    assert tools.loc[0, "description"] == HOSTILE
    blocks_df = result_to_dataframe(blocks(text(HOSTILE)))
    for frame in (df, tools, blocks_df):
        # pandas escapes cells and headers by default (to_html(escape=True)), in the notebook repr too
        for html in (frame.to_html(), frame._repr_html_()):
            assert "<script>" not in html
            assert "&lt;script&gt;" in html


# --------------------------------------------------------------------------- the server's lists


def test_tools_frame() -> None:
    tools = [
        Tool.from_dict(
            {
                "name": "search",
                "title": "Search",
                "description": "Find things",
                "inputSchema": {
                    "type": "object",
                    "properties": {"q": {"type": "string"}, "limit": {"type": "integer"}},
                    "required": ["q"],
                },
                "annotations": {"readOnlyHint": True, "openWorldHint": False},
            }
        ),
        {
            "name": "bare",
            "inputSchema": {"type": "object"},
            "annotations": {"title": "Bare tool"},
            "_meta": {"ui": {"resourceUri": "ui://bare/view.html"}},
        },
    ]
    df = tools_frame(tools)
    assert list(df.columns) == [
        "name",
        "title",
        "description",
        "parameters",
        "required",
        "read_only",
        "destructive",
        "idempotent",
        "open_world",
        "ui",
    ]
    assert rows(df) == [
        {
            "name": "search",
            "title": "Search",
            "description": "Find things",
            "parameters": ["q", "limit"],
            "required": ["q"],
            "read_only": True,
            "destructive": None,
            "idempotent": None,
            "open_world": False,
            "ui": None,
        },
        {
            "name": "bare",
            "title": "Bare tool",
            "description": None,
            "parameters": [],
            "required": [],
            "read_only": None,
            "destructive": None,
            "idempotent": None,
            "open_world": None,
            "ui": "ui://bare/view.html",
        },
    ]
    assert dtypes(df)["read_only"] == "boolean"
    assert dtypes(df)["name"] == "string"
    assert dtypes(df)["ui"] == "string"
    assert tools_frame([]).shape == (0, 10)


def test_resources_templates_and_prompts_frames() -> None:
    resources = resources_frame(
        [
            Resource.from_dict({"uri": "file:///a.csv", "name": "a.csv", "mimeType": "text/csv", "size": 10}),
            {"uri": "demo://x", "name": "x", "title": "X"},
        ]
    )
    assert list(resources.columns) == ["uri", "name", "title", "description", "mime_type", "size"]
    assert rows(resources) == [
        {
            "uri": "file:///a.csv",
            "name": "a.csv",
            "title": None,
            "description": None,
            "mime_type": "text/csv",
            "size": 10,
        },
        {"uri": "demo://x", "name": "x", "title": "X", "description": None, "mime_type": None, "size": None},
    ]
    assert dtypes(resources)["size"] == "Int64"

    templates = resource_templates_frame(
        [
            ResourceTemplate.from_dict(
                {"uriTemplate": "repo://{owner}/{+path}{?ref,depth*}{#frag:3}", "name": "r"}
            )
        ]
    )
    assert list(templates.columns) == [
        "uri_template",
        "name",
        "title",
        "description",
        "mime_type",
        "variables",
    ]
    assert templates.loc[0, "variables"] == ["owner", "path", "ref", "depth", "frag"]

    prompts = prompts_frame(
        [
            Prompt.from_dict(
                {
                    "name": "review",
                    "description": "Review code",
                    "arguments": [{"name": "code", "required": True}, {"name": "style"}],
                }
            )
        ]
    )
    assert rows(prompts) == [
        {
            "name": "review",
            "title": None,
            "description": "Review code",
            "arguments": ["code", "style"],
            "required": ["code"],
        }
    ]
    assert resources_frame([]).shape == (0, 6)
    assert prompts_frame([]).shape == (0, 5)


@pytest.fixture
def paris(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The process's local time zone is Europe/Paris for the test (restored after)."""
    if not hasattr(time, "tzset"):
        pytest.skip("time.tzset() is POSIX only")
    monkeypatch.setenv("TZ", "Europe/Paris")
    time.tzset()
    try:
        yield
    finally:
        monkeypatch.undo()
        time.tzset()


def test_history_frame(paris: None) -> None:
    history = [
        {
            "time": 1_785_000_000.25,  # 2026-07-25 17:20:00.25 UTC: summer time in Paris
            "method": "tools/call",
            "name": "add",
            "arguments": {"a": 1},
            "duration": 0.5,
            "outcome": "ok",
            "result_size": 120,
            "request_id": 7,
        },
        {
            "time": 1_767_268_800.0,  # 2026-01-01 12:00 UTC: winter time
            "method": "resources/read",
            "name": "demo://x",
            "arguments": None,
            "duration": dt.timedelta(milliseconds=1500),
            "outcome": "timeout",
            "result_size": None,
            "server": "demo",
        },
    ]
    df = history_frame(history)
    assert list(df.columns) == [*HISTORY_COLUMNS, "request_id", "server"]
    assert isinstance(df["time"].dtype, pd.DatetimeTZDtype)
    first, second = df.loc[0, "time"], df.loc[1, "time"]
    assert first == pd.Timestamp(1_785_000_000.25, unit="s", tz="UTC")  # the same instant...
    assert (first.hour, first.minute, first.utcoffset()) == (19, 20, dt.timedelta(hours=2))  # ...on the wall
    assert (second.hour, second.utcoffset()) == (13, dt.timedelta(hours=1))  # daylight saving followed
    assert dtypes(df)["duration"] == "Float64"  # seconds, never a Timedelta (issue #29)
    assert list(df["duration"]) == [0.5, 1.5]
    assert df.loc[1, "arguments"] is pd.NA
    assert dtypes(df)["result_size"] == "Int64"
    assert dtypes(df)["outcome"] == "string"
    assert df.loc[0, "arguments"] == {"a": 1}
    assert rows(df)[1]["server"] == "demo"
    assert history[1]["duration"] == dt.timedelta(milliseconds=1500)  # the entries are not changed
    assert history_frame([{"time": 1.0, "duration": None}]).loc[0, "duration"] is pd.NA

    iso = history_frame([{"time": "2026-07-28T10:00:00Z", "method": "tools/call"}])
    assert iso.loc[0, "time"] == pd.Timestamp("2026-07-28T10:00:00Z")
    assert iso.loc[0, "time"].hour == 12
    aware = dt.datetime(2026, 7, 28, 10, tzinfo=dt.UTC)
    assert history_frame([{"time": aware}]).loc[0, "time"] == pd.Timestamp(aware)
    naive = history_frame([{"time": dt.datetime(2026, 7, 28, 10)}]).loc[0, "time"]  # read as local time
    assert (naive.hour, naive.utcoffset()) == (10, dt.timedelta(hours=2))
    empty = history_frame([])
    assert list(empty.columns) == HISTORY_COLUMNS
    assert len(empty) == 0
    assert isinstance(empty["time"].dtype, pd.DatetimeTZDtype)
    assert dtypes(empty)["duration"] == "Float64"


# --------------------------------------------------------------------------- the real demo server


@pytest.mark.anyio
async def test_demo_sales_records_frame() -> None:
    from mcp_notebook.demo import build_server

    async with Client(build_server()) as client:
        tools = {tool.name: tool for tool in await client.list_tools()}
        schema = tools["sales_records"].output_schema
        result = await client.call_tool("sales_records", {"region": "north", "limit": 25})
        frame_of_tools = tools_frame(tools.values())
        frame_of_prompts = prompts_frame(await client.list_prompts())
        frame_of_templates = resource_templates_frame(await client.list_resource_templates())

    assert schema is not None
    assert "$defs" in schema
    df = result_to_dataframe(result, output_schema=schema)
    assert df.attrs["rule"] == 3
    assert list(df.columns) == ["date", "region", "product", "units", "price"]
    assert dtypes(df) == {
        "date": "string",  # the schema says string with no format: kept as text
        "region": "string",
        "product": "string",
        "units": "Int64",
        "price": "Float64",
    }
    assert len(df) == 25
    assert set(df["region"]) == {"north"}
    records = result.structured_content["result"]
    assert rows(df) == records
    # the same through the ToolResult method
    assert result.to_dataframe(output_schema=schema).equals(df)

    # without structuredContent the SDK's one-JSON-object-per-block text gives the same table (rule 5)
    text_only = ToolResult.from_dict({k: v for k, v in result.raw.items() if k != "structuredContent"})
    from_text = result_to_dataframe(text_only, output_schema=schema)
    assert from_text.attrs["rule"] == 5
    assert from_text.equals(df)

    sales = frame_of_tools.set_index("name").loc["sales_records"]
    assert sales["parameters"] == ["region", "limit"]
    assert bool(sales["read_only"]) is True
    assert pd.isna(sales["destructive"])
    assert list(frame_of_prompts["name"]) == ["analyze_region", "greeting"]
    assert frame_of_templates.loc[0, "variables"] == ["name"]
