"""Many servers as one: :class:`ClientGroup`, one tool table with prefixed names.

A notebook user rarely has one server. A group holds one :class:`~mcp_notebook.Client` per named
server, connects them all at once, and offers their tools as one table named ``SERVER.TOOL``
(``group.call_tool("github.search_issues", {...})``). fastmcp's spelling, ``SERVER_TOOL``, is
accepted too, and so is a bare tool name that exactly one server offers.

Each server is a :class:`GroupMember`. A slow or failing server never holds up the others: all
connect in parallel, :meth:`ClientGroup.connect` returns once each has either come up or failed
its first attempt, and a failed one is retried in the background with the same backoff as a
reconnect (``backoff_initial``, ``backoff_max``, ``max_reconnect_attempts``) until it comes up or
the group gives up on it. Meanwhile its status is ``"failed"``, its ``error`` says why (the
program was not found, ...) and ``failures`` counts the attempts; ``"gave up"`` once no attempt
is left (and, for a server that was up, once its client stopped reconnecting). Once up, a
member's client reconnects by itself like any client. :meth:`ClientGroup.reconnect` retries one
at once, or starts over after the group gave up.

Names are unambiguous: every listed ``SERVER.TOOL`` calls the tool it lists. A server named like
another server followed by the separator (``a`` and ``a.b``; with a separator of several
characters also ``a`` and ``a_`` under ``"__"``) would break that: ``a``'s tool
``b.c`` and ``a.b``'s tool ``c`` would both list as ``a.b.c``, and tool names change at any time
(``list_changed``), so no escaping chosen when the group forms could stay safe. Such a group is
refused when it forms, naming both servers and a separator that would work (``separator="/"``);
without nested names no two listed names can be equal, and each resolves back to its own server.

Servers come from a mapping (name to a command, URL, :class:`Client`, config entry, or an entry
as a config file spells it: ``{"command": ..., "args": [...]}``), or from the config files people
already have (:meth:`ClientGroup.from_config`, see :mod:`mcp_notebook.config`); a config file's
whole content as a dict (``{"mcpServers": {...}}``) is read as that file (:func:`server_specs`).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import anyio

from ..connection import ConnectionOptions
from ..protocol._errors import UNRETRIED_KINDS, McpError, clip
from ..protocol._printable import printable
from ._arguments import suggest, unknown_tool
from ._client import Client
from ._owned import OwnedTask, spawn_owned
from ._results import Tool, ToolResult

if TYPE_CHECKING:
    import os

    from ..config import ServerConfig
    from ._task_handles import TaskHandle

__all__ = [
    "ClientGroup",
    "GroupMember",
    "MemberStatus",
    "ServerSpecs",
    "is_config_document",
    "resolve_tool_name",
    "server_specs",
]

logger = logging.getLogger("mcp_notebook.group")

#: A member's state: its client's once it came up; before that "connecting", "failed" (an attempt
#: failed, another is due), "gave up" (no attempt left). "closed" once the group closed it (or for
#: a config entry that could not be read).
MemberStatus = Literal[
    "connecting", "negotiating", "ready", "reconnecting", "failed", "gave up", "closing", "closed"
]
#: The keys of a config file's server section (``servers``: VS Code, ``mcp.json``).
_SECTIONS = ("mcpServers", "servers")
#: Keys that make a mapping one server's entry rather than a section of servers.
_ENTRY_KEYS = ("command", "url", "type", "args")


class ServerSpecs(dict[str, Any]):
    """Servers by name, each what :class:`ClientGroup` takes for one, and ``errors``: the entries
    that could not be read (name -> ConfigError), which become members that show why."""

    def __init__(
        self, specs: Mapping[str, Any] | None = None, errors: Mapping[str, BaseException] | None = None
    ):
        super().__init__(specs or {})
        self.errors: dict[str, BaseException] = dict(errors or {})


def is_config_document(servers: Mapping[str, Any]) -> bool:
    """``servers`` is a config file's content (``{"mcpServers": {...}}``, ``{"servers": {...}}``,
    VS Code settings' ``{"mcp": {"servers": ...}}``), not a mapping of servers by name."""
    for key in _SECTIONS:
        section = servers.get(key)
        if isinstance(section, Mapping) and not any(k in section for k in _ENTRY_KEYS):
            return True
    nested = servers.get("mcp")
    return isinstance(nested, Mapping) and any(isinstance(nested.get(k), Mapping) for k in _SECTIONS)


def server_specs(
    servers: Mapping[str, Any],
    *,
    only: Sequence[str] | None = None,
    inputs: Mapping[str, str] | None = None,
    ask: Callable[[dict[str, Any]], str] | None = None,
) -> ServerSpecs:
    """What each server of ``servers`` is, for :class:`ClientGroup`, whatever way it was given.

    A :class:`~mcp_notebook.config.ServerConfig` gives its entries and errors; a config file's
    content as a dict is read as the file would be; any other mapping is servers by name, where an
    entry spelt as in a config file (``{"command": "uvx", "args": [...]}``, ``{"url": ...}``) is
    read as one (variables expanded, ``${input:...}`` from ``inputs`` or ``ask``), and anything else
    (a command, an argv list, a URL, a :class:`Client`, a config entry) is kept as it is.
    ``only`` picks servers by name (a name not there is a ConfigError).
    """
    from ..config import ConfigError, ServerConfig, load_config

    if isinstance(servers, ServerConfig | ServerSpecs):
        return ServerSpecs(getattr(servers, "servers", servers), getattr(servers, "errors", None))
    if is_config_document(servers):
        document = load_config(servers, only=only, inputs=inputs, ask=ask)
        return ServerSpecs(document.servers, document.errors)
    names = list(servers) if only is None else list(dict.fromkeys(only))
    for name in names:
        if name not in servers:
            raise ConfigError(
                f"no such server (servers: {', '.join(map(str, servers)) or 'none'})", server=name
            )
    written = {name: servers[name] for name in names if isinstance(servers[name], Mapping)}
    loaded = load_config({"mcpServers": written}, inputs=inputs, ask=ask) if written else None
    specs = ServerSpecs()
    for name in names:
        if loaded is None or name not in written:
            specs[name] = servers[name]
        elif name in loaded.servers:
            specs[name] = loaded.servers[name]
        elif name in loaded.errors:
            specs.errors[name] = loaded.errors[name]
    return specs


def resolve_tool_name(
    name: str, servers: Sequence[str], offers: Callable[[str, str], bool], separator: str = "."
) -> tuple[str, str]:
    """``(server, tool)`` for a tool name among several servers (pure: ``offers(server, tool)``
    answers from lists already at hand).

    ``SERVER.TOOL`` (with ``separator``) is taken as written: the longest server name that fits
    wins. The other two spellings are matched against what the servers offer: fastmcp's
    ``SERVER_TOOL`` (its underscore is also common inside tool names), and a bare ``TOOL`` that
    exactly one server offers. Anything else is an McpError (kind ``invalid``) naming the servers;
    for a bare name several servers offer, its ``data`` is ``{"owners": [server, ...]}``.
    """
    if not isinstance(name, str) or not name:
        raise McpError("invalid", f"a tool name must be a non-empty string, not {name!r}")
    longest_first = sorted(servers, key=len, reverse=True)
    for server in longest_first:
        prefix = server + separator
        if name.startswith(prefix) and len(name) > len(prefix):
            return server, name[len(prefix) :]
    for server in longest_first:
        prefix = server + "_"
        if name.startswith(prefix) and offers(server, name[len(prefix) :]):
            return server, name[len(prefix) :]
    owners = [server for server in servers if offers(server, name)]
    if len(owners) == 1:
        return owners[0], name
    if owners:
        spelled = ", ".join(f"{s}{separator}{name}" for s in owners)
        raise McpError(
            "invalid", f"several servers offer a tool {name!r}; name one: {spelled}", data={"owners": owners}
        )
    known = ", ".join(servers) or "none"
    raise McpError(
        "invalid",
        f"no server of this group offers a tool {name!r}; name tools SERVER{separator}TOOL "
        f"(servers: {known})",
    )


#: Separators offered when server names nest under the one asked for.
_OTHER_SEPARATORS = ("/", ":", "__", "|", "~")


def _nested_pair(names: Sequence[str], separator: str) -> tuple[str, str] | None:
    """The first ``(outer, inner)`` whose listed names can meet, if any: ``inner + separator``
    begins with ``outer + separator``, so ``inner``'s tool ``T`` and ``outer``'s tool ``REST + T``
    list alike (``a`` and ``a.b`` with "."; also ``a`` and ``a_`` with "__", as ``a___t``), and
    the longer name wins. No such pair, no two listed names are equal."""
    by_length = sorted(set(names), key=len)
    for i, outer in enumerate(by_length):
        prefix = outer + separator
        for inner in by_length[i + 1 :]:
            if len(inner) > len(outer) and (inner + separator).startswith(prefix):
                return outer, inner
    return None


def _refuse_nested_names(names: Sequence[str], separator: str) -> None:
    """Refuse a group in which two servers' prefixed tool names could be equal (ValueError)."""
    pair = _nested_pair(names, separator)
    if pair is None:
        return
    outer, inner = pair
    rest = (inner + separator)[len(outer) + len(separator) :]

    def shown(name: str) -> str:
        return printable(clip(name))

    works = next((s for s in _OTHER_SEPARATORS if _nested_pair(names, s) is None), None)
    remedy = f"pass separator={works!r} or rename one" if works else "rename one of them"
    raise ValueError(
        f"servers {shown(outer)!r} and {shown(inner)!r} cannot share a group with separator "
        f"{separator!r}: {shown(inner + separator)}TOOL would name both the tool TOOL of "
        f"{shown(inner)!r} and the tool {shown(rest)}TOOL of {shown(outer)!r}, so a "
        f"listed name could call the wrong tool; {remedy}"
    )


class GroupMember:
    """One server of a group: its current client, or why it has none."""

    def __init__(self, name: str, spec: Any, options: Mapping[str, Any], error: BaseException | None = None):
        self.name = name
        self._spec = spec
        self._options = dict(options)
        #: The client, once one came up (a failed first attempt leaves None; a retry makes a new one).
        self.client: Client | None = spec if isinstance(spec, Client) else None
        self._status: MemberStatus = "closed" if error is not None else "connecting"
        #: Why the member is not ready, or why it was last lost (an McpError, or a ConfigError).
        self.error: BaseException | None = error
        #: Failed attempts in a row to bring it up (reset once it is up).
        self.failures = 0
        #: When the next attempt is due (``anyio.current_time()`` clock), while one is scheduled.
        self.retry_at: float | None = None
        self._retry_now = anyio.Event()
        self._unhook: Callable[[], None] = lambda: None
        self._adopted = False
        self._group_closed = False

    @property
    def status(self) -> MemberStatus:
        if self._adopted and self.client is not None:
            status = self.client.status
            reason = self.client.closed_reason
            if (
                status == "closed"
                and not self._group_closed
                and reason is not None
                and reason.kind != "closed"
            ):
                return "gave up"  # its client stopped reconnecting: the reason is error_message
            return status
        return self._status

    @property
    def ready(self) -> bool:
        return self.status == "ready"

    @property
    def error_message(self) -> str | None:
        """The reason, as one line fit for a status board (never a secret: see McpError, ConfigError)."""
        error = self.error
        if self._adopted and self.client is not None:
            error = self.client.closed_reason if self.client.status == "closed" else self.client.last_error
            if error is not None and getattr(error, "kind", None) == "closed":
                error = None
        if error is None:
            return None
        return error.message if isinstance(error, McpError) else str(error)

    def describe(self) -> str:
        """The server's command line or URL, without secrets."""
        if self.client is not None:
            return self.client.describe()
        describe = getattr(self._spec, "describe", None)
        if callable(describe):
            return str(describe())
        if isinstance(self._spec, str):
            return self._spec
        if isinstance(self._spec, Sequence) and not isinstance(self._spec, bytes):
            return " ".join(str(part) for part in self._spec)
        return type(self._spec).__name__

    def summary(self) -> dict[str, Any]:
        """One row of a status board: status, era and version, tools, in flight, reconnects, error."""
        client = self.client if self._adopted else None
        info = client.server_info if client is not None else {}
        tools = client.cached_tools if client is not None else None
        if tools is not None:
            tools = [tool for tool in tools if not tool.app_only]
        elif client is not None and client.server_capabilities and "tools" not in client.server_capabilities:
            tools = []  # no tools to list: 0 is known, not pending
        stats = client.stats if client is not None else None
        return {
            "server": self.name,
            "status": self.status,
            "era": client.era if client is not None else None,
            "protocol_version": client.protocol_version if client is not None else None,
            "server_name": info.get("name"),
            "server_version": info.get("version"),
            # None until the list is in (a board draws it pending, never as 0 tools)
            "tools": len(tools) if tools is not None else None,
            "in_flight": stats.in_flight if stats is not None else 0,
            "reconnects": (stats.reconnects if stats is not None else 0),
            "failures": self.failures,  # failed attempts to bring it up (0 once it is up)
            "last_error": self.error_message,
            "target": self.describe(),
        }

    def _new_client(self) -> Client:
        if isinstance(self._spec, Client):
            if self._spec.status == "closed":
                raise McpError(
                    "closed", f"the client given for {self.name!r} is closed and cannot be retried"
                )
            return self._spec
        client_args = getattr(self._spec, "client_args", None)
        if callable(client_args):
            target, entry_options = client_args()
            return Client(target, **{**self._options, **entry_options})
        return Client(self._spec, **self._options)

    def __repr__(self) -> str:
        error = f", {printable(self.error_message)}" if self.error_message and self.status != "ready" else ""
        return f"<GroupMember {self.name!r}: {self.status}{error}>"


class ClientGroup:
    """Several MCP servers, connected together, with one tool table (``SERVER.TOOL``).

    ``servers`` maps a name to what :class:`Client` takes (a command, an argv list, a URL, a
    transport), to an unconnected :class:`Client`, or to a config entry
    (:class:`mcp_notebook.config.ServerEntry`); a :class:`~mcp_notebook.config.ServerConfig`
    works too, and its bad entries become members that show their error (as do ``errors``,
    server name to the reason it could not be loaded). ``options`` are every
    client's (``timeout``, ``protocol``, ``backoff_initial``, ``sampling``: a handler or a
    pydantic-ai or LangChain chat model, as for :class:`Client`, ...); an entry's own (env, headers)
    come on top. ``separator`` joins server and tool names; a server named like another one plus
    the separator (``a`` and ``a.b``) is refused with a ValueError naming both, because ``a``'s
    tool ``b.c`` and ``a.b``'s tool ``c`` would list alike (see the module's docstring).
    """

    def __init__(
        self,
        servers: Mapping[str, Any] | ServerConfig,
        *,
        errors: Mapping[str, BaseException] | None = None,
        separator: str = ".",
        **options: Any,
    ) -> None:
        if not separator:
            raise ValueError("separator must not be empty")
        # Validated once, here, and kept for the retry schedule (the clients validate the rest).
        self._retry = ConnectionOptions(
            **{k: v for k, v in options.items() if k in ConnectionOptions.names()}
        )
        self.separator = separator
        self._options = dict(options)
        self.members: dict[str, GroupMember] = {}
        specs = server_specs(servers)
        for name, spec in specs.items():
            self._check_name(name)
            self.members[name] = GroupMember(name, spec, self._options)
        for name, error in {**specs.errors, **(errors or {})}.items():
            self.members[name] = GroupMember(name, None, self._options, error=error)
        _refuse_nested_names(list(self.members), separator)
        self._hooks: list[Callable[[GroupMember], None]] = []
        self._owned: OwnedTask | None = None
        self._task_group: anyio.abc.TaskGroup | None = None
        self._closing = anyio.Event()
        self._first_round = anyio.Event()
        self._pending_first: set[str] = set()
        self._closed = False
        self._fetched: dict[str, list[Tool]] = {}  # each server's tools as list_tools last got them

    @classmethod
    def from_config(
        cls,
        config: str | os.PathLike[str] | Mapping[str, Any] | ServerConfig | None = None,
        *,
        only: Sequence[str] | None = None,
        inputs: Mapping[str, str] | None = None,
        ask: Callable[[dict[str, Any]], str] | None = None,
        separator: str = ".",
        **options: Any,
    ) -> ClientGroup:
        """A group of the servers in a config file (Claude Desktop, VS Code, Cursor, ``mcp.json``).

        ``config`` is a path, an already-loaded dict or :class:`ServerConfig`, or None to search
        the documented places (:func:`mcp_notebook.config.config_search_path`). ``only`` picks
        servers by name; ``inputs`` answers VS Code ``${input:...}`` prompts (others are asked
        once per session through ``ask``, by default ``getpass``).
        """
        from ..config import ServerConfig, load_config

        loaded = (
            config
            if isinstance(config, ServerConfig)
            else load_config(config, only=only, inputs=inputs, ask=ask)
        )
        return cls(loaded, separator=separator, **options)

    @staticmethod
    def _check_name(name: Any) -> None:
        if not isinstance(name, str) or not name or any(c.isspace() for c in name):
            raise ValueError(f"a server name must be a non-empty string without spaces, not {name!r}")

    # --- lifetime -------------------------------------------------------------------------------

    async def __aenter__(self) -> ClientGroup:
        await self.connect()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    async def connect(self, *, wait: bool | float = True) -> ClientGroup:
        """Connect every server at once; return when each is up or has failed its first attempt.

        A server that failed keeps being retried in the background (see the module's docstring).
        ``wait`` a number of seconds returns after that long at most, the slower servers still
        connecting (each is usable the moment its status turns "ready"); ``False`` returns at once.
        """
        if self._closed:
            raise McpError("closed", "this group was closed; create a new one to connect again")
        if self._owned is None:
            self._pending_first = {n for n, m in self.members.items() if m.error is None}
            if not self._pending_first:
                self._first_round.set()
            started = anyio.Event()
            self._owned = spawn_owned(lambda: self._supervise(started), name="mcp-notebook group")
            await started.wait()
        if wait is True:
            await self._first_round.wait()
        elif wait:
            with anyio.move_on_after(wait):
                await self._first_round.wait()
        return self

    async def _supervise(self, started: anyio.Event) -> None:
        try:
            async with anyio.create_task_group() as tg:
                self._task_group = tg
                for member in self.members.values():
                    if member.error is None:
                        tg.start_soon(self._keep, member)
                started.set()
                await self._closing.wait()
                tg.cancel_scope.cancel()
        except Exception:  # a bug: every member's own failures are handled in _keep
            logger.exception("the group's supervisor failed")
        finally:
            self._task_group = None
            started.set()
            self._first_round.set()

    async def _keep(self, member: GroupMember) -> None:
        """Bring ``member`` up, retrying with backoff; once up, its client reconnects by itself."""
        while True:
            member.retry_at = None
            member._retry_now = anyio.Event()
            try:
                client = member._new_client()
            except (McpError, TypeError, ValueError) as exc:
                member.failures += 1
                self._failed(member, exc, final=True)
                return
            member.client = None if client is not member._spec else client
            member._status = "connecting"
            self._changed(member)
            try:
                await client.connect()
            except McpError as exc:
                member.failures += 1
                final = (
                    exc.kind in UNRETRIED_KINDS
                    or not self._retry.reconnect
                    or member.failures > self._retry.max_reconnect_attempts
                    or isinstance(member._spec, Client)
                )
                self._failed(member, exc, final=final)
                if final:
                    return
                delay = self._retry.backoff_delay(member.failures - 1)
                member.retry_at = anyio.current_time() + delay
                self._changed(member)
                with anyio.move_on_after(delay):
                    await member._retry_now.wait()
                continue
            self._adopt(member, client)
            return

    def _adopt(self, member: GroupMember, client: Client) -> None:
        member.client = client
        member._adopted = True
        member.failures = 0
        member.error = None
        member._unhook = client.connection.on_state_change(lambda _state: self._changed(member))
        self._first_done(member)
        self._changed(member)

    def _failed(self, member: GroupMember, error: BaseException, *, final: bool) -> None:
        member.error = error
        member._status = "gave up" if final else "failed"
        # INFO, not WARNING: the member's status and error_message say it where people look (the
        # board, summary()), and a notebook would otherwise print it as stray stderr.
        logger.info("server %r of the group: %s%s", member.name, error, "" if final else "; retrying")
        self._first_done(member)
        self._changed(member)

    def _first_done(self, member: GroupMember) -> None:
        self._pending_first.discard(member.name)
        if not self._pending_first:
            self._first_round.set()

    async def reconnect(self, name: str) -> None:
        """Try ``name`` again now: skip a pending backoff, or start over after the group gave up."""
        member = self.member(name)
        if member._spec is None:
            raise McpError("invalid", f"server {name!r} has a config error; fix it and load the config again")
        if member.status == "failed" and not member._adopted:
            member._retry_now.set()
            return
        if member.status not in ("closed", "gave up"):
            return  # connecting, or up and reconnecting by itself
        if self._task_group is None:
            raise McpError("closed", "the group is not connected")
        if member.client is not None and member._adopted:
            member._unhook()
            await member.client.aclose()
        member.client = None
        member._adopted = False
        member.failures = 0
        member._status = "connecting"  # at once: a second reconnect() now starts no second loop
        self._task_group.start_soon(self._keep, member)

    async def aclose(self) -> None:
        """Close every server (in parallel) and stop retrying. Idempotent."""
        self._closed = True
        self._closing.set()
        for member in self.members.values():
            member._group_closed = True
        if self._owned is not None:
            await self._owned.stop(grace=5)
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as tg:
                for member in self.members.values():
                    member._unhook()
                    if member.client is not None:
                        tg.start_soon(member.client.aclose)
        for member in self.members.values():
            if not member._adopted:
                member._status = "closed"
            self._changed(member)

    # --- members --------------------------------------------------------------------------------

    def on_change(self, hook: Callable[[GroupMember], None]) -> Callable[[], None]:
        """Call ``hook(member)`` whenever a member's status, client or error changes.

        Called synchronously on the event loop: quick, non-blocking library code only. Returns a
        function that unhooks it.
        """
        self._hooks.append(hook)
        return lambda: self._hooks.remove(hook) if hook in self._hooks else None

    def _changed(self, member: GroupMember) -> None:
        for hook in list(self._hooks):
            try:
                hook(member)
            except Exception:
                logger.exception("a group change hook raised; ignored")

    def member(self, name: str) -> GroupMember:
        try:
            return self.members[name]
        except KeyError:
            known = ", ".join(self.members) or "none"
            raise KeyError(f"no server {name!r} in this group (servers: {known})") from None

    def __getitem__(self, name: str) -> Client:
        """The client of server ``name``; an McpError says why if it is not up."""
        member = self.member(name)
        if member.client is None or not member._adopted:
            reason = member.error_message or member.status
            raise McpError("transport", f"server {name!r} is not connected ({reason})")
        return member.client

    def __iter__(self) -> Iterator[str]:
        return iter(self.members)

    def __len__(self) -> int:
        return len(self.members)

    def __contains__(self, name: object) -> bool:
        return name in self.members

    @property
    def clients(self) -> dict[str, Client]:
        """The clients that came up, by server name (some may be reconnecting right now)."""
        return {n: m.client for n, m in self.members.items() if m.client is not None and m._adopted}

    @property
    def statuses(self) -> dict[str, MemberStatus]:
        return {name: member.status for name, member in self.members.items()}

    def summary(self) -> list[dict[str, Any]]:
        """A status board: one :meth:`GroupMember.summary` row per server."""
        return [member.summary() for member in self.members.values()]

    # --- one tool table -------------------------------------------------------------------------

    def qualify(self, server: str, tool: str) -> str:
        """The group's name of ``tool`` on ``server``: ``SERVER.TOOL``."""
        return f"{server}{self.separator}{tool}"

    @property
    def cached_tools(self) -> list[Tool]:
        """Every up server's cached tools, named ``SERVER.TOOL`` (no request; may be stale).

        Tools only an MCP App's View may call are left out, as :meth:`Client.list_tools` does.
        """
        return [
            self.qualified(name, tool)
            for name in self.clients
            for tool in self._known_tools(name)
            if not tool.app_only
        ]

    def _known_tools(self, server: str) -> list[Tool]:
        # The cache, or the list fetched last (a fetch that raced a change is returned, not cached).
        member = self.members.get(server)
        client = member.client if member is not None and member._adopted else None
        if client is None:
            return []
        tools = client.cached_tools
        return tools if tools is not None else self._fetched.get(server, [])

    async def list_tools(
        self, *, refresh: bool = False, timeout: float | None = None, include_app_only: bool = False
    ) -> list[Tool]:
        """Every up server's tools, fetched in parallel, named ``SERVER.TOOL`` (``raw`` is the server's).

        A server that cannot answer is left out (and logged): one server's trouble never hides the
        others' tools. App-only tools (MCP Apps) only with ``include_app_only``.
        """
        found: dict[str, list[Tool]] = {}

        async def one(name: str, client: Client) -> None:
            try:
                found[name] = await client.list_tools(refresh=refresh, timeout=timeout, include_app_only=True)
            except McpError as exc:
                logger.info("could not list the tools of %r: %s", name, exc)

        async with anyio.create_task_group() as tg:
            for name, client in self.clients.items():
                tg.start_soon(one, name, client)
        self._fetched.update(found)
        return [
            self.qualified(name, tool)
            for name in self.members
            for tool in found.get(name, [])
            if include_app_only or not tool.app_only
        ]

    def qualified(self, server: str, tool: Tool) -> Tool:
        """A copy of ``tool`` named ``SERVER.TOOL``; its ``raw`` is still the server's own dict."""
        return dataclasses.replace(tool, name=self.qualify(server, tool.name))

    def resolve(self, name: str) -> tuple[str, str]:
        """``(server, tool)`` for a group tool name: ``SERVER.TOOL``, fastmcp's ``SERVER_TOOL``, or ``TOOL``.

        The rule is :func:`resolve_tool_name`'s, over this group's servers and their cached lists;
        a name no server offers is refused with the closest ``SERVER.TOOL`` names
        (:func:`~mcp_notebook.client._arguments.unknown_tool`, as a single client says it), and a
        ``SERVER.TOOL`` whose ``SERVER`` is not in the group with that name and the group's servers.
        """
        try:
            return resolve_tool_name(name, list(self.members), self._offers, self.separator)
        except McpError as exc:
            if exc.data is not None or not isinstance(name, str) or not name:
                raise
            server, dot, _ = name.partition(self.separator)
            if dot and server and server not in self.members:
                # SERVER.TOOL whose SERVER is none of ours: a list of tools would not say that.
                servers = list(self.members)
                raise McpError(
                    "invalid",
                    f"no server named {clip(server)!r} in this group (for {clip(name)!r})"
                    + suggest(server, servers, "servers"),
                    full_message=f"no server named {server!r} in this group (for {name!r})"
                    + suggest(server, servers, "servers", full=True),
                ) from None
            known = [self.qualify(s, t.name) for s in self.members for t in self._known_tools(s)]
            advice = f"; name tools SERVER{self.separator}TOOL"
            raise McpError(
                "invalid",
                unknown_tool(name, known) + advice,
                full_message=unknown_tool(name, known, full=True) + advice,
            ) from None

    def _offers(self, server: str, tool: str) -> bool:
        return any(t.name == tool for t in self._known_tools(server))

    async def _client_for(self, name: str) -> tuple[Client, str]:
        if self.separator not in name:
            await self.list_tools()  # the other spellings are matched against fresh lists
        server, tool = self.resolve(name)
        return self[server], tool

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, **options: Any
    ) -> ToolResult:
        """Call ``SERVER.TOOL`` (options as :meth:`Client.call_tool`)."""
        client, tool = await self._client_for(name)
        return await client.call_tool(tool, arguments, **options)

    async def start_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, **options: Any
    ) -> TaskHandle:
        """Start ``SERVER.TOOL`` as a task (see :meth:`Client.start_tool`)."""
        client, tool = await self._client_for(name)
        return await client.start_tool(tool, arguments, **options)

    def __repr__(self) -> str:
        counts: dict[str, int] = {}
        for member in self.members.values():
            counts[member.status] = counts.get(member.status, 0) + 1
        states = ", ".join(f"{n} {s}" for s, n in counts.items()) or "empty"
        return f"<ClientGroup {len(self.members)} servers: {states}; {len(self.cached_tools)} tools>"
