"""The two HTTP engines (aiohttp, httpx) under the same bindings, against the raw fault server.

Each behaviour runs on both engines: the bindings must not care which one carries them. Also:
which engine is chosen where, answers over ``max_message_bytes`` (an SSE event, a JSON body) that
fail only their own request, a user's httpx client whose short timeout must not cut a long call,
and connections bounded by ``max_connections``.
"""

from __future__ import annotations

import httpx
import psutil
import pytest

from mcp_notebook import Client, McpError
from mcp_notebook.auth import BearerToken
from mcp_notebook.transports._http import DEFAULT_MAX_CONNECTIONS, HttpTransport
from mcp_notebook.transports._http_engine import AiohttpEngine, HttpxEngine
from tests.http_peers import FaultPeer
from tests.http_peers import fault_server_fixture as fault_server_fixture
from tests.raises import raises_mcp

pytestmark = [pytest.mark.anyio]

ENGINES = ["aiohttp", "httpx"]
TOKEN = "engine-token-5be1"


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("how", ["end", "abort"])
async def test_a_dropped_stream_is_resumed_on_either_engine(
    fault_server: FaultPeer, engine: str, how: str
) -> None:
    fault_server.set(drop=how, drop_after=1, drop_times=1, retry_ms=50)
    seen: list[float] = []
    async with Client(HttpTransport(fault_server.url, engine=engine), timeout=15) as client:  # type: ignore[arg-type]
        result = await client.call_tool(
            "slow", {"seconds": 0.4, "steps": 2}, progress=lambda p, t, m: seen.append(p)
        )
        assert "slow done" in result.text
    assert [r for r in fault_server.requests(method="GET") if r.get("last_event_id")]
    assert seen == sorted(seen)
    assert seen


@pytest.mark.parametrize("engine", ENGINES)
async def test_an_oversized_sse_event_fails_only_its_call(fault_server: FaultPeer, engine: str) -> None:
    transport = HttpTransport(fault_server.url, engine=engine, max_message_bytes=64 * 1024)  # type: ignore[arg-type]
    async with Client(transport, timeout=15) as client:
        fault_server.set(pad=2_000_000)
        with pytest.raises(McpError) as caught:
            await client.call_tool("echo", {"text": "big"})
        assert caught.value.kind == "transport"
        assert "max_message_bytes" in caught.value.message
        fault_server.set(pad=0)
        assert (await client.call_tool("echo", {"text": "after"})).text == "after"
        assert client.status == "ready"


@pytest.mark.parametrize("engine", ENGINES)
async def test_an_oversized_json_body_fails_only_its_request(fault_server: FaultPeer, engine: str) -> None:
    transport = HttpTransport(fault_server.url, engine=engine, max_message_bytes=64 * 1024)  # type: ignore[arg-type]
    async with Client(transport, timeout=15) as client:
        fault_server.set(pad=2_000_000)
        with raises_mcp("transport", match="max_message_bytes"):
            await client.list_tools(refresh=True)
        fault_server.set(pad=0)
        assert "echo" in [tool.name for tool in await client.list_tools(refresh=True)]


@pytest.mark.parametrize("engine", ENGINES)
async def test_a_bearer_token_signs_every_request(fault_server: FaultPeer, engine: str) -> None:
    fault_server.set(unauthorized=True, token=TOKEN)
    with pytest.raises(McpError) as refused:
        async with Client(HttpTransport(fault_server.url, engine=engine), timeout=10):  # type: ignore[arg-type]
            pass
    assert refused.value.kind == "auth"
    signed = HttpTransport(fault_server.url, engine=engine, auth=BearerToken(TOKEN))  # type: ignore[arg-type]
    async with Client(signed, timeout=10) as client:
        assert (await client.call_tool("echo", {"text": "signed"})).text == "signed"
    mcp_requests = fault_server.requests(rpc_method="tools/call")
    assert mcp_requests
    assert all(r["status"] == 200 for r in mcp_requests)


async def test_a_users_httpx_client_with_a_short_timeout_does_not_cut_a_long_call(
    fault_server: FaultPeer,
) -> None:
    async with httpx.AsyncClient(timeout=0.3) as mine:  # far shorter than the call
        async with Client(fault_server.url, http_client=mine, timeout=15) as client:
            result = await client.call_tool("slow", {"seconds": 1.2, "steps": 1})
            assert "slow done" in result.text
        assert not mine.is_closed, "the user's client is theirs to close"


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
async def test_the_engine_is_aiohttp_on_asyncio_and_httpx_on_trio(
    fault_server: FaultPeer, anyio_backend: str
) -> None:
    transport = HttpTransport(fault_server.url)
    engine = transport._make_engine()
    try:
        assert isinstance(engine, AiohttpEngine if anyio_backend == "asyncio" else HttpxEngine)
    finally:
        await engine.aclose()
    async with Client(transport, timeout=10) as client:
        assert (await client.call_tool("echo", {"text": anyio_backend})).text == anyio_backend
    proxied = HttpTransport(fault_server.url, proxy="http://127.0.0.1:9")._make_engine()
    try:
        assert isinstance(proxied, HttpxEngine)
    finally:
        await proxied.aclose()


def test_the_default_allows_a_hundred_connections() -> None:
    assert DEFAULT_MAX_CONNECTIONS >= 100
    assert HttpTransport("http://127.0.0.1:1/mcp").max_connections == DEFAULT_MAX_CONNECTIONS


@pytest.mark.parametrize("engine", ENGINES)
async def test_connections_are_bounded_by_max_connections(fault_server: FaultPeer, engine: str) -> None:
    import anyio

    port = int(fault_server.url.rsplit(":", 1)[1].split("/", 1)[0])
    peak = 0

    def sockets_to_server() -> int:
        connections = psutil.Process().net_connections(kind="tcp")
        return sum(1 for c in connections if c.raddr and c.raddr.port == port and c.status == "ESTABLISHED")

    transport = HttpTransport(fault_server.url, engine=engine, max_connections=4)  # type: ignore[arg-type]
    async with Client(transport, timeout=30) as client:
        done = 0

        async def one() -> None:
            nonlocal done
            await client.call_tool("slow", {"seconds": 0.3, "steps": 1})
            done += 1

        async with anyio.create_task_group() as tg:
            for _ in range(16):
                tg.start_soon(one)
            while done < 16:
                peak = max(peak, sockets_to_server())
                await anyio.sleep(0.05)
    assert done == 16
    assert 1 <= peak <= 4, f"{peak} sockets with max_connections=4"


@pytest.mark.parametrize(("no_proxy", "engine"), [("", HttpxEngine), ("127.0.0.1", AiohttpEngine)])
async def test_a_proxy_named_by_the_environment_goes_through_httpx(
    monkeypatch: pytest.MonkeyPatch, no_proxy: str, engine: type
) -> None:
    """aiohttp reads proxy settings in a thread on every request if asked to (trust_env), so an
    endpoint the environment proxies gets the httpx engine, which honours HTTP(S)_PROXY itself."""
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.setenv("NO_PROXY", no_proxy)
    monkeypatch.setenv("no_proxy", no_proxy)
    made = HttpTransport("http://127.0.0.1:8000/mcp")._make_engine()
    try:
        assert isinstance(made, engine)
    finally:
        await made.aclose()
