"""Tokens are bound to the protected resource they were issued for, never to an origin.

One real HTTP server on 127.0.0.1 plays a gateway: an authorization server at its root and several
protected MCP servers at ``/<name>/mcp``, each its own resource (RFC 8707, RFC 9728) with its own
audience. Every Authorization header a server receives is recorded, so a test can say which tokens
reached which server. One ``OAuth()`` object serves them all, through the real client and transport.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import parse_qs, urlencode

import anyio
import anyio.abc
import httpx
import pytest

from mcp_notebook import Client, McpError
from mcp_notebook.auth import FileTokenStore, MemoryTokenStore, OAuth, Tokens
from mcp_notebook.auth._pkce import s256
from mcp_notebook.transports import HttpTransport
from tests.raw_http import RawRequest, Reply, raw_http_server

REDIRECT = "http://127.0.0.1:9/callback"  # on_authorize returns the redirect: nothing listens there


class Gateway:
    """The authorization server and the protected MCP servers of one origin, with their records."""

    def __init__(self) -> None:
        self.base = ""
        self.issued: dict[str, str] = {}  # access token -> the resource it was issued for
        self.refresh: dict[str, str] = {}  # refresh token -> resource
        self.codes: dict[str, dict[str, str]] = {}
        self.seen: dict[str, list[str | None]] = {}  # server name -> Authorization headers received
        self.authorized: list[str] = []  # the resource of each authorization, in order
        self.registrations = 0
        self.claims: dict[str, str] = {}  # server name -> the resource its PRM claims (an impostor)
        self.sse: dict[str, anyio.abc.ObjectSendStream[bytes]] = {}  # session -> its event stream

    def resource(self, name: str) -> str:
        return f"{self.base}/{name}/mcp"

    def tokens_seen(self, name: str) -> list[str]:
        return [h.removeprefix("Bearer ") for h in self.seen.get(name, []) if h is not None]

    def only_own_tokens(self, name: str, resource: str | None = None) -> bool:
        """Every token the server ``name`` received was issued for it."""
        own = resource or self.resource(name)
        return all(self.issued.get(token) == own for token in self.tokens_seen(name))

    # -- the browser ------------------------------------------------------------------------------

    async def on_authorize(self, url: str) -> str:
        """The user approves at once: the browser follows the authorization endpoint's redirect."""
        async with httpx.AsyncClient() as browser:
            response = await browser.get(url)
        assert response.status_code == 302, response.text
        return response.headers["location"]

    # -- the server -------------------------------------------------------------------------------

    async def app(self, request: RawRequest, reply: Reply) -> None:
        path, _, query = request.path.partition("?")
        params = {k: v[0] for k, v in parse_qs(query).items()}
        parts = path.strip("/").split("/")
        if path == "/.well-known/oauth-authorization-server":
            await _json(reply, 200, self.metadata())
        elif path.startswith("/.well-known/oauth-protected-resource/"):
            claimed = self.claims.get(parts[2], f"{self.base}/{'/'.join(parts[2:])}")
            await _json(reply, 200, {"resource": claimed, "authorization_servers": [self.base]})
        elif path == "/register":
            self.registrations += 1
            body = json.loads(request.body)
            client = {"client_id": f"client-{self.registrations}", "token_endpoint_auth_method": "none"}
            await _json(reply, 201, {**client, "redirect_uris": body["redirect_uris"]})
        elif path == "/authorize":
            code = secrets.token_hex(8)
            self.codes[code] = params
            self.authorized.append(params["resource"])
            back = {"code": code, "state": params["state"], "iss": self.base}
            await reply.send(302, headers={"Location": f"{params['redirect_uri']}?{urlencode(back)}"})
        elif path == "/token":
            await self.token(reply, {k: v[0] for k, v in parse_qs(request.body.decode()).items()})
        elif len(parts) == 2 and parts[1] == "mcp":
            await self.mcp(parts[0], request, reply)
        elif len(parts) == 2 and parts[1] == "sse":
            await self.sse_stream(parts[0], request, reply)
        elif len(parts) == 2 and parts[1] == "messages":
            await self.sse_message(parts[0], request, reply, params.get("session", ""))
        else:
            await reply.send(404)

    def metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.base,
            "authorization_endpoint": f"{self.base}/authorize",
            "token_endpoint": f"{self.base}/token",
            "registration_endpoint": f"{self.base}/register",
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "authorization_response_iss_parameter_supported": True,
        }

    async def token(self, reply: Reply, form: dict[str, str]) -> None:
        if form["grant_type"] == "authorization_code":
            asked = self.codes.pop(form["code"], None)
            if (
                asked is None
                or s256(form["code_verifier"]) != asked["code_challenge"]
                or form.get("resource") != asked["resource"]
            ):
                await _json(reply, 400, {"error": "invalid_grant"})
                return
            resource = asked["resource"]
        elif form["grant_type"] == "refresh_token" and form["refresh_token"] in self.refresh:
            resource = self.refresh.pop(form["refresh_token"])
        else:
            await _json(reply, 400, {"error": "invalid_grant"})
            return
        access, refresh = f"AT-{secrets.token_hex(8)}", f"RT-{secrets.token_hex(8)}"
        self.issued[access] = resource
        self.refresh[refresh] = resource
        body = {"access_token": access, "token_type": "Bearer", "expires_in": 3600, "refresh_token": refresh}
        await _json(reply, 200, body)

    def authorized_for(
        self, name: str, request: RawRequest, resource: str, server: str
    ) -> dict[str, str] | None:
        """None when the request carries a token issued for ``resource``, else the 401's headers
        (pointing at the metadata of the server at path ``server``)."""
        header = request.headers.get("authorization")
        self.seen.setdefault(name, []).append(header)
        if header is not None and self.issued.get(header.removeprefix("Bearer ")) == resource:
            return None
        metadata = f"{self.base}/.well-known/oauth-protected-resource{server}"
        error = ', error="invalid_token"' if header is not None else ""
        return {"WWW-Authenticate": f'Bearer resource_metadata="{metadata}"{error}'}

    async def mcp(self, name: str, request: RawRequest, reply: Reply) -> None:
        """A stateless legacy-era MCP server whose audience is its own URL. The one named "slash"
        lives at ``/slash/mcp/`` and redirects ``/slash/mcp`` there, once the token is checked."""
        refused = self.authorized_for(
            name, request, self.claims.get(name, self.resource(name)), f"/{name}/mcp"
        )
        if refused is not None:
            await reply.send(401, b'{"error": "invalid_token"}', headers=refused)
            return
        if name == "slash" and not request.path.endswith("/"):
            await reply.send(307, headers={"Location": f"/{name}/mcp/"})
            return
        if request.method != "POST":
            await reply.send(405)
            return
        answer = _answer(name, json.loads(request.body))
        if answer is None:
            await reply.send(202)
        else:
            await _json(reply, 200, answer)

    async def sse_stream(self, name: str, request: RawRequest, reply: Reply) -> None:
        """A 2024-11-05 HTTP+SSE server: its stream names ``/<name>/messages`` as the POST endpoint."""
        refused = self.authorized_for(name, request, f"{self.base}/{name}/sse", f"/{name}/sse")
        if refused is not None:
            await reply.send(401, b'{"error": "invalid_token"}', headers=refused)
            return
        session = secrets.token_hex(4)
        send, receive = anyio.create_memory_object_stream[bytes](16)
        self.sse[session] = send
        await reply.start(200, content_type="text/event-stream")
        await reply.write(f"event: endpoint\ndata: /{name}/messages?session={session}\n\n".encode())
        async with receive:
            async for event in receive:
                await reply.write(event)

    async def sse_message(self, name: str, request: RawRequest, reply: Reply, session: str) -> None:
        # The POST endpoint belongs to the server at /<name>/sse: its audience is that server's.
        refused = self.authorized_for(f"{name}-messages", request, f"{self.base}/{name}/sse", f"/{name}/sse")
        if refused is not None:
            await reply.send(401, b'{"error": "invalid_token"}', headers=refused)
            return
        answer = _answer(name, json.loads(request.body))
        await reply.send(202)
        if answer is not None:
            await self.sse[session].send(f"event: message\ndata: {json.dumps(answer)}\n\n".encode())


def _answer(name: str, body: dict[str, Any]) -> dict[str, Any] | None:
    if "id" not in body:
        return None  # a notification
    method = body["method"]
    if method == "initialize":
        result: dict[str, Any] = {
            "protocolVersion": body["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": name, "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": [{"name": "whoami", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": name}]}
    else:
        return {"jsonrpc": "2.0", "id": body["id"], "error": {"code": -32601, "message": method}}
    return {"jsonrpc": "2.0", "id": body["id"], "result": result}


async def _json(reply: Reply, status: int, body: Any) -> None:
    await reply.send(status, json.dumps(body).encode())


@pytest.fixture
async def gateway() -> AsyncIterator[Gateway]:
    world = Gateway()
    async with raw_http_server(world.app) as base:
        world.base = base
        yield world


def _oauth(world: Gateway, **kwargs: Any) -> OAuth:
    return OAuth(redirect_uri=REDIRECT, on_authorize=world.on_authorize, **kwargs)


async def _whoami(world: Gateway, name: str, auth: OAuth) -> str:
    async with Client(world.resource(name), auth=auth, protocol="legacy", timeout=20) as client:
        return (await client.call_tool("whoami")).text


# --- the tests ------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_one_oauth_for_two_servers_on_one_origin_sequentially(gateway: Gateway) -> None:
    auth = _oauth(gateway)
    with anyio.fail_after(30):
        assert await _whoami(gateway, "good", auth) == "good"
        assert await _whoami(gateway, "sibling", auth) == "sibling"
        assert await _whoami(gateway, "good", auth) == "good"  # its own token, kept: no new sign-in
        assert await _whoami(gateway, "sibling", auth) == "sibling"
    assert gateway.only_own_tokens("good")
    assert gateway.only_own_tokens("sibling")
    assert gateway.seen["sibling"][0] is None  # its first request carried no one else's token
    assert gateway.authorized == [gateway.resource("good"), gateway.resource("sibling")]
    assert gateway.registrations == 1  # the client registration is the authorization server's
    shown = repr(auth)
    assert gateway.resource("good") in shown
    assert gateway.resource("sibling") in shown
    assert not any(token in shown for token in gateway.issued)


@pytest.mark.anyio
async def test_one_oauth_for_two_servers_on_one_origin_concurrently(gateway: Gateway) -> None:
    auth = _oauth(gateway)
    texts: dict[str, list[str]] = {"good": [], "sibling": []}

    async def use(name: str) -> None:
        client = Client(gateway.resource(name), auth=auth, protocol="legacy", timeout=20)

        async def call() -> None:
            texts[name].append((await client.call_tool("whoami")).text)

        async with client, anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(call)

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(use, "good")
            tg.start_soon(use, "sibling")
    assert texts == {"good": ["good"] * 3, "sibling": ["sibling"] * 3}
    assert gateway.only_own_tokens("good")
    assert gateway.only_own_tokens("sibling")
    assert sorted(gateway.authorized) == sorted([gateway.resource("good"), gateway.resource("sibling")])


@pytest.mark.anyio
async def test_a_file_store_reloaded_keeps_each_servers_tokens_apart(gateway: Gateway, tmp_path: Any) -> None:
    path = tmp_path / "tokens.json"
    with anyio.fail_after(30):
        first = _oauth(gateway, store=FileTokenStore(path))
        assert await _whoami(gateway, "good", first) == "good"
        assert await _whoami(gateway, "sibling", first) == "sibling"
        stored = json.loads(path.read_text())["tokens"]
        assert sorted(stored) == sorted([gateway.resource("good"), gateway.resource("sibling")])
        for key, entry in stored.items():
            assert entry["resource"] == key
            assert gateway.issued[entry["access_token"]] == key
        again = _oauth(gateway, store=FileTokenStore(path))  # a new process, say
        assert await _whoami(gateway, "sibling", again) == "sibling"
        assert await _whoami(gateway, "good", again) == "good"
    assert len(gateway.authorized) == 2  # the second object signed in nowhere: it used the file
    assert gateway.only_own_tokens("good")
    assert gateway.only_own_tokens("sibling")


@pytest.mark.anyio
async def test_a_server_claiming_another_resource_is_refused_and_gets_no_token(gateway: Gateway) -> None:
    auth = _oauth(gateway)
    gateway.claims["evil"] = gateway.resource("good")  # its metadata says it is /good/mcp
    with anyio.fail_after(30):
        assert await _whoami(gateway, "good", auth) == "good"
        with pytest.raises(McpError, match="impersonating another") as info:
            await _whoami(gateway, "evil", auth)
    assert info.value.kind == "auth"
    assert gateway.tokens_seen("evil") == []  # good's token never went there
    assert not any(token in str(info.value) for token in gateway.issued)
    assert gateway.authorized == [gateway.resource("good")]


class _CarelessStore(MemoryTokenStore):
    """A store that ignores the server it is asked about: whatever it holds, it returns."""

    def __init__(self) -> None:
        super().__init__()
        self.last: Tokens | None = None

    async def get_tokens(self, server: str) -> Tokens | None:
        return self.last

    async def set_tokens(self, server: str, tokens: Tokens | None) -> None:
        self.last = tokens or self.last


@pytest.mark.anyio
async def test_tokens_a_store_returns_for_another_resource_are_not_sent(gateway: Gateway) -> None:
    store = _CarelessStore()
    with anyio.fail_after(30):
        assert await _whoami(gateway, "good", _oauth(gateway, store=store)) == "good"
        # A new object asks the store for the sibling's tokens and is handed the good server's.
        assert await _whoami(gateway, "sibling", _oauth(gateway, store=store)) == "sibling"
    assert gateway.only_own_tokens("sibling")
    assert gateway.only_own_tokens("good")


@pytest.mark.anyio
@pytest.mark.parametrize("engine", ["httpx", "aiohttp"])
async def test_http_sse_posts_carry_their_streams_tokens(gateway: Gateway, engine: Any) -> None:
    """The 2024-11-05 binding POSTs to an endpoint its stream names: the same server, not another
    resource, so no sign-in of its own and no refusal as an impostor."""
    auth = _oauth(gateway)
    transport = HttpTransport(f"{gateway.base}/legacy/sse", auth=auth, mode="sse", engine=engine)
    with anyio.fail_after(30):
        async with Client(transport, protocol="legacy", timeout=20) as client:
            assert (await client.call_tool("whoami")).text == "legacy"
            assert (await client.call_tool("whoami")).text == "legacy"
        assert await _whoami(gateway, "good", auth) == "good"
    sse = f"{gateway.base}/legacy/sse"
    assert gateway.authorized == [sse, gateway.resource("good")]
    assert gateway.only_own_tokens("legacy", sse)
    assert gateway.tokens_seen("legacy-messages")
    assert gateway.only_own_tokens("legacy-messages", sse)
    assert gateway.only_own_tokens("good")
    shown = repr(auth.for_server(sse))
    assert sse in shown
    assert not any(token in shown for token in gateway.issued)


@pytest.mark.anyio
async def test_clear_forgets_one_server_or_all_of_them(gateway: Gateway) -> None:
    store = MemoryTokenStore()
    auth = _oauth(gateway, store=store)
    with anyio.fail_after(30):
        assert await _whoami(gateway, "good", auth) == "good"
        assert await _whoami(gateway, "sibling", auth) == "sibling"
        await auth.clear(gateway.resource("good"))
        assert await store.get_tokens(gateway.resource("good")) is None
        assert await store.get_tokens(gateway.resource("sibling")) is not None
        assert await _whoami(gateway, "sibling", auth) == "sibling"
        assert len(gateway.authorized) == 2  # the sibling's tokens were kept
        assert await _whoami(gateway, "good", auth) == "good"
        assert len(gateway.authorized) == 3
        await auth.clear()
        assert await store.get_tokens(gateway.resource("good")) is None
        assert await store.get_tokens(gateway.resource("sibling")) is None


@pytest.mark.anyio
async def test_a_redirect_to_the_same_url_with_a_slash_is_the_same_resource(gateway: Gateway) -> None:
    auth = _oauth(gateway)
    with anyio.fail_after(30):
        assert await _whoami(gateway, "slash", auth) == "slash"
        assert await _whoami(gateway, "good", auth) == "good"
    assert gateway.authorized == [gateway.resource("slash"), gateway.resource("good")]
    assert gateway.only_own_tokens("slash")
    assert gateway.only_own_tokens("good")
