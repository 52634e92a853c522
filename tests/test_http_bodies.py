"""Bodies a hostile server sends are bounded after decoding, on both engines (issue #26).

Real servers on 127.0.0.1 (``tests/raw_http.py``, in the test's loop) send 1 GiB compression bombs
(gzip and deflate, made on the fly by ``tests/bomb_http.py``) as a JSON answer, as an SSE event,
as an error body and as OAuth metadata, and a 256 MiB plain OAuth document. Each must fail its
own request with an ``McpError`` that names the limit, while the test process's resident memory
stays within a bound far below what the body inflates to (a bound on memory, not a timing). A
valid gzip-compressed OAuth sign-in must work on both engines (the aiohttp engine used to decode
it twice), and an HTTP+SSE server that names an endpoint on another origin is reported as such.
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from collections.abc import AsyncIterator
from typing import Any

import aiohttp  # imported before any measurement: its import is not what is measured
import anyio
import pytest

from mcp_notebook import Client, McpError
from mcp_notebook.auth import OAuth
from mcp_notebook.transports import _http_engine
from mcp_notebook.transports._http import DEFAULT_MAX_MESSAGE_BYTES, HttpTransport

from .bomb_http import bomb, peak_rss_growth, send_bomb
from .raw_http import RawRequest, Reply, raw_http_server

pytestmark = [pytest.mark.anyio]

assert aiohttp
ENGINES = ["aiohttp", "httpx"]
CODINGS = ["gzip", "deflate"]
MIB = 1 << 20
#: What a bomb may cost at most when the limit is max_message_bytes' default (32 MiB).
MESSAGE_BOUND = 100 * MIB
#: What it may cost when the limit is small (an error body's 64 KiB, OAuth's 1 MiB).
SMALL_BOUND = 32 * MIB
TOKEN = "bodies-token-4e1f"
TOOLS = [
    {"name": name, "inputSchema": {"type": "object"}}
    for name in ("echo", "bomb_json", "bomb_sse", "bomb_error")
]
JSON_BOMB_PREFIX = b'{"jsonrpc": "2.0", "id": "bomb", "result": {"content": []}}'


def _compress(data: bytes, coding: str) -> bytes:
    return gzip.compress(data) if coding == "gzip" else zlib.compress(data)


def _result(request_id: Any, result: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}).encode()


class McpBombServer:
    """Legacy Streamable HTTP with JSON answers; ``tools/call`` of a ``bomb_*`` tool answers with a
    1 GiB bomb in ``coding``, ``echo`` with a valid compressed answer. With ``token`` set, MCP
    requests need ``Authorization: Bearer <token>`` (else 401 pointing at ``prm_url``)."""

    def __init__(self, coding: str) -> None:
        self.coding = coding
        self.token: str | None = None
        self.prm_url = ""

    async def __call__(self, request: RawRequest, reply: Reply) -> None:
        if request.method != "POST" or request.path != "/mcp":
            await reply.send(405 if request.path == "/mcp" else 404, b"")
            return
        if self.token is not None and request.headers.get("authorization") != f"Bearer {self.token}":
            challenge = f'Bearer resource_metadata="{self.prm_url}"'
            await reply.send(401, b"", headers={"WWW-Authenticate": challenge})
            return
        message = json.loads(request.body)
        method, request_id = message.get("method"), message.get("id")
        if method is None or request_id is None:
            await reply.send(202, b"")
            return
        if method == "server/discover":
            error = {"jsonrpc": "2.0", "id": request_id, "error": {"code": -32600, "message": "no"}}
            await reply.send(400, json.dumps(error).encode())
            return
        if method == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "bombs", "version": "1"},
            }
            await reply.send(200, _result(request_id, result), headers={"Mcp-Session-Id": "bombs-1"})
            return
        if method == "tools/list":
            await reply.send(200, _result(request_id, {"tools": TOOLS}))
            return
        if method != "tools/call":
            await reply.send(200, _result(request_id, {}))
            return
        name = message["params"]["name"]
        if name == "bomb_json":
            body = bomb(self.coding, prefix=JSON_BOMB_PREFIX)
            await send_bomb(reply, 200, body, content_type="application/json")
        elif name == "bomb_sse":
            body = bomb(self.coding, prefix=b"data: ", suffix=b"\n\n", filler=b"a")
            await send_bomb(reply, 200, body, content_type="text/event-stream", length=False)
        elif name == "bomb_error":
            body = bomb(self.coding, prefix=b"oops", filler=b"!")
            await send_bomb(reply, 500, body, content_type="text/plain", length=False)
        else:
            answer = _result(request_id, {"content": [{"type": "text", "text": "compressed fine"}]})
            await reply.send(200, _compress(answer, self.coding), headers={"Content-Encoding": self.coding})


def _client(url: str, engine: str, **options: Any) -> Client:
    return Client(HttpTransport(f"{url}/mcp", engine=engine, mode="streamable", **options), timeout=60)  # type: ignore[arg-type]


def _reported_size(message: str) -> int:
    match = re.search(r"at least (\d+) bytes", message)
    assert match is not None, message
    return int(match.group(1))


@pytest.mark.parametrize("coding", CODINGS)
@pytest.mark.parametrize("engine", ENGINES)
async def test_a_bomb_as_a_json_answer_fails_its_call_in_bounded_memory(engine: str, coding: str) -> None:
    server = McpBombServer(coding)
    async with raw_http_server(server) as url, _client(url, engine) as client:
        assert (await client.call_tool("echo", {})).text == "compressed fine"  # decoded once
        with peak_rss_growth() as grew, pytest.raises(McpError) as caught:
            await client.call_tool("bomb_json", {})
        print(f"\nJSON answer, {coding} 1 GiB bomb on {engine}: peak RSS +{grew[0] / MIB:.1f} MiB")
        assert grew[0] < MESSAGE_BOUND, f"a 1 GiB bomb cost {grew[0] / MIB:.0f} MiB"
        assert "max_message_bytes" in caught.value.message
        assert (
            DEFAULT_MAX_MESSAGE_BYTES
            < _reported_size(caught.value.message)
            <= DEFAULT_MAX_MESSAGE_BYTES + MIB
        )
        assert (await client.call_tool("echo", {})).text == "compressed fine"  # only that call failed


@pytest.mark.parametrize("coding", CODINGS)
@pytest.mark.parametrize("engine", ENGINES)
async def test_a_bomb_as_an_sse_event_fails_its_call_in_bounded_memory(engine: str, coding: str) -> None:
    server = McpBombServer(coding)
    async with raw_http_server(server) as url, _client(url, engine) as client:
        with peak_rss_growth() as grew, pytest.raises(McpError) as caught:
            await client.call_tool("bomb_sse", {})
        print(f"\nSSE event, {coding} 1 GiB bomb on {engine}: peak RSS +{grew[0] / MIB:.1f} MiB")
        assert grew[0] < MESSAGE_BOUND, f"a 1 GiB bomb cost {grew[0] / MIB:.0f} MiB"
        assert "max_message_bytes" in caught.value.message
        # The size seen when the bound was passed: more than the limit, not what was left of a chunk.
        assert (
            DEFAULT_MAX_MESSAGE_BYTES
            < _reported_size(caught.value.message)
            <= DEFAULT_MAX_MESSAGE_BYTES + MIB
        )
        assert (await client.call_tool("echo", {})).text == "compressed fine"


@pytest.mark.parametrize("coding", CODINGS)
@pytest.mark.parametrize("engine", ENGINES)
async def test_a_bomb_as_an_error_body_fails_its_call_in_bounded_memory(engine: str, coding: str) -> None:
    server = McpBombServer(coding)
    async with raw_http_server(server) as url, _client(url, engine) as client:
        with peak_rss_growth() as grew, pytest.raises(McpError) as caught:
            await client.call_tool("bomb_error", {})
        print(f"\nerror body, {coding} 1 GiB bomb on {engine}: peak RSS +{grew[0] / MIB:.1f} MiB")
        assert grew[0] < SMALL_BOUND, f"a 1 GiB bomb cost {grew[0] / MIB:.0f} MiB"
        assert "500" in caught.value.message
        assert (await client.call_tool("echo", {})).text == "compressed fine"


# --- OAuth ---------------------------------------------------------------------------------------


class OAuthBombServer:
    """An MCP server (``McpBombServer``, token required) that is also its own authorization server.

    ``mode`` says how the response at ``at`` is served: ``"gzip"`` (valid and compressed, as every
    other OAuth document then is), ``"bomb-gzip"``/``"bomb-deflate"`` (a 1 GiB bomb with a
    ``Content-Length``) or ``"huge"`` (valid JSON padded with ``pad`` bytes, by default 256 MiB,
    plain). ``at`` is ``"prm"`` (protected-resource metadata), ``"as"`` (authorization-server
    metadata), ``"token"`` (the token answer) or ``"challenge"`` (the MCP server's 401).
    """

    def __init__(self, mode: str, *, at: str = "prm", pad: int = 256 * MIB) -> None:
        self.mode = mode
        self.at = at
        self.pad = pad
        self.mcp = McpBombServer("gzip")
        self.mcp.token = TOKEN
        self.base = ""
        self.tokens_issued = 0

    def start(self, base: str) -> str:
        self.base = base
        self.mcp.prm_url = f"{base}/.well-known/oauth-protected-resource/mcp"
        return f"{base}/mcp"

    async def _send(self, reply: Reply, where: str, document: dict[str, Any], **headers: str) -> None:
        status = 401 if where == "challenge" else 200
        body = json.dumps(document).encode()
        if self.mode == "gzip":
            await reply.send(status, gzip.compress(body), headers={"Content-Encoding": "gzip", **headers})
        elif where != self.at:
            await reply.send(status, body, headers=headers)
        elif self.mode.startswith("bomb-"):
            head = body[:-1] + b', "pad": "'
            big = bomb(self.mode.removeprefix("bomb-"), prefix=head, suffix=b'"}', filler=b"x")
            await send_bomb(reply, status, big, content_type="application/json", headers=headers)
        else:
            head = body[:-1] + b', "pad": "'
            length = str(len(head) + self.pad + 2)
            await reply.start(
                status, content_type="application/json", headers={"Content-Length": length, **headers}
            )
            await reply.write(head)
            left = self.pad
            while left:
                await reply.write(b"x" * min(left, MIB))
                left -= min(left, MIB)
            await reply.write(b'"}')

    async def __call__(self, request: RawRequest, reply: Reply) -> None:
        if request.path == "/.well-known/oauth-protected-resource/mcp":
            document = {"resource": f"{self.base}/mcp", "authorization_servers": [self.base]}
            await self._send(reply, "prm", document)
        elif request.path == "/.well-known/oauth-authorization-server":
            document = {
                "issuer": self.base,
                "authorization_endpoint": f"{self.base}/authorize",
                "token_endpoint": f"{self.base}/token",
                "code_challenge_methods_supported": ["S256"],
                "grant_types_supported": ["client_credentials"],
                "token_endpoint_auth_methods_supported": ["client_secret_basic"],
            }
            await self._send(reply, "as", document)
        elif request.path == "/token" and request.method == "POST":
            self.tokens_issued += 1
            await self._send(
                reply, "token", {"access_token": TOKEN, "token_type": "Bearer", "expires_in": 3600}
            )
        elif request.path.startswith("/.well-known/"):
            await reply.send(404, b"")
        elif (
            self.at == "challenge"
            and request.method == "POST"
            and request.headers.get("authorization") != f"Bearer {TOKEN}"
        ):
            challenge = f'Bearer resource_metadata="{self.mcp.prm_url}"'
            await self._send(reply, "challenge", {"error": "unauthorized"}, **{"WWW-Authenticate": challenge})
        else:
            await self.mcp(request, reply)


def _oauth() -> OAuth:
    return OAuth(grant="client_credentials", client_id="bodies-client", client_secret="bodies-secret-77")


@pytest.mark.parametrize("engine", ENGINES)
async def test_a_gzip_compressed_oauth_sign_in_works(engine: str) -> None:
    server = OAuthBombServer("gzip")
    async with raw_http_server(server) as base:
        url = server.start(base)
        transport = HttpTransport(url, engine=engine, mode="streamable", auth=_oauth())  # type: ignore[arg-type]
        async with Client(transport, timeout=30) as client:
            assert (await client.call_tool("echo", {})).text == "compressed fine"
    assert server.tokens_issued == 1


OVERSIZED = [
    ("bomb-gzip", "prm"),
    ("bomb-deflate", "prm"),
    ("huge", "prm"),
    ("bomb-gzip", "as"),
    ("huge", "token"),
    ("bomb-deflate", "token"),
]


@pytest.mark.parametrize(("mode", "at"), OVERSIZED)
@pytest.mark.parametrize("engine", ENGINES)
async def test_an_oversized_oauth_response_fails_the_sign_in_in_bounded_memory(
    engine: str, mode: str, at: str
) -> None:
    server = OAuthBombServer(mode, at=at)
    async with raw_http_server(server) as base:
        url = server.start(base)
        transport = HttpTransport(url, engine=engine, mode="streamable", auth=_oauth())  # type: ignore[arg-type]
        with peak_rss_growth() as grew, pytest.raises(McpError) as caught:
            async with Client(transport, timeout=30):
                pass
    what = "256 MiB plain document" if mode == "huge" else f"{mode.removeprefix('bomb-')} 1 GiB bomb"
    print(f"\nOAuth {at}, {what} on {engine}: peak RSS +{grew[0] / MIB:.1f} MiB")
    assert grew[0] < SMALL_BOUND, f"it cost {grew[0] / MIB:.0f} MiB"
    assert caught.value.kind == "auth", caught.value
    assert "max_response_bytes=1048576" in caught.value.message
    assert "OAuth(max_response_bytes=" in caught.value.message
    assert server.tokens_issued == (1 if at == "token" else 0)


@pytest.mark.parametrize("engine", ENGINES)
async def test_a_bomb_as_the_401_body_costs_nothing_and_the_sign_in_goes_on(engine: str) -> None:
    server = OAuthBombServer("bomb-gzip", at="challenge")
    async with raw_http_server(server) as base:
        url = server.start(base)
        transport = HttpTransport(url, engine=engine, mode="streamable", auth=_oauth())  # type: ignore[arg-type]
        with peak_rss_growth() as grew:
            async with Client(transport, timeout=30) as client:
                assert (await client.call_tool("echo", {})).text == "compressed fine"
    print(f"\nthe 401's body, gzip 1 GiB bomb on {engine}: peak RSS +{grew[0] / MIB:.1f} MiB")
    assert grew[0] < SMALL_BOUND, f"it cost {grew[0] / MIB:.0f} MiB"
    assert server.tokens_issued == 1


async def test_the_oauth_limit_is_configurable() -> None:
    for limit, fails in ((4096, True), (16384, False)):
        server = OAuthBombServer("huge", pad=8192)
        async with raw_http_server(server) as base:
            auth = OAuth(
                grant="client_credentials", client_id="c", client_secret="s", max_response_bytes=limit
            )
            transport = HttpTransport(server.start(base), mode="streamable", auth=auth)
            if fails:
                with pytest.raises(McpError, match=rf"max_response_bytes={limit}\b"):
                    async with Client(transport, timeout=30):
                        pass
            else:
                async with Client(transport, timeout=30) as client:
                    assert (await client.call_tool("echo", {})).text == "compressed fine"
    with pytest.raises(ValueError, match="max_response_bytes"):
        OAuth(max_response_bytes=10)


# --- HTTP+SSE: an endpoint on another origin -----------------------------------------------------


async def test_an_http_sse_endpoint_on_another_origin_is_reported_as_refused() -> None:
    async def elsewhere(request: RawRequest, reply: Reply) -> None:
        await reply.send(202, b"")

    async with raw_http_server(elsewhere) as other:

        async def app(request: RawRequest, reply: Reply) -> None:
            if request.method == "GET":
                await reply.start(200, content_type="text/event-stream")
                await reply.write(f"event: endpoint\ndata: {other}/messages\n\n".encode())
                await anyio.sleep_forever()
            await reply.send(405, b"")  # a 2024-11-05 server refuses Streamable HTTP's POST

        async with raw_http_server(app) as url:
            with pytest.raises(McpError) as caught:
                async with Client(HttpTransport(f"{url}/sse"), timeout=10):
                    pass
    message = caught.value.message
    assert "another origin" in message, message
    assert "refused" in message
    assert other.removeprefix("http://") in message
    # the status must not show; the other server's port number may contain "405" (it did once)
    assert re.search(r"(?<![\d:])405(?!\d)", message) is None, message


# --- the httpx engine's own decoder (sans-IO) ----------------------------------------------------


def _decoded(raw: AsyncIterator[bytes], headers: dict[str, str]) -> AsyncIterator[bytes]:
    return _http_engine._decoded_stream(raw, headers)  # looked up when called: the old code had none


def _decode(data: bytes, coding: str, piece: int = 7) -> bytes:
    async def run() -> bytes:
        async def raw() -> AsyncIterator[bytes]:
            for start in range(0, len(data), piece):
                yield data[start : start + piece]

        return b"".join([chunk async for chunk in _decoded(raw(), {"content-encoding": coding})])

    return anyio.run(run)


def test_the_decoder_takes_gzip_members_raw_deflate_and_stacked_codings() -> None:
    text = b"hello, " * 1000
    assert _decode(gzip.compress(text[:10]) + gzip.compress(text[10:]), "gzip") == text  # two members
    raw = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    assert _decode(raw.compress(text) + raw.flush(), "deflate") == text  # no zlib header
    assert _decode(zlib.compress(gzip.compress(text)), "gzip, deflate") == text  # applied in that order
    assert _decode(text, "identity") == text


def test_the_decoder_inflates_in_bounded_steps() -> None:
    body = zlib.compress(bytes(8 * MIB))

    async def run() -> list[int]:
        async def raw() -> AsyncIterator[bytes]:
            yield body  # all at once: the decoder still inflates it a step at a time

        return [len(chunk) async for chunk in _decoded(raw(), {"content-encoding": "deflate"})]

    sizes = anyio.run(run)
    assert sum(sizes) == 8 * MIB
    assert max(sizes) <= 64 * 1024


@pytest.mark.parametrize(
    ("body", "coding"), [(b"not gzip at all", "gzip"), (b"x", "br"), (b"x", "gzip, zstd")]
)
def test_the_decoder_refuses_what_it_cannot_decode(body: bytes, coding: str) -> None:
    with pytest.raises(_http_engine.WireError):
        _decode(body, coding)
