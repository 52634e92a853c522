"""A group's widgets (status board, explorer with a server selector, merged log), against real servers.

Driven as a browser would drive them: by setting values and clicking buttons. The group holds the
demo server (modern), the everything server (legacy) and a command that does not exist.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

pytest.importorskip("ipywidgets")

from mcp_notebook import Group
from mcp_notebook.widgets._explorer import Explorer
from mcp_notebook.widgets._group_panels import (
    ALL_SERVERS,
    GroupExplorer,
    GroupLogWidget,
    GroupStatusWidget,
)
from mcp_notebook.widgets._log import LEVELS

from .conftest import demo_server, everything_server
from .fakes import wait_until
from .test_notebook_group import LATE_DEMO
from .widget_helpers import HOSTILE
from .widget_helpers import markup as html_of

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

MISSING = "/nonexistent/x"
FAST = {"backoff_initial": 0.05, "backoff_max": 0.1, "max_reconnect_attempts": 1}
WAIT = 20


def _group(servers: dict[str, list[str]]) -> Group:
    return Group(servers, show_progress=False, dialogs=False, **FAST)


@pytest.fixture
def group() -> Iterator[Group]:
    opened = _group({"demo": demo_server(), "everything": everything_server(), "broken": [MISSING]})
    try:
        yield opened
    finally:
        opened.close()


def _badge(board: GroupStatusWidget, server: str) -> str:
    return board.rows[server].cells["status"].value


def _assert_inert(text: str) -> None:
    lowered = text.lower()
    assert "<img" not in lowered
    assert "<script" not in lowered


# --- the status board ---------------------------------------------------------------------------


def test_board_has_a_row_per_server_with_badges_and_retry_on_the_broken_one(group: Group) -> None:
    board = group.status_widget()
    try:
        assert isinstance(board, GroupStatusWidget)
        assert "mcpnb-group-status" in board._dom_classes
        assert list(board.rows) == ["demo", "everything", "broken"]
        assert ">ready<" in _badge(board, "demo")
        assert "mcpnb-state-ready" in board.rows["demo"].cells["status"]._dom_classes
        assert "modern" in board.rows["demo"].cells["protocol"].value
        assert "legacy" in board.rows["everything"].cells["protocol"].value
        assert "mcp-notebook-demo" in board.rows["demo"].cells["info"].value
        wait_until(lambda: board.rows["demo"].cells["tools"].value == str(len(group["demo"].model.tools)))
        assert board.rows["demo"].retry.layout.visibility == "hidden"

        # The missing command fails its one retry and the group gives up: the board follows.
        wait_until(lambda: ">gave up<" in _badge(board, "broken"), timeout=WAIT)
        assert "mcpnb-state-gave-up" in board.rows["broken"].cells["status"]._dom_classes
        assert board.rows["broken"].cells["reconnects"].value == "2 attempts"
        assert MISSING in board.rows["broken"].cells["last_error"].value
        assert board.rows["broken"].retry.layout.visibility == "visible"
        assert not board.rows["broken"].retry.disabled
    finally:
        board.close()


def test_board_follows_the_group_as_it_closes(group: Group) -> None:
    board = group.status_widget()
    assert ">ready<" in _badge(board, "demo")
    group.close()
    wait_until(lambda: ">closed<" in _badge(board, "demo") and ">closed<" in _badge(board, "everything"))
    # Retry on a closed group says why it cannot, and does not raise into the kernel.
    board.rows["demo"].retry.click()
    wait_until(lambda: "closed" in board.message.value and "retrying" not in board.message.value)
    board.close()


def test_retry_button_brings_a_server_up(tmp_path) -> None:
    script = tmp_path / "late.py"
    group = _group({"late": [sys.executable, str(script)]})
    board = group.status_widget()
    try:
        wait_until(lambda: ">gave up<" in _badge(board, "late"), timeout=WAIT)
        script.write_text(LATE_DEMO)
        board.rows["late"].retry.click()
        wait_until(lambda: ">ready<" in _badge(board, "late"), timeout=WAIT)
        wait_until(lambda: board.rows["late"].retry.layout.visibility == "hidden")
        assert "late" in group.sessions
    finally:
        board.close()
        group.close()


def test_hostile_server_names_and_errors_render_as_text() -> None:
    name = "<img/src=x/onerror=alert(1)>"
    group = _group({name: [f"/nonexistent/{name}"]})
    board = group.status_widget()
    try:
        wait_until(lambda: ">gave up<" in _badge(board, name), timeout=WAIT)
        assert "&lt;img/src=x/onerror=alert(1)&gt;" in board.rows[name].cells["server"].value
        assert "&lt;img" in board.rows[name].cells["last_error"].value
        _assert_inert(html_of(board))

        # What a server says about itself, and what it sends as an error, is escaped too.
        hostile = {
            "server": "evil",
            "status": HOSTILE,
            "era": HOSTILE,
            "protocol_version": HOSTILE,
            "server_name": HOSTILE,
            "server_version": HOSTILE,
            "tools": 1,
            "in_flight": 0,
            "reconnects": 0,
            "failures": 0,
            "last_error": HOSTILE,
            "target": '"' + HOSTILE,
        }
        group.model.update(servers=[*group.model.servers, hostile])
        assert "evil" in board.rows
        _assert_inert(html_of(board))
        assert "&lt;script&gt;" in board.rows["evil"].cells["last_error"].value
        assert "mcpnb-state-other" in board.rows["evil"].cells["status"]._dom_classes
    finally:
        board.close()
        group.close()


# --- the explorer -------------------------------------------------------------------------------


def test_explorer_selector_lists_up_servers_and_all_tools_run_on_their_own_session(group: Group) -> None:
    view = group.explorer()
    try:
        assert isinstance(view, GroupExplorer)
        assert list(view.selector.options) == [ALL_SERVERS, "demo", "everything"]
        assert view.selector.value == ALL_SERVERS
        wait_until(lambda: {"demo.add", "everything.echo"} <= set(view.explorer.tool_names))
        assert "broken" not in {name.split(".")[0] for name in view.explorer.tool_names}

        ex = view.explorer
        ex.select("demo.add")
        assert "<code>demo.add</code>" in ex.title.value
        ex.form.set_value({"a": 2, "b": 5})
        assert ex.call() is not None
        result = ex.wait(WAIT)
        assert float(result.text) == 7
        assert group["demo"].model.history[-1]["name"] == "add"
        wait_until(lambda: [c["name"] for c in ex.calls()] == ["demo.add"])
        assert ex.copy_python() == "group.call_tool(\"demo.add\", {'a': 2, 'b': 5})"
        assert list(ex.history_frame()["server"]) == ["demo"]

        ex.select("everything.echo")
        ex.form.set_value({"message": "hey"})
        ex.call()
        assert "hey" in ex.wait(WAIT).text

        # One server: that session's own explorer, names as the server gives them.
        demo = view.show("demo")
        assert isinstance(demo, Explorer)
        assert demo.session is group["demo"]
        assert "add" in demo.tool_names
        assert "demo.add" not in demo.tool_names
        assert view.box.children == (demo.widget,)
        view.selector.value = ALL_SERVERS
        assert view.explorer is ex  # each choice keeps its explorer
    finally:
        view.close()


def test_explorer_for_one_server_and_one_that_is_not_up(group: Group) -> None:
    view = group.explorer("everything")
    try:
        assert view.selector.value == "everything"
        assert "echo" in view.explorer.tool_names
    finally:
        view.close()
    with pytest.raises(KeyError):
        group.explorer("nosuch")


def test_explorer_selector_updates_when_a_server_comes_up(tmp_path) -> None:
    script = tmp_path / "late.py"
    group = Group(
        {"late": [sys.executable, str(script)]},
        show_progress=False,
        dialogs=False,
        backoff_initial=0.05,
        backoff_max=0.1,
        max_reconnect_attempts=100,
    )
    view = group.explorer()
    try:
        assert list(view.selector.options) == [ALL_SERVERS]
        assert view.explorer.tool_names == []
        script.write_text(LATE_DEMO)
        group.reconnect("late")
        wait_until(lambda: list(view.selector.options) == [ALL_SERVERS, "late"], timeout=WAIT)
        wait_until(lambda: "late.add" in view.explorer.tool_names, timeout=WAIT)
    finally:
        view.close()
        group.close()


# --- the merged log -----------------------------------------------------------------------------


def test_merged_log_shows_the_server_and_filters_by_server_and_level(group: Group) -> None:
    log = group.log_widget()
    try:
        assert isinstance(log, GroupLogWidget)
        assert "mcpnb-log" in log._dom_classes
        assert log.column_filter is not None
        assert list(log.column_filter.options) == ["all", "demo", "everything", "broken"]
        group.call_tool("everything.toggle-simulated-logging", {})
        wait_until(
            lambda: any(e["server"] == "everything" and e["kind"] != "notification" for e in log.entries()),
            timeout=WAIT,
        )
        assert "<th>server</th>" in log.table.value
        assert "<b>everything</b>" in log.table.value

        log.column_filter.value = "demo"
        assert all(e["server"] == "demo" for e in log.entries())
        assert "<b>everything</b>" not in log.table.value
        log.column_filter.value = "everything"
        shown = log.entries()
        assert shown
        assert all(e["server"] == "everything" for e in shown)

        levels = [e["kind"] for e in shown if e["kind"] != "notification"]
        highest = max(levels, key=LEVELS.index)
        log.level.value = highest
        assert all(
            LEVELS.index(e["kind"]) >= LEVELS.index(highest)
            for e in log.entries()
            if e["kind"] != "notification"
        )
    finally:
        log.close()


def test_group_widgets_stop_following_the_model_when_closed(group: Group) -> None:
    model = group.model
    names = ("servers", "sessions", "log")

    def count() -> dict[str, int]:
        return {n: len(model._trait_notifiers.get(n, {}).get("change", [])) for n in names}

    demo_model = group["demo"].model
    before, demo_before = count(), len(demo_model._trait_notifiers.get("tools", {}).get("change", []))
    widgets = [group.status_widget(), group.explorer(), group.log_widget()]
    widgets[1].show("demo")
    for widget in widgets:
        widget.close()
    assert count() == before
    assert len(demo_model._trait_notifiers.get("tools", {}).get("change", [])) == demo_before
