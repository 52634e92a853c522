"""The tasks panel, the dashboard and the explorer's task calls, driven from Python against real servers.

The peers: tests/servers/tasks_server.py (fastmcp with the 2026-07-28 tasks extension; its tools do
not declare taskSupport, the server decides) and npm server-everything (2025-11-25 core tasks;
``simulate-research-query`` is a required task that asks for input when ``ambiguous``). Tasks that
must still be running when the test acts on them do not end by themselves (thousands of steps, or
waiting for input that never comes), so nothing depends on how fast the machine is. Hostile rows
come from a fake session: a server's status message, tool name or error must come out inert.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import anyio
import ipywidgets as W
import pytest

import mcp_notebook
from mcp_notebook import McpError, ToolResult
from mcp_notebook.notebook import Session, SessionModel
from mcp_notebook.notebook._engine import get_engine
from mcp_notebook.widgets import dashboard, explorer, tasks_widget
from mcp_notebook.widgets._dashboard import Dashboard
from mcp_notebook.widgets._explorer import Explorer
from mcp_notebook.widgets._tasks_panel import TaskRow, TasksWidget, duration

from .conftest import everything_server
from .widget_helpers import HOSTILE, assert_escaped, find, markup, wait_for, walk

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

TASKS_SERVER = [sys.executable, str(Path(__file__).parent / "servers" / "tasks_server.py")]
WAIT = 30.0  # seconds: only how long a wait may last before the test fails, never a measurement
SCRIPT = "<script>alert(3)</script>"
# The only tags the panel writes; anything else in an HTML value came from a server.
OUR_TAGS = {"div", "b", "i", "code", "span", "pre", "small", "em", "table", "thead", "tbody", "tr"}
OUR_TAGS |= {"th", "td"}
OUR_ATTRIBUTES = {"class", "style", "title"}


async def _never_answer(params: Any) -> Any:
    """An elicitation handler that keeps a task waiting for input until it is cancelled."""
    await anyio.sleep_forever()


@pytest.fixture
def tasks_session() -> Iterator[Session]:
    opened = mcp_notebook.connect(TASKS_SERVER, show_progress=False, dialogs=False)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def everything_session() -> Iterator[Session]:
    opened = mcp_notebook.connect(
        everything_server(), show_progress=False, dialogs=False, elicitation=_never_answer
    )
    try:
        yield opened
    finally:
        opened.close()


# What each server offers: a task that ends by itself, and one that runs until it is cancelled.
PEERS = {
    "tasks-server": (
        "tasks_session",
        ("crunch", {"steps": 2, "delay": 0.1}, '{"steps":2}'),
        ("crunch", {"steps": 100_000, "delay": 0.2}),
    ),
    "everything": (
        "everything_session",
        ("simulate-research-query", {"topic": "tides"}, "Research Report"),
        ("simulate-research-query", {"topic": "tides", "ambiguous": True}),
    ),
}


@pytest.fixture(params=sorted(PEERS))
def peer(request: pytest.FixtureRequest) -> tuple[Session, Any, Any]:
    fixture, finishing, endless = PEERS[request.param]
    return request.getfixturevalue(fixture), finishing, endless


@pytest.fixture
def panel(peer: tuple[Session, Any, Any]) -> Iterator[TasksWidget]:
    widget = peer[0].tasks_widget()
    yield widget
    widget.close()


def _row(panel: TasksWidget, task_id: str) -> TaskRow:
    wait_for(lambda: any(r.task_id == task_id for r in panel.rows), WAIT, f"a row for task {task_id}")
    return panel.row(task_id)


def _status(row: TaskRow) -> str:
    match = re.search(r'class="mcpnb-task-status[^"]*"[^>]*>([^<]*)<', row.info.value)
    return match.group(1) if match else ""


class _Tags(HTMLParser):
    """Every start tag and its attributes, as a browser would parse them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


def _assert_inert(widget: Any) -> None:
    """Only the tags and attributes the panel writes (no handler, link or source), no HTML labels."""
    for w in walk(widget):
        assert not getattr(w, "description_allow_html", False), w
        if not isinstance(w, W.HTML | W.HTMLMath):
            continue
        parser = _Tags()
        parser.feed(w.value)
        parser.close()
        for tag, attrs in parser.tags:
            assert tag in OUR_TAGS, (tag, w.value[:300])
            for name, _value in attrs:
                assert name in OUR_ATTRIBUTES, (tag, name, w.value[:300])


# --- the panel ----------------------------------------------------------------------------------


def test_panel_starts_empty_and_follows_a_task_to_its_result(
    peer: tuple[Session, Any, Any], panel: TasksWidget
) -> None:
    session, (tool, arguments, expected), _ = peer
    assert isinstance(panel, TasksWidget)
    assert "mcpnb-tasks" in panel._dom_classes
    assert panel.rows == []
    assert "No tasks yet" in panel.more.value
    assert "none yet" in panel.header.value

    task = session.start_tool(tool, arguments)
    row = _row(panel, task.task_id)
    assert "mcpnb-task" in row._dom_classes
    assert f">{tool}<" in row.info.value
    assert f'title="{task.task_id}"' in row.info.value  # the whole id, for the tooltip and copying

    result = task.result(timeout=WAIT)
    assert isinstance(result, ToolResult)
    wait_for(lambda: _status(row) == "completed", WAIT, "the row turned completed")
    assert "mcpnb-task-completed" in row._dom_classes
    assert "mcpnb-task-working" not in row._dom_classes
    # the row's status, its buttons and the header are one redraw on the UI thread: wait for its end
    wait_for(lambda: row.result_button.layout.display == "", WAIT, "the row's result button")
    assert row.cancel_button.layout.display == "none"
    wait_for(lambda: "0 running, 1 in all" in panel.header.value, WAIT, "the header's count")

    # The result is one click away, in the explorer's result view.
    assert row.result_box.children == ()
    row.result_button.value = True
    views = find(row, "mcpnb-result")
    assert len(views) == 1
    assert expected in markup(views[0]).replace("&#34;", '"')
    assert row.result_button.description == "Hide result"
    row.result_button.value = False
    assert find(row, "mcpnb-result") == []
    _assert_inert(panel)


def test_status_messages_arrive_and_cancel_button_cancels(
    peer: tuple[Session, Any, Any], panel: TasksWidget
) -> None:
    session, _, (tool, arguments) = peer
    task = session.start_tool(tool, arguments)
    row = _row(panel, task.task_id)
    assert _status(row) in ("working", "input_required")
    assert row.cancel_button.layout.display == ""
    assert not row.cancel_button.disabled
    assert "1 running, 1 in all" in panel.header.value

    # The server's status messages reach the row without anyone asking.
    wait_for(lambda: "mcpnb-task-message" in row.info.value, WAIT, "a status message in the row")
    first = row.info.value
    wait_for(lambda: row.info.value != first, WAIT, "the row to move on (message or elapsed time)")

    row.cancel_button.click()
    wait_for(lambda: _status(row) == "cancelled", WAIT, "the row turned cancelled")
    assert "mcpnb-task-cancelled" in row._dom_classes
    assert row.cancel_button.layout.display == "none"
    assert find(row, "mcpnb-cancelled"), "the cancelled box"
    assert "Cancelled" in markup(row.detail)
    # The server agrees when asked afresh.
    assert task.refresh().status == "cancelled"
    wait_for(lambda: "0 running, 1 in all" in panel.header.value, WAIT, "the header's count")
    with pytest.raises(McpError) as raised:
        task.result(timeout=WAIT)
    assert raised.value.kind == "cancelled"


def test_newest_first_and_many_rows(tasks_session: Session) -> None:
    panel = tasks_session.tasks_widget()
    try:
        first = tasks_session.start_tool("crunch", {"steps": 1, "delay": 0.0})
        second = tasks_session.start_tool("optional_sum", {"a": 1, "b": 2})
        _row(panel, second.task_id)
        assert [r.task_id for r in panel.rows] == [second.task_id, first.task_id]
        assert second.result(timeout=WAIT).data in (3, {"result": 3})
        first.result(timeout=WAIT)
    finally:
        panel.close()
    # Only the newest max_rows are shown; the rest are counted.
    small = TasksWidget(tasks_session, max_rows=1)
    try:
        assert [r.task_id for r in small.rows] == [second.task_id]
        assert "1 older task:" in small.more.value
    finally:
        small.close()


def test_a_tool_error_and_a_task_waiting_for_input(tasks_session: Session) -> None:
    panel = tasks_session.tasks_widget()
    try:
        broken = tasks_session.start_tool("breaks", {})
        row = _row(panel, broken.task_id)
        outcome = broken.result(timeout=WAIT)
        assert outcome.is_error
        wait_for(lambda: "mcpnb-task-tool-error" in row.info.value, WAIT, "the tool error mark")
        row.result_button.value = True
        assert "it broke on purpose" in markup(row.result_box)
        assert find(row.result_box, "mcpnb-error")

        # ask_name needs a name; this session cannot elicit, so the task is stuck, and says why.
        stuck = tasks_session.start_tool("ask_name", {})
        waiting = _row(panel, stuck.task_id)
        wait_for(lambda: find(waiting, "mcpnb-task-error"), WAIT, "the reason it is stuck")
        assert _status(waiting) == "input_required"
        assert "Needs input" in markup(waiting.detail)
        assert "elicitation" in markup(waiting.detail)
        # Nothing changes on the server, but the elapsed time runs on.
        elapsed = re.compile(r"mcpnb-task-elapsed[^>]*>([^<]*)<")
        shown = elapsed.search(waiting.info.value).group(1)
        wait_for(
            lambda: elapsed.search(waiting.info.value).group(1) != shown, WAIT, "the elapsed time to tick"
        )
        future = panel.cancel(stuck.task_id)
        assert future is not None
        assert future.result(WAIT) is True
        wait_for(lambda: _status(waiting) == "cancelled", WAIT, "the stuck task cancelled")
        # one box says why the task ended: the cancelled one (not a failure box beside it)
        wait_for(lambda: find(waiting, "mcpnb-cancelled"), WAIT, "the cancelled box")
        (box,) = find(waiting, "mcpnb-cancelled")
        assert find(waiting, "mcpnb-task-error") == [box]
        assert "Cancelled" in markup(box)
        assert panel.cancel(stuck.task_id) is None  # over: nothing to cancel
    finally:
        panel.close()


def test_the_panel_stops_following_when_closed(tasks_session: Session) -> None:
    panel = tasks_widget(tasks_session)
    panel.close()
    tasks_session.start_tool("optional_sum", {"a": 1, "b": 1}).result(timeout=WAIT)
    assert panel.rows == []
    assert tasks_session.model.tasks  # the model has it; the closed panel did not follow


def test_duration_words() -> None:
    assert duration(0.04) == "40 ms"
    assert duration(12.34) == "12.3 s"
    assert duration(125) == "2 min 05 s"
    assert duration(3720) == "1 h 02 min"
    assert duration(None) == "?"
    assert duration(float("nan")) == "?"


# --- hostile rows -------------------------------------------------------------------------------


class HostileSession:
    """What the panel uses of a Session (model, name, tasks, spawn), with hostile rows."""

    def __init__(self) -> None:
        self.name = SCRIPT
        self.model = SessionModel()
        self._engine = get_engine()
        self.spawn = self._engine.spawn
        self.tasks: list[Any] = []


def _hostile_row(task_id: str, status: str, **fields: Any) -> dict[str, Any]:
    row = {
        "task_id": task_id,
        "tool": "tool" + HOSTILE,
        "status": status,
        "status_message": "msg " + HOSTILE + SCRIPT,
        "started": 1.0,
        "ended": None,
        "elapsed": 1.0,
        "done": False,
        "error": None,
        "result": None,
        "updated": 2.0,
    }
    row.update(fields)
    return row


def test_hostile_tool_names_status_messages_and_errors_are_escaped() -> None:
    session = HostileSession()
    panel = TasksWidget(session)
    try:
        session.model.update(
            tasks=[
                _hostile_row('id"' + HOSTILE, "working"),
                _hostile_row("t2", "failed", done=True, ended=3.0, error="boom " + HOSTILE + SCRIPT),
                _hostile_row("t3", "cancelled", done=True, ended=3.0, status_message=SCRIPT),
                _hostile_row("t4", SCRIPT + HOSTILE),
                _hostile_row(
                    "t5",
                    "completed",
                    done=True,
                    ended=3.0,
                    result=ToolResult.from_dict(
                        {"isError": True, "content": [{"type": "text", "text": HOSTILE + SCRIPT}]}
                    ),
                ),
            ]
        )
        assert len(panel.rows) == 5
        for row in panel.rows:
            row.result_button.value = True
        text = markup(panel)
        assert_escaped(text)
        _assert_inert(panel)
        assert "&lt;script&gt;alert(3)&lt;/script&gt;" in text
        assert "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in text
        assert "boom &lt;img" in text  # the failure's text, escaped
        assert 'title="id&#34;&lt;img' in text  # the id cannot leave its attribute
        # An unknown status (whatever a server sends) gets the neutral class, never the raw text.
        odd = panel.row("t4")
        assert "mcpnb-task-other" in odd._dom_classes
        assert all("<" not in css for w in walk(panel) for css in w._dom_classes)
        # The failed task's reason is shown without asking.
        assert "Failed" in markup(panel.row("t2").detail)
        assert panel.row("t5").result_button.layout.display == ""
    finally:
        panel.close()


# --- the dashboard ------------------------------------------------------------------------------


def test_dashboard_has_status_and_tabs_that_follow_the_session(tasks_session: Session) -> None:
    board = tasks_session.dashboard()
    try:
        assert isinstance(board, Dashboard)
        assert "mcpnb-dashboard" in board._dom_classes
        assert board.children[0] is board.status
        assert "mcpnb-status" in board.status._dom_classes
        assert board.tab.titles == ("Tools", "Tasks", "Resources", "Log")
        assert [type(c).__name__ for c in board.tab.children] == [
            "Explorer",
            "TasksWidget",
            "ResourcesWidget",
            "LogWidget",
        ]
        assert board.tab.children[0] is board.explorer
        assert "crunch" in board.explorer.tool_names

        task = tasks_session.start_tool("crunch", {"steps": 1, "delay": 0.0})
        row = _row(board.tasks, task.task_id)
        task.result(timeout=WAIT)
        wait_for(lambda: _status(row) == "completed", WAIT, "the dashboard's row completed")
    finally:
        board.close()
    assert dashboard is not None  # exported from mcp_notebook.widgets


# --- the explorer -------------------------------------------------------------------------------


@pytest.fixture
def tasks_explorer(tasks_session: Session) -> Iterator[Explorer]:
    ex = explorer(tasks_session)
    yield ex
    ex.close()


def test_explorer_follows_a_task_the_server_made_and_cancel_cancels_it(
    tasks_session: Session, tasks_explorer: Explorer
) -> None:
    ex = tasks_explorer
    # The fastmcp server does not say which tools are tasks: it decides when called.
    ex.select("crunch")
    assert ex.task_mode(ex.selected) == "optional"
    assert ex.as_task.layout.display == ""
    assert ex.as_task.value is False
    ex.form.set_value({"steps": 100_000, "delay": 0.2})
    assert ex.call() is not None

    wait_for(lambda: ex.task is not None, WAIT, "the explorer to catch the task the server made")
    task = ex.task
    assert task.tool == "crunch"
    wait_for(lambda: "step " in ex.status.value, WAIT, "a status message as progress")
    assert task.task_id in ex.task_line.value
    assert not find(ex.widget, "mcpnb-cancel")[0].disabled

    find(ex.widget, "mcpnb-cancel")[0].click()
    result = ex.wait(WAIT)
    assert isinstance(result, McpError)
    assert result.kind == "cancelled"
    assert find(find(ex.widget, "mcpnb-result")[0], "mcpnb-cancelled")
    assert ex.status.value.startswith("cancelled")
    assert task.refresh().status == "cancelled"  # the server agrees
    assert "cancelled" in ex.task_line.value

    # The server said it runs crunch only as a task: the explorer now knows it.
    assert ex.task_mode(ex.selected) == "required"
    assert ex.as_task.value is True
    assert ex.as_task.disabled


def test_explorer_runs_a_task_with_start_tool_and_shows_its_result(
    tasks_session: Session, tasks_explorer: Explorer
) -> None:
    ex = tasks_explorer
    panel = tasks_session.tasks_widget()
    try:
        ex.select("crunch")
        ex.as_task.value = True  # run as task
        ex.form.set_value({"steps": 3, "delay": 0.1})
        assert ex.call() is not None
        result = ex.wait(WAIT)
        assert isinstance(result, ToolResult), result
        assert result.data == {"steps": 3}
        assert ex.task is not None
        assert ex.task.status == "completed"
        assert ex.status.value.startswith("done")
        assert "steps" in markup(find(ex.widget, "mcpnb-result")[0])
        # The same task in the panel, and in the history as a tools/call.
        row = _row(panel, ex.task.task_id)
        wait_for(lambda: _status(row) == "completed", WAIT, "the panel's row completed")
        assert any(e["name"] == "crunch" for e in ex.calls())

        # An optional tool the server would run inline becomes a task when asked.
        ex.select("optional_sum")
        ex.as_task.value = True
        ex.form.set_value({"a": 2, "b": 5})
        ex.call()
        assert ex.wait(WAIT).data in (7, {"result": 7})
        assert ex.task is not None
        assert ex.task.task_id

        # An ordinary tool asked to run as a task: the server runs it at once, the result is kept.
        ex.select("echo")
        ex.as_task.value = True
        ex.form.set_value({"text": "plain " + HOSTILE})
        ex.call()
        echoed = ex.wait(WAIT)
        assert isinstance(echoed, ToolResult), echoed
        assert echoed.text == "plain " + HOSTILE
        assert "at once" in ex.task_line.value
        assert_escaped(markup(ex.widget))
    finally:
        panel.close()


def test_explorer_cancel_while_a_task_is_starting_cancels_it(tasks_explorer: Explorer) -> None:
    ex = tasks_explorer
    ex.select("crunch")
    ex.as_task.value = True
    ex.form.set_value({"steps": 100_000, "delay": 0.2})
    ex.call()
    ex.cancel()  # at once: the handle may not be known yet; either way the task must end cancelled
    result = ex.wait(WAIT)
    assert isinstance(result, McpError), result
    assert result.kind == "cancelled"
    assert ex.task is not None
    assert ex.task.refresh().status == "cancelled"


def test_explorer_with_core_tasks(everything_session: Session) -> None:
    ex = explorer(everything_session)
    try:
        ex.select("echo")  # taskSupport "forbidden"
        assert ex.task_mode(ex.selected) is None
        assert ex.as_task.layout.display == "none"

        ex.select("simulate-research-query")  # taskSupport "required"
        assert ex.task_mode(ex.selected) == "required"
        assert ex.as_task.value is True
        assert ex.as_task.disabled
        ex.form.set_value({"topic": "tides"})
        ex.call()
        result = ex.wait(WAIT)
        assert isinstance(result, ToolResult), result
        assert "Research Report" in result.text
        assert ex.task is not None
        assert ex.task.status == "completed"

        # Waiting for input that never comes; Cancel stops it on the server.
        ex.form.set_value({"topic": "tides", "ambiguous": True})
        ex.call()
        wait_for(lambda: ex.task is not None and ex.task.status == "input_required", WAIT, "input_required")
        assert "input_required" in ex.task_line.value
        ex.cancel()
        cancelled = ex.wait(WAIT)
        assert isinstance(cancelled, McpError), cancelled
        assert cancelled.kind == "cancelled"
        assert ex.task.refresh().status == "cancelled"
    finally:
        ex.close()
