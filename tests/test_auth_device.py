"""The device authorization grant (RFC 8628), against an authorization server of ours on loopback.

The server is test_auth_resources.py's gateway (an authorization server at its root and protected
MCP servers at ``/<name>/mcp``, one real HTTP server on 127.0.0.1) with a device endpoint added.
The person is the test: it reads the code from what the client shows (``OAuth.on_device_code``)
and GETs the server's approve, deny or expire URL, as a person clicks "Allow" on a phone. The
server records each poll's time, so the waits between polls are asserted against one another and
against the interval in force, never against a budget. Every sign-in runs with ``flow="device"``:
no loopback listener is opened and no authorization endpoint is visited.
"""

from __future__ import annotations

import base64
import json
import logging
import secrets
import time
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import parse_qs, urlencode

import anyio
import httpx
import pytest

from mcp_notebook import Client, McpError
from mcp_notebook.auth import MemoryTokenStore, OAuth
from mcp_notebook.auth._device import DeviceSignIn, next_interval, parse_device_authorization
from tests.raises import raises_mcp
from tests.raw_http import RawRequest, Reply, raw_http_server
from tests.test_auth_resources import Gateway, _json

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


class DeviceGateway(Gateway):
    """The gateway, with RFC 8628's device endpoint and a person's approve/deny pages.

    Knobs: ``interval`` and ``expires_in`` (what the device endpoint answers), ``slow_down_at``
    (the poll numbers, from 1, answered ``slow_down``), ``echo_device_code`` (the token endpoint
    refuses every poll with an error that quotes the device code: a careless server), and
    ``needs_scope`` (server name -> the scope its tools need: 403 insufficient_scope without it).
    """

    def __init__(self) -> None:
        super().__init__()
        self.interval: float | None = 0.05
        self.expires_in: float = 60
        self.slow_down_at: set[int] = set()
        self.echo_device_code = False
        self.needs_scope: dict[str, str] = {}
        self.auth_methods = ["none"]  # token_endpoint_auth_methods_supported
        self.user_code: str | None = None  # the user code to hand out (None: a fresh one)
        self.padding = 0  # bytes of padding in the device endpoint's answer
        self.client_auth: list[str | None] = []  # the Authorization header of each device/token request
        self.devices: dict[str, dict[str, Any]] = {}  # device code -> its request and state
        self.device_requests: list[dict[str, str]] = []
        self.poll_times: list[float] = []  # time.monotonic() of each poll, in order
        self.answers: list[str] = []  # what each poll was answered
        self.paths: list[str] = []
        self.scopes: dict[str, set[str]] = {}  # access token -> the scopes granted
        self._polled = anyio.Event()

    # -- the person -------------------------------------------------------------------------------

    async def person(self, action: str, user_code: str) -> None:
        """Open the server's page for ``action`` ("approve", "deny", "expire") with the shown code."""
        query = urlencode({"user_code": user_code})
        async with httpx.AsyncClient() as browser:
            response = await browser.get(f"{self.base}/device/{action}?{query}")
        assert response.status_code == 200, response.text

    async def polls(self, count: int) -> None:
        """Wait until the client has polled ``count`` times."""
        while len(self.poll_times) < count:
            await self._polled.wait()

    # -- the server -------------------------------------------------------------------------------

    async def app(self, request: RawRequest, reply: Reply) -> None:
        path, _, query = request.path.partition("?")
        self.paths.append(path)
        params = {k: v[0] for k, v in parse_qs(query).items()}
        if path in ("/device_authorization", "/token"):
            self.client_auth.append(request.headers.get("authorization"))
        if path == "/device_authorization":
            await self.device_authorization(reply, _form(request))
        elif path.startswith("/device/"):
            await self.person_page(reply, path.rsplit("/", 1)[1], params.get("user_code", ""))
        else:
            await super().app(request, reply)

    def metadata(self) -> dict[str, Any]:
        return {
            **super().metadata(),
            "device_authorization_endpoint": f"{self.base}/device_authorization",
            "token_endpoint_auth_methods_supported": self.auth_methods,
        }

    async def device_authorization(self, reply: Reply, form: dict[str, str]) -> None:
        self.device_requests.append(form)
        device_code = f"DEVICE-{secrets.token_hex(12)}"
        user_code = self.user_code or f"{secrets.token_hex(2).upper()}-WXYZ"
        client = (form.get("client_id"), self.client_auth[-1])  # a poll must come from the same client
        self.devices[device_code] = {
            "form": form,
            "user_code": user_code,
            "state": "pending",
            "client": client,
        }
        body: dict[str, Any] = {
            "device_code": device_code,
            "user_code": user_code,
            "verification_uri": f"{self.base}/device",
            "verification_uri_complete": f"{self.base}/device?{urlencode({'user_code': user_code})}",
            "expires_in": self.expires_in,
        }
        if self.interval is not None:
            body["interval"] = self.interval
        if self.padding:
            body["padding"] = "x" * self.padding
        await _json(reply, 200, body)

    async def person_page(self, reply: Reply, action: str, user_code: str) -> None:
        state = {"approve": "approved", "deny": "denied", "expire": "expired"}.get(action)
        found = [d for d in self.devices.values() if d["user_code"] == user_code]
        if state is None or len(found) != 1:
            await reply.send(404)
            return
        found[0]["state"] = state
        await reply.send(200, b"done", content_type="text/plain")

    async def token(self, reply: Reply, form: dict[str, str]) -> None:
        if form["grant_type"] != DEVICE_GRANT:
            await super().token(reply, form)
            return
        self.poll_times.append(time.monotonic())
        self._polled.set()
        self._polled = anyio.Event()
        device = self.devices.get(form.get("device_code", ""))
        if (
            device is None
            or self.echo_device_code
            or device["client"] != (form.get("client_id"), self.client_auth[-1])
        ):
            answer = "invalid_grant"
        elif len(self.poll_times) in self.slow_down_at:
            answer = "slow_down"
        else:
            answer = {
                "pending": "authorization_pending",
                "denied": "access_denied",
                "expired": "expired_token",
                "approved": "ok",
            }[device["state"]]
        self.answers.append(answer)
        if answer != "ok":
            body = {"error": answer}
            if self.echo_device_code:
                body["error_description"] = f"unknown device_code {form.get('device_code')}"
            await _json(reply, 400, body)
            return
        del self.devices[form["device_code"]]  # a device code is redeemed once
        resource = device["form"]["resource"]
        access = f"AT-{secrets.token_hex(8)}"
        self.issued[access] = resource
        self.scopes[access] = set(device["form"].get("scope", "").split())
        self.authorized.append(resource)
        await _json(reply, 200, {"access_token": access, "token_type": "Bearer", "expires_in": 3600})

    async def mcp(self, name: str, request: RawRequest, reply: Reply) -> None:
        needed = (
            self.needs_scope.get(name)
            if json.loads(request.body or b"{}").get("method") == "tools/call"
            else None
        )
        token = (request.headers.get("authorization") or "").removeprefix("Bearer ")
        if needed and self.issued.get(token) == self.resource(name) and needed not in self.scopes[token]:
            self.seen.setdefault(name, []).append(request.headers.get("authorization"))
            metadata = f"{self.base}/.well-known/oauth-protected-resource/{name}/mcp"
            challenge = f'Bearer error="insufficient_scope", scope="{needed}", resource_metadata="{metadata}"'
            await reply.send(403, b'{"error": "insufficient_scope"}', headers={"WWW-Authenticate": challenge})
            return
        await super().mcp(name, request, reply)


def _form(request: RawRequest) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(request.body.decode()).items()}


@pytest.fixture
async def world() -> AsyncIterator[DeviceGateway]:
    server = DeviceGateway()
    async with raw_http_server(server.app) as base:
        server.base = base
        yield server


def _shown(auth: OAuth) -> tuple[list[DeviceSignIn], anyio.Event]:
    """What the client shows the person, as it shows it (and an event set on each)."""
    shown: list[DeviceSignIn] = []
    arrived = anyio.Event()

    def show(sign_in: DeviceSignIn) -> None:
        shown.append(sign_in)
        arrived.set()

    auth.on_device_code(show)
    return shown, arrived


async def _whoami(world: DeviceGateway, name: str, auth: OAuth) -> str:
    async with Client(world.resource(name), auth=auth, protocol="legacy", timeout=20) as client:
        return (await client.call_tool("whoami")).text


async def _sign_in_with(
    world: DeviceGateway, auth: OAuth, name: str, person: Callable[[DeviceSignIn], Any]
) -> str:
    """Call ``whoami`` on ``name`` while ``person(sign_in)`` answers the sign-in it is shown."""
    shown, arrived = _shown(auth)
    failed: McpError | None = None

    async def answer() -> None:
        await arrived.wait()
        await person(shown[-1])

    with anyio.fail_after(30):  # a hang guard only
        async with anyio.create_task_group() as tg:
            tg.start_soon(answer)
            try:
                return await _whoami(world, name, auth)
            except McpError as exc:
                failed = exc
            tg.cancel_scope.cancel()
    assert failed is not None
    raise failed


# --- the tests ------------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_an_approved_device_sign_in_calls_a_protected_tool(world: DeviceGateway, capsys: Any) -> None:
    store = MemoryTokenStore()
    auth = OAuth(flow="device", store=store, scope="mcp:tools")

    async def approve_after_a_pending_poll(sign_in: DeviceSignIn) -> None:
        await world.polls(1)
        await world.person("approve", sign_in.user_code)

    assert await _sign_in_with(world, auth, "good", approve_after_a_pending_poll) == "good"
    assert world.answers == ["authorization_pending", "ok"]
    assert world.only_own_tokens("good")
    tokens = await store.get_tokens(world.resource("good"))
    assert tokens is not None
    assert world.issued[tokens.access_token] == world.resource("good")
    # The device request carried what the code flow sends: the client, the resource, the scope.
    (asked,) = world.device_requests
    assert asked["resource"] == world.resource("good")
    assert asked["scope"] == "mcp:tools"
    assert asked["client_id"] == "client-1"
    # No redirect anywhere: no authorization endpoint, a registration without redirect URIs.
    assert "/authorize" not in world.paths
    assert world.registrations == 1
    # Shown to the person by the listener, not printed; the URL with the code is offered too.
    assert "To sign in" not in capsys.readouterr().err


@pytest.mark.anyio
async def test_auto_signs_in_with_the_device_grant_where_the_browser_is_elsewhere(
    world: DeviceGateway, monkeypatch: pytest.MonkeyPatch
) -> None:
    """flow="auto" under JupyterHub (the browser is on the person's machine) and an authorization
    server that offers the device grant: the device grant runs, and nothing is sent to a redirect."""
    monkeypatch.setenv("JUPYTERHUB_USER", "ada")
    store = MemoryTokenStore()
    auth = OAuth(store=store)  # flow="auto"

    async def approve(sign_in: DeviceSignIn) -> None:
        await world.person("approve", sign_in.user_code)

    assert await _sign_in_with(world, auth, "good", approve) == "good"
    assert len(world.device_requests) == 1
    assert "/authorize" not in world.paths
    assert await store.get_tokens(world.resource("good")) is not None


@pytest.mark.anyio
async def test_without_a_listener_the_code_is_printed(world: DeviceGateway, capsys: Any) -> None:
    auth = OAuth(flow="device")
    seen: list[str] = []

    async def approve_once_printed() -> None:
        while not seen:
            await world.polls(len(world.poll_times) + 1)
            seen.append(capsys.readouterr().err)
        await world.person("approve", seen[0].split(" and enter ", 1)[1].split()[0])

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(approve_once_printed)
            assert await _whoami(world, "good", auth) == "good"
    assert f"To sign in, open {world.base}/device and enter " in seen[0]
    assert "user_code=" in seen[0]  # verification_uri_complete, offered as well


@pytest.mark.anyio
async def test_slow_down_adds_five_seconds_to_the_wait(world: DeviceGateway) -> None:
    world.interval = 0.05
    world.slow_down_at = {2}
    auth = OAuth(flow="device")

    async def approve_after_the_slow_down(sign_in: DeviceSignIn) -> None:
        await world.polls(2)
        await world.person("approve", sign_in.user_code)

    assert await _sign_in_with(world, auth, "good", approve_after_the_slow_down) == "good"
    assert world.answers == ["authorization_pending", "slow_down", "ok"]
    first, second, third = world.poll_times
    # Lower bounds only, which hold however busy the machine: the client sends a poll no sooner
    # than the interval in force after the previous answer arrived (anyio's sleep never returns
    # early; 1 ms for the loop's clock resolution), so the server sees them at least that far apart.
    assert second - first >= 0.05 - 0.001
    assert third - second >= 0.05 + 5 - 0.001


def test_slow_down_is_for_every_later_poll_and_other_errors_end_the_polling() -> None:
    interval = next_interval("slow_down", 5.0)
    assert interval == 10.0
    assert next_interval("authorization_pending", interval) == 10.0  # kept: not back to 5 s
    assert next_interval("slow_down", interval) == 15.0
    for error in ("access_denied", "expired_token", "invalid_grant", "invalid_client", None):
        assert next_interval(error, interval) is None


@pytest.mark.parametrize(("interval", "used"), [(None, 5.0), (3, 3.0), (1e-9, 0.05), (0, 5.0), (True, 5.0)])
def test_the_interval_is_the_servers_or_five_seconds_and_never_a_spin(interval: Any, used: float) -> None:
    answer = {"device_code": "D" * 20, "user_code": "AB-CD", "verification_uri": "https://as.example/d"}
    answer |= {"expires_in": 600} | ({} if interval is None else {"interval": interval})
    codes = parse_device_authorization(200, json.dumps(answer).encode(), endpoint="e", redact=[])
    assert codes.interval == used
    assert "D" * 20 not in repr(codes)  # the device code is a secret


@pytest.mark.anyio
async def test_a_declined_sign_in_says_so_and_stores_nothing(world: DeviceGateway) -> None:
    store = MemoryTokenStore()
    auth = OAuth(flow="device", store=store)

    async def decline(sign_in: DeviceSignIn) -> None:
        await world.person("deny", sign_in.user_code)

    with raises_mcp("auth", match=f"the sign-in was declined at {world.base}"):
        await _sign_in_with(world, auth, "good", decline)
    assert await store.get_tokens(world.resource("good")) is None
    assert world.issued == {}
    assert world.tokens_seen("good") == []


@pytest.mark.anyio
async def test_a_code_the_server_expired_ends_the_sign_in(world: DeviceGateway) -> None:
    store = MemoryTokenStore()
    auth = OAuth(flow="device", store=store)

    async def let_it_expire(sign_in: DeviceSignIn) -> None:
        await world.person("expire", sign_in.user_code)

    with raises_mcp("auth", match="the code expired before the sign-in"):
        await _sign_in_with(world, auth, "good", let_it_expire)
    assert await store.get_tokens(world.resource("good")) is None
    assert world.issued == {}


@pytest.mark.anyio
async def test_the_client_stops_polling_when_expires_in_has_passed(world: DeviceGateway) -> None:
    world.expires_in = 0.5
    world.interval = 0.1
    store = MemoryTokenStore()
    auth = OAuth(flow="device", store=store)

    async def never_answer(sign_in: DeviceSignIn) -> None:
        return None

    started = time.monotonic()
    with raises_mcp("auth", match="the code expired before the sign-in") as info:
        await _sign_in_with(world, auth, "good", never_answer)
    assert time.monotonic() - started >= 0.5  # it waited out the code's life, no less
    assert world.answers
    assert set(world.answers) == {"authorization_pending"}
    assert await store.get_tokens(world.resource("good")) is None
    assert info.value.data == {"oauth_error": "expired_token"}


@pytest.mark.anyio
async def test_the_device_code_is_never_logged_shown_or_quoted(
    world: DeviceGateway, caplog: Any, capsys: Any
) -> None:
    world.echo_device_code = True  # a careless server quotes the device code in its error
    caplog.set_level(logging.DEBUG)
    auth = OAuth(flow="device")
    shown, arrived = _shown(auth)
    with raises_mcp("auth", match="refused the device code grant") as info:
        with anyio.fail_after(30):
            await _whoami(world, "good", auth)
    (device_code,) = world.devices
    assert arrived.is_set()
    outputs = [
        caplog.text,
        capsys.readouterr().err,
        str(info.value),
        repr(info.value),
        repr(auth),
        repr(shown[0]),
        shown[0].message,
        repr(vars(shown[0])),
    ]
    assert all(device_code not in text for text in outputs)
    assert shown[0].outcome == "failed"
    assert shown[0].user_code in repr(shown[0])  # the user code is meant to be shown


@pytest.mark.anyio
async def test_step_up_runs_the_device_flow_again_with_the_union_of_scopes(world: DeviceGateway) -> None:
    world.needs_scope["write"] = "mcp:write"
    auth = OAuth(flow="device", scope="mcp:read")

    async def approve_each(sign_in: DeviceSignIn) -> None:
        await world.person("approve", sign_in.user_code)

    shown, _ = _shown(auth)
    done = anyio.Event()

    async def person() -> None:
        answered = 0
        while not done.is_set():
            await world.polls(len(world.poll_times) + 1)
            for sign_in in shown[answered:]:
                await approve_each(sign_in)
                answered += 1

    with anyio.fail_after(30):
        async with anyio.create_task_group() as tg:
            tg.start_soon(person)
            assert await _whoami(world, "write", auth) == "write"
            done.set()
            tg.cancel_scope.cancel()
    assert [r.get("scope") for r in world.device_requests] == ["mcp:read", "mcp:read mcp:write"]
    assert [s.outcome for s in shown] == ["signed in", "signed in"]


def test_flow_device_is_checked_at_construction() -> None:
    with pytest.raises(ValueError, match="flow="):
        OAuth(flow="device", grant="client_credentials", client_id="a", client_secret="b")
    with pytest.raises(ValueError, match="flow must be"):
        OAuth(flow="nope")  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_a_server_without_a_device_endpoint_is_told_apart(world: DeviceGateway) -> None:
    world.metadata = lambda: Gateway.metadata(world)  # type: ignore[method-assign]
    with raises_mcp("auth", match="offers no device authorization grant"):
        with anyio.fail_after(30):
            await _whoami(world, "good", OAuth(flow="device"))
    assert world.device_requests == []


@pytest.mark.anyio
async def test_a_device_sign_in_mid_session_waits_for_the_person_not_for_the_request_deadline(
    world: DeviceGateway,
) -> None:
    """The tokens are revoked mid-session; the person approves only after more polls than fit in a
    request deadline (each poll waits at least the interval). The calls waiting on the sign-in do
    not time out: the deadlines are held while a person signs in, as for the loopback flow."""
    world.interval = 0.1
    auth = OAuth(flow="device", authorize_timeout=30)
    shown, _ = _shown(auth)
    texts: list[str] = []

    async def person() -> None:
        """Approves each sign-in shown, after five polls of it (at least 0.5 s: each waits 0.1 s)."""
        approved = 0
        while True:
            first = len(world.poll_times)
            await world.polls(first + 1)
            if len(shown) > approved:
                await world.polls(first + 5)
                await world.person("approve", shown[approved].user_code)
                approved += 1

    with anyio.fail_after(30):  # a hang guard only
        async with anyio.create_task_group() as people:
            people.start_soon(person)
            async with Client(world.resource("good"), auth=auth, protocol="legacy", timeout=0.3) as client:
                await client.call_tool("whoami")
                world.issued.clear()  # revoked: only a new sign-in helps
                world.refresh.clear()

                async def call() -> None:
                    texts.append((await client.call_tool("whoami")).text)

                async with anyio.create_task_group() as tg:
                    for _ in range(3):
                        tg.start_soon(call)
                assert client.stats.timeouts == 0
            people.cancel_scope.cancel()
    assert texts == ["good"] * 3
    assert len(world.device_requests) == 2  # one sign-in at connect, one mid-session for all three


# --- in a notebook: the panel under the cell ------------------------------------------------------


def _panel_controls(widget: Any) -> dict[str, dict[str, Any]]:
    """The states a browser's view of the panel is sent, by the CSS class of each control."""
    from tests.widget_helpers import drawn

    models = drawn(widget)["models"]
    return {css: state for state in models.values() for css in state.get("_dom_classes", ())}


@pytest.mark.anyio
async def test_a_notebook_session_shows_the_code_in_a_panel_that_says_it_signed_in(
    world: DeviceGateway, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """A session opened in a notebook kernel: the sign-in is a panel under the cell (no printed
    line), with the code, the link that fills it in and a copy button; the person reads the code
    off the panel's state, approves, and the panel says it signed in."""
    pytest.importorskip("anywidget")
    import mcp_notebook
    from mcp_notebook.notebook import _host

    written: list[Any] = []
    monkeypatch.setattr(_host, "in_notebook", lambda: True)
    monkeypatch.setattr(_host, "cell_writer", lambda: written.append)  # the cell's output
    auth = OAuth(flow="device", authorize_timeout=20)  # the session's thread ends, whatever happens

    async def person() -> None:
        await world.polls(1)  # the panel is shown before the first poll
        (widget,) = written
        controls = _panel_controls(widget)
        code = controls["mcpnb-device-code"]["value"]
        user_code = code.split(">", 1)[1].split("<", 1)[0]
        assert controls["mcpnb-copy-code"]["copy_text"] == user_code
        assert f"{world.base}/device?user_code=" in controls["mcpnb-device-uri"]["value"]
        assert "Waiting for you to sign in" in controls["mcpnb-sign-in-status"]["value"]
        await world.person("approve", user_code)

    def open_session() -> Any:
        return mcp_notebook.Session(world.resource("good"), auth=auth, protocol="legacy", timeout=20)

    with anyio.fail_after(30):  # a hang guard only
        async with anyio.create_task_group() as tg:
            tg.start_soon(person)
            session = await anyio.to_thread.run_sync(open_session)
    try:
        assert (await anyio.to_thread.run_sync(session.call_tool, "whoami")).text == "good"
        (widget,) = written
        assert _panel_controls(widget)["mcpnb-sign-in-status"]["value"] == "<div><i>Signed in.</i></div>"
        assert "signed in" in repr(widget)
        assert not any(code in repr(widget) for code in world.devices)
    finally:
        await anyio.to_thread.run_sync(session.close)
    assert auth._device._presenters == []  # the closed session took its panel away
    assert "To sign in" not in capsys.readouterr().err  # shown in the panel, not printed too


@pytest.mark.anyio
async def test_the_panel_says_why_a_declined_sign_in_failed(world: DeviceGateway) -> None:
    pytest.importorskip("anywidget")
    from mcp_notebook.widgets._sign_in import DeviceSignInPanel

    auth = OAuth(flow="device")
    panels: list[DeviceSignInPanel] = []
    auth.on_device_code(lambda sign_in: panels.append(DeviceSignInPanel(sign_in)))

    async def decline(sign_in: DeviceSignIn) -> None:
        await world.person("deny", sign_in.user_code)

    with raises_mcp("auth", match="declined"):
        await _sign_in_with(world, auth, "good", decline)
    (panel,) = panels
    status = _panel_controls(panel.widget)["mcpnb-sign-in-status"]["value"]
    assert "Not signed in: " in status
    assert f"the sign-in was declined at {world.base}" in status
    assert _panel_controls(panel.widget)["mcpnb-copy-code"]["disabled"] is True


@pytest.mark.anyio
async def test_a_confidential_client_authenticates_the_device_request_and_every_poll(
    world: DeviceGateway,
) -> None:
    world.auth_methods = ["client_secret_basic"]
    auth = OAuth(flow="device", client_id="notebook-app", client_secret="s3cret-device-client")

    async def approve_after_a_poll(sign_in: DeviceSignIn) -> None:
        await world.polls(1)
        await world.person("approve", sign_in.user_code)

    assert await _sign_in_with(world, auth, "good", approve_after_a_poll) == "good"
    basic = "Basic " + base64.b64encode(b"notebook-app:s3cret-device-client").decode()
    assert world.client_auth == [basic, basic, basic]  # the device request and both polls
    assert world.registrations == 0  # a pre-registered client registers nowhere


@pytest.mark.anyio
async def test_the_sign_in_ends_at_authorize_timeout(world: DeviceGateway) -> None:
    world.interval = 0.1
    store = MemoryTokenStore()
    auth = OAuth(flow="device", authorize_timeout=0.3, store=store)

    async def never_answer(sign_in: DeviceSignIn) -> None:
        return None

    with raises_mcp("auth", match=r"not completed within authorize_timeout=0.3 s"):
        await _sign_in_with(world, auth, "good", never_answer)
    assert await store.get_tokens(world.resource("good")) is None


@pytest.mark.anyio
async def test_an_oversized_device_answer_is_refused(world: DeviceGateway) -> None:
    world.padding = 8192
    auth = OAuth(flow="device", max_response_bytes=4096)
    with raises_mcp("auth", match="max_response_bytes=4096"):
        with anyio.fail_after(30):
            await _whoami(world, "good", auth)
    assert world.poll_times == []


@pytest.mark.anyio
async def test_a_hostile_user_code_stays_text_in_the_panel_and_the_printed_line(
    world: DeviceGateway, capsys: Any
) -> None:
    pytest.importorskip("anywidget")
    from mcp_notebook.widgets._sign_in import DeviceSignInPanel
    from tests.widget_helpers import HOSTILE, assert_escaped, markup

    world.user_code = HOSTILE[:30] + "\x1b[2J"  # markup, and a terminal's "clear the screen"
    printed = OAuth(flow="device", authorize_timeout=0.2)
    with raises_mcp("auth", match="authorize_timeout"):
        with anyio.fail_after(30):
            await _whoami(world, "good", printed)
    assert "\x1b" not in capsys.readouterr().err  # shown as a visible escape, not obeyed

    shown = OAuth(flow="device", authorize_timeout=0.2)
    panels: list[DeviceSignInPanel] = []
    shown.on_device_code(lambda sign_in: panels.append(DeviceSignInPanel(sign_in)))
    with raises_mcp("auth", match="authorize_timeout"):
        with anyio.fail_after(30):
            await _whoami(world, "good", shown)
    assert_escaped(markup(panels[0].widget))
    assert "&lt;img" in markup(panels[0].widget)


def test_an_oauth_shared_by_sessions_shows_each_sign_in_once_until_the_last_closes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mcp_notebook.notebook import _host, _sign_in

    monkeypatch.setattr(_host, "in_notebook", lambda: True)
    monkeypatch.setattr(_sign_in, "_show", lambda sign_in, write: None)
    auth = OAuth(flow="device")
    first, second = _sign_in.hook_sign_in(auth), _sign_in.hook_sign_in(auth)
    assert len(auth._device._presenters) == 1  # one panel per sign-in, not one per session
    first()
    first()  # a session's undo counts once
    assert len(auth._device._presenters) == 1  # the other session still shows its sign-ins
    second()
    assert auth._device._presenters == []
    monkeypatch.setattr(_host, "in_notebook", lambda: False)
    assert _sign_in.hook_sign_in(auth) is _sign_in.no_sign_in  # a script: the printed line
    assert _sign_in.hook_sign_in("a bearer token") is _sign_in.no_sign_in
