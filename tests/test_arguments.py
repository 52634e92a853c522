"""The quick argument check never accepts what jsonschema (the judge) rejects."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_notebook import McpError
from mcp_notebook._arguments import ArgumentValidator, OutputValidator, _quick_check

SCHEMAS: list[dict[str, Any]] = [
    {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
    {"type": "object", "properties": {"x": {"type": "number", "minimum": 0, "exclusiveMaximum": 10}}},
    {
        "type": "object",
        "properties": {"s": {"type": "string", "minLength": 2, "maxLength": 4}, "b": {"type": "boolean"}},
        "additionalProperties": False,
    },
    {"type": "object", "properties": {"e": {"enum": ["a", "b"]}, "v": {"type": ["string", "null"]}}},
    {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"i": {"type": "integer"}},
    },
    {"type": "object", "properties": {"anything": {}, "flag": True}, "required": ["anything"]},
    # the demo's add_tool: a pattern used to send every first call through jsonschema's import
    {
        "type": "object",
        "properties": {"s": {"type": "string", "pattern": "^[A-Za-z0-9_.-]+$", "maxLength": 5}},
    },
    {"type": "object", "properties": {"s": {"pattern": "b"}}},  # a pattern ignores non-strings
]

values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-20, 20)
    | st.floats(-20, 20, allow_nan=False)
    | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=5,
)
arguments = st.dictionaries(
    st.sampled_from(["n", "x", "s", "b", "e", "v", "i", "anything", "flag", "zz"]), values
)


@pytest.mark.parametrize("schema", SCHEMAS, ids=lambda s: ",".join(s.get("properties", {})))
@settings(max_examples=300, deadline=None)
@given(arguments=arguments)
def test_quick_yes_agrees_with_jsonschema(schema: dict[str, Any], arguments: dict[str, Any]) -> None:
    quick = _quick_check(schema)
    assert quick is not None, "every schema in this table is of the simple kind"
    if quick(arguments):
        validator_class = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        assert not list(validator_class(schema).iter_errors(arguments))


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}, "$defs": {"x": {"type": "string"}}},
        {"type": "object", "properties": {"a": {"anyOf": [{"type": "string"}, {"type": "null"}]}}},
        {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}}}},
        {"type": "object", "properties": {"a": {"enum": [1, True]}}},
        {"type": "object", "properties": {"a": {"type": "string", "pattern": "(unclosed"}}},
        {"type": "array"},
    ],
)
def test_other_schemas_are_left_to_jsonschema(schema: dict[str, Any]) -> None:
    assert _quick_check(schema) is None


def test_integral_float_is_judged_by_jsonschema() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    ArgumentValidator().check("t", schema, {"n": 2.0})  # valid in 2020-12: no error
    with pytest.raises(McpError):
        ArgumentValidator().check("t", schema, {"n": 2.5})


OUTPUT_SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


@pytest.mark.parametrize(
    ("structured", "expected"),
    [
        ([1, 2], "structuredContent must be of type 'object'"),
        ({"n": "x" * 10_000}, "structuredContent.n must be of type 'integer'"),
        ({}, "'n' is a required property"),
        (None, "no structuredContent"),
    ],
)
def test_output_violations_name_the_path_never_the_value(structured: Any, expected: str) -> None:
    with pytest.raises(McpError) as caught:
        OutputValidator().check("t", OUTPUT_SCHEMA, structured)
    assert caught.value.kind == "protocol"
    assert expected in caught.value.message
    assert "xxxx" not in caught.value.message


def test_valid_output_and_a_broken_output_schema_pass() -> None:
    OutputValidator().check("t", OUTPUT_SCHEMA, {"n": 3})
    OutputValidator().check("t", {"type": "no-such-type"}, {"n": "anything"})
