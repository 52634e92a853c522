"""A refused ``anyOf``/``oneOf`` says what was expected, in words (issue #37, 2).

It printed the raw branches (``violates anyOf=[{'type': 'string', 'format': 'uri'}, {'ty...``),
cut mid-schema. Now each branch is said by its const, enum, type (with its bounds and format),
title or ``$ref`` name, bounded in length, at any depth, and when the value is of the kind of
exactly one branch, what is wrong inside it. Driven through the public ``Client`` against
``tests/servers/schema_server.py`` (a real stdio process), asserting the message a user sees; the
words themselves live in ``mcp_notebook/protocol/_schema_words.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_notebook import Client
from tests.raises import raises_mcp

from .conftest import python_server

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaked_processes")]

GUARD = 60  # what stops a hang; never a budget the test asserts
SECRET = "hunter2-do-not-show"

TOOLS: list[dict[str, Any]] = [
    {
        "name": "fetch",
        "inputSchema": {
            "type": "object",
            "properties": {
                "target": {
                    "anyOf": [
                        {"type": "string", "format": "uri"},
                        {"type": "integer", "minimum": 0},
                        {"type": "null"},
                    ]
                }
            },
        },
    },
    {
        "name": "configure",
        "inputSchema": {
            "type": "object",
            "properties": {
                "options": {
                    "type": "object",
                    "properties": {
                        "mode": {"oneOf": [{"const": "fast", "title": "Fast"}, {"const": "safe"}]},
                    },
                }
            },
        },
    },
    {
        # pydantic's Optional[Point]
        "name": "plot",
        "inputSchema": {
            "$defs": {
                "Point": {
                    "type": "object",
                    "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
                    "required": ["x", "y"],
                }
            },
            "type": "object",
            "properties": {"at": {"anyOf": [{"$ref": "#/$defs/Point"}, {"type": "null"}], "default": None}},
        },
    },
    {
        "name": "pick",
        "inputSchema": {
            "type": "object",
            "properties": {"n": {"anyOf": [{"const": f"choice-{i}"} for i in range(1000)]}},
        },
    },
    {
        "name": "either",
        "inputSchema": {
            "type": "object",
            "properties": {"v": {"oneOf": [{"type": "integer"}, {"type": "number"}]}},
        },
    },
]


def union_server(tmp_path: Path) -> list[str]:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"tools": TOOLS}))
    return python_server("schema_server.py", "--spec", str(spec), "--log", str(tmp_path / "calls.log"))


async def test_union_refusals_say_what_was_expected(tmp_path: Path) -> None:
    async with Client(union_server(tmp_path)) as client:
        with anyio.fail_after(GUARD):
            with raises_mcp("invalid") as caught:
                await client.call_tool("fetch", {"target": -1})
            assert "arguments.target must be one of: a string (uri); an integer ≥ 0; null" in (
                caught.value.message
            )
            with raises_mcp("invalid") as caught:
                await client.call_tool("fetch", {"target": [SECRET]})
            assert "arguments.target must be one of: a string (uri); an integer ≥ 0; null" in (
                caught.value.message
            )
            # a nested property, branches said by title and const
            with raises_mcp("invalid") as caught:
                await client.call_tool("configure", {"options": {"mode": SECRET}})
            assert 'arguments.options.mode must be one of: Fast ("fast"); "safe"' in caught.value.message
            # the value is of one branch's kind: what is wrong inside it is said too
            with raises_mcp("invalid") as caught:
                await client.call_tool("plot", {"at": {"x": 1, "y": SECRET}})
            assert (
                "arguments.at must be one of: a Point; null; as a Point, arguments.at.y must be of type "
                "'integer'" in caught.value.message
            )
            # a thousand branches: a few said, the rest counted
            with raises_mcp("invalid") as caught:
                await client.call_tool("pick", {"n": SECRET})
            assert 'arguments.n must be one of: "choice-0"; "choice-1"; ' in caught.value.message
            assert "; or one of 992 more" in caught.value.message
            assert len(caught.value.full_message) < 1000
            # a oneOf that more than one branch accepts
            with raises_mcp("invalid") as caught:
                await client.call_tool("either", {"v": 3})
            assert (
                "arguments.v must match exactly one of: an integer; a number, but matches several"
                in caught.value.message
            )
            for message in (caught.value.message, caught.value.full_message):
                assert "anyOf=" not in message
                assert "oneOf=" not in message
    assert not (tmp_path / "calls.log").exists()  # nothing was sent


async def test_the_words_never_show_the_value(tmp_path: Path) -> None:
    async with Client(union_server(tmp_path)) as client:
        with anyio.fail_after(GUARD):
            for name, arguments in [
                ("fetch", {"target": [SECRET]}),
                ("configure", {"options": {"mode": SECRET}}),
                ("plot", {"at": {"x": 1, "y": SECRET}}),
                ("pick", {"n": SECRET}),
            ]:
                with raises_mcp("invalid", match=" must be one of: ") as caught:
                    await client.call_tool(name, arguments)
                assert SECRET not in caught.value.full_message
                assert SECRET not in repr(caught.value)


# --- the words, by table (mcp_notebook/protocol/_schema_words.py) ----------------------------------


@pytest.mark.parametrize(
    ("branch", "words"),
    [
        ({"type": "string"}, "a string"),
        ({"type": "string", "format": "date-time"}, "a string (date-time)"),
        ({"type": "string", "minLength": 1, "maxLength": 5}, "a string of 1 to 5 characters"),
        ({"type": "integer", "minimum": 0}, "an integer ≥ 0"),
        ({"type": "number", "exclusiveMinimum": 0, "maximum": 1}, "a number > 0 and ≤ 1"),
        ({"type": ["string", "null"]}, "a string or null"),
        ({"type": "array", "items": {"type": "integer"}}, "an array of integers"),
        ({"type": "object", "required": ["a", "b", "c", "d"]}, "an object with a, b, c, …"),
        ({"const": None}, "null"),
        ({"enum": ["a", "b", "c", "d", "e", "f"]}, 'one of "a", "b", "c", "d", "e", …'),
        ({"$ref": "#/$defs/Point", "title": "Where"}, "Where (a Point)"),
        ({"anyOf": [{"type": "string"}]}, "one of several shapes"),
        ({"not": {}}, "a value the schema describes"),
        (True, "anything"),
        (False, "nothing"),
        ({"const": "x" * 500}, '"' + "x" * 28 + "…"),
        ({"title": "t" * 500, "type": "string"}, "t" * 59 + "…"),
    ],
)
def test_a_branch_in_words(branch: Any, words: str) -> None:
    from mcp_notebook.protocol._schema_words import branch_words

    assert branch_words(branch) == words


def test_the_branches_in_words_are_bounded() -> None:
    from mcp_notebook.protocol._schema_words import MAX_WORDS_CHARS, branches_words

    long_titles = [{"title": f"{i} " + "t" * 100, "type": "string"} for i in range(50)]
    said = branches_words(long_titles)
    assert len(said) < MAX_WORDS_CHARS + 40
    assert said.startswith("0 t")
    assert said.endswith("; or one of 46 more")
    assert branches_words([{"type": "string"}, {"type": "string"}, {"type": "null"}]) == "a string; null"
