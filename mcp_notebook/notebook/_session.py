"""``mcp_notebook.connect(...)`` and :class:`Session`: MCP servers from notebook cells.

A session owns one :class:`~mcp_notebook.Client` running on the engine thread (see
:mod:`._engine`). Every client method has a blocking twin for cells, scripts and widget callbacks
(``session.call_tool(...)``) and an async one for cells that ``await`` (``await
session.acall_tool(...)``). The session mirrors the client into ``session.model`` (traitlets) from
the engine, without the user asking, and records every call in the model's history.
"""

from __future__ import annotations

import json
import logging
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

import anyio

from ..client import Client
from ..client._results import (
    Completion,
    Prompt,
    PromptResult,
    Resource,
    ResourceContents,
    ResourceTemplate,
    Tool,
    ToolResult,
)
from ..display import _html
from ..display._calls import by_agents, via_of
from ..protocol._errors import McpError
from ..protocol._printable import printable
from . import _host, _uipoll
from . import _targets as _config
from ._agent_log import AgentCallLog
from ._agent_runs import run_on_engine
from ._dialogs import Dialogs, DialogsFactory, dialogs_for, from_cell, offer_sign_in
from ._engine import Engine, get_engine, on_exit
from ._map import map_tool
from ._mirror import Mirror
from ._model import SessionModel
from ._progress import BarPlace, ProgressBar
from ._registry import REGISTRY, describe_target
from ._server_logs import asking_for_logs
from ._session_tasks import SessionTask, start_task, started_tasks, tasks_frame
from ._sign_in import hook_sign_in, undo_both
from ._sign_in import no_sign_in as _no_sign_in

if TYPE_CHECKING:
    import pandas

    from ._views import LiveFrame, ResourceWatch, ToolWatch

__all__ = ["Session", "connect"]

logger = logging.getLogger("mcp_notebook.notebook")

_T = TypeVar("_T")

_OPEN: weakref.WeakSet[Session] = weakref.WeakSet()
_EXIT_GRACE = 0.3  # seconds a server gets to exit on its own at interpreter exit, then SIGTERM


#: The classes :func:`connect` and a :class:`~mcp_notebook.notebook.Group` hand out. The notebook
#: layer cannot name the widget-opening subclasses (they live above it, in :mod:`mcp_notebook.jupyter`),
#: so that package sets them here when it is imported (see :func:`use_session_class`).
_CLASSES: dict[str, type[Session]] = {}


def use_session_class(cls: type[Session]) -> None:
    """Make :func:`connect` (and groups made after this) hand out ``cls``, a :class:`Session` subclass.

    :mod:`mcp_notebook.jupyter` calls it with its ``Session`` (the one with ``explorer()``,
    ``dashboard()``, ...) when it is imported, which ``mcp_notebook.connect`` and ``%load_ext
    mcp_notebook`` do: so ``%mcp connect`` and the magics' groups give sessions with widget methods.
    """
    _CLASSES["session"] = cls


def session_class() -> type[Session]:
    """The class :func:`connect` hands out (see :func:`use_session_class`)."""
    return _CLASSES.get("session", Session)


def connect(
    target: Any,
    *,
    name: str | None = None,
    show_progress: bool = True,
    register: bool = True,
    **options: Any,
) -> Session:
    """Connect to an MCP server and return a :class:`Session` once it is ready.

    ``target``: a command string or argv list (stdio), an in-process SDK server object, or the name
    of a server in a config file (``mcp.json``, ``.mcp.json``, ``.vscode/mcp.json``, Cursor's and
    Claude Desktop's files: see :mod:`mcp_notebook.config` for the search order). ``options`` are
    the :class:`~mcp_notebook.Client`'s and win over the file's.

    The session joins the notebook's one set of sessions, the one the ``%mcp`` magics use, and
    becomes the current one: ``%mcp tools``, ``%mcp call`` ... then talk to it, and ``%mcp
    servers`` lists it. Its name there is ``name``, else the config entry's name, else the
    server's ``serverInfo.name``, made unique if another open session has it (``demo``,
    ``demo-2``); ``session.name`` is the name it got. It leaves the set when it is closed.
    ``register=False`` keeps it out of the set.

    The session asks the server for its log messages at ``log_level="info"`` (the core ``Client``
    asks for none), so they show in ``session.model.log`` and the log panel; pass another level
    ("debug", "warning", ...) to change it, or ``log_level=None`` to ask for none.
    """
    resolved, config_options, label = _config.resolve_target(target)
    merged = {**config_options, **options}
    session = session_class()(
        resolved, name=name or label, show_progress=show_progress, register=False, **merged
    )
    if register:
        session._register("connect()")
    return session


class Session:
    """One MCP server, usable from cells, scripts and widget callbacks alike.

    Opened this way (``Session(target, ...)``) or with :func:`connect`, it joins the notebook's one
    set of sessions that the ``%mcp`` magics use, as :func:`connect` describes (``register=False``:
    not). A group's sessions are reached through their group (``%mcp servers`` lists them too).

    Unlike the core ``Client``, it asks the server for log messages, at ``log_level="info"`` unless
    given another level or ``None`` (ask for none): in the 2026-07-28 era in every request's
    ``_meta``, in the legacy era with ``logging/setLevel`` once connected (to a server that
    declares ``logging``). Why: :mod:`mcp_notebook.notebook._server_logs`.

    ``sampling=`` takes, besides a handler, a pydantic-ai model (``pydantic_ai.models.Model``,
    ``TestModel`` and ``FunctionModel`` included) or a LangChain chat model (``BaseChatModel``):
    each ``sampling/createMessage`` of the server's is then shown in the sampling dialog first, and
    only once you approve it (Reject: the server gets an error) is the model asked, with the
    request's messages, images, system prompt, maxTokens, temperature and stopSequences; its
    answer goes back with the model's name (the server's model hints are ignored: the model given
    is the model). ``sampling_approval=False`` lets the model answer without asking; outside a
    notebook kernel (no dialog can show) it is required.
    """

    def __init__(
        self,
        target: Any,
        *,
        name: str | None = None,
        show_progress: bool = True,
        redact_arguments: bool = False,
        dialogs: Any = None,
        register: bool = True,
        sampling_approval: bool = True,
        **options: Any,
    ) -> None:
        # What a cluster's workers need to open this server themselves (map_tool(cluster=...)):
        # the target and the options, less the handlers (no one on a worker answers a dialog).
        self._definition: tuple[Any, dict[str, Any]] | None = (
            target,
            {k: v for k, v in options.items() if k not in _HANDLERS},
        )
        #: The dialogs (``NotebookDialogs``) answering the server's elicitation and sampling requests, or
        #: None. Installed by default inside a Jupyter kernel (``dialogs=False``: never; ``True``: also
        #: outside one; or pass your own ``NotebookDialogs``); a handler passed as
        #: ``elicitation=``/``sampling=`` always wins over the dialog (a model object: see above).
        dialogs_used = dialogs_for(
            dialogs,
            options,
            name or target_label(target),
            self.dialogs_factory(),
            sampling_approval=sampling_approval,
        )
        # An OAuth sign-in asks under the running cell: paste-back in a dialog, a device code in a panel.
        unhook_paste = offer_sign_in(options.get("auth"), dialogs_used)
        unhook_sign_in = hook_sign_in(options.get("auth"))
        self._setup(
            Client(target, **asking_for_logs(options)),
            name=name or target_label(target),
            dialogs=dialogs_used,
            roots=options.get("roots"),
            show_progress=show_progress,
            redact_arguments=redact_arguments,
            # the sign-in panel is drawn only if the kernel answers its view while a cell waits
            ui_wait=unhook_sign_in is not _no_sign_in,
        )
        self._unhook_sign_in = undo_both(unhook_paste, unhook_sign_in)
        try:
            if self._ui_call is not None:  # a sign-in may open: the blocked cell answers its panel
                self._ui_call(self._engine, self.client.connect)
            else:
                self._engine.call(self.client.connect)
            # A notebook shows what a server offers straight away: fetch the lists now.
            self._engine.call(self.refresh_lists)
        except BaseException:
            self._engine.call(self.client.aclose)
            self._unhook_sign_in()
            raise
        # a name taken from the server is shown and typed: its escapes are visible characters
        self.name = name or printable(self.client.server_info.get("name") or target_label(target))
        self._dialogs_named = dialogs is None or dialogs is True
        if self.dialogs is not None and self._dialogs_named:
            self.dialogs.session_name = self.name
        self._mirror.sync_connection()
        self._mirror.sync_lists()
        self._background.append(self._engine.spawn(self._mirror.follow_notifications))
        _OPEN.add(self)
        _host.close_with_kernel(self)  # marimo run: when the browser session's kernel ends
        if register:
            self._register("Session()")

    @classmethod
    def dialogs_factory(cls) -> DialogsFactory | None:
        """What makes this session's dialogs from its name: none here (this layer draws no
        widgets); the top layer's Session (``mcp_notebook.Session``) returns ``NotebookDialogs``."""
        return None

    @classmethod
    def adopt(
        cls,
        client: Client,
        *,
        name: str,
        dialogs: Dialogs | None = None,
        roots: Any = None,
        show_progress: bool = True,
        redact_arguments: bool = False,
    ) -> Session:
        """A session over a client that is already connected (a group's member), from any thread.

        Nothing here waits: the lists are fetched and notifications followed in the background,
        so a group can adopt a server the moment it comes up, on the engine thread itself.
        """
        self = cls.__new__(cls)
        self._setup(
            client,
            name=name,
            dialogs=dialogs,
            roots=roots,
            show_progress=show_progress,
            redact_arguments=redact_arguments,
        )
        self._mirror.sync_connection()
        self._mirror.sync_lists()
        self._background.append(self._engine.spawn(self.refresh_lists))
        self._background.append(self._engine.spawn(self._mirror.follow_notifications))
        _OPEN.add(self)
        return self

    def _setup(
        self,
        client: Client,
        *,
        name: str,
        dialogs: Dialogs | None,
        roots: Any,
        show_progress: bool,
        redact_arguments: bool,
        ui_wait: bool = False,
    ) -> None:
        self.dialogs: Dialogs | None = dialogs
        #: What was passed as ``roots=`` (a ``RootsList`` is editable in :meth:`roots_widget`).
        self.roots: Any = roots
        self.client = client
        self.model = SessionModel()
        self.name = name
        self._ui_call: Callable[..., Any] | None = None
        if self.dialogs is not None or ui_wait:
            self._ui_call = _uipoll.call
        self.show_progress = show_progress
        self.redact_arguments = redact_arguments
        self._engine: Engine = get_engine()
        self._closed = False
        self._dialogs_named = False
        self._background: list[Any] = []
        self._unhook_sign_in = _no_sign_in
        self._views: set[Any] = set()  # live frames and watches over this session, stopped with it
        self._mirror = Mirror(client, self.model)
        self._mirror.attach()
        self._agent_log: AgentCallLog | None = None

    # --- mirroring the client into the model (notebook/_mirror.py) --------------------------------

    async def refresh_lists(self) -> None:
        """Fetch the server's lists into the model (on the engine: ``session._engine`` runs it).

        Part of the surface a :class:`~mcp_notebook.notebook.Group` uses: it fetches every
        member's lists at once after connecting (the magics show the board complete)."""
        await self._mirror.refresh_lists()

    # --- calls ----------------------------------------------------------------------------------

    def _run(self, fn: Callable[..., Awaitable[_T]], *args: Any) -> _T:
        self._check_open()
        fn = from_cell(self, fn)  # its dialogs go under the cell (notebook/_dialogs.py)
        if self._ui_call is not None:
            # With dialogs, a blocked cell keeps handling widget messages while one is open.
            # (_ui_call is _uipoll.call, generic like Engine.call; the attribute's type cannot say so.)
            return cast("_T", self._ui_call(self._engine, fn, *args))
        return self._engine.call(fn, *args)

    def run_agent(self, run: Awaitable[_T] | Callable[[], Awaitable[_T]]) -> _T:
        """Run an agent in a cell that can be stopped: ``session.run_agent(agent.run("..."))``.

        ``run`` is the awaitable you would ``await`` (pydantic-ai's ``agent.run(...)``, OpenAI
        Agents' ``Runner.run(agent, ...)``, LangChain's ``agent.ainvoke(...)``), or a function of no
        arguments returning one, for an awaitable bound to the loop it is made on (LlamaIndex's
        handler): ``session.run_agent(lambda: agent.run(...))`` makes it on the engine. It is awaited
        on the session's engine while the cell blocks, as in :meth:`call_tool`: the server's dialogs
        stay answerable, interrupting the cell cancels the run and with it the server's call, and
        the run's result is returned.

        Why not ``await agent.run(...)``: ipykernel delivers an interrupt to an awaiting cell only
        when the await ends (ipykernel issue #881), so the run and the server's call go on to their
        end (and pydantic-ai's ``run_sync`` refuses to run in a cell, whose loop is running). Use
        ``await`` where nobody will stop the cell, or to run several things at once in a cell.
        """
        return run_on_engine(self._engine, run, self._run)

    async def _arun(self, fn: Callable[..., Awaitable[_T]], *args: Any) -> _T:
        self._check_open()
        fn = from_cell(self, fn)
        return await self._engine.acall(fn, *args)

    def _check_open(self) -> None:
        if self._closed:
            raise McpError("closed", f"the session {self.name!r} is closed; connect again")

    async def _recorded(
        self,
        method: str,
        name: str | None,
        arguments: Any,
        call: Callable[[], Awaitable[_T]],
        via: str | None = None,
    ) -> _T:
        """Run ``call`` and append its entry to ``model.history``; ``via`` names who made the call
        when it was not the notebook's own code (an agent framework, mcp_notebook.agents)."""
        started = time.time()
        clock = time.monotonic()  # the engine's loop clock (anyio.current_time() looks the loop up)
        outcome = "ok"
        size: int | None = None
        try:
            result = await call()
            size = _result_size(result)
            if isinstance(result, ToolResult) and result.is_error:
                outcome = "tool_error"
            return result
        except McpError as exc:
            outcome = exc.kind
            if exc.call is None:  # what a notebook's short traceback names
                exc.call = f"{method} {name!r} on {self.name!r}" if name else f"{method} on {self.name!r}"
            raise
        except anyio.get_cancelled_exc_class():
            outcome = "cancelled"
            raise
        finally:
            entry = {
                "time": started,
                "method": method,
                "name": name,
                "arguments": "<redacted>" if self.redact_arguments else arguments,
                "duration": time.monotonic() - clock,
                "outcome": outcome,
                "result_size": size,
                "via": via,
            }
            self.model.append("history", entry)
            if via is not None:
                self._agent_lines().note(entry)

    def _agent_lines(self) -> AgentCallLog:
        """The log lines of the agents' calls (notebook/_agent_log.py), made at the first one."""
        if self._agent_log is None:
            secrets = getattr(getattr(self.client, "connection", None), "secrets", None)
            mask = secrets.mask if secrets is not None else str
            self._agent_log = AgentCallLog(self.model.append, mask=mask)
        return self._agent_log

    async def _call_tool(
        self, name: str, arguments: Mapping[str, Any] | None, options: dict[str, Any]
    ) -> ToolResult:
        progress = options.pop("progress", None)
        place = options.pop("_bar_place", None)
        via = options.pop("_via", None)
        bar = None
        if progress is None and self.show_progress:
            who = via_of({"via": via})  # an agent's call says whose it is
            bar = ProgressBar(f"{self.name}: {name}" + (f" via {who}" if who else ""), place=place)
            progress = bar.update
        try:
            return await self._recorded(
                "tools/call",
                name,
                dict(arguments or {}),
                lambda: self.client.call_tool(name, arguments, progress=progress, **options),
                via,
            )
        finally:
            if bar is not None:
                bar.close()

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, **options: Any) -> ToolResult:
        """Call a tool (blocking). Options as :meth:`Client.call_tool`; shows a progress bar."""
        return self._run(self._call_tool, name, arguments, _placed(options))

    async def acall_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, **options: Any
    ) -> ToolResult:
        return await self._arun(self._call_tool, name, arguments, _placed(options))

    # --- tasks ----------------------------------------------------------------------------------

    async def _start_tool(
        self, name: str, arguments: Mapping[str, Any] | None, options: dict[str, Any]
    ) -> SessionTask:
        return await start_task(self, name, arguments, options)

    def start_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, **options: Any
    ) -> SessionTask:
        """Start a tool as a task and return at once (see :meth:`Client.start_tool`).

        The task shows in ``model.tasks``, :meth:`tasks_frame` and :meth:`tasks_widget`, kept live;
        ``task.result()`` waits for its result in this cell or any later one.
        """
        return self._run(self._start_tool, name, arguments, options)

    async def astart_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, **options: Any
    ) -> SessionTask:
        return await self._arun(self._start_tool, name, arguments, options)

    def get_task(self, task_id: str) -> SessionTask:
        """Attach to a task by id: one started in an earlier cell, or before a kernel restart."""
        return SessionTask(self, self._run(lambda: self.client.get_task(task_id)))

    async def aget_task(self, task_id: str) -> SessionTask:
        return SessionTask(self, await self._arun(lambda: self.client.get_task(task_id)))

    def list_tasks(self) -> list[SessionTask]:
        """The server's tasks (2025-11-25 servers that offer ``tasks/list``)."""
        return [SessionTask(self, h) for h in self._run(self.client.list_tasks)]

    async def alist_tasks(self) -> list[SessionTask]:
        return [SessionTask(self, h) for h in await self._arun(self.client.list_tasks)]

    @property
    def tasks(self) -> list[SessionTask]:
        """Every task this session started or attached to, oldest first."""
        return started_tasks(self)

    def tasks_frame(self, *, server: bool = False) -> pandas.DataFrame:
        """The tasks as a DataFrame: task_id, tool, status, status_message, started, ended, elapsed.

        ``server=True`` asks the server for its task list instead (``tasks/list``, where offered),
        which also finds tasks started before a kernel restart.
        """
        return tasks_frame(self, server=server)

    def _recorded_call(
        self, method: str, name: str | None, arguments: Any, fn: Callable[[], Awaitable[_T]]
    ) -> _T:
        return self._run(lambda: self._recorded(method, name, arguments, fn))

    async def _arecorded_call(
        self, method: str, name: str | None, arguments: Any, fn: Callable[[], Awaitable[_T]]
    ) -> _T:
        return await self._arun(lambda: self._recorded(method, name, arguments, fn))

    def list_tools(self, *, refresh: bool = False, include_app_only: bool = False) -> list[Tool]:
        """The server's tools; tools only an MCP App's View may call only with ``include_app_only``."""
        return self._run(lambda: self.client.list_tools(refresh=refresh, include_app_only=include_app_only))

    async def alist_tools(self, *, refresh: bool = False, include_app_only: bool = False) -> list[Tool]:
        return await self._arun(
            lambda: self.client.list_tools(refresh=refresh, include_app_only=include_app_only)
        )

    def list_resources(self, *, refresh: bool = False) -> list[Resource]:
        return self._run(lambda: self.client.list_resources(refresh=refresh))

    async def alist_resources(self, *, refresh: bool = False) -> list[Resource]:
        return await self._arun(lambda: self.client.list_resources(refresh=refresh))

    def list_resource_templates(self, *, refresh: bool = False) -> list[ResourceTemplate]:
        return self._run(lambda: self.client.list_resource_templates(refresh=refresh))

    async def alist_resource_templates(self, *, refresh: bool = False) -> list[ResourceTemplate]:
        return await self._arun(lambda: self.client.list_resource_templates(refresh=refresh))

    def list_prompts(self, *, refresh: bool = False) -> list[Prompt]:
        return self._run(lambda: self.client.list_prompts(refresh=refresh))

    async def alist_prompts(self, *, refresh: bool = False) -> list[Prompt]:
        return await self._arun(lambda: self.client.list_prompts(refresh=refresh))

    def read_resource(self, uri: str) -> ResourceContents:
        return self._recorded_call("resources/read", uri, None, lambda: self.client.read_resource(uri))

    async def aread_resource(self, uri: str) -> ResourceContents:
        return await self._arecorded_call("resources/read", uri, None, lambda: self.client.read_resource(uri))

    def get_prompt(self, name: str, arguments: Mapping[str, Any] | None = None) -> PromptResult:
        call = lambda: self.client.get_prompt(name, arguments)  # noqa: E731
        return self._recorded_call("prompts/get", name, dict(arguments or {}), call)

    async def aget_prompt(self, name: str, arguments: Mapping[str, Any] | None = None) -> PromptResult:
        call = lambda: self.client.get_prompt(name, arguments)  # noqa: E731
        return await self._arecorded_call("prompts/get", name, dict(arguments or {}), call)

    def complete(self, ref: Any, argument: Any, context: Mapping[str, str] | None = None) -> Completion:
        return self._run(lambda: self.client.complete(ref, argument, context))

    async def acomplete(
        self, ref: Any, argument: Any, context: Mapping[str, str] | None = None
    ) -> Completion:
        return await self._arun(lambda: self.client.complete(ref, argument, context))

    def ping(self) -> float:
        return self._run(self.client.ping)

    async def aping(self) -> float:
        return await self._arun(self.client.ping)

    def subscribe(self, uri: str) -> None:
        self._run(lambda: self.client.subscribe(uri))

    async def asubscribe(self, uri: str) -> None:
        await self._arun(lambda: self.client.subscribe(uri))

    def unsubscribe(self, uri: str) -> None:
        self._run(lambda: self.client.unsubscribe(uri))

    async def aunsubscribe(self, uri: str) -> None:
        await self._arun(lambda: self.client.unsubscribe(uri))

    # --- DataFrames -----------------------------------------------------------------------------

    def tools_frame(self, include_app_only: bool = False) -> pandas.DataFrame:
        """One row per tool (see :func:`frames.tools_frame`); app-only tools with ``include_app_only``."""
        from . import _frames as frames

        if include_app_only and self.client.cached_tools is not None:
            return frames.tools_frame(self.client.cached_tools)
        return frames.tools_frame(self.model.tools)

    def resources_frame(self) -> pandas.DataFrame:
        from . import _frames as frames

        return frames.resources_frame(self.model.resources)

    def prompts_frame(self) -> pandas.DataFrame:
        from . import _frames as frames

        return frames.prompts_frame(self.model.prompts)

    def history_frame(self) -> pandas.DataFrame:
        from . import _frames as frames

        return frames.history_frame(self.model.history)

    # --- reactive views (notebook/_views.py) ----------------------------------------------------

    def live_frame(self, what: str = "tools", *, rate: float = 4.0, max_rows: int = 50) -> LiveFrame:
        """A DataFrame of ``what`` (tools, resources, resource_templates, prompts, history, tasks)
        that redraws itself whenever the model's list changes, at most ``rate`` times a second
        (always ending on the final state). ``.frame`` is the latest DataFrame; ``.stop()`` ends it."""
        from ._views import LiveFrame

        self._check_open()
        return LiveFrame(self, what, rate=rate, max_rows=max_rows, **self._view_options())

    def watch_resource(
        self, uri: str, *, as_frame: bool = True, rate: float = 4.0, max_rows: int = 50
    ) -> ResourceWatch:
        """Show ``uri`` live: re-read on each ``notifications/resources/updated`` for it (subscribing
        first unless already subscribed; ``stop()`` unsubscribes what it subscribed). ``as_frame``:
        shown as a DataFrame (JSON and CSV as their tables); otherwise as text. Returns at once."""
        from ._views import ResourceWatch

        self._check_open()
        return ResourceWatch(
            self, uri, as_frame=as_frame, rate=rate, max_rows=max_rows, **self._view_options()
        )

    def watch_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        every: float | None = None,
        on: str | None = None,
        rate: float = 4.0,
        timeout: float | None = None,
        max_rows: int = 50,
    ) -> ToolWatch:
        """Call ``name`` now, then every ``every`` seconds (at least 0.1) and/or on each update of the
        resource ``on``, showing the latest result as a live DataFrame. Never two calls at once: a
        tick during a slow call is skipped. ``.result``, ``.frame``, ``.calls``, ``.errors``, ``.stop()``."""
        from ._views import ToolWatch

        self._check_open()
        return ToolWatch(
            self,
            name,
            arguments,
            every=every,
            on=on,
            rate=rate,
            timeout=timeout,
            max_rows=max_rows,
            **self._view_options(),
        )

    def _view_options(self) -> dict[str, Any]:
        """Options every live view over this session gets: the top layer's Session hands in the
        ``widget_factory`` that draws them (this layer draws no widgets)."""
        return {}

    def spawn(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        """Start ``fn(*args)`` in the background on the session's engine, from any thread (a widget's
        click handler); returns a future (``.cancel()`` cancels it). How widgets run a call without
        blocking the kernel, and without reaching into the engine themselves."""
        return self._engine.spawn(fn, *args)

    @property
    def views(self) -> list[Any]:
        """The live frames, watches and MCP App views running over this session."""
        return list(self._views)

    def map_tool(
        self,
        name: str,
        frame: pandas.DataFrame,
        *,
        concurrency: int = 8,
        columns: Mapping[str, str] | None = None,
        progress: bool = True,
        timeout: float | None = None,
        cluster: Any = None,
    ) -> pandas.DataFrame:
        """Call ``name`` once per row of ``frame`` (arguments from its columns), ``concurrency`` at once.

        ``columns`` renames columns to argument names (``{"column": "argument"}``); unnamed columns
        that are not tool parameters are left out. Returns a DataFrame aligned to ``frame.index``
        with ``result`` (the result's data), ``is_error`` and ``error`` (the McpError text).

        With ``cluster=`` (a ``distributed.Client``) or a dask DataFrame, the rows run on a Dask
        cluster against this session's server definition (:func:`mcp_notebook.dask.map_tool`, the
        ``dask`` extra), ``concurrency`` per worker; a dask DataFrame in gives one out.
        """
        return map_tool(
            self,
            name,
            frame,
            concurrency=concurrency,
            columns=columns,
            progress=progress,
            timeout=timeout,
            cluster=cluster,
        )

    # --- lifetime -------------------------------------------------------------------------------

    @property
    def status(self) -> str:
        return self.client.status

    def close(self) -> None:
        """Stop the server and end the session; it leaves the notebook's set of sessions (``%mcp``
        then says it was closed if it is named). Idempotent; also runs at interpreter exit."""
        if self._closed:
            return
        if self._engine.on_engine_thread():
            raise RuntimeError("close() was called from the engine thread; use `await session.aclose()`")
        self._engine.call(self.client.aclose)
        self.finish_close()

    async def aclose(self) -> None:
        if self._closed:
            return
        await self._engine.acall(self.client.aclose)
        self.finish_close()

    def finish_close(self) -> None:
        """Mark the session closed once its client is (a group closes its members' clients itself).

        Stops its views and background tasks and leaves the notebook's set of sessions."""
        # Only once the client is closed: an interrupted close() can simply be called again.
        # The model's status turns "closed" on the engine, from the connection itself.
        self._closed = True
        self._unhook_sign_in()
        for view in list(self._views):
            view._stop(give_back=False)  # the connection is gone, and its subscriptions with it
        for future in self._background:
            future.cancel()
        if self._agent_log is not None:
            self._agent_log.close()  # the last agent calls' lines, before the log stops
        _OPEN.discard(self)
        REGISTRY.forget(self)

    def _register(self, opened: str) -> None:
        """Join the notebook's set of sessions (see :func:`connect`) under a unique name."""
        target = describe_target(self.client.describe())
        self.name, _ = REGISTRY.add(self, name=self.name, opened=opened, target=target)
        if self.dialogs is not None and self._dialogs_named:
            self.dialogs.session_name = self.name

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # --- rendering ------------------------------------------------------------------------------

    def __repr__(self) -> str:
        info = self.model.server_info
        server = printable(f"{info.get('name')} {info.get('version') or ''}".strip()) if info else "?"
        return (
            f"<Session {self.name!r}: {self.model.status}, {self.model.era or '?'} "
            f"{self.model.protocol_version or ''}, server {server}, {len(self.model.tools)} tools>"
        )

    def _repr_html_(self) -> str:
        model = self.model
        info = model.server_info or {}
        tools = ", ".join(t.name for t in model.tools[:20]) + (" …" if len(model.tools) > 20 else "")
        # table() escapes every plain-string cell; only the badge is markup already
        rows: list[tuple[str, str]] = [
            ("status", _html.state_badge(model.status)),
            ("server", f"{info.get('title') or info.get('name', '?')} {info.get('version', '')}"),
            ("protocol", f"{model.era or '?'} {model.protocol_version or ''}"),
            ("tools", tools),
            ("resources", str(len(model.resources))),
            ("prompts", ", ".join(p.name for p in model.prompts[:20])),
            # the calls, and how many each agent framework made (mcp_notebook.agents)
            ("calls", f"{len(model.history)}{by_agents(model.history)}"),
        ]
        if model.last_error:
            rows.append(("last error", model.last_error))
        # a plain str: marimo cannot serialise markupsafe's Markup, a str subclass (#38)
        return str(_html.Markup("<div><b>MCP session {}</b>{}</div>").format(self.name, _html.table(rows)))


def _result_size(result: Any) -> int | None:
    raw = getattr(result, "raw", None)
    if not isinstance(raw, dict):
        return None
    try:
        return len(json.dumps(raw, default=str))
    except (TypeError, ValueError):
        return None


#: Options that are handlers for the server's requests: they stay in the kernel.
_HANDLERS = frozenset({"sampling", "elicitation", "roots"})


def target_label(target: Any) -> str:
    if isinstance(target, str):
        return target.split()[-1] if target.split() else target
    if isinstance(target, list | tuple) and target:
        return str(target[-1])
    return type(target).__name__


def _close_all_at_exit() -> None:
    """Close every open session at once, quickly: Jupyter kills a kernel 2.5 s after shutdown."""
    sessions = list(_OPEN)
    if not sessions:
        return
    engine = get_engine()

    async def close_one(session: Session) -> None:
        await session.client.aclose()
        session.finish_close()

    async def close_all() -> None:
        async with anyio.create_task_group() as tg:
            for session in sessions:
                transport = getattr(session.client, "_transport", None)
                if transport is not None and hasattr(transport, "shutdown_timeout"):
                    transport.shutdown_timeout = _EXIT_GRACE
                    transport.terminate_timeout = _EXIT_GRACE
                tg.start_soon(close_one, session)

    engine.call(close_all)


on_exit(_close_all_at_exit)


def _placed(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with where a progress bar goes, taken on the calling cell's thread (the call
    itself runs on the engine's, where marimo knows no cell)."""
    return {**options, "_bar_place": BarPlace.here()}
