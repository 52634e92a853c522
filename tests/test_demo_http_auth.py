"""The demo server's ``--token`` option: over HTTP, every request needs ``Authorization: Bearer``.

One real server process (``python -m mcp_notebook.demo --http 0 --token ...``) serves the wire
tests and the client tests; the command-line handling is tested without starting a server.
"""

from __future__ import annotations

import secrets
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mcp_notebook import Client, McpError
from tests.http_peers import HttpPeer, _python_peer

pytest.importorskip("mcp")

TOKEN = secrets.token_hex(16)  # hex: a token starting with "-" would read as an option
LEGACY_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "auth-test", "version": "0"},
    },
}


@pytest.fixture(scope="module")
def server() -> Iterator[HttpPeer]:
    argv = [sys.executable, "-m", "mcp_notebook.demo", "--http", "0", "--token", TOKEN]
    with _python_peer("demo-token", argv) as peer:
        yield peer


def _post(url: str, headers: dict[str, str] | None = None, body: Any = INITIALIZE) -> httpx.Response:
    return httpx.post(url, json=body, headers={**LEGACY_HEADERS, **(headers or {})}, timeout=10)


# --- the wire -------------------------------------------------------------------------------------


def test_no_token_is_401_with_a_bearer_challenge(server: HttpPeer) -> None:
    response = _post(server.url)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    body = response.json()
    # Not a JSON-RPC error: a client must read it as "authorize", not as the server's answer.
    assert "jsonrpc" not in body
    assert isinstance(body["error"], str)
    assert TOKEN not in response.text


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_every_method_needs_the_token(server: HttpPeer, method: str) -> None:
    response = httpx.request(method, server.url, headers={"Accept": "text/event-stream"}, timeout=10)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"


WRONG = {
    "longer": f"Bearer {TOKEN}x",
    "shorter": f"Bearer {TOKEN[:-1]}",
    "basic": f"Basic {TOKEN}",
    "no-token": "Bearer",
    "no-scheme": TOKEN,
    "twice": f"Bearer {TOKEN} {TOKEN}",
}


@pytest.mark.parametrize("authorization", list(WRONG.values()), ids=list(WRONG))
def test_a_wrong_token_is_401_invalid_token(server: HttpPeer, authorization: str) -> None:
    response = _post(server.url, {"Authorization": authorization})
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert 'error="invalid_token"' in challenge
    assert TOKEN not in response.text


def test_the_right_token_is_served(server: HttpPeer) -> None:
    response = _post(server.url, {"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200, response.text
    assert response.headers.get("mcp-session-id")
    assert "serverInfo" in response.text
    # The scheme is case-insensitive (RFC 7235 §2.1).
    assert _post(server.url, {"Authorization": f"bearer {TOKEN}"}).status_code == 200


def test_the_modern_era_needs_it_too(server: HttpPeer) -> None:
    envelope = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    discover = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": envelope}}
    modern = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}
    refused = _post(server.url, modern, discover)
    assert refused.status_code == 401
    served = _post(server.url, {**modern, "Authorization": f"Bearer {TOKEN}"}, discover)
    assert served.status_code == 200, served.text
    assert '"result"' in served.text, served.text


# --- the client -----------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_client_with_the_token(server: HttpPeer, protocol: str) -> None:
    async with Client(server.url, auth=TOKEN, protocol=protocol, timeout=20) as client:
        assert client.era == ("modern" if protocol == "auto" else "legacy")
        assert "add" in [tool.name for tool in await client.list_tools()]
        result = await client.call_tool("add", {"a": 2, "b": 3})
        assert result.data == {"result": 5.0}
        assert TOKEN not in repr(client)


@pytest.mark.anyio
@pytest.mark.parametrize("auth", [None, "not-the-token"])
async def test_client_without_the_token_is_refused(server: HttpPeer, auth: str | None) -> None:
    with pytest.raises(McpError) as caught:
        async with Client(server.url, auth=auth, timeout=20):
            pass
    assert caught.value.kind == "auth"
    assert "401" in str(caught.value)
    assert TOKEN not in str(caught.value)


# --- the command line -----------------------------------------------------------------------------


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """main()'s call of run_http / run_stdio, recorded instead of serving."""
    from mcp_notebook.demo import _server as demo_server

    calls: dict[str, Any] = {}
    monkeypatch.setattr(demo_server, "run_http", lambda **kw: calls.setdefault("http", kw))
    monkeypatch.setattr(demo_server, "run_stdio", lambda **kw: calls.setdefault("stdio", kw))
    monkeypatch.delenv("MCP_DEMO_TOKEN", raising=False)
    return calls


def test_cli_token_flag(captured: dict[str, Any]) -> None:
    from mcp_notebook.demo import main

    assert main(["--http", "0", "--token", "abc"]) == 0
    assert captured["http"]["token"] == "abc"


def test_cli_token_from_the_environment(captured: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_notebook.demo import main

    monkeypatch.setenv("MCP_DEMO_TOKEN", "from-env")
    assert main(["--http", "0"]) == 0
    assert captured["http"]["token"] == "from-env"
    captured.clear()
    assert main(["--http", "0", "--token", "flag-wins"]) == 0
    assert captured["http"]["token"] == "flag-wins"
    captured.clear()
    assert main([]) == 0  # stdio has no requests to guard: the variable is ignored there
    assert "token" not in captured["stdio"]


def test_cli_without_a_token_is_open(captured: dict[str, Any]) -> None:
    from mcp_notebook.demo import main

    assert main(["--http", "0"]) == 0
    assert captured["http"]["token"] is None


@pytest.mark.parametrize(
    "argv", [["--token", "abc"], ["--http", "0", "--token", ""], ["--http", "0", "--token", "a b"]]
)
def test_cli_refuses(captured: dict[str, Any], argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    from mcp_notebook.demo import main

    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert "token" in capsys.readouterr().err
    assert not captured


def test_http_app_refuses_an_empty_token() -> None:
    from mcp_notebook.demo._server import http_app

    with pytest.raises(ValueError, match="token"):
        http_app(token="")
