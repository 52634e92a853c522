"""Long-running tool calls as tasks: :class:`TaskHandle` and the one poller that keeps them current.

A client follows every task it started or attached to until the task ends, in one task of its
own (:class:`TaskTracker`, run in the client's task group, so it stops when the client closes and
never outlives it). It polls each task at the server's ``pollInterval``, takes status
notifications where the server sends them (and then polls less), answers a task's requests for
input through the client's elicitation and sampling handlers, and fetches the result once the
task ends. A handle is therefore always as fresh as the server lets it be, whoever is waiting on
it: a notebook row, a widget, ``await handle.result()`` in a later cell, or nobody.

Waiting is not owning: cancelling ``await handle.result()`` (a cell interrupted) leaves the task
running on the server; only ``await handle.cancel()`` stops it.

The two wire flavours (2025-11-25 core tasks, the 2026-07-28 extension) differ only here and in
:mod:`mcp_notebook.protocol._task_shapes`; a handle looks the same for both.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import math
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from ..connection import Home, LogBudget
from ..protocol._errors import McpError
from ..protocol._printable import printable
from ..protocol._task_shapes import (
    Flavour,
    TaskState,
    flavour_of,
    is_unknown_task,
    next_poll_delay,
    parse_task,
)

if TYPE_CHECKING:
    from ..connection import Connection
    from ..protocol._jsonrpc import Notification
    from ._results import ToolResult

__all__ = ["TaskHandle", "TaskTracker"]

logger = logging.getLogger("mcp_notebook.tasks")

#: Turns a finished task's raw ``CallToolResult`` into a ToolResult (checking its outputSchema).
Finisher = Callable[["TaskHandle", dict[str, Any]], "ToolResult"]

# After a status notification, the next poll waits at least this long: polling is then only the
# safety net for a notification that never comes.
_PUSH_QUIET = 2.0
# The blocking tasks/result of a core task that waits for input, when the task has no ttl.
_COLLECT_TIMEOUT = 3600.0
_MAX_KEPT = 1000  # handles a client remembers (client.tasks); finished ones beyond are forgotten
_STATUS_METHODS = ("notifications/tasks/status", "notifications/tasks")


class TaskHandle:
    """A task on the server: a tool call that runs on after the request that started it.

    Attributes are the latest the client knows: ``status`` (working, input_required, completed,
    failed, cancelled), ``status_message``, ``tool`` (None when attached by id to a task this
    client did not start), ``started``/``ended`` (wall-clock seconds, when this client learned of
    the task and saw it end), ``ttl`` and ``poll_interval`` (seconds, the server's).

    ``await result()`` waits for the end and returns the tool's result; ``await refresh()`` asks
    the server now; ``await cancel()`` asks it to stop. The repr names the task id, so a saved
    notebook keeps what ``client.get_task(task_id)`` needs after a kernel restart.
    """

    def __init__(self, tracker: TaskTracker, state: TaskState, tool: str | None, flavour: Flavour) -> None:
        self._tracker = tracker
        self._state = state
        self.tool = tool
        self.flavour = flavour
        self.started = time.time()
        self.ended: float | None = time.time() if state.terminal else None
        self._result: ToolResult | None = None
        self._error: McpError | None = None
        self._stuck: McpError | None = None  # waiting for input this client cannot give
        self._settled = False  # the outcome is known: nothing more will change
        self._changed = anyio.Event()
        self._listeners: list[Callable[[TaskHandle], None]] = []
        # The tracker's bookkeeping.
        self._due = 0.0
        self._failures = 0
        self._polling = False
        self._collecting = False
        self._answering = False
        self._answered: set[str] = set()
        self.validate = True  # check the result against the tool's outputSchema

    # --- what is known -----------------------------------------------------------------------

    @property
    def task_id(self) -> str:
        return self._state.task_id

    @property
    def status(self) -> str:
        return self._state.status

    @property
    def status_message(self) -> str | None:
        """The server's status message, secrets it echoes masked (``state.status_message`` is
        the server's own)."""
        message = self._state.status_message
        return message if message is None else self._tracker.secrets.mask(message)

    @property
    def ttl(self) -> float | None:
        return self._state.ttl

    @property
    def poll_interval(self) -> float | None:
        return self._state.poll_interval

    @property
    def created_at(self) -> str | None:
        """The server's creation time (ISO 8601), as it sent it."""
        return self._state.created_at

    @property
    def last_updated_at(self) -> str | None:
        return self._state.last_updated_at

    @property
    def state(self) -> TaskState:
        """The latest reading of the task, as one immutable value."""
        return self._state

    @property
    def done(self) -> bool:
        """The task ended (completed, failed or cancelled) and its outcome is here."""
        return self._settled

    @property
    def elapsed(self) -> float:
        """Seconds from when this client learned of the task to its end (or to now)."""
        return (self.ended if self.ended is not None else time.time()) - self.started

    @property
    def error(self) -> McpError | None:
        """Why the task has no result: it failed, the server forgot it, or it needs input this
        client cannot give."""
        return self._error or self._stuck

    @property
    def result_if_done(self) -> ToolResult | None:
        """The tool's result once the task completed, without waiting (None before)."""
        return self._result

    def on_change(self, callback: Callable[[TaskHandle], None]) -> Callable[[], None]:
        """Call ``callback(handle)`` after every change; returns a function that unhooks it.

        Runs in the client's event loop; it must not block. Exceptions are logged and dropped.
        """
        self._listeners.append(callback)

        def unhook() -> None:
            if callback in self._listeners:
                self._listeners.remove(callback)

        return unhook

    # --- what one can do ------------------------------------------------------------------------

    async def refresh(self, *, timeout: float | None = None) -> TaskHandle:
        """Ask the server for the task's state now (``tasks/get``); returns this handle."""
        state = await self._tracker.fetch(self.task_id, timeout=timeout)
        self._tracker.absorb(self, state)
        return self

    async def wait(self, *, timeout: float | None = None) -> str:
        """Wait until the task ended and its outcome is here; return the final status.

        ``timeout`` (seconds, None for as long as it takes) raises McpError(kind="timeout") and
        leaves the task running.
        """
        self._tracker.follow(self)
        try:
            with anyio.fail_after(timeout) if timeout is not None else contextlib.nullcontext():
                while not self._settled and self._stuck is None:
                    if self._tracker.closed:
                        raise McpError(
                            "closed",
                            f"the client closed while waiting for task {self.task_id!r}; it keeps "
                            "running on the server: attach again with get_task() on a new client",
                        )
                    await self._changed.wait()
        except TimeoutError:
            raise McpError(
                "timeout",
                f"task {self.task_id!r} is still {self.status} after {timeout:g}s; it keeps running on "
                "the server: wait again with result(), or stop it with cancel()",
            ) from None
        if self._stuck is not None and not self._settled:
            raise self._stuck
        return self.status

    async def result(self, *, timeout: float | None = None, raise_on_error: bool = False) -> ToolResult:
        """Wait for the end and return the tool's result.

        A completed task returns its result (``is_error`` when the tool reported failure; with
        ``raise_on_error`` that raises McpError(kind="server")). A failed task raises
        McpError(kind="server"), a cancelled one McpError(kind="cancelled"). Cancelling this wait
        (an interrupted cell) does not cancel the task.
        """
        await self.wait(timeout=timeout)
        if self._result is not None:
            if raise_on_error and self._result.is_error:
                raise McpError(
                    "server",
                    f"task {self.task_id!r} ({self.tool}) reported an error: {self._result.text[:1000]}",
                )
            return self._result
        if self.status == "cancelled":
            message = f": {self.status_message}" if self.status_message else ""
            raise McpError("cancelled", f"task {self.task_id!r} was cancelled{message}")
        if self._error is not None:
            raise self._error
        raise McpError("protocol", f"task {self.task_id!r} ended {self.status} without a result")

    async def cancel(self, *, timeout: float | None = None) -> bool:
        """Ask the server to stop the task (``tasks/cancel``); True if it ended cancelled.

        A task that finished first stays finished (False). Cancelling is cooperative: the server
        may take a moment, so this waits (up to ``timeout``, 10 s by default) to see the end.
        """
        if self._settled:
            return self.status == "cancelled"
        await self._tracker.cancel(self, timeout=timeout)
        if not self._settled:
            try:
                await self.wait(timeout=timeout if timeout is not None else 10.0)
            except McpError as exc:
                if exc.kind != "timeout" and exc is not self._stuck:
                    raise
        return self.status == "cancelled"

    # --- the tracker's side -------------------------------------------------------------------

    def _update(self, state: TaskState) -> None:
        if state != self._state:
            if self._state.terminal and not state.terminal:
                return  # a late reading from before the end: the end stands
            self._state = state
            if state.terminal and self.ended is None:
                self.ended = time.time()
            if state.status != "input_required":
                self._stuck = None
            self._notify()

    def _settle(self, *, result: ToolResult | None = None, error: McpError | None = None) -> None:
        if self._settled:
            return
        self._result, self._error = result, error
        self._settled = True
        if self.ended is None:
            self.ended = time.time()
        self._notify()

    def _block(self, reason: McpError) -> None:
        self._stuck = reason
        self._notify()

    def _notify(self) -> None:
        changed, self._changed = self._changed, anyio.Event()
        changed.set()
        for listener in list(self._listeners):
            try:
                listener(self)
            except Exception:
                logger.exception("a task listener raised; ignored")
        self._tracker.changed(self)

    def __repr__(self) -> str:
        tool = f" {printable(self.tool)}" if self.tool else ""
        message = f": {self.status_message!r}" if self.status_message else ""
        return f"<Task {self.task_id!r}{tool} {self.status}{message}>"

    def _repr_html_(self) -> str:
        from ..display import _html

        message = f" <i>{_html.escape(self.status_message)}</i>" if self.status_message else ""
        tool = f" <code>{_html.escape(self.tool)}</code>" if self.tool else ""
        return (
            f"<div><b>Task</b> <code>{_html.escape(self.task_id)}</code>{tool} "
            f"<b>{_html.escape(self.status)}</b>{message} <small>{self.elapsed:.1f}s</small></div>"
        )


class TaskTracker:
    """Follows a client's tasks: one poller task for all of them, run in the client's task group.

    It sleeps until the next task is due (or a notification, a new task or a cancel wakes it),
    starts that task's ``tasks/get`` in its own task group, and acts on what it reads: answers
    input, collects results, settles the handle. When the client closes, the poller and every
    request it started end with it.
    """

    def __init__(self, connection: Connection, finish: Finisher) -> None:
        self._connection = connection
        #: The connection's secrets, masked in what a task's server text shows (protocol/_secrets).
        self.secrets = connection.secrets
        self._finish = finish
        self._handles: dict[str, TaskHandle] = {}
        self._followed: set[TaskHandle] = set()
        self._group: anyio.abc.TaskGroup | None = None
        self._wake: anyio.Event | None = None
        self._scheduling = False  # is the poller (_schedule) running? It starts with a task to follow
        self._home = Home()  # where and in which context the poller starts (the tracker's own)
        self._listeners: list[Callable[[TaskHandle], None]] = []
        self.closed = False
        self.polls = 0  # tasks/get requests sent (tests and telemetry)
        # A server can send a malformed status once per notification: warned within a budget.
        self._warnings = LogBudget(logger, anyio.current_time, where=lambda: "tasks", noun="warnings")

    @property
    def flavour(self) -> Flavour | None:
        """The tasks flavour of the server as negotiated now (None: it offers no tasks)."""
        return flavour_of(self._connection.negotiated_era(), self._connection.server_capabilities())

    @property
    def handles(self) -> list[TaskHandle]:
        return list(self._handles.values())

    @property
    def following(self) -> int:
        """How many tasks are being polled now."""
        return len(self._followed)

    def on_change(self, callback: Callable[[TaskHandle], None]) -> Callable[[], None]:
        self._listeners.append(callback)

        def unhook() -> None:
            if callback in self._listeners:
                self._listeners.remove(callback)

        return unhook

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Follow tasks until the connection closes."""
        closed = anyio.Event()

        def on_state(state: str) -> None:
            if state == "closed":
                closed.set()

        unhook = self._connection.on_notification(self._on_notification)
        unhear = self._connection.on_state_change(on_state)
        try:
            async with anyio.create_task_group() as group:
                self._group = group
                self._home.settle(group)
                # The poller starts with the first task to follow and the warnings' summary task
                # with the first warning held back: a client with no tasks runs neither.
                self._warnings.attach(group)
                self._kick()  # tasks adopted before it ran
                task_status.started()
                if self._connection.state == "closed":
                    closed.set()
                await closed.wait()
                group.cancel_scope.cancel()
        finally:
            unhook()
            unhear()
            self._warnings.attach(None)
            self._warnings.close()
            self.closed = True
            self._group = None
            self._home.settle(None)
            self._scheduling = False
            for handle in list(self._handles.values()):
                handle._notify()  # wake every waiter: they raise "closed"

    # --- handles ------------------------------------------------------------------------------

    def adopt(
        self, state: TaskState, tool: str | None, flavour: Flavour, *, follow: bool = True
    ) -> TaskHandle:
        """The handle of a task (the known one, updated, or a new one), followed unless told not."""
        handle = self._handles.get(state.task_id)
        if handle is None:
            handle = TaskHandle(self, state, tool, flavour)
            # This reading is fresh: the first poll waits the interval, as every later one does.
            handle._due = anyio.current_time() + next_poll_delay(state)
            self._handles[state.task_id] = handle
            self._forget_oldest()
            self.changed(handle)
        elif tool and handle.tool is None:
            handle.tool = tool
        self.absorb(handle, state)
        if follow:
            self.follow(handle)
        return handle

    def _forget_oldest(self) -> None:
        """Keep at most ``_MAX_KEPT`` handles: the oldest finished ones go first (a notebook that
        runs thousands of task calls must not keep every result). Running tasks are never dropped."""
        excess = len(self._handles) - _MAX_KEPT
        if excess <= 0:
            return
        for task_id in [t for t, h in self._handles.items() if h._settled][:excess]:
            del self._handles[task_id]

    def follow(self, handle: TaskHandle) -> None:
        if handle._settled or handle in self._followed or self.closed:
            return
        self._followed.add(handle)
        self._act_on(handle)
        self._kick()

    def changed(self, handle: TaskHandle) -> None:
        for listener in list(self._listeners):
            try:
                listener(handle)
            except Exception:
                logger.exception("a task listener raised; ignored")

    def absorb(self, handle: TaskHandle, state: TaskState) -> None:
        """Take a reading of the task, from a poll, a notification or an answer."""
        handle._update(state)
        if handle in self._followed:
            self._act_on(handle)
        elif handle.flavour == "extension" or handle.status == "cancelled":
            self._settle_from_state(handle)  # free: nothing to fetch

    async def fetch(self, task_id: str, *, timeout: float | None = None) -> TaskState:
        self.polls += 1
        raw = await self._connection.request(
            "tasks/get", {"taskId": task_id}, timeout=timeout, label=f"tasks/get {task_id!r}"
        )
        return parse_task(raw, self._flavour_for(task_id))

    async def cancel(self, handle: TaskHandle, *, timeout: float | None = None) -> None:
        try:
            raw = await self._connection.request(
                "tasks/cancel",
                {"taskId": handle.task_id},
                timeout=timeout,
                label=f"tasks/cancel {handle.task_id!r}",
            )
        except McpError as exc:
            if exc.kind != "server":
                raise
            # Already ended (the server refuses to cancel a finished task) or unknown: read it.
            logger.debug("tasks/cancel of %r refused: %s", handle.task_id, exc)
            await self._read_now(handle, timeout)
            return
        if handle.flavour == "core" and "taskId" in raw:
            self.absorb(handle, parse_task(raw, "core"))
        else:
            await self._read_now(handle, timeout)
        self.follow(handle)

    async def _read_now(self, handle: TaskHandle, timeout: float | None) -> None:
        try:
            self.absorb(handle, await self.fetch(handle.task_id, timeout=timeout))
        except McpError as exc:
            if not is_unknown_task(exc):
                raise
            self._lose(handle, exc)

    def _flavour_for(self, task_id: str) -> Flavour:
        handle = self._handles.get(task_id)
        if handle is not None:
            return handle.flavour
        flavour = self.flavour
        if flavour is None:
            raise McpError("invalid", "this server offers no tasks")
        return flavour

    # --- the poller ---------------------------------------------------------------------------

    def _kick(self) -> None:
        if self._wake is not None:
            self._wake.set()
        elif self._followed and not self._scheduling:
            # In the tracker's context, not the caller's that followed the task: the poller
            # outlives that call, and a question it finds later belongs to no cell.
            self._scheduling = self._home.start_soon(self._schedule)

    async def _schedule(self) -> None:
        """Start each followed task's poll when it is due; sleep until the next one (or a kick).

        Ends when no task is followed (the next :meth:`follow` starts it again), so an idle client
        holds no poller task.
        """
        try:
            await self._poll_while_following()
        finally:
            self._wake = None
            self._scheduling = False

    async def _poll_while_following(self) -> None:
        while True:
            now = anyio.current_time()
            soonest = math.inf
            for handle in list(self._followed):
                if handle._settled:
                    self._followed.discard(handle)
                elif handle._polling:
                    continue
                elif handle._due <= now:
                    handle._polling = True
                    self._spawn(self._poll, handle)
                else:
                    soonest = min(soonest, handle._due)
            if not self._followed:
                return
            wake = self._wake = anyio.Event()
            with anyio.move_on_after(soonest - now):
                await wake.wait()

    def _spawn(self, fn: Callable[[TaskHandle], Any], handle: TaskHandle) -> None:
        if self._group is not None:
            self._group.start_soon(fn, handle)

    async def _poll(self, handle: TaskHandle) -> None:
        try:
            state = await self.fetch(handle.task_id)
        except McpError as exc:
            if exc.kind == "closed":
                return
            if is_unknown_task(exc):
                self._lose(handle, exc)
                return
            handle._failures += 1
            handle._due = anyio.current_time() + next_poll_delay(handle.state, failures=handle._failures)
            logger.debug("polling task %r failed (%s); trying again", handle.task_id, exc)
            return
        finally:
            handle._polling = False
            self._kick()
        handle._failures = 0
        handle._due = anyio.current_time() + next_poll_delay(state)
        self.absorb(handle, state)

    def _on_notification(self, message: Notification) -> None:
        if message.method not in _STATUS_METHODS:
            return
        params = message.params if isinstance(message.params, dict) else {}
        task_id = params.get("taskId")
        handle = self._handles.get(task_id) if isinstance(task_id, str) else None
        if handle is None:
            return  # a task this client does not know: nothing to update
        try:
            state = parse_task(params, handle.flavour)
        except McpError as exc:
            self._warnings.log(
                logging.WARNING,
                "malformed task status",
                "ignored a malformed task status notification: %s",
                exc,  # str(McpError) shows the server's escapes as text
            )
            return
        interval = next_poll_delay(state)
        handle._due = max(handle._due, anyio.current_time() + max(2 * interval, _PUSH_QUIET))
        self.absorb(handle, state)
        self._kick()

    def _act_on(self, handle: TaskHandle) -> None:
        """What a followed task's latest reading calls for, beyond recording it."""
        if handle._settled:
            self._followed.discard(handle)
            return
        status = handle.status
        if handle.flavour == "core":
            # tasks/result blocks until the end, and carries the server's requests for input.
            blocked = handle._stuck is not None and status == "input_required"
            if status in ("input_required", "completed", "failed") and not handle._collecting and not blocked:
                handle._collecting = True
                self._spawn(self._collect, handle)
            elif status == "cancelled":
                handle._settle()
            return
        if status == "input_required":
            requests = handle.state.input_requests or {}
            fresh = {key: value for key, value in requests.items() if key not in handle._answered}
            if fresh and not handle._answering:
                handle._answering = True
                self._spawn(functools.partial(self._answer, requests=fresh), handle)
        else:
            self._settle_from_state(handle)

    def _settle_from_state(self, handle: TaskHandle) -> None:
        """Settle an extension task whose reading carries its outcome (or a cancelled one)."""
        state = handle.state
        if state.status == "cancelled":
            handle._settle()
        elif state.status == "completed" and handle.flavour == "extension":
            if state.result is None:
                handle._settle(
                    error=McpError("protocol", f"task {state.task_id!r} completed without a result")
                )
            else:
                self._settle_with(handle, state.result)
        elif state.status == "failed" and handle.flavour == "extension":
            error = McpError.from_jsonrpc(state.error, context=f"task {state.task_id!r} failed: ")
            if state.error is None:
                message = state.status_message or "no reason given"
                error = McpError("server", f"task {state.task_id!r} failed: {message}")
            handle._settle(error=self.secrets.mask_error(error))

    def _settle_with(self, handle: TaskHandle, raw: dict[str, Any]) -> None:
        try:
            result = self._finish(handle, raw)
        except McpError as exc:
            handle._settle(error=exc)
        else:
            handle._settle(result=result)

    async def _answer(self, handle: TaskHandle, requests: dict[str, Any]) -> None:
        """Answer an extension task's input requests through the handlers (``tasks/update``)."""
        label = f"task {handle.task_id!r}"
        try:
            responses = await self._connection.fulfil(requests, label)
            await self._connection.request(
                "tasks/update",
                {"taskId": handle.task_id, "inputResponses": responses},
                label=f"tasks/update {handle.task_id!r}",
            )
            handle._answered.update(requests)
        except McpError as exc:
            if exc.kind == "closed":
                return
            handle._answered.update(requests)  # asking again would fail the same way
            handle._block(_no_input(handle, exc))
        finally:
            handle._answering = False
            handle._due = anyio.current_time()  # read the task again now
            self._kick()

    async def _collect(self, handle: TaskHandle) -> None:
        """Fetch a core task's outcome with the blocking ``tasks/result`` (input comes through it)."""
        timeout = max(handle.ttl or 0.0, 60.0) if handle.ttl else _COLLECT_TIMEOUT
        try:
            raw = await self._connection.request(
                "tasks/result",
                {"taskId": handle.task_id},
                timeout=timeout,
                label=f"tasks/result {handle.task_id!r}",
            )
        except McpError as exc:
            handle._collecting = False
            if exc.kind == "closed":
                return
            if exc.kind != "server":
                logger.debug("tasks/result of %r failed (%s); polling on", handle.task_id, exc)
                return
            await self._settle_failed(handle, exc)
            return
        if not handle.state.terminal:
            try:
                self.absorb(handle, await self.fetch(handle.task_id))
            except McpError as exc:
                logger.debug("reading task %r after its result failed: %s", handle.task_id, exc)
            if not handle.state.terminal:
                handle._update(dataclasses.replace(handle.state, status="completed"))
        if handle.status == "cancelled":
            handle._settle()
        else:
            self._settle_with(handle, _without_related_task(raw))

    async def _settle_failed(self, handle: TaskHandle, error: McpError) -> None:
        """tasks/result answered an error: the task failed, was cancelled meanwhile, or still runs
        on the server (it waits for input this client could not give)."""
        try:
            handle._update(await self.fetch(handle.task_id))
        except McpError as exc:
            if is_unknown_task(exc):
                self._lose(handle, exc)
                return
        if handle.status == "cancelled":
            handle._settle()
        elif handle.state.terminal:
            failure = f"task {handle.task_id!r} failed: {error.message}"
            handle._settle(error=McpError(error.kind, failure, code=error.code, data=error.data))
        elif handle.status == "input_required":
            # Not a failure the server reported: say so on the handle, and try again only once the
            # task moves on (the status change clears the block).
            handle._block(_no_input(handle, error))
        else:
            logger.debug("tasks/result of %r failed while it is %s: %s", handle.task_id, handle.status, error)

    def _lose(self, handle: TaskHandle, error: McpError) -> None:
        message = (
            f"the server no longer knows task {handle.task_id!r} (its ttl passed, or the server "
            f"restarted): {error.message}"
        )
        if not handle.state.terminal:
            handle._update(dataclasses.replace(handle.state, status_message=message))
        handle._settle(error=McpError("server", message, code=error.code))


def _no_input(handle: TaskHandle, error: McpError) -> McpError:
    """The error of a task that waits for input this client could not give, saying what to do."""
    return McpError(
        error.kind,
        f"task {handle.task_id!r} ({handle.tool or 'tool unknown'}) needs input that this client could "
        f"not give ({error.message}); give the Client an elicitation= (or sampling=) handler, or "
        "cancel the task",
        code=error.code,
    )


def _without_related_task(raw: dict[str, Any]) -> dict[str, Any]:
    """A tasks/result answer is the CallToolResult; its ``_meta`` may name the task (dropped)."""
    meta = raw.get("_meta")
    if isinstance(meta, dict) and "io.modelcontextprotocol/related-task" in meta:
        rest = {k: v for k, v in meta.items() if k != "io.modelcontextprotocol/related-task"}
        raw = {**raw, "_meta": rest} if rest else {k: v for k, v in raw.items() if k != "_meta"}
    return raw
