"""AppView, the MCP App widget: what it relays, what it draws, and what a saved notebook keeps.

The host's rules (the answers to a View, the CSP, visibility) are tested with the host itself; here
a small stand-in host records what the widget hands it, so each test names what the widget does:
relay the View's messages verbatim to the engine thread, deliver the host's to the front end, mirror
the host's state in traits, ask before a link opens, never put the View's HTML in a saved notebook.
The live path (a real View in a real sandboxed iframe) is tests/test_browser_apps.py.
"""

from __future__ import annotations

import html.parser
import sys
import threading
import zipfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("anywidget")

from mcp_notebook.notebook import SessionModel, _apps
from mcp_notebook.notebook._engine import get_engine

from .widget_helpers import HOSTILE, wait_for

_app = pytest.importorskip("mcp_notebook.widgets._app")
AppView, with_csp, front_end_path = _app.AppView, _app.with_csp, _app.front_end_path

ROOT = Path(__file__).resolve().parents[1]
PAGE = "<!DOCTYPE html><html><head><title>t</title></head><body>" + HOSTILE + "</body></html>"
CSP = "default-src 'none'; script-src 'self' 'unsafe-inline'; connect-src 'none'"


class StandInHost:
    """What the widget needs of an AppHost, recording what it is handed."""

    def __init__(self, client: Any, tool: Any, arguments: Any, **callbacks: Any) -> None:
        self.tool, self.arguments, self.callbacks = tool, arguments, callbacks
        self.received: list[tuple[Any, int]] = []
        self.status, self.error, self.messages = "loading", None, []
        self.model_context: dict[str, Any] | None = None
        self.height: int | None = None
        self.display_mode, self.initialized, self.result = "inline", False, None
        self.opened_links: list[str] = []
        self.resource: Any = None
        self.closed_with: str | None = None

    async def open(self) -> Any:
        self.resource = SimpleNamespace(
            uri="ui://t/page.html", html=PAGE, csp_header=CSP, allow="clipboard-write", csp=None
        )
        self.status = "ready"
        return self.resource

    async def receive(self, message: Any) -> None:
        self.received.append((message, threading.get_ident()))

    async def close(self, reason: str = "closed") -> None:
        self.closed_with = reason
        self.callbacks["on_change"]("status", "closed")


@pytest.fixture
def view(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(_apps, "AppHost", StandInHost)  # the notebook layer runs the host
    session = SimpleNamespace(_engine=get_engine(), client=object(), model=SessionModel())
    made = AppView(session, "show", {"n": 1})
    sent: list[Any] = []
    monkeypatch.setattr(made, "send", sent.append)
    made.sent = sent
    get_engine().call(made.aopen)
    yield made
    made._discard()


def test_front_end_ships_in_the_checkout_and_is_plain_esm_without_imports() -> None:
    source = front_end_path().read_text()
    assert front_end_path().resolve() == (ROOT / "widgets" / "mcp_app.js").resolve()
    assert "export default" in source
    assert "import " not in source.replace("// ", "")  # nothing fetched: offline notebooks work
    assert '"allow-scripts"' in source
    assert "allow-same-origin" not in source.split("const SANDBOX")[1][:40]


def test_wheel_carries_the_front_end_inside_the_package(tmp_path: Path) -> None:
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", str(ROOT), "-w", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = tmp_path.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        shipped = archive.read("mcp_notebook/widgets/static/mcp_app.js").decode()
    assert shipped == (ROOT / "widgets" / "mcp_app.js").read_text()


class _Heads(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.first: tuple[str, dict[str, str | None]] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.first is None and tag not in ("html", "head"):
            self.first = (tag, dict(attrs))


@pytest.mark.parametrize(
    "page",
    [
        PAGE,
        "\ufeff  <!doctype html>\n<html><head><meta charset=utf-8></head></html>",
        "<html><!-- <head> --><head></head></html>",
        "<p>no head at all</p>",
    ],
)
def test_csp_meta_is_the_first_element_whatever_the_page(page: str) -> None:
    hostile_csp = CSP + '; x-"><script>alert(1)</script>'
    built = with_csp(page, hostile_csp)
    parser = _Heads()
    parser.feed(built)
    assert parser.first == ("meta", {"http-equiv": "Content-Security-Policy", "content": hostile_csp})
    assert "<script>alert(1)" not in built.split(">", 2)[1]  # the policy's text cannot open a tag
    assert built.lower().lstrip("\ufeff ").startswith(("<!doctype", "<meta"))


def test_view_gets_the_page_with_its_csp_and_the_host_state(view: Any) -> None:
    assert view.status == "ready"
    assert view.resource_uri == "ui://t/page.html"
    assert view.csp == CSP
    assert view.allow == "clipboard-write"
    assert view.srcdoc.startswith('<!DOCTYPE html><meta http-equiv="Content-Security-Policy"')
    assert view.tool == "show"
    assert view.host.arguments == {"n": 1}


def test_messages_from_the_view_reach_the_host_verbatim_on_the_engine_thread(view: Any) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "ui/initialize", "params": {"x": [1, None]}}
    view._from_front_end(view, message, [])
    view._from_front_end(view, "not even json-rpc", [])
    wait_for(lambda: len(view.host.received) == 2, 5, "both messages handed to the host")
    assert [m for m, _ in view.host.received] == [message, "not even json-rpc"]
    assert {thread for _, thread in view.host.received} == {get_engine().thread_id}


def test_host_messages_go_to_the_front_end_and_its_state_to_the_traits(view: Any) -> None:
    on_change = view.host.callbacks["on_change"]
    view.host.callbacks["send"]({"jsonrpc": "2.0", "id": 1, "result": {}})
    assert view.sent == [{"jsonrpc": "2.0", "id": 1, "result": {}}]
    get_engine().call(_on_engine, lambda: on_change("model_context", {"structuredContent": {"a": 1}}))
    on_change("height", 99_999)
    on_change("messages", [{"role": "user", "content": []}])
    on_change("error", "the tool failed")
    on_change("unknown", 1)
    assert view.model_context == {"structuredContent": {"a": 1}}
    assert view.height == 4000  # clamped
    assert view.messages == [{"role": "user", "content": []}]
    assert view.error == "the tool failed"


async def _on_engine(fn: Any) -> None:
    fn()


def test_view_logs_go_to_the_session_log(view: Any) -> None:
    view.host.callbacks["on_log"]({"level": "info", "data": "drawn"})
    # The model publishes its log a moment later (coalesced, off the connection's thread).
    wait_for(lambda: view.session.model.log, 5, "the entry published")
    (entry,) = view.session.model.log
    assert entry["level"] == "info"
    assert entry["data"] == "drawn"
    assert entry["logger"] == "app:show"


def _ask(view: Any, url: str) -> Any:
    return get_engine().spawn(view.host.callbacks["confirm_open_link"], url)


def test_open_link_needs_a_click_and_only_https(view: Any) -> None:
    refused = get_engine().call(view.host.callbacks["confirm_open_link"], "http://example.com/")
    assert refused is False
    assert view.link_request is None

    asked = _ask(view, "https://docs.example.com/a?b=1")
    wait_for(lambda: view.link_request is not None, 5, "the question shown")
    assert view.link_request["url"] == "https://docs.example.com/a?b=1"
    second = get_engine().call(view.host.callbacks["confirm_open_link"], "https://other.example/")
    assert second is False  # one question at a time
    view.link_answer = {"id": view.link_request["id"] + 1, "open": True}  # a stale answer: ignored
    assert not asked.done()
    view.answer_link(True)
    assert asked.result(timeout=5) is True
    wait_for(lambda: view.link_request is None, 5, "the question cleared")

    asked = _ask(view, "https://docs.example.com/")
    wait_for(lambda: view.link_request is not None, 5, "the second question shown")
    view.answer_link(False)
    assert asked.result(timeout=5) is False


def test_saved_notebook_gets_a_summary_never_the_apps_html(view: Any) -> None:
    view.model_context = {"structuredContent": {"total": 3}}
    data, _metadata = view._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    assert "ui://t/page.html" in data["text/plain"]
    assert "ready" in data["text/plain"]
    static = data["text/html"]
    assert "structuredContent" in static
    assert "onerror" not in static
    assert "<title>" not in static
    assert "DOCTYPE" not in static


def test_close_tears_the_view_down(view: Any) -> None:
    view.close()
    wait_for(lambda: view.host.closed_with == "closed", 5, "the teardown")
    wait_for(lambda: view.comm is None, 5, "the widget closed")
    assert view.status == "closed"


# --- against real servers: the demo app, and the probe's broken apps --------------------------------

APPS_SERVER = ROOT / "tests" / "servers" / "apps_server.py"


def _connect(*command: str) -> Any:
    from mcp_notebook import connect

    env = {"PYTHONPATH": str(ROOT)}
    return connect([sys.executable, *command], env=env, register=False, dialogs=False, show_progress=False)


@pytest.mark.usefixtures("no_leaked_processes")
def test_demo_app_played_from_python_updates_the_model_context() -> None:
    from mcp_notebook.demo.apps import BOARD_URI

    with _connect("-m", "mcp_notebook.demo.apps") as session:
        assert [t.name for t in session.model.tools] == ["sales_board"]  # region_detail is app-only
        assert {t.name for t in session.list_tools(include_app_only=True)} == {"sales_board", "region_detail"}
        view = session.app("sales_board")
        sent: list[Any] = []
        view.send = sent.append
        assert view.status == "ready"
        assert view.resource_uri == BOARD_URI
        assert view.srcdoc.startswith("<!DOCTYPE html><meta http-equiv")
        answers = [
            view.receive(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "ui/initialize",
                    "params": {"protocolVersion": "2026-01-26", "appInfo": {"name": "t", "version": "1"}},
                }
            )
        ]
        initialized = {"jsonrpc": "2.0", "method": "ui/notifications/initialized", "params": {}}
        assert view.receive(initialized) is None
        answers.append(
            view.receive(
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "region_detail", "arguments": {"region": "west"}},
                }
            )
        )
        context = {"structuredContent": {"selected": {"region": "west"}}}
        answers.append(
            view.receive({"jsonrpc": "2.0", "id": 3, "method": "ui/update-model-context", "params": context})
        )
        wait_for(lambda: len(sent) >= 2, 10, "the host's notifications")
        assert view.initialized is True
        assert view.model_context == context
        by_id = {m["id"]: m for m in answers if m is not None}
        assert by_id[2]["result"]["structuredContent"]["region"] == "west"
        assert [m for m in sent if "id" in m] == []  # the answers came back to Python, not the View
        methods = [m.get("method") for m in sent if "method" in m]
        assert methods == ["ui/notifications/tool-input", "ui/notifications/tool-result"]
        assert session.model.history[-1]["name"] == "sales_board"
        view._discard()


@pytest.mark.usefixtures("no_leaked_processes")
def test_session_app_refuses_what_is_no_app_and_shows_a_failing_tool_as_an_error() -> None:
    from mcp_notebook.apps import AppError

    with _connect(str(APPS_SERVER)) as session:
        for tool in ("not_ui", "wrong_mime", "missing_resource", "call_counts"):
            with pytest.raises(AppError):
                session.app(tool)
        failing = session.app("failing_app")
        wait_for(lambda: failing.status == "error", 10, "the failure shown")
        assert "could not be drawn" in (failing.error or "")
        assert session.views == [failing]
    wait_for(lambda: failing.status == "closed", 10, "the view closed with its session")
    wait_for(lambda: failing.comm is None, 10, "its widget closed")


@pytest.mark.usefixtures("no_leaked_processes")
def test_explorer_hides_app_only_tools_and_shows_an_app_as_its_result() -> None:
    from mcp_notebook.widgets import explorer

    with _connect("-m", "mcp_notebook.demo.apps") as session:
        ex = explorer(session)
        try:
            assert ex.tool_names == ["sales_board"]
            ex.select("sales_board")
            assert ex.call() is not None
            wait_for(lambda: ex.app is not None, 15, "the app opened")
            (view,) = ex.result_box.children
            assert isinstance(view, AppView)
            assert view.status == "ready"
            assert "app opened" in ex.status.value
            assert ex.call() is not None  # again: the first view is torn down, a new one shown
            wait_for(lambda: ex.app is not None and ex.app is not view, 15, "the second app")
            wait_for(lambda: view.status == "closed", 10, "the first app torn down")
        finally:
            ex.close()


@pytest.mark.usefixtures("no_leaked_processes")
def test_mcp_app_magic_opens_the_app_and_refuses_a_tool_without_one() -> None:
    from IPython.core.interactiveshell import InteractiveShell

    from mcp_notebook import connect
    from mcp_notebook.jupyter._magics import McpMagicError

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "mcp_notebook")
    env = {"PYTHONPATH": str(ROOT)}
    with (
        connect([sys.executable, "-m", "mcp_notebook.demo.apps"], name="apps-magic", env=env) as apps,
        connect([sys.executable, str(APPS_SERVER)], name="probe-magic", env=env),
    ):
        view = shell.run_line_magic("mcp", "app sales_board -s apps-magic")
        assert isinstance(view, AppView)
        assert view.session is apps
        assert view.status == "ready"
        view._discard()
        with pytest.raises(McpMagicError, match="not an MCP App"):
            shell.run_line_magic("mcp", "app call_counts -s probe-magic")
