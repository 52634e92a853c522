"""How the explorer runs one tool call on the engine, follows its task, and cancels it.

Why apart from :class:`._explorer.Explorer`: the explorer is layout and buttons; this is the part
that lives on the engine thread (the call, an MCP App opening, a task started with ``start_tool``,
the task the server may make of a plain call) and the one lock that orders a task against Cancel.
It shows what happens only through the two labels and the progress callback it is given, and never
imports the explorer. Every call runs through its dialog place (``place.placed``): a dialog the
server asks for during the call shows in the explorer's dialog area, not under whatever cell ran
last (a click's output has no cell).
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable
from typing import Any

from ..client._results import ToolResult
from ..display._html import short
from ..notebook._dialogs import DialogPlace
from ..notebook._session_tasks import SessionTask
from . import _ui as W
from ._shown import shown

__all__ = ["OnProgress", "ToolRuns"]

OnProgress = Callable[[float, float | None, str | None], None]


class ToolRuns:
    """The explorer's current (or last) call: its session, its task, and whether Cancel was asked.

    ``status`` and ``task_line`` are the labels it writes to; ``on_progress`` shows progress (it
    runs on the engine thread, so it only sets widget traits).
    """

    def __init__(
        self,
        *,
        status: W.Label,
        task_line: W.Label,
        on_progress: OnProgress,
        place: DialogPlace | None = None,
    ) -> None:
        #: Where the dialogs of these calls show (the explorer's dialog area draws it).
        self.place = place if place is not None else DialogPlace("explorer")
        self._status = status
        self._task_line = task_line
        self._on_progress = on_progress
        self._call_session: Any = None  # the session of the running (or last) call
        #: The task of the current (or last) call, when it runs as one.
        self.task: SessionTask | None = None
        self.as_task = False  # the current call was started with start_tool
        self._cancel_asked = False
        self._task_messages = 0
        self._last_message: str | None = None
        self._unhooks: list[Any] = []
        self._task_lock = threading.Lock()  # the task of a call, and whether Cancel was asked

    def __repr__(self) -> str:
        return f"ToolRuns(as_task={self.as_task!r}, task={self.task!r})"

    def reset(self, session: Any, *, as_task: bool) -> None:
        """A new call on ``session`` is about to start: forget the last one's task."""
        self.task = None
        self._task_line.value, self._task_line.tooltip = "", None
        self.as_task, self._cancel_asked = as_task, False
        self._task_messages, self._last_message = 0, None
        self._call_session = session

    def start(
        self, session: Any, name: str, arguments: dict[str, Any], *, app: bool
    ) -> concurrent.futures.Future[Any]:
        """Run ``name`` on ``session``'s engine: as an MCP App, as a task, or as a plain call."""
        future: concurrent.futures.Future[Any]
        placed = self.place.placed
        if app:
            future = session.spawn(placed(session, self._run_app), session, name, arguments)
        elif self.as_task:
            future = session.spawn(placed(session, self._run_task), session, name, arguments)
        else:
            self._watch_for_task(session, name)
            future = session.spawn(placed(session, self._run), session, name, arguments)
        return future

    async def _run(self, session: Any, name: str, arguments: dict[str, Any]) -> ToolResult:
        result: ToolResult = await session.acall_tool(name, arguments, progress=self._on_progress)
        return result

    async def _run_app(self, session: Any, name: str, arguments: dict[str, Any]) -> Any:
        view = session._app_view(name, arguments, {})
        try:
            await session._open_app(view, arguments)
        except BaseException:
            view._discard()
            raise
        return view

    async def _run_task(self, session: Any, name: str, arguments: dict[str, Any]) -> ToolResult:
        task: SessionTask = await session.astart_tool(name, arguments)
        with self._task_lock:
            self._follow_task(task, progress=True)
            cancel_now = self._cancel_asked  # Cancel was clicked while the task was starting
        if cancel_now and task.task_id:
            await self._cancel_task(task)
        return await task.aresult()

    # --- tasks --------------------------------------------------------------------------------

    def _watch_for_task(self, session: Any, name: str) -> None:
        """For a plain call: catch the task the server may make of it, to show it and cancel it.

        The first new task of this tool while the call runs is taken as the call's own (a task of
        the same tool started meanwhile from a cell could be mistaken for it: only the display and
        the Cancel button would follow the other one).
        """
        client = getattr(session, "client", None)
        if client is None or getattr(client, "tasks_flavour", None) is None:
            return
        known = {h.task_id for h in client.tasks}

        def seen(handle: Any) -> None:  # on the engine thread, until the call ends
            if handle.tool != name or not handle.task_id or handle.task_id in known or handle.done:
                return
            with self._task_lock:
                if self.task is None:
                    self._follow_task(SessionTask(session, handle), progress=False)

        self._unhooks.append(client.on_task(seen))

    def _follow_task(self, task: SessionTask, *, progress: bool) -> None:
        """Show ``task``'s state under the progress bar (and its status messages as progress)."""
        self.task = task

        def changed(handle: Any) -> None:  # on the engine thread
            self._task_changed(task, progress=progress)

        self._unhooks.append(task.handle.on_change(changed))
        self._task_changed(task, progress=progress)

    def _task_changed(self, task: SessionTask, *, progress: bool) -> None:
        if self.task is not task:
            return
        if not task.task_id:
            self._task_line.value = "the server ran it at once, not as a task"
            return
        message = task.status_message
        detail = f" · {short(message, 120)}" if message else ""
        self._task_line.value = f"task {short(task.task_id, 100)} · {task.status}{detail}"
        self._task_line.tooltip = f"task id: {shown(short(task.task_id, 1000))}"
        if progress and message and message != self._last_message and not task.done:
            self._last_message = message
            self._task_messages += 1
            self._on_progress(float(self._task_messages), None, message)

    async def _cancel_task(self, task: SessionTask) -> None:
        try:
            await task.acancel()
        except Exception as exc:
            self._status.value = f"could not cancel the task: {short(str(exc), 200)}"

    def unhook_all(self) -> None:
        """Stop following the task (the call ended, or the explorer closes)."""
        unhooks, self._unhooks = self._unhooks, []
        for unhook in unhooks:
            unhook()

    def ended(self) -> None:
        """The call ended: stop following, and show the task's last state."""
        self.unhook_all()
        task = self.task
        if task is not None:
            self._task_changed(task, progress=False)

    def cancel_task(self) -> bool:
        """Cancel the call's task, if it runs as one and Cancel was not asked yet; True if so
        (else the caller cancels the call's future)."""
        with self._task_lock:
            task, asked = self.task, self._cancel_asked
            self._cancel_asked = True
        if not asked and task is not None and task.task_id and not task.done:
            self._status.value = "cancelling the task…"
            self._call_session.spawn(self._cancel_task, task)
            return True
        if not asked and self.as_task and task is None:
            self._status.value = "cancelling the task…"  # once the task has started (see _run_task)
            return True
        return False
