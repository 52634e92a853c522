"""The status, resource, prompt and log panels, driven at the Python level against real servers.

Widgets are driven as a browser would drive them: by setting their values and clicking their
buttons (``button.click()``). The demo server runs as a subprocess (both protocol eras where it
matters); an in-process legacy SDK server sends the log messages the demo does not.
"""

from __future__ import annotations

import re
import sys
import threading
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("ipywidgets")

from mcp.server.mcpserver import Context, MCPServer

import mcp_notebook
from mcp_notebook.notebook import Session
from mcp_notebook.widgets._log import LogWidget
from mcp_notebook.widgets._prompts import PromptsWidget
from mcp_notebook.widgets._resources import ResourcesWidget, expand_uri_template, template_variables
from mcp_notebook.widgets._status import StatusWidget

from .conftest import demo_server
from .widget_helpers import HOSTILE
from .widget_helpers import assert_escaped as _assert_escaped
from .widget_helpers import markup as _html_of
from .widget_helpers import wait_for as _wait_for

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

DEMO = demo_server()


@pytest.fixture(params=["auto", "legacy"])
def session(request: pytest.FixtureRequest) -> Iterator[Session]:
    opened = mcp_notebook.connect(DEMO, show_progress=False, protocol=request.param, dialogs=False)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def modern() -> Iterator[Session]:
    opened = mcp_notebook.connect(DEMO, show_progress=False, dialogs=False)
    try:
        yield opened
    finally:
        opened.close()


# --- status -------------------------------------------------------------------------------------


def test_status_shows_state_era_server_and_calls_in_flight(session: Session) -> None:
    status = session.status_widget()
    assert isinstance(status, StatusWidget)
    assert "mcpnb-status" in status._dom_classes
    assert "mcpnb-state-ready" in status.badge._dom_classes
    assert ">ready<" in status.badge.value
    details = status.details.value
    assert "mcp-notebook-demo" in details
    assert session.model.era in details
    assert session.model.protocol_version in details
    # the count is published at most ten times a second: an earlier test's call may still be in it
    _wait_for(lambda: '<span class="mcpnb-in-flight">0</span>' in status.details.value, 5, "in flight 0")

    done = threading.Event()
    worker = threading.Thread(
        target=lambda: (session.call_tool("slow_count", {"steps": 5, "delay": 0.1}), done.set()), daemon=True
    )
    worker.start()
    _wait_for(lambda: '<span class="mcpnb-in-flight">1</span>' in status.details.value, 5, "in flight 1")
    _wait_for(done.is_set, 10, "the slow call")
    _wait_for(lambda: '<span class="mcpnb-in-flight">0</span>' in status.details.value, 5, "in flight 0")
    worker.join(5)

    session.close()
    _wait_for(lambda: "mcpnb-state-closed" in status.badge._dom_classes, 5, "closed badge")
    assert "mcpnb-state-ready" not in status.badge._dom_classes
    status.close()


# --- resources ----------------------------------------------------------------------------------


def test_resources_list_read_and_template(modern: Session) -> None:
    browser = modern.resources_widget()
    assert isinstance(browser, ResourcesWidget)
    assert "mcpnb-resources" in browser._dom_classes
    uris = [value for _label, value in browser.resource_list.options]
    assert {"demo://readme", "demo://data/sales.csv", "demo://note"} <= set(uris)
    assert "demo://readme" in browser.table.value
    assert "text/markdown" in browser.table.value or "demo://readme" in browser.table.value

    browser.select("demo://readme")
    browser.read_button.click()
    assert browser.shown_uri == "demo://readme"
    assert browser.contents is not None
    assert "# mcp-notebook-demo" in browser.contents.text
    view = _html_of(browser.view)
    assert "<h1>mcp-notebook-demo</h1>" in view  # a text/markdown resource is drawn as Markdown (#29)
    assert "demo://" in browser.view_header.value
    assert "readme" in browser.view_header.value

    browser.select_template("demo://region/{name}")
    assert list(browser.fields) == ["name"]
    browser.fields["name"].value = "north"
    assert browser.template_uri.value == "demo://region/north"
    browser.template_read_button.click()
    assert browser.shown_uri == "demo://region/north"
    assert '"region": "north"' in browser.contents.text

    # An unknown region: the server's error is shown, escaped, in the view.
    browser.fields["name"].value = "<b>nowhere</b>"
    assert browser.template_uri.value == "demo://region/%3Cb%3Enowhere%3C%2Fb%3E"
    browser.template_uri.value = "demo://region/<b>nowhere</b>"
    browser.template_read_button.click()
    error = _html_of(browser.view)
    assert "mcpnb-error" in str(browser.view.children[0]._dom_classes)
    assert "<b>nowhere</b>" not in error
    assert "&lt;b&gt;nowhere" in error
    browser.close()


def test_template_fields_get_the_servers_completions(modern: Session) -> None:
    browser = ResourcesWidget(modern, completion_delay=0.05)
    browser.select_template("demo://region/{name}")
    completer = browser.completers["name"]
    browser.fields["name"].value = "no"
    _wait_for(lambda: browser.fields["name"].options == ("north",), 5, "completion of 'no'")
    assert completer.suggestions == ["north"]
    browser.close()


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_subscribed_resource_updates_live(protocol: str) -> None:
    with mcp_notebook.connect(DEMO, show_progress=False, protocol=protocol, dialogs=False) as opened:
        browser = opened.resources_widget()
        browser.select("demo://note")
        assert browser.subscribe_toggle.value is False
        browser.subscribe_toggle.value = True  # subscribes, then reads
        assert "demo://note" in opened.client.subscriptions
        assert browser.subscribe_toggle.description == "Subscribed"
        assert browser.shown_uri == "demo://note"
        assert browser.contents is not None
        assert browser.contents.text == "empty"

        opened.call_tool("set_note", {"text": f"new note {HOSTILE}"})
        _wait_for(
            lambda: browser.contents is not None and browser.contents.text.startswith("new note"),
            5,
            "the view to re-read the note",
        )
        assert browser.updates["demo://note"] >= 1
        view = _html_of(browser.view)
        assert "new note" in view
        _assert_escaped(view)
        assert "&lt;script&gt;" in view
        assert re.search(r"subscribed; \d+ updates?\b", browser.view_header.value)

        browser.subscribe_toggle.value = False
        assert "demo://note" not in opened.client.subscriptions
        browser.close()


def test_uri_template_expansion() -> None:
    values = {"var": "value", "hello": "Hello World!", "path": "/foo/bar", "list": ["red", "green"], "x": "1"}
    cases = {
        "demo://region/{name}": ("demo://region/north", {"name": "north"}),
        "{var}": ("value", values),
        "{hello}": ("Hello%20World%21", values),
        "{+hello}": ("Hello%20World!", values),
        "{+path}/here": ("/foo/bar/here", values),
        "{list}": ("red,green", values),
        "{list*}": ("red,green", values),
        "{/list*}": ("/red/green", values),
        "{?x,var}": ("?x=1&var=value", values),
        "{&x}": ("&x=1", values),
        "{#hello}": ("#Hello%20World!", values),
        "{.var}": (".value", values),
        "{;x}": (";x=1", values),
        "{var:3}": ("val", values),
        "{?list*}": ("?list=red&list=green", values),
        "x{undefined}y": ("xy", values),
        "{+pct}": ("a%20b/c", {"pct": "a%20b/c"}),
        "file:///{+path}": ("file:////foo/bar", values),
    }
    for template, (expected, given) in cases.items():
        assert expand_uri_template(template, given) == expected, template
    assert template_variables("demo://{a}/{+b}{?c,a}{/d*}") == ["a", "b", "c", "d"]


# --- prompts ------------------------------------------------------------------------------------


def test_prompt_with_arguments_and_rendered_messages(session: Session) -> None:
    panel = session.prompts_widget()
    assert isinstance(panel, PromptsWidget)
    assert "mcpnb-prompts" in panel._dom_classes
    names = [value for _label, value in panel.prompt_list.options]
    assert {"greeting", "analyze_region"} <= set(names)
    panel.select("greeting")
    assert list(panel.fields) == ["name"]

    panel.get_button.click()  # the required argument is missing: nothing is sent
    assert panel.result is None
    assert "Missing" in panel.error.value
    assert "name" in panel.error.value

    panel.fields["name"].value = f"Ada {HOSTILE}"
    panel.get_button.click()
    assert panel.result is not None
    assert "Ada" in panel.result.text
    rendered = _html_of(panel.messages)
    assert "user" in rendered
    assert "Write a short, friendly greeting for Ada" in rendered
    _assert_escaped(rendered)
    assert session.model.history[-1]["method"] == "prompts/get"
    panel.close()


def test_prompt_argument_completions(modern: Session) -> None:
    panel = PromptsWidget(modern, completion_delay=0.05)
    panel.select("analyze_region")
    field = panel.fields["region"]
    field.value = "no"
    _wait_for(lambda: field.options == ("north",), 5, "completion of 'no'")
    field.value = ""
    _wait_for(lambda: set(field.options) == {"north", "south", "east", "west"}, 5, "all regions")
    field.value = "north"
    panel.get_button.click()
    assert "north region" in panel.result.text
    panel.close()


def test_prompt_errors_are_shown_escaped(modern: Session) -> None:
    panel = modern.prompts_widget()
    panel.select("analyze_region")
    panel.fields["region"].value = HOSTILE
    panel.get_button.click()
    assert panel.result is None
    rendered = _html_of(panel.messages)
    assert "mcpnb-error" in panel.messages.children[0]._dom_classes
    _assert_escaped(rendered)
    panel.close()


# --- log ----------------------------------------------------------------------------------------


def _chatty_server() -> Any:
    server = MCPServer(f"chatty {HOSTILE}")

    @server.tool()
    async def chatter(ctx: Context, text: str) -> str:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # logging is deprecated in the modern era, not legacy
            await ctx.debug(f"debug {text}", logger_name="chat")
            await ctx.info(f"info {text}", logger_name="chat")
            await ctx.warning(f"warning {text}", logger_name="chat")
        return "ok"

    return server


def test_log_shows_server_messages_with_a_level_filter() -> None:
    with mcp_notebook.connect(
        _chatty_server(), protocol="legacy", show_progress=False, dialogs=False
    ) as opened:
        log = opened.log_widget()
        assert isinstance(log, LogWidget)
        assert "mcpnb-log" in log._dom_classes
        opened.call_tool("chatter", {"text": HOSTILE})
        _wait_for(lambda: "warning " in log.table.value, 5, "the warning in the log view")
        kinds = [e["kind"] for e in log.entries()]
        assert kinds[-3:] == ["debug", "info", "warning"]
        assert log.table.value.index("debug ") < log.table.value.index("warning ")  # newest last
        _assert_escaped(log.table.value)
        assert "&lt;script&gt;" in log.table.value
        assert "<code>chat</code>" in log.table.value

        log.level.value = "warning"
        assert [e["kind"] for e in log.entries() if e["kind"] != "notification"] == ["warning"]
        assert "info " not in log.table.value
        assert "warning " in log.table.value

        log.show_notifications.value = False
        assert all(e["kind"] != "notification" for e in log.entries())
        log.clear_button.click()
        assert log.entries() == []
        opened.call_tool("chatter", {"text": "again"})
        _wait_for(lambda: "warning again" in log.table.value, 5, "new entries after clearing")
        log.close()


def test_log_is_bounded_and_shows_notifications(modern: Session) -> None:
    log = LogWidget(modern, max_entries=3)
    modern.subscribe("demo://note")
    for index in range(5):
        modern.call_tool("set_note", {"text": f"note {index}"})
    _wait_for(
        lambda: sum("resources/updated" in str(e["source"]) for e in log.entries()) >= 3,
        10,
        "three resource updates",
    )
    assert len(log.entries()) == 3
    assert all(e["kind"] == "notification" for e in log.entries())
    # The table is redrawn a moment later (coalesced, off the connection's thread).
    _wait_for(lambda: log.table.value.count('class="mcpnb-log-entry"') == 3, 5, "three rows drawn")
    log.close()


def test_widgets_stop_following_the_model_when_closed(modern: Session) -> None:
    model = modern.model
    before = {name: len(model._trait_notifiers.get(name, {}).get("change", [])) for name in ("log", "status")}
    widgets = [
        modern.status_widget(),
        modern.log_widget(),
        modern.resources_widget(),
        modern.prompts_widget(),
    ]
    for widget in widgets:
        widget.close()
    after = {name: len(model._trait_notifiers.get(name, {}).get("change", [])) for name in ("log", "status")}
    assert after == before


def test_import_mcp_notebook_does_not_import_ipywidgets() -> None:
    import subprocess

    code = "import sys, mcp_notebook; print('ipywidgets' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_hostile_server_strings_are_escaped_in_every_panel() -> None:
    with mcp_notebook.connect(
        _chatty_server(), protocol="legacy", show_progress=False, dialogs=False
    ) as opened:
        widgets = [
            opened.status_widget(),
            opened.log_widget(),
            opened.resources_widget(),
            opened.prompts_widget(),
        ]
        opened.call_tool("chatter", {"text": HOSTILE})
        _wait_for(lambda: "warning " in widgets[1].table.value, 5, "the log entries")
        for widget in widgets:
            markup = _html_of(widget)
            _assert_escaped(markup)
        assert "chatty &lt;img" in widgets[0].badge.value
        for widget in widgets:
            widget.close()


def test_status_shows_reconnects_and_the_last_error(modern: Session) -> None:
    import psutil

    status = modern.status_widget()
    states: list[str] = []
    modern.model.observe(lambda change: states.append(change["new"]), names="status")
    psutil.Process(modern.client._transport.pid).kill()  # type: ignore[attr-defined]
    _wait_for(lambda: '<span class="mcpnb-reconnects">1</span>' in status.details.value, 15, "a reconnect")
    _wait_for(lambda: "mcpnb-state-ready" in status.badge._dom_classes, 15, "ready again")
    assert "reconnecting" in states
    assert modern.call_tool("add", {"a": 1, "b": 1}).structured_content == {"result": 2.0}
    # Why the connection was lost stays on the model (and the panel) after the restart.
    assert modern.model.last_error is not None
    assert "killed by SIGKILL" in modern.model.last_error
    assert "mcpnb-last-error" in status.details.value
    # A hostile message from the server is shown escaped.
    modern.model.update(last_error=f"server exited {HOSTILE}")
    _wait_for(lambda: "server exited &lt;img" in status.details.value, 5, "the new error drawn")
    assert "mcpnb-last-error" in status.details.value
    _assert_escaped(status.details.value)
    status.close()
