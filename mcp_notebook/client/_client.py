"""The async public API: :class:`Client`.

A ``Client`` owns one :class:`~mcp_notebook.connection.Connection` and one
:class:`~mcp_notebook.client._live.LiveState` (cached lists, subscriptions, events), and turns dict results
into the typed objects of :mod:`mcp_notebook.client._results`. It checks tool arguments against the
cached tool's ``inputSchema`` before sending.

Lifetime: ``async with Client(...) as client`` or ``await client.connect()`` ... ``await
client.aclose()``. The connection runs in a task owned by the client, not by the task that called
``connect()`` (on asyncio a loop task, on trio a system task), so a client connected in one
notebook cell can be used and closed in later ones (each cell is a task of its own), and
``connect()`` leaves no task group open in its caller: a cancel scope around it (``with
fail_after(5): await client.connect()``) exits cleanly. ``aclose()`` stops that task and waits for
it.

Tool calls and tasks are :mod:`._calls` (one :class:`Calls` per client), and how a target becomes a
transport is :mod:`._targets`; neither imports this module.
"""

from __future__ import annotations

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
    Handler,
    NotificationQueue,
    ProgressCallback,
)
from ..connection._model_sampling import SamplingModel
from ..protocol._errors import McpError
from ..protocol._task_shapes import Flavour
from ..protocol._versions import Era
from ..transports._base import Transport
from ..transports._stdio import DEFAULT_MAX_MESSAGE_BYTES
from ._cache import KINDS, Freshness
from ._calls import Calls
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
from ._targets import hold_deadlines_during_sign_in, make_transport, room_for_sign_in
from ._task_handles import TaskHandle

if TYPE_CHECKING:  # httpx costs ~50 ms to import; a stdio-only user never pays for it
    import httpx

__all__ = ["Client"]

logger = logging.getLogger("mcp_notebook.client")


class Client:
    """A client for one MCP server.

    ``target`` is the server: a command string or argv list (stdio), an ``http(s)://`` URL
    (Streamable HTTP of either era, or the older HTTP+SSE, found automatically), a
    :class:`Transport`, an in-process official-SDK server object, or an ``async def
    serve(incoming, outgoing)`` function.

    For a URL, ``headers`` go on every request and ``auth`` is a bearer token string,
    :class:`mcp_notebook.auth.OAuth` or any ``httpx.Auth``; neither is ever shown. Pass
    ``http_client`` to use your own ``httpx.AsyncClient`` (proxies, certificates); for the
    binding, TLS and timeouts give a :class:`~mcp_notebook.transports._http.HttpTransport` instead.

    ``protocol`` is "auto" (probe the modern ``server/discover``, fall back to the ``initialize``
    handshake), "modern", "legacy" or a version string to pin. ``timeout`` is every request's
    default deadline in seconds. A server started from a command inherits only an allow-list of
    this process's environment (``PATH``, ``HOME``, locale, temp dir; ``inherit_env=True`` passes
    all of it); ``env`` is added on top (its values are secrets: never shown); ``cwd`` is its
    working directory.

    ``sampling``, ``elicitation`` and ``roots`` are handlers (sync or async callables taking the
    request's params); giving one declares the capability. ``roots`` may also be a list of paths
    or URIs. ``sampling`` may also be a model: a pydantic-ai ``pydantic_ai.models.Model``
    (``TestModel``, ``FunctionModel`` too) or a LangChain chat model (``BaseChatModel``), which then
    answers each ``sampling/createMessage`` itself, without asking anyone (the notebook's
    ``Session`` asks first): the request's messages (text, images, audio), ``systemPrompt``,
    ``maxTokens``, ``temperature`` and ``stopSequences`` go to the model, its answer comes back
    with its name as ``model`` and its finish reason as ``stopReason``; the server's
    ``modelPreferences`` hints are ignored (the model given is the model), and a request with
    sampling ``tools`` is refused with an error the server receives. Neither framework is imported
    unless its model is given.

    Further keyword options are those of :class:`ConnectionOptions` (``max_in_flight``,
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
        sampling: Handler | SamplingModel | None = None,
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
        options = room_for_sign_in(auth, options)
        self._options = ConnectionOptions(protocol=protocol, timeout=timeout, **options)
        self._transport = make_transport(
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
        self._unhook_auth = hold_deadlines_during_sign_in(auth, self._connection)
        self._live = LiveState(
            self._connection,
            {
                "tools": Tool.from_dict,
                "resources": Resource.from_dict,
                "resource_templates": ResourceTemplate.from_dict,
                "prompts": Prompt.from_dict,
            },
            options=self._options,
            eager=eager_lists,
            window=list_changed_window,
        )
        self._calls = Calls(
            self._connection, self._options, self._live, lambda within: self.list_tools(timeout=within)
        )
        self._tasks = self._calls.tracker
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

        ``timeout`` is one deadline for all the pages, and a list may hold at most
        ``max_list_items`` items (the same for every list); past either an McpError says which
        (``timeout``, ``protocol``) and nothing of the list is returned or cached.

        Tools only an MCP App's View may call (``_meta.ui.visibility == ["app"]``) are left out
        unless ``include_app_only``; they stay in the cache and :meth:`call_tool` still calls them.
        """
        tools = await self._live.get("tools", refresh=refresh, timeout=timeout)
        return tools if include_app_only else [tool for tool in tools if not tool.app_only]

    async def list_resources(self, *, refresh: bool = False, timeout: float | None = None) -> list[Resource]:
        """All resources; empty, without asking, when the server did not declare ``resources``."""
        if self._lacks("resources"):
            return []
        return await self._live.get("resources", refresh=refresh, timeout=timeout)

    async def list_resource_templates(
        self, *, refresh: bool = False, timeout: float | None = None
    ) -> list[ResourceTemplate]:
        """All resource templates; empty, without asking, when ``resources`` was not declared."""
        if self._lacks("resources"):
            return []
        return await self._live.get("resource_templates", refresh=refresh, timeout=timeout)

    async def list_prompts(self, *, refresh: bool = False, timeout: float | None = None) -> list[Prompt]:
        """All prompts; empty, without asking, when the server did not declare ``prompts``."""
        if self._lacks("prompts"):
            return []
        return await self._live.get("prompts", refresh=refresh, timeout=timeout)

    def _lacks(self, capability: str) -> bool:
        """True once the handshake is done and the server did not declare ``capability``.

        Asking anyway only earns "method not found"; a server that declared it and then fails
        still raises its real error. Before the handshake nothing is known, so the request goes on.
        """
        negotiated = self._connection.negotiated
        return negotiated is not None and capability not in negotiated.capabilities

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
        ``McpError(kind="invalid")`` without sending anything; a required argument left out whose
        schema gives a ``default`` is filled with it before the check, and sent (the server would
        fill it too; ``validate=False`` sends exactly what was given); and when the tool declares an
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
        return await self._calls.call_tool(
            name,
            arguments,
            timeout=timeout,
            progress=progress,
            validate=validate,
            raise_on_error=raise_on_error,
            task=task,
        )

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
        return await self._calls.start_tool(name, arguments, timeout=timeout, validate=validate, ttl=ttl)

    async def get_task(self, task_id: str, *, timeout: float | None = None) -> TaskHandle:
        """Attach to a task by id (one started earlier, in another cell, kernel or client).

        Returns its handle, read from the server now and followed to its end. Raises
        McpError(kind="server") when the server does not know the task (wrong id, ttl passed).
        """
        return await self._calls.get_task(task_id, timeout=timeout)

    async def list_tasks(self, *, timeout: float | None = None) -> list[TaskHandle]:
        """The server's tasks (``tasks/list``, every page), as handles; not followed until waited on.

        Only 2025-11-25 servers that declare ``tasks.list`` offer it; the 2026-07-28 extension
        has no list (keep the task ids: a handle's repr shows its own).
        """
        return await self._calls.list_tasks(timeout=timeout)

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
        return self._calls.task_mode(tool)

    def on_task(self, hook: Callable[[TaskHandle], None]) -> Callable[[], None]:
        """Call ``hook(handle)`` when a task is first seen and after each change to any task.

        Runs in the client's event loop and must not block; returns a function that unhooks it.
        """
        return self._tasks.on_change(hook)

    async def read_resource(self, uri: str, *, timeout: float | None = None) -> ResourceContents:
        if not isinstance(uri, str) or not uri:
            raise TypeError("read_resource() needs the resource's URI as a string")
        result = await self._connection.request(
            "resources/read", {"uri": uri}, timeout=timeout, label="resources/read"
        )
        return ResourceContents.from_dict(result, secrets=self._connection.secrets)

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
        return PromptResult.from_dict(result, secrets=self._connection.secrets)

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
        negotiated = self._connection.negotiated
        if negotiated is not None and negotiated.pings_with_discover:
            await self._connection.request("server/discover", None, timeout=timeout)
        else:
            await self._connection.request("ping", None, timeout=timeout)
        return anyio.current_time() - start


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
