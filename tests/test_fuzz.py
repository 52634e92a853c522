"""A protocol fuzzer: generated server traffic through real transports, both eras.

Each target is one real server for the whole test (a Python process costs about a second to
start): the stdio ``tests/servers/script_server.py``, or a raw HTTP server on localhost answering
with the generated lines as one ``application/json`` body or as ``text/event-stream`` events. Each
Hypothesis example asks the server to write a burst of generated lines (see
:mod:`tests.fuzz_traffic`) before (or as) its answer to a tool call (tool ``inject``), then before
its answer to the next ``tools/list`` (tool ``arm``), and checks the invariant:

- each of those requests returns something whose reprs a notebook can show, or fails with an
  ``McpError`` that is not "closed" (only the request the garbage belonged to may fail);
- the same client then answers a normal call, is ``ready`` and never reconnected, and
  ``stats.outcomes`` still adds up;
- nothing hangs (every step is bounded);
- once the client is closed, no task, child process or file descriptor is left behind.

The budget: ``FUZZ_EXAMPLES`` examples per target in a normal run (CI: well under two minutes for
all targets), ``FUZZ_EXAMPLES_LONG`` with ``pytest -m fuzz``; ``MCPNB_FUZZ_EXAMPLES=N`` overrides
both.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Iterator
from contextlib import AsyncExitStack, ExitStack, asynccontextmanager, suppress
from typing import Any

import anyio
import psutil
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, given, settings

from mcp_notebook import Client, McpError, ToolResult
from mcp_notebook.protocol import jsonrpc

from .conftest import python_server
from .fuzz_traffic import traffic
from .raw_http import RawRequest, Reply, raw_http_server

pytestmark = [pytest.mark.fuzz, pytest.mark.usefixtures("no_leaked_processes")]

FUZZ_EXAMPLES = 100
FUZZ_EXAMPLES_LONG = 2000
MODERN_VERSION = "2026-07-28"
#: transport-era[-stdlib]: "stdlib" parses frames with the standard library instead of orjson (the
#: fallback when orjson is not installed), which lets NaN, huge integers and lone surrogates in.
TARGETS = [
    "stdio-legacy",
    "stdio-modern",
    "json-legacy",
    "json-modern",
    "sse-legacy",
    "sse-modern",
    "stdio-modern-stdlib",
    "sse-legacy-stdlib",
]


def budget(config: pytest.Config) -> int:
    override = os.environ.get("MCPNB_FUZZ_EXAMPLES")
    if override:
        return int(override)
    return FUZZ_EXAMPLES_LONG if "fuzz" in (config.option.markexpr or "") else FUZZ_EXAMPLES


# --- the HTTP server ---------------------------------------------------------------------------


class FuzzHttpServer:
    """Streamable HTTP of one era; ``tools/call inject`` answers with the generated lines.

    ``json`` mode: the first line (``__ID__`` filled in) is the whole ``application/json`` body,
    so it is the request's only answer. ``sse`` mode: each line is one ``data:`` event, followed
    by the real answer. Everything else is answered correctly, so the client can always go on.
    """

    def __init__(self, era: str, mode: str) -> None:
        self.modern = era == "modern"
        self.mode = mode
        self.armed: list[str] = []  # lines for the next tools/list answer (tool "arm")

    async def __call__(self, request: RawRequest, reply: Reply) -> None:
        if request.method != "POST":
            await reply.send(405, b"")
            return
        message = json.loads(request.body)
        method, request_id = message.get("method"), message.get("id")
        if method is None or request_id is None:
            await reply.send(202, b"")
            return
        params = message.get("params") or {}
        if method == "server/discover" and not self.modern:
            error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32600, "message": "no"}}
            await reply.send(400, json.dumps(error).encode())
        elif method == "server/discover":
            await self._result(
                reply, request_id, {"supportedVersions": [MODERN_VERSION], "capabilities": {"tools": {}}}
            )
        elif method == "initialize":
            result = {
                "protocolVersion": params.get("protocolVersion"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "fuzz", "version": "1"},
            }
            await self._result(reply, request_id, result, headers={"Mcp-Session-Id": "fuzz-session"})
        elif method == "tools/list" and self.armed:
            armed, self.armed = self.armed, []
            await self._garble(reply, request_id, armed, {"tools": TOOLS})
        elif method == "tools/list":
            await self._result(reply, request_id, {"tools": TOOLS})
        elif method == "tools/call" and params.get("name") == "arm":
            self.armed = params["arguments"]["lines"]
            await self._result(reply, request_id, _text("armed"))
        elif method == "tools/call" and params.get("name") == "echo":
            await self._result(reply, request_id, _text(str(params["arguments"]["n"])))
        elif method == "tools/call" and params.get("name") == "inject":
            await self._garble(reply, request_id, params["arguments"]["lines"], _text("injected"))
        elif method == "ping":
            await self._result(reply, request_id, {})
        else:
            error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "no"}}
            await reply.send(404 if self.modern else 200, json.dumps(error).encode())

    def _answer(self, request_id: Any, result: dict[str, Any]) -> bytes:
        if self.modern:
            result = {"resultType": "complete", **result}
        return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()

    async def _result(
        self, reply: Reply, request_id: Any, result: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        await reply.send(200, self._answer(request_id, result), headers=headers)

    async def _garble(
        self, reply: Reply, request_id: Any, encoded: list[str], result: dict[str, Any]
    ) -> None:
        own = json.dumps(request_id).encode()
        lines = [base64.b64decode(line).replace(b"__ID__", own) for line in encoded]
        if self.mode == "json":
            await reply.send(200, lines[0])
            return
        await reply.start(200, content_type="text/event-stream")
        for line in lines:
            await reply.write(b"data: " + line + b"\n\n")
        await reply.write(b"data: " + self._answer(request_id, result) + b"\n\n")


TOOLS = [
    {"name": "echo", "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}}},
    {"name": "inject", "inputSchema": {"type": "object", "properties": {"lines": {"type": "array"}}}},
    {"name": "arm", "inputSchema": {"type": "object", "properties": {"lines": {"type": "array"}}}},
]


def _text(value: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": value}], "isError": False}


# --- the client under test ---------------------------------------------------------------------


def _sampling(params: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "fuzz"}


def _elicitation(params: Any) -> dict[str, Any]:
    return {"action": "decline"}


@asynccontextmanager
async def _client(target: str) -> AsyncIterator[Client]:
    kind, era = target.split("-")[:2]
    options: dict[str, Any] = {
        "timeout": 5,
        "protocol": era,
        "sampling": _sampling,
        "elicitation": _elicitation,
        "roots": ["file:///tmp/fuzz"],
        "handler_timeout": 5,
        "max_input_rounds": 3,
    }
    async with AsyncExitStack() as stack:
        if kind == "stdio":
            command = python_server("script_server.py", *(["--modern"] if era == "modern" else []))
            client = Client(command, **options)
        else:
            url = await stack.enter_async_context(raw_http_server(FuzzHttpServer(era, kind)))
            client = Client(f"{url}/mcp", **options)
        await stack.enter_async_context(client)
        yield client


class Harness:
    """One client and its server in a portal's event loop, driven from the (sync) Hypothesis test.

    After a failed example the client is replaced, so that Hypothesis's replays while shrinking
    each start from a healthy client and the example it reports is the one that did the damage.
    """

    def __init__(self, portal: BlockingPortal, target: str) -> None:
        self.portal = portal
        self.target = target
        self.numbers = itertools.count()
        self.clients = 0
        self._stack = ExitStack()
        self.complaints = _Complaints()
        logging.getLogger("mcp_notebook").addHandler(self.complaints)
        self.client = self._open()
        self._dirty = False

    def _open(self) -> Client:
        self.clients += 1
        return self._stack.enter_context(self.portal.wrap_async_context_manager(_client(self.target)))

    def close(self) -> None:
        try:
            self._stack.close()
        finally:
            logging.getLogger("mcp_notebook").removeHandler(self.complaints)

    def check(self, burst: list[bytes]) -> None:
        if self._dirty:
            # The previous example failed (and was reported); its client may not close cleanly.
            with suppress(Exception):
                self._stack.close()
            self.client = self._open()
        self._dirty = True
        self.complaints.records.clear()
        self.portal.call(self._check, burst)
        complaints = [f"{r.name}: {r.getMessage()}" for r in self.complaints.records]
        assert not complaints, complaints[:5]
        self._dirty = False

    async def _check(self, burst: list[bytes]) -> None:
        client = self.client
        lines = [base64.b64encode(line).decode() for line in burst]
        with anyio.fail_after(30):
            # The lines before (or as) the answer to a tool call, then to a list request.
            await self._survive(client.call_tool("inject", {"lines": lines}, validate=False))
            await client.call_tool("arm", {"lines": lines}, validate=False)
            await self._survive(client.list_tools(refresh=True))
            n = next(self.numbers)
            assert (await client.call_tool("echo", {"n": n}, validate=False)).text == str(n)
        assert client.status == "ready"
        assert client.stats.reconnects == 0, client.last_error
        stats = client.stats
        assert sum(stats.outcomes.values()) + stats.in_flight + stats.streams == stats.requests

    @staticmethod
    async def _survive(call: Awaitable[Any]) -> None:
        """The call returns something a user can look at, or fails with an McpError (not closed)."""
        failure: McpError | None = None
        try:
            outcome = await call
        except McpError as exc:
            failure = exc
        if failure is not None:
            assert failure.kind != "closed", f"the client closed: {failure}"
            return
        for item in outcome if isinstance(outcome, list) else [outcome]:
            repr(item)
            for display in ("_repr_html_", "_repr_mimebundle_"):  # what a notebook would call
                if hasattr(item, display):
                    getattr(item, display)()
            if isinstance(item, ToolResult):
                _ = item.text, item.data


class _Complaints(logging.Handler):
    """ERROR records of the client's own loggers: a listener or handler that raised, or the
    reader's safety net catching what a check did not foresee. Each one is a bug to fix; a
    server's own log messages (``mcp_notebook.server``) are not the client's complaints."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.name != "mcp_notebook.server":
            self.records.append(record)


def _tasks() -> int:
    return len(asyncio.all_tasks())


@pytest.fixture(params=TARGETS)
def harness(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Harness]:
    if request.param.endswith("-stdlib"):
        monkeypatch.setattr(jsonrpc, "_orjson", None)
    process = psutil.Process()
    with start_blocking_portal("asyncio") as portal:
        fds = process.num_fds()
        tasks = portal.call(_tasks)
        harness = Harness(portal, request.param)
        try:
            yield harness
        finally:
            harness.close()
        assert portal.call(_tasks) == tasks, "tasks left behind in the event loop"
        assert process.num_fds() == fds, "file descriptors left open"


def test_the_client_survives_whatever_the_server_sends(harness: Harness, pytestconfig: pytest.Config) -> None:
    @settings(
        max_examples=budget(pytestconfig),
        deadline=None,
        database=None,
        print_blob=True,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
        ],
    )
    @given(burst=traffic)
    def survives(burst: list[bytes]) -> None:
        harness.check(burst)

    survives()
