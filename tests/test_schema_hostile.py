"""A server's schemas cannot make the client fetch anything or freeze it on a regex (issue #35, 1-2).

The server is ``tests/servers/schema_server.py``, a real stdio process whose ``tools/list`` carries
hostile schemas: ``$ref`` to a listener this test opens on loopback, a ref relative to an ``$id`` on
it, a ``$dynamicRef`` to it, a ``file://`` ref, and ReDoS patterns (``^(a+)+$`` against 40 ``a``s and
a ``!``: Python's ``re`` backtracks for hours, RE2 answers at once). Everything is driven through
the public ``Client``, and asserts what a user sees: the refusal and its words, the listener's
count of connections, the server's log of calls. The rule lives in
``mcp_notebook.protocol._json_schema``; its table of pattern semantics is at the end.

Hang guards: ``anyio.fail_after`` bounds what awaits; a regex that holds the GIL never gives the
loop back, so the ReDoS tests also carry a pytest-timeout (its signal interrupts ``re``, which checks
for signals); neither is a timing assertion.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcp_notebook import Client
from mcp_notebook.client._arguments import ArgumentValidator
from mcp_notebook.protocol._json_schema import _compile, compile_pattern, schema_validator, validation_errors
from tests.raises import raises_mcp

from .conftest import python_server
from .raw_http import RawRequest, Reply, raw_http_server

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

#: what stops a hang; never a budget the test asserts
GUARD = 60
REDOS = "^(a+)+$"
EVIL = "a" * 40 + "!"


class Listener:
    """A TCP listener on loopback, in a thread, that counts the connections it accepts.

    ``hold`` seconds: how long an accepted connection is kept open without a byte (0 closes it at
    once). A held connection is what a fetch with no timeout hangs on.
    """

    def __init__(self, hold: float = 0.0) -> None:
        self.hold = hold
        self.connections = 0
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            self.connections += 1
            self._stop.wait(self.hold)
            conn.close()

    @contextmanager
    def running(self) -> Iterator[Listener]:
        self._thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            self._thread.join()
            self._sock.close()


def schema_client(tmp_path: Path, tools: list[dict[str, Any]], answers: dict[str, Any]) -> Client:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"tools": tools, "answers": answers}))
    return Client(python_server("schema_server.py", "--spec", str(spec), "--log", str(calls(tmp_path))))


def calls(tmp_path: Path) -> Path:
    return tmp_path / "calls.log"


def called(tmp_path: Path) -> list[str]:
    path = calls(tmp_path)
    return path.read_text().split() if path.exists() else []


def tool(
    name: str, input_schema: dict[str, Any], output_schema: dict[str, Any] | None = None
) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name, "inputSchema": input_schema}
    if output_schema is not None:
        entry["outputSchema"] = output_schema
    return entry


def takes_x(spec: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"x": spec}, **extra}


# --- 1. no schema ever fetches -------------------------------------------------------------------


@pytest.mark.anyio
async def test_no_ref_in_any_schema_reaches_a_listener(tmp_path: Path) -> None:
    # The file holds a schema that accepts anything: a client that read it would let the call through.
    accepting = tmp_path / "accepting.json"
    accepting.write_text("{}")
    with Listener().running() as listener:
        url = listener.url
        tools = [
            tool("plain_ref", takes_x({"$ref": f"{url}/x.json"})),
            tool("id_relative", takes_x({"$ref": "other.json"}, **{"$id": f"{url}/root.json"})),
            tool("dynamic_ref", takes_x({"$dynamicRef": f"{url}/dynamic.json#meta"})),
            tool("file_ref", takes_x({"$ref": accepting.as_uri()})),
            tool("output_ref", {"type": "object"}, takes_x({"$ref": f"{url}/out.json"})),
        ]
        refused = {
            "plain_ref": f"{url}/x.json",
            "id_relative": f"{url}/other.json",
            "dynamic_ref": f"{url}/dynamic.json",
            "file_ref": accepting.as_uri(),
        }
        async with schema_client(tmp_path, tools, {"output_ref": {"x": 1}}) as client:
            with anyio.fail_after(GUARD):
                assert {t.name for t in await client.list_tools()} == {t["name"] for t in tools}
                for name, ref in refused.items():
                    with raises_mcp("invalid", match="refers outside itself") as caught:
                        await client.call_tool(name, {"x": 1}, timeout=5)
                    assert f"inputSchema of tool {name!r}" in caught.value.message
                    assert repr(ref) in caught.value.message
                    assert "nothing was sent" in caught.value.message
                with raises_mcp(
                    "protocol", match="outputSchema of tool 'output_ref' refers outside"
                ) as caught:
                    await client.call_tool("output_ref", {}, timeout=5)
                assert repr(f"{url}/out.json") in caught.value.message
                unchecked = await client.call_tool("output_ref", {}, validate=False, timeout=5)
                assert unchecked.structured_content == {"x": 1}
        assert listener.connections == 0
    assert called(tmp_path) == ["output_ref", "output_ref"]  # the refused argument checks sent nothing


@pytest.mark.anyio
@pytest.mark.timeout(180)
async def test_a_ref_to_a_silent_listener_does_not_hang_the_call(tmp_path: Path) -> None:
    # The listener accepts and then says nothing for longer than the guard: a client that fetched
    # would sit in the fetch (on the event loop) past the guard and fail by it.
    with Listener(hold=GUARD + 15).running() as listener:
        tools = [tool("silent_ref", takes_x({"$ref": f"{listener.url}/never.json"}))]
        async with schema_client(tmp_path, tools, {}) as client:
            with anyio.fail_after(GUARD):
                with raises_mcp("invalid", match="refers outside itself"):
                    await client.call_tool("silent_ref", {"x": 1}, timeout=5)
        assert listener.connections == 0


@pytest.mark.anyio
async def test_a_pointer_to_nowhere_is_named(tmp_path: Path) -> None:
    tools = [tool("dangling", takes_x({"$ref": "#/$defs/missing"}))]
    async with schema_client(tmp_path, tools, {}) as client:
        with anyio.fail_after(GUARD):
            with raises_mcp("invalid", match=r"refers to '#/\$defs/missing', which it does not contain"):
                await client.call_tool("dangling", {"x": 1}, timeout=5)
            assert not (await client.call_tool("dangling", {"x": 1}, validate=False, timeout=5)).is_error
    assert called(tmp_path) == ["dangling"]


# --- 2. server patterns cannot hold the client ---------------------------------------------------


@pytest.mark.anyio
@pytest.mark.timeout(180)
async def test_a_redos_pattern_in_an_output_schema_ends_with_the_keyword(tmp_path: Path) -> None:
    tools = [tool("redos_out", {"type": "object"}, takes_x({"type": "string", "pattern": REDOS}))]
    async with schema_client(tmp_path, tools, {"redos_out": {"x": EVIL}}) as client:
        with anyio.fail_after(GUARD):
            with raises_mcp("protocol", match=r"structuredContent\.x violates pattern='\^\(a\+\)\+\$'"):
                await client.call_tool("redos_out", {}, timeout=5)


@pytest.mark.anyio
@pytest.mark.timeout(180)
async def test_a_redos_pattern_in_an_input_schema_refuses_an_ordinary_argument(tmp_path: Path) -> None:
    tools = [tool("redos_in", takes_x({"type": "string", "pattern": REDOS}))]
    async with schema_client(tmp_path, tools, {}) as client:
        with anyio.fail_after(GUARD):
            with raises_mcp("invalid", match=r"arguments\.x violates pattern="):
                await client.call_tool("redos_in", {"x": EVIL}, timeout=5)
            assert not (await client.call_tool("redos_in", {"x": "aaaa"}, timeout=5)).is_error
    assert called(tmp_path) == ["redos_in"]


@pytest.mark.anyio
@pytest.mark.timeout(180)
async def test_redos_pattern_properties_are_matched_by_re2(tmp_path: Path) -> None:
    keyed = {"type": "object", "patternProperties": {REDOS: {"type": "integer"}}}
    closed = {**keyed, "additionalProperties": False}
    tools = [tool("keys_open", {"type": "object"}, keyed), tool("keys_closed", {"type": "object"}, closed)]
    answers = {"keys_open": {EVIL: "text", "aaa": 1}, "keys_closed": {EVIL: 1}}
    async with schema_client(tmp_path, tools, answers) as client:
        with anyio.fail_after(GUARD):
            result = await client.call_tool("keys_open", {}, timeout=5)  # EVIL is no match: not typed
            assert result.structured_content == answers["keys_open"]
            with raises_mcp("protocol", match=r"Additional properties are not allowed \('a+!' unexpected\)"):
                await client.call_tool("keys_closed", {}, timeout=5)


@pytest.mark.anyio
async def test_ordinary_patterns_still_validate(tmp_path: Path) -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "pattern": "^[A-Za-z0-9_.-]+$"},
            "phone": {"type": "string", "pattern": r"^\d{3}-\d{4}$"},
            "accented": {"type": "string", "pattern": r"^caf\u00e9$"},  # ECMA's \uXXXX
        },
    }
    tools = [tool("ordinary", schema)]
    async with schema_client(tmp_path, tools, {}) as client:
        with anyio.fail_after(GUARD):
            good = {"name": "a.b-c_1", "phone": "555-1234", "accented": "café"}
            assert not (await client.call_tool("ordinary", good, timeout=5)).is_error
            for bad, where in (
                ({"name": "a b"}, "arguments.name"),
                ({"phone": "555-12345"}, "arguments.phone"),
                ({"phone": "555-1234\n"}, "arguments.phone"),  # ECMA's $ is the very end
                ({"accented": "cafe"}, "arguments.accented"),
            ):
                with raises_mcp("invalid", match=rf"{where} violates pattern="):
                    await client.call_tool("ordinary", bad, timeout=5)
    assert called(tmp_path) == ["ordinary"]


# --- the same over HTTP: the rule is the client's, whatever the transport --------------------------


class SchemaHttpServer:
    """Legacy Streamable HTTP with JSON answers (``tests/raw_http.py``): the same tools and answers
    as ``schema_server.py``, with a count of the tools called."""

    def __init__(self, tools: list[dict[str, Any]], answers: dict[str, Any]) -> None:
        self.tools = tools
        self.answers = answers
        self.called: list[str] = []

    async def __call__(self, request: RawRequest, reply: Reply) -> None:
        message = json.loads(request.body) if request.method == "POST" and request.path == "/mcp" else {}
        method, request_id = message.get("method"), message.get("id")
        if method is None or request_id is None:
            await reply.send(202 if message else 405, b"")
            return
        if method == "server/discover":
            error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32600, "message": "legacy"}}
            await reply.send(400, json.dumps(error).encode())
            return
        result: dict[str, Any] = {}
        if method == "initialize":
            info = {"name": "schema-http", "version": "1"}
            result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}}}
            result["serverInfo"] = info
        elif method == "tools/list":
            result = {"tools": self.tools}
        elif method == "tools/call":
            name = message["params"]["name"]
            self.called.append(name)
            result = {"content": [{"type": "text", "text": f"called {name}"}]}
            if name in self.answers:
                result["structuredContent"] = self.answers[name]
        body = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()
        await reply.send(200, body, headers={"Mcp-Session-Id": "schema-1"})


@pytest.mark.anyio
@pytest.mark.timeout(180)
async def test_over_http_no_ref_is_fetched_and_no_pattern_holds_the_call() -> None:
    with Listener().running() as listener:
        tools = [
            tool("plain_ref", takes_x({"$ref": f"{listener.url}/x.json"})),
            tool("output_ref", {"type": "object"}, takes_x({"$ref": f"{listener.url}/out.json"})),
            tool("redos_out", {"type": "object"}, takes_x({"type": "string", "pattern": REDOS})),
        ]
        server = SchemaHttpServer(tools, {"output_ref": {"x": 1}, "redos_out": {"x": EVIL}})
        async with raw_http_server(server) as url, Client(f"{url}/mcp") as client:
            with anyio.fail_after(GUARD):
                with raises_mcp("invalid", match="inputSchema of tool 'plain_ref' refers outside itself"):
                    await client.call_tool("plain_ref", {"x": 1}, timeout=5)
                with raises_mcp("protocol", match="outputSchema of tool 'output_ref' refers outside itself"):
                    await client.call_tool("output_ref", {}, timeout=5)
                with raises_mcp("protocol", match=r"structuredContent\.x violates pattern="):
                    await client.call_tool("redos_out", {}, timeout=5)
        assert listener.connections == 0
    assert server.called == ["output_ref", "redos_out"]


# --- the rule's table: what RE2 judges, and what it leaves to the server -------------------------


@pytest.mark.parametrize(
    ("pattern", "text", "found"),
    [
        (r"^\d+$", "123", True),
        (r"^\d+$", "\u0663", False),  # ECMA's \d is ASCII (Python's re would say yes)
        (r"^\w+$", "é", False),  # likewise \w
        ("^abc$", "abc\n", False),  # ECMA's $ is the very end (Python's re would say yes)
        (r"^[\u0041-\u005a]+$", "ABC", True),
        (r"^[\u0041-\u005a]+$", "abc", False),
        (r"\\u0041", "\\u0041", True),  # an escaped backslash is not an escape
        (r"^\p{L}+$", "été", True),
        (REDOS, EVIL, False),
    ],
)
def test_patterns_follow_ecma_where_re2_can(pattern: str, text: str, found: bool) -> None:
    regex = compile_pattern(pattern)
    assert regex is not None
    assert regex.finds(text) is found


@pytest.mark.parametrize("pattern", ["(?=a)b", r"(a)\1", "(?<!x)y", "a{2000}"])
def test_a_pattern_re2_cannot_run_is_left_to_the_server_and_noted(
    pattern: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mcp_notebook")
    _compile.cache_clear()
    schema = takes_x({"type": "string", "pattern": pattern})
    assert validation_errors(schema_validator(schema), {"x": "zzz"}) == []
    assert any(
        "is not enforced here" in r.getMessage() and repr(pattern) in r.getMessage() for r in caplog.records
    )


@pytest.mark.parametrize(
    ("value", "valid"),
    [("^[a-z]+$", True), ("(?=a)b", True), (r"\p{L}", True), ("(unclosed", False), ("a{2,1}", False)],
)
def test_format_regex_is_judged_by_compiling(value: str, valid: bool) -> None:
    validator = schema_validator(takes_x({"format": "regex"}), formats=True)
    assert (validation_errors(validator, {"x": value}) == []) is valid


def test_unevaluated_properties_beside_pattern_properties_is_not_enforced() -> None:
    """jsonschema would match the patternProperties inside unevaluatedProperties with ``re``."""
    both = {"patternProperties": {REDOS: True}, "unevaluatedProperties": False}
    assert validation_errors(schema_validator(both), {EVIL: 1}) == []
    alone = {"properties": {"a": True}, "unevaluatedProperties": False}
    assert [e.validator for e in validation_errors(schema_validator(alone), {"b": 1})] == [
        "unevaluatedProperties"
    ]


def test_odd_patterns_and_texts_are_judged_not_raised() -> None:
    """A pattern that is no string (a broken schema: unchecked) and a lone surrogate in the text
    (UTF-8, and so RE2, cannot hold it: seen as U+FFFD) never escape the check as an exception."""
    broken = takes_x({"type": "string", "pattern": ["^a"]})
    ArgumentValidator().check("t", broken, {"x": "b"})
    schema = takes_x({"type": "string", "pattern": "^a"})
    ArgumentValidator().check("t", schema, {"x": "a\ud800"})
    with raises_mcp("invalid", match=r"arguments\.x violates pattern="):
        ArgumentValidator().check("t", schema, {"x": "\ud800a"})
