"""Secrets stay secret: an env secret, a token and a tool-argument marker never appear in captured logs,
telemetry events, reprs or exception text, across whole sessions with errors, crashes and reconnects.

The token: over stdio, an opaque vendor value in the W3C ``tracestate`` the ``trace_context`` option
sends in every request's ``_meta``: it must reach the server and nothing else. Over HTTP, a bearer
token, an API-key header and a key in the URL's query, through a session with a 404 session renewal,
a dropped-and-resumed stream and errors, with every logger (httpx's included) at DEBUG.

The servers are real stdio processes: ``tests/servers/bad_server.py`` (legacy era, with a crash),
the demo server (modern era, listen streams, subscriptions), and small servers written here that
print their env secret to stderr or stdout. ``client.stderr`` is checked too, except where the
server itself printed the secret: the transport must then mask it in what *it* says.
"""

from __future__ import annotations

import logging
import os
import signal
import textwrap
import traceback
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest

from mcp_notebook import Client, McpError
from mcp_notebook.transports._env import child_env as allowed_env

from .conftest import PYTHON, demo_server, python_server
from .http_peers import fault_http

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaked_processes")]

SECRET_ENV = "env-secret-5b2f8a91c3"
TOKEN = "tok3e4d9a0b7f"  # tracestate values: lowercase letters and digits are safe everywhere
MARKER = "arg-marker-7c1e9d42"
SECRETS = {"env secret": SECRET_ENV, "token": TOKEN, "argument marker": MARKER}
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def trace_context() -> dict[str, str]:
    return {"traceparent": TRACEPARENT, "tracestate": f"vendor={TOKEN}"}


class Witness:
    """Everything a user or an operator could see, labelled, to search for secrets at the end."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []
        self.errors: list[McpError] = []

    def add(self, label: str, text: Any) -> None:
        self.seen.append((label, text if isinstance(text, str) else repr(text)))

    def event(self, event: Any) -> None:
        self.add(f"event {event.kind}", repr(event))

    def error(self, exc: BaseException) -> None:
        self.add("str(error)", str(exc))
        self.add("repr(error)", repr(exc))
        self.add("traceback", "".join(traceback.format_exception(exc)))
        for linked in (exc.__cause__, exc.__context__):
            if linked is not None:
                self.add("linked error", f"{linked!s} {linked!r}")

    def client(self, client: Client, *, with_stderr: bool = True) -> None:
        self.add("repr(client)", repr(client))
        self.add("repr(client.stats)", repr(client.stats))
        self.add("repr(transport)", repr(client._transport))
        self.add("client.status", client.status)
        if client.closed_reason is not None:
            self.error(client.closed_reason)
        if with_stderr:
            self.add("client.stderr", "\n".join(client.stderr))

    def logs(self, caplog: pytest.LogCaptureFixture) -> None:
        self.add("caplog.text", caplog.text)
        for record in caplog.records:
            self.add(f"log {record.name}", record.getMessage())

    async def expect(self, awaitable: Any, kind: str) -> McpError:
        with pytest.raises(McpError) as info:
            await awaitable
        self.error(info.value)
        self.errors.append(info.value)
        assert info.value.kind == kind, repr(info.value)
        return info.value

    def assert_clean(self, secrets: dict[str, str] = SECRETS) -> None:
        leaks = [
            f"{name} in {label}: {text[max(0, text.find(value) - 80) : text.find(value) + 40]!r}"
            for name, value in secrets.items()
            for label, text in self.seen
            if value in text
        ]
        assert not leaks, "\n".join(leaks)
        assert self.seen


async def wait_until(predicate: Any, timeout: float = 10.0) -> None:
    with anyio.fail_after(timeout):
        while not predicate():  # noqa: ASYNC110
            await anyio.sleep(0.02)


def child_env(pid: int | None) -> dict[str, str]:
    assert pid is not None
    return psutil.Process(pid).environ()


# --- whole sessions ------------------------------------------------------------------------------


async def test_no_secret_leaks_across_a_legacy_session_with_errors_and_a_crash(caplog, tmp_path):
    wire = tmp_path / "wire.jsonl"
    witness = Witness()
    with caplog.at_level(logging.DEBUG, logger="mcp_notebook"):
        client = Client(
            python_server("bad_server.py", "--log", str(wire)),
            env={"API_TOKEN": SECRET_ENV},
            trace_context=trace_context,
            timeout=10,
            backoff_initial=0.05,
        )
        witness.client(client)
        client.on_event(witness.event)
        async with client:
            assert child_env(client._transport.pid)["API_TOKEN"] == SECRET_ENV  # it did reach the server
            await client.list_tools()
            await witness.expect(client.call_tool("hang", {"marker": MARKER}, timeout=0.3), "timeout")
            await witness.expect(client.call_tool("echo", {"n": MARKER}), "invalid")
            await witness.expect(client.call_tool("echo", {"n": 1, "marker": MARKER}), "invalid")
            await witness.expect(
                client.call_tool("no_such_tool", {"marker": MARKER}, validate=False), "server"
            )
            await witness.expect(
                client.call_tool("slow", {"seconds": 0.3, "marker": MARKER}, timeout=0.1), "timeout"
            )
            await wait_until(lambda: client.stats.late_responses == 1)
            witness.client(client)
            await witness.expect(client.call_tool("crash", {"marker": MARKER}), "transport")
            assert (await client.call_tool("echo", {"n": 3})).text == "3"
            assert client.stats.reconnects == 1
            await client.ping()
            witness.client(client)
        witness.client(client)
        await witness.expect(client.call_tool("echo", {"marker": MARKER}, validate=False), "closed")
    await anyio.sleep(0.05)  # the last events reach the hook
    witness.logs(caplog)
    sent = wire.read_text()
    assert MARKER in sent  # the arguments did go to the server...
    assert TOKEN in sent  # ...and so did the trace context
    assert any("crash" in e.message and "exited with code 3" in e.message for e in witness.errors)
    assert any(label.startswith("event request") for label, _ in witness.seen)
    witness.assert_clean()


async def test_no_secret_leaks_across_a_modern_session_with_streams_errors_and_a_kill(caplog):
    witness = Witness()
    with caplog.at_level(logging.DEBUG, logger="mcp_notebook"):
        client = Client(
            demo_server(),
            env={"API_TOKEN": SECRET_ENV},
            trace_context=trace_context,
            timeout=20,
            backoff_initial=0.05,
            list_changed_window=0.05,
        )
        client.on_event(witness.event)
        async with client:
            assert client.era == "modern"
            assert child_env(client._transport.pid)["API_TOKEN"] == SECRET_ENV
            await client.list_tools()
            async with client.notifications() as queue:
                await client.subscribe("demo://note")
                await client.call_tool("set_note", {"text": MARKER})
                with anyio.fail_after(10):
                    async for notification in queue:
                        if notification.method == "notifications/resources/updated":
                            break
            assert (await client.call_tool("echo", {"text": MARKER})).text == MARKER
            await witness.expect(client.call_tool("add", {"a": MARKER, "b": 1}), "invalid")
            await witness.expect(
                client.call_tool("fail", {"message": "expected failure"}, raise_on_error=True), "server"
            )
            await witness.expect(
                client.call_tool("slow_count", {"steps": 3, "delay": 0.5}, timeout=0.2), "timeout"
            )
            await client.call_tool("add_tool", {"name": "added_tool"})
            await wait_until(lambda: "added_tool" in [t.name for t in client.cached_tools or []])
            witness.client(client)
            os.kill(client._transport.pid, signal.SIGKILL)  # crash; the client restarts it
            await wait_until(lambda: client.stats.reconnects == 1 and client.status == "ready")
            assert (await client.call_tool("echo", {"text": "after"})).text == "after"
            await wait_until(lambda: client.stats.streams == 1)
            witness.client(client)
        witness.client(client)
    await anyio.sleep(0.05)
    witness.logs(caplog)
    assert any(label == "event subscription" for label, _ in witness.seen)
    witness.assert_clean()


# --- the environment a stdio server inherits -----------------------------------------------------


async def test_a_kernel_api_key_does_not_reach_a_server_by_default(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_ENV)
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    monkeypatch.setenv("BASH_FUNC_evil%%", "() { echo pwned; }")
    async with Client(python_server("bad_server.py"), env={"API_TOKEN": "given"}, timeout=10) as client:
        env = child_env(client._transport.pid)
        assert (await client.call_tool("echo", {"n": 1})).text == "1"
    assert "OPENAI_API_KEY" not in env
    assert SECRET_ENV not in env.values()
    assert "BASH_FUNC_evil%%" not in env
    assert env["PATH"] == os.environ["PATH"]
    assert env["LC_ALL"] == "C.UTF-8"
    assert env["API_TOKEN"] == "given"


async def test_inherit_env_true_passes_the_whole_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET_ENV)
    async with Client(
        python_server("bad_server.py"), inherit_env=True, env={"API_TOKEN": "given"}, timeout=10
    ) as client:
        env = child_env(client._transport.pid)
    assert env["OPENAI_API_KEY"] == SECRET_ENV
    assert env["API_TOKEN"] == "given"


@pytest.mark.parametrize(
    ("environ", "windows", "kept"),
    [
        ({"PATH": "/bin", "HOME": "/h", "AWS_SECRET_ACCESS_KEY": "s"}, False, {"PATH", "HOME"}),
        (
            {"LC_TIME": "C", "LANG": "C", "TMPDIR": "/t", "TZ": "UTC", "GITHUB_TOKEN": "t"},
            False,
            {"LC_TIME", "LANG", "TMPDIR", "TZ"},
        ),
        ({"USER": "u", "F": "() { :; }", "SHELL": "() { evil; }"}, False, {"USER"}),
        (
            {"Path": "C:\\w", "SystemRoot": "C:\\Windows", "ComSpec": "cmd", "API_KEY": "k"},
            True,
            {"Path", "SystemRoot", "ComSpec"},
        ),
        ({"HOME": "/h", "PATH": "/bin"}, True, {"PATH"}),  # HOME is not a Windows variable
    ],
)
def test_the_default_environment_is_an_allow_list(environ, windows, kept):
    assert set(allowed_env(environ, {}, inherit_all=False, windows=windows)) == kept


def test_env_is_added_on_top_and_wins():
    env = allowed_env(
        {"PATH": "/bin", "K": "v"}, {"PATH": "/mine", "X": "1"}, inherit_all=False, windows=False
    )
    assert env == {"PATH": "/mine", "X": "1"}
    everything = allowed_env({"K": "v"}, {"X": "1"}, inherit_all=True, windows=False)
    assert everything == {"K": "v", "X": "1"}


# --- servers that print their secret -------------------------------------------------------------

LEAKY_SERVER = textwrap.dedent(
    """
    import json, os, sys

    SECRET = os.environ["API_TOKEN"]
    MODE = sys.argv[1]

    def err(text):
        sys.stderr.write(text + "\\n")
        sys.stderr.flush()

    def send(message):
        sys.stdout.write(json.dumps(message) + "\\n")
        sys.stdout.flush()

    if MODE == "startup":
        err("leaky: starting with API_TOKEN=" + SECRET)
        err("leaky: cannot start: the token " + SECRET + " was refused")
        sys.exit(2)
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message or "method" not in message:
            continue
        method, request_id = message["method"], message["id"]
        if method == "initialize":
            version = message["params"]["protocolVersion"]
            send({"jsonrpc": "2.0", "id": request_id, "result": {
                "protocolVersion": version, "capabilities": {"tools": {}},
                "serverInfo": {"name": "leaky", "version": "1"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": request_id, "result": {
                "tools": [{"name": "leak", "inputSchema": {"type": "object"}}]}})
        elif method == "tools/call" and MODE == "crash":
            err("leaky: about to crash; API_TOKEN=" + SECRET)
            err(SECRET)
            os._exit(5)
        elif method == "tools/call" and MODE == "stdout":
            print("debug: API_TOKEN=" + SECRET, flush=True)  # a stray print: not JSON-RPC
            send({"jsonrpc": "2.0", "id": request_id, "result": {"content": []}})
        else:
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "no"}})
    """
)


def leaky(tmp_path: Path, mode: str) -> list[str]:
    script = tmp_path / "leaky_server.py"
    script.write_text(LEAKY_SERVER)
    return [PYTHON, str(script), mode]


async def test_env_secret_a_crashing_server_printed_is_masked_in_the_error(caplog, tmp_path):
    witness = Witness()
    with caplog.at_level(logging.DEBUG, logger="mcp_notebook"):
        client = Client(
            leaky(tmp_path, "crash"), env={"API_TOKEN": SECRET_ENV}, timeout=10, backoff_initial=0.05
        )
        client.on_event(witness.event)
        async with client:
            error = await witness.expect(client.call_tool("leak", {"marker": MARKER}), "transport")
            assert "exited with code 5" in error.message
            assert "API_TOKEN=***" in error.message  # the stderr tail is quoted, masked
            assert any(SECRET_ENV in line for line in client.stderr)  # (the server did print it)
            witness.client(client, with_stderr=False)
        witness.client(client, with_stderr=False)
    await anyio.sleep(0.05)
    witness.logs(caplog)
    witness.assert_clean()


async def test_env_secret_a_server_printed_before_failing_to_start_is_masked_in_the_error(caplog, tmp_path):
    witness = Witness()
    with caplog.at_level(logging.DEBUG, logger="mcp_notebook"):
        client = Client(leaky(tmp_path, "startup"), env={"API_TOKEN": SECRET_ENV}, timeout=10)
        error = await witness.expect(client.connect(), "transport")
        assert "exited with code 2" in error.message
        assert "the token *** was refused" in error.message
        assert any(SECRET_ENV in line for line in client.stderr)  # (the server did print it)
        witness.client(client, with_stderr=False)
    witness.logs(caplog)
    witness.assert_clean()


async def test_env_secret_a_server_printed_on_stdout_is_not_logged(caplog, tmp_path):
    """The transport promises env values never appear in a log line; a stray stdout line is logged."""
    witness = Witness()
    with caplog.at_level(logging.DEBUG, logger="mcp_notebook"):
        async with Client(leaky(tmp_path, "stdout"), env={"API_TOKEN": SECRET_ENV}, timeout=10) as client:
            await client.call_tool("leak")
            assert client.stats.malformed_frames == 1
            witness.client(client)
    witness.logs(caplog)
    assert "not JSON-RPC" in caplog.text  # the line was reported...
    witness.assert_clean()  # ...without the secret in it


# --- HTTP ----------------------------------------------------------------------------------------

BEARER = "bearer-4f1c9e27ab"
API_KEY = "api-key-83d2c5f0"
QUERY_KEY = "query-key-1b7e6a94"
HTTP_SECRETS = {"bearer token": BEARER, "API key header": API_KEY, "URL query key": QUERY_KEY}


async def test_no_secret_leaks_across_an_http_session_with_renewal_resumption_and_errors(caplog):
    witness = Witness()
    with fault_http() as server, caplog.at_level(logging.DEBUG):
        server.set(unauthorized=True, token=BEARER, drop="abort", drop_times=1, retry_ms=20)
        client = Client(
            f"{server.url}?key={QUERY_KEY}",
            auth=BEARER,
            headers={"X-Api-Key": API_KEY},
            timeout=10,
        )
        witness.client(client)
        client.on_event(witness.event)
        async with client:
            assert "slow done" in (await client.call_tool("slow", {"seconds": 0.1})).text
            server.forget()
            assert (await client.call_tool("echo", {"text": "after"})).text == "after"
            await witness.expect(
                client.call_tool("no_such_tool", {"marker": MARKER}, validate=False), "server"
            )
            await witness.expect(client.call_tool("slow", {"seconds": 5}, timeout=0.2), "timeout")
            witness.client(client, with_stderr=False)
        witness.client(client, with_stderr=False)
        requests = server.seen()["requests"]
    await anyio.sleep(0.05)
    witness.logs(caplog)
    assert any(r["authorization"] == f"Bearer {BEARER}" for r in requests), "the token reached the server"
    assert len([r for r in requests if r["rpc_method"] == "initialize"]) == 2, "the session was renewed"
    assert any(r.get("last_event_id") for r in requests), "the dropped stream was resumed"
    assert any("httpx" in label for label, _ in witness.seen), "httpx's own log lines were checked too"
    witness.assert_clean(HTTP_SECRETS)
