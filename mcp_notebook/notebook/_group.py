"""``mcp_notebook.connect_all(...)`` and :class:`Group`: every server of a config file in one notebook.

A group wraps a core :class:`~mcp_notebook.client._client_group.ClientGroup` as a :class:`Session` wraps a
:class:`~mcp_notebook.Client`: the clients connect in parallel on the engine thread, each server
that comes up gets a session of its own (model, history, progress bars, dialogs), and
``group.model`` (traitlets) keeps one status board, one tool table and one merged log live for
widgets and observers. A server that fails shows its reason on the board and is retried in the
background; it gets its session the moment it comes up.
"""

from __future__ import annotations

import functools
import itertools
import logging
import threading
import weakref
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..client._client import Client
from ..client._client_group import ClientGroup, GroupMember, server_specs
from ..client._results import Tool, ToolResult
from ..display import _html
from ..protocol._errors import McpError
from . import _host, _uipoll
from ._agent_runs import run_on_engine
from ._dialogs import dialogs_for, from_cell
from ._engine import Engine, get_engine, on_exit
from ._model import GroupModel
from ._registry import REGISTRY
from ._server_logs import asking_for_logs
from ._session import Session, target_label

if TYPE_CHECKING:
    import os

    import pandas

    from ..config import ServerConfig
    from ._session_tasks import SessionTask

__all__ = ["Group", "connect_all"]

logger = logging.getLogger("mcp_notebook.notebook")

_OPEN: weakref.WeakSet[Group] = weakref.WeakSet()
_T = TypeVar("_T")


_CLASSES: dict[str, type[Group]] = {}


def use_group_class(cls: type[Group]) -> None:
    """Make :func:`connect_all` hand out ``cls``, a :class:`Group` subclass: :mod:`mcp_notebook.jupyter`
    sets its ``Group`` (with the widget-opening methods) when it is imported, as it does for
    :func:`~mcp_notebook.notebook.connect` (``use_session_class``)."""
    _CLASSES["group"] = cls


def group_class() -> type[Group]:
    """The class :func:`connect_all` hands out (see :func:`use_group_class`)."""
    return _CLASSES.get("group", Group)


def connect_all(
    config: str | os.PathLike[str] | Mapping[str, Any] | ServerConfig | None = None,
    *,
    only: Sequence[str] | None = None,
    inputs: Mapping[str, str] | None = None,
    ask: Callable[[dict[str, Any]], str] | None = None,
    show_progress: bool = True,
    dialogs: Any = None,
    separator: str = ".",
    wait: bool | float = True,
    name: str | None = None,
    register: bool = True,
    **options: Any,
) -> Group:
    """Connect to every server of a config file at once and return a :class:`Group`.

    ``config``: a path to a config file in any common format (Claude Desktop, VS Code, Cursor,
    Claude Code, ``mcp.json``), a dict of the same shape, a dict of servers by name (what
    :class:`Group` takes: ``{"sales": {"command": "uvx", "args": [...]}, "web": "https://..."}``),
    or None to use the first file of the documented search path
    (:func:`mcp_notebook.config.config_search_path`). ``only`` picks servers by name. VS Code
    ``${input:...}`` values come from ``inputs`` or are asked once per
    kernel (a password field). ``options`` are every client's (``timeout``, ``protocol``, ...);
    each server is asked for its log messages at ``log_level="info"``, as :func:`connect` does
    (``log_level=None``: none).

    Returns once every server is up or has failed its first attempt (``wait=N``: after N seconds
    at most, slower servers joining as they come up; ``False``: at once); the failed ones show
    why on the board (``group``, ``group.status_widget()``) and are retried in the background.

    The group joins the notebook's one set of sessions, the one the ``%mcp`` magics use, under
    ``name`` ("group" by default, made unique if taken: ``group-2``; ``group.name`` says which):
    its servers are then names for ``%mcp use``, ``-s SERVER`` and ``%mcp call SERVER.TOOL``, its
    first server up becomes the current session, and ``%mcp servers`` lists each of its servers.
    It leaves the set when it is closed. ``register=False`` keeps it out.
    """
    from ..config import ServerConfig, load_config

    loaded: Mapping[str, Any]
    if isinstance(config, ServerConfig):
        loaded = config
    elif isinstance(config, Mapping):  # a config file's content, or servers by name
        loaded = server_specs(config, only=only, inputs=inputs, ask=ask)
    else:
        loaded = load_config(config, only=only, inputs=inputs, ask=ask)
    group = group_class()(
        loaded,
        show_progress=show_progress,
        dialogs=dialogs,
        separator=separator,
        wait=wait,
        name=name,
        register=False,
        **options,
    )
    if register:
        group._register("connect_all()")
    return group


class _MemberSpec:
    """A server's spec plus this notebook's options for it (its dialogs' handlers)."""

    def __init__(self, spec: Any, options: dict[str, Any]) -> None:
        self.spec = spec
        self.options = options

    def client_args(self) -> tuple[Any, dict[str, Any]]:
        client_args = getattr(self.spec, "client_args", None)
        target, own = client_args() if callable(client_args) else (self.spec, {})
        return target, {**own, **self.options}

    def describe(self) -> str:
        describe = getattr(self.spec, "describe", None)
        return str(describe()) if callable(describe) else target_label(self.spec)


def _definition_of(member: GroupMember) -> tuple[Any, dict[str, Any]] | None:
    """The member's server as ``(target, options)`` for a cluster's workers (``map_tool(cluster=)``),
    less the handlers (nobody on a worker answers a dialog); None for a client given as is."""
    spec, options = getattr(member, "_spec", None), dict(getattr(member, "_options", {}))
    if not isinstance(spec, _MemberSpec) or isinstance(spec.spec, Client):
        return None
    target, own = spec.client_args()
    merged = {**options, **own}
    return target, {k: v for k, v in merged.items() if k not in ("sampling", "elicitation", "roots")}


class Group:
    """Several MCP servers, usable from cells, scripts and widget callbacks alike.

    ``servers`` maps names to what :func:`connect` takes (commands, URLs, config entries, or an
    entry as a config file spells it: ``{"command": ..., "args": [...]}``), or is a loaded
    :class:`~mcp_notebook.config.ServerConfig` (or a config file's content as a dict); ``wait``,
    ``name``, ``register`` and ``options`` as in :func:`connect_all`. ``sampling=`` may be a
    pydantic-ai or LangChain chat model, asked after each request is approved in the server's
    sampling dialog (``sampling_approval=False``: without asking), as for a :class:`Session`.
    """

    #: The class each server that comes up gets a session of (through :meth:`Session.adopt`); the
    #: ``Group`` of :mod:`mcp_notebook.jupyter` sets its ``Session``, which opens widgets.
    session_class: type[Session] = Session

    def __init__(
        self,
        servers: Mapping[str, Any] | ServerConfig,
        *,
        show_progress: bool = True,
        redact_arguments: bool = False,
        dialogs: Any = None,
        separator: str = ".",
        wait: bool | float = True,
        name: str | None = None,
        register: bool = True,
        sampling_approval: bool = True,
        **options: Any,
    ) -> None:
        #: The group's name in the notebook's set of sessions (``%mcp``), once registered.
        self.name: str = name or "group"
        self.model = GroupModel()
        self.show_progress = show_progress
        self.redact_arguments = redact_arguments
        self._engine: Engine = get_engine()
        self._views: set[Any] = set()  # live frames over the group's model, stopped with it
        self._lock = threading.Lock()
        # The board is written from the engine and the kernel: one writer at a time, each from the
        # state as it is then, so a slower writer never puts back counts older than the last.
        self._board_lock = threading.RLock()
        self._sessions: dict[str, Session] = {}
        self._dialogs: dict[str, Any] = {}
        entries = server_specs(servers)
        wrapped: dict[str, Any] = {}
        for name, spec in entries.items():
            # Each server gets dialogs of its own (titled with its name), unless handlers are given.
            own = {kind: options.get(kind) for kind in ("elicitation", "sampling")}
            self._dialogs[name] = dialogs_for(
                dialogs, own, name, self.session_class.dialogs_factory(), sampling_approval=sampling_approval
            )
            wrapped[name] = _MemberSpec(spec, {k: v for k, v in own.items() if v is not None})
        # Every server is asked for its log messages, as a Session asks (notebook/_server_logs.py).
        client_options = asking_for_logs(options)
        self.core = ClientGroup(wrapped, errors=entries.errors, separator=separator, **client_options)
        self._closed = False
        self.core.on_change(self._on_member)
        self._sync_board()
        try:
            self._engine.call(lambda: self.core.connect(wait=wait))
        except BaseException:
            self._engine.call(self.core.aclose)
            raise
        _OPEN.add(self)
        _host.close_with_kernel(self)  # marimo run: when the browser session's kernel ends
        if register:
            self._register("Group()")

    def _register(self, opened: str) -> None:
        """Join the notebook's set of sessions (see :func:`connect_all`) under a unique name."""
        REGISTRY.add_group(self, name=self.name, opened=opened)

    # --- mirroring the members into the model ---------------------------------------------------

    def _on_member(self, member: GroupMember) -> None:
        # On the engine thread, synchronously with the change.
        if member.ready and member.name not in self._sessions and member.client is not None:
            session = self.session_class.adopt(
                member.client,
                name=member.name,
                dialogs=self._dialogs.get(member.name),
                show_progress=self.show_progress,
                redact_arguments=self.redact_arguments,
            )
            session._definition = _definition_of(member)  # for map_tool(cluster=...)
            with self._lock:
                self._sessions[member.name] = session
            session.model.observe(functools.partial(self._on_session, member.name))
            # The board's count waits for the tool list: redrawn once it is in (an empty list
            # changes no trait, so the model alone would never say so).
            member.client.on_event(self._on_client_event)
            self.model.update(sessions=self.sessions)
        self._sync_board()

    def _on_client_event(self, event: Any) -> None:
        if event.kind == "cache_refresh" and event.data.get("list") == "tools":
            self._sync_board()

    def _on_session(self, name: str, change: Any) -> None:
        if change.name in ("log", "notifications"):
            # One change may carry several new entries (the model publishes them in batches).
            last = change.old[-1] if change.old else None
            fresh = list(itertools.takewhile(lambda entry: entry is not last, reversed(change.new)))
            kind = "notification" if change.name == "notifications" else "log"
            self.model.append_log([{"server": name, "kind": kind, **entry} for entry in reversed(fresh)])
        elif change.name in ("tools", "in_flight", "reconnects", "last_error", "status", "era"):
            self._sync_board()

    def _sync_board(self) -> None:
        """Rebuild the board from the members as they are now. A row's ``tools`` is None until
        that server's tool list is in (the client's cache: a session's empty model list could be
        "not fetched yet"), so no board draws "0 tools" beside the others' counts."""
        with self._board_lock:
            rows = []
            tools: list[Tool] = []
            for name, member in self.core.members.items():
                row = member.summary()
                session = self._sessions.get(name)
                if session is not None:
                    row["in_flight"] = session.model.in_flight
                    tools.extend(self.core.qualified(name, tool) for tool in session.model.tools)
                rows.append(row)
            self.model.update(
                servers=rows,
                statuses={row["server"]: row["status"] for row in rows},
                tools=tools,
                total_tools=len(tools),
            )

    # --- servers --------------------------------------------------------------------------------

    @property
    def sessions(self) -> dict[str, Session]:
        """The sessions of the servers that came up, by name, in the config's order."""
        with self._lock:
            return {name: self._sessions[name] for name in self.core.members if name in self._sessions}

    def __getitem__(self, name: str) -> Session:
        """The session of server ``name``; an McpError says why if it is not up."""
        member = self.core.member(name)
        session = self._sessions.get(name)
        if session is None:
            reason = member.error_message or member.status
            raise McpError("transport", f"server {name!r} is not connected ({reason})")
        return session

    def __iter__(self) -> Iterator[str]:
        return iter(self.core.members)

    def __len__(self) -> int:
        return len(self.core.members)

    def __contains__(self, name: object) -> bool:
        return name in self.core.members

    @property
    def statuses(self) -> dict[str, str]:
        return dict(self.core.statuses)

    def reconnect(self, name: str) -> None:
        """Try server ``name`` again now (a failed one skips its backoff; a closed one starts over)."""
        self._check_open()
        self._forget_closed_session(name)
        self._engine.call(self.core.reconnect, name)

    def spawn(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        """Start ``fn(*args)`` in the background on the group's engine, from any thread (a widget's
        click handler); returns a future (``.cancel()`` cancels it)."""
        return self._engine.spawn(fn, *args)

    async def areconnect(self, name: str) -> None:
        """:meth:`reconnect` for async code and widget callbacks (also on the engine thread)."""
        self._check_open()
        self._forget_closed_session(name)
        await self._engine.acall(self.core.reconnect, name)

    def _forget_closed_session(self, name: str) -> None:
        # A server whose client gave up gets a new client, and so a new session, when it comes up.
        with self._lock:
            session = self._sessions.get(name)
            if session is None or session.client.status != "closed":
                return
            self._sessions.pop(name)
        session.finish_close()
        self.model.update(sessions=self.sessions)

    def _fetch_lists(self) -> None:
        """Fetch the lists of every server up now, in parallel, and wait (the magics show the board
        after this, as ``connect()`` shows a session's counts: complete, not mid-fetch)."""
        import anyio

        sessions = list(self.sessions.values())

        async def fetch_all() -> None:
            async with anyio.create_task_group() as tasks:
                for session in sessions:
                    tasks.start_soon(session.refresh_lists)

        self._engine.call(fetch_all)
        self._sync_board()

    def _check_open(self) -> None:
        if self._closed:
            raise McpError("closed", "this group is closed; connect again")

    # --- one tool table -------------------------------------------------------------------------

    def list_tools(self, *, refresh: bool = False, include_app_only: bool = False) -> list[Tool]:
        """Every up server's tools, named ``SERVER.TOOL`` (app-only ones with ``include_app_only``)."""
        self._check_open()
        return self._engine.call(
            lambda: self.core.list_tools(refresh=refresh, include_app_only=include_app_only)
        )

    async def alist_tools(self, *, refresh: bool = False, include_app_only: bool = False) -> list[Tool]:
        self._check_open()
        return await self._engine.acall(
            lambda: self.core.list_tools(refresh=refresh, include_app_only=include_app_only)
        )

    def tools_frame(self, include_app_only: bool = False) -> pandas.DataFrame:
        """Every server's tools as one DataFrame: ``server`` first, then the tool columns (app-only
        tools of MCP Apps with ``include_app_only``)."""
        import pandas as pd

        from . import _frames as frames

        parts = []
        for name, session in self.sessions.items():
            part = session.tools_frame(include_app_only=include_app_only)
            part.insert(0, "server", pd.Series([name] * len(part), dtype="string"))
            parts.append(part)
        if not parts:
            empty = frames.tools_frame([])
            empty.insert(0, "server", pd.Series([], dtype="string"))
            return empty
        return pd.concat(parts, ignore_index=True)

    def resolve(self, name: str) -> tuple[Session, str]:
        """``(session, tool)`` for ``SERVER.TOOL`` (or fastmcp's ``SERVER_TOOL``, or a unique ``TOOL``)."""
        self._check_open()
        if self.core.separator not in name:
            self._engine.call(self.core.list_tools)  # the other spellings are matched against lists
        server, tool = self.core.resolve(name)
        return self[server], tool

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, **options: Any) -> ToolResult:
        """Call ``SERVER.TOOL`` (blocking; options and progress bar as :meth:`Session.call_tool`)."""
        session, tool = self.resolve(name)
        return session.call_tool(tool, arguments, **options)

    async def _aresolve(self, name: str) -> tuple[Session, str]:
        self._check_open()
        if self.core.separator not in name:
            await self._engine.acall(self.core.list_tools)
        server, tool = self.core.resolve(name)
        return self[server], tool

    async def acall_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, **options: Any
    ) -> ToolResult:
        session, tool = await self._aresolve(name)
        return await session.acall_tool(tool, arguments, **options)

    def run_agent(self, run: Awaitable[_T] | Callable[[], Awaitable[_T]]) -> _T:
        """Run an agent over the group's tools in a cell that can be stopped: ``run`` awaited on the
        engine while the cell blocks, its result returned (see :meth:`Session.run_agent`: why, and
        when ``await`` will do). Every member's dialogs stay answerable; interrupting the cell
        cancels the run and the call it is making on whichever server."""
        return run_on_engine(self._engine, run, self._blocking)

    def _blocking(self, fn: Callable[[], Awaitable[_T]]) -> _T:
        self._check_open()
        return _uipoll.call(self._engine, from_cell(self, fn))

    def start_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, **options: Any
    ) -> SessionTask:
        """Start ``SERVER.TOOL`` as a task (see :meth:`Session.start_tool`)."""
        session, tool = self.resolve(name)
        return session.start_tool(tool, arguments, **options)

    async def astart_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, **options: Any
    ) -> SessionTask:
        session, tool = await self._aresolve(name)
        return await session.astart_tool(tool, arguments, **options)

    def map_tool(self, name: str, frame: pandas.DataFrame, **options: Any) -> pandas.DataFrame:
        """Call ``SERVER.TOOL`` once per row of ``frame`` (see :meth:`Session.map_tool`)."""
        session, tool = self.resolve(name)
        return session.map_tool(tool, frame, **options)

    def log_frame(self) -> pandas.DataFrame:
        """The merged log and notifications of every server, oldest first, with a ``server`` column."""
        import pandas as pd

        from ._frames import _local_times, _missing_as_na, _readable  # escapes made visible

        columns = ["server", "time", "kind", "level", "logger", "method", "data", "params"]
        frame = pd.DataFrame([_readable(dict(entry)) for entry in list(self.model.log)], columns=columns)
        frame["time"] = _local_times(frame["time"])  # local and aware, as in every frame
        texts = {name: "string" for name in ("server", "kind", "level", "logger", "method")}
        # data and params hold any JSON; a frame of log messages alone has no params, which
        # pandas would make a float column of NaN
        anything = {"data": object, "params": object}
        return _missing_as_na(frame.astype({**texts, **anything}))

    def live_frame(self, what: str = "tools", *, rate: float = 4.0, max_rows: int = 50) -> Any:
        """A DataFrame of the group's ``"tools"`` (named SERVER.TOOL), ``"servers"`` (the board's
        rows) or ``"log"``, redrawn whenever ``group.model`` changes (see ``Session.live_frame``)."""
        import pandas as pd

        from . import _frames as frames
        from ._views import LiveFrame

        builders: dict[str, Callable[[Any], Any]] = {
            "tools": frames.tools_frame,
            "servers": lambda rows: pd.DataFrame([frames._readable(dict(row)) for row in rows]),
            "log": lambda rows: pd.DataFrame([frames._readable(dict(row)) for row in rows]),
        }
        if what not in builders:
            raise ValueError(f"group.live_frame() shows one of {', '.join(builders)}, not {what!r}")
        self._check_open()
        return LiveFrame(
            self, what, rate=rate, max_rows=max_rows, builder=builders[what], **self._view_options()
        )

    def _view_options(self) -> dict[str, Any]:
        """Options the group's live frames get (the top layer's Group hands in a ``widget_factory``)."""
        return {}

    # --- lifetime -------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop every server and end the group; it leaves the notebook's set of sessions (``%mcp``).
        Idempotent; also runs at interpreter exit."""
        if self._closed:
            return
        if self._engine.on_engine_thread():
            raise RuntimeError("close() was called from the engine thread; use `await group.aclose()`")
        self._engine.call(self.core.aclose)
        self._finish_close()

    async def aclose(self) -> None:
        if self._closed:
            return
        await self._engine.acall(self.core.aclose)
        self._finish_close()

    def _finish_close(self) -> None:
        self._closed = True
        for view in list(self._views):
            view._stop(give_back=False)
        for session in self.sessions.values():
            session.finish_close()
        _OPEN.discard(self)
        REGISTRY.forget_group(self)

    def __enter__(self) -> Group:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # --- rendering ------------------------------------------------------------------------------

    def __repr__(self) -> str:
        counts: dict[str, int] = {}
        for status in self.statuses.values():
            counts[status] = counts.get(status, 0) + 1
        states = ", ".join(f"{n} {s}" for s, n in counts.items()) or "empty"
        return f"<Group {len(self)} servers: {states}; {self.model.total_tools} tools>"

    def _repr_html_(self) -> str:
        # a plain str: marimo cannot serialise markupsafe's Markup, a str subclass (#38)
        return str(_html.Markup("<div><b>MCP servers</b>{}</div>").format(board_html(self.model.servers)))


_BOARD_COLUMNS = [
    "server",
    "status",
    "protocol",
    "server info",
    "tools",
    "in flight",
    "reconnects",
    "last error",
]


def board_html(rows: Sequence[Mapping[str, Any]]) -> _html.Markup:
    """The status board as a static HTML table (every server string escaped)."""
    records = []
    for row in rows:
        info = " ".join(str(v) for v in (row.get("server_name"), row.get("server_version")) if v)
        protocol = " ".join(str(v) for v in (row.get("era"), row.get("protocol_version")) if v)
        values = [
            _html.Markup("<b>{}</b>").format(row["server"]),
            _html.state_badge(row["status"]),
            protocol,
            info,
            tools_cell(row),
            str(row.get("in_flight") or 0),
            attempts_cell(row),
            row.get("last_error") or "",
        ]
        records.append(dict(zip(_BOARD_COLUMNS, values, strict=True)))
    return _html.html_table(records, columns=_BOARD_COLUMNS, css_class="mcpnb-board")


def tools_cell(row: Mapping[str, Any]) -> str:
    """A board row's tool count: "…" while an up server's list is not in yet (never "0")."""
    if row.get("tools") is not None:
        return str(row["tools"])
    return "…" if row.get("status") == "ready" else ""


def attempts_cell(row: Mapping[str, Any]) -> str:
    """A board row's reconnects, or the failed attempts of a server that never came up."""
    failures = int(row.get("failures") or 0)
    if failures:
        return f"{failures} attempt{'s' if failures != 1 else ''}"
    return str(row.get("reconnects") or 0)


def _close_all_at_exit() -> None:
    groups = list(_OPEN)
    if not groups:
        return
    engine = get_engine()
    for group in groups:
        try:
            engine.call(group.core.aclose)
        except Exception:
            logger.debug("closing a group at exit failed", exc_info=True)


on_exit(_close_all_at_exit)
