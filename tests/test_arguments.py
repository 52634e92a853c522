"""The argument checker gives jsonschema's verdict (jsonschema is the judge), on arguments drawn from
each schema: valid ones take the quick yes, near-misses (one rule broken) are refused."""

from __future__ import annotations

import warnings
from typing import Any

import jsonschema
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from mcp_notebook import McpError
from mcp_notebook.client._arguments import ArgumentValidator, OutputValidator, _quick_check
from mcp_notebook.protocol._errors import INVALID_PARAMS
from mcp_notebook.protocol._json_schema import schema_validator, validation_errors

from .schema_strategies import near_miss, valid_arguments

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

#: Schemas outside the quick check's subset, judged by jsonschema alone: the checker's verdict must
#: still be jsonschema's (arrays of typed items, a nested required object).
JSONSCHEMA_ONLY: list[dict[str, Any]] = [
    {
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "string", "maxLength": 3}}},
        "required": ["tags"],
    },
    {
        "type": "object",
        "properties": {
            "ns": {"type": "array", "items": {"type": "integer", "minimum": 0}},
            "b": {"type": "boolean"},
        },
        "additionalProperties": False,
    },
]

#: Unions the quick check takes (pydantic's ``X | None``, formats in them; issue #37): it says yes
#: only where jsonschema does, and leaves a branch it cannot judge to jsonschema.
UNIONS: list[dict[str, Any]] = [
    {
        "type": "object",
        "properties": {
            "v": {
                "anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}],
                "default": None,
                "title": "V",
            },
            "n": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "string", "maxLength": 3}]},
            "x": {"anyOf": [{"type": "boolean"}, {"type": "array", "items": {"type": "string"}}]},
        },
        "required": ["n"],
    },
]


def _ids(schema: dict[str, Any]) -> str:
    return ",".join(schema.get("properties", {}))


def _judge(schema: dict[str, Any], arguments: dict[str, Any]) -> list[Any]:
    """jsonschema's verdict, by the package's one rule (patterns by RE2: ECMA's ``$`` is the very
    end, where Python's ``re`` also accepts a final newline): the list of violations (empty: valid)."""
    return validation_errors(schema_validator(schema), arguments)


_CHECKER = ArgumentValidator()  # one, as a session has: it caches a compiled validator per tool


def _refusal(schema: dict[str, Any], arguments: dict[str, Any]) -> McpError | None:
    """The checker's verdict: the error it raises, or None when it lets the call through."""
    try:
        _CHECKER.check(_ids(schema), schema, arguments)
    except McpError as exc:
        return exc
    return None


@pytest.mark.parametrize("schema", SCHEMAS, ids=_ids)
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_valid_arguments_from_the_schema_take_the_quick_yes(
    schema: dict[str, Any], data: st.DataObject
) -> None:
    """Every example asserts: arguments drawn from the schema are valid for jsonschema, the quick
    check says yes to them (its accepting branch runs on every example, not by luck), and the
    checker lets them through. A name the schema does not declare (allowed, as extra keys) is the
    exception: the quick check leaves it to the slow path, which names it in a warning."""
    arguments = data.draw(valid_arguments(schema), label="arguments")
    assert _judge(schema, arguments) == [], "the strategy drew an invalid instance"
    quick = _quick_check(schema)
    assert quick is not None, "every schema in this table is of the simple kind"
    undeclared = set(arguments) - set(schema.get("properties", {}))
    assert quick(arguments) is not undeclared
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert _refusal(schema, arguments) is None
    assert bool(seen) is bool(undeclared), [str(w.message) for w in seen]


@pytest.mark.parametrize("schema", SCHEMAS + JSONSCHEMA_ONLY, ids=_ids)
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_near_misses_from_the_schema_are_refused(schema: dict[str, Any], data: st.DataObject) -> None:
    """A valid instance with one rule broken: jsonschema refuses it, the quick check never says yes
    to it, and the checker refuses it as an ``invalid`` call naming the broken rule's property."""
    rule, where, arguments = data.draw(near_miss(schema), label="near miss")
    event(rule.split(":")[-1].strip())
    assert _judge(schema, arguments), f"the strategy's near miss ({rule}) is valid"
    quick = _quick_check(schema)
    if quick is not None:
        assert quick(arguments) is False, f"the quick check accepted a near miss ({rule})"
    refused = _refusal(schema, arguments)
    assert refused is not None, f"the checker let a near miss through ({rule})"
    assert refused.kind == "invalid"
    assert refused.code == INVALID_PARAMS
    if rule == "additionalProperties":  # named as the core names unknown arguments, with the known ones
        assert f"has no argument '{where.split(chr(39))[1]}'" in refused.message
    else:
        assert where in refused.message


@pytest.mark.parametrize("value", [True, False])
@pytest.mark.parametrize("kind", ["integer", "number"])
def test_a_boolean_is_neither_an_integer_nor_a_number(kind: str, value: bool) -> None:
    """Python's bool is an int; JSON's is not. The quick check must not say yes (the property test
    above finds this only when Hypothesis happens to draw a boolean for a number)."""
    schema = {"type": "object", "properties": {"n": {"type": kind}}, "required": ["n"]}
    quick = _quick_check(schema)
    assert quick is not None
    assert quick({"n": value}) is False
    refused = _refusal(schema, {"n": value})
    assert refused is not None, f"{value} was accepted as an {kind}"
    assert refused.kind == "invalid"
    assert "arguments.n" in refused.message


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


@pytest.mark.parametrize("schema", SCHEMAS + JSONSCHEMA_ONLY + UNIONS, ids=_ids)
@pytest.mark.filterwarnings("ignore:tool .* has no argument")  # names outside the schema: warned, as meant
@settings(max_examples=100, deadline=None)
@given(arguments=arguments)
def test_any_arguments_get_jsonschemas_verdict(schema: dict[str, Any], arguments: dict[str, Any]) -> None:
    """Arbitrary dicts (mostly invalid): every example asserts that the quick check says yes only to
    what jsonschema accepts and that the checker refuses exactly what jsonschema refuses."""
    valid = not _judge(schema, arguments)
    quick = _quick_check(schema)
    said_yes = quick is not None and quick(arguments)
    event("jsonschema: valid" if valid else "jsonschema: invalid")
    event(f"quick check: {'yes' if said_yes else 'no'}")
    assert valid or not said_yes, "the quick check said yes to arguments jsonschema refuses"
    refused = _refusal(schema, arguments)
    assert (refused is None) == valid
    if refused is not None:
        assert refused.kind == "invalid"


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}, "$defs": {"x": {"type": "string"}}},
        {"type": "object", "properties": {"a": {"oneOf": [{"type": "string"}, {"type": "null"}]}}},
        {"type": "object", "properties": {"a": {"anyOf": [{"$ref": "#/$defs/x"}]}}, "$defs": {"x": {}}},
        {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}}}},
        {"type": "object", "properties": {"a": {"enum": [1, True]}}},
        {"type": "object", "properties": {"a": {"type": "string", "pattern": "(unclosed"}}},
        {"type": "array"},
    ],
)
def test_other_schemas_are_left_to_jsonschema(schema: dict[str, Any]) -> None:
    assert _quick_check(schema) is None


@pytest.mark.parametrize(
    ("arguments", "quick_yes"),
    [
        ({"n": 3, "v": None}, True),
        ({"n": 3, "v": "2026-01-01T00:00:00Z"}, True),
        ({"n": "abc", "v": "not a date"}, True),  # format is an annotation for arguments
        ({"n": 0, "x": True}, True),
        ({"n": -1}, False),
        ({"n": "abcd"}, False),
        ({"n": 1, "v": 1}, False),
        ({"n": 1, "x": ["a"]}, False),  # its branch has ``items``: left to jsonschema (which accepts)
        ({"v": None}, False),
    ],
)
def test_the_quick_check_takes_pydantic_unions(arguments: dict[str, Any], quick_yes: bool) -> None:
    quick = _quick_check(UNIONS[0])
    assert quick is not None
    assert quick(arguments) is quick_yes
    if quick_yes:
        assert _judge(UNIONS[0], arguments) == []


def test_integral_float_is_judged_by_jsonschema() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    ArgumentValidator().check("t", schema, {"n": 2.0})  # valid in 2020-12: no error
    with pytest.raises(McpError) as caught:
        ArgumentValidator().check("t", schema, {"n": 2.5})
    assert caught.value.kind == "invalid"
    assert "arguments.n must be of type 'integer'" in caught.value.message


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
    checker = OutputValidator()
    assert checker.check("t", OUTPUT_SCHEMA, {"n": 3}) is None
    with pytest.raises(McpError) as caught:  # the same checker, the same schema: it does judge
        checker.check("t", OUTPUT_SCHEMA, {"n": "3"})
    assert caught.value.kind == "protocol"
    broken = {"type": "no-such-type"}
    with pytest.raises(jsonschema.SchemaError):  # broken indeed: not ours to judge, so let through
        jsonschema.Draft202012Validator.check_schema(broken)
    assert checker.check("u", broken, {"n": "anything"}) is None
