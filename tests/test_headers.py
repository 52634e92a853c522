"""Table tests for the modern HTTP header rules (PROTOCOL.md §3.5): encoding, x-mcp-header, Mcp-Name."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from mcp_notebook.protocol._headers import (
    HeaderParam,
    InvalidToolHeaders,
    encode_header_value,
    header_params,
    mcp_name,
    request_headers,
)


def _b64(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("us-west1", "us-west1"),
        ("", ""),
        ("with space inside", "with space inside"),
        (" leading", _b64(" leading")),
        ("trailing ", _b64("trailing ")),
        ("tab\there", _b64("tab\there")),
        ("line\nbreak", _b64("line\nbreak")),
        ("héllo", _b64("héllo")),
        ("日本", _b64("日本")),
        ("=?base64?abc?=", _b64("=?base64?abc?=")),  # looks like the sentinel: must not be misread
        (42, "42"),
        (-7, "-7"),
        (3.0, "3"),
        (True, "true"),
        (False, "false"),
        (None, None),
        (1.5, None),
        ([1], None),
    ],
)
def test_encode_header_value(value: Any, expected: str | None) -> None:
    assert encode_header_value(value) == expected


@pytest.mark.parametrize(
    ("method", "params", "expected"),
    [
        ("tools/call", {"name": "run_sql"}, "run_sql"),
        ("prompts/get", {"name": "greet"}, "greet"),
        ("resources/read", {"uri": "file:///tmp/x"}, "file:///tmp/x"),
        ("resources/read", {"uri": "demo://ünï"}, _b64("demo://ünï")),
        ("tasks/get", {"taskId": "t-1"}, "t-1"),
        ("tools/list", {"cursor": "x"}, None),
        ("tools/call", None, None),
        ("tools/call", {"name": 5}, None),
    ],
)
def test_mcp_name(method: str, params: dict[str, Any] | None, expected: str | None) -> None:
    assert mcp_name(method, params) == expected


def _schema(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def test_header_params_found_through_nested_properties() -> None:
    schema = _schema(
        region={"type": "string", "x-mcp-header": "Region"},
        options={"type": "object", "properties": {"dry": {"type": "boolean", "x-mcp-header": "Dry-Run"}}},
        limit={"type": "integer", "x-mcp-header": "Limit"},
        other={"type": "string"},
    )
    assert header_params(schema) == (
        HeaderParam("Region", ("region",)),
        HeaderParam("Dry-Run", ("options", "dry")),
        HeaderParam("Limit", ("limit",)),
    )


@pytest.mark.parametrize(
    "schema",
    [
        _schema(a={"type": "number", "x-mcp-header": "A"}),
        _schema(a={"type": "object", "x-mcp-header": "A"}),
        _schema(a={"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}),
        _schema(a={"anyOf": [{"type": "string", "x-mcp-header": "A"}]}),
        _schema(a={"type": "string", "x-mcp-header": ""}),
        _schema(a={"type": "string", "x-mcp-header": "Bad Name"}),
        _schema(a={"type": "string", "x-mcp-header": "Bad\r\nName"}),
        _schema(a={"type": "string", "x-mcp-header": 5}),
        _schema(a={"type": "string", "x-mcp-header": "Dup"}, b={"type": "string", "x-mcp-header": "dup"}),
        {"type": "object", "$defs": {"x": {"type": "string", "x-mcp-header": "A"}}, "properties": {}},
    ],
    ids=[
        "number",
        "object",
        "under-items",
        "under-anyOf",
        "empty-name",
        "space",
        "crlf",
        "not-a-string",
        "duplicate-ignoring-case",
        "under-defs",
    ],
)
def test_header_params_rejects_invalid_declarations(schema: dict[str, Any]) -> None:
    with pytest.raises(InvalidToolHeaders):
        header_params(schema)


def test_header_params_of_no_schema() -> None:
    assert header_params(None) == ()
    assert header_params(_schema(a={"type": "string"})) == ()


def test_request_headers_mirror_arguments() -> None:
    declared = header_params(
        _schema(
            region={"type": "string", "x-mcp-header": "Region"},
            note={"type": "string", "x-mcp-header": "Note"},
            dry={"type": "boolean", "x-mcp-header": "Dry"},
            absent={"type": "string", "x-mcp-header": "Absent"},
        )
    )
    params = {"name": "run", "arguments": {"region": "eu", "note": "ça va", "dry": False, "absent": None}}
    assert request_headers("tools/call", params, "2026-07-28", declared) == {
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "run",
        "Mcp-Param-Region": "eu",
        "Mcp-Param-Note": _b64("ça va"),
        "Mcp-Param-Dry": "false",
    }


def test_request_headers_without_name() -> None:
    assert request_headers("server/discover", None, "2026-07-28") == {
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "server/discover",
    }
