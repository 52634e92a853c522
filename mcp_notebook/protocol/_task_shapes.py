"""Tasks on the wire, both flavours: shapes, the flavour a server speaks, and the small decisions.

Two incompatible designs of long-running tool calls are in the field (PROTOCOL.md §3.11, §4.5):

* ``core``: the 2025-11-25 experimental tasks of the legacy era. The client asks for a task with
  ``params.task`` on ``tools/call``, and only for tools whose ``execution.taskSupport`` allows it;
  the server answers ``{"task": {...}}`` and later serves ``tasks/get``, the blocking
  ``tasks/result`` (which also carries the server's own requests while the task waits for input),
  ``tasks/list``, ``tasks/cancel`` and ``notifications/tasks/status``. Times are ``ttl`` and
  ``pollInterval`` in milliseconds.
* ``extension``: the 2026-07-28 extension ``io.modelcontextprotocol/tasks``. The client declares
  the extension per request; the server decides, answering ``resultType: "task"`` with the task's
  fields flat; ``tasks/get`` returns the status, the pending ``inputRequests`` and, once done, the
  result or error inlined; ``tasks/update`` answers input, ``tasks/cancel`` asks to stop. Times
  are ``ttlMs`` and ``pollIntervalMs``.

Everything here is pure: the handle and its poller (``mcp_notebook.client._task_handles``) do the I/O. A
:class:`TaskState` is one reading of a task, whichever flavour it came from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ._errors import INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY, McpError
from ._versions import Era

__all__ = [
    "STATUSES",
    "TASKS_EXTENSION",
    "TERMINAL",
    "Flavour",
    "TaskState",
    "TaskSupport",
    "created_task",
    "flavour_of",
    "is_unknown_task",
    "needs_tasks_extension",
    "next_poll_delay",
    "parse_task",
    "run_as_task",
    "task_mode",
    "task_support",
]

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
Flavour = Literal["core", "extension"]
TaskSupport = Literal["forbidden", "optional", "required"]
STATUSES: tuple[str, ...] = ("working", "input_required", "completed", "failed", "cancelled")
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})

# Bounds on how often a task is polled, whatever the server suggests: a pollInterval of 0 must not
# become a busy loop, and a huge one must not hide a finished task for an hour.
MIN_POLL = 0.05
MAX_POLL = 30.0
DEFAULT_POLL = 1.0
_MAX_MESSAGE = 2000  # a status message longer than this is cut (it is shown in one table row)


@dataclass(frozen=True, slots=True)
class TaskState:
    """One reading of a task. Times are seconds; ``ttl`` is None when the server keeps it forever.

    ``result`` and ``error`` are the extension's inlined outcome (a ``CallToolResult`` dict or a
    JSON-RPC error object); ``input_requests`` its pending requests for input, by key.
    """

    task_id: str
    status: str
    status_message: str | None = None
    created_at: str | None = None
    last_updated_at: str | None = None
    ttl: float | None = None
    poll_interval: float | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL


def flavour_of(era: Era | None, capabilities: Mapping[str, Any]) -> Flavour | None:
    """The tasks flavour a server speaks, from its era and capabilities; None when it has none.

    A legacy server must say ``tasks.requests.tools.call`` (it runs tool calls as tasks); a modern
    one lists the extension. fastmcp's extension on a legacy connection never makes a task, and
    says nothing: that is None too.
    """
    if era == "modern":
        extensions = capabilities.get("extensions")
        return "extension" if isinstance(extensions, Mapping) and TASKS_EXTENSION in extensions else None
    if era == "legacy":
        tasks = capabilities.get("tasks")
        requests = tasks.get("requests") if isinstance(tasks, Mapping) else None
        tools = requests.get("tools") if isinstance(requests, Mapping) else None
        return "core" if isinstance(tools, Mapping) and "call" in tools else None
    return None


def task_support(tool: Mapping[str, Any]) -> TaskSupport | None:
    """A tool's ``execution.taskSupport``; None when the tool does not say (the extension's tools
    usually do not: there the server decides per call)."""
    execution = tool.get("execution")
    value = execution.get("taskSupport") if isinstance(execution, Mapping) else None
    if value in ("forbidden", "optional", "required"):
        return value  # type: ignore[no-any-return]
    return None


def task_mode(
    flavour: Flavour | None, tool: Mapping[str, Any] | None, *, task_only: bool = False
) -> Literal["required", "optional"] | None:
    """How a tool may run: "required" (only as a task), "optional" (either way), None (never as a
    task: the server has no tasks, or the tool forbids it; in the 2025-11-25 flavour a tool that
    does not say is forbidden). ``task_only``: the server refused it before for want of a task."""
    if flavour is None:
        return None
    support = task_support(tool) if tool is not None else None
    if support == "required" or task_only:
        return "required"
    if support == "forbidden" or (flavour == "core" and support is None):
        return None
    return "optional"


def run_as_task(
    flavour: Flavour | None,
    tool: Mapping[str, Any] | None,
    name: str,
    *,
    asked: bool | None,
    task_only: bool = False,
) -> bool:
    """Whether a ``tools/call`` goes out as a task: ``asked`` is the caller's ``task=`` (None: as
    the tool needs), ``tool`` the tool as listed, ``task_only`` that the server refused it before
    for want of the extension. Raises McpError(kind="invalid") for a request that cannot be met.

    A required tool always runs as a task; an optional one only when asked; a forbidden one (or,
    in the 2025-11-25 flavour, one that does not say: forbidden is its default) never.
    """
    mode = task_mode(flavour, tool, task_only=task_only)
    if mode == "required":
        if asked is False:
            raise McpError("invalid", f"tool {name!r} runs only as a task (taskSupport 'required')")
        return True
    if not asked:
        return False
    if flavour is None:
        raise McpError("invalid", f"tool {name!r} cannot run as a task: this server offers no tasks")
    if mode is None:
        said = (task_support(tool) if tool is not None else None) or "not given, which means 'forbidden'"
        raise McpError(
            "invalid", f"tool {name!r} does not run as a task (its execution.taskSupport is {said})"
        )
    return True


def created_task(result: Mapping[str, Any], flavour: Flavour) -> TaskState | None:
    """The task a ``tools/call`` result created, or None when the result is the tool's own answer."""
    if flavour == "core":
        task = result.get("task")
        if task is None:
            return None
        if not isinstance(task, Mapping):
            raise McpError("protocol", "the server answered tools/call with a 'task' that is not an object")
        return parse_task(task, flavour)
    if result.get("resultType") != "task":
        return None
    return parse_task(result, flavour)


def parse_task(raw: Any, flavour: Flavour) -> TaskState:
    """A task object (a ``tasks/get`` answer, a status notification's params, a created task).

    Raises McpError(kind="protocol") when it lacks a task id or a known status: a poller must
    not go on with a task it cannot name. Other fields are optional and dropped when ill-typed.
    """
    if not isinstance(raw, Mapping):
        raise McpError("protocol", "the server sent a task that is not an object")
    task_id = raw.get("taskId")
    if not isinstance(task_id, str) or not task_id:
        raise McpError("protocol", "the server sent a task without a taskId")
    status = raw.get("status")
    if status not in STATUSES:
        raise McpError(
            "protocol", f"the server sent task {_short(task_id)} with an unknown status {status!r}"
        )
    ttl_key, poll_key = ("ttl", "pollInterval") if flavour == "core" else ("ttlMs", "pollIntervalMs")
    message = raw.get("statusMessage")
    result = raw.get("result")
    error = raw.get("error")
    requests = raw.get("inputRequests")
    return TaskState(
        task_id=task_id,
        status=str(status),
        status_message=message[:_MAX_MESSAGE] if isinstance(message, str) else None,
        created_at=_str(raw.get("createdAt")),
        last_updated_at=_str(raw.get("lastUpdatedAt")),
        ttl=_seconds(raw.get(ttl_key)),
        poll_interval=_seconds(raw.get(poll_key)),
        result=dict(result) if isinstance(result, Mapping) and flavour == "extension" else None,
        error=dict(error) if isinstance(error, Mapping) and flavour == "extension" else None,
        input_requests=dict(requests) if isinstance(requests, Mapping) and requests else None,
    )


def next_poll_delay(state: TaskState | None, *, failures: int = 0) -> float:
    """Seconds until a task is polled again: the server's interval, bounded, backing off after
    failed polls (a server that is restarting should not be asked ten times a second)."""
    base = state.poll_interval if state is not None and state.poll_interval is not None else DEFAULT_POLL
    base = min(max(base, MIN_POLL), MAX_POLL)
    if failures:
        base = min(max(base, 0.5) * 2 ** min(failures, 6), MAX_POLL)
    return base


def needs_tasks_extension(error: McpError) -> bool:
    """A ``-32021`` naming the tasks extension: the server refused, unexecuted, a call of a tool that
    runs only as a task, because the request did not declare the extension."""
    if error.code != MISSING_REQUIRED_CLIENT_CAPABILITY:
        return False
    data = error.data if isinstance(error.data, Mapping) else {}
    required = data.get("requiredCapabilities")
    extensions = required.get("extensions") if isinstance(required, Mapping) else None
    # A -32021 without data still most likely means the tasks extension on a tools/call.
    return extensions is None or (isinstance(extensions, Mapping) and TASKS_EXTENSION in extensions)


def is_unknown_task(error: McpError) -> bool:
    """The server does not know the task (never did, its ttl passed, or it restarted): -32602."""
    return error.kind == "server" and error.code == INVALID_PARAMS


def _seconds(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return float(value) / 1000.0


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _short(task_id: str) -> str:
    return repr(task_id if len(task_id) <= 64 else task_id[:61] + "...")
