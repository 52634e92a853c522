"""Tool calls and tasks for a :class:`~mcp_notebook.client.Client`: one deadline per call.

A call is checked (the tool's inputSchema, fetching the tool list within half of the call's
deadline when it is not cached), sent as a task or not (as the server, the tool and ``task=``
decide), followed to its end when it became a task, and its result checked against the tool's
outputSchema. The client owns one :class:`Calls` and hands it its connection, options and live
lists; split out of the client module (issue #27), this module never imports it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio

from ..connection import Connection, ConnectionOptions, GuardedProgress, ProgressCallback
from ..protocol._errors import INVALID_PARAMS, McpError
from ..protocol._task_shapes import (
    TASKS_EXTENSION,
    Flavour,
    TaskState,
    created_task,
    needs_tasks_extension,
    parse_task,
    run_as_task,
    task_mode,
)
from ._arguments import MISSING, ArgumentValidator, OutputValidator, unknown_tool
from ._live import LiveState
from ._paging import every_page
from ._results import Tool, ToolResult
from ._task_handles import TaskHandle, TaskTracker

__all__ = ["Calls"]

logger = logging.getLogger("mcp_notebook.client")

#: The share of a call's deadline that the tool list fetched for its checks may use: the call is
#: the point, and keeps the rest (one deadline for both, never one each).
_LIST_SHARE = 0.5
#: Time spent on the list below which a timeout's message does not mention the list.
_LISTED = 0.01

#: The port back to the client: its tool listing (``list_tools(timeout=within)``), which leaves
#: out the tools only an App's View may call.
ListTools = Callable[[float], Awaitable[list[Tool]]]


class Calls:
    """The calls and tasks of one client: ``call_tool``, ``start_tool``, ``get_task``, ``list_tasks``.

    Holds what only calls need: the task tracker, the tools a server said run only as tasks, the
    by-name index of the cached tool list, and the argument and output validators.
    """

    def __init__(
        self, connection: Connection, options: ConnectionOptions, live: LiveState, list_tools: ListTools
    ) -> None:
        self._connection = connection
        self._options = options
        self._live = live
        self._list_tools = list_tools
        self.tracker = TaskTracker(connection, self._finish_task)
        self._task_only: set[str] = set()  # tools a server said run only as tasks (-32021)
        self._tool_index: tuple[list[Tool] | None, dict[str, Tool]] = (None, {})
        self._validator = ArgumentValidator()
        self._outputs = OutputValidator()

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        *,
        timeout: float | None,
        progress: ProgressCallback | None,
        validate: bool,
        raise_on_error: bool,
        task: bool | None,
    ) -> ToolResult:
        """:meth:`Client.call_tool`."""
        now = self._connection.now
        began = now()
        answer = await self._start_call(
            name, arguments, timeout=timeout, validate=validate, progress=progress, task=task, began=began
        )
        if isinstance(answer, TaskHandle):
            left = max(timeout - (now() - began), 0.0) if timeout is not None else None
            return await self._follow_call(
                answer, timeout=left, budget=timeout, progress=progress, raise_on_error=raise_on_error
            )
        return self._tool_result(name, answer, validate=validate, raise_on_error=raise_on_error)

    async def start_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        *,
        timeout: float | None,
        validate: bool,
        ttl: float | None,
    ) -> TaskHandle:
        """:meth:`Client.start_tool`."""
        answer = await self._start_call(
            name, arguments, timeout=timeout, validate=validate, task=True, ttl=ttl
        )
        if isinstance(answer, TaskHandle):
            return answer
        # The server ran it at once after all (it decides, in the extension): the result is kept
        # on a handle that is already done, so nothing is lost. Not the tracker's (it has no id to
        # be known by, and a completed extension reading without a result would settle it empty).
        handle = TaskHandle(
            self.tracker,
            TaskState(task_id="", status="completed", status_message="ran at once, not as a task"),
            name,
            self.tracker.flavour or "extension",
        )
        handle._settle(result=self._tool_result(name, answer, validate=validate))
        return handle

    async def get_task(self, task_id: str, *, timeout: float | None) -> TaskHandle:
        """:meth:`Client.get_task`."""
        if not isinstance(task_id, str) or not task_id:
            raise TypeError("get_task() needs the task id as a non-empty string")
        flavour = self._require_tasks("get_task")
        state = await self.tracker.fetch(task_id, timeout=timeout)
        return self.tracker.adopt(state, None, flavour)

    async def list_tasks(self, *, timeout: float | None) -> list[TaskHandle]:
        """:meth:`Client.list_tasks`."""
        flavour = self._require_tasks("list_tasks")
        negotiated = self._connection.negotiated
        caps = negotiated.capabilities.get("tasks") if negotiated else None
        if flavour != "core" or not isinstance(caps, Mapping) or "list" not in caps:
            raise McpError(
                "invalid",
                "this server does not list tasks (tasks/list is a 2025-11-25 feature the server must "
                "declare); attach to a known task with get_task(task_id)",
            )

        async def ask(params: dict[str, Any] | None, left: float) -> dict[str, Any]:
            return await self._connection.request("tasks/list", params, timeout=left)

        # One deadline and one bound for every page, as for the other lists (._paging).
        tasks = await every_page(
            ask,
            "tasks/list",
            "tasks",
            timeout=self._options.request_timeout(timeout),
            max_items=self._options.max_list_items,
        )
        return [self.tracker.adopt(parse_task(raw, flavour), None, flavour, follow=False) for raw in tasks]

    def task_mode(self, tool: str | Tool) -> str | None:
        """:meth:`Client.task_mode`."""
        name = tool.name if isinstance(tool, Tool) else tool
        listed = tool if isinstance(tool, Tool) else self.tool_named(name)
        return task_mode(
            self.tracker.flavour, listed.raw if listed else None, task_only=name in self._task_only
        )

    def _require_tasks(self, what: str) -> Flavour:
        flavour = self.tracker.flavour
        if flavour is None:
            raise McpError("invalid", f"{what}(): this server offers no tasks")
        return flavour

    def _check_call(self, name: Any, arguments: Any) -> None:
        if not isinstance(name, str) or not name:
            raise TypeError("call_tool() and start_tool() need the tool's name as a non-empty string")
        if arguments is not None and not isinstance(arguments, Mapping):
            raise TypeError(
                f"arguments must be a mapping of argument names to values, not {type(arguments).__name__}"
            )

    async def _start_call(
        self,
        name: str,
        arguments: Mapping[str, Any] | None,
        *,
        timeout: float | None,
        validate: bool,
        progress: ProgressCallback | None = None,
        task: bool | None,
        ttl: float | None = None,
        began: float | None = None,
    ) -> dict[str, Any] | TaskHandle:
        """Check the call, then send ``tools/call`` as a task or not, as the server, the tool and
        ``task`` decide; return the plain result, or the handle of the task the server created.

        ``began``: when the caller read the clock just before (the call's deadline runs from
        then); each read costs, on the hot path."""
        self._check_call(name, arguments)
        arguments = dict(arguments or {})
        budget = self._options.request_timeout(timeout)
        now = self._connection.now
        started = now() if began is None else began
        deadline = started + budget
        tool = await self._tool_for_call(name, arguments, validate=validate, within=budget * _LIST_SHARE)
        listed = now()
        listing = listed - started
        # The request's own timeout: what the list fetch left of the budget, to the instant (a
        # listing of a few ms given back used to make the call that much late); a sliver once it
        # has passed, so the request then fails as timed out, the usual way.
        left = max(deadline - listed, 0.001) if listing > 0 else budget
        flavour = self.tracker.flavour
        as_task = run_as_task(
            flavour, tool.raw if tool else None, name, asked=task, task_only=name in self._task_only
        )
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        if as_task and flavour == "core":
            params["task"] = {"ttl": int(ttl * 1000)} if ttl is not None else {}
        # Without the extension declared a server never makes a task of this call (an optional
        # tool runs inline); a tool that runs only as a task is then refused unexecuted (-32021).
        without = () if as_task else (TASKS_EXTENSION,)
        label = f"tools/call {name!r}"
        try:
            try:
                result = await self._connection.request(
                    "tools/call",
                    params,
                    timeout=left,
                    progress=progress,
                    label=label,
                    without_extensions=without,
                )
            except McpError as exc:
                if not (without and task is None and flavour == "extension" and needs_tasks_extension(exc)):
                    raise
                self._task_only.add(name)
                result = await self._connection.request("tools/call", params, timeout=left, label=label)
        except McpError as exc:
            if exc.kind != "timeout" or listing < _LISTED:
                raise
            # The request's own message names only what was left of the deadline for it.
            raise McpError(
                "timeout",
                f"{exc.message}; the call's deadline began {listing:.2g}s earlier, when its tool "
                "list was fetched",
                code=exc.code,
                data=exc.data,
            ) from None
        if flavour is None:
            return result
        state = created_task(result, flavour)
        if state is None:
            return result
        handle = self.tracker.adopt(state, name, flavour)
        handle.validate = validate
        return handle

    async def _follow_call(
        self,
        handle: TaskHandle,
        *,
        timeout: float | None,
        budget: float | None,
        progress: ProgressCallback | None,
        raise_on_error: bool,
    ) -> ToolResult:
        """Wait for a task that call_tool started, for ``timeout`` (what is left of the call's
        ``budget``); an abandoned wait cancels the task."""
        try:
            with anyio.fail_after(timeout) if timeout is not None else contextlib.nullcontext():
                if progress is not None:
                    await _report_status(handle, progress)
                return await handle.result(raise_on_error=raise_on_error)
        except TimeoutError:
            await _cancel_quietly(handle)
            raise McpError(
                "timeout",
                f"tools/call {handle.tool!r} (task {handle.task_id!r}) timed out after {budget:g}s; "
                "the task was cancelled (use start_tool() to keep a long task running)",
            ) from None
        except BaseException:
            await _cancel_quietly(handle)
            raise

    def _finish_task(self, handle: TaskHandle, raw: dict[str, Any]) -> ToolResult:
        return self._tool_result(handle.tool or "", raw, validate=handle.validate and bool(handle.tool))

    def _tool_result(
        self, name: str, raw: dict[str, Any], *, validate: bool, raise_on_error: bool = False
    ) -> ToolResult:
        tool = self.tool_named(name)
        output_schema = tool.output_schema if tool else None
        if validate and output_schema is not None and raw.get("isError") is not True:
            self._outputs.check(name, output_schema, raw.get("structuredContent", MISSING))
        tool_result = ToolResult.from_dict(raw, output_schema=output_schema, secrets=self._connection.secrets)
        if raise_on_error and tool_result.is_error:
            raise McpError("server", f"tool {name!r} reported an error: {tool_result.text[:1000]}")
        return tool_result

    async def _tool_for_call(
        self, name: str, arguments: dict[str, Any], *, validate: bool, within: float
    ) -> Tool | None:
        """The tool as listed (fetching the list when it is not cached and we need it, for at
        most ``within`` seconds in all), with the arguments checked against its inputSchema when
        ``validate``: first the defaults of required ones left out are filled into ``arguments``
        (the call's own copy, which is what is sent; see :mod:`..protocol._defaults`).

        The list is needed to validate, and to know whether a 2025-11-25 tool runs as a task. A
        list that cannot be had is said, naming the tool (a warning, and an "unchecked_call"
        event for the hooks): a call that goes unchecked must not look like one that was checked.
        """
        tool = self.tool_named(name)
        if tool is None and (validate or self.tracker.flavour == "core"):
            fresh = self._live.freshness("tools").fresh
            if not validate and fresh:
                return None  # only the task mode was wanted: a fresh list without it says "none"
            try:
                # Every page of the list within one bound, not a timeout for each. A fresh list
                # without the name is asked again, once, before the name is refused: the server
                # may have added the tool a moment ago (its list_changed still on the way).
                with anyio.fail_after(within):
                    if fresh:
                        tools = await self._live.get("tools", refresh=True, timeout=within)
                    else:
                        tools = await self._list_tools(within)
            except TimeoutError:
                self._unchecked(name, f"the tool list did not come within {within:.3g}s", validate)
                return None
            except McpError as exc:
                if exc.kind in ("closed", "overloaded"):
                    raise
                self._unchecked(name, f"the tool list could not be fetched: {exc.message}", validate)
                return None
            # Found in the answer itself: a list_changed that arrives meanwhile keeps the
            # answer out of the cache, but it still names the tools of this moment.
            tool = next((t for t in tools if t.name == name), None) or self.tool_named(name)
            if tool is None and validate:
                self._refuse_unknown(name, [t.name for t in tools if not t.app_only])
        if tool is not None and validate:
            self._validator.fill_defaults(name, tool.input_schema, arguments)
            self._validator.check(name, tool.input_schema, arguments)
        return tool

    def _refuse_unknown(self, name: str, known: list[str]) -> None:
        """A tool the server does not list (a list we have, fresh): refused before sending, with
        the closest names, instead of the server's error result a round trip later."""
        advice = "; nothing was sent (pass validate=False to send anyway)"
        raise McpError(
            "invalid",
            unknown_tool(name, known) + advice,
            code=INVALID_PARAMS,
            full_message=unknown_tool(name, known, full=True) + advice,
        )

    def _unchecked(self, name: str, reason: str, validate: bool) -> None:
        what = "its arguments go unchecked" if validate else "whether it must run as a task is unknown"
        logger.warning("tools/call %r: %s, so %s", name, reason, what)
        self._live.emit("unchecked_call", tool=name, reason=reason)

    def tool_named(self, name: str) -> Tool | None:
        tools = self._live.cached("tools")
        source, index = self._tool_index
        if tools is not source:
            index = {tool.name: tool for tool in tools or ()}
            self._tool_index = (tools, index)
        return index.get(name)


async def _report_status(handle: TaskHandle, progress: ProgressCallback) -> None:
    """Report a task's status messages to a call's progress callback until the task ends."""
    report = GuardedProgress(progress)
    seen: str | None = None
    count = 0
    while not handle.done and handle.error is None:
        message = handle.status_message
        if message and message != seen:
            seen = message
            count += 1
            await report(count, None, message)
        changed = handle._changed
        if handle.done:
            break
        await changed.wait()


async def _cancel_quietly(handle: TaskHandle) -> None:
    """Cancel a task whose caller gave up on it (shielded, bounded, never raising)."""
    if handle.done:
        return
    with anyio.CancelScope(shield=True), anyio.move_on_after(5.0):
        try:
            await handle.cancel(timeout=5.0)
        except McpError as exc:
            logger.warning("could not cancel task %r after its call was abandoned: %s", handle.task_id, exc)
