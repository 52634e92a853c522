"""Tasks in a notebook: :class:`SessionTask` (a task handle usable from cells) and the model rows.

The client's own :class:`~client._task_handles.TaskHandle` lives on the engine thread; a cell gets a
``SessionTask`` whose methods block (``task.result()``) or await (``await task.aresult()``) like
the session's other twins. Interrupting ``task.result()`` stops the wait, not the task: the
handle's repr names the task id, so a saved notebook can attach to it again after a restart.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..display import _html
from ..protocol._printable import printable

if TYPE_CHECKING:
    import pandas

    from ..client._results import ToolResult
    from ..client._task_handles import TaskHandle
    from ._ports import SessionPort, TaskSession

__all__ = ["SessionTask", "start_task", "started_tasks", "task_row", "tasks_frame"]


def task_row(handle: TaskHandle) -> dict[str, Any]:
    """The model's row for a task: plain values only (a widget or frame reads it from any thread)."""
    error = handle.error
    return {
        "task_id": handle.task_id,
        "tool": handle.tool,
        "status": handle.status,
        "status_message": handle.status_message,
        "started": handle.started,
        "ended": handle.ended,
        "elapsed": handle.elapsed,
        "done": handle.done,
        "error": error.message if error is not None else None,
        "result": handle.result_if_done,
        "updated": time.time(),
    }


class SessionTask:
    """A task from a session: its state, and blocking and async twins of what one can do with it.

    ``status``, ``status_message``, ``done`` and ``elapsed`` are always the latest: the client
    polls the task (or hears its notifications) on the engine thread, whoever looks.
    """

    def __init__(self, session: SessionPort, handle: TaskHandle) -> None:
        self._session = session
        self.handle = handle

    @property
    def task_id(self) -> str:
        return self.handle.task_id

    @property
    def tool(self) -> str | None:
        return self.handle.tool

    @property
    def status(self) -> str:
        return self.handle.status

    @property
    def status_message(self) -> str | None:
        return self.handle.status_message

    @property
    def done(self) -> bool:
        return self.handle.done

    @property
    def elapsed(self) -> float:
        return self.handle.elapsed

    @property
    def error(self) -> Any:
        return self.handle.error

    def refresh(self) -> SessionTask:
        """Ask the server for the task's state now; returns this task."""
        self._session._run(lambda: self.handle.refresh())
        return self

    async def arefresh(self) -> SessionTask:
        await self._session._arun(lambda: self.handle.refresh())
        return self

    def result(self, timeout: float | None = None, *, raise_on_error: bool = False) -> ToolResult:
        """Wait for the end (blocking) and return the tool's result; see ``TaskHandle.result``.

        Interrupting the cell stops waiting; the task runs on (``cancel()`` stops it).
        """
        return self._session._run(lambda: self.handle.result(timeout=timeout, raise_on_error=raise_on_error))

    async def aresult(self, timeout: float | None = None, *, raise_on_error: bool = False) -> ToolResult:
        return await self._session._arun(
            lambda: self.handle.result(timeout=timeout, raise_on_error=raise_on_error)
        )

    def cancel(self) -> bool:
        """Ask the server to stop the task; True if it ended cancelled."""
        return self._session._run(self.handle.cancel)

    async def acancel(self) -> bool:
        return await self._session._arun(self.handle.cancel)

    def __repr__(self) -> str:
        return printable(
            f"<SessionTask {self.task_id!r} {self.tool or '?'} {self.status} on {self._session.name!r}>"
        )

    def _repr_html_(self) -> str:
        return self.handle._repr_html_() + (
            f"<div><small>session {_html.escape(self._session.name)}</small></div>"
        )


# --- a session's task methods (Session.start_tool, .tasks, .tasks_frame delegate here) ------------


async def start_task(
    session: TaskSession, name: str, arguments: Mapping[str, Any] | None, options: dict[str, Any]
) -> SessionTask:
    """Start ``name`` as a task on the engine, recorded in the session's history like any call."""
    handle = await session._recorded(
        "tools/call",
        name,
        dict(arguments or {}),
        lambda: session.client.start_tool(name, arguments, **options),
    )
    return SessionTask(session, handle)


def started_tasks(session: TaskSession) -> list[SessionTask]:
    """Every task the session started or attached to, oldest first."""
    return [SessionTask(session, h) for h in session.client.tasks if h.task_id]


def tasks_frame(session: TaskSession, *, server: bool = False) -> pandas.DataFrame:
    """The session's tasks as a DataFrame (``server=True``: the server's ``tasks/list``)."""
    from . import _frames as frames

    if server:
        return frames.tasks_frame(task_row(t.handle) for t in session.list_tasks())
    return frames.tasks_frame(session.model.tasks)
