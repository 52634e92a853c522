"""The tasks panel: every task a session started or attached to, live (CSS class ``mcpnb-tasks``).

It shows ``session.model.tasks``, newest first, one row (``mcpnb-task``, plus
``mcpnb-task-<status>``) per task: the tool, the task id (cut short on screen; the whole id is in
the tooltip and selected by one click, for copying), a status badge, the server's status message
and the elapsed time. A running task has a Cancel button (``mcpnb-task-cancel``); a completed one
a Result button (``mcpnb-task-result``) that opens the result view; a failed or cancelled one shows
why (``mcpnb-task-error``).

The rows line up (issue #29): each line is a CSS grid with the same fixed columns (tool, id,
status, elapsed time, then the message taking the rest), and the buttons sit in a column of fixed
width, so a long tool name or a missing Cancel button never shifts the next column. A completed
task's result view says how to get the result in a new cell, with the user's variable for the
session: ``demo.get_task("<id>").result()``.

Why the model and not the handles: the model is the one bridge between the engine thread, where
the client's poller keeps each task current, and the UI; the panel follows it without re-running
the cell. Rows are kept per task id and updated in place, so a button is never replaced under a
click. Cancel runs on the engine (``session.spawn``), like the explorer's calls, so the
kernel stays free while the server answers. Every string from a server is escaped.

A task's question that comes while no call of the session runs (a task started in an earlier
cell, now ``input_required``) shows in the panel's dialog area (``mcpnb-dialog-area``), as well
as under the running cell: the panel watches the session's dialogs (``DialogPlace.watch``).
"""

from __future__ import annotations

import concurrent.futures
import json
import logging
import threading
import time
from typing import Any

import anyio

from ..client._results import ToolResult
from ..display._durations import short_duration
from ..display._html import escape, short, state_badge
from . import _ui as W
from ._buttons import set_enabled
from ._dialogs import DialogArea
from ._fallback import Fallback, plural
from ._lean import close_tree
from ._names import session_variable
from ._result_view import html_widget as _html
from ._result_view import result_widget

__all__ = ["TaskRow", "TasksWidget", "tasks_widget"]

logger = logging.getLogger("mcp_notebook.widgets")

_COLOURS = {
    "working": "#0969da",
    "input_required": "#b08800",
    "completed": "#1b873f",
    "failed": "#b00020",
    "cancelled": "#6a737d",
}
_RUNNING = ("working", "input_required")
_TICK = 1.0  # seconds between updates of a running task's elapsed time
_ERROR_STYLE = "border:1px solid #b00020;background:#fdecea;color:#b00020;padding:4px 8px;border-radius:3px"
# One grid for every row: tool, id, status, elapsed, then the message (the columns line up).
_COLUMNS = "12em 8em 9em 5.5em minmax(0,1fr)"
_LINE_STYLE = f"display:grid;grid-template-columns:{_COLUMNS};gap:0.6em;align-items:center"
_CELL = "overflow:hidden;text-overflow:ellipsis;white-space:nowrap"
_BUTTONS_WIDTH = "12em"  # the buttons' column (Cancel, or Result / Hide result)
_CANCELLED_STYLE = "border:1px solid #6a737d;background:#f6f8fa;color:#444;padding:4px 8px;border-radius:3px"


def duration(seconds: Any) -> str:
    """``7 ms``, ``12.3 s``, ``2 min 05 s``, ``1 h 02 min`` (every picture's short form); ``?``
    when unknown."""
    return short_duration(seconds) or "?"


def _status_css(status: str) -> str:
    return f"mcpnb-task-{status if status in _COLOURS else 'other'}"


def _elapsed(row: dict[str, Any], now: float) -> Any:
    started, ended = row.get("started"), row.get("ended")
    if not isinstance(started, int | float):
        return row.get("elapsed")
    if isinstance(ended, int | float):
        return ended - started
    if row.get("status") in _RUNNING and not row.get("done"):
        return now - started
    return row.get("elapsed")


def _box(style: str, title: str, text: str, *classes: str) -> W.HTML:
    body = f'<pre style="white-space:pre-wrap;margin:0.2em 0;color:inherit">{escape(short(text, 5000))}</pre>'
    return _html(f'<div style="{style}"><b>{escape(title)}</b>{body if text else ""}</div>', *classes)


class TaskRow(W.VBox):
    """One task's row; :meth:`update` takes the model's row dict (on any thread)."""

    def __init__(self, panel: TasksWidget, row: dict[str, Any]) -> None:
        self.panel = panel
        self.task_id = str(row.get("task_id") or "")
        self.row: dict[str, Any] = {}
        self.entry: Any = None  # the model's dict this row last showed
        self.info = _html("", "mcpnb-task-info", layout=W.Layout(flex="1 1 auto", min_width="0"))
        self.cancel_button = W.Button(
            description="Cancel", icon="stop", button_style="warning", tooltip="ask the server to stop it"
        )
        self.cancel_button.add_class("mcpnb-task-cancel")
        self.cancel_button.on_click(lambda _b: self.panel.cancel(self.task_id))
        self.result_button = W.ToggleButton(
            description="Result", icon="eye", tooltip="show the result", layout=W.Layout(display="none")
        )
        self.result_button.add_class("mcpnb-task-result")
        self.result_button.observe(lambda change: self._show_result(bool(change["new"])), names="value")
        self.note = _html("", "mcpnb-task-note")
        self.detail = W.VBox(layout=W.Layout(width="100%"))
        self.detail.add_class("mcpnb-task-detail")
        self.result_box = W.VBox(layout=W.Layout(width="100%"))
        self.result_box.add_class("mcpnb-task-result-view")
        self._cancelling = False
        self._status_class = ""
        self._shown_result: Any = None
        self._outcome_key: Any = None
        buttons = W.HBox(
            [self.cancel_button, self.result_button],
            layout=W.Layout(width=_BUTTONS_WIDTH, min_width=_BUTTONS_WIDTH, justify_content="flex-end"),
        )
        buttons.add_class("mcpnb-task-buttons")
        line = W.HBox([self.info, buttons], layout=W.Layout(align_items="center", width="100%"))
        super().__init__(
            [line, self.note, self.detail, self.result_box],
            layout=W.Layout(width="100%", border_bottom="1px solid #eee", padding="2px 0"),
        )
        self.add_class("mcpnb-task")
        self.update(row)

    @property
    def status(self) -> str:
        return str(self.row.get("status") or "")

    @property
    def running(self) -> bool:
        return self.status in _RUNNING and not self.row.get("done")

    def update(self, row: dict[str, Any], now: float | None = None) -> None:
        self.entry = row
        self.row = dict(row)
        status = self.status
        css = _status_css(status)
        if css != self._status_class:
            if self._status_class:
                self.remove_class(self._status_class)
            self.add_class(css)
            self._status_class = css
        running = self.running
        self.cancel_button.layout.display = "" if running else "none"
        why = "cancelling" if running else "the task has ended"
        set_enabled(self.cancel_button, running and not self._cancelling, style="warning", why=why)
        result = row.get("result")
        self.result_button.layout.display = "" if isinstance(result, ToolResult) else "none"
        if self.result_button.value and result is not self._shown_result:
            self._show_result(True)
        self._show_outcome()
        # The line last: once it shows a status, the rest of the row matches it.
        self.tick(now if now is not None else time.time())

    def tick(self, now: float) -> None:
        """Redraw the line (the elapsed time of a running task moves on)."""
        row = self.row
        status = self.status
        colour = _COLOURS.get(status, "#6a737d")
        result = row.get("result")
        tool_error = isinstance(result, ToolResult) and result.is_error
        if tool_error:
            colour = _COLOURS["failed"]
        tool = row.get("tool") or "?"
        task_id = self.task_id
        message = row.get("status_message")
        # One cell per column, each cut by CSS (the tooltip holds the whole text): the rows line up.
        status_cell = (
            f'<span class="mcpnb-task-status mcpnb-badge" style="background:{colour};color:white;'
            f'border-radius:0.8em;padding:0.1em 0.7em;font-weight:bold;white-space:nowrap">'
            f"{escape(short(status, 40))}</span>"
        )
        if tool_error:
            status_cell += ' <span class="mcpnb-task-tool-error" style="color:#b00020">tool error</span>'
        parts = [
            f'<b class="mcpnb-task-tool" title="{escape(short(tool, 1000))}" style="{_CELL}">'
            f"{escape(short(tool, 120))}</b>",
            # The whole id, cut by CSS: one click selects all of it, the tooltip shows it.
            f'<code class="mcpnb-task-id" title="{escape(short(task_id, 1000))}" style="user-select:all;'
            f'{_CELL}">{escape(short(task_id, 1000))}</code>',
            f'<span class="mcpnb-task-state" style="{_CELL}">{status_cell}</span>',
            f'<span class="mcpnb-task-elapsed" style="color:#6a737d;text-align:right;{_CELL}">'
            f"{escape(duration(_elapsed(row, now)))}</span>",
            f'<span class="mcpnb-task-message" title="{escape(short(message or "", 1000))}" style="{_CELL}">'
            f"{escape(short(message or '', 500))}</span>",
        ]
        value = f'<div class="mcpnb-task-grid" style="{_LINE_STYLE}">{"".join(parts)}</div>'
        if self.info.value != value:
            self.info.value = value

    def _show_outcome(self) -> None:
        row = self.row
        status, error = self.status, row.get("error")
        key = (status, error, row.get("status_message") if status == "cancelled" else None)
        if key == self._outcome_key:
            return
        self._outcome_key = key
        if status == "cancelled":
            text = error or row.get("status_message") or ""
            children = [_box(_CANCELLED_STYLE, "Cancelled", text, "mcpnb-task-error", "mcpnb-cancelled")]
        elif error:
            title = {"failed": "Failed", "input_required": "Needs input"}.get(status, "No result")
            children = [_box(_ERROR_STYLE, title, str(error), "mcpnb-task-error")]
        elif status == "failed":
            text = str(row.get("status_message") or "")
            children = [_box(_ERROR_STYLE, "Failed", text, "mcpnb-task-error")]
        else:
            children = []
        self.detail.children = children

    def _show_result(self, show: bool) -> None:
        result = self.row.get("result")
        if show and isinstance(result, ToolResult):
            if result is not self._shown_result:
                self.result_box.children = [result_widget(result, code=self.code())]
                self._shown_result = result
            self.result_button.description = "Hide result"
        else:
            self.result_box.children = []
            self._shown_result = None
            self.result_button.description = "Result"

    def code(self) -> str:
        """How a new cell gets this task's result: ``demo.get_task("<id>").result()``."""
        return f"{session_variable(self.panel.session)}.get_task({json.dumps(self.task_id)}).result()"

    def cancelling(self) -> None:
        self._cancelling = True
        set_enabled(self.cancel_button, False, style="warning", why="cancelling")
        self.cancel_button.description = "Cancelling…"
        self.note.value = ""

    def cancel_finished(self, future: concurrent.futures.Future[Any]) -> None:
        with self.panel._lock:
            self._finish_cancel(future)

    def _finish_cancel(self, future: concurrent.futures.Future[Any]) -> None:
        self._cancelling = False
        self.cancel_button.description = "Cancel"
        set_enabled(self.cancel_button, self.running, style="warning", why="the task has ended")
        if future.cancelled():
            return
        error = future.exception()
        if error is not None:
            self.note.value = (
                f'<span style="color:#b00020">could not cancel: {escape(short(str(error), 1000))}</span>'
            )
        elif future.result() is False and self.running:
            self.note.value = '<span style="color:#b08800">the server has not stopped the task yet</span>'

    def close(self) -> None:
        close_tree(*self.children)
        super().close()


class TasksWidget(Fallback, W.VBox):
    """The tasks panel; see the module's docstring. ``close()`` stops following the session.

    Programmatic handles (what the buttons do): :meth:`cancel`, :meth:`row` (the row of a task id);
    ``rows`` are the rows shown, newest first.
    """

    def __init__(self, session: Any, *, max_rows: int = 100) -> None:
        self.session = session
        self.max_rows = max_rows
        self.header = _html("", "mcpnb-tasks-header")
        self.list = W.VBox(layout=W.Layout(width="100%"))
        self.list.add_class("mcpnb-task-list")
        self.more = _html("", "mcpnb-tasks-more")
        self.dialog_area = DialogArea(label="tasks panel")
        self._unwatch = self.dialog_area.place.watch(session)
        super().__init__([self.header, self.dialog_area, self.list, self.more], layout=W.Layout(width="100%"))
        self.add_class("mcpnb-tasks")
        self._rows: dict[str, TaskRow] = {}
        self._lock = threading.RLock()
        self._ticker: Any = None
        self._closed = False
        session.model.observe(self._changed, names="tasks")
        # The session's end too: the panel keeps its rows and says "closed" (issue #29).
        session.model.observe(self._changed, names="status")
        self.refresh()

    @property
    def rows(self) -> list[TaskRow]:
        return list(self.list.children)

    def row(self, task_id: str) -> TaskRow:
        """The row of ``task_id`` (KeyError if it is not shown)."""
        return self._rows[task_id]

    def _changed(self, change: Any) -> None:
        self.refresh()

    def refresh(self) -> None:
        """Redraw from ``session.model.tasks`` (the model's observer does this on every change)."""
        with self._lock:
            if self._closed:
                return
            now = time.time()
            entries = [r for r in list(self.session.model.tasks) if isinstance(r, dict) and r.get("task_id")]
            newest = entries[::-1][: self.max_rows]
            shown: list[TaskRow] = []
            for entry in newest:
                task_id = str(entry["task_id"])
                row = self._rows.get(task_id)
                if row is None:
                    row = self._rows[task_id] = TaskRow(self, entry)
                elif entry is not row.entry:
                    row.update(entry, now)
                shown.append(row)
            running = sum(1 for r in shown if r.running)
            name = escape(short(getattr(self.session, "name", ""), 200))
            count = f"{running} running, {len(entries)} in all" if entries else "none yet"
            closed = f" {state_badge('closed')}" if self._session_closed() else ""
            self.header.value = (
                f"<b>Tasks</b> · {name} · <span class='mcpnb-tasks-count'>{count}</span>{closed}"
            )
            variable = escape(session_variable(self.session))  # the user's name for it (issue #29)
            if not entries:
                self.more.value = (
                    f"<i>No tasks yet: start one with <code>{variable}.start_tool(name, arguments)</code>, "
                    "or call a tool that runs as a task.</i>"
                )
            elif len(entries) > len(shown):
                older = len(entries) - len(shown)
                self.more.value = (
                    f"<i>… {older} older task{'s' if older != 1 else ''}: "
                    f"<code>{variable}.tasks_frame()</code> lists them all.</i>"
                )
            else:
                self.more.value = ""
            # The list last: once a row is shown, the header counts it.
            if [r.task_id for r in self.list.children] != [r.task_id for r in shown]:
                self.list.children = shown
            keep = {r.task_id for r in shown}
            for task_id in [t for t in self._rows if t not in keep]:
                self._rows.pop(task_id).close()
            if running:
                self._start_ticker()

    def _session_closed(self) -> bool:
        """Whether the session has closed: the rows stay as they were last, marked closed."""
        return getattr(self.session.model, "status", "") == "closed"

    # --- what the buttons do ----------------------------------------------------------------------

    def cancel(self, task_id: str) -> concurrent.futures.Future[Any] | None:
        """What a row's Cancel button does: ask the server to stop the task, on the engine.

        Returns the future of ``task.acancel()`` (True once the task ended cancelled), or None
        when the task is unknown or already over.
        """
        task = next((t for t in self.session.tasks if t.task_id == task_id), None)
        row = self._rows.get(task_id)
        if task is None or task.done:
            return None
        if row is not None:
            row.cancelling()
        future: Any = self.session.spawn(task.acancel)
        if row is not None and hasattr(future, "add_done_callback"):
            future.add_done_callback(row.cancel_finished)
        return future  # type: ignore[no-any-return]

    # --- the elapsed time of running tasks ----------------------------------------------------------

    def _start_ticker(self) -> None:
        if self._ticker is not None or self._closed or getattr(self.session, "_closed", False):
            return
        self._ticker = self.session.spawn(self._tick)

    async def _tick(self) -> None:
        try:
            while not self._closed and not getattr(self.session, "_closed", False):
                await anyio.sleep(_TICK)
                with self._lock:
                    running = [r for r in self._rows.values() if r.running]
                    if not running:
                        return
                    now = time.time()
                    for row in running:
                        row.tick(now)
        finally:
            with self._lock:
                self._ticker = None
                if not self._closed and any(r.running for r in self._rows.values()):
                    # A task started while this ticker was stopping: keep ticking.
                    self._start_ticker()

    # --- lifetime -----------------------------------------------------------------------------------

    def summary(self) -> str:
        entries = [r for r in list(self.session.model.tasks) if isinstance(r, dict) and r.get("task_id")]
        counts: dict[str, int] = {}
        for entry in entries:
            status = str(entry.get("status") or "?")
            counts[status] = counts.get(status, 0) + 1
        detail = ": " + ", ".join(f"{n} {s}" for s, n in counts.items()) if counts else ""
        name = short(getattr(self.session, "name", ""), 80)
        if self._session_closed():
            name += ", closed"
        return f"<MCP tasks: {name}, {plural(len(entries), 'task')}{detail}>"

    def close(self) -> None:
        if getattr(self, "_unfollowed", False):
            super().close()
            return
        self._unfollowed = True
        with self._lock:
            self._closed = True
            ticker, self._ticker = self._ticker, None
        self.session.model.unobserve(self._changed, names="tasks")
        self.session.model.unobserve(self._changed, names="status")
        self._unwatch()
        self.dialog_area.close()
        if ticker is not None:
            ticker.cancel()
        for row in self._rows.values():
            row.close()
        for widget in (self.header, self.list, self.more):
            widget.close()
        super().close()


def tasks_widget(session: Any, **options: Any) -> TasksWidget:
    """The live tasks panel for ``session`` (CSS class ``mcpnb-tasks``)."""
    return TasksWidget(session, **options)
