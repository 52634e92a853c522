"""One behaviour suite, run against independent real MCP servers over real stdio pipes and sockets.

stdio:

* ``sdk-modern``: the official Python SDK (``mcp`` 2.3.0) serving our demo server, dual-era, so the
  ``server/discover`` probe gets the modern 2026-07-28 era.
* ``sdk-legacy``: the same SDK restricted to the ``initialize`` handshake (``--legacy-only``), a
  legacy-only server: the probe must fall back.
* ``everything``: npm ``@modelcontextprotocol/server-everything`` (TypeScript SDK, 2025-11-25 only).

HTTP (``http-*``; servers from :mod:`tests.http_peers`, one process per peer for the module): the
SDK's Streamable HTTP dual-era (SSE and JSON-only responses), legacy-only (stateful, JSON-only,
stateless), its deprecated HTTP+SSE binding (reached by the automatic fallback), and
server-everything's ``streamableHttp`` and ``sse`` modes.

Each server names its tools differently, so a :class:`Peer` maps the behaviours onto each one, and
says what its configuration cannot do (a JSON-only or stateless legacy server has no channel for
server-to-client requests; JSON-only responses carry no progress): those tests then check that
the failure is the server's clear error, not a hang.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import anyio
import pytest

from mcp_notebook import Client, McpError
from tests.conftest import demo_server, everything_server
from tests.http_peers import everything_http, sdk_http


@dataclass(frozen=True)
class Peer:
    id: str
    #: Starts the server if it needs starting and yields what to give ``Client``: argv or URL.
    start: Callable[[], contextlib.AbstractContextManager[Any]]
    era: str
    version: str
    echo: tuple[str, dict[str, Any], str]
    add: tuple[str, dict[str, Any], str]
    progress: tuple[str, dict[str, Any], int]  # tool, arguments, number of progress steps
    slow: tuple[str, dict[str, Any], float]  # tool, arguments, seconds it runs if not cancelled
    elicit: tuple[str, dict[str, Any]]
    sample: tuple[str, dict[str, Any]]
    resource: tuple[str, str]  # uri, expected text
    template: str
    prompt: tuple[str, dict[str, str], str]
    completion: tuple[str, tuple[str, str], str]
    #: (tool, arguments, the structuredContent expected back: both peers' data are deterministic)
    structured: tuple[str, dict[str, Any], Any]
    #: The server can send requests to us (sampling, elicitation) while a call runs.
    back_channel: bool = True
    #: The server streams progress notifications during a call.
    streams_progress: bool = True
    target: Any = None  # set once started


DEMO_COMMON: dict[str, Any] = dict(
    echo=("echo", {"text": "hello pipes"}, "hello pipes"),
    add=("add", {"a": 1.5, "b": 2}, "3.5"),
    progress=("slow_count", {"steps": 3, "delay": 0.05}, 3),
    slow=("slow_count", {"steps": 6, "delay": 0.25}, 1.5),
    elicit=("ask_user_name", {}),
    sample=("summarize", {"text": "A long text about pipes and sockets."}),
    resource=("demo://readme", "mcp-notebook-demo"),
    template="demo://region/{name}",
    prompt=("greeting", {"name": "Ada"}, "Ada"),
    completion=("analyze_region", ("region", "no"), "north"),
    structured=(
        "sales_records",
        {"region": "north", "limit": 3},
        {
            "result": [
                {"date": "2025-01-01", "region": "north", "product": "gizmo", "units": 1, "price": 24.52},
                {"date": "2025-01-01", "region": "north", "product": "gadget", "units": 35, "price": 13.67},
                {"date": "2025-01-01", "region": "north", "product": "gadget", "units": 22, "price": 13.78},
            ]
        },
    ),
)


def _argv(make: Callable[[], list[str]]) -> Callable[[], contextlib.AbstractContextManager[Any]]:
    return lambda: contextlib.nullcontext(make())


@contextlib.contextmanager
def _url(start: contextlib.AbstractContextManager[Any]) -> Iterator[str]:
    with start as server:
        yield server.url


EVERYTHING: dict[str, Any] = dict(
    echo=("echo", {"message": "hello pipes"}, "hello pipes"),
    add=("get-sum", {"a": 1.5, "b": 2}, "3.5"),
    progress=("trigger-long-running-operation", {"duration": 0.3, "steps": 3}, 3),
    slow=("trigger-long-running-operation", {"duration": 1.5, "steps": 3}, 1.5),
    elicit=("trigger-elicitation-request", {}),
    sample=("trigger-sampling-request", {"prompt": "Say hi", "maxTokens": 20}),
    resource=("demo://resource/static/document/features.md", "#"),
    template="demo://resource/dynamic/text/{resourceId}",
    prompt=("args-prompt", {"city": "Paris"}, "Paris"),
    completion=("completable-prompt", ("department", "Eng"), "Engineering"),
    structured=(
        "get-structured-content",
        {"location": "Chicago"},
        {"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82},
    ),
)

MODERN, LEGACY = ("modern", "2026-07-28"), ("legacy", "2025-11-25")
PEERS = [
    Peer("sdk-modern", _argv(demo_server), *MODERN, **DEMO_COMMON),
    Peer("sdk-legacy", _argv(lambda: demo_server("--legacy-only")), *LEGACY, **DEMO_COMMON),
    Peer("everything", _argv(everything_server), *LEGACY, **EVERYTHING),
    Peer("http-sdk-modern", lambda: _url(sdk_http("modern")), *MODERN, **DEMO_COMMON),
    Peer(
        "http-sdk-modern-json",
        lambda: _url(sdk_http("modern", json_response=True)),
        *MODERN,
        **DEMO_COMMON,
        streams_progress=False,
    ),
    Peer("http-sdk-legacy", lambda: _url(sdk_http("legacy")), *LEGACY, **DEMO_COMMON),
    Peer(
        "http-sdk-legacy-json",
        lambda: _url(sdk_http("legacy", json_response=True)),
        *LEGACY,
        **DEMO_COMMON,
        back_channel=False,
        streams_progress=False,
    ),
    Peer(
        "http-sdk-legacy-stateless",
        lambda: _url(sdk_http("legacy", stateless=True)),
        *LEGACY,
        **DEMO_COMMON,
        back_channel=False,
    ),
    Peer("http-sdk-sse", lambda: _url(sdk_http("legacy", sse=True)), *LEGACY, **DEMO_COMMON),
    Peer("http-everything", lambda: _url(everything_http("streamableHttp")), *LEGACY, **EVERYTHING),
    Peer("http-everything-sse", lambda: _url(everything_http("sse")), *LEGACY, **EVERYTHING),
]

SAMPLED_TEXT = "sampled by the test handler"
ELICITED_NAME = "Ada Lovelace"


def _elicitation(params: dict[str, Any]) -> dict[str, Any]:
    """Fill every field of the form: names get our marker, others a value of their type."""
    schema = params.get("requestedSchema") or {}
    content: dict[str, Any] = {}
    for key, spec in (schema.get("properties") or {}).items():
        kind = spec.get("type")
        if "enum" in spec:
            content[key] = spec["enum"][0]
        elif kind == "string":
            content[key] = ELICITED_NAME if "name" in key.lower() else "x"
        elif kind in ("number", "integer"):
            content[key] = spec.get("minimum", 1)
        elif kind == "boolean":
            content[key] = True
        elif kind == "array":
            content[key] = []
    return {"action": "accept", "content": content}


async def _sampling(params: dict[str, Any]) -> dict[str, Any]:
    assert params["messages"], "a sampling request carries messages"
    return {"role": "assistant", "content": {"type": "text", "text": SAMPLED_TEXT}, "model": "test-model"}


@pytest.fixture(params=PEERS, ids=[p.id for p in PEERS], scope="module")
def peer(request: pytest.FixtureRequest) -> Iterator[Peer]:
    """The peer, started once for the module (an HTTP server) or once per client (stdio)."""
    with request.param.start() as target:
        yield replace(request.param, target=target)


def _client(peer: Peer, **options: Any) -> Client:
    return Client(peer.target, elicitation=_elicitation, sampling=_sampling, roots=["/tmp"], **options)


pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaked_processes")]


async def test_era_is_negotiated(peer: Peer) -> None:
    async with _client(peer) as client:
        assert client.status == "ready"
        assert client.era == peer.era
        assert client.protocol_version == peer.version
        assert client.server_info.get("name")
        assert "tools" in client.server_capabilities


async def test_pinned_legacy_protocol_works_on_every_server(peer: Peer) -> None:
    async with _client(peer, protocol="legacy") as client:
        assert client.era == "legacy"
        tool, arguments, expected = peer.echo
        assert expected in (await client.call_tool(tool, arguments)).text


async def test_tools_are_listed_and_called(peer: Peer) -> None:
    async with _client(peer) as client:
        names = {tool.name for tool in await client.list_tools()}
        for tool_name in (peer.echo[0], peer.add[0], peer.slow[0], peer.elicit[0], peer.sample[0]):
            assert tool_name in names
        tool, arguments, expected = peer.echo
        result = await client.call_tool(tool, arguments)
        assert not result.is_error
        assert expected in result.text
        tool, arguments, expected = peer.add
        assert expected in (await client.call_tool(tool, arguments)).text


async def test_structured_content_is_returned(peer: Peer) -> None:
    async with _client(peer) as client:
        tool, arguments, expected = peer.structured
        result = await client.call_tool(tool, arguments)
        assert not result.is_error
        assert result.structured_content == expected
        assert result.data == expected


async def test_resources_templates_and_reads(peer: Peer) -> None:
    async with _client(peer) as client:
        uri, expected = peer.resource
        resources = await client.list_resources()
        assert uri in {r.uri for r in resources}
        contents = await client.read_resource(uri)
        assert expected in contents.text
        templates = await client.list_resource_templates()
        assert peer.template in {t.uri_template for t in templates}


async def test_prompts_and_completion(peer: Peer) -> None:
    async with _client(peer) as client:
        name, arguments, expected = peer.prompt
        prompts = await client.list_prompts()
        assert name in {p.name for p in prompts}
        assert expected in (await client.get_prompt(name, arguments)).text
        ref, argument, value = peer.completion
        completion = await client.complete(ref, argument)
        assert value in completion.values


async def test_progress_is_delivered_in_order(peer: Peer) -> None:
    seen: list[tuple[float, float | None]] = []
    async with _client(peer) as client:
        tool, arguments, steps = peer.progress
        result = await client.call_tool(
            tool, arguments, progress=lambda p, total, message: seen.append((p, total))
        )
        assert not result.is_error
    if not peer.streams_progress:
        assert seen == [], "a JSON-only response cannot carry progress"
        return
    assert len(seen) == steps
    assert [p for p, _ in seen] == sorted(p for p, _ in seen)
    assert seen[-1][0] == seen[-1][1] == steps


async def test_timeout_cancels_the_request_on_the_server(peer: Peer) -> None:
    """After our timeout the server is told to cancel, so it never sends the (late) result."""
    async with _client(peer) as client:
        tool, arguments, runs_for = peer.slow
        with pytest.raises(McpError) as caught:
            await client.call_tool(tool, arguments, timeout=0.4)
        assert caught.value.kind == "timeout"
        assert caught.value.code == -32001
        await anyio.sleep(runs_for + 0.5)  # long enough for an uncancelled call to have answered
        assert client.stats.timeouts == 1
        assert client.stats.late_responses == 0, "the server answered a request it was asked to cancel"
        tool, arguments, expected = peer.echo
        assert expected in (await client.call_tool(tool, arguments)).text


async def _no_back_channel(client: Client, tool: str, arguments: dict[str, Any]) -> None:
    """A server without a channel for requests to us refuses at once with its own error."""
    with pytest.raises(McpError) as caught:
        await client.call_tool(tool, arguments, timeout=20)
    assert caught.value.kind == "server"


async def test_sampling_is_answered_by_the_handler(peer: Peer) -> None:
    async with _client(peer) as client:
        tool, arguments = peer.sample
        if not peer.back_channel:
            return await _no_back_channel(client, tool, arguments)
        result = await client.call_tool(tool, arguments, timeout=20)
        assert not result.is_error, result.text
        assert SAMPLED_TEXT in result.text


async def test_elicitation_is_answered_by_the_handler(peer: Peer) -> None:
    async with _client(peer) as client:
        tool, arguments = peer.elicit
        if not peer.back_channel:
            return await _no_back_channel(client, tool, arguments)
        result = await client.call_tool(tool, arguments, timeout=20)
        assert not result.is_error, result.text
        text = result.text + json.dumps(result.structured_content)
        assert ELICITED_NAME in text or "accept" in text


async def test_elicitation_declined_reaches_the_tool(peer: Peer) -> None:
    async with Client(peer.target, elicitation=lambda params: None) as client:
        tool, arguments = peer.elicit
        if not peer.back_channel:
            return await _no_back_channel(client, tool, arguments)
        result = await client.call_tool(tool, arguments, timeout=20)
        assert ELICITED_NAME not in result.text
        assert "decline" in result.text.lower() or "no problem" in result.text.lower()


async def test_ping_and_stats(peer: Peer) -> None:
    async with _client(peer) as client:
        before = client.stats
        assert isinstance(await client.ping(), float)
        stats = client.stats
        # the ping went out and came back as a result (a modern server answers server/discover)
        assert stats.requests == before.requests + 1
        assert stats.outcomes.get("ok", 0) == before.outcomes.get("ok", 0) + 1
        assert stats.in_flight == 0
        assert stats.timeouts == stats.late_responses == 0


async def test_concurrent_calls_on_one_connection(peer: Peer) -> None:
    async with _client(peer) as client:
        tool, _, _ = peer.echo
        key = next(iter(peer.echo[1]))
        results: dict[int, str] = {}

        async def one(i: int) -> None:
            results[i] = (await client.call_tool(tool, {key: f"message {i}"})).text

        async with anyio.create_task_group() as tg:
            for i in range(50):
                tg.start_soon(one, i)
        assert all(f"message {i}" in results[i] for i in range(50))
