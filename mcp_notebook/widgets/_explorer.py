"""The tool explorer: pick a tool, fill in its generated form, call it, see the result, repeat.

Why it is built on ``session.model`` alone: the model is the one bridge between the engine thread
and the UI, so the explorer follows the server (a tool added at run time appears, the history grows)
without re-running the cell and without touching the connection. Calls run on the engine through
``session.spawn(...)``: the kernel stays free while a tool runs, and Cancel cancels the
returned future, which cancels the request on the server. Arguments are checked against the tool's
inputSchema before anything is sent.

A tool that runs as a task (its ``execution.taskSupport`` is "required", the server refused it
once as anything else, or "run as task" is ticked for an optional one) is started with the
session's ``start_tool``: its status messages show as progress, its result when it ends, and
Cancel asks the server to stop the task (``tasks/cancel``). The task also shows in the tasks
panel. A plain call that the server turns into a task on its own is followed the same way.

What it lists comes from a *source*: by default one session's tools under their own names
(:class:`._tool_source.SessionTools`); a group's explorer lists every server's tools as ``SERVER.TOOL``, each
entry a :class:`ToolEntry` (the name shown, the session that runs it, the tool), and a call runs
on the entry's own session.

The call itself (on the engine), its task and Cancel are :mod:`._explorer_runs`' part. A dialog
the server asks for during a call (elicitation, sampling, URL consent) shows in the explorer's
dialog area (``dialog_area``, under the Call button) and leaves it once answered.

Model observers fire on the engine thread; they only set widget traits, which ipywidgets syncs from
any thread in ipykernel.
"""

from __future__ import annotations

import concurrent.futures
import logging
import sys
import threading
import time
from typing import Any

from ..client._arguments import unknown_tool
from ..client._results import Tool, ToolResult
from ..display._calls import by_agents
from ..display._durations import short_duration
from ..display._html import escape, markdown_html, short
from ..notebook._session_tasks import SessionTask
from ..protocol._errors import McpError
from ..protocol._printable import printable
from . import _ui as W
from ._buttons import set_enabled
from ._dialogs import DialogArea
from ._explorer_history import HistoryRows, call_line
from ._explorer_results import LastResults
from ._explorer_runs import ToolRuns
from ._fallback import Fallback, plural, static_html
from ._form import SchemaForm
from ._lean import close_tree, lean
from ._result_view import html_widget as _html
from ._result_view import result_widget
from ._shown import Label
from ._tool_source import SessionTools, ToolEntry, ToolSource, badges_html, python_code
from ._window import Window

__all__ = ["Explorer", "explorer"]

logger = logging.getLogger("mcp_notebook.widgets")

_HISTORY_ROWS = 20
_CLOSED_BADGE = (
    '<span class="mcpnb-badge mcpnb-closed" style="background:#6a737d;color:white;border-radius:0.8em;'
    'padding:0.1em 0.7em;font-weight:bold;white-space:nowrap">closed</span>'
)


def _is_app(outcome: Any) -> bool:
    """Whether a call's outcome is an AppView (never importing the apps side when none was made)."""
    module = sys.modules.get(f"{__package__}._app")
    return module is not None and isinstance(outcome, module.AppView)


class Explorer(Fallback, W.VBox):
    """The explorer of one session, or of any :class:`ToolSource`: a widget (CSS class
    ``mcpnb-explorer``), shown by itself or inside any ipywidgets layout.

    Programmatic handles (what the buttons do): :meth:`select`, :meth:`call`, :meth:`cancel`,
    :meth:`validate`, :meth:`rerun`, :meth:`copy_python`, :meth:`history_frame`; state: ``form``,
    ``result`` (the last ToolResult or exception), ``busy``, ``search``, ``tool_names`` (the tools
    shown now: a window of 50, which ``tools_window`` pages and searches), ``as_task``
    (the "run as task" checkbox), ``task`` (the SessionTask of the last call that ran as a task).
    """

    def __init__(self, session: Any, *, include_app_only: bool = False) -> None:
        source = (
            session
            if isinstance(session, ToolSource)
            else SessionTools(session, include_app_only=include_app_only)
        )
        self.source = source
        #: The session whose tools are listed (None when the source has several).
        self.session = source.session
        self.form: SchemaForm | None = None
        #: The selected tool, and its entry (its name as listed and the session that runs it).
        self.selected: Tool | None = None
        self.selected_entry: ToolEntry | None = None
        self.result: ToolResult | BaseException | None = None
        #: The AppView of the last call, when the tool is an MCP App (its View is the result).
        self.app: Any = None
        self._future: concurrent.futures.Future[Any] | None = None
        self._started = 0.0
        self._call_name = ""  # the entry name of the running (or last) call
        self._lock = threading.RLock()  # the rows are drawn from the engine thread and the kernel's
        self._rows: list[tuple[W.HBox, W.Button, W.HTML]] = []  # at most the window's size, reused
        self._row_names: list[str] = []  # the entry name each row shows
        self._history = HistoryRows(
            source.recent_calls, self.rerun, self.copy_python, count=source.call_count, rows=_HISTORY_ROWS
        )
        super().__init__(self._build())
        # each tool's last result, shown again when it is reselected (issue #29)
        self._last = LastResults(self.result_box, self.status, self.task_line, self.progress)
        self._runs = ToolRuns(
            status=self.status,
            task_line=self.task_line,
            on_progress=self._on_progress,
            place=self.dialog_area.place,
        )
        self._unhook_dialogs = self.dialog_area.place.on_change(self._on_dialogs)
        self.add_class("mcpnb-explorer")
        self._unfollow = source.follow(self._on_tools, self._on_history, self._on_in_flight)
        self._refresh_tools()
        self._refresh_history()
        self._on_in_flight(None)
        self._idle_buttons()

    @property
    def task(self) -> SessionTask | None:
        """The task of the current (or last) call, when it runs as one."""
        return self._runs.task

    # --- layout -------------------------------------------------------------------------------

    def _build(self) -> list[W.Widget]:
        # lean(): shared layouts/styles (widgets/_lean.py); progress, task box, code box change theirs
        # a window of tools, not all of them: rows are reused as one pages or searches (issue #35)
        self.tools_window: Window[ToolEntry] = Window(
            noun="tool", text_of=_searched_text, on_window=self._draw_rows, css="mcpnb-tool-window"
        )
        self.search = self.tools_window.search
        self.search.add_class("mcpnb-tool-search")
        self.tool_list = lean(W.VBox, {"width": "100%", "max_height": "28em", "overflow": "auto"})
        self.tool_list.add_class("mcpnb-tool-list")
        self.in_flight = lean(Label)
        self.in_flight.add_class("mcpnb-in-flight")
        left = lean(
            W.VBox,
            {"width": "32%", "min_width": "14em"},
            children=[self.search, self.tools_window.bar, self.tool_list, self.in_flight],
        )
        left.add_class("mcpnb-tools")

        self.title = _html("<i>Select a tool.</i>", "mcpnb-tool-title")
        self.description = _html("", "mcpnb-tool-description")
        self.form_box = lean(W.VBox, {"width": "100%"})
        self.form_box.add_class("mcpnb-form-box")
        self.validation = _html("", "mcpnb-validation")
        self.validate_button = self._button("Validate", "check", "mcpnb-validate", self.validate)
        self.call_button = self._button("Call", "play", "mcpnb-call", self.call, style="primary")
        self.cancel_button = self._button("Cancel", "stop", "mcpnb-cancel", self.cancel, style="warning")
        self.progress = W.FloatProgress(
            value=0.0, min=0.0, max=1.0, layout=W.Layout(width="60%", visibility="hidden")
        )
        self.progress.add_class("mcpnb-progress")
        self.status = lean(Label)
        self.status.add_class("mcpnb-call-status")
        self.as_task = W.Checkbox(
            value=False,
            description="run as task",
            indent=False,
            layout=W.Layout(width="auto", display="none", margin="0 0 0 8px"),
        )
        self.as_task.add_class("mcpnb-as-task")
        self.task_line = lean(Label)
        self.task_line.add_class("mcpnb-call-task")
        buttons = lean(
            W.HBox,
            {"align_items": "center"},
            children=[self.validate_button, self.call_button, self.cancel_button, self.as_task],
        )
        self.result_box = lean(W.VBox, {"width": "100%"})
        self.result_box.add_class("mcpnb-result-area")
        self.dialog_area = DialogArea(label="explorer")
        right = lean(
            W.VBox,
            {"flex": "1", "padding": "0 0 0 12px"},
            children=[
                self.title,
                self.description,
                self.form_box,
                self.validation,
                buttons,
                lean(W.HBox, children=[self.progress, self.status]),
                self.task_line,
                self.dialog_area,
                self.result_box,
            ],
        )
        right.add_class("mcpnb-tool-panel")

        self.history_list = self._history.box
        self.code = W.Textarea(rows=4, layout=W.Layout(width="100%", display="none"))
        self.code.add_class("mcpnb-code")
        self.frame_output = lean(W.Output)
        self.frame_output.add_class("mcpnb-history-output")
        frame_button = self._button("to DataFrame", "table", "mcpnb-history-frame", self.show_history_frame)
        self.history = lean(
            W.VBox,
            {"border_top": "1px solid #ddd", "margin": "8px 0 0 0", "padding": "4px 0 0 0"},
            children=[_html("<b>History</b>"), self.history_list, self.code, frame_button, self.frame_output],
        )
        self.history.add_class("mcpnb-history")

        self.header = header = _html(self._head(), "mcpnb-explorer-header")
        return [header, lean(W.HBox, {"width": "100%"}, children=[left, right]), self.history]

    def _closed(self) -> bool:
        session = self.source.session
        return session is not None and getattr(session.model, "status", "") == "closed"

    def _head(self) -> str:
        """``MCP tools · name``, with a "closed" badge once the session has closed: the explorer keeps
        its last picture (a closed widget would leave the output blank)."""
        badge = f" {_CLOSED_BADGE}" if self._closed() else ""
        return f"<b>MCP tools</b> · {escape(self.source.title)}{badge}"

    def summary(self) -> str:
        title = f"{short(self.source.title, 80)}, " if self.source.title else ""
        if self._closed():
            title += "closed, "
        tools = plural(len(self.source.entries()), "tool")
        made = self.calls()
        calls = plural(len(made), "call") + by_agents(made)
        line = f"<MCP explorer: {title}{tools}, {self.source.in_flight()} in flight, {calls}"
        if self.selected_entry is not None:
            line += f"; selected {short(printable(self.selected_entry.name), 80)}"
            if self.status.value:
                line += f" ({short(self.status.value, 80)})"
        return line + ">"

    def snapshot_html(self) -> str:
        """The header, the tools as a table, the selected tool with its last result, the history."""
        tools = self.tools_window
        head = f"{self._head()} · {plural(len(tools.items), 'tool')}"
        rows = "".join(
            f'<tr><td style="text-align:left"><code>{_shown(e.name)}</code></td>'
            f'<td style="text-align:left">{_shown(short(e.tool.title or "", 80))}</td>'
            f'<td style="text-align:left">{_shown(short(_first_line(e.tool.description), 200))}</td>'
            f'<td style="text-align:left">{badges_html(e.tool)}</td></tr>'
            for e in tools.window
        )
        table = (
            '<table class="mcpnb-static-tools"><thead><tr><th>tool</th><th>title</th>'
            f"<th>description</th><th>hints</th></tr></thead><tbody>{rows}</tbody></table>"
        )
        parts = [f"<div>{head}</div>", table]
        if len(tools.matches) > len(tools.window):  # the window, as the live panel shows it
            parts.append(f"<div><small>{escape(tools.label.value)}</small></div>")
        if self.selected is not None:
            parts.append(f"<div>{self.title.value}</div>")
            if self.status.value:
                parts.append(f"<div>{escape(self.status.value)}</div>")
            parts.append(static_html(self.result_box))
        calls = self.calls()[-5:][::-1]
        if calls:
            lines = "".join(f"<li>{escape(call_line(entry))}</li>" for entry in calls)
            parts.append(f"<div><b>History</b> (the last {len(calls)})<ul>{lines}</ul></div>")
        return "".join(parts)

    @property
    def widget(self) -> Explorer:
        """The explorer itself (it is the widget; kept for code written when it held one)."""
        return self

    @staticmethod
    def _button(label: str, icon: str, css: str, action: Any, style: str = "") -> W.Button:
        button = lean(W.Button, description=label, icon=icon, button_style=style, tooltip=label)
        button.add_class(css)
        button.on_click(lambda _: action())
        return button

    # --- the tool list ------------------------------------------------------------------------

    @property
    def tool_names(self) -> list[str]:
        """The names listed right now (the window the search and the page choose)."""
        with self._lock:
            return list(self._row_names[: len(self.tool_list.children)])

    def _row(self, index: int) -> tuple[W.HBox, W.Button, W.HTML]:
        """The ``index``-th row of the list, made once and reused for whatever tool it shows."""
        if index < len(self._rows):
            return self._rows[index]
        # A row is a button and one HTML, with shared layouts/styles (15 rows stored 180 models before)
        button = lean(W.Button, {"max_width": "100%"})
        button.add_class("mcpnb-tool")
        button.on_click(lambda _, n=index: self._clicked(n))
        # The title beside the badges, in one HTML (the button holds the tooltip)
        badges = _html("", "mcpnb-badges")
        # A grid row of two columns (widgets/panel.css, ``.mcpnb-tool-entry``): every name in the
        # first, every title and its badges in the second, each on one line (issue #38: a wrapping
        # flex row put them wherever they fitted). flex "0 0 auto": in the scrolling list a row
        # keeps its height (rows would shrink into each other once the tools outgrow max_height).
        row = lean(W.HBox, {"flex": "0 0 auto"}, children=[button, badges])
        row.add_class("mcpnb-tool-entry")
        self._rows.append((row, button, badges))
        self._row_names.append("")
        return self._rows[index]

    def _clicked(self, index: int) -> None:
        with self._lock:
            name = self._row_names[index] if index < len(self.tool_list.children) else None
        if name is not None:
            self.select(name)

    def _draw_rows(self, window: list[ToolEntry]) -> None:
        """Show ``window`` in the first rows (each a tool's name, tooltip, title and badges)."""
        with self._lock:
            for index, entry in enumerate(window):
                _, button, badges = self._row(index)
                tool = entry.tool
                self._row_names[index] = entry.name
                _set(button, "description", printable(entry.name))
                _set(
                    button, "tooltip", printable(short(tool.description or entry.name, 1000), multiline=True)
                )
                title = tool.display_name if tool.display_name != tool.name else ""
                label = f'<span class="mcpnb-tool-title">{escape(short(title, 80))}</span> ' if title else ""
                _set(badges, "value", label + badges_html(tool))
            shown = tuple(row for row, _, _ in self._rows[: len(window)])
            if self.tool_list.children != shown:
                self.tool_list.children = shown
            chosen = self.selected_entry
        self._mark(chosen.name if chosen is not None else None)

    def _refresh_tools(self) -> None:
        entries = self.source.entries()
        self.tools_window.set_items(entries)
        chosen = self.selected_entry
        if chosen is not None:
            current = next((e for e in entries if e.name == chosen.name), None)
            if current is None:
                self._deselect(f"The tool {chosen.name!r} is no longer offered by the server.")
            elif current.tool != chosen.tool or current.session is not chosen.session:
                self.select(current.name, keep_values=True)
            else:
                self._mark(current.name)

    def _on_tools(self, change: Any) -> None:
        self._refresh_tools()

    def _on_in_flight(self, change: Any) -> None:
        head = self._head()
        if getattr(self, "header", None) is not None and self.header.value != head:
            self.header.value = head
        count = self.source.in_flight()
        self.in_flight.value = f"{count} request{'s' if count != 1 else ''} in flight" if count else ""

    def _mark(self, name: str | None) -> None:
        with self._lock:
            rows = list(zip(self._rows[: len(self.tool_list.children)], self._row_names, strict=False))
        for (_, button, _), shown in rows:
            if shown == name:
                _set(button, "button_style", "info")
                button.add_class("mcpnb-tool-selected")
            else:
                _set(button, "button_style", "")
                button.remove_class("mcpnb-tool-selected")

    # --- the selected tool --------------------------------------------------------------------

    def select(self, name: str, *, keep_values: bool = False) -> Tool:
        """Show ``name``'s description and form (``keep_values``: carry over what was typed)."""
        entries = self.source.entries()
        entry = next((e for e in entries if e.name == name), None)
        if entry is None:
            raise KeyError(unknown_tool(name, [e.name for e in entries]))
        tool = entry.tool
        previous = self.form.value if keep_values and self.form is not None else None
        self.selected, self.selected_entry = tool, entry
        replaced, self.form = self.form, SchemaForm(tool.input_schema, values=previous)
        self.form.on_change(lambda value: self._clear_validation())
        self.form_box.children = [self.form.widget]
        if replaced is not None:
            replaced.close()  # off the screen now: its models would stay live (DESIGN.md)
        title = f"<b>{escape(tool.display_name)}</b> <code>{escape(entry.name)}</code> {badges_html(tool)}"
        self.title.value = title
        text = markdown_html(printable(tool.description or "", multiline=True))  # before Markdown eats NUL
        self.description.value = f'<div class="mcpnb-markdown" style="font-size:0.9em">{text}</div>'
        self.validation.value = ""
        self._show_task_choice(tool, keep=keep_values)
        if not keep_values:
            self._last.show(entry.name, busy=self.busy)
        self._idle_buttons()
        # its page of the list, marked (a search the user typed stays)
        self.tools_window.reveal(lambda e: e.name == entry.name, clear_search=False)
        self._mark(entry.name)
        return tool

    def task_mode(self, tool: Tool, session: Any = None) -> str | None:
        """How ``tool`` may run here: "required" (only as a task), "optional" (either), or None
        (never: the server offers no tasks, or the tool forbids it). ``session``: the one that
        runs it (by default the selected entry's)."""
        if session is None:
            chosen = self.selected_entry
            session = chosen.session if chosen is not None and chosen.tool is tool else self.session
        client = getattr(session, "client", None)
        mode = client.task_mode(tool) if client is not None else None
        return mode

    def _show_task_choice(self, tool: Tool, *, keep: bool) -> None:
        mode = self.task_mode(tool)
        box = self.as_task
        box.layout.display = "none" if mode is None else ""
        if mode == "required":
            box.value, box.disabled = True, True
            box.tooltip = "this tool runs only as a task"
        elif mode == "optional":
            box.value = box.value if keep else False
            box.disabled = False
            box.tooltip = "start it as a task: it shows in the tasks panel, and Cancel stops it on the server"
        else:
            box.value, box.disabled = False, True
            box.tooltip = None

    def _deselect(self, message: str) -> None:
        self.selected, self.selected_entry = None, None
        self.form = None
        self.form_box.children = []
        self.title.value = f"<i>{escape(message)}</i>"
        self.description.value = ""
        self.validation.value = ""
        self.as_task.layout.display = "none"
        self._idle_buttons()
        self._mark(None)

    def _idle_buttons(self) -> None:
        # disabled reads disabled: plain, mcpnb-disabled, and why in the tooltip (issue #29)
        busy, none = self.busy, self.selected is None
        why = "select a tool first" if none else "a call is running"
        set_enabled(self.call_button, not busy and not none, style="primary", tip="Call", why=why)
        set_enabled(self.validate_button, not none, tip="Validate", why="select a tool first")
        set_enabled(self.cancel_button, busy, style="warning", tip="Cancel", why="no call is running")

    def _clear_validation(self) -> None:
        if self.validation.value:
            self.validation.value = ""

    def validate(self) -> list[str]:
        """Check the form against the schema and show the verdict; returns the problems."""
        if self.form is None:
            return ["no tool is selected"]
        problems = self.form.errors()
        self._show_problems(problems, sent=None)
        return problems

    def _show_problems(self, problems: list[str], *, sent: bool | None) -> None:
        if not problems:
            self.validation.value = (
                '<span style="color:#1b873f">✓ the arguments match the tool\'s schema</span>'
            )
            self.validation.remove_class("mcpnb-invalid")
            return
        items = "".join(f"<li>{escape(p)}</li>" for p in problems)
        head = "Not sent: the arguments do not match the tool's schema" if sent is False else "Problems"
        self.validation.value = (
            f'<div style="color:#b00020"><b>{head}</b><ul style="margin:0">{items}</ul></div>'
        )
        self.validation.add_class("mcpnb-invalid")

    # --- calling ------------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self._future is not None and not self._future.done()

    def call(self) -> concurrent.futures.Future[Any] | None:
        """What the Call button does: validate, then call on the engine. Returns the future (or None)."""
        entry = self.selected_entry
        if entry is None or self.form is None or self.busy:
            return None
        problems = self.form.errors()
        if problems:
            self._show_problems(problems, sent=False)
            self.status.value = "not sent"
            return None
        session, name, arguments = entry.session, entry.tool.name, self.form.value
        as_task = bool(self.as_task.value) and self.as_task.layout.display != "none"
        self.validation.value = ""
        self.result = None
        self.result_box.children = []
        self.progress.value, self.progress.max = 0.0, 1.0
        self.progress.bar_style = "info"
        self.progress.layout.visibility = "visible"
        shown = self._call_name = entry.name
        self.status.value = f"starting {shown} as a task…" if as_task else f"calling {shown}…"
        self._runs.reset(session, as_task=as_task)
        self._started = time.monotonic()
        self._close_app()
        app = bool(getattr(entry.tool, "ui_resource_uri", None))  # an MCP App: its View is the result
        if app:
            self.status.value = f"opening the app {shown}…"
        future = self._runs.start(session, name, arguments, app=app)
        self._future = future
        self._idle_buttons()
        # The engine may have opened the call's question before this thread got here (a busy
        # machine), when the explorer did not look busy yet: the status line says so now.
        self._on_dialogs(self.dialog_area.place)
        future.add_done_callback(self._finished)
        return future

    def _close_app(self) -> None:
        """The previous call's app, if any, is torn down before the next result replaces it."""
        app, self.app = self.app, None
        if app is not None:
            self._last.forget(app)
            app.close()

    def _on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        # On the engine thread: only trait values are set.
        if total is not None and total > 0:
            self.progress.max = float(total)
            self.progress.value = min(float(progress), float(total))
        else:
            self.progress.max = max(float(progress) * 2, 1.0)  # no total: show that work goes on
            self.progress.value = float(progress)
        detail = f" · {short(message, 80)}" if message else ""
        self.status.value = f"{progress:g}{f'/{total:g}' if total else ''}{detail}"

    def _on_dialogs(self, place: Any) -> None:
        # On the engine thread: the status line says where the question is while one is open.
        entry = self.selected_entry
        if place.open_dialogs and self.busy:
            self.status.value = "a question for you: answer below"
        elif self.busy and entry is not None:
            self.status.value = f"calling {entry.name}…"

    def cancel(self) -> None:
        """What the Cancel button does: cancel the running call (the server is told to stop).

        A call that runs as a task is cancelled as a task (``tasks/cancel``); the result area then
        shows it cancelled. Clicked again while the server has not stopped it, the explorer stops
        waiting (the task itself then runs on, or ends, as the server decides).
        """
        future = self._future
        if future is None or future.done():
            return
        if self._runs.cancel_task():
            return
        future.cancel()

    def _finished(self, future: concurrent.futures.Future[Any]) -> None:
        elapsed = time.monotonic() - self._started
        outcome: ToolResult | BaseException
        if future.cancelled():
            outcome = McpError("cancelled", "the call was cancelled; the server was asked to stop")
        else:
            error = future.exception()
            outcome = error if error is not None else future.result()
        if isinstance(outcome, McpError) and outcome.kind == "invalid":
            self._show_problems([outcome.message], sent=False)
        if _is_app(outcome):
            self._finished_app(outcome, elapsed)
            if self._future is future:
                self._future = None
            self._idle_buttons()
            return
        view = result_widget(outcome)
        self.result = outcome
        if isinstance(outcome, ToolResult):
            self.progress.value = self.progress.max
            self.progress.bar_style = "danger" if outcome.is_error else "success"
            word = "tool error" if outcome.is_error else "done"
        else:
            self.progress.bar_style = (
                "warning" if isinstance(outcome, McpError) and outcome.kind == "cancelled" else "danger"
            )
            word = "cancelled" if self.progress.bar_style == "warning" else "failed"
        self._keep(view, f"{word} in {short_duration(elapsed)}")
        self._runs.ended()
        if self._future is future:
            self._future = None
        if self.selected is not None:  # the server may have shown this tool runs only as a task
            self._show_task_choice(self.selected, keep=True)
        self._idle_buttons()

    def _finished_app(self, view: Any, elapsed: float) -> None:
        """An MCP App opened: the view is the result (its status says whether the tool failed)."""
        self.app = view
        result = view.result
        self.result = result if isinstance(result, ToolResult) else None
        self.progress.value = self.progress.max
        failed = view.status == "error"
        self.progress.bar_style = "danger" if failed else "success"
        self._keep(view, f"{'app failed' if failed else 'app opened'} in {short_duration(elapsed)}")

    def _keep(self, view: W.Widget, status: str) -> None:
        chosen = self.selected_entry
        selected = chosen.name if chosen is not None else None
        self._last.keep(self._call_name, view, status, selected=selected, app=self.app)

    def wait(self, timeout: float = 30.0) -> ToolResult | BaseException | None:
        """Block until the running call ends (for scripts and tests); returns :attr:`result`."""
        deadline = time.monotonic() + timeout
        while self.busy and time.monotonic() < deadline:
            time.sleep(0.02)
        while self._future is not None and time.monotonic() < deadline:  # the done callback is running
            time.sleep(0.01)
        return self.result

    # --- history ------------------------------------------------------------------------------

    def calls(self) -> list[dict[str, Any]]:
        """The tools/call history entries, oldest first (each ``name`` as the list shows it)."""
        return self.source.calls()

    def _on_history(self, change: Any) -> None:
        # On the engine thread, once per call: only a flag; the list redraws at most 4 times a
        # second on a timer thread (._explorer_history), ending on the newest calls.
        self._history.changed()

    def _refresh_history(self) -> None:
        self._history.redraw()

    def rerun(self, entry: dict[str, Any] | int = -1) -> concurrent.futures.Future[Any] | None:
        """Load a history entry (or its index in :meth:`calls`) into the form and call."""
        if isinstance(entry, int):
            entry = self.calls()[entry]
        arguments = entry.get("arguments")
        if not isinstance(arguments, dict):
            self.status.value = "the arguments of that call were not recorded"
            return None
        self.select(str(entry.get("name")))
        assert self.form is not None
        self.form.set_value(arguments)
        return self.call()

    def copy_python(self, entry: dict[str, Any] | int = -1) -> str:
        """Show (and return) a history entry as ``session.call_tool(...)`` code."""
        if isinstance(entry, int):
            entry = self.calls()[entry]
        variable = self.source.code_variable()
        code = python_code(str(entry.get("name")), entry.get("arguments"), variable=variable)
        self.code.value = code
        self.code.layout.display = ""
        return code

    def history_frame(self) -> Any:
        """The history as a pandas DataFrame (``session.history_frame()``)."""
        return self.source.history_frame()

    def show_history_frame(self) -> Any:
        frame = self.history_frame()
        self.frame_output.clear_output()
        try:
            self.frame_output.append_display_data(frame)
        except Exception:  # no IPython shell (a plain script): the text form still shows
            self.frame_output.append_stdout(frame.to_string() + "\n")
        return frame

    # --- lifetime -----------------------------------------------------------------------------

    def close(self) -> None:
        """Stop following the session and close the widgets (a running call is cancelled; a
        task started with "run as task" runs on, in the tasks panel)."""
        if getattr(self, "_closing", False) or not hasattr(self, "_unfollow"):
            super().close()  # closed already, or its construction failed
            return
        self._closing = True
        future = self._future
        if self._runs.as_task and future is not None:
            future.cancel()  # stop waiting for it
        else:
            self.cancel()
        self._runs.unhook_all()
        self._unhook_dialogs()
        self._unfollow()
        self._history.close()
        if self.form is not None:
            self.form.close()  # its parts not on screen too (the fields while in JSON mode)
        close_tree(*self.children)
        for widget in self._history.widgets():  # rows not on screen now
            widget.close()
        for row in self._rows:  # tool rows the window does not use now
            for widget in row:
                widget.close()
        self._last.close()  # other tools' last results
        super().close()


def _shown(text: Any) -> str:
    """Server text for HTML: control and bidi characters made visible, then escaped."""
    return str(escape(printable(text)))


def _searched_text(entry: ToolEntry) -> str:
    """What the search box looks in: the tool's name, titles and description."""
    tool = entry.tool
    return f"{entry.name} {tool.title or ''} {tool.display_name} {tool.description or ''}"


def _set(widget: W.Widget, trait: str, value: Any) -> None:
    """Set a trait only when it changes (a reused row sends nothing for what it already shows)."""
    if getattr(widget, trait) != value:
        setattr(widget, trait, value)


def _first_line(text: Any) -> str:
    lines = str(text or "").strip().splitlines()
    return lines[0] if lines else ""


def explorer(session: Any, *, include_app_only: bool = False) -> Explorer:
    """An interactive tool explorer for ``session`` (display it, or use its handles in code);
    ``session`` may also be a source of tools (see :class:`SessionTools`). Tools only an MCP App's
    View may call are listed only with ``include_app_only``."""
    return Explorer(session, include_app_only=include_app_only)
