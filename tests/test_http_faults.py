"""HTTP faults on localhost, against ``tests/servers/http_fault_server.py`` (a raw ASGI server).

What a remote server does to a client in real life: restarts and forgets the session, drops a
response stream halfway, wants credentials, redirects somewhere else. Each test drives the fault
server's switches and checks both what the caller sees and what went over the wire.
"""

from __future__ import annotations

import logging

import anyio
import pytest

from mcp_notebook import Client, McpError
from mcp_notebook.transports import HttpTransport
from tests.http_peers import FaultPeer, fault_http
from tests.http_peers import fault_server_fixture as fault_server_fixture
from tests.raises import raises_mcp

pytestmark = [pytest.mark.anyio]

TOKEN = "http-fault-token-9d3c1a"


async def test_session_forgotten_mid_use_is_renewed_and_the_call_succeeds(fault_server: FaultPeer) -> None:
    async with Client(fault_server.url, timeout=10) as client:
        assert client.era == "legacy"
        assert "one" in (await client.call_tool("echo", {"text": "one"})).text
        first_session = fault_server.requests(rpc_method="tools/call")[-1]["session"]
        assert fault_server.forget() == 1  # the server "restarted"
        result = await client.call_tool("echo", {"text": "two"})
        assert "two" in result.text
    calls = fault_server.requests(rpc_method="tools/call")
    assert [c["status"] for c in calls] == [200, 404, 200]
    assert calls[-1]["session"] not in (None, first_session)
    initializes = fault_server.requests(rpc_method="initialize")
    assert len(initializes) == 2
    assert initializes[1]["session"] is None, "the renewal must not carry the dead session id"
    assert fault_server.requests(method="DELETE"), "closing ends the session"


async def test_session_forgotten_under_concurrent_calls_renews_once(fault_server: FaultPeer) -> None:
    async with Client(fault_server.url, timeout=10) as client:
        await client.call_tool("echo", {"text": "warm"})
        fault_server.forget()
        results: list[str] = []

        async def one(i: int) -> None:
            results.append((await client.call_tool("echo", {"text": f"m{i}"})).text)

        async with anyio.create_task_group() as tg:
            for i in range(8):
                tg.start_soon(one, i)
    assert sorted(results) == sorted(f"m{i}" for i in range(8))
    assert len(fault_server.requests(rpc_method="initialize")) == 2


async def test_a_session_forgotten_again_after_its_renewal_fails_the_call_after_one_renewal(
    fault_server: FaultPeer,
) -> None:
    """A server that answers 404 to the renewed session too (one that keeps no sessions) must fail
    the call, not renew it forever: each recovery is used at most once per request."""
    async with Client(fault_server.url, timeout=10) as client:
        await client.call_tool("echo", {"text": "warm"})
        fault_server.set(forget_calls=True)
        with raises_mcp(
            "transport", match=r"forgot our session \(HTTP 404\), again after the session was renewed"
        ):
            await client.call_tool("echo", {"text": "lost"})
    sends = [r for r in fault_server.requests(rpc_method="tools/call") if r["status"] == 404]
    assert len(sends) == 2, "sent once, and once more on the renewed session"
    assert len(fault_server.requests(rpc_method="initialize")) == 2, "renewed exactly once"


@pytest.mark.parametrize("how", ["end", "abort"])
async def test_legacy_stream_dropped_mid_response_is_resumed(fault_server: FaultPeer, how: str) -> None:
    fault_server.set(drop=how, drop_after=1, drop_times=1, retry_ms=50)
    seen: list[float] = []
    async with Client(fault_server.url, timeout=15) as client:
        result = await client.call_tool(
            "slow", {"seconds": 0.6, "steps": 3}, progress=lambda p, t, m: seen.append(p)
        )
        assert "slow done" in result.text
        assert client.stats.late_responses == 0
    resumed = [r for r in fault_server.requests(method="GET") if r.get("last_event_id")]
    assert resumed, "the client must resume with Last-Event-ID"
    assert fault_server.seen()["dropped"], "the server did drop the stream"
    assert seen, "progress arrives across the resumption"
    assert seen == sorted(seen), "in order"


@pytest.mark.parametrize("how", ["end", "abort"])
async def test_modern_stream_dropped_mid_response_fails_clearly_and_never_hangs(how: str) -> None:
    with fault_http("--modern") as server:
        server.set(drop=how, drop_times=1)
        async with Client(server.url, timeout=30) as client:
            assert client.era == "modern"
            with anyio.fail_after(10):  # far below the request's own deadline: no hang
                with pytest.raises(McpError) as caught:
                    await client.call_tool("slow", {"seconds": 0.5, "steps": 2})
            assert caught.value.kind == "transport"
            assert "may or may not have run" in caught.value.message
            # The channel is still good: the next call (a new request, new id) works.
            assert "after" in (await client.call_tool("echo", {"text": "after"})).text


async def test_401_without_auth_configured_says_what_to_configure() -> None:
    with fault_http("--unauthorized") as server:
        client = Client(server.url, timeout=10, reconnect=False)
        with pytest.raises(McpError) as caught:
            await client.connect()
        await client.aclose()
    error = caught.value
    assert error.kind == "auth"
    assert "401" in error.message
    assert "auth=mcp_notebook.auth.OAuth()" in error.message
    assert "headers=" in error.message


async def test_401_with_a_refused_token_says_so_and_never_shows_it(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with fault_http("--unauthorized") as server:
        server.set(token="the-right-one")
        client = Client(server.url, timeout=10, reconnect=False, auth=TOKEN)
        with pytest.raises(McpError) as caught:
            await client.connect()
        await client.aclose()
        sent = {r["authorization"] for r in server.requests()}
    assert f"Bearer {TOKEN}" in sent, "the token did go to the server"
    assert caught.value.kind == "auth"
    assert "refused our credentials" in caught.value.message
    for text in (str(caught.value), repr(caught.value), repr(client), caplog.text):
        assert TOKEN not in text


async def test_a_good_token_passes(fault_server: FaultPeer) -> None:
    fault_server.set(unauthorized=True, token=TOKEN)
    async with Client(fault_server.url, timeout=10, auth=TOKEN) as client:
        assert "ok" in (await client.call_tool("echo", {"text": "ok"})).text


@pytest.mark.parametrize("where", ["other-port", "localhost"])
async def test_redirect_to_another_origin_is_not_followed_with_credentials(where: str) -> None:
    with fault_http("--redirect", where) as server:
        client = Client(
            server.url,
            timeout=10,
            reconnect=False,
            auth=TOKEN,
            headers={"X-Api-Key": "key-5e1b"},
        )
        with pytest.raises(McpError) as caught:
            await client.connect()
        await client.aclose()
        requests = server.seen()["requests"]
        main_port = server.state()["port"]
    assert caught.value.kind == "transport"
    assert "another origin" in caught.value.message
    assert requests, "the first request reached the main origin"
    assert {r["port"] for r in requests} == {main_port}, "nothing was sent to the other port"
    assert all(r["host"].startswith("127.0.0.1") for r in requests), "nothing was sent to localhost"


async def test_same_origin_redirect_is_followed(fault_server: FaultPeer) -> None:
    fault_server.set(redirect="same-origin")
    async with Client(fault_server.url, timeout=10) as client:
        assert "moved" in (await client.call_tool("echo", {"text": "moved"})).text
    assert fault_server.requests(path="/moved")


async def test_explicit_binding_and_repr_hide_secrets() -> None:
    transport = HttpTransport("http://user:pw@127.0.0.1:9/mcp?api_key=s3cr3t", headers={"Authorization": "x"})
    text = repr(transport) + transport.describe()
    assert "s3cr3t" not in text
    assert "pw" not in text
    assert transport.describe() == "http://127.0.0.1:9/mcp"


async def test_unreachable_server_fails_fast_with_a_transport_error() -> None:
    client = Client("http://127.0.0.1:9/mcp", timeout=5, reconnect=False)
    with anyio.fail_after(10), pytest.raises(McpError) as caught:
        await client.connect()
    await client.aclose()
    assert caught.value.kind == "transport"
    assert "127.0.0.1:9" in caught.value.message


def test_oauth_gives_negotiation_room_for_a_person_to_sign_in() -> None:
    from mcp_notebook.auth import OAuth

    slow_human = Client("http://127.0.0.1:9/mcp", auth=OAuth(authorize_timeout=120))
    assert slow_human._options.probe_timeout == slow_human._options.connect_timeout == 150
    chosen = Client("http://127.0.0.1:9/mcp", auth=OAuth(), probe_timeout=7)
    assert chosen._options.probe_timeout == 7  # the caller's word stands
    assert Client("http://127.0.0.1:9/mcp", auth="token")._options.probe_timeout == 5  # no human step


async def test_an_unexpected_failure_fails_one_request_not_the_client(
    fault_server: FaultPeer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from mcp_notebook.transports import _http as http

    async with Client(fault_server.url, timeout=10) as client:
        original = http._StreamableChannel._exchange

        async def broken(self: object, message: dict) -> object:
            if message.get("method") == "tools/call":
                raise RuntimeError("a bug in the exchange")
            return await original(self, message)  # type: ignore[arg-type]

        monkeypatch.setattr(http._StreamableChannel, "_exchange", broken)
        with pytest.raises(McpError) as caught:
            await client.call_tool("echo", {"text": "x"})
        assert caught.value.kind == "protocol"
        assert "RuntimeError" in caught.value.message
        assert "a bug in the exchange" in caplog.text  # logged with its traceback for the bug report
        monkeypatch.setattr(http._StreamableChannel, "_exchange", original)
        assert client.status == "ready"
        assert (await client.call_tool("echo", {"text": "still here"})).text == "still here"
