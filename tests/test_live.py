"""Live state against real servers: lists kept fresh, subscriptions, restarts, floods, telemetry.

Run over real stdio pipes against the same independent servers as ``test_servers.py``:

* ``sdk-modern``: our demo server on the official Python SDK, dual-era: the client lands on the
  2026-07-28 era and hears of changes on its ``subscriptions/listen`` stream.
* ``sdk-legacy``: the same server restricted to the ``initialize`` handshake: plain
  ``list_changed`` notifications and ``resources/subscribe``.
* ``sdk-dual-legacy``: the dual-era server again, with the client pinned to the handshake era.
* ``everything``: npm ``@modelcontextprotocol/server-everything`` (TypeScript SDK, 2025-11-25). Its
  run-time change is a session resource (``gzip-file-as-resource``, announced with
  ``resources/list_changed``); ``toggle-subscriber-updates`` sends ``resources/updated`` for the
  subscribed URIs at once and then every 5 s.

The list-change and subscription tests also run over HTTP (``http-*``): the demo server's
Streamable HTTP modern (listen streams are long POSTs) and legacy-only (the GET stream), its
HTTP+SSE binding, and server-everything's Streamable HTTP.

The flood and no-replay tests use ``tests/servers/flood_server.py`` (stdlib only; legacy handshake,
or ``--modern`` with its own ``subscriptions/listen`` streams).
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
import signal
import time
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import anyio
import pytest

from mcp_notebook import Client
from mcp_notebook.client import Event
from mcp_notebook.protocol._jsonrpc import Notification
from tests.conftest import demo_server, everything_server, python_server
from tests.http_peers import everything_http, sdk_http

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaked_processes")]

MARKER = "zq-SECRET-ARGUMENT-7731"


@dataclass(frozen=True)
class LivePeer:
    id: str
    argv: Callable[[], list[str]]
    era: str
    #: The list a run-time change shows up in: "tools" or "resources".
    kind: str
    #: name -> (tool, arguments) that makes the server add an item and announce the list change.
    change: Callable[[str], tuple[str, dict[str, Any]]]
    #: name -> the new item's key in that list (a tool name or a resource URI).
    item: Callable[[str], str]
    #: A resource to subscribe to, and the tool call that makes the server announce its update.
    uri: str
    update: tuple[str, dict[str, Any]]
    #: An echo tool call: (tool, argument name).
    echo: tuple[str, str]
    #: The client's ``protocol`` option.
    protocol: str = "auto"


def _gzip_resource(name: str) -> tuple[str, dict[str, Any]]:
    data = "data:text/plain;base64," + base64.b64encode(b"live state").decode()
    return "gzip-file-as-resource", {"name": name, "data": data, "outputType": "resourceLink"}


DEMO: dict[str, Any] = dict(
    kind="tools",
    change=lambda name: ("add_tool", {"name": name}),
    item=lambda name: name,
    uri="demo://note",
    update=("set_note", {"text": "changed by the test"}),
    echo=("echo", "text"),
)

PEERS = [
    LivePeer("sdk-modern", lambda: demo_server(), "modern", **DEMO),
    LivePeer("sdk-legacy", lambda: demo_server("--legacy-only"), "legacy", **DEMO),
    # The dual-era server's handshake side (a legacy client of a server that also speaks modern).
    LivePeer("sdk-dual-legacy", lambda: demo_server(), "legacy", protocol="legacy", **DEMO),
    LivePeer(
        "everything",
        everything_server,
        "legacy",
        kind="resources",
        change=_gzip_resource,
        item=lambda name: f"demo://resource/session/{name}",
        uri="demo://resource/static/document/features.md",
        update=("toggle-subscriber-updates", {}),
        echo=("echo", "message"),
    ),
]


@contextlib.contextmanager
def _over_http(peer: LivePeer, start: Callable[[], Any]) -> Iterator[LivePeer]:
    with start() as server:
        yield replace(peer, id=f"http-{peer.id}", argv=lambda: server.url)


# The same servers over HTTP: Streamable HTTP modern (listen streams on POST), legacy (the GET
# stream), the 2024-11-05 HTTP+SSE binding, and server-everything's Streamable HTTP.
HTTP_PEERS: list[tuple[LivePeer, Callable[[], Any]]] = [
    (PEERS[0], lambda: sdk_http("modern")),
    (PEERS[1], lambda: sdk_http("legacy")),
    (PEERS[1], lambda: sdk_http("legacy", sse=True)),
    (PEERS[3], lambda: everything_http("streamableHttp")),
]


@pytest.fixture(params=PEERS, ids=[p.id for p in PEERS])
def peer(request: pytest.FixtureRequest) -> LivePeer:
    return request.param


@pytest.fixture(
    params=[*((p, None) for p in PEERS), *HTTP_PEERS],
    ids=[*(p.id for p in PEERS), "http-sdk-modern", "http-sdk-legacy", "http-sdk-sse", "http-everything"],
)
def any_peer(request: pytest.FixtureRequest) -> Iterator[LivePeer]:
    """A peer over stdio or, started here, over HTTP."""
    peer, start = request.param
    if start is None:
        yield peer
        return
    with _over_http(peer, start) as over_http:
        yield over_http


# --- helpers ------------------------------------------------------------------------------------


def _client(peer: LivePeer, **options: Any) -> Client:
    # server-everything keeps running after stdin closes while its 5 s update timer is on, so the
    # client's escalation to SIGTERM (after shutdown_timeout) is what stops it: keep that short.
    return Client(peer.argv(), protocol=peer.protocol, shutdown_timeout=0.5, **options)


async def _fetch(client: Client, kind: str) -> list[Any]:
    if kind == "tools":
        return await client.list_tools()
    return await client.list_resources()


def _cached_keys(client: Client, kind: str) -> set[str]:
    if kind == "tools":
        return {tool.name for tool in client.cached_tools or ()}
    return {resource.uri for resource in client.cached_resources or ()}


def _keys(items: list[Any], kind: str) -> set[str]:
    return {item.name if kind == "tools" else item.uri for item in items}


async def _poll(predicate: Callable[[], bool], timeout: float) -> bool:
    """Poll ``predicate`` (counters and caches have no event to wait on) for up to ``timeout`` s."""
    deadline = anyio.current_time() + timeout
    while not predicate() and anyio.current_time() < deadline:  # noqa: ASYNC110
        await anyio.sleep(0.01)
    return predicate()


async def _next(queue: Any, predicate: Callable[[Notification], bool], timeout: float) -> Notification:
    with anyio.fail_after(timeout):
        async for notification in queue:
            if predicate(notification):
                return notification
    raise AssertionError("the notification stream ended")


def _updated(uri: str) -> Callable[[Notification], bool]:
    return lambda n: n.method == "notifications/resources/updated" and (n.params or {}).get("uri") == uri


def _kill_server(client: Client) -> int:
    pid = client._transport.pid  # the stdio transport's current server process
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    return pid


# --- a server that changes a list at run time ---------------------------------------------------


async def test_list_change_reaches_the_cache_within_a_second(any_peer: LivePeer) -> None:
    """The cache learns of a run-time addition by itself; nobody calls list_*() again."""
    peer = any_peer
    async with _client(peer) as client:
        assert client.era == peer.era
        assert client.cached_tools is None
        # Modern: the listen stream the client opened by itself is acknowledged (soon after connect).
        assert await _poll(lambda: client.freshness(peer.kind).watched, 2), client.freshness(peer.kind)
        before = _keys(await _fetch(client, peer.kind), peer.kind)
        name = "added_at_run_time.gz" if peer.kind == "resources" else "added_at_run_time"
        new = peer.item(name)
        assert new not in before
        freshness = client.freshness(peer.kind)
        assert freshness.fresh, freshness
        fetched_at = freshness.fetched_at

        tool, arguments = peer.change(name)
        result = await client.call_tool(tool, arguments)
        assert not result.is_error, result.text
        assert await _poll(lambda: new in _cached_keys(client, peer.kind), 1.0), (
            f"{new!r} did not reach the cached {peer.kind} within 1 s; "
            f"refreshes={client.refresh_counts} freshness={client.freshness(peer.kind)}"
        )
        assert client.refresh_counts[peer.kind] >= 1
        freshness = client.freshness(peer.kind)
        assert freshness.fresh
        assert not freshness.stale
        assert freshness.fetched_at is not None
        assert fetched_at is not None
        assert freshness.fetched_at > fetched_at
        assert new in _keys(await _fetch(client, peer.kind), peer.kind)
        if peer.kind == "tools":  # the added tool works, and was validated against the fresh list
            echoed = await client.call_tool(new, {"text": "from the added tool"})
            assert echoed.text == "from the added tool"


# --- resource subscriptions ---------------------------------------------------------------------


async def test_resource_update_reaches_a_subscriber(any_peer: LivePeer) -> None:
    peer = any_peer
    async with _client(peer) as client, client.notifications() as queue:
        await client.subscribe(peer.uri)
        assert client.subscriptions == {peer.uri}
        tool, arguments = peer.update
        assert not (await client.call_tool(tool, arguments)).is_error
        notification = await _next(queue, _updated(peer.uri), 5)
        assert notification.params["uri"] == peer.uri
        if peer.kind == "tools":  # the demo: the update is real
            assert (await client.read_resource(peer.uri)).text == arguments["text"]


# --- the server dies and is restarted -----------------------------------------------------------


async def test_server_restart_restores_caches_subscription_and_listen_stream(peer: LivePeer) -> None:
    events: list[Event] = []
    client = _client(peer, backoff_initial=0.05)
    client.on_event(events.append)
    async with client, client.notifications() as queue:
        await client.list_tools()
        await _fetch(client, peer.kind)
        await client.subscribe(peer.uri)
        if peer.era == "modern":
            assert await _poll(lambda: client.stats.streams >= 1, 2), "no listen stream before the restart"
        name = "gone_after_restart.gz" if peer.kind == "resources" else "gone_after_restart"
        tool, arguments = peer.change(name)
        await client.call_tool(tool, arguments)
        assert await _poll(lambda: peer.item(name) in _cached_keys(client, peer.kind), 1.0)
        fetched_at = client.freshness(peer.kind).fetched_at
        refreshes = client.refresh_counts[peer.kind]
        tools_refreshes = client.refresh_counts["tools"]

        killed_at = time.time()
        old_pid = _kill_server(client)
        assert await _poll(lambda: client.stats.reconnects == 1 and client.status == "ready", 10), (
            f"no restart: status={client.status} stats={client.stats}"
        )
        assert client._transport.pid not in (None, old_pid)

        # The caches were re-fetched from the new process: the run-time addition is gone.
        assert await _poll(lambda: client.refresh_counts[peer.kind] > refreshes, 3), client.refresh_counts
        assert await _poll(lambda: client.freshness(peer.kind).fresh, 3), client.freshness(peer.kind)
        assert client.freshness(peer.kind).fetched_at > fetched_at
        assert peer.item(name) not in _cached_keys(client, peer.kind)
        assert client.refresh_counts["tools"] > tools_refreshes
        assert client.cached_tools, "the tool list was not refetched after the restart"

        # The subscription is back, and (modern) the listen stream too.
        assert client.subscriptions == {peer.uri}
        renewed = "listening" if peer.era == "modern" else "renewed"
        assert await _poll(
            lambda: any(
                e.time > killed_at and e.kind == "subscription" and e.data.get("action") == renewed
                for e in events
            ),
            5,
        ), f"the subscription was not renewed: {[(e.kind, e.data) for e in events if e.time > killed_at]}"
        if peer.era == "modern":
            assert await _poll(lambda: client.stats.streams >= 1, 2), client.stats
        tool, arguments = peer.update
        assert not (await client.call_tool(tool, arguments)).is_error
        await _next(queue, _updated(peer.uri), 5)
        assert client.stats.reconnects == 1


# --- a flood of list_changed --------------------------------------------------------------------


SDK_PEERS = [p for p in PEERS if p.kind == "tools"]


@pytest.mark.parametrize("sdk_peer", SDK_PEERS, ids=[p.id for p in SDK_PEERS])
async def test_a_burst_of_real_changes_costs_a_few_refetches(sdk_peer: LivePeer) -> None:
    """300 tools added at once on the SDK server: every one cached, in a handful of refetches."""
    async with _client(sdk_peer) as client, client.notifications() as queue:
        await client.list_tools()
        names = {f"burst_{i}" for i in range(300)}
        started = anyio.current_time()
        async with anyio.create_task_group() as tg:
            for name in names:
                tg.start_soon(client.call_tool, "add_tool", {"name": name})
        assert await _poll(
            lambda: client.freshness("tools").fresh and names <= _cached_keys(client, "tools"), 5
        ), f"the cache missed tools: {len(names - _cached_keys(client, 'tools'))}"
        assert client.stats.notifications >= 300
        assert 1 <= client.refresh_counts["tools"] <= 4, client.refresh_counts
        methods: list[str] = []
        with anyio.move_on_after(0.2):
            async for notification in queue:
                methods.append(notification.method)
        # Coalesced: the first at once, then at most one per window (0.25 s, the client's default)
        # for as long as the burst lasted (3 s on a loaded machine), and one trailing delivery. A
        # queue that passes each on delivers all 300.
        deliveries = methods.count("notifications/tools/list_changed")
        assert 1 <= deliveries <= 2 + (anyio.current_time() - started) / 0.25, (deliveries, methods)


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_flood_of_list_changed_is_coalesced_and_memory_stays_bounded(era: str) -> None:
    """10,000 tools/list_changed in one second: a handful of refetches, and the final list.

    Modern: the flood travels on the client's subscriptions/listen stream.
    """
    argv = python_server("flood_server.py", *(["--modern"] if era == "modern" else []))
    async with Client(argv) as client, client.notifications(100) as queue:
        assert client.era == era
        if era == "modern":
            assert await _poll(lambda: client.freshness("tools").watched, 5), "no listen stream"

        async def tools_list_requests() -> int:
            result = await client.call_tool("list_requests", {}, validate=False)
            return int(result.structured_content["tools_list"])

        names = {tool.name for tool in await client.list_tools()}
        assert "flooded_1" not in names
        before = await tools_list_requests()
        assert before == 1

        tracemalloc.start()
        try:
            baseline, _ = tracemalloc.get_traced_memory()
            with anyio.fail_after(10):
                result = await client.call_tool(
                    "flood_list_changed", {"count": 10_000, "seconds": 1.0}, validate=False
                )
            assert "sent 10000" in result.text
            # The final list (changed just before the last notification) must end up cached.
            settled = await _poll(
                lambda: (
                    client.freshness("tools").fresh
                    and "flooded_1" in {tool.name for tool in client.cached_tools or ()}
                ),
                5,
            )
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert settled, f"the cache did not settle on the final list: {client.freshness('tools')}"
        assert client.stats.notifications >= 10_000
        await anyio.sleep(0.3)  # any refetch still due would have started by now
        refetches = await tools_list_requests() - before
        assert 1 <= refetches <= 4, f"{refetches} tools/list requests for one flood"
        assert client.refresh_counts["tools"] == refetches
        growth = (peak - baseline) / 2**20
        assert growth < 20, f"memory grew by {growth:.1f} MiB during the flood"

        methods: list[str] = []
        with anyio.move_on_after(0.2):
            async for notification in queue:
                methods.append(notification.method)
        delivered = methods.count("notifications/tools/list_changed")
        assert 1 <= delivered <= 12, f"{delivered} coalesced list_changed deliveries for one flood"
        assert queue.dropped == 0
        assert "flooded_1" in {tool.name for tool in await client.list_tools()}


# --- no replay: what changed before the listen stream was acknowledged -----------------------------


@pytest.mark.parametrize("when", ["connect", "restart"])
async def test_a_list_fetched_before_the_listen_ack_is_refetched_after_it(when: str) -> None:
    """PROTOCOL.md §3.7: a listen stream has no replay, so after (re-)listening, re-fetch.

    The server changes its tool list while it holds back the listen acknowledgement; no stream can
    announce that change. A list fetched before the acknowledgement (the caller's first fetch, or
    the refetch right after a restart) must not be served as fresh once the stream is up.
    """
    argv = python_server("flood_server.py", "--modern", "--change-before-ack", "0.5")
    async with Client(argv, backoff_initial=0.05) as client:
        first = {tool.name for tool in await client.list_tools()}
        assert not any(name.startswith("unannounced_") for name in first), "fetched after the ack"
        if when == "restart":
            assert await _poll(lambda: client.freshness("tools").watched, 5)
            await anyio.sleep(1.1)  # past min_refresh_interval: the restart's refetch is not delayed
            refreshes = client.refresh_counts["tools"]
            _kill_server(client)
            assert await _poll(lambda: client.stats.reconnects == 1 and client.status == "ready", 10)
            assert await _poll(lambda: client.refresh_counts["tools"] > refreshes, 2), client.refresh_counts
        assert await _poll(lambda: client.freshness("tools").watched, 5), "the listen was not acknowledged"
        await anyio.sleep(0.2)
        state = (await client.call_tool("list_requests", {}, validate=False)).structured_content
        on_server = set(state["tools"])
        assert state["unannounced"] == 1
        listed = {tool.name for tool in await client.list_tools()}
        assert listed == on_server, (
            f"list_tools() served a list from before the listen ack as fresh: missing {on_server - listed}, "
            f"freshness={client.freshness('tools')}, refreshes={client.refresh_counts}"
        )


# --- telemetry ----------------------------------------------------------------------------------


async def test_events_report_activity_but_never_argument_values(
    peer: LivePeer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="mcp_notebook.events")
    events: list[Event] = []
    client = _client(peer)
    unhook = client.on_event(events.append)
    async with client:
        await _fetch(client, peer.kind)
        tool, argument = peer.echo
        assert MARKER in (await client.call_tool(tool, {argument: MARKER})).text
        name = f"{MARKER}.gz" if peer.kind == "resources" else MARKER
        change_tool, arguments = peer.change(name)
        await client.call_tool(change_tool, arguments)
        if peer.kind == "tools":
            await client.call_tool("set_note", {"text": MARKER})
            await client.call_tool("fail", {"message": MARKER})
        # An argument the server rejects: the error names the value, the event must not.
        await client.call_tool(tool, {argument: 12345, "extra": MARKER}, validate=False)
        wanted = {"state", "request_start", "request", "notification", "cache_refresh"}
        assert await _poll(lambda: wanted <= {e.kind for e in events}, 3), {e.kind for e in events}
    unhook()
    states = [e.data["state"] for e in events if e.kind == "state"]
    assert "negotiating" in states, states
    assert "ready" in states, states
    assert any(e.kind == "cache_refresh" and e.data.get("list") == peer.kind for e in events)
    assert any(
        e.kind == "request" and e.data.get("method") == "tools/call" and e.data.get("outcome") == "ok"
        for e in events
    )
    for event in events:
        assert MARKER not in repr(event), event
        assert MARKER not in json.dumps(event.data, default=str), event
    logged = [record.getMessage() for record in caplog.records if record.name == "mcp_notebook.events"]
    assert logged, "events are logged at DEBUG"
    assert not [line for line in logged if MARKER in line]
