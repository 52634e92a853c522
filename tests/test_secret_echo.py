"""A secret the server echoes back is masked wherever its text is shown (issue #35, item 9).

The values given to reach a server (``env=``, ``headers=``, a token) are secrets, and the server
knows them. ``tests/servers/secret_echo_server.py`` (a real stdio process) echoes its two env
values, as they are and JSON-escaped, into a JSON-RPC error (message and data), log notifications
(logger and data) and a tool result (text, a JSON text block, structuredContent); an HTTP server
here on loopback echoes the header and the bearer token it received. None of them may reach
``str``/``repr``/the short traceback of the error, a ``mcp_notebook.server`` log record, the
notebook model's log rows, the log panel, the result's repr, text and pictures or the explorer;
``result.raw`` keeps the server's data exactly. The rule itself: ``protocol/_secrets.py``.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

import mcp_notebook
from mcp_notebook import Client, McpError
from mcp_notebook.protocol._errors import short_traceback
from mcp_notebook.protocol._secrets import MIN_SECRET_CHARS, Secrets

from .conftest import SERVERS, python_server
from .raises import raises_mcp
from .raw_http import RawRequest, Reply, raw_http_server
from .widget_helpers import markup, wait_for

KEY = "s3cr3t-value-1234"
#: A quote, a non-ASCII letter and a backslash: it reads differently once JSON- or HTML-escaped.
PASSWORD = 'p4ss"w\u00f6rd\\42'
ENV = {"API_KEY": KEY, "DB_PASSWORD": PASSWORD, "DEBUG": "1"}
SERVER = python_server("secret_echo_server.py")
WAIT = 30.0  # seconds: only how long a wait may last before the test fails, never a measurement


def forms(value: str) -> set[str]:
    """How a secret can read in text: as it is, JSON-escaped (both ways), HTML-escaped."""
    shown = {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
    html = {f.replace("&", "&amp;").replace('"', quote) for f in shown for quote in ("&#34;", "&quot;")}
    return shown | html


def assert_masked(text: str, *, what: str, secrets: tuple[str, ...] = (KEY, PASSWORD)) -> None:
    leaks = [form for secret in secrets for form in forms(secret) if form in text]
    assert not leaks, f"{what} shows {leaks}: {text[:2000]}"
    assert "***" in text, f"{what} shows nothing masked (was the secret there at all?): {text[:2000]}"


# --- the core, over stdio ------------------------------------------------------------------------


@pytest.mark.anyio
async def test_an_echoed_env_secret_is_masked_in_the_error_the_log_records_and_the_result(
    caplog: pytest.LogCaptureFixture, no_leaked_processes: None
) -> None:
    with caplog.at_level(logging.DEBUG, logger="mcp_notebook"):
        async with Client(SERVER, env=ENV, protocol="legacy", timeout=WAIT) as client:
            with raises_mcp("server") as failed:
                await client.call_tool("fail")
            progress: list[str | None] = []
            result = await client.call_tool(
                "leak", progress=lambda done, total, message: progress.append(message)
            )
            resource = await client.read_resource("secret://config")
            prompt = await client.get_prompt("login")

    error = failed.value
    assert_masked(str(error), what="str(error)")
    assert_masked(repr(error), what="repr(error)")
    assert_masked("\n".join(short_traceback(error)), what="the short traceback")
    assert_masked(json.dumps(error.data), what="error.data")
    assert error.code == -32603

    records = [r.getMessage() for r in caplog.records if r.name == "mcp_notebook.server"]
    assert len(records) == 2, records
    for record in records:
        assert_masked(record, what="a mcp_notebook.server record")
    assert_masked(caplog.text, what="the captured log")
    assert progress == ["trying ***"]

    assert_masked(repr(result), what="repr(result)")
    assert_masked(result.text, what="result.text")
    for mime, picture in result._repr_mimebundle_().items():
        assert_masked(picture, what=f"the result's {mime}")
    # Masking is a display rule: the data stays the server's.
    assert result.raw["structuredContent"] == {"key": KEY, "rows": [{"user": "ada", "password": PASSWORD}]}
    assert result.raw["content"][0]["text"] == f"the key is {KEY}"
    assert result.structured_content["key"] == KEY
    assert json.loads(result.raw["content"][1]["text"])["password"] == PASSWORD

    # A resource's and a prompt's text forms alike.
    for text, what in (
        (repr(resource), "repr(resource)"),
        (resource.text, "resource.text"),
        *((picture, f"the resource's {mime}") for mime, picture in resource._repr_mimebundle_().items()),
        (repr(prompt), "repr(prompt)"),
        (prompt.text, "prompt.text"),
        (prompt._repr_html_(), "the prompt's HTML"),
    ):
        assert_masked(text, what=what)
    assert json.loads(resource.raw["contents"][0]["text"])[0]["key"] == KEY
    assert prompt.raw["description"] == f"uses {KEY}"


@pytest.mark.anyio
async def test_an_echoed_env_secret_is_masked_in_a_refused_handshake(no_leaked_processes: None) -> None:
    client = Client([*SERVER, "--refuse"], env=ENV, protocol="legacy", timeout=WAIT)
    with raises_mcp("server") as refused:
        await client.connect()
    assert_masked(str(refused.value), what="the connect error")
    assert client.closed_reason is not None
    assert_masked(repr(client.closed_reason), what="closed_reason")


# --- the notebook: the session's model, the log panel and the explorer ------------------------------


@pytest.fixture
def session(no_leaked_processes: None) -> Iterator[Any]:
    opened = mcp_notebook.connect(SERVER, env=ENV, protocol="legacy", show_progress=False, timeout=WAIT)
    try:
        yield opened
    finally:
        opened.close()


def test_a_secret_echoed_in_the_server_info_and_instructions_is_masked_in_the_model_and_status(
    session: Any,
) -> None:
    pytest.importorskip("ipywidgets")
    from mcp_notebook.widgets._status import StatusWidget

    assert KEY in session.client.instructions  # the client keeps what the server sent
    assert KEY in session.client.server_info["title"]
    assert_masked(repr(session.model.server_info), what="model.server_info")
    assert_masked(str(session.model.instructions), what="model.instructions")
    status = StatusWidget(session)
    try:
        assert_masked(markup(status), what="the status panel")
    finally:
        status.close()


def test_an_echoed_env_secret_is_masked_in_the_model_log_the_log_panel_and_the_explorer(session: Any) -> None:
    pytest.importorskip("ipywidgets")
    from mcp_notebook.widgets import explorer
    from mcp_notebook.widgets._log import LogWidget

    panel = LogWidget(session)
    ex = explorer(session)
    try:
        with pytest.raises(McpError) as failed:
            session.call_tool("fail")
        assert_masked(str(failed.value), what="the session's error")
        assert_masked("\n".join(failed.value._render_traceback_()), what="the notebook's traceback")

        result = session.call_tool("leak")
        assert result.raw["structuredContent"]["key"] == KEY
        wait_for(lambda: len(session.model.log) == 2, WAIT, "the two log rows")
        assert_masked(repr(list(session.model.log)), what="model.log")
        wait_for(lambda: panel.table.value.count("***") >= 3, WAIT, "the log panel's rows")
        assert_masked(panel.table.value, what="the log panel")

        ex.select("leak")
        assert ex.call() is not None, ex.validation.value
        shown = ex.wait(WAIT)
        assert isinstance(shown, mcp_notebook.ToolResult)
        assert shown.raw["structuredContent"]["key"] == KEY
        assert_masked(markup(ex.result_box), what="the explorer's result view")

        ex.select("fail")
        assert ex.call() is not None, ex.validation.value
        assert isinstance(ex.wait(WAIT), McpError)
        assert_masked(markup(ex.result_box), what="the explorer's error view")
        assert_masked(markup(ex), what="the explorer")

        resources = session.resources_widget()
        resources.select("secret://config")
        resources.read_button.click()
        assert resources.contents is not None
        assert_masked(markup(resources.view), what="the resources panel")
        prompts = session.prompts_widget()
        prompts.select("login")
        prompts.get_button.click()
        assert prompts.result is not None
        assert_masked(markup(prompts.messages), what="the prompts panel")
        resources.close()
        prompts.close()
    finally:
        ex.close()
        panel.close()


# --- a task's status message --------------------------------------------------------------------

#: In every status message of ``crunch`` with that many steps ("step 1 of 10000000").
STEPS_SECRET = "of 10000000"


@pytest.mark.anyio
async def test_an_echoed_secret_is_masked_in_a_tasks_status_message(no_leaked_processes: None) -> None:
    server = [sys.executable, str(SERVERS / "tasks_server.py")]
    async with Client(server, env={"STEPS": STEPS_SECRET}, timeout=WAIT) as client:
        handle = await client.start_tool("crunch", {"steps": 10_000_000, "delay": 0.2})
        with anyio.fail_after(WAIT):
            while not (handle.state.status_message or "").startswith("step"):  # noqa: ASYNC110
                await anyio.sleep(0.02)
        assert STEPS_SECRET in handle.state.status_message  # the server's own state, as sent
        shown = [handle.status_message or "", repr(handle), handle._repr_html_()]
        await handle.cancel()
    for text in shown:
        assert STEPS_SECRET not in text, text
    assert re.fullmatch(r"step \d+ \*\*\*", shown[0]), shown[0]


# --- over HTTP: a header and a bearer token --------------------------------------------------------

HEADER_KEY = "hdr-key-9d41c7e2"
TOKEN = "tok-5e8a21f07b"


class EchoHeaders:
    """A legacy Streamable HTTP server that quotes the request's headers in a log message and an
    error (answers as SSE, so the log notification comes first)."""

    async def __call__(self, request: RawRequest, reply: Reply) -> None:
        if request.method != "POST":
            await reply.send(405, b"")
            return
        message = json.loads(request.body)
        if "id" not in message:
            await reply.send(202, b"")
            return
        method, seen = message["method"], json.dumps(request.headers)
        if method == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}, "logging": {}},
                "serverInfo": {"name": "echo-headers", "version": "1"},
            }
            answer: dict[str, Any] = {"result": result}
        elif method == "tools/list":
            answer = {"result": {"tools": [{"name": "fail", "inputSchema": {"type": "object"}}]}}
        else:
            answer = {"error": {"code": -32603, "message": f"refused, you sent {seen}", "data": seen}}
        log = {"method": "notifications/message", "params": {"level": "warning", "data": f"saw {seen}"}}
        events = [log, {"jsonrpc": "2.0", "id": message["id"], **answer}]
        body = "".join(f"event: message\ndata: {json.dumps({'jsonrpc': '2.0', **e})}\n\n" for e in events)
        await reply.send(200, body.encode(), content_type="text/event-stream")


@pytest.mark.anyio
async def test_an_echoed_header_and_token_are_masked_in_the_error_and_the_log_records(
    caplog: pytest.LogCaptureFixture,
) -> None:
    secrets = (HEADER_KEY, TOKEN)
    with caplog.at_level(logging.DEBUG, logger="mcp_notebook"):
        async with raw_http_server(EchoHeaders()) as base:
            options: dict[str, Any] = {"headers": {"X-Api-Key": HEADER_KEY}, "auth": TOKEN}
            async with Client(f"{base}/mcp", protocol="legacy", timeout=WAIT, **options) as client:
                with anyio.fail_after(WAIT), raises_mcp("server") as failed:
                    await client.call_tool("fail")
    error = failed.value
    for text, what in ((str(error), "str(error)"), (repr(error), "repr(error)"), (str(error.data), "data")):
        assert_masked(text, what=what, secrets=secrets)
    records = [r.getMessage() for r in caplog.records if r.name == "mcp_notebook.server"]
    assert records
    for record in records:
        assert_masked(record, what="a mcp_notebook.server record", secrets=secrets)


class EchoOnRenewal:
    """A legacy Streamable HTTP server that forgets its session at the first call (404) and refuses
    the renewal's ``initialize`` quoting the request's headers: the error of a failed recovery."""

    def __init__(self) -> None:
        self.initializes = 0

    async def __call__(self, request: RawRequest, reply: Reply) -> None:
        if request.method != "POST":
            await reply.send(405, b"")
            return
        message = json.loads(request.body)
        if "id" not in message:
            await reply.send(202, b"")
            return
        method, seen = message["method"], json.dumps(request.headers)
        if method == "initialize":
            self.initializes += 1
            if self.initializes > 1:
                error = {"code": -32603, "message": f"no new session for {seen}", "data": seen}
                await reply.send(
                    200, json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}).encode()
                )
                return
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "echo-on-renewal", "version": "1"},
            }
            body = json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode()
            await reply.send(200, body, headers={"Mcp-Session-Id": "session-1"})
        elif method == "tools/list":
            tools = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
            await reply.send(
                200, json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": tools}).encode()
            )
        else:
            await reply.send(404, b"")


@pytest.mark.anyio
async def test_a_header_echoed_by_a_failed_session_renewal_is_masked() -> None:
    """The error of a recovery that failed (here the renewal's initialize, refused quoting the
    headers) is masked like the request's own: it was raised from the recovery, not the request."""
    server = EchoOnRenewal()
    async with raw_http_server(server) as base:
        options: dict[str, Any] = {"headers": {"X-Api-Key": HEADER_KEY}}
        async with Client(
            f"{base}/mcp", protocol="legacy", timeout=WAIT, reconnect=False, **options
        ) as client:
            with anyio.fail_after(WAIT), pytest.raises(McpError) as failed:
                await client.call_tool("echo")
    assert server.initializes == 2, "the call renewed the session once"
    error = failed.value
    assert "no new session" in error.full_message
    for text, what in (
        (str(error), "str(error)"),
        (repr(error), "repr(error)"),
        (error.full_message, "whole"),
    ):
        assert_masked(text, what=what, secrets=(HEADER_KEY,))


# --- the rule --------------------------------------------------------------------------------------


def test_short_values_are_not_secrets_and_the_rule_is_one_for_text_bytes_and_values() -> None:
    secrets = Secrets(["1", "true", "x" * (MIN_SECRET_CHARS - 1), KEY, PASSWORD])
    assert len(secrets) == 2
    assert KEY not in repr(secrets)
    assert PASSWORD not in repr(secrets)
    assert secrets.mask("DEBUG=1 verbose=true xxxxxxx") == "DEBUG=1 verbose=true xxxxxxx"
    assert secrets.mask(json.dumps({"p": PASSWORD, "k": KEY})) == '{"p": "***", "k": "***"}'
    assert secrets.mask_bytes(f"k={KEY}".encode()) == b"k=***"
    value = {"rows": [{"k": KEY}], "n": 1}
    assert secrets.mask_value(value) == {"rows": [{"k": "***"}], "n": 1}
    assert value == {"rows": [{"k": KEY}], "n": 1}  # a copy: the value itself stays
    clean = {"rows": [1, "a"]}
    assert secrets.mask_value(clean) is clean
    assert not Secrets(["short"])


def test_a_secret_in_a_long_error_is_masked_in_the_whole_text_and_never_half_shown_at_the_cut() -> None:
    """An error longer than the shown bound keeps its whole text on ``full_message``: masking covers
    it too, and the shown message is cut again after masking, so a secret that straddled the cut
    shows neither half."""
    secret = "s3cr3t-value-1234"
    shown = len(str(McpError("server", "x" * 100_000)).split(" … [")[0])
    # The secret starts a few characters before the head of the shown message ends.
    error = McpError("server", "x" * (shown - 5) + secret + "y" * 100_000)
    assert secret[:5] in str(error)  # the cut would show its first half
    Secrets([secret]).mask_error(error)
    assert secret not in error.full_message
    assert "***" in error.full_message
    assert secret[:5] not in str(error)
    assert secret[:5] not in error.message
