"""The widget details of issue #29 item 10, each through the widget layer against the real demo server.

The explorer shows only the selected tool's own last result, says "1 block", writes code with the
user's variable for the session, shows each call's arguments in its history row, and makes disabled
buttons look disabled; the tasks panel's rows share fixed columns and its hint is code that runs in
a new cell; the dashboard's Resources tab lists each resource once; durations read "7 ms", "1.2 s".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import ipywidgets as W
import pytest

import mcp_notebook
from mcp_notebook import ToolResult
from mcp_notebook.display._durations import short_duration
from mcp_notebook.display._html import html_table
from mcp_notebook.notebook import Session
from mcp_notebook.widgets import explorer
from mcp_notebook.widgets._explorer import Explorer
from mcp_notebook.widgets._tasks_panel import duration

from .conftest import demo_server
from .widget_helpers import find, history_click, history_rows, markup, wait_for, walk

WAIT = 30.0  # seconds: only how long a wait may last before the test fails, never a measurement
DURATION = re.compile(r"^(\d+(\.\d)? ms|\d+\.\d s|\d+ min \d\d s)$")


@pytest.fixture
def session(no_leaked_processes: Any) -> Iterator[Session]:
    opened = mcp_notebook.connect(demo_server(), show_progress=False)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def ex(session: Session) -> Iterator[Explorer]:
    made = explorer(session)
    yield made
    made.close()


@pytest.fixture
def user_ns() -> Iterator[dict[str, Any]]:
    """IPython's user namespace (a real shell), with what the test binds removed afterwards."""
    pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell

    namespace: dict[str, Any] = InteractiveShell.instance().user_ns
    before = set(namespace)
    yield namespace
    for name in set(namespace) - before:
        del namespace[name]


def call(ex: Explorer, name: str, arguments: dict[str, Any]) -> Any:
    ex.select(name)
    assert ex.form is not None
    ex.form.set_value(arguments)
    assert ex.call() is not None, ex.validation.value
    return ex.wait(WAIT)


def _rows(ex: Explorer, count: int) -> list[Any]:
    wait_for(lambda: len(history_rows(ex)) == count, WAIT, f"{count} history rows")
    return history_rows(ex)


# --- 1. the result area belongs to the selected tool ---------------------------------------------------


def test_selecting_another_tool_clears_the_result_and_its_own_comes_back(ex: Explorer) -> None:
    assert call(ex, "add", {"a": 2, "b": 3}).structured_content == {"result": 5}
    (shown,) = ex.result_box.children
    assert ">5.0<" in markup(shown)
    assert ex.status.value.startswith("done")

    ex.select("echo")
    assert ex.result_box.children == ()
    assert find(ex, "mcpnb-result") == []
    assert ex.status.value == ""
    assert ex.progress.layout.visibility == "hidden"

    ex.select("add")  # its own last result, as it was
    assert ex.result_box.children == (shown,)
    assert ex.status.value.startswith("done")

    assert call(ex, "echo", {"text": "hello"}).text == "hello"
    ex.select("add")
    assert ex.result_box.children == (shown,)
    assert "hello" not in markup(ex.result_box)


# --- 2. plurals ----------------------------------------------------------------------------------------


def test_one_content_block_is_one_block(ex: Explorer) -> None:
    call(ex, "add", {"a": 1, "b": 1})  # structured content and one text block
    (content,) = find(ex, "mcpnb-content")
    assert content.get_title(0) == "content (1 block)"


def test_one_more_row_is_one_row() -> None:
    table = html_table([{"n": i} for i in range(3)], max_rows=2)
    assert "… 1 more row<" in table
    assert "… 2 more rows<" in html_table([{"n": i} for i in range(4)], max_rows=2)


# --- 3. code with the user's variable --------------------------------------------------------------------


def test_copy_as_python_uses_the_users_variable_and_runs(
    ex: Explorer, session: Session, user_ns: Any
) -> None:
    call(ex, "add", {"a": 2, "b": 3})
    _rows(ex, 1)
    history_click(ex, 0, "mcpnb-copy")
    assert ex.code.value == "session.call_tool(\"add\", {'a': 2, 'b': 3})"  # no variable holds it yet

    user_ns["demo"] = session
    history_click(ex, 0, "mcpnb-copy")
    assert ex.code.value == "demo.call_tool(\"add\", {'a': 2, 'b': 3})"
    again = eval(ex.code.value, user_ns)  # the code runs as written in a new cell
    assert again.structured_content == {"result": 5}


# --- 4. the arguments in the history rows ------------------------------------------------------------------


def test_history_rows_show_the_arguments_on_one_short_line(ex: Explorer) -> None:
    rows_before = {id(w) for w in walk(ex.history_list)} | {id(w) for w in ex._history.widgets()}
    call(ex, "add", {"a": 2, "b": 3})
    text = 'two\nlines "quoted" <b>' + "x" * 300
    call(ex, "echo", {"text": text})
    newest, oldest = _rows(ex, 2)
    wait_for(lambda: "echo(" in history_rows(ex)[0].text, WAIT, "the newest row")
    newest, oldest = _rows(ex, 2)
    assert "add(a=2, b=3)" in oldest.text
    line = newest.text
    assert 'echo(text="two\\nlines \\"quoted\\" <b>xxx' in line  # escaped, one line
    assert "\n" not in line
    assert len(line) <= 160
    assert "…" in line
    assert json.loads(newest.tooltip) == {"text": text}  # all of it in the tooltip
    assert "<b>" not in newest.raw  # the markup is escaped in the table
    # The list is the same widgets as before the calls: none was made for them.
    assert {id(w) for w in walk(ex.history_list)} <= rows_before
    from mcp_notebook.widgets._explorer_history import arguments_line  # here: the test runs on old code too

    assert arguments_line("<redacted>") == "…"


# --- 5. disabled buttons look disabled ---------------------------------------------------------------------


def _looks(button: W.Button) -> tuple[bool, str, bool]:
    return button.disabled, button.button_style, "mcpnb-disabled" in button._dom_classes


def test_disabled_buttons_look_disabled(ex: Explorer) -> None:
    # Nothing selected: Validate and Call disabled, Cancel too; all plain and marked.
    for button in (ex.validate_button, ex.call_button, ex.cancel_button):
        assert _looks(button) == (True, "", True), button.description
    assert "select a tool first" in ex.call_button.tooltip
    ex.select("slow_count")
    assert _looks(ex.call_button) == (False, "primary", False)
    assert _looks(ex.validate_button) == (False, "", False)
    assert _looks(ex.cancel_button) == (True, "", True)
    assert ex.form is not None
    ex.form.set_value({"steps": 100, "delay": 0.05})
    assert ex.call() is not None
    assert _looks(ex.call_button) == (True, "", True)  # a call is running
    assert "a call is running" in ex.call_button.tooltip
    assert _looks(ex.cancel_button) == (False, "warning", False)
    ex.cancel_button.click()
    ex.wait(WAIT)
    assert _looks(ex.cancel_button) == (True, "", True)
    assert _looks(ex.call_button) == (False, "primary", False)


# --- 6. the tasks panel -----------------------------------------------------------------------------------


def _columns(info: str) -> str:
    match = re.search(r"grid-template-columns:([^;\"]+)", info)
    assert match is not None, info
    return match.group(1)


def test_task_rows_share_fixed_columns_and_the_hint_runs(session: Session, user_ns: Any) -> None:
    user_ns["demo"] = session
    panel = session.tasks_widget()
    try:
        short_task = session.start_tool("sum_numbers", {"numbers": [1, 2]})
        long_task = session.start_tool("build_report", {"topic": "tides", "sections": 1, "delay": 0})
        assert isinstance(short_task.result(timeout=WAIT), ToolResult)
        assert isinstance(long_task.result(timeout=WAIT), ToolResult)
        wait_for(lambda: len(panel.rows) == 2, WAIT, "two rows")
        wait_for(lambda: all("completed" in r.info.value for r in panel.rows), WAIT, "both completed")
        columns = {_columns(row.info.value) for row in panel.rows}
        assert len(columns) == 1  # one grid for every row
        assert all("fr" not in part for part in next(iter(columns)).split()[:4])  # fixed widths first
        widths = {find(row, "mcpnb-task-buttons")[0].layout.width for row in panel.rows}
        assert len(widths) == 1  # the buttons' column is as wide in each row
        assert None not in widths
        for row in panel.rows:
            assert row.info.value.count('class="mcpnb-task-') >= 4  # tool, id, state, elapsed cells

        row = panel.row(short_task.task_id)
        row.result_button.value = True
        hint = markup(find(row, "mcpnb-hint")[0])
        code = f"demo.get_task({json.dumps(short_task.task_id)}).result()"
        assert f"<code>{code}.to_dataframe()</code>" in hint.replace("&quot;", '"').replace("&#34;", '"')
        assert "<code>result." not in hint
        assert eval(code, user_ns).structured_content == {"result": 3.0}  # runs as written
    finally:
        panel.close()


# --- 7. the dashboard's resources ---------------------------------------------------------------------------


def _text_of(widget: Any) -> str:
    if isinstance(widget, W.Select | W.SelectMultiple):  # every option is on screen
        return " ".join(str(label) for label in widget._options_labels)
    if isinstance(widget, W.Dropdown):  # only the chosen one is
        return str(widget.label or "")
    return str(getattr(widget, "value", "")) if isinstance(widget, W.HTML | W.Label) else ""


def test_the_resources_tab_lists_each_resource_once(session: Session) -> None:
    board = session.dashboard()
    try:
        tab = board.resources
        uris = [r.uri for r in session.model.resources]
        assert len(uris) >= 2
        listing = [w for w in walk(tab) if all(uri in _text_of(w) for uri in uris)]
        assert len(listing) == 1, [type(w).__name__ for w in listing]
        assert "mcpnb-resource-table" in listing[0]._dom_classes
        tab.select(uris[1])  # still one click to choose one
        assert tab.read(tab.resource_list.value) is not None
        assert tab.shown_uri == uris[1]
    finally:
        board.close()


# --- 8. durations -------------------------------------------------------------------------------------------


def test_durations_read_short(ex: Explorer) -> None:
    call(ex, "add", {"a": 1, "b": 2})
    (row,) = _rows(ex, 1)
    took = row.text.rsplit("  ", 1)[-1]
    assert DURATION.match(took), row.text
    assert took == short_duration(ex.calls()[-1]["duration"])
    assert DURATION.match(ex.status.value.removeprefix("done in ")), ex.status.value
    assert duration(0.0074) == "7 ms"
    assert duration(1.23) == "1.2 s"
    assert duration(None) == "?"
