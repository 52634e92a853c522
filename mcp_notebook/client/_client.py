"""The async public API: :class:`Client`.

A ``Client`` owns one :class:`~mcp_notebook.connection.Connection` and one
:class:`~mcp_notebook.live.LiveState` (cached lists, subscriptions, events), and turns dict results
into the typed objects of :mod:`mcp_notebook.results`. It checks tool arguments against the
cached tool's ``inputSchema`` before sending.

Lifetime: ``async with Client(...) as client`` or ``await client.connect()`` ... ``await
client.aclose()``. The connection runs in a task owned by the client, not by the task that called
``connect()`` (on asyncio a loop task, on trio a system task), so a client connected in one
notebook cell can be used and closed in later ones (each cell is a task of its own), and
``connect()`` leaves no task group open in its caller: a cancel scope around it (``with
fail_after(5): await client.connect()``) exits cleanly. ``aclose()`` stops that task and waits for
it.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import anyio

from ..connection import (
    ClientHandlers,
    Connection,
    ConnectionOptions,
    ConnectionState,
    ConnectionStats,
    GuardedProgress,
    Handler,
    NotificationQueue,
    ProgressCallback,
)
from ..protocol.errors import McpError
from ..protocol.http_binding import is_http_url
from ..protocol.tasks import (
    TASKS_EXTENSION,
    Flavour,
    TaskState,
    created_task,
    needs_tasks_extension,
    parse_task,
    run_as_task,
    task_mode,
)
from ..protocol.versions import Era
from ..transports.base import Transport
from ..transports.inprocess import is_sdk_server, sdk_server_transport
from ..transports.memory import MemoryTransport
from ..transports.stdio import DEFAULT_MAX_MESSAGE_BYTES, StdioTransport
from ._arguments import MISSING, ArgumentValidator, OutputValidator
from ._cache import KINDS, Freshness
from ._live import Event, LiveState
from ._owned import OwnedTask, spawn_owned
from ._results import (
    Completion,
    Prompt,
    PromptResult,
    Resource,
    ResourceContents,
    ResourceTemplate,
    Tool,
    ToolResult,
)
from ._task_handles import TaskHandle, TaskTracker

if TYPE_CHECKING:  # httpx costs ~50 ms to import; a stdio-only user never pays for it
    import httpx

__all__ = ["Client"]

logger = logging.getLogger("mcp_notebook.client")

#: The share of a call's deadline that the tool list fetched for its checks may use: the call is
#: the point, and keeps the rest (one deadline for both, never one each).
_LIST_SHARE = 0.5
#: Time spent on the list below which a timeout's message does not mention the list.
_LISTED = 0.01


class Client:
    """A client for one MCP server.

    ``target`` is the server: a command string or argv list (stdio), an ``http(s)://`` URL
    (Streamable HTTP of either era, or the older HTTP+SSE, found automatically), a
    :class:`Transport`, an in-process official-SDK server object, or an ``async def
    serve(incoming, outgoing)`` function.

    For a URL, ``headers`` go on every request and ``auth`` is a bearer token string,
    :class:`mcp_notebook.auth.OAuth` or any ``httpx.Auth``; neither is ever shown. Pass
    ``http_client`` to use your own ``httpx.AsyncClient`` (proxies, certificates); for the
    binding, TLS and timeouts give a :class:`~mcp_notebook.transports.http.HttpTransport` instead.

    ``protocol`` is "auto" (probe the modern ``server/discover``, fall back to the ``initialize``
    handshake), "modern", "legacy" or a version string to pin. ``timeout`` is every request's
    default deadline in seconds. A server started from a command inherits only an allow-list of
    this process's environment (``PATH``, ``HOME``, locale, temp dir; ``inherit_env=True`` passes
    all of it); ``env`` is added on top (its values are secrets: never shown); ``cwd`` is its
    working directory.

    ``sampling``, ``elicitation`` and ``roots`` are handlers (sync or async callables taking the
    request's params); giving one declares the capability. ``roots`` may also be a list of paths
    or URIs. Further keyword options are those of :class:`ConnectionOptions` (``max_in_flight``,
    ``reconnect``, ``probe_timeout``, ...); an unknown or invalid option raises at once.
    """

    def __init__(
        self,
        target: str | Sequence[str] | Transport | Any,
        *,
        protocol: str = "auto",
        timeout: float = 60.0,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        sampling: Handler | None = None,
        elicitation: Handler | None = None,
        roots: Handler | Sequence[Any] | None = None,
        elicitation_modes: Sequence[str] = ("form", "url"),
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        inherit_env: bool = False,
        shutdown_timeout: float = 2.0,
        eager_lists: bool = False,
        list_changed_window: float = 0.25,
        headers: Mapping[str, str] | None = None,
        auth: str | httpx.Auth | None = None,
        http_client: httpx.AsyncClient | None = None,
        **options: Any,
    ) -> None:
        unknown = set(options) - ConnectionOptions.names()
        if unknown:
            raise TypeError(f"Client() got unknown option(s): {', '.join(sorted(unknown))}")
        options = _room_for_sign_in(auth, options)
        self._options = ConnectionOptions(protocol=protocol, timeout=timeout, **options)
        self._transport = _make_transport(
            target,
            env=env,
            cwd=cwd,
            max_message_bytes=max_message_bytes,
            inherit_env=inherit_env,
            shutdown_timeout=shutdown_timeout,
            headers=headers,
            auth=auth,
            http_client=http_client,
        )
        handlers = ClientHandlers(
            sampling=sampling, elicitation=elicitation, roots=roots, elicitation_modes=elicitation_modes
        )
        self._connection = Connection(self._transport, self._options, handlers)
        self._unhook_auth = _hold_deadlines_during_sign_in(auth, self._connection)
        self._live = LiveState(
            self._connection,
            {
                "tools": Tool.from_dict,
                "resources": Resource.from_dict,
                "resource_templates": ResourceTemplate.from_dict,
                "prompts": Prompt.from_dict,
            },
            eager=eager_lists,
            window=list_changed_window,
        )
        self._tasks = TaskTracker(self._connection, self._finish_task)
        self._task_only: set[str] = set()  # tools a server said run only as tasks (-32021)
        self._tool_index: tuple[list[Tool] | None, dict[str, Tool]] = (None, {})
        self._validator = ArgumentValidator()
        self._outputs = OutputValidator()
        self._host: OwnedTask | None = None
        self._connected = False

    # --- lifetime -------------------------------------------------------------------------------

    async def __aenter__(self) -> Client:
        await self.connect()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def connect(self) -> Client:
        """Start the server (or connect), negotiate, and return once ready; raise McpError if not."""
        if self._connection.state == "closed":
            raise McpError("closed", "this client was closed; create a new Client to connect again")
        if self._connected:
            return self
        self._connected = True
        try:
            await self._start_host_task()
        except BaseException:
            await self.aclose()
            raise
        return self

    async def _start_host_task(self) -> None:
        started = anyio.Event()
        failure: list[BaseException] = []

        async def run() -> None:
            try:
                async with anyio.create_task_group() as tg:
                    await tg.start(self._connection.run)
                    await tg.start(self._live.run)
                    await tg.start(self._tasks.run)
                    started.set()
            except anyio.get_cancelled_exc_class():
                # The event loop is shutting down with the client still open; the connection's
                # own cleanup (shielded) has already stopped the server.
                failure.append(McpError("closed", "the event loop stopped before the client connected"))
                logger.debug("the connection task of %s was cancelled", self._transport.describe())
                raise
            except BaseException as exc:
                failure.append(_unwrap(exc))
                if started.is_set():
                    logger.error("the connection task failed", exc_info=True)
            finally:
                started.set()

        # The connection outlives the cell that connected it (see _owned): a task of the client's.
        self._host = spawn_owned(run, name=f"mcp-notebook {self._transport.describe()}")
        await started.wait()
        if failure:
            raise failure[0]

    async def aclose(self) -> None:
        """Close the connection and stop the server (close stdin, wait, terminate). Idempotent."""
        self._unhook_auth()
        await self._connection.close()
        if self._host is not None:
            await self._host.stop(grace=self._options.connect_timeout + 10)

    # --- state ----------------------------------------------------------------------------------

    @property
    def status(self) -> ConnectionState:
        """connecting, negotiating, ready, reconnecting or closed."""
        return self._connection.state

    @property
    def closed_reason(self) -> McpError | None:
        return self._connection.closed_reason

    @property
    def last_error(self) -> McpError | None:
        """Why the connection was last lost (a crash, a dropped stream), even if it came back."""
        return self._connection.last_error

    @property
    def era(self) -> Era | None:
        negotiated = self._connection.negotiated
        return negotiated.era if negotiated else None

    @property
    def protocol_version(self) -> str | None:
        negotiated = self._connection.negotiated
        return negotiated.version if negotiated else None

    @property
    def server_info(self) -> dict[str, Any]:
        negotiated = self._connection.negotiated
        return dict(negotiated.server_info) if negotiated else {}

    @property
    def server_capabilities(self) -> dict[str, Any]:
        negotiated = self._connection.negotiated
        return dict(negotiated.capabilities) if negotiated else {}

    @property
    def instructions(self) -> str | None:
        negotiated = self._connection.negotiated
        return negotiated.instructions if negotiated else None

    @property
    def stderr(self) -> list[str]:
        """The server's recent stderr lines (stdio), newest last."""
        return self._transport.recent_stderr()

    @property
    def stats(self) -> ConnectionStats:
        return self._connection.stats()

    @property
    def connection(self) -> Connection:
        """The underlying connection (state listeners, notification queues) for library code."""
        return self._connection

    def notifications(self, maxsize: int = 1000) -> NotificationQueue:
        """Server notifications from now on, as an async iterator (and async context manager).

        ``list_changed`` bursts arrive coalesced (the first at once, then one per window). The
        buffer holds ``maxsize`` notifications; when a slow consumer lets it fill, the oldest is
        dropped and counted in the queue's ``dropped``: the newest state of a server is what
        matters. Progress is not here (it goes to the call that asked for it).
        """
        return self._live.notifications(maxsize)

    def on_event(self, hook: Callable[[Event], Any]) -> Callable[[], None]:
        """Call ``hook(event)`` (sync or async) for telemetry; returns a function that unhooks it.

        Events: state transitions, request_start and request (method, duration, outcome), cancel,
        late_response, notification, cache_refresh, subscription. They carry ids, method names,
        durations and outcomes, never arguments, results, headers or tokens, and are also logged
        at DEBUG on the ``mcp_notebook.events`` logger. Hooks run in a task of their own.
        """
        return self._live.on_event(hook)

    # --- cached lists and subscriptions ---------------------------------------------------------

    @property
    def cached_tools(self) -> list[Tool] | None:
        """The last tool list fetched (None before the first); kept fresh by the server's notices."""
        return self._live.cached("tools")

    @property
    def cached_resources(self) -> list[Resource] | None:
        return self._live.cached("resources")

    @property
    def cached_resource_templates(self) -> list[ResourceTemplate] | None:
        return self._live.cached("resource_templates")

    @property
    def cached_prompts(self) -> list[Prompt] | None:
        return self._live.cached("prompts")

    def freshness(self, kind: str = "tools") -> Freshness:
        """How fresh a cached list is: "tools", "resources", "resource_templates" or "prompts"."""
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
        return self._live.freshness(kind)

    @property
    def refresh_counts(self) -> dict[str, int]:
        """How often each list was re-fetched in the background (after changes or reconnects)."""
        return dict(self._live.refreshes)

    @property
    def subscriptions(self) -> frozenset[str]:
        """The resource URIs subscribed to (kept across reconnects)."""
        return self._live.subscriptions

    async def subscribe(self, uri: str, *, timeout: float | None = None) -> None:
        """Receive ``notifications/resources/updated`` for ``uri`` (through ``notifications()``).

        Legacy servers get ``resources/subscribe``; on modern ones the client's listen stream is
        re-opened with the URI and this returns once the server acknowledged it. Survives
        reconnects.
        """
        await self._live.subscribe(uri, timeout=timeout)

    async def unsubscribe(self, uri: str, *, timeout: float | None = None) -> None:
        await self._live.unsubscribe(uri, timeout=timeout)

    def describe(self) -> str:
        """The server as a short string: its command line or its URL (never headers or env values)."""
        return self._transport.describe()

    def __repr__(self) -> str:
        parts = [repr(self._transport.describe()), self.status]
        if self.era:
            parts.append(f"{self.era} {self.protocol_version}")
        name = self.server_info.get("name")
        if name:
            parts.append(f"server={name!r}")
        return f"<Client {' '.join(str(p) for p in parts)}>"

    # --- requests -------------------------------------------------------------------------------

    async def list_tools(
        self, *, refresh: bool = False, timeout: float | None = None, include_app_only: bool = False
    ) -> list[Tool]:
        """All tools (every page), from the cache while it is fresh unless ``refresh``.

        Tools only an MCP App's View may call (``_meta.ui.visibility == ["app"]``) are left out
        unless ``include_app_only``; they stay in the cache and :meth:`call_tool` still calls them.
        """
        tools = await self._live.get("tools", refresh=refresh, timeout=timeout)
        return tools if include_app_only else [tool for tool in tools if not tool.app_only]

    async def list_resources(self, *, refresh: bool = False, timeout: float | None = None) -> list[Resource]:
        return await self._live.get("resources", refresh=refresh, timeout=timeout)

    async def list_resource_templates(
        self, *, refresh: bool = False, timeout: float | None = None
    ) -> list[ResourceTemplate]:
        return await self._live.get("resource_templates", refresh=refresh, timeout=timeout)

    async def list_prompts(self, *, refresh: bool = False, timeout: float | None = None) -> list[Prompt]:
        return await self._live.get("prompts", refresh=refresh, timeout=timeout)

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
        validate: bool = True,
        raise_on_error: bool = False,
        task: bool | None = None,
    ) -> ToolResult:
        """Call a tool. ``progress(progress, total, message)`` receives the server's progress.

        A tool that fails reports ``is_error=True`` in its result; pass ``raise_on_error=True`` to
        get an ``McpError(kind="server")`` instead. With ``validate`` (the default) the arguments
        are checked against the tool's inputSchema first, and a mismatch raises
        ``McpError(kind="invalid")`` without sending anything; and when the tool declares an
        outputSchema, a successful result must carry ``structuredContent`` that matches it, or the
        call raises ``McpError(kind="protocol")`` naming the first violations (never the values).

        A tool that runs as a task (``execution.taskSupport`` "required", or one the server runs
        only as a task) is started as one and followed to its end, transparently: the result is
        the same. ``task=True`` runs an "optional" tool as a task too; ``task=False`` refuses to.
        For a task, ``timeout`` bounds the whole wait only when given (the task's own ttl bounds
        it otherwise), ``progress`` receives its status messages, and cancelling or timing out
        the call cancels the task; :meth:`start_tool` keeps a task running instead.

        ``timeout`` is one deadline for the whole call: when the tool list must be fetched first
        (to check the arguments), that fetch may use half of it and the call has the rest. A list
        that cannot be fetched in time is logged as a warning naming the tool, and the call goes
        ahead unchecked.
        """
        began = anyio.current_time()
        answer = await self._start_call(
            name, arguments, timeout=timeout, validate=validate, progress=progress, task=task
        )
        if isinstance(answer, TaskHandle):
            left = max(timeout - (anyio.current_time() - began), 0.0) if timeout is not None else None
            return await self._follow_call(
                answer, timeout=left, budget=timeout, progress=progress, raise_on_error=raise_on_error
            )
        return self._tool_result(name, answer, validate=validate, raise_on_error=raise_on_error)

    async def start_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        validate: bool = True,
        ttl: float | None = None,
    ) -> TaskHandle:
        """Start a tool as a task and return at once with its :class:`TaskHandle`.

        The handle is followed (polled, its input requests answered by the client's handlers)
        until the task ends, whoever waits on it; ``await handle.result()`` waits for the result.
        ``ttl`` (seconds) asks a 2025-11-25 server to keep the task that long; the server may
        choose otherwise. Raises McpError(kind="invalid") when the server offers no tasks or the
        tool does not run as one. ``timeout`` bounds the request that starts the task.
        """
        answer = await self._start_call(
            name, arguments, timeout=timeout, validate=validate, task=True, ttl=ttl
        )
        if isinstance(answer, TaskHandle):
            return answer
        # The server ran it at once after all (it decides, in the extension): the result is kept
        # on a handle that is already done, so nothing is lost. Not the tracker's (it has no id to
        # be known by, and a completed extension reading without a result would settle it empty).
        handle = TaskHandle(
            self._tasks,
            TaskState(task_id="", status="completed", status_message="ran at once, not as a task"),
            name,
            self._tasks.flavour or "extension",
        )
        handle._settle(result=self._tool_result(name, answer, validate=validate))
        return handle

    async def get_task(self, task_id: str, *, timeout: float | None = None) -> TaskHandle:
        """Attach to a task by id (one started earlier, in another cell, kernel or client).

        Returns its handle, read from the server now and followed to its end. Raises
        McpError(kind="server") when the server does not know the task (wrong id, ttl passed).
        """
        if not isinstance(task_id, str) or not task_id:
            raise TypeError("get_task() needs the task id as a non-empty string")
        flavour = self._require_tasks("get_task")
        state = await self._tasks.fetch(task_id, timeout=timeout)
        return self._tasks.adopt(state, None, flavour)

    async def list_tasks(self, *, timeout: float | None = None) -> list[TaskHandle]:
        """The server's tasks (``tasks/list``, every page), as handles; not followed until waited on.

        Only 2025-11-25 servers that declare ``tasks.list`` offer it; the 2026-07-28 extension
        has no list (keep the task ids: a handle's repr shows its own).
        """
        flavour = self._require_tasks("list_tasks")
        caps = self.server_capabilities.get("tasks")
        if flavour != "core" or not isinstance(caps, Mapping) or "list" not in caps:
            raise McpError(
                "invalid",
                "this server does not list tasks (tasks/list is a 2025-11-25 feature the server must "
                "declare); attach to a known task with get_task(task_id)",
            )
        handles: list[TaskHandle] = []
        cursor: str | None = None
        for _ in range(_MAX_TASK_PAGES):
            result = await self._connection.request(
                "tasks/list", {"cursor": cursor} if cursor else None, timeout=timeout
            )
            tasks = result.get("tasks")
            if not isinstance(tasks, list):
                raise McpError("protocol", "tasks/list answered without a 'tasks' list")
            for raw in tasks:
                handles.append(self._tasks.adopt(parse_task(raw, flavour), None, flavour, follow=False))
            cursor = result.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                break
        return handles

    @property
    def tasks(self) -> list[TaskHandle]:
        """Every task this client started or attached to, oldest first."""
        return self._tasks.handles

    @property
    def tasks_flavour(self) -> Flavour | None:
        """ "core" (2025-11-25 tasks), "extension" (io.modelcontextprotocol/tasks) or None."""
        return self._tasks.flavour

    def task_mode(self, tool: str | Tool) -> str | None:
        """How a listed tool may run: "required" (only as a task), "optional" (either; as a task
        with ``task=True``) or None (never as a task). From its ``execution.taskSupport``, or from
        the server having refused it once for want of a task."""
        name = tool.name if isinstance(tool, Tool) else tool
        listed = tool if isinstance(tool, Tool) else self._tool_named(name)
        return task_mode(
            self._tasks.flavour, listed.raw if listed else None, task_only=name in self._task_only
        )

    def on_task(self, hook: Callable[[TaskHandle], None]) -> Callable[[], None]:
        """Call ``hook(handle)`` when a task is first seen and after each change to any task.

        Runs in the client's event loop and must not block; returns a function that unhooks it.
        """
        return self._tasks.on_change(hook)

    def _require_tasks(self, what: str) -> Flavour:
        flavour = self._tasks.flavour
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
    ) -> dict[str, Any] | TaskHandle:
        """Check the call, then send ``tools/call`` as a task or not, as the server, the tool and
        ``task`` decide; return the plain result, or the handle of the task the server created."""
        self._check_call(name, arguments)
        arguments = dict(arguments or {})
        budget = self._options.request_timeout(timeout)
        started = anyio.current_time()
        deadline = started + budget
        tool = await self._tool_for_call(name, arguments, validate=validate, within=budget * _LIST_SHARE)
        listing = anyio.current_time() - started
        # The request's own timeout: what the list fetch left of the budget, to the instant (a
        # listing of a few ms given back used to make the call that much late).
        left = _left(deadline) if listing > 0 else budget
        flavour = self._tasks.flavour
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
        handle = self._tasks.adopt(state, name, flavour)
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
        tool = self._tool_named(name)
        output_schema = tool.output_schema if tool else None
        if validate and output_schema is not None and raw.get("isError") is not True:
            self._outputs.check(name, output_schema, raw.get("structuredContent", MISSING))
        tool_result = ToolResult.from_dict(raw, output_schema=output_schema)
        if raise_on_error and tool_result.is_error:
            raise McpError("server", f"tool {name!r} reported an error: {tool_result.text[:1000]}")
        return tool_result

    async def _tool_for_call(
        self, name: str, arguments: Mapping[str, Any], *, validate: bool, within: float
    ) -> Tool | None:
        """The tool as listed (fetching the list when it is not cached and we need it, for at
        most ``within`` seconds in all), with the arguments checked against its inputSchema when
        ``validate``.

        The list is needed to validate, and to know whether a 2025-11-25 tool runs as a task. A
        list that cannot be had is said, naming the tool (a warning, and an "unchecked_call"
        event for the hooks): a call that goes unchecked must not look like one that was checked.
        """
        tool = self._tool_named(name)
        needed = validate or self._tasks.flavour == "core"
        if tool is None and needed and not self._live.freshness("tools").fresh:
            try:
                # Every page of the list within one bound, not a timeout for each.
                with anyio.fail_after(within):
                    tools = await self.list_tools(timeout=within)
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
            tool = next((t for t in tools if t.name == name), None)
        if tool is not None and validate:
            self._validator.check(name, tool.input_schema, arguments)
        return tool

    def _unchecked(self, name: str, reason: str, validate: bool) -> None:
        what = "its arguments go unchecked" if validate else "whether it must run as a task is unknown"
        logger.warning("tools/call %r: %s, so %s", name, reason, what)
        self._live.emit("unchecked_call", tool=name, reason=reason)

    def _tool_named(self, name: str) -> Tool | None:
        tools = self._live.cached("tools")
        source, index = self._tool_index
        if tools is not source:
            index = {tool.name: tool for tool in tools or ()}
            self._tool_index = (tools, index)
        return index.get(name)

    async def read_resource(self, uri: str, *, timeout: float | None = None) -> ResourceContents:
        if not isinstance(uri, str) or not uri:
            raise TypeError("read_resource() needs the resource's URI as a string")
        result = await self._connection.request(
            "resources/read", {"uri": uri}, timeout=timeout, label="resources/read"
        )
        return ResourceContents.from_dict(result)

    async def get_prompt(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> PromptResult:
        """Get a prompt; argument values are strings by the spec (numbers and booleans are converted)."""
        params: dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = {str(k): _prompt_argument(k, v) for k, v in arguments.items()}
        result = await self._connection.request(
            "prompts/get", params, timeout=timeout, label=f"prompts/get {name!r}"
        )
        return PromptResult.from_dict(result)

    async def complete(
        self,
        ref: Mapping[str, Any] | Prompt | ResourceTemplate | str,
        argument: Mapping[str, Any] | tuple[str, str],
        context: Mapping[str, str] | None = None,
        *,
        timeout: float | None = None,
    ) -> Completion:
        """Complete an argument of a prompt or resource template.

        ``ref`` is a Prompt, a ResourceTemplate, a spec ref dict, a prompt name, or a template URI;
        ``argument`` is ``(name, partial_value)`` or ``{"name": ..., "value": ...}``; ``context``
        maps already-chosen arguments to their values.
        """
        params: dict[str, Any] = {"ref": _completion_ref(ref), "argument": _completion_argument(argument)}
        if context:
            params["context"] = {"arguments": {str(k): str(v) for k, v in context.items()}}
        result = await self._connection.request("completion/complete", params, timeout=timeout)
        return Completion.from_dict(result)

    async def ping(self, *, timeout: float | None = None) -> float:
        """Check the server answers; return the round trip in seconds.

        Legacy servers get ``ping``; the modern era removed it, so they get ``server/discover``.
        """
        start = anyio.current_time()
        if self.era == "modern":
            await self._connection.request("server/discover", None, timeout=timeout)
        else:
            await self._connection.request("ping", None, timeout=timeout)
        return anyio.current_time() - start


_MAX_TASK_PAGES = 1000


def _left(deadline: float) -> float:
    """The seconds left until ``deadline`` (a sliver once it has passed: the request then fails
    as timed out, the usual way)."""
    return max(deadline - anyio.current_time(), 0.001)


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


def _room_for_sign_in(auth: Any, options: dict[str, Any]) -> dict[str, Any]:
    """Give negotiation time for a person to sign in, unless the caller chose the timeouts.

    OAuth's human step happens inside the first request (the probe), whose usual deadlines are
    seconds. Over HTTP a server always answers the probe with some status, so waiting longer
    costs nothing there; the step itself is bounded by the OAuth object's ``authorize_timeout``.
    """
    wait = getattr(auth, "authorize_timeout", None)
    if not isinstance(wait, int | float) or isinstance(wait, bool):
        return options
    room = float(wait) + 30.0
    adjusted = dict(options)
    adjusted.setdefault("probe_timeout", room)
    adjusted.setdefault("connect_timeout", room)
    return adjusted


def _hold_deadlines_during_sign_in(auth: Any, connection: Connection) -> Callable[[], None]:
    """Pause the connection's request deadlines while ``auth`` waits for a person to sign in.

    A 401 in mid-session starts the sign-in inside whichever request met it, and the others wait
    for the token: without this, the person would have one request deadline (60 s by default) to
    finish, and every waiting request would time out. The sign-in is bounded by the OAuth object's
    own ``authorize_timeout``. Returns the function that unhooks it.
    """
    subscribe = getattr(auth, "on_user_step", None)
    if not callable(subscribe):
        return lambda: None
    held: list[Callable[[], None]] = []

    def changed(active: bool) -> None:
        if active:
            held.append(connection.hold_deadlines())
        elif held:
            held.pop()()

    unsubscribe: Callable[[], None] = subscribe(changed)

    def unhook() -> None:
        unsubscribe()
        while held:
            held.pop()()

    return unhook


def _http_auth(auth: str | httpx.Auth | None) -> httpx.Auth | None:
    """A string is a bearer token; anything else must already be an ``httpx.Auth``."""
    import httpx

    if auth is None or isinstance(auth, httpx.Auth):
        return auth
    if isinstance(auth, str):
        from ..auth import BearerToken

        token: httpx.Auth = BearerToken(auth)
        return token
    raise TypeError("auth must be a token string, mcp_notebook.auth.OAuth(...) or another httpx.Auth")


def _make_transport(
    target: Any,
    *,
    env: Mapping[str, str] | None,
    cwd: str | os.PathLike[str] | None,
    max_message_bytes: int,
    inherit_env: bool,
    shutdown_timeout: float,
    headers: Mapping[str, str] | None = None,
    auth: str | httpx.Auth | None = None,
    http_client: httpx.AsyncClient | None = None,
) -> Transport:
    if is_http_url(target):
        if env is not None or cwd is not None:
            raise ValueError("env= and cwd= apply only to a server started from a command, not to a URL")
        from ..transports.http import HttpTransport

        return HttpTransport(
            target,
            headers=headers,
            auth=_http_auth(auth),
            http_client=http_client,
            max_message_bytes=max_message_bytes,
        )
    if headers is not None or auth is not None or http_client is not None:
        raise ValueError("headers=, auth= and http_client= apply only to a server URL (http:// or https://)")
    if isinstance(target, str) or (
        isinstance(target, Sequence)
        and not isinstance(target, bytes)
        and all(isinstance(a, str | os.PathLike) for a in target)
    ):
        return StdioTransport(
            target,
            env=env,
            cwd=cwd,
            inherit_env=inherit_env,
            max_message_bytes=max_message_bytes,
            shutdown_timeout=shutdown_timeout,
        )
    if env is not None or cwd is not None:
        raise ValueError("env= and cwd= apply only to a server started from a command")
    if callable(getattr(target, "connect", None)) and callable(getattr(target, "describe", None)):
        return target  # type: ignore[no-any-return]
    if is_sdk_server(target):
        return sdk_server_transport(target)
    if callable(target):
        return MemoryTransport(target, name=getattr(target, "__name__", "in-memory server"))
    raise TypeError(
        f"cannot connect to {type(target).__name__}: give a command (string or argv list), "
        "a Transport, an SDK server object or an async serve(incoming, outgoing) function"
    )


def _unwrap(exc: BaseException) -> BaseException:
    """The single real error inside (possibly nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def _prompt_argument(name: Any, value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    raise TypeError(f"prompt argument {name!r} must be a string (prompt arguments are strings by the spec)")


def _completion_ref(ref: Any) -> dict[str, Any]:
    if isinstance(ref, Prompt):
        return {"type": "ref/prompt", "name": ref.name}
    if isinstance(ref, ResourceTemplate):
        return {"type": "ref/resource", "uri": ref.uri_template}
    if isinstance(ref, Mapping):
        if ref.get("type") not in ("ref/prompt", "ref/resource"):
            raise ValueError(
                "a completion ref dict needs type 'ref/prompt' (with name) or 'ref/resource' (with uri)"
            )
        return dict(ref)
    if isinstance(ref, str):
        if "://" in ref:
            return {"type": "ref/resource", "uri": ref}
        return {"type": "ref/prompt", "name": ref}
    raise TypeError(f"cannot use {type(ref).__name__} as a completion ref")


def _completion_argument(argument: Any) -> dict[str, str]:
    if isinstance(argument, tuple) and len(argument) == 2:
        return {"name": str(argument[0]), "value": str(argument[1])}
    if isinstance(argument, Mapping):
        if "name" in argument and "value" in argument:
            return {"name": str(argument["name"]), "value": str(argument["value"])}
        if len(argument) == 1:
            ((name, value),) = argument.items()
            return {"name": str(name), "value": str(value)}
    raise TypeError("argument must be (name, partial_value) or {'name': ..., 'value': ...}")
