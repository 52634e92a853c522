"""The notebook's one set of open sessions: what ``%mcp`` names, however a session was opened.

What it owns: the open :class:`~.session.Session` objects and :class:`~.group.Group` objects of
this process, by name, and which one is current. ``mcp_notebook.connect()``, ``Session(...)``,
``connect_all()``, ``Group(...)`` and the ``%mcp connect`` magics all register here, so a session
opened in code is one ``%mcp tools`` sees, and ``%mcp servers`` lists them all.

What it must never do: import IPython (code outside IPython registers too), connect, or close a
session of its own accord. It closes nothing at all: the magics close what they replace.

Names
=====

A session is registered under the name it asked for (``name=``), else its server's
``serverInfo.name``. Code never takes a name away from a session already open: a taken name gets
a suffix (``demo``, ``demo-2``, ``demo-3``), and ``session.name`` says which it got. Only ``%mcp
connect NAME`` replaces (and closes) the session of that name, as the magic documents, and so does
``mcp_notebook.connect()`` run again (a re-run cell): it finds the session it opened before by
:meth:`Registry.opened_with` (the name asked for, or the same target from the same cell) and either
returns it (same target and options) or closes it and connects anew (see
:mod:`mcp_notebook.notebook._once`). A group
registers under its ``name=`` ("group" by default), made unique the same way, and its servers
become names too (:func:`server_names` holds the precedence). The session or group
registered last is current; ``%mcp use`` (or :meth:`Registry.use`) switches.

Lifetime: strong references, removed on close
=============================================

The registry holds its sessions strongly, and a session leaves it when it closes
(``close()``, ``aclose()``, its group's close, interpreter exit: all end in
``Session._finish_close``, which calls :meth:`Registry.forget`). Weak references would free
nothing: an open session is kept alive by its engine (the task that follows its notifications)
whether or not anyone holds it, until it is closed. They would only make ``%mcp`` lose, at the
garbage collector's whim, a session the user never assigned (``mcp_notebook.connect(...)`` as a
cell's last line). What stays after a close is the name alone, in a short bounded list, so that
``%mcp`` can say "it was closed" rather than "no such session".

Thread safety: the engine thread may close a session (``await session.aclose()``) while the kernel
thread reads; every change happens under a lock and replaces the dicts (copy on write), so a
reader iterating a dict it got never sees it change under it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from ..protocol._printable import printable
from ._frame_views import readable_frame
from ._targets import describe_command, describe_target, describe_url  # re-exported: old home

if TYPE_CHECKING:
    import pandas

    from ._model import GroupModel, SessionModel

__all__ = [
    "REGISTRY",
    "Entry",
    "Given",
    "GroupPort",
    "Registry",
    "SessionPort",
    "describe_command",
    "describe_target",
    "describe_url",
    "same_value",
    "server_names",
]

#: How many names of closed sessions are remembered (for "it was closed" in messages).
_CLOSED_NAMES = 64

SERVERS_COLUMNS = [
    "name",
    "current",
    "server",
    "status",
    "era",
    "protocol",
    "tools",
    "opened",
    "group",
    "target",
    "last_error",
]


class SessionPort(Protocol):
    """What the registry needs of a session (a :class:`~.session.Session`): its model, for the
    listing, and ``close()`` for whoever takes it out (the registry itself never closes)."""

    @property
    def model(self) -> SessionModel: ...

    def close(self) -> None: ...


class GroupPort(Protocol):
    """What the registry needs of a group (a :class:`~.group.Group`): its servers' names (iterating
    it), the sessions that are up, its model's rows, the name it is registered under, ``close()``."""

    name: str

    @property
    def model(self) -> GroupModel: ...

    @property
    def sessions(self) -> Mapping[str, SessionPort]: ...

    def __iter__(self) -> Iterator[str]: ...

    def close(self) -> None: ...


def server_names(
    sessions: Mapping[str, SessionPort], groups: Mapping[str, GroupPort]
) -> dict[str, str | None]:
    """Every usable server name -> the group it comes from (None: a session of its own), by the
    registry's precedence (see Names above): sessions first, then the groups' servers, the group
    registered last first."""
    names: dict[str, str | None] = dict.fromkeys(sessions)
    for group_name in reversed(list(groups)):
        for server in groups[group_name]:
            names.setdefault(server, group_name)
    return names


@dataclass(frozen=True)
class Entry:
    """A registered session: the session, how its server was reached (nothing secret in it) and how
    it was opened (``"connect()"``, ``"Session()"``, ``"%mcp connect"``)."""

    session: SessionPort
    target: str
    opened: str
    #: What ``connect()`` was given, to know a re-run cell's call (None: opened another way).
    given: Given | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class Given:
    """What a ``connect()`` call was given, and where from: its ``site`` is the notebook cell (the
    front end's cell id) or else the calling line, ``run`` the kernel's execute request that ran
    it and ``ordinal`` which ``connect()`` of that run it was (0, 1, ...: a loop's calls).
    Never shown: options may hold secrets."""

    target: Any
    options: dict[str, Any] = field(repr=False)
    site: Any = None
    run: Any = None
    ordinal: int = 0

    def same_call(self, target: Any, options: Mapping[str, Any]) -> bool:
        """``connect(target, **options)`` is this call again: same target, same options."""
        old = self.options
        return (
            same_value(self.target, target)
            and old.keys() == options.keys()
            and all(same_value(old[k], options[k]) for k in old)
        )


class Registry:
    """The open sessions and groups by name, and the current name. One per process: :data:`REGISTRY`."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        #: Sessions by name, in the order they were registered (copy on write: never mutate).
        self.sessions: dict[str, Entry] = {}
        #: Groups by name, the one registered last last (copy on write: never mutate).
        self.groups: dict[str, GroupPort] = {}
        #: How each group was opened, by group name.
        self.groups_opened: dict[str, str] = {}
        #: The current name: a session's, or a group's server's; may name one closed since.
        self.current: str | None = None
        self._closed: dict[str, None] = {}

    # --- names -------------------------------------------------------------------------------------

    def names(self) -> dict[str, str | None]:
        """Every usable server name -> its group (None: a session of its own), by the precedence of
        :func:`server_names`."""
        return server_names(self.session_objects(), self.groups)

    def session_objects(self) -> dict[str, SessionPort]:
        return {name: entry.session for name, entry in self.sessions.items()}

    def open_names(self) -> list[str]:
        """The names ``%mcp`` can use now: sessions first, then the groups' servers that are up."""
        names = self.names()
        return [name for name, group in names.items() if group is None or name in self.groups[group].sessions]

    def was_closed(self, name: str) -> bool:
        """``name`` named a session (or a group's server) that has been closed, and nothing since."""
        return name in self._closed and name not in self.names()

    def _taken(self) -> set[str]:
        taken = set(self.sessions) | set(self.groups)
        for group in self.groups.values():
            taken.update(group)
        return taken

    def _unique(self, wanted: str, taken: set[str]) -> str:
        if wanted not in taken:
            return wanted
        number = 2
        while f"{wanted}-{number}" in taken:
            number += 1
        return f"{wanted}-{number}"

    # --- sessions ----------------------------------------------------------------------------------

    def add(
        self, session: SessionPort, *, name: str, opened: str, target: str, replace: bool = False
    ) -> tuple[str, SessionPort | None]:
        """Register ``session`` and make it current; ``(its name, the session it replaced)``.

        ``name`` is made unique (``demo-2``) unless ``replace``: then a session already of that
        name leaves the registry and is returned, for the caller to close. A session registered
        already moves to the new name.
        """
        with self._lock:
            sessions = {n: e for n, e in self.sessions.items() if e.session is not session}
            replaced: SessionPort | None = None
            if replace:
                old = sessions.pop(name, None)
                replaced = old.session if old is not None else None
            else:
                self.sessions = sessions
                name = self._unique(name, self._taken())
            sessions[name] = Entry(session, target, opened)
            self.sessions = sessions
            self._closed.pop(name, None)
            self.current = name
            return name, replaced

    def note_given(self, session: SessionPort, given: Given) -> None:
        """Remember what ``connect()`` was given for ``session`` (registered already)."""
        with self._lock:
            self.sessions = {
                n: replace(e, given=given) if e.session is session else e for n, e in self.sessions.items()
            }

    def opened_with(self, name: str | None, site: Any, run: Any, ordinal: int) -> tuple[str, Entry] | None:
        """The session a re-run ``connect(..., name=name)`` means: the one named ``name``, else the
        one the ``ordinal``-th ``connect()`` of an earlier run of the same ``site`` (cell) opened;
        None if there is none open. Calls of one run never mean each other (a loop's sessions)."""
        sessions = self.sessions
        if name is not None:
            entry = sessions.get(name)
            return (name, entry) if entry is not None else None
        for found, entry in reversed(sessions.items()):
            given = entry.given
            if given is not None and given.site == site and given.run != run and given.ordinal == ordinal:
                return found, entry
        return None

    def remove(self, name: str) -> SessionPort | None:
        """Take the session ``name`` out (the caller closes it); its name is remembered as closed."""
        with self._lock:
            sessions = dict(self.sessions)
            entry = sessions.pop(name, None)
            if entry is None:
                return None
            self.sessions = sessions
            self._remember_closed([name])
            return entry.session

    def forget(self, session: SessionPort) -> None:
        """``session`` closed: it leaves (the current name stays, so ``%mcp`` says it was closed)."""
        with self._lock:
            names = [n for n, e in self.sessions.items() if e.session is session]
            if not names:
                return
            self.sessions = {n: e for n, e in self.sessions.items() if e.session is not session}
            self._remember_closed(names)

    def _remember_closed(self, names: list[str]) -> None:
        for name in names:
            self._closed.pop(name, None)
            self._closed[name] = None
        while len(self._closed) > _CLOSED_NAMES:
            del self._closed[next(iter(self._closed))]

    # --- groups ------------------------------------------------------------------------------------

    def add_group(
        self, group: GroupPort, *, name: str, opened: str, replace: bool = False
    ) -> tuple[str, GroupPort | None]:
        """Register ``group``; ``(its name, the group it replaced)`` (as :meth:`add`). Its first
        server that is up (and not hidden by a session's name) becomes current."""
        with self._lock:
            groups = {n: g for n, g in self.groups.items() if g is not group}
            opened_by = {n: o for n, o in self.groups_opened.items() if n in groups}
            replaced: GroupPort | None = None
            if replace:
                replaced = groups.pop(name, None)
                opened_by.pop(name, None)
            else:
                self.groups, self.groups_opened = groups, opened_by
                name = self._unique(name, self._taken())
            groups[name] = group
            opened_by[name] = opened
            self.groups, self.groups_opened = groups, opened_by
            group.name = name
            names = self.names()
            first = next((s for s in group if names.get(s) == name and s in group.sessions), None)
            for server in group:
                self._closed.pop(server, None)
            if first is not None:
                self.current = first
            else:
                self.fix_current()
            return name, replaced

    def remove_group(self, name: str) -> GroupPort | None:
        """Take the group ``name`` out (the caller closes it); its servers' names are remembered."""
        with self._lock:
            group = self.groups.get(name)
            if group is not None:
                self.forget_group(group)
            return group

    def forget_group(self, group: GroupPort) -> None:
        """``group`` closed: it leaves, and its servers' names are remembered as closed."""
        with self._lock:
            names = [n for n, g in self.groups.items() if g is group]
            if not names:
                return
            self.groups = {n: g for n, g in self.groups.items() if g is not group}
            self.groups_opened = {n: o for n, o in self.groups_opened.items() if n in self.groups}
            self._remember_closed([server for server in group if server not in self.names()])

    # --- the current name --------------------------------------------------------------------------

    def use(self, name: str) -> None:
        """Make ``name`` (a session's or a group's server's) current; KeyError if it names none."""
        with self._lock:
            if name not in self.names():
                raise KeyError(name)
            self.current = name

    def fix_current(self) -> None:
        """After a disconnect: keep the current name if it still means something, else the last
        session registered, else the first server up of the group registered last, else none."""
        with self._lock:
            names = self.names()
            if self.current in names:
                return
            if self.sessions:
                self.current = next(reversed(self.sessions))
                return
            for group_name in reversed(list(self.groups)):
                group = self.groups[group_name]
                up = [s for s in group if names.get(s) == group_name and s in group.sessions]
                if up:
                    self.current = up[0]
                    return
            self.current = None

    # --- listing -----------------------------------------------------------------------------------

    def rows(self) -> Iterator[dict[str, Any]]:
        """One row per session and per group's server (columns: :data:`SERVERS_COLUMNS`)."""
        names = self.names()
        current = self.current
        for name, entry in self.sessions.items():
            model = entry.session.model
            info = model.server_info or {}
            yield {
                "name": name,
                "current": name == current,
                "server": _server(info.get("name"), info.get("version")),
                "status": model.status,
                "era": model.era,
                "protocol": model.protocol_version,
                "tools": len(model.tools),
                "opened": entry.opened,
                "group": None,
                "target": entry.target,
                "last_error": model.last_error,
            }
        for group_name, group in self.groups.items():
            opened = self.groups_opened.get(group_name, "")
            for row in group.model.servers:
                server = str(row["server"])
                owner = names.get(server, group_name)
                shown = server
                if owner != group_name:
                    shown = f"{server} (hidden by {'the session' if owner is None else f'group {owner!r}'})"
                yield {
                    "name": shown,
                    "current": shown == current,
                    "server": _server(row.get("server_name"), row.get("server_version")),
                    "status": row.get("status"),
                    "era": row.get("era"),
                    "protocol": row.get("protocol_version"),
                    "tools": row.get("tools"),
                    "opened": opened,
                    "group": group_name,
                    "target": row.get("target"),
                    "last_error": row.get("last_error"),
                }

    def frame(self) -> pandas.DataFrame:
        """:meth:`rows` as a DataFrame (what ``%mcp servers`` shows)."""
        import pandas as pd

        frame = pd.DataFrame(list(self.rows()), columns=SERVERS_COLUMNS)
        for name in ("server", "last_error"):  # the server's words, for reading: escapes made visible
            frame[name] = frame[name].map(lambda v: printable(v) if isinstance(v, str) else v)
        frame["current"] = frame["current"].astype(bool)
        frame["tools"] = pd.Series(pd.array(list(frame["tools"]), dtype="Int64"), index=frame.index)
        texts = [name for name in SERVERS_COLUMNS if name not in ("current", "tools")]
        frame = frame.astype({name: "string" for name in texts})  # pd.NA where missing, as every frame
        # drawn a row a line: a server's command wrapped in its narrow column made rows 4-5 lines tall
        return readable_frame(frame, one_line=True)


def same_value(a: Any, b: Any) -> bool:
    """``a == b`` for what a user passes (commands, options, objects), never raising: a value
    whose ``==`` fails or is not a plain truth (an array's) counts as different."""
    if a is b:
        return True
    try:
        return (a == b) is True
    except Exception:
        return False


def _server(name: Any, version: Any) -> str | None:
    text = " ".join(str(v) for v in (name, version) if v)
    return text or None


#: The process's one registry (the magics and every way of opening a session use it).
REGISTRY = Registry()
