"""Long-running tool calls as tasks for the demo server, in both wire flavours, on the SDK's seams.

Two incompatible designs of tasks are in the field (PROTOCOL.md §3.11, §4.5), and the demo server
speaks both, because one server process serves both protocol eras:

* the 2025-11-25 core tasks, on a legacy (``initialize``) connection: the server declares
  ``capabilities.tasks``, each task tool carries ``execution.taskSupport`` in ``tools/list``, a
  ``tools/call`` with ``params.task`` answers ``{"task": {...}}`` at once, and the client follows
  with ``tasks/get``, the blocking ``tasks/result`` (which also carries the server's own
  ``elicitation/create`` while the task waits for input), ``tasks/list`` and ``tasks/cancel``;
  ``notifications/tasks/status`` goes to the connection that started the task;
* the 2026-07-28 extension ``io.modelcontextprotocol/tasks``, on a modern connection: the server
  lists the extension in ``server/discover``; when a request declares it, a task tool's
  ``tools/call`` answers ``resultType: "task"``, ``tasks/get`` inlines the outcome or the pending
  ``inputRequests``, ``tasks/update`` answers them, ``tasks/cancel`` asks to stop.

The task itself is one :class:`DemoTask` whichever era started it, kept in memory by the
:class:`TaskRunner` of one built server (it dies with the process; anyone who knows a task id may
read it, as is usual for a demo). Its body runs in a task group the runner opens inside the
server's lifespan, so a task outlives the request that started it but never the server: when the
lifespan ends, the bodies still running are cancelled.

How it hooks into the SDK (``mcp`` 2.3.0 implements neither flavour; its types exist):

* an :class:`~mcp.server.mcpserver.Extension` (``MCPServer(extensions=[...])``) advertises the
  extension, serves the ``tasks/*`` methods of both eras (each handler answers in its request's
  era), and intercepts ``tools/call`` at the handler layer, where the SDK shapes and stamps modern
  results itself;
* a :attr:`Server.middleware` entry takes a legacy ``tools/call`` that carries ``params.task``
  before the SDK validates its result: the handler layer checks legacy results against the
  2025-11-25 ``CallToolResult``, which a ``CreateTaskResult`` is not;
* a wrapped ``tools/list`` handler adds ``execution.taskSupport`` (legacy only: the modern tool
  shape has no such field and the SDK drops it), a wrapped lifespan owns the task group, and
  :meth:`TaskRunner.declare` adds ``capabilities.tasks`` to the handshake's options.

A tool body talks to its task through :func:`current_task`: ``await task.report(message)`` sets
the status message, ``await task.ask(message, Model)`` waits in ``input_required`` for the user's
answer to a form and returns the SDK's ``ElicitationResult``.
"""

from __future__ import annotations

import contextvars
import datetime
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Literal, TypeVar, cast

import anyio
import anyio.abc
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.elicitation import render_elicitation_schema
from mcp.server.lowlevel.server import Server
from mcp.server.mcpserver import (
    AcceptedElicitation,
    CancelledElicitation,
    DeclinedElicitation,
    ElicitationResult,
    Extension,
    MCPServer,
    MethodBinding,
    require_client_extension,
)
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.models import InitializationOptions
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    CallToolRequestParams,
    CallToolResult,
    ClientCapabilities,
    ElicitationCapability,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    GetTaskRequestParams,
    ListToolsResult,
    PaginatedRequestParams,
    RequestParams,
    RequestParamsMeta,
    ServerTasksCapability,
    ServerTasksRequestsCapability,
    TasksCallCapability,
    TasksCancelCapability,
    TasksListCapability,
    TasksToolsCapability,
    TextContent,
    ToolExecution,
)
from mcp_types import methods as wire
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, ValidationError

__all__ = [
    "DEFAULT_TTL_MS",
    "POLL_INTERVAL_MS",
    "TASKS_EXTENSION",
    "DemoTask",
    "TaskRunner",
    "current_task",
]

logger = logging.getLogger("mcp_notebook.demo.tasks")  # its name before issue #27 moved the module

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
RELATED_TASK = "io.modelcontextprotocol/related-task"
STATUS_NOTIFICATION = "notifications/tasks/status"

POLL_INTERVAL_MS = 250
"""How often a client should poll a task (``pollInterval`` / ``pollIntervalMs``)."""
DEFAULT_TTL_MS = 10 * 60 * 1000
"""How long a task is kept from its creation, unless a 2025-11-25 client asks otherwise."""
MIN_TTL_MS = 10 * 1000
MAX_TTL_MS = 60 * 60 * 1000
MAX_TASKS = 500
"""Tasks kept at once; the oldest finished ones make room, and a server full of running ones
refuses new ones."""
LIST_PAGE = 50
"""Tasks per ``tasks/list`` page."""
_NOTIFY_TIMEOUT = 2.0  # a peer that does not read must not hold a task up

Status = Literal["working", "input_required", "completed", "failed", "cancelled"]
TaskSupport = Literal["optional", "required"]
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})
_ACTIONS = frozenset({"accept", "decline", "cancel"})

FormT = TypeVar("FormT", bound=BaseModel)
_Ctx = ServerRequestContext[Any, Any]


def _now() -> str:
    """An ISO 8601 UTC timestamp with milliseconds, as the spec's examples write them."""
    stamp = datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


def _modern(ctx: _Ctx) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def _declares_extension(ctx: _Ctx) -> bool:
    """Whether this (modern) request's envelope lists the tasks extension."""
    return ctx.session.check_client_capability(ClientCapabilities(extensions={TASKS_EXTENSION: {}}))


def _connection_of(ctx: _Ctx) -> Any:
    """The SDK's per-connection object behind a request (it has no public handle)."""
    return ctx.session._connection  # pyright: ignore[reportPrivateUsage]


# ---------------------------------------------------------------------------------- one task


class _Input:
    """A question a task waits on: one elicitation form, answered once."""

    def __init__(self, key: str, message: str, form: type[BaseModel]) -> None:
        self.key = key
        self.message = message
        self.form = form
        self.requested_schema = render_elicitation_schema(form)
        self.answer: ElicitationResult[Any] | None = None
        self.answered = anyio.Event()
        self.asking = False  # a legacy tasks/result is asking its client right now

    def request(self) -> dict[str, Any]:
        """The question as an ``elicitation/create`` request (an extension ``inputRequests`` entry)."""
        return {
            "method": "elicitation/create",
            "params": {"mode": "form", "message": self.message, "requestedSchema": self.requested_schema},
        }

    def read(self, response: Any) -> ElicitationResult[Any]:
        """The answer in ``response`` (``{action, content?}``), checked against the form.

        Raises MCPError(-32602) for an answer that is not one: the task goes on waiting.
        """
        if not isinstance(response, Mapping) or response.get("action") not in _ACTIONS:
            raise MCPError(
                INVALID_PARAMS, f"the answer to {self.key!r} needs an action: accept, decline or cancel"
            )
        if response["action"] == "decline":
            return DeclinedElicitation()
        if response["action"] == "cancel":
            return CancelledElicitation()
        try:
            return AcceptedElicitation(data=self.form.model_validate(response.get("content")))
        except ValidationError:
            fields = ", ".join(self.requested_schema.get("properties", {}))
            raise MCPError(
                INVALID_PARAMS, f"the answer to {self.key!r} does not fill in the form (fields: {fields})"
            ) from None


class DemoTask:
    """One task: a tool call that runs on after the request that started it, in either era.

    The status is kept once; each era renders it in its own words (:meth:`core`, :meth:`created`,
    :meth:`detailed`). A completed call whose result has ``isError`` is ``failed`` in the 2025-11-25
    flavour (its spec says so) and ``completed`` with that result in the extension.
    """

    def __init__(self, tool: str, arguments: dict[str, Any], *, ttl_ms: int, notify_to: Any) -> None:
        self.task_id = str(uuid.uuid4())
        self.tool = tool
        self.arguments = arguments
        self.status: Status = "working"
        self.status_message: str | None = "Started."
        self.created_at = self.last_updated_at = _now()
        self.ttl_ms = ttl_ms
        self.expires = time.monotonic() + ttl_ms / 1000
        self.result: dict[str, Any] | None = None  # the CallToolResult, once completed
        self.error: dict[str, Any] | None = None  # the JSON-RPC error, once failed
        self.pending: _Input | None = None
        self.scope = anyio.CancelScope()
        self._changed = anyio.Event()
        self._asked = 0
        # The legacy connection that started the task hears its status changes (None: nobody).
        self._notify_to = notify_to

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    # --- the tool's side ----------------------------------------------------------------------

    async def report(self, message: str) -> None:
        """Say what the task is doing now (its status message)."""
        if not self.terminal:
            await self._set(message=message)

    async def ask(self, message: str, form: type[FormT]) -> ElicitationResult[FormT]:
        """Ask the user to fill in ``form`` (flat fields: strings, numbers, booleans, enums) and wait.

        The task is ``input_required`` until the answer comes: by ``tasks/update`` (extension), or
        through the ``elicitation/create`` that a ``tasks/result`` sends its client (2025-11-25).
        """
        self._asked += 1
        pending = _Input(f"input-{self._asked}", message, form)
        self.pending = pending
        await self._set(status="input_required", message=message)
        try:
            await pending.answered.wait()
        finally:
            if self.pending is pending:
                self.pending = None
        assert pending.answer is not None
        return pending.answer

    # --- the protocol's side ------------------------------------------------------------------

    async def answer(self, key: str, response: Any) -> bool:
        """Give the pending question ``key`` its answer; False when nothing waits on that key.

        Raises MCPError(-32602) when ``response`` does not answer the form.
        """
        pending = self.pending
        if pending is None or pending.key != key or pending.answered.is_set() or self.terminal:
            return False
        pending.answer = pending.read(response)
        pending.answered.set()
        self.pending = None
        await self._set(status="working", message=f"Got the answer ({pending.answer.action}).")
        return True

    async def cancel(self, message: str) -> bool:
        """End the task as cancelled and stop its body; False when it had already ended."""
        if self.terminal:
            return False
        self.scope.cancel()
        await self._set(status="cancelled", message=message)
        return True

    async def finish(
        self, *, result: dict[str, Any] | None = None, error: dict[str, Any] | None = None
    ) -> None:
        """Record the body's outcome, unless the task ended meanwhile (a cancelled task stays so)."""
        if self.terminal:
            return
        self.result, self.error = result, error
        if error is not None:
            await self._set(status="failed", message=str(error.get("message") or "The task failed."))
        elif result is not None and result.get("isError") is True:
            await self._set(status="completed", message="The tool reported an error.")
        else:
            await self._set(status="completed", message="Done.")

    def abandon(self, message: str) -> None:
        """End a task whose body was stopped from outside (the server is stopping, or the task's
        ttl passed) as cancelled, without a notification."""
        if not self.terminal:
            self.status, self.status_message, self.last_updated_at = "cancelled", message, _now()
            self.wake()

    async def changed(self) -> None:
        """Wait for the next change of status or status message."""
        await self._changed.wait()

    async def _set(self, *, status: Status | None = None, message: str | None = None) -> None:
        if status is not None:
            self.status = status
        if message is not None:
            self.status_message = message
        self.last_updated_at = _now()
        self.wake()
        if self._notify_to is not None:
            await self._notify(self._notify_to)

    def wake(self) -> None:
        """Wake whoever waits in :meth:`changed`."""
        changed, self._changed = self._changed, anyio.Event()
        changed.set()

    async def _notify(self, connection: Any) -> None:
        """``notifications/tasks/status`` to the legacy connection that started the task; best effort
        (the SDK drops it when the connection has no channel for it, e.g. no open GET stream)."""
        with anyio.move_on_after(_NOTIFY_TIMEOUT):
            try:
                await connection.notify(STATUS_NOTIFICATION, self.core())
            except Exception:
                logger.debug("could not send the status of task %s", self.task_id, exc_info=True)

    # --- renderings ----------------------------------------------------------------------------

    def core(self) -> dict[str, Any]:
        """The 2025-11-25 ``Task`` object (``tasks/get``, ``tasks/list``, status notifications)."""
        status = self.status
        if status == "completed" and self.result is not None and self.result.get("isError") is True:
            status = "failed"
        task: dict[str, Any] = {"taskId": self.task_id, "status": status}
        if self.status_message is not None:
            task["statusMessage"] = self.status_message
        task |= {
            "createdAt": self.created_at,
            "lastUpdatedAt": self.last_updated_at,
            "ttl": self.ttl_ms,
            "pollInterval": POLL_INTERVAL_MS,
        }
        return task

    def created(self) -> dict[str, Any]:
        """The extension's ``CreateTaskResult``: the task's fields flat, ``resultType: "task"``."""
        return self._extension_fields() | {"resultType": "task"}

    def detailed(self, version: str) -> dict[str, Any]:
        """The extension's ``tasks/get`` answer: the outcome inlined, or what the task waits for."""
        task = self._extension_fields() | {"resultType": "complete"}
        if self.status == "completed" and self.result is not None:
            task["result"] = wire.serialize_server_result("tools/call", version, self.result)
        elif self.status == "failed" and self.error is not None:
            task["error"] = self.error
        elif self.status == "input_required" and self.pending is not None:
            task["inputRequests"] = {self.pending.key: self.pending.request()}
        return task

    def _extension_fields(self) -> dict[str, Any]:
        task: dict[str, Any] = {"taskId": self.task_id, "status": self.status}
        if self.status_message is not None:
            task["statusMessage"] = self.status_message
        return task | {
            "createdAt": self.created_at,
            "lastUpdatedAt": self.last_updated_at,
            "ttlMs": self.ttl_ms,
            "pollIntervalMs": POLL_INTERVAL_MS,
        }

    def __repr__(self) -> str:
        return f"<DemoTask {self.task_id} {self.tool} {self.status}>"


class _NoTask:
    """What :func:`current_task` gives a tool that runs inline: reports go nowhere, asking fails."""

    async def report(self, message: str) -> None:
        return None

    async def ask(self, message: str, form: type[FormT]) -> ElicitationResult[FormT]:
        raise ToolError("this tool asks for input only when it runs as a task")


_CURRENT: contextvars.ContextVar[DemoTask | None] = contextvars.ContextVar("demo_task", default=None)


def current_task() -> DemoTask | _NoTask:
    """The task the calling tool body runs in, or a stand-in when it runs inline."""
    return _CURRENT.get() or _NoTask()


# ------------------------------------------------------------------------------- the runner


class _UpdateTaskParams(RequestParams):
    task_id: str
    input_responses: dict[str, Any]


class TaskRunner:
    """Every task of one demo server: starts them, runs their bodies, serves both flavours.

    Build it before the server (its :attr:`extension` goes into ``MCPServer(extensions=...)``),
    register task tools with :meth:`add_tool`, then :meth:`install` it on the built server.
    """

    def __init__(self) -> None:
        self.tasks: dict[str, DemoTask] = {}
        self.support: dict[str, TaskSupport] = {}
        self.extension = _TasksExtension(self)
        self._server: MCPServer | None = None
        # One task group per entered lifespan (stdio and HTTP: one; HTTP+SSE: one per stream),
        # with the lifespan state that requests served under it carry.
        self._groups: list[tuple[Any, anyio.abc.TaskGroup]] = []

    # --- setting up ---------------------------------------------------------------------------

    def add_tool(
        self, server: MCPServer, fn: Callable[..., Any], *, support: TaskSupport, **kwargs: Any
    ) -> None:
        """Register ``fn`` as a tool that runs as a task: always (``required``) or when asked."""
        server.add_tool(fn, **kwargs)
        self.support[kwargs.get("name") or fn.__name__] = support

    def install(self, server: MCPServer) -> None:
        """Hook the runner into ``server``: legacy task calls, ``tools/list``, the lifespan."""
        self._server = server
        lowlevel: Server[Any] = server._lowlevel_server  # pyright: ignore[reportPrivateUsage]
        lowlevel.middleware.append(self._legacy_task_call)

        listing = lowlevel.get_request_handler("tools/list")
        assert listing is not None, "MCPServer serves tools/list"
        list_tools = listing.handler

        async def list_tools_with_support(ctx: _Ctx, params: Any) -> HandlerResult:
            result = await list_tools(ctx, params)
            if isinstance(result, ListToolsResult):
                for tool in result.tools:
                    if tool.name in self.support:
                        tool.execution = ToolExecution(task_support=self.support[tool.name])
            return result

        lowlevel.add_request_handler("tools/list", listing.params_type, list_tools_with_support)

        sdk_lifespan = lowlevel.lifespan

        @asynccontextmanager
        async def lifespan(app: Server[Any]) -> AsyncIterator[Any]:
            async with sdk_lifespan(app) as state, self._running(state):
                yield state

        lowlevel.lifespan = lifespan

    def declare(self, options: InitializationOptions) -> InitializationOptions:
        """The handshake's options with ``capabilities.tasks`` (the legacy era's declaration)."""
        tasks = ServerTasksCapability(
            list=TasksListCapability(),
            cancel=TasksCancelCapability(),
            requests=ServerTasksRequestsCapability(tools=TasksToolsCapability(call=TasksCallCapability())),
        )
        capabilities = options.capabilities.model_copy(update={"tasks": tasks})
        return options.model_copy(update={"capabilities": capabilities})

    @asynccontextmanager
    async def _running(self, state: Any) -> AsyncIterator[None]:
        """The task group that task bodies run in while the server's lifespan lasts."""
        async with anyio.create_task_group() as group:
            entry = (state, group)
            self._groups.append(entry)
            try:
                yield
            finally:
                self._groups.remove(entry)
                group.cancel_scope.cancel()

    def _group_for(self, ctx: _Ctx) -> anyio.abc.TaskGroup:
        # A copy, newest first: reversed() of a list whose items hold Any is Any to mypy (overloads).
        for state, group in self._groups[::-1]:
            if state is ctx.lifespan_context:
                return group
        if self._groups:
            return self._groups[-1][1]
        raise MCPError(INTERNAL_ERROR, "this server runs no tasks now (its lifespan has not started)")

    # --- tasks ----------------------------------------------------------------------------------

    async def start(self, ctx: _Ctx, tool: str, arguments: Mapping[str, Any], *, ttl_ms: int) -> DemoTask:
        """Create a task for a call of ``tool`` and start its body; it is ``working`` on return."""
        group = self._group_for(ctx)
        self._forget_old()
        if len(self.tasks) >= MAX_TASKS:
            raise MCPError(INTERNAL_ERROR, f"{MAX_TASKS} tasks are running; try again when some have ended")
        notify_to = None if _modern(ctx) else _connection_of(ctx)
        task = DemoTask(tool, dict(arguments), ttl_ms=ttl_ms, notify_to=notify_to)
        self.tasks[task.task_id] = task
        group.start_soon(self._run, task, name=f"demo task {tool} {task.task_id}")
        return task

    def find(self, task_id: str) -> DemoTask:
        """The task with this id; MCPError(-32602) when there is none (never was, or expired)."""
        self._forget_old()
        task = self.tasks.get(task_id)
        if task is None:
            raise MCPError(INVALID_PARAMS, "Failed to retrieve task: Task not found")
        return task

    def _forget_old(self) -> None:
        """Drop the tasks whose ttl has passed (stopping any still running), then, if too many are
        kept, the oldest finished ones."""
        now = time.monotonic()
        for task in [t for t in self.tasks.values() if t.expires <= now]:
            task.scope.cancel()
            task.abandon("The task's ttl passed.")  # wakes a tasks/result still waiting on it
            del self.tasks[task.task_id]
        finished = [t for t in self.tasks.values() if t.terminal]
        for task in finished[: max(0, len(self.tasks) - MAX_TASKS + 1)]:
            del self.tasks[task.task_id]

    async def _run(self, task: DemoTask) -> None:
        """The task's body: the tool call, through the SDK as any call, outcome recorded once."""
        assert self._server is not None
        _CURRENT.set(task)
        outcome: dict[str, Any] = {}
        try:
            with task.scope:
                try:
                    answer = await self._server.call_tool(task.tool, task.arguments)
                except MCPError as exc:
                    outcome["error"] = exc.error.model_dump(mode="json", exclude_none=True)
                except Exception as exc:  # a tool error: an isError result, as a plain call gives
                    logger.info("Task %s (%s) failed: %r", task.task_id, task.tool, str(exc))
                    outcome["result"] = _error_result(str(exc))
                else:
                    if isinstance(answer, CallToolResult):
                        outcome["result"] = answer.model_dump(by_alias=True, mode="json", exclude_none=True)
                    else:
                        outcome["error"] = {"code": INTERNAL_ERROR, "message": "the tool asked for input"}
            if task.scope.cancelled_caught or task.terminal:
                return  # cancelled on request (already recorded), or it expired
            await task.finish(**outcome)
        except anyio.get_cancelled_exc_class():
            task.abandon("Stopped: the server shut down before the task finished.")
            raise

    # --- 2025-11-25: a tools/call with params.task (middleware, before the handler layer) -----------

    async def _legacy_task_call(self, ctx: _Ctx, call_next: CallNext) -> HandlerResult:
        params = ctx.params
        if (
            ctx.method != "tools/call"
            or ctx.request_id is None
            or _modern(ctx)
            or not isinstance(params, Mapping)
            or params.get("task") is None
            or not isinstance(params.get("name"), str)
            or not _connection_of(ctx).initialize_accepted
        ):
            return await call_next(ctx)
        name: str = params["name"]
        if name not in self.support:
            assert self._server is not None
            if self._server._tool_manager.get_tool(name) is None:  # pyright: ignore[reportPrivateUsage]
                return await call_next(ctx)  # unknown: the SDK says so, as for any call
            raise MCPError(
                METHOD_NOT_FOUND, f"Tool {name} does not support task augmentation (taskSupport: 'forbidden')"
            )
        request = params["task"]
        ttl = request.get("ttl") if isinstance(request, Mapping) else None
        if not isinstance(request, Mapping) or not (
            ttl is None or (isinstance(ttl, int) and not isinstance(ttl, bool) and ttl >= 0)
        ):
            raise MCPError(INVALID_PARAMS, "params.task must be an object with an optional ttl (ms)")
        arguments = params.get("arguments") or {}
        if not isinstance(arguments, Mapping):
            raise MCPError(INVALID_PARAMS, "params.arguments must be an object")
        ttl_ms = DEFAULT_TTL_MS if ttl is None else min(max(ttl, MIN_TTL_MS), MAX_TTL_MS)
        task = await self.start(ctx, name, arguments, ttl_ms=ttl_ms)
        return {"task": task.core()}

    # --- tools/call at the handler layer (the extension's interceptor) -------------------------------

    async def intercept(self, params: CallToolRequestParams, ctx: _Ctx, call_next: CallNext) -> HandlerResult:
        support = self.support.get(params.name)
        if support is None:
            return await call_next(ctx)
        if not _modern(ctx):
            # A legacy call without params.task (the middleware took those).
            if support == "required":
                return _error_result(
                    f"Tool {params.name} requires task augmentation (taskSupport: 'required'): "
                    "call it with params.task"
                )
            return await call_next(ctx)
        if not _declares_extension(ctx):
            if support == "required":
                require_client_extension(ctx, TASKS_EXTENSION)  # raises -32021, naming the extension
            return await call_next(ctx)  # an optional task tool runs inline
        task = await self.start(ctx, params.name, params.arguments or {}, ttl_ms=DEFAULT_TTL_MS)
        return task.created()

    # --- tasks/* (both eras; each answers in its request's era) ------------------------------------

    async def get_task(self, ctx: _Ctx, params: GetTaskRequestParams) -> HandlerResult:
        if _modern(ctx):
            require_client_extension(ctx, TASKS_EXTENSION)
            return self.find(params.task_id).detailed(ctx.protocol_version)
        return self.find(params.task_id).core()

    async def cancel_task(self, ctx: _Ctx, params: GetTaskRequestParams) -> HandlerResult:
        if _modern(ctx):
            require_client_extension(ctx, TASKS_EXTENSION)
            # Cooperative and idempotent: a task that has ended stays as it ended.
            await self.find(params.task_id).cancel("Cancelled at the client's request.")
            return {}
        task = self.find(params.task_id)
        if not await task.cancel("Cancelled at the client's request."):
            raise MCPError(INVALID_PARAMS, f"Cannot cancel task in terminal status: {task.core()['status']}")
        return task.core()

    async def update_task(self, ctx: _Ctx, params: _UpdateTaskParams) -> HandlerResult:
        """Extension only: answers to a task's ``inputRequests``; stale or unknown keys are ignored
        (a client may send an answer twice)."""
        require_client_extension(ctx, TASKS_EXTENSION)
        task = self.find(params.task_id)
        for key, response in params.input_responses.items():
            await task.answer(key, response)
        return {}

    async def task_result(self, ctx: _Ctx, params: GetTaskRequestParams) -> HandlerResult:
        """2025-11-25 only: wait for the end, asking this client for any input meanwhile, then answer
        what the call itself would have answered (its result, or its error)."""
        task = self.find(params.task_id)
        while not task.terminal:
            pending = task.pending
            if pending is not None and not pending.asking:
                await self._ask_client(ctx, task, pending)
            else:
                await task.changed()
        if task.error is not None:
            raise MCPError(int(task.error["code"]), str(task.error["message"]), task.error.get("data"))
        if task.result is None:
            raise MCPError(INTERNAL_ERROR, f"Task {task.task_id} was {task.status}: it has no result stored")
        result = wire.serialize_server_result("tools/call", ctx.protocol_version, task.result)
        meta = dict(result.get("_meta") or {})
        meta[RELATED_TASK] = {"taskId": task.task_id}
        return result | {"_meta": meta}

    async def _ask_client(self, ctx: _Ctx, task: DemoTask, pending: _Input) -> None:
        """Send the task's question to this client as ``elicitation/create``, during its
        ``tasks/result``, and give the task the answer. Raises what keeps the client from
        answering (the task goes on waiting for another ``tasks/result``)."""
        declared = ctx.session.client_capabilities is not None  # not on a stateless HTTP request
        if declared and not ctx.session.check_client_capability(
            ClientCapabilities(elicitation=ElicitationCapability())
        ):
            raise MCPError(
                INVALID_REQUEST,
                f"Task {task.task_id} needs the user's answer to a form, but this client did not declare "
                "elicitation",
            )
        pending.asking = True
        try:
            request = ElicitRequest(
                params=ElicitRequestFormParams(
                    message=pending.message,
                    requested_schema=pending.requested_schema,
                    # RequestParamsMeta is an open TypedDict (PEP 728 extra_items), which mypy does
                    # not read yet: it would refuse any key but progress_token.
                    _meta=cast(RequestParamsMeta, {RELATED_TASK: {"taskId": task.task_id}}),
                )
            )
            answer = await ctx.session.send_request(
                request, ElicitResult, metadata=ServerMessageMetadata(related_request_id=ctx.request_id)
            )
            await task.answer(pending.key, answer.model_dump(mode="json", exclude_none=True))
        finally:
            pending.asking = False
            if not pending.answered.is_set():
                task.wake()  # another tasks/result waiting meanwhile may ask its client now

    async def list_tasks(self, ctx: _Ctx, params: PaginatedRequestParams) -> HandlerResult:
        """2025-11-25 only: every kept task, oldest first, a page at a time."""
        self._forget_old()
        tasks = list(self.tasks.values())
        start = 0
        if params.cursor is not None:
            if not params.cursor.isdigit() or int(params.cursor) > len(tasks):
                raise MCPError(INVALID_PARAMS, "Invalid cursor")
            start = int(params.cursor)
        page: dict[str, Any] = {"tasks": [t.core() for t in tasks[start : start + LIST_PAGE]]}
        if start + LIST_PAGE < len(tasks):
            page["nextCursor"] = str(start + LIST_PAGE)
        return page


def _error_result(text: str) -> dict[str, Any]:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True).model_dump(
        by_alias=True, mode="json", exclude_none=True
    )


class _TasksExtension(Extension):
    """``io.modelcontextprotocol/tasks`` as the SDK's extension seam sees it: the methods and the
    ``tools/call`` interceptor, all answered by the :class:`TaskRunner`."""

    identifier = TASKS_EXTENSION

    def __init__(self, runner: TaskRunner) -> None:
        self._runner = runner

    def methods(self) -> Sequence[MethodBinding]:
        legacy = frozenset(HANDSHAKE_PROTOCOL_VERSIONS)
        modern = frozenset(MODERN_PROTOCOL_VERSIONS)
        runner = self._runner
        return (
            MethodBinding("tasks/get", GetTaskRequestParams, runner.get_task),
            MethodBinding("tasks/cancel", GetTaskRequestParams, runner.cancel_task),
            MethodBinding("tasks/update", _UpdateTaskParams, runner.update_task, protocol_versions=modern),
            MethodBinding("tasks/result", GetTaskRequestParams, runner.task_result, protocol_versions=legacy),
            MethodBinding("tasks/list", PaginatedRequestParams, runner.list_tasks, protocol_versions=legacy),
        )

    async def intercept_tool_call(
        self, params: CallToolRequestParams, ctx: _Ctx, call_next: CallNext
    ) -> HandlerResult:
        return await self._runner.intercept(params, ctx, call_next)
