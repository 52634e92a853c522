"""Signing in when the browser cannot reach the kernel: paste-back, ``flow=``'s "auto" rule, and a
redirect through a proxy the user already has (issue #40).

Against a real authorization server of ours on loopback (``tests/servers/oauth_server.py``: the
demo server behind it), through the public API: ``Client(url, auth=OAuth(...))`` and a protected
tool call. The person is played by a function that opens the sign-in link, approves it (the
server's form) and reads where the browser would have landed; nothing listens there, which is the
situation paste-back exists for.
"""

from __future__ import annotations

import getpass
import logging
import re
import sys
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import anyio
import anyio.abc
import httpx
import pytest

from mcp_notebook import Client
from mcp_notebook.auth import MemoryTokenStore, OAuth
from mcp_notebook.auth._paste import SignInLink, paste_answer
from mcp_notebook.auth._where import browser_elsewhere, choose_flow, in_jupyter_kernel
from tests.http_peers import TESTS, HttpPeer, _python_peer
from tests.raises import raises_mcp

pytest.importorskip("mcp")

OAUTH_SERVER = TESTS / "servers" / "oauth_server.py"


@pytest.fixture(scope="module")
def server() -> Iterator[HttpPeer]:
    with _python_peer("oauth", [sys.executable, str(OAUTH_SERVER)]) as peer:
        yield peer


def approve(link_url: str) -> str:
    """The person in the browser: open the link, press Sign in; the address the browser lands on."""
    with httpx.Client(timeout=10) as browser:
        page = browser.get(link_url)
        assert page.status_code == 200, page.text
        request_id = re.search(r"name='request' value='([^']+)'", page.text)
        assert request_id is not None
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(link_url))
        approved = browser.post(f"{origin}/authorize", data={"request": request_id.group(1)})
        assert approved.status_code == 302
        return approved.headers["location"]


def stats(server: HttpPeer) -> dict[str, int]:
    return httpx.get(f"{server.origin}/_admin/stats", timeout=10).json()  # type: ignore[no-any-return]


class Person:
    """A paste-back prompt played by the test: records what it was shown, pastes ``answer(landed)``."""

    def __init__(self, answer: Any = None) -> None:
        self.links: list[SignInLink] = []
        self.landed: list[str] = []
        self.answer = answer or (lambda landed, link: landed)

    async def __call__(self, link: SignInLink) -> str:
        self.links.append(link)
        landed = await anyio.to_thread.run_sync(approve, link.url)
        self.landed.append(landed)
        return str(self.answer(landed, link))


async def call_add(server: HttpPeer, auth: OAuth) -> Any:
    async with Client(server.url, auth=auth) as client:
        return await client.call_tool("add", {"a": 2, "b": 3})


def state_of(url: str) -> str:
    return parse_qs(urlsplit(url).query)["state"][0]


# --- paste-back, end to end -----------------------------------------------------------------------


@pytest.mark.anyio
async def test_pasting_the_address_the_browser_landed_on_signs_in(server: HttpPeer, caplog: Any) -> None:
    store = MemoryTokenStore()
    person = Person()
    auth = OAuth(flow="paste", store=store)
    auth.paste_with(person)
    with caplog.at_level(logging.DEBUG, logger="mcp_notebook"):
        result = await call_add(server, auth)
    ours = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("mcp_notebook"))
    assert "5" in str(result)
    [link] = person.links
    assert link.server_url == server.url
    assert link.url.startswith(f"{server.origin}/authorize?")
    # The redirect URI is a loopback address where nothing listens: the browser's page cannot load.
    assert link.redirect_uri.startswith("http://127.0.0.1:")
    assert link.redirect_uri.endswith("/callback")
    [landed] = person.landed
    assert landed.startswith(link.redirect_uri + "?")
    with pytest.raises(httpx.ConnectError):
        async with httpx.AsyncClient() as browser:
            await browser.get(landed, timeout=5)
    tokens = await store.get_tokens(server.url)
    assert tokens is not None
    code = parse_qs(urlsplit(landed).query)["code"][0]
    assert "connection to" in ours  # the client's own log lines were caught
    for shown in (ours, repr(auth), repr(tokens)):
        assert code not in shown
        assert tokens.access_token not in shown


@pytest.mark.anyio
async def test_pasting_only_the_code_signs_in(server: HttpPeer) -> None:
    store = MemoryTokenStore()
    person = Person(lambda landed, link: "  " + parse_qs(urlsplit(landed).query)["code"][0] + "\n")
    auth = OAuth(flow="paste", store=store)
    auth.paste_with(person)
    assert "5" in str(await call_add(server, auth))
    assert await store.get_tokens(server.url) is not None


@pytest.mark.anyio
async def test_a_second_sign_in_pastes_again_with_the_same_registration(server: HttpPeer) -> None:
    store = MemoryTokenStore()
    person = Person()
    auth = OAuth(flow="paste", store=store)
    auth.paste_with(person)
    await call_add(server, auth)
    first = await store.get_tokens(server.url)
    await auth.clear()  # signed out: the next request signs in again
    await call_add(server, auth)
    second = await store.get_tokens(server.url)
    assert len(person.links) == 2
    assert first is not None
    assert second is not None
    assert second.access_token != first.access_token
    client_ids = {parse_qs(urlsplit(link.url).query)["client_id"][0] for link in person.links}
    assert len(client_ids) == 1  # registered once, its loopback redirect reused on another port


def _with_state(landed: str, state: str) -> str:
    parts = urlsplit(landed)
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    query["state"] = state
    return parts._replace(query=urlencode(query)).geturl()


@pytest.mark.anyio
async def test_a_wrong_state_is_refused_and_no_token_is_stored(server: HttpPeer) -> None:
    store = MemoryTokenStore()
    before = stats(server)
    person = Person(lambda landed, link: _with_state(landed, "not-the-state-we-sent"))
    auth = OAuth(flow="paste", store=store)
    auth.paste_with(person)
    with raises_mcp("auth", match="state") as error:
        await call_add(server, auth)
    assert "not-the-state-we-sent" not in str(error.value)
    assert await store.get_tokens(server.url) is None
    assert stats(server)["codes_redeemed"] == before["codes_redeemed"]  # the code was never sent


@pytest.mark.anyio
async def test_a_reused_code_is_refused_and_no_token_is_stored(server: HttpPeer) -> None:
    first = Person()
    auth = OAuth(flow="paste", store=MemoryTokenStore())
    auth.paste_with(first)
    await call_add(server, auth)
    used = first.landed[0]

    store = MemoryTokenStore()
    # The person pastes the earlier address again; it is made to carry this request's state, so
    # that it is the authorization server's rule (a code works once) that refuses it.
    again = Person(lambda landed, link: _with_state(used, state_of(link.url)))
    auth = OAuth(flow="paste", store=store)
    auth.paste_with(again)
    with raises_mcp("auth", match="already used") as error:
        await call_add(server, auth)
    assert parse_qs(urlsplit(used).query)["code"][0] not in str(error.value)
    assert await store.get_tokens(server.url) is None


@pytest.mark.anyio
async def test_an_expired_code_is_refused_and_no_token_is_stored(server: HttpPeer) -> None:
    store = MemoryTokenStore()

    def expire_then_paste(landed: str, link: SignInLink) -> str:
        httpx.post(f"{server.origin}/_admin/expire-codes", timeout=10).raise_for_status()
        return landed

    auth = OAuth(flow="paste", store=store)
    auth.paste_with(Person(expire_then_paste))
    with raises_mcp("auth", match="expired"):
        await call_add(server, auth)
    assert await store.get_tokens(server.url) is None


@pytest.mark.anyio
async def test_nothing_pasted_is_a_clear_error(server: HttpPeer) -> None:
    store = MemoryTokenStore()
    auth = OAuth(flow="paste", store=store)
    auth.paste_with(Person(lambda landed, link: "   "))
    with raises_mcp("auth", match="nothing was pasted"):
        await call_add(server, auth)
    assert await store.get_tokens(server.url) is None


@pytest.mark.anyio
async def test_in_a_terminal_the_link_is_printed_and_the_paste_is_not_echoed(
    server: HttpPeer, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    asked: list[str] = []

    def fake_getpass(prompt: str = "") -> str:
        # The person reads the printed link (stderr), signs in and pastes into a prompt that hides it.
        printed = capsys.readouterr().err
        link = next(line.strip() for line in printed.splitlines() if line.strip().startswith("http"))
        asked.append(prompt)
        return approve(link)

    monkeypatch.setattr(getpass, "getpass", fake_getpass)
    monkeypatch.setattr("builtins.input", lambda *a: pytest.fail("input() echoes what is pasted"))
    store = MemoryTokenStore()
    assert "5" in str(await call_add(server, OAuth(flow="paste", store=store)))
    assert asked == ["Address the browser landed on: "]
    assert await store.get_tokens(server.url) is not None


@pytest.mark.parametrize(
    ("pasted", "expected"),
    [
        ("http://127.0.0.1:5/callback?code=C1&state=S&iss=I2", {"code": "C1", "state": "S", "iss": "I2"}),
        (" http://127.0.0.1:5/callback?code=C1&state=S \n", {"code": "C1", "state": "S"}),
        ("?code=C1&state=S", {"code": "C1", "state": "S"}),
        ("code=C1&state=S", {"code": "C1", "state": "S"}),
        ("http://127.0.0.1:5/callback#code=C1&state=S", {"code": "C1", "state": "S"}),
        ("C1-only.the_code~", {"code": "C1-only.the_code~", "state": "OURS", "iss": "https://as.example"}),
    ],
)
def test_what_may_be_pasted(pasted: str, expected: dict[str, str]) -> None:
    assert paste_answer(pasted, expected_state="OURS", issuer="https://as.example") == expected


@pytest.mark.parametrize(
    ("pasted", "match"),
    [("", "nothing was pasted"), (None, "string"), ("?code=" + "C" * 20_000, "longer than 16384 characters")],
)
def test_what_cannot_be_pasted_is_refused_without_echoing_it(pasted: Any, match: str) -> None:
    with raises_mcp("auth", match=match) as error:
        paste_answer(pasted, expected_state="OURS", issuer="https://as.example")
    assert "CCCC" not in str(error.value)


@pytest.mark.anyio
async def test_with_stdin_closed_the_terminal_prompt_says_so(
    server: HttpPeer, monkeypatch: pytest.MonkeyPatch
) -> None:
    def closed(prompt: str = "") -> str:
        raise EOFError

    monkeypatch.setattr(getpass, "getpass", closed)
    store = MemoryTokenStore()
    with raises_mcp("auth", match="stdin is closed"):
        await call_add(server, OAuth(flow="paste", store=store))
    assert await store.get_tokens(server.url) is None


# --- flow="auto" ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("environ", "platform", "in_kernel", "where"),
    [
        ({}, "linux", False, None),
        ({"DISPLAY": ":0"}, "linux", True, None),
        ({"WAYLAND_DISPLAY": "wayland-0"}, "linux", True, None),
        ({}, "linux", True, "a Jupyter kernel on a machine without a display"),
        ({}, "darwin", True, None),
        ({"COLAB_RELEASE_TAG": "release-colab_20260101"}, "linux", False, "Google Colab"),
        ({"KAGGLE_KERNEL_RUN_TYPE": "Interactive"}, "linux", False, "Kaggle"),
        ({"BINDER_LAUNCH_HOST": "https://mybinder.org/"}, "linux", False, "Binder"),
        ({"JUPYTERHUB_USER": "ada", "DISPLAY": ":0"}, "linux", False, "JupyterHub"),
        ({"JUPYTERHUB_SERVICE_PREFIX": "/user/ada/"}, "linux", False, "JupyterHub"),
        ({"CODESPACES": "true"}, "linux", False, "GitHub Codespaces"),
        ({"SSH_CONNECTION": "10.0.0.2 5122 10.0.0.1 22"}, "darwin", False, "SSH"),
        ({"SSH_TTY": "/dev/pts/1"}, "win32", False, "SSH"),
        ({"SSH_CLIENT": ""}, "darwin", False, None),  # set but empty: no signal
    ],
)
def test_the_signals_that_the_browser_is_elsewhere(
    environ: dict[str, str], platform: str, in_kernel: bool, where: str | None
) -> None:
    assert browser_elsewhere(environ, platform=platform, in_kernel=in_kernel) == where


def test_having_ipykernel_imported_is_not_being_in_a_kernel() -> None:
    import ipykernel.kernelapp  # noqa: F401  (what an earlier test, or a library, may have done)

    assert not in_jupyter_kernel()


@pytest.mark.parametrize(
    ("flow", "elsewhere", "device", "listens", "chosen"),
    [
        ("auto", None, False, False, "loopback"),
        ("auto", None, True, False, "loopback"),
        ("auto", "SSH", False, False, "paste"),
        ("auto", "SSH", True, False, "device"),
        ("auto", "JupyterHub", True, True, "loopback"),  # redirect_uri= names a listener the browser reaches
        ("paste", None, True, False, "paste"),
        ("loopback", "Google Colab", True, False, "loopback"),
        ("device", None, False, False, "device"),
    ],
)
def test_the_auto_rule(flow: Any, elsewhere: str | None, device: bool, listens: bool, chosen: str) -> None:
    assert (
        choose_flow(flow, elsewhere=elsewhere, device_offered=device, listens_for_redirect=listens) == chosen
    )


@pytest.mark.anyio
async def test_auto_signs_in_by_paste_back_on_jupyterhub(
    server: HttpPeer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTERHUB_USER", "ada")
    person = Person()
    auth = OAuth(store=MemoryTokenStore())  # flow="auto"
    auth.paste_with(person)
    assert "5" in str(await call_add(server, auth))
    assert len(person.links) == 1


@pytest.mark.anyio
async def test_auto_uses_the_loopback_listener_where_the_browser_is_here(
    server: HttpPeer, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    for name in ("COLAB_RELEASE_TAG", "JUPYTERHUB_USER", "JUPYTERHUB_SERVICE_PREFIX", "SSH_CONNECTION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DISPLAY", ":0")
    auth = OAuth(store=MemoryTokenStore())
    auth.paste_with(lambda link: pytest.fail("paste-back asked for where the browser is on this machine"))

    async with anyio.create_task_group() as tg:

        async def browser() -> None:
            landed = await anyio.to_thread.run_sync(approve, await _printed_link(capsys))
            async with httpx.AsyncClient() as real:
                assert (await real.get(landed)).status_code == 200  # the listener took it

        tg.start_soon(browser)
        with anyio.fail_after(30):
            assert "5" in str(await call_add(server, auth))


# --- redirect_uri= through a proxy ---------------------------------------------------------------


async def _forward(client: anyio.abc.SocketStream, prefix: str, port: int) -> None:
    """jupyter-server-proxy, in small: ``GET {prefix}/rest`` goes to ``127.0.0.1:port`` as ``GET /rest``."""
    async with client:
        head = b""
        while b"\r\n\r\n" not in head:
            head += await client.receive()
        method, target, rest = head.split(b" ", 2)
        assert target.startswith(prefix.encode()), target
        upstream = await anyio.connect_tcp("127.0.0.1", port)
        async with upstream:
            await upstream.send(b" ".join([method, target[len(prefix) :], rest]))
            try:
                while True:
                    await client.send(await upstream.receive())
            except (anyio.EndOfStream, anyio.BrokenResourceError):
                pass


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def _printed_link(capsys: Any) -> str:
    """The sign-in link the loopback flow prints, as the person reads it off the terminal."""
    printed = ""
    while "Waiting for the redirect" not in printed:  # what the user sees; nothing else signals
        printed += capsys.readouterr().err
        await anyio.sleep(0.01)
    return next(line.strip() for line in printed.splitlines() if line.strip().startswith("http"))


@pytest.mark.anyio
async def test_a_redirect_through_a_proxy_reaches_the_listener_behind_it(
    server: HttpPeer, capsys: Any
) -> None:
    """JupyterHub's example: the browser reaches the kernel's machine only through the hub, at
    ``https://hub.example/user/ada/proxy/<port>/callback``, which forwards ``/callback`` to
    ``127.0.0.1:<port>``. The test's forwarder plays the hub (and the browser's DNS and TLS)."""
    port = _free_port()
    prefix = f"/user/ada/proxy/{port}"
    public = f"https://hub.example{prefix}/callback"
    store = MemoryTokenStore()
    auth = OAuth(redirect_uri=public, callback_port=port, store=store)
    auth.paste_with(lambda link: pytest.fail("a redirect_uri= that reaches a listener needs no paste-back"))
    async with (
        await anyio.create_tcp_listener(local_host="127.0.0.1") as hub,
        anyio.create_task_group() as tg,
    ):
        hub_port = hub.extra(anyio.abc.SocketAttribute.local_port)
        tg.start_soon(hub.serve, lambda stream: _forward(stream, prefix, port))

        async def browser() -> None:
            landed = await anyio.to_thread.run_sync(approve, await _printed_link(capsys))
            assert landed.startswith(public + "?")  # the authorization server sent the browser to the hub
            via_hub = landed.replace("https://hub.example", f"http://127.0.0.1:{hub_port}")
            async with httpx.AsyncClient() as real:
                assert (await real.get(via_hub)).status_code == 200  # the listener behind the hub took it

        tg.start_soon(browser)
        with anyio.fail_after(30):
            assert "5" in str(await call_add(server, auth))
        tg.cancel_scope.cancel()
    assert await store.get_tokens(server.url) is not None


def test_a_proxy_redirect_needs_the_port_it_forwards_to() -> None:
    with pytest.raises(ValueError, match="callback_port"):
        OAuth(redirect_uri="https://hub.example/user/ada/proxy/8765/callback")
    with pytest.raises(ValueError, match="loopback"):
        OAuth(redirect_uri="http://hub.example/callback", callback_port=8765)  # not https


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"flow": "browser"}, "flow must be one of"),
        (
            {"flow": "paste", "grant": "client_credentials", "client_id": "c", "client_secret": "s"},
            "no person",
        ),
        ({"flow": "paste", "on_authorize": lambda url: url, "redirect_uri": "http://127.0.0.1:1/cb"}, "auto"),
    ],
)
def test_flow_mistakes_are_caught_at_construction(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        OAuth(**kwargs)
