"""The live layer (cached lists, coalesced change notifications, subscriptions, events) over the
in-memory fake server.

Each test names the behaviour it protects and asserts what a user of ``Client`` sees (cached lists,
freshness, notifications, refresh counts, events) and what the server received on the wire. The
fake's ``subscriptions/listen`` streams come from ``tests/fakes_live.py``. ``min_refresh_interval``
is fixed at 1 s inside ``LiveState``; tests that count background refreshes wait past it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from mcp_notebook import McpError
from mcp_notebook.client import Client
from tests.fakes import FakeConnection, eventually
from tests.fakes_live import SUBSCRIPTION_ID, ListenServer, with_subscription
from tests.timing import backend_param

pytestmark = pytest.mark.anyio

TOOLS_CHANGED = "notifications/tools/list_changed"
UPDATED = "notifications/resources/updated"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
LIST_CHANGED_TOOLS = {"tools": {"listChanged": True}}


async def until_watched(client: Client, kind: str = "tools") -> None:
    """Until the client has taken in the acknowledgement of a stream that announces ``kind`` changes."""
    await eventually(lambda: client.freshness(kind).watched)


def tool(name: str) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object"}}


def names(tools: list[Any] | None) -> list[str] | None:
    return None if tools is None else [t.name for t in tools]


def list_requests(server: ListenServer, method: str = "tools/list") -> int:
    return len(server.requests(method))


async def next_notification(queue: Any, timeout: float = 2.0) -> Any:
    with anyio.fail_after(timeout):
        return await anext(queue)


# --- the cache: generation guard and freshness ---------------------------------------------------


async def test_list_answer_that_raced_a_list_changed_is_not_stored_as_fresh():
    server = ListenServer("legacy", capabilities=LIST_CHANGED_TOOLS, tools=[tool("new")])
    gate = anyio.Event()

    async def slow_old_list(message: dict[str, Any], conn: FakeConnection) -> Any:
        await gate.wait()
        return {"tools": [tool("old")]}

    server.on("tools/list", slow_old_list)
    events: list[Any] = []
    async with Client(server, list_changed_window=0.05) as client:
        client.on_event(events.append)
        queue = client.notifications()
        got: list[Any] = []
        async with anyio.create_task_group() as tg:

            async def lister() -> None:
                got.append(await client.list_tools())

            tg.start_soon(lister)
            await server.wait_for("tools/list")
            await server.connection.notify(TOOLS_CHANGED)
            assert (await next_notification(queue)).method == TOOLS_CHANGED  # the client has heard it
            gate.set()
        assert names(got[0]) == ["old"]  # the caller gets the answer it asked for...
        assert client.cached_tools is None  # ...but it is not kept: it may predate the change
        assert not client.freshness("tools").fresh
        del server.handlers["tools/list"]  # the server answers with its current list from now on
        assert names(await client.list_tools()) == ["new"]
        # The caller's second fetch, and possibly the background refresh the notice asked for
        # (a list someone fetched is kept fresh), both see the current list.
        assert list_requests(server) in (2, 3)
        assert names(client.cached_tools) == ["new"]
        assert client.freshness("tools").fresh
        refreshes = lambda: [e for e in events if e.kind == "cache_refresh"]  # noqa: E731
        await eventually(lambda: len(refreshes()) == list_requests(server))
    stored = [e.data["stored"] for e in events if e.kind == "cache_refresh"]
    assert stored[0] is False
    assert all(stored[1:])


async def test_modern_ttl_is_honoured_then_the_list_is_fetched_again():
    server = ListenServer("modern", capabilities={"tools": {}}, tools=[tool("a")])

    async def list_with_ttl(message: dict[str, Any], conn: FakeConnection) -> Any:
        return {"tools": server.tools, "ttlMs": 300, "cacheScope": "private"}

    server.on("tools/list", list_with_ttl)
    async with Client(server) as client:
        await client.list_tools()
        await client.list_tools()
        assert list_requests(server) == 1
        freshness = client.freshness("tools")
        assert freshness.fresh
        assert not freshness.watched
        assert freshness.expires_in is not None
        assert 0 < freshness.expires_in <= 0.3
        await anyio.sleep(0.35)
        assert not client.freshness("tools").fresh
        await client.list_tools()
        assert list_requests(server) == 2
    assert server.listen_requests() == []  # nothing to listen for: no listChanged capability


async def test_legacy_list_changed_capability_serves_the_second_list_from_the_cache():
    server = ListenServer("legacy", capabilities=LIST_CHANGED_TOOLS, tools=[tool("a")])
    async with Client(server) as client:
        await client.list_tools()
        assert names(await client.list_tools()) == ["a"]
        assert list_requests(server) == 1
        freshness = client.freshness("tools")
        assert freshness.fresh
        assert freshness.watched
        assert freshness.expires_in == 0  # no ttl: fresh only because the server announces changes


async def test_legacy_without_list_changed_fetches_every_time_and_ignores_ttl():
    server = ListenServer("legacy", capabilities={"tools": {}}, tools=[tool("a")])

    async def list_with_ttl(message: dict[str, Any], conn: FakeConnection) -> Any:
        return {"tools": server.tools, "ttlMs": 60_000}  # not a legacy field: ignored

    server.on("tools/list", list_with_ttl)
    async with Client(server) as client:
        for _ in range(3):
            await client.list_tools()
        assert list_requests(server) == 3
        assert not client.freshness("tools").fresh
        assert not client.freshness("tools").watched


async def test_modern_listen_that_honours_tools_list_changed_keeps_the_list_fresh():
    server = ListenServer("modern", capabilities=LIST_CHANGED_TOOLS, tools=[tool("a")])
    async with Client(server) as client:
        listen = await server.next_listen(1)
        assert listen.filter == {"toolsListChanged": True}
        await until_watched(client)
        await client.list_tools()
        await client.list_tools()
        assert list_requests(server) == 1
        assert client.freshness("tools").watched
        assert client.stats.streams == 1


async def test_modern_list_changed_on_the_stream_invalidates_and_refreshes_the_list():
    server = ListenServer("modern", capabilities=LIST_CHANGED_TOOLS, tools=[tool("v1")])
    async with Client(server, list_changed_window=0.05) as client:
        listen = await server.next_listen(1)
        await until_watched(client)
        await client.list_tools()
        queue = client.notifications()
        server.tools = [tool("v2")]
        await listen.notify(TOOLS_CHANGED)
        assert (await next_notification(queue)).method == TOOLS_CHANGED
        await eventually(lambda: names(client.cached_tools) == ["v2"])
        assert client.refresh_counts["tools"] == 1
        assert client.freshness("tools").fresh
        # the same notice from a stream that is not (or no longer) ours changes nothing
        await server.connection.notify(TOOLS_CHANGED, with_subscription(None, 9999))
        await anyio.sleep(0.1)
        assert client.freshness("tools").fresh
        assert len(queue) == 0


async def test_modern_listen_that_does_not_honour_tools_list_changed_does_not_keep_it_fresh(caplog):
    server = ListenServer("modern", capabilities=LIST_CHANGED_TOOLS, tools=[tool("a")], honour=lambda f: {})
    with caplog.at_level(logging.WARNING, logger="mcp_notebook"):
        async with Client(server) as client:
            await server.next_listen(1)
            await eventually(lambda: "honoured only part" in caplog.text)
            await client.list_tools()
            await client.list_tools()
            assert list_requests(server) == 2
            assert not client.freshness("tools").watched


async def test_list_fetched_before_the_listen_was_acknowledged_is_not_trusted_as_watched():
    """A change between the fetch and the acknowledgement was announced to nobody (no replay)."""
    server = ListenServer("modern", capabilities=LIST_CHANGED_TOOLS, tools=[tool("v1")])
    server.hold_acks()
    async with Client(server) as client:
        await eventually(lambda: len(server.listen_requests()) == 1)
        assert names(await client.list_tools()) == ["v1"]
        server.tools = [tool("v2")]  # no acknowledged stream exists to announce this on
        server.release_acks()
        await server.next_listen(1)
        await until_watched(client)
        assert names(await client.list_tools()) == ["v2"]


# --- list_changed coalescing -----------------------------------------------------------------------


async def _collect(queue: Any, method: str, into: list[float]) -> None:
    async for notification in queue:
        if notification.method == method:
            into.append(anyio.current_time())


@pytest.mark.parametrize("anyio_backend", [backend_param("trio-virtual")], ids=["trio-virtual"])
async def test_list_changed_burst_is_delivered_at_most_twice_and_refreshed_at_most_twice():
    """On trio's virtual clock (tests/timing.py): the burst takes its 40 ms exactly, however busy
    the machine, so it always falls within one window."""
    server = ListenServer("legacy", capabilities=LIST_CHANGED_TOOLS, tools=[tool("a")])
    window = 0.1
    async with Client(server, list_changed_window=window) as client:
        await client.list_tools()
        deliveries: list[float] = []
        async with client.notifications() as queue, anyio.create_task_group() as tg:
            tg.start_soon(_collect, queue, TOOLS_CHANGED, deliveries)
            start = anyio.current_time()
            for _ in range(5):  # 50 notifications within ~40 ms
                for _ in range(10):
                    await server.connection.notify(TOOLS_CHANGED)
                await anyio.sleep(0.008)
            burst_end = anyio.current_time()
            await anyio.sleep(1.3)  # past the trailing delivery and min_refresh_interval (1 s)
            tg.cancel_scope.cancel()
        assert burst_end - start < window  # by construction on the virtual clock
        assert 1 <= len(deliveries) <= 2, deliveries
        assert deliveries[0] < burst_end  # the first arrives at once, not after the window
        refreshes = client.refresh_counts["tools"]
        assert 1 <= refreshes <= 2
        assert list_requests(server) == 1 + refreshes
        assert client.freshness("tools").fresh


@pytest.mark.parametrize("anyio_backend", [backend_param("trio-virtual")], ids=["trio-virtual"])
async def test_sustained_list_changed_flood_refreshes_at_most_once_a_second():
    server = ListenServer("legacy", capabilities=LIST_CHANGED_TOOLS, tools=[tool("a")])
    window = 0.05
    flood = 2.5
    async with Client(server, list_changed_window=window) as client:
        await client.list_tools()
        deliveries: list[float] = []
        async with client.notifications() as queue, anyio.create_task_group() as tg:
            tg.start_soon(_collect, queue, TOOLS_CHANGED, deliveries)
            end = anyio.current_time() + flood
            sent = 0
            while anyio.current_time() < end:
                await server.connection.notify(TOOLS_CHANGED)
                sent += 1
                await anyio.sleep(0.01)
            await anyio.sleep(1.2)  # let the last trailing refresh happen
            tg.cancel_scope.cancel()
        refreshes = client.refresh_counts["tools"]
        assert 2 <= refreshes <= 4, refreshes
        assert list_requests(server) == 1 + refreshes
        assert 5 <= len(deliveries) <= flood / window + 3, (len(deliveries), sent)
        await eventually(lambda: client.freshness("tools").fresh)


# --- eager lists ---------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_eager_lists_fetches_every_list_the_server_offers_after_connecting(era):
    server = ListenServer(
        era,
        capabilities={"tools": {}, "resources": {}, "prompts": {}},
        tools=[tool("t")],
        resources=[{"uri": "demo://r", "name": "r"}],
        templates=[{"uriTemplate": "demo://r/{x}", "name": "rt"}],
        prompts=[{"name": "p"}],
    )
    async with Client(server, eager_lists=True) as client:
        await eventually(
            lambda: (
                None
                not in (
                    client.cached_tools,
                    client.cached_resources,
                    client.cached_resource_templates,
                    client.cached_prompts,
                )
            )
        )
        assert names(client.cached_tools) == ["t"]
        assert [p.name for p in client.cached_prompts or []] == ["p"]
        for method in ("tools/list", "resources/list", "resources/templates/list", "prompts/list"):
            assert list_requests(server, method) == 1, method


async def test_eager_lists_skips_lists_the_server_does_not_offer():
    server = ListenServer("legacy", capabilities={"tools": {}}, tools=[tool("t")])
    async with Client(server, eager_lists=True) as client:
        await eventually(lambda: client.cached_tools is not None)
        await anyio.sleep(0.1)
        assert [m["method"] for m in server.requests() if m["method"].endswith("/list")] == ["tools/list"]
        assert client.cached_prompts is None


# --- legacy subscriptions ------------------------------------------------------------------------


async def test_legacy_subscribe_and_unsubscribe_send_the_resource_requests():
    server = ListenServer("legacy", capabilities={"tools": {}, "resources": {"subscribe": True}})
    async with Client(server) as client:
        queue = client.notifications()
        await client.subscribe("demo://a")
        assert [m["params"]["uri"] for m in server.requests("resources/subscribe")] == ["demo://a"]
        assert client.subscriptions == frozenset({"demo://a"})
        await server.connection.notify(UPDATED, {"uri": "demo://a"})
        note = await next_notification(queue)
        assert (note.method, note.params["uri"]) == (UPDATED, "demo://a")
        await client.unsubscribe("demo://a")
        assert [m["params"]["uri"] for m in server.requests("resources/unsubscribe")] == ["demo://a"]
        assert client.subscriptions == frozenset()
        assert server.listen_requests() == []


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_subscribe_without_the_server_capability_is_refused_before_sending(era):
    server = ListenServer(era, capabilities={"tools": {}, "resources": {}})
    async with Client(server) as client:
        with pytest.raises(McpError) as info:
            await client.subscribe("demo://a")
        assert info.value.kind == "invalid"
        assert client.subscriptions == frozenset()
        await anyio.sleep(0.05)
        assert server.requests("resources/subscribe") == []
        assert server.listen_requests() == []


async def test_legacy_subscriptions_are_renewed_and_lists_refreshed_after_a_reconnect():
    server = ListenServer(
        "legacy", capabilities={"tools": {"listChanged": True}, "resources": {"subscribe": True}}
    )
    server.tools = [tool("v1")]
    async with Client(server, backoff_initial=0.01) as client:
        await client.list_tools()
        await client.subscribe("demo://a")
        stale_on_reconnect: list[bool] = []
        client.connection.on_state_change(
            lambda state: (
                stale_on_reconnect.append(client.freshness("tools").stale)
                if state == "reconnecting"
                else None
            )
        )
        server.tools = [tool("v2")]
        first = server.connection
        first.drop()
        await eventually(lambda: len(server.requests("resources/subscribe")) == 2)
        await eventually(lambda: names(client.cached_tools) == ["v2"])
        assert stale_on_reconnect == [True]
        assert server.requests("resources/subscribe")[-1]["params"]["uri"] == "demo://a"
        assert server.connection is not first
        assert client.refresh_counts["tools"] == 1
        assert client.stats.reconnects == 1
        assert client.freshness("tools").fresh


# --- modern subscriptions: the listen stream -----------------------------------------------------

RESOURCES_SUBSCRIBE = {"resources": {"subscribe": True}}


async def test_modern_subscribe_opens_a_listen_and_its_updates_reach_notifications():
    server = ListenServer("modern", capabilities=RESOURCES_SUBSCRIBE)
    async with Client(server) as client:
        await anyio.sleep(0.05)
        assert server.listen_requests() == []  # nothing wanted yet: no stream
        queue = client.notifications()
        await client.subscribe("demo://a")
        listen = await server.next_listen(1)
        assert listen.acked  # subscribe returned once the stream was acknowledged
        assert listen.filter == {"resourceSubscriptions": ["demo://a"]}
        assert client.subscriptions == frozenset({"demo://a"})
        assert client.stats.streams == 1
        assert server.requests("resources/subscribe") == []
        # a stale subscription id (no such stream) is ignored; the stream's own is delivered
        await server.connection.notify(UPDATED, with_subscription({"uri": "demo://a"}, 9999))
        await listen.notify(UPDATED, {"uri": "demo://a"})
        note = await next_notification(queue)
        assert (note.method, note.params["uri"]) == (UPDATED, "demo://a")
        assert note.params["_meta"][SUBSCRIPTION_ID] == listen.id
        await anyio.sleep(0.05)
        assert len(queue) == 0


async def test_modern_new_subscription_replaces_the_stream_and_cancels_the_old_one_after_the_ack():
    server = ListenServer("modern", capabilities={**LIST_CHANGED_TOOLS, **RESOURCES_SUBSCRIBE})
    async with Client(server) as client:
        first = await server.next_listen(1)
        assert first.filter == {"toolsListChanged": True}
        await client.subscribe("demo://a")
        second = await server.next_listen(2)
        assert second.filter == {"toolsListChanged": True, "resourceSubscriptions": ["demo://a"]}
        await eventually(lambda: first.cancelled_by_client)
        assert second.acked
        assert first.cancel_index() >= second.acked_at  # acknowledged first, then the old one closed
        await client.subscribe("demo://b")
        third = await server.next_listen(3)
        assert third.filter["resourceSubscriptions"] == ["demo://a", "demo://b"]
        await eventually(lambda: second.cancelled_by_client)
        assert second.cancel_index() >= third.acked_at
        # the replaced stream's events are ignored, the current one's delivered
        queue = client.notifications()
        await second.notify(UPDATED, {"uri": "demo://a"})
        await third.notify(UPDATED, {"uri": "demo://b"})
        note = await next_notification(queue)
        assert note.params["uri"] == "demo://b"
        await client.unsubscribe("demo://a")
        fourth = await server.next_listen(4)
        assert fourth.filter == {"toolsListChanged": True, "resourceSubscriptions": ["demo://b"]}
        await eventually(lambda: third.cancelled_by_client)
        assert client.stats.streams == 1
        assert not fourth.cancelled_by_client


async def test_modern_concurrent_subscribes_all_return_and_end_on_one_stream_covering_them_all():
    server = ListenServer("modern", capabilities={**LIST_CHANGED_TOOLS, **RESOURCES_SUBSCRIBE})
    uris = [f"demo://r{i}" for i in range(10)]
    async with Client(server) as client:
        await server.next_listen(1)
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                for uri in uris:
                    tg.start_soon(client.subscribe, uri)
        assert client.subscriptions == frozenset(uris)
        last = server.listens[-1]
        assert last.filter == {"toolsListChanged": True, "resourceSubscriptions": sorted(uris)}
        await eventually(lambda: all(listen.cancelled_by_client for listen in server.listens[:-1]))
        assert not last.cancelled_by_client
        assert client.stats.streams == 1
        assert len(server.listens) <= 1 + len(uris)


async def test_modern_subscribe_not_acknowledged_in_time_times_out_and_is_forgotten():
    server = ListenServer("modern", capabilities=RESOURCES_SUBSCRIBE)
    async with Client(server) as client:
        server.hold_acks()
        start = anyio.current_time()
        with anyio.fail_after(3), pytest.raises(McpError) as info:
            await client.subscribe("demo://a", timeout=0.3)
        assert info.value.kind == "timeout"
        assert anyio.current_time() - start < 1.5
        assert client.subscriptions == frozenset()
        server.release_acks()  # the late acknowledgement: the stream is no longer wanted
        await eventually(lambda: server.listens and server.listens[0].cancelled_by_client)
        await eventually(lambda: client.stats.streams == 0)


async def test_trace_context_callable_that_raises_is_logged_and_the_request_still_goes(caplog):
    server = ListenServer("modern", capabilities={"tools": {}})
    server.tool("echo")

    def broken() -> dict[str, str]:
        raise RuntimeError("no tracer")

    with caplog.at_level(logging.ERROR, logger="mcp_notebook"):
        async with Client(server, trace_context=broken) as client:
            assert (await client.call_tool("echo")).text == "ok"
    assert "trace_context callable raised" in caplog.text
    (call,) = server.calls("echo")
    assert "traceparent" not in call["params"]["_meta"]


async def test_modern_unsubscribing_the_last_uri_closes_the_stream_when_nothing_else_is_wanted():
    server = ListenServer("modern", capabilities=RESOURCES_SUBSCRIBE)
    async with Client(server) as client:
        await client.subscribe("demo://a")
        listen = await server.next_listen(1)
        await client.unsubscribe("demo://a")
        await eventually(lambda: listen.cancelled_by_client)
        await eventually(lambda: client.stats.streams == 0)
        assert len(server.listen_requests()) == 1


async def test_modern_subscription_the_server_does_not_honour_is_refused():
    def without_subscriptions(wanted: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in wanted.items() if k != "resourceSubscriptions"}

    server = ListenServer("modern", capabilities=RESOURCES_SUBSCRIBE, honour=without_subscriptions)
    async with Client(server) as client:
        with anyio.fail_after(3), pytest.raises(McpError) as info:
            await client.subscribe("demo://a")
        assert info.value.kind == "server"
        assert client.subscriptions == frozenset()
        await eventually(lambda: client.stats.streams == 0)


@pytest.mark.parametrize("how", ["result", "cancelled"])
async def test_modern_stream_ended_by_the_server_is_reopened(how):
    server = ListenServer("modern", capabilities={**LIST_CHANGED_TOOLS, **RESOURCES_SUBSCRIBE})
    async with Client(server) as client:
        await client.subscribe("demo://a")
        await eventually(lambda: len(server.listens) == 2)
        old = await server.next_listen(2)
        old.end(how)
        new = await server.next_listen(3)
        assert new.filter == old.filter
        assert new.id != old.id
        queue = client.notifications()
        await new.notify(UPDATED, {"uri": "demo://a"})
        assert (await next_notification(queue)).params["uri"] == "demo://a"
        assert not old.cancelled_by_client  # the server ended it: nothing to cancel
        await anyio.sleep(0.1)
        assert len(server.listen_requests()) == 3
        assert client.stats.streams == 1


async def test_modern_server_without_listen_gets_one_attempt_not_a_retry_storm():
    server = ListenServer(
        "modern",
        capabilities={**LIST_CHANGED_TOOLS, **RESOURCES_SUBSCRIBE},
        tools=[tool("a")],
        listen_mode="unsupported",
    )
    async with Client(server) as client:
        await eventually(lambda: len(server.listen_requests()) == 1)
        start = anyio.current_time()
        with anyio.fail_after(2), pytest.raises(McpError) as info:
            await client.subscribe("demo://a")
        assert info.value.kind != "timeout"
        assert anyio.current_time() - start < 1
        await anyio.sleep(1.1)  # a failed open would be retried after 0.5..1 s
        assert len(server.listen_requests()) == 1
        # the lists are still usable, just not watched
        await client.list_tools()
        await client.list_tools()
        assert list_requests(server) == 2


async def test_modern_server_that_ends_every_stream_at_once_is_not_relistened_in_a_tight_loop():
    server = ListenServer("modern", capabilities=LIST_CHANGED_TOOLS, listen_mode="end_at_once")
    async with Client(server):
        await eventually(lambda: len(server.listens) >= 1)
        await anyio.sleep(1.0)
        assert len(server.listen_requests()) <= 5, len(server.listen_requests())


async def test_modern_reconnect_invalidates_refreshes_and_reopens_the_stream():
    server = ListenServer("modern", capabilities={**LIST_CHANGED_TOOLS, **RESOURCES_SUBSCRIBE})
    server.tools = [tool("v1")]
    async with Client(server, backoff_initial=0.01) as client:
        await client.subscribe("demo://a")
        first = await server.next_listen(len(server.listens))
        await client.list_tools()
        assert client.freshness("tools").fresh
        stale_on_reconnect: list[bool] = []
        client.connection.on_state_change(
            lambda state: (
                stale_on_reconnect.append(client.freshness("tools").stale)
                if state == "reconnecting"
                else None
            )
        )
        listens_before = len(server.listens)
        server.tools = [tool("v2")]
        server.connection.drop()
        reopened = await server.next_listen(listens_before + 1)
        assert reopened.conn is not first.conn
        assert reopened.filter == first.filter
        await eventually(lambda: names(client.cached_tools) == ["v2"])
        assert stale_on_reconnect == [True]
        assert client.refresh_counts["tools"] == 1
        assert client.stats.reconnects == 1
        await eventually(lambda: client.freshness("tools").fresh)
        queue = client.notifications()
        await reopened.notify(UPDATED, {"uri": "demo://a"})
        assert (await next_notification(queue)).params["uri"] == "demo://a"
        assert client.subscriptions == frozenset({"demo://a"})


async def test_modern_reconnect_refetches_after_the_new_stream_is_acknowledged():
    """No replay: a change between the post-reconnect fetch and the new ack was announced to nobody."""
    server = ListenServer("modern", capabilities=LIST_CHANGED_TOOLS)
    server.tools = [tool("v1")]
    async with Client(server, backoff_initial=0.01) as client:
        await server.next_listen(1)
        await until_watched(client)
        await client.list_tools()
        server.hold_acks()
        server.tools = [tool("v2")]
        server.connection.drop()
        await eventually(lambda: len(server.listen_requests()) == 2)
        await eventually(lambda: names(client.cached_tools) == ["v2"])  # the post-reconnect refresh
        server.tools = [tool("v3")]  # while no acknowledged stream exists
        server.release_acks()
        await server.next_listen(2)
        await until_watched(client)
        await anyio.sleep(0.05)
        assert names(await client.list_tools()) == ["v3"]


# --- events and trace context --------------------------------------------------------------------


async def test_event_hooks_run_in_their_own_task_and_a_raising_hook_breaks_nothing(caplog):
    server = ListenServer("modern", capabilities={"tools": {}})
    server.tool("echo")
    async with Client(server) as client:
        seen: list[Any] = []
        tasks: set[Any] = set()
        async_seen: list[str] = []

        def raising(event: Any) -> None:
            raise RuntimeError("hook failure")

        def recording(event: Any) -> None:
            seen.append(event)
            tasks.add(asyncio.current_task())

        async def async_recording(event: Any) -> None:
            await anyio.lowlevel.checkpoint()
            async_seen.append(event.kind)

        client.on_event(raising)
        unhook = client.on_event(recording)
        client.on_event(async_recording)
        caller = asyncio.current_task()
        with caplog.at_level(logging.ERROR, logger="mcp_notebook"):
            assert (await client.call_tool("echo")).text == "ok"
            await eventually(
                lambda: any(e.kind == "request" and e.data["method"] == "tools/call" for e in seen)
            )
        assert caller not in tasks
        assert len(tasks) == 1
        assert "request" in async_seen
        assert "an event hook raised" in caplog.text
        kinds = {e.kind for e in seen}
        assert {"request_start", "request"} <= kinds
        call = next(e for e in seen if e.kind == "request" and e.data["method"] == "tools/call")
        assert call.data["outcome"] == "ok"
        assert set(call.data) == {"id", "method", "duration", "outcome"}
        unhook()
        count = len(seen)
        await client.call_tool("echo")
        await anyio.sleep(0.05)
        assert len(seen) == count
        assert client.status == "ready"


async def test_a_stuck_event_hook_does_not_stall_calls():
    server = ListenServer("modern", capabilities={"tools": {}})
    server.tool("echo")
    async with Client(server) as client:

        async def stuck(event: Any) -> None:
            await anyio.sleep_forever()

        client.on_event(stuck)
        with anyio.fail_after(2):
            for _ in range(20):
                assert (await client.call_tool("echo")).text == "ok"


@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_trace_context_puts_traceparent_in_the_meta_of_every_request(era):
    server = ListenServer(era, capabilities=LIST_CHANGED_TOOLS)
    server.tool("echo")
    context = {"traceparent": TRACEPARENT, "tracestate": "vendor=1"}
    async with Client(server, trace_context=lambda: context) as client:
        await client.list_tools(refresh=True)
        await client.call_tool("echo", {"x": 1})
        await client.ping()
        if era == "modern":
            await server.next_listen(1)
    requests = server.requests()
    assert {"tools/list", "tools/call"} <= {m["method"] for m in requests}
    for message in requests:
        meta = message["params"]["_meta"]
        assert meta["traceparent"] == TRACEPARENT, message["method"]
        assert meta["tracestate"] == "vendor=1", message["method"]
        if era == "modern":
            assert META_VERSION in meta, message["method"]  # the envelope is kept beside it
    (call,) = server.calls("echo")
    assert call["params"]["arguments"] == {"x": 1}
