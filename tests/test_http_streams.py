"""Long-lived HTTP streams in the field: proxies that cut them, servers that refuse them.

Against the raw fault server: a modern ``subscriptions/listen`` stream cut soon after its
acknowledgement must be re-opened with a growing pause and must not re-fetch every list each time
(a proxy that closes idle streams would otherwise turn the client into a request storm); a legacy
standalone GET stream that is refused means no list change can arrive, so cached lists stop
counting as watched; one that is dropped at once is retried with a growing pause.

SSE polling (SEP-1699): a stream the server ends cleanly after sending ``retry:`` is the server
making the client poll, not a failure: it is resumed after that ``retry`` with ``Last-Event-ID``
however often, while real failures (500) back off and are given up; the modern era's listen
stream, ended gracefully by the server, is listened to again without backoff. Gaps are compared
as ratios (they double under backoff), never against a wall-clock figure.
"""

from __future__ import annotations

import itertools
from typing import Any

import anyio
import pytest

from mcp_notebook import Client
from mcp_notebook.transports import HttpTransport
from tests.http_peers import FaultPeer, fault_http
from tests.http_peers import fault_server_fixture as fault_server_fixture

pytestmark = [pytest.mark.anyio]


async def test_a_listen_stream_a_proxy_keeps_cutting_is_reopened_with_backoff_not_a_storm() -> None:
    with fault_http("--modern") as server:
        server.set(list_changed=True, listen_drop=0.1)
        async with Client(server.url, timeout=10) as client:
            assert client.era == "modern"
            await client.list_tools()
            await anyio.sleep(4.0)
            listens = len(server.requests(rpc_method="subscriptions/listen"))
            listings = len(server.requests(rpc_method="tools/list"))
    # Re-opened at once every time, this is ~30 streams and as many listings in 4 s.
    assert 2 <= listens <= 6, f"{listens} listen streams in 4 s"
    assert listings <= 6, f"{listings} tools/list in 4 s"


async def test_a_listen_stream_that_stays_up_is_opened_once() -> None:
    with fault_http("--modern") as server:
        server.set(list_changed=True)
        async with Client(server.url, timeout=10) as client:
            await client.list_tools()
            await anyio.sleep(1.5)
            assert client.freshness("tools").watched
        assert len(server.requests(rpc_method="subscriptions/listen")) == 1


async def _wait_for_get(server: FaultPeer, count: int = 1) -> None:
    with anyio.fail_after(10):
        while len(server.requests(method="GET")) < count:  # noqa: ASYNC110 - another process
            await anyio.sleep(0.05)
        await anyio.sleep(0.2)  # the client has read the answer


@pytest.mark.parametrize(("get_stream", "watched"), [("open", True), ("refuse", False)])
async def test_legacy_lists_count_as_watched_only_while_the_get_stream_can_carry_changes(
    fault_server: FaultPeer, get_stream: str, watched: bool
) -> None:
    fault_server.set(list_changed=True, get_stream=get_stream)
    async with Client(fault_server.url, timeout=10) as client:
        assert client.era == "legacy"
        await client.list_tools()
        await _wait_for_get(fault_server)
        freshness = client.freshness("tools")
        assert freshness.watched is watched
        assert freshness.fresh is watched  # legacy lists have no TTL: unwatched means fetch again


async def test_a_get_stream_dropped_at_once_is_retried_with_a_growing_pause(fault_server: FaultPeer) -> None:
    fault_server.set(list_changed=True, get_stream="drop")
    async with Client(fault_server.url, timeout=10):
        await _wait_for_get(fault_server)
        await anyio.sleep(6.0)
        gets = len(fault_server.requests(method="GET"))
    # Every second for 6 s without the pause; with it: at 0, ~1, ~3 s (then ~7 s).
    assert gets <= 4, f"{gets} GET streams in 6 s"


async def _requests_until(server: FaultPeer, count: int, **match: Any) -> list[dict[str, Any]]:
    """The first ``count`` recorded requests matching ``match``, once the server has seen them."""
    with anyio.fail_after(30):
        while len(seen := server.requests(**match)) < count:  # noqa: ASYNC110 - another process
            await anyio.sleep(0.05)
    return seen[:count]


def _gaps(requests: list[dict[str, Any]]) -> list[float]:
    """Seconds between consecutive requests, by the server's clock."""
    return [later["at"] - earlier["at"] for earlier, later in itertools.pairwise(requests)]


async def test_a_get_stream_the_server_ends_after_retry_is_polled_at_that_retry_however_often(
    fault_server: FaultPeer,
) -> None:
    fault_server.set(list_changed=True, get_stream="poll", retry_ms=200)
    async with Client(fault_server.url, timeout=10) as client:
        await client.list_tools()
        gets = await _requests_until(fault_server, 13, method="GET")
        assert client.freshness("tools").watched  # never given up: list changes still reach us
    assert [g["status"] for g in gets] == [200] * 13
    # Each reconnect resumes from the priming event of the stream before it.
    assert [g["last_event_id"] for g in gets] == [None] + [f"get-{n}" for n in range(1, 13)]
    gaps = _gaps(gets)
    # About the retry each time: under backoff the last gaps would be 2**8 times the first ones.
    assert sum(gaps[-3:]) < 3 * sum(gaps[:3]), f"gaps grow: {[round(g, 3) for g in gaps]}"


async def test_a_get_stream_that_fails_backs_off_more_each_time_and_is_given_up(
    fault_server: FaultPeer,
) -> None:
    fault_server.set(list_changed=True, get_stream="poll", retry_ms=100)
    async with Client(fault_server.url, timeout=10) as client:
        await client.list_tools()
        await _requests_until(fault_server, 2, method="GET")  # the client has learnt the retry
        fault_server.set(get_stream="fail")
        with anyio.fail_after(30):
            while client.freshness("tools").watched:  # noqa: ASYNC110 - given up: no longer watched
                await anyio.sleep(0.05)
        await anyio.sleep(1.0)
        gets = fault_server.requests(method="GET")
    failed = [g for g in gets if g["status"] == 500]
    assert len(failed) == 5, [g["status"] for g in gets]  # _GET_STREAM_FAILURES in a row, then no more
    gaps = _gaps(failed)
    assert gaps[-1] > 2 * gaps[0], f"no backoff: {[round(g, 3) for g in gaps]}"


async def test_failures_between_polls_start_counting_afresh(fault_server: FaultPeer) -> None:
    """Four failures, a poll, four failures, ...: never five failures in a row, never given up."""
    fault_server.set(list_changed=True, get_stream="poll", retry_ms=100)
    async with Client(fault_server.url, timeout=10) as client:
        await client.list_tools()
        count = 2
        await _requests_until(fault_server, count, method="GET")
        for _ in range(2):
            fault_server.set(get_stream="fail")
            count += 4
            await _requests_until(fault_server, count, method="GET")
            fault_server.set(get_stream="poll")
            count += 2
            await _requests_until(fault_server, count, method="GET")
        assert client.freshness("tools").watched
    statuses = [g["status"] for g in fault_server.requests(method="GET")]
    assert statuses.count(500) == 8, statuses


async def test_a_long_call_whose_answer_stream_the_server_keeps_ending_is_polled_until_it_answers(
    fault_server: FaultPeer,
) -> None:
    fault_server.set(drop="poll", retry_ms=100)
    async with Client(fault_server.url, timeout=20) as client:
        result = await client.call_tool("slow", {"seconds": 1.5})
    assert result.text == "slow done after 1.5s"
    gets = fault_server.requests(method="GET", last_event_id=None)  # the standalone stream
    resumes = [r for r in fault_server.requests(method="GET") if r not in gets]
    # ~15 polls in 1.5 s; giving up after a few (as if each clean end were a failure) fails the call.
    assert len(resumes) >= 6, len(resumes)
    assert all(r["last_event_id"] for r in resumes)
    gaps = _gaps(resumes)
    assert sum(gaps[-3:]) < 3 * sum(gaps[:3]), f"gaps grow: {[round(g, 3) for g in gaps]}"


async def test_an_http_sse_stream_the_server_ends_after_retry_is_polled_and_the_session_goes_on(
    fault_server: FaultPeer,
) -> None:
    fault_server.set(retry_ms=200)
    async with Client(HttpTransport(f"{fault_server.origin}/sse", mode="sse"), timeout=10) as client:
        gets = await _requests_until(fault_server, 13, method="GET", path="/sse")
        assert [t.name for t in await client.list_tools()] == ["echo", "slow"]  # answered on a poll
        assert client.status == "ready"
    session = gets[1]["last_event_id"].split("/")[0]
    assert gets[0]["last_event_id"] is None  # the only new session: every other GET resumes it
    assert all(g["last_event_id"].startswith(f"{session}/") for g in gets[1:])
    gaps = _gaps(gets)
    assert sum(gaps[-3:]) < 3 * sum(gaps[:3]), f"gaps grow: {[round(g, 3) for g in gaps]}"


async def test_an_http_sse_stream_that_fails_to_resume_backs_off_then_ends_the_session(
    fault_server: FaultPeer,
) -> None:
    fault_server.set(retry_ms=100)
    async with Client(
        HttpTransport(f"{fault_server.origin}/sse", mode="sse"), timeout=10, reconnect=False
    ) as client:
        await _requests_until(fault_server, 3, method="GET", path="/sse")
        fault_server.set(sse_get="fail")
        with anyio.fail_after(30):
            while client.status == "ready":  # noqa: ASYNC110 - the session ends when resuming fails
                await anyio.sleep(0.05)
    failed = [g for g in fault_server.requests(method="GET", path="/sse") if g["status"] == 500]
    assert len(failed) == 3, len(failed)  # _RESUME_FAILURES in a row, then the channel ends
    assert all(g["last_event_id"] for g in failed)
    gaps = _gaps(failed)
    # Backoff doubles the server's 0.1 s retry per failure and jitters it to 50-100 %: after the
    # first failure 0.1-0.2 s, after the second 0.2-0.4 s. Jitter alone can make the two gaps
    # nearly equal (0.158, 0.22 was seen), so each is held to its own floor, which a client that
    # did not back off (0.1 s each time) misses; a busy machine only lengthens gaps. 5 % for the
    # arrival times' own noise.
    retry = 0.1
    assert gaps[0] >= 0.95 * retry, f"too soon: {[round(g, 3) for g in gaps]}"
    assert gaps[-1] >= 0.95 * 2 * retry, f"no backoff: {[round(g, 3) for g in gaps]}"


async def test_a_listen_stream_the_server_ends_gracefully_is_listened_to_again_without_backoff() -> None:
    with fault_http("--modern") as server:
        server.set(list_changed=True, listen_end=0.1)
        async with Client(server.url, timeout=10) as client:
            assert client.era == "modern"
            await client.list_tools()
            listens = await _requests_until(server, 5, rpc_method="subscriptions/listen")
    gaps = _gaps(listens)
    # A fixed pause each time; backing off would make the last gap several times the first.
    assert gaps[-1] < 2 * gaps[0], f"gaps grow: {[round(g, 3) for g in gaps]}"


# --- x-mcp-header: the tools an HTTP client may offer, and a server whose tool changed ----------


async def test_tools_with_broken_header_declarations_are_left_out_and_the_others_kept(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with fault_http("--modern") as server:
        server.set(header_tools=True)
        async with Client(server.url, timeout=10) as client:
            names = [tool.name for tool in await client.list_tools()]
            assert "region_echo" in names
            assert "echo" in names
            assert "nullable_header" not in names, (
                "a header on a ['string', 'null'] property breaks the rules"
            )
            assert "header_in_items" not in names, "a header under items breaks the rules"
            result = await client.call_tool("region_echo", {"region": "eu-west"})
            assert result.text == "region eu-west"
    warned = [r.getMessage() for r in caplog.records if "left out tool" in r.getMessage()]
    assert len(warned) == 2


async def test_a_header_mismatch_relists_the_tools_and_resends_once() -> None:
    with fault_http("--modern") as server:
        server.set(header_tools=True)
        async with Client(server.url, timeout=10) as client:
            await client.list_tools()
            assert (await client.call_tool("region_echo", {"region": "a"})).text == "region a"
            listings = len(server.requests(rpc_method="tools/list"))
            server.set(region_header="Zone")  # the server's tool now declares another header
            assert (await client.call_tool("region_echo", {"region": "b"})).text == "region b"
            calls = server.requests(rpc_method="tools/call")
            assert [c["status"] for c in calls] == [200, 400, 200]
            assert len(server.requests(rpc_method="tools/list")) >= listings + 1
            with anyio.fail_after(5):  # the cache heard of the change and fetched the list again
                while client.freshness("tools").stale:  # noqa: ASYNC110 - the live layer's own task
                    await anyio.sleep(0.05)
