"""AppHost against real servers over stdio: our probe server and the three published examples.

No browser: a test plays the View, feeding ``receive`` and reading what ``send`` delivered.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import pytest

from mcp_notebook import Client, McpError
from mcp_notebook.apps import APPS_PROTOCOL_VERSION, AppError, AppHost, content_security_policy
from mcp_notebook.client._apps_host import MAX_HEIGHT
from tests.apps_peers import EXAMPLES, PROBE, example_command

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaked_processes")]

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "ui/initialize",
    "params": {
        "protocolVersion": APPS_PROTOCOL_VERSION,
        "appInfo": {"name": "test-view", "version": "1"},
        "appCapabilities": {},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "ui/notifications/initialized", "params": {}}


class View:
    """What the host sent to the View, and a few ways to read it."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.changes: list[tuple[str, Any]] = []
        self.logs: list[dict[str, Any]] = []

    def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    def on_change(self, name: str, value: Any) -> None:
        self.changes.append((name, value))

    def answer(self, request_id: Any) -> dict[str, Any]:
        found = [m for m in self.sent if m.get("id") == request_id and "method" not in m]
        assert len(found) == 1, f"expected one answer to {request_id!r}, got {found}"
        return found[0]

    def result(self, request_id: Any) -> Any:
        answer = self.answer(request_id)
        assert "result" in answer, answer
        return answer["result"]

    def error(self, request_id: Any) -> dict[str, Any]:
        answer = self.answer(request_id)
        assert "error" in answer, answer
        return dict(answer["error"])

    def methods(self) -> list[str]:
        return [m["method"] for m in self.sent if "method" in m]


async def until(condition: Callable[[], bool], timeout: float = 10) -> None:
    with anyio.fail_after(timeout):
        while not condition():  # noqa: ASYNC110 - polling what a host did, from outside it
            await anyio.sleep(0.02)


async def shut(host: AppHost, view: View) -> None:
    """Close as a View that answers its teardown would (so a test does not wait for the bound)."""
    if not host.initialized:
        await host.close()
        return
    async with anyio.create_task_group() as tg:
        tg.start_soon(answer_teardown, host, view)
        await host.close()


@contextlib.asynccontextmanager
async def probe(**options: Any) -> AsyncIterator[Client]:
    async with Client(PROBE, **options) as client:
        yield client


def make_host(
    client: Client, tool: str, arguments: dict[str, Any] | None = None, **kw: Any
) -> tuple[AppHost, View]:
    view = View()
    host = AppHost(
        client, tool, arguments, send=view.send, on_change=view.on_change, on_log=view.logs.append, **kw
    )
    return host, view


async def request(host: AppHost, request_id: Any, method: str, params: Any = None) -> None:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    await host.receive(message)


async def counts(client: Client) -> dict[str, int]:
    result = await client.call_tool("call_counts")
    return dict(result.structured_content["counts"])


# --- opening ------------------------------------------------------------------------------------


async def test_open_reads_the_view_and_builds_its_policy_from_meta_ui() -> None:
    async with probe() as client:
        host, view = make_host(client, "show_chart", {"n": 3})
        assert host.status == "loading"
        resource = await host.open()
        assert host.status == "ready"
        assert host.resource is resource
        assert resource.uri == "ui://probe/chart.html"
        assert resource.mime_type == "text/html;profile=mcp-app"
        assert "<h1>chart</h1>" in resource.html
        assert resource.csp is not None
        assert resource.csp["connectDomains"] == ["https://api.example.com", "wss://live.example.com"]
        assert "connect-src https://api.example.com wss://live.example.com;" in resource.csp_header
        assert "script-src 'self' 'unsafe-inline' https://cdn.example.com;" in resource.csp_header
        assert "unsafe-eval" not in resource.csp_header  # the hostile entry was dropped
        assert resource.csp_header == content_security_policy(resource.csp)
        assert resource.allow == "camera; clipboard-write"
        assert resource.prefers_border is True
        assert view.sent == []  # nothing reaches a View before it says initialized
        await until(lambda: host.result is not None)
        assert host.result is not None
        assert host.result.structured_content == {"points": [0, 1, 2]}
        assert view.sent == []
        await shut(host, view)


async def test_a_blob_view_and_a_view_named_by_the_deprecated_key_open() -> None:
    async with probe() as client:
        host, _ = make_host(client, "blob_app")
        assert "<h1>blob</h1>" in (await host.open()).html
        legacy, _ = make_host(client, "legacy_key")
        resource = await legacy.open()
        assert resource.uri == "ui://probe/legacy.html"
        assert resource.csp is None
        assert resource.csp_header == content_security_policy(None)
        assert "connect-src 'none'" in resource.csp_header
        assert resource.allow == ""
        assert resource.prefers_border is None
        await host.close()
        await legacy.close()


@pytest.mark.parametrize(
    ("tool", "words"),
    [
        ("wrong_mime", "not 'text/html;profile=mcp-app'"),
        ("missing_resource", "could not be read"),
        ("not_ui", "not an MCP App"),
        ("call_counts", "not an MCP App"),
        ("no_such_tool", "no tool 'no_such_tool'"),
    ],
)
async def test_a_view_that_cannot_be_shown_is_refused(tool: str, words: str) -> None:
    async with probe() as client:
        host, view = make_host(client, tool)
        with pytest.raises(AppError, match=words) as raised:
            await host.open()
        assert isinstance(raised.value, McpError)
        assert host.status == "error"
        assert host.error is not None
        assert words in host.error
        assert host.resource is None
        assert view.sent == []
        await shut(host, view)
        assert host.status == "closed"


# --- the handshake and the tool's input and result ---------------------------------------------


async def test_initialize_is_answered_with_the_host_and_its_context() -> None:
    async def yes(url: str) -> bool:
        return True

    async with probe() as client:
        host, view = make_host(client, "show_chart", {"n": 2}, confirm_open_link=yes, theme="dark")
        await host.open()
        await host.receive(INITIALIZE)
        answer = view.result("init")
        assert answer["protocolVersion"] == "2026-01-26"
        assert answer["hostInfo"]["name"] == "mcp-notebook"
        assert isinstance(answer["hostInfo"]["version"], str)
        caps = answer["hostCapabilities"]
        assert {
            "openLinks",
            "serverTools",
            "serverResources",
            "logging",
            "updateModelContext",
            "message",
        } <= set(caps)
        assert caps["sandbox"]["csp"] == {
            "connectDomains": ["https://api.example.com", "wss://live.example.com"],
            "resourceDomains": ["https://cdn.example.com"],
        }
        assert caps["sandbox"]["permissions"] == {"camera": {}, "clipboardWrite": {}}
        context = answer["hostContext"]
        assert context["toolInfo"]["tool"]["name"] == "show_chart"
        assert context["toolInfo"]["tool"]["_meta"]["ui"]["resourceUri"] == "ui://probe/chart.html"
        assert context["theme"] == "dark"
        assert context["displayMode"] == "inline"
        assert context["availableDisplayModes"] == ["inline"]
        assert view.methods() == []  # the answer only: no notification before initialized
        assert host.app_info == {"name": "test-view", "version": "1"}
        await shut(host, view)


async def test_without_a_link_dialog_open_links_is_not_offered() -> None:
    async with probe() as client:
        host, view = make_host(client, "show_chart")
        await host.open()
        params = {**INITIALIZE["params"], "protocolVersion": "2099-01-01"}  # type: ignore[dict-item]
        await request(host, 1, "ui/initialize", params)
        answer = view.result(1)
        assert "openLinks" not in answer["hostCapabilities"]
        assert answer["protocolVersion"] == APPS_PROTOCOL_VERSION  # ours, when we lack theirs
        await shut(host, view)


async def test_tool_input_once_then_the_result_only_after_initialized() -> None:
    async with probe() as client:
        host, view = make_host(client, "show_chart", {"n": 4})
        await host.open()
        await until(lambda: host.result is not None)
        await host.receive(INITIALIZE)
        await anyio.sleep(0.1)
        assert view.methods() == []
        await host.receive(INITIALIZED)
        assert host.initialized is True
        assert view.methods() == ["ui/notifications/tool-input", "ui/notifications/tool-result"]
        tool_input, tool_result = (m for m in view.sent if "method" in m)
        assert tool_input["params"] == {"arguments": {"n": 4}}
        assert tool_result["params"]["structuredContent"] == {"points": [0, 1, 2, 3]}
        assert tool_result["params"]["isError"] is False
        await host.receive(INITIALIZED)  # again: nothing more
        assert view.methods() == ["ui/notifications/tool-input", "ui/notifications/tool-result"]
        await shut(host, view)


async def test_a_view_that_initializes_again_is_sent_the_input_and_result_again() -> None:
    """A second ``ui/initialize`` is a new page: a reloaded frame, the widget drawn twice, or the real
    View after a script stood in for it (notebook 09 under Run All). The first delivery may have
    reached a frame still loading; sent once for good, the real View waited forever (seen in CI)."""
    async with probe() as client:
        host, view = make_host(client, "show_chart", {"n": 2})
        await host.open()
        await until(lambda: host.result is not None)
        await host.receive(INITIALIZE)
        await host.receive(INITIALIZED)
        once = ["ui/notifications/tool-input", "ui/notifications/tool-result"]
        assert view.methods() == once
        await host.receive(INITIALIZE)  # the new page asks first; nothing before its initialized
        await anyio.sleep(0.1)
        assert view.methods() == once
        await host.receive(INITIALIZED)
        assert view.methods() == once + once
        assert view.sent[-1]["params"]["structuredContent"] == {"points": [0, 1]}
        await shut(host, view)


async def test_a_result_that_arrives_after_initialized_is_sent_when_it_arrives() -> None:
    async with probe() as client:
        host, view = make_host(client, "slow_app", {"delay": 0.6})
        await host.open()
        assert host.status == "ready"
        assert host.result is None  # still running: the View shows while the tool works
        await host.receive(INITIALIZED)
        assert view.methods() == ["ui/notifications/tool-input"]
        await until(lambda: len(view.methods()) == 2)
        assert view.methods() == ["ui/notifications/tool-input", "ui/notifications/tool-result"]
        assert view.sent[-1]["params"]["structuredContent"] == {"late": True}
        await shut(host, view)


async def test_a_tool_that_reports_an_error_makes_the_status_error_and_the_view_is_told() -> None:
    async with probe() as client:
        host, view = make_host(client, "failing_app")
        resource = await host.open()  # the View is still shown
        assert resource.uri == "ui://probe/chart.html"
        await until(lambda: host.status == "error")
        assert host.error is not None
        assert "the chart could not be drawn" in host.error
        await host.receive(INITIALIZED)
        assert view.methods() == ["ui/notifications/tool-input", "ui/notifications/tool-result"]
        assert view.sent[-1]["params"]["isError"] is True
        assert ("status", "error") in view.changes
        await shut(host, view)


async def test_a_tool_that_raises_cancels_the_views_result() -> None:
    async with probe() as client:
        host, view = make_host(client, "raising_app")
        await host.open()
        await until(lambda: host.status == "error")
        assert host.result is None
        assert host.error is not None
        await host.receive(INITIALIZED)
        assert view.methods() == ["ui/notifications/tool-input", "ui/notifications/tool-cancelled"]
        assert isinstance(view.sent[-1]["params"]["reason"], str)
        await shut(host, view)


# --- what a View may ask ---------------------------------------------------------------------------


async def test_a_view_calls_app_tools_and_never_reaches_a_model_only_tool() -> None:
    async with probe() as client:
        host, view = make_host(client, "show_chart")
        await host.open()
        await host.receive(INITIALIZED)
        await request(host, 1, "tools/call", {"name": "app_refresh", "arguments": {"n": 7}})
        result = view.result(1)
        assert result["structuredContent"] == {"refreshed": 7}
        assert result["content"][0]["text"] == "refreshed"
        await request(host, 2, "tools/call", {"name": "show_chart", "arguments": {"n": 1}})
        assert view.result(2)["structuredContent"] == {"points": [0]}
        await request(host, 3, "tools/call", {"name": "model_secret", "arguments": {}})
        refused = view.error(3)
        assert refused["code"] == -32000
        assert "model_secret" in refused["message"]
        await request(host, 4, "tools/call", {"name": "no_such_tool"})
        assert view.error(4)["code"] == -32602
        await request(host, 5, "tools/call", {"name": "app_refresh", "arguments": ["not", "a", "map"]})
        assert view.error(5)["code"] == -32602
        await request(host, 6, "tools/call", {"arguments": {}})
        assert view.error(6)["code"] == -32602
        seen = await counts(client)
        assert seen.get("model_secret", 0) == 0  # the refused call never reached the server
        assert "no_such_tool" not in seen
        assert seen["app_refresh"] == 1
        await shut(host, view)


async def test_app_only_tools_stay_callable_by_the_client_and_hidden_from_lists() -> None:
    async with probe() as client:
        names = [t.name for t in await client.list_tools()]
        assert "app_refresh" not in names
        assert "model_secret" in names
        everything = {t.name: t for t in await client.list_tools(include_app_only=True)}
        assert everything["app_refresh"].app_only is True
        assert everything["app_refresh"].visibility == ("app",)
        assert everything["model_secret"].visibility == ("model",)
        assert everything["model_secret"].app_only is False
        assert everything["show_chart"].visibility == ("model", "app")
        assert everything["legacy_key"].ui_resource_uri == "ui://probe/legacy.html"
        assert everything["not_ui"].ui_resource_uri is None
        assert client.cached_tools is not None
        assert "app_refresh" in [t.name for t in client.cached_tools]
        result = await client.call_tool("app_refresh", {"n": 2})
        assert result.structured_content == {"refreshed": 2}


async def test_resources_read_ping_and_a_views_log() -> None:
    async with probe() as client:
        host, view = make_host(client, "show_chart")
        await host.open()
        await request(host, 1, "resources/read", {"uri": "ui://probe/legacy.html"})
        contents = view.result(1)["contents"]
        assert contents[0]["uri"] == "ui://probe/legacy.html"
        assert "<h1>legacy</h1>" in contents[0]["text"]
        await request(host, 2, "resources/read", {"uri": "ui://probe/none.html"})
        assert isinstance(view.error(2)["code"], int)
        await request(host, 3, "resources/read", {})
        assert view.error(3)["code"] == -32602
        await request(host, 4, "ping")
        assert view.result(4) == {}
        await request(host, 5, "resources/list")
        assert "ui://probe/chart.html" in [r["uri"] for r in view.result(5)["resources"]]
        line = {"level": "info", "logger": "view", "data": "hello"}
        await host.receive({"jsonrpc": "2.0", "method": "notifications/message", "params": line})
        assert view.logs == [line]
        await shut(host, view)


async def test_messages_model_context_display_mode_and_size() -> None:
    async with probe() as client:
        host, view = make_host(client, "show_chart")
        await host.open()
        first = {"role": "user", "content": [{"type": "text", "text": "hi"}]}
        second = {"role": "user", "content": [{"type": "text", "text": "again"}]}
        await request(host, 1, "ui/message", first)
        await request(host, 2, "ui/message", second)
        assert view.result(1) == {}
        assert host.messages == [first, second]
        assert ("messages", [first, second]) in view.changes
        await request(host, 3, "ui/update-model-context", {"structuredContent": {"a": 1}})
        await request(host, 4, "ui/update-model-context", {"content": [{"type": "text", "text": "b"}]})
        assert view.result(4) == {}
        assert host.model_context == {"content": [{"type": "text", "text": "b"}]}  # each one overwrites
        await request(host, 5, "ui/request-display-mode", {"mode": "fullscreen"})
        assert view.result(5) == {"mode": "inline"}
        assert host.display_mode == "inline"
        for height, expected in [(321, 321), (10**9, MAX_HEIGHT), (-5, 0), (12.7, 12)]:
            await host.receive(
                {"jsonrpc": "2.0", "method": "ui/notifications/size-changed", "params": {"height": height}}
            )
            assert host.height == expected
        for bad in ["300", None, float("nan"), True]:
            await host.receive(
                {"jsonrpc": "2.0", "method": "ui/notifications/size-changed", "params": {"height": bad}}
            )
            assert host.height == 12
        assert ("height", 321) in view.changes
        await request(host, 6, "ui/download-file", {"contents": []})
        assert view.error(6)["code"] == -32601
        await request(host, 7, "tools/list")
        assert view.error(7)["code"] == -32601
        await host.receive({"jsonrpc": "2.0", "method": "ui/notifications/unknown", "params": {}})
        await shut(host, view)


def confirm(answer: bool | Exception, asked: list[str]) -> Callable[[str], Awaitable[bool]]:
    async def ask(url: str) -> bool:
        asked.append(url)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return ask


@pytest.mark.parametrize(
    ("url", "answer", "opened", "asked"),
    [
        ("https://example.com/docs", True, True, True),
        ("HTTPS://example.com/", True, True, True),
        ("https://example.com/docs", False, False, True),
        ("https://example.com/docs", RuntimeError("dialog broke"), False, True),
        ("http://example.com/", True, False, False),
        ("javascript:alert(1)", True, False, False),
        ("data:text/html,<script>alert(1)</script>", True, False, False),
        ("file:///etc/passwd", True, False, False),
        ("https:///no-host", True, False, False),
        ("https://example.com/a b", True, False, False),
        ("https://example.com/\n", True, False, False),
        (42, True, False, False),
        (None, True, False, False),
    ],
)
async def test_open_link_only_https_and_only_when_the_user_agrees(
    url: Any, answer: bool | Exception, opened: bool, asked: bool
) -> None:
    async with probe() as client:
        questions: list[str] = []
        host, view = make_host(client, "show_chart", confirm_open_link=confirm(answer, questions))
        await host.open()
        await request(host, 1, "ui/open-link", {"url": url})
        if opened:
            assert view.result(1) == {}
            assert host.opened_links == [url]
            assert ("opened_links", [url]) in view.changes
        else:
            assert view.error(1)["code"] == -32000
            assert host.opened_links == []
        assert questions == ([url] if asked else [])
        await shut(host, view)


async def test_without_a_dialog_every_link_is_refused() -> None:
    async with probe() as client:
        host, view = make_host(client, "show_chart")
        await host.open()
        await request(host, 1, "ui/open-link", {"url": "https://example.com/"})
        assert view.error(1)["code"] == -32000
        assert host.opened_links == []
        await shut(host, view)


MALFORMED: list[Any] = [
    None,
    "a string",
    42,
    ["jsonrpc", "2.0"],
    {"method": "ping", "id": 1},  # no jsonrpc
    {"jsonrpc": "1.0", "method": "ping", "id": 1},
    {"jsonrpc": 2.0, "method": "ping", "id": 1},
    {"jsonrpc": "2.0", "method": 7, "id": 1},
    {"jsonrpc": "2.0", "method": "ping", "id": True},
    {"jsonrpc": "2.0", "method": "ping", "id": 1.5},
    {"jsonrpc": "2.0", "method": "ping", "id": None},
    {"jsonrpc": "2.0", "method": "ping", "id": [1]},
    {"jsonrpc": "2.0", "method": "ping", "id": {"a": 1}},
    {"jsonrpc": "2.0", "method": "ping", "id": ""},
    {"jsonrpc": "2.0", "method": "ping", "id": "x" * 1000},
    {"jsonrpc": "2.0", "method": "x" * 1000, "id": 1},
    {"jsonrpc": "2.0", "method": "ui/message", "id": 1, "params": {"text": "x" * (5 * 1024 * 1024)}},
    {"jsonrpc": "2.0", "method": "ui/message", "id": 1, "params": {"not json": {1, 2}}},
    {"jsonrpc": "2.0", "method": "ui/message", "id": 1, "params": {"nan": float("nan")}},
    {"jsonrpc": "2.0", "id": 99, "result": {}},  # an answer to nothing we asked
    {"jsonrpc": "2.0", "id": 1},  # neither request, notification nor response
    {"jsonrpc": "2.0"},
]


async def test_malformed_messages_are_dropped_and_never_raise() -> None:
    async with probe() as client:
        host, view = make_host(client, "show_chart")
        await host.open()
        for message in MALFORMED:
            await host.receive(message)
        assert view.sent == []
        assert host.messages == []
        await request(host, "p", "ui/message", ["not", "an", "object"])
        assert view.error("p")["code"] == -32602
        await request(host, "q", "ping", None)
        assert view.result("q") == {}
        assert host.status == "ready"
        await shut(host, view)


async def test_a_relay_or_observer_that_raises_does_not_break_the_host() -> None:
    def broken_send(message: dict[str, Any]) -> None:
        raise RuntimeError("relay down")

    def broken_observer(name: str, value: Any) -> None:
        raise RuntimeError("observer down")

    async with probe() as client:
        host = AppHost(client, "show_chart", {}, send=broken_send, on_change=broken_observer)
        await host.open()
        await host.receive(INITIALIZE)
        await host.receive(INITIALIZED)
        await request(host, 1, "ui/message", {"role": "user", "content": []})
        assert len(host.messages) == 1
        await host.close()
        assert host.status == "closed"


# --- teardown ------------------------------------------------------------------------------------


async def answer_teardown(host: AppHost, view: View) -> None:
    await until(lambda: "ui/resource-teardown" in view.methods())
    teardown = next(m for m in view.sent if m.get("method") == "ui/resource-teardown")
    await host.receive({"jsonrpc": "2.0", "id": teardown["id"], "result": {}})


async def test_close_asks_the_view_to_tear_down_and_waits_for_its_answer() -> None:
    async with probe() as client:
        host, view = make_host(client, "show_chart")
        await host.open()
        await host.receive(INITIALIZED)
        async with anyio.create_task_group() as tg:
            tg.start_soon(answer_teardown, host, view)
            with anyio.fail_after(1.5):  # well before the 2 s bound: the answer ended the wait
                await host.close("user closed it")
        teardown = next(m for m in view.sent if m.get("method") == "ui/resource-teardown")
        assert teardown["params"] == {"reason": "user closed it"}
        assert host.status == "closed"
        sent = len(view.sent)
        await host.close()  # idempotent
        await request(host, 9, "ping")
        await host.receive(INITIALIZED)
        assert len(view.sent) == sent  # nothing after closing
        assert view.methods().count("ui/resource-teardown") == 1


async def test_close_without_an_answer_ends_after_a_short_bound() -> None:
    async with probe() as client:
        host, view = make_host(client, "show_chart")
        await host.open()
        await host.receive(INITIALIZED)
        with anyio.fail_after(5):
            await host.close()
        assert host.status == "closed"
        assert "ui/resource-teardown" in view.methods()


async def test_a_view_that_never_initialized_is_not_asked_to_tear_down() -> None:
    async with probe() as client:
        host, view = make_host(client, "slow_app", {"delay": 5})
        await host.open()
        with anyio.fail_after(3):
            await host.close()  # the pending call is cancelled too
        assert host.status == "closed"
        assert view.sent == []


async def test_a_view_that_asks_to_close_is_torn_down() -> None:
    async with probe() as client:
        host, view = make_host(client, "show_chart")
        await host.open()
        await host.receive(INITIALIZED)
        await host.receive({"jsonrpc": "2.0", "method": "ui/notifications/request-teardown", "params": {}})
        assert "ui/resource-teardown" in view.methods()
        await request(host, 5, "ping")
        assert view.error(5)["code"] == -32000  # closing: no more work
        await answer_teardown(host, view)
        assert host.status == "closed"
        await host.close()


# --- the three published examples ----------------------------------------------------------------


@pytest.mark.parametrize("name", list(EXAMPLES))
async def test_the_published_examples_open_and_get_their_result(name: str) -> None:
    example = EXAMPLES[name]
    async with Client(example_command(name)) as client:
        tools = await client.list_tools()
        tool = next(t for t in tools if t.name == example.tool)
        assert tool.ui_resource_uri == example.resource
        assert tool.meta["ui/resourceUri"] == example.resource  # they write the deprecated key too
        assert tool.visibility == ("model", "app")
        host, view = make_host(client, example.tool, {})
        resource = await host.open()
        assert resource.uri == example.resource
        assert resource.csp is None  # they declare no _meta.ui: the spec's restrictive default
        assert resource.csp_header == content_security_policy(None)
        assert resource.allow == ""
        assert len(resource.html) > 100_000
        assert "<script" in resource.html
        await host.receive(INITIALIZE)
        assert view.result("init")["hostContext"]["toolInfo"]["tool"]["name"] == example.tool
        await host.receive(INITIALIZED)
        await until(lambda: len(view.methods()) == 2)
        assert view.methods() == ["ui/notifications/tool-input", "ui/notifications/tool-result"]
        structured = view.sent[-1]["params"]["structuredContent"]
        assert set(example.structured_keys) <= set(structured)
        await shut(host, view)


async def test_a_published_view_calls_its_own_tool_again() -> None:
    example = EXAMPLES["customer-segmentation"]
    async with Client(example_command("customer-segmentation")) as client:
        host, view = make_host(client, example.tool, {})
        await host.open()
        await host.receive(INITIALIZED)
        await request(host, 1, "tools/call", {"name": example.tool, "arguments": {"segment": "Enterprise"}})
        customers = view.result(1)["structuredContent"]["customers"]
        assert customers
        assert {c["segment"] for c in customers} == {"Enterprise"}
        await shut(host, view)


async def test_a_link_dialog_may_be_a_plain_function() -> None:
    async with probe() as client:
        host, view = make_host(client, "show_chart", confirm_open_link=lambda url: True)
        await host.open()
        await request(host, 1, "ui/open-link", {"url": "https://example.com/"})
        assert view.result(1) == {}
        assert host.opened_links == ["https://example.com/"]
        await shut(host, view)


async def test_the_hostile_view_is_served_self_contained() -> None:
    async with probe() as client:
        host, view = make_host(client, "hostile_app")
        resource = await host.open()
        assert resource.uri == "ui://probe/hostile.html"
        assert "ui/update-model-context" in resource.html
        assert "src=" not in resource.html  # no external script, image or frame
        assert "connect-src 'none'" in resource.csp_header
        await shut(host, view)
