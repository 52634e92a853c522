"""The ``%mcp`` commands as plain functions, for front ends without magics (marimo, scripts).

Why: marimo has no IPython, so no ``%mcp``; what a magic does beyond a session's own methods (name
the notebook's sessions, switch the current one, list them, close them, find the tools matching a
pattern) must be reachable from Python too. These functions are that one implementation, and the
magics (:mod:`mcp_notebook.jupyter._magics`) call them, so the two faces cannot drift apart. What is
already a method (``session.call_tool``, ``read_resource``, ``tools_frame``, ``explorer()``...) stays
one; README's table puts each magic beside its function.

They work on the notebook's one set of sessions (:data:`._registry.REGISTRY`): sessions and groups
however they were opened (``connect()``, ``Session()``, ``connect_all()``, ``%mcp connect``). A
mistake (no such name, a name that was closed) raises :class:`~._targets.TargetError`, a
``ValueError`` whose message is one line meant to be shown as it is (the magics show it so).
"""

from __future__ import annotations

import fnmatch
from typing import TYPE_CHECKING, cast

from ..client._arguments import suggest
from ..protocol._errors import set_full_tracebacks
from ._registry import REGISTRY, Registry
from ._targets import TargetError

if TYPE_CHECKING:
    import pandas

    from ._group import Group
    from ._session import Session

__all__ = ["disconnect", "servers", "session", "show_full_tracebacks", "tools", "use"]

_NONE_OPEN = (
    "no MCP session: connect one first (mcp_notebook.connect(...), %mcp connect NAME -- COMMAND, "
    "%mcp connect NAME URL, a NAME from mcp.json, or connect_all() / --all for every server of a config)"
)


def session(name: str | None = None, *, registry: Registry = REGISTRY) -> Session:
    """The session called ``name`` (a session's, or a group's server's), or the current one: what
    ``%mcp ... -s NAME`` and every ``%mcp`` command without ``-s`` talk to."""
    return named_session(name, registry=registry)[1]


def named_session(name: str | None = None, *, registry: Registry = REGISTRY) -> tuple[str, Session]:
    """``(name, session)`` as :func:`session` finds it (the name is the current one's when None)."""
    names = registry.names()
    if name is None:
        current = registry.current
        if current is not None and current not in names and registry.was_closed(current):
            raise _closed_error(current, registry)
        if current is None or current not in names:
            raise TargetError(_NONE_OPEN)
        name = current
    entry = registry.sessions.get(name)
    if entry is not None:
        return name, cast("Session", entry.session)  # the registry holds notebook Sessions
    group_name = names.get(name)
    if group_name is None:
        raise no_server_error(name, registry)
    group = cast("Group", registry.groups[group_name])
    return name, group[name]  # an McpError says why a group's server is not up


def servers(*, registry: Registry = REGISTRY) -> pandas.DataFrame:
    """Every open session and group's server, one row each (name, current, server, status, era,
    protocol, tools, opened, group, target, last_error): ``%mcp servers``."""
    return registry.frame()


def use(name: str, *, registry: Registry = REGISTRY) -> Session:
    """Make ``name`` the current session (the one ``%mcp`` commands talk to); returns it."""
    found, chosen = named_session(name, registry=registry)
    registry.current = found
    return chosen


def disconnect(name: str | None = None, *, all: bool = False, registry: Registry = REGISTRY) -> list[str]:
    """Close the session or group called ``name`` (None: the current session), or every one with
    ``all=True``; returns what was closed, one line each (``%mcp disconnect`` prints them)."""
    sessions: list[str] = []
    groups: list[str] = []
    if all:
        if name is not None:
            raise TargetError("give a NAME or --all, not both")
        sessions, groups = list(registry.sessions), list(registry.groups)
    else:
        target = name if name is not None else named_session(registry=registry)[0]
        if target in registry.sessions:
            sessions = [target]
        elif target in registry.groups:
            groups = [target]
        else:
            owner = registry.names().get(target)
            if owner is None:
                raise no_server_error(target, registry)
            raise TargetError(
                f"{target!r} is a server of group {owner!r}; %mcp disconnect {owner} closes the group"
            )
    closed: list[str] = []
    for session_name in sessions:
        found = registry.remove(session_name)
        if found is not None:
            found.close()
        closed.append(f"disconnected {session_name!r}")
        if session_name == registry.current:  # not a group's server of the same name instead
            registry.current = None
    for group_name in groups:
        group = registry.remove_group(group_name)
        if group is not None:
            group.close()
            closed.append(f"disconnected group {group_name!r} ({len(list(group))} servers)")
    registry.fix_current()
    return closed


def tools(
    pattern: str | None = None,
    *,
    server: str | None = None,
    include_app_only: bool = False,
    registry: Registry = REGISTRY,
) -> pandas.DataFrame:
    """The tools of ``server`` (None: the current session) whose names match ``pattern`` (a glob
    with ``*?[``, else a case-insensitive part of the name), as a DataFrame: ``%mcp tools``.

    A ``pattern`` that names a server lists that server's tools; one that names a group lists
    every server's of the group (with a ``server`` column)."""
    if pattern is not None and server is None:
        if pattern in registry.names():  # a server's name lists its tools
            server, pattern = pattern, None
        elif pattern in registry.groups:
            group = cast("Group", registry.groups[pattern])
            return group.tools_frame(include_app_only=include_app_only)
    frame = session(server, registry=registry).tools_frame(include_app_only=include_app_only)
    if pattern:
        names = frame["name"].astype(str)
        if any(c in pattern for c in "*?["):
            keep = names.map(lambda n: fnmatch.fnmatchcase(n, pattern))
        else:
            keep = names.str.contains(pattern, case=False, regex=False)
        frame = frame[keep.astype(bool)].reset_index(drop=True)
    return frame


def show_full_tracebacks(full: bool = True) -> None:
    """Show McpErrors with their full traceback (True) or as one short block (False, the default):
    ``%mcp tb full`` / ``%mcp tb short``. ``MCP_NOTEBOOK_TRACEBACK=full`` sets it for a process."""
    set_full_tracebacks(full)


def no_server_error(name: str, registry: Registry = REGISTRY) -> TargetError:
    """What to say about a name that names no open session or group's server."""
    if registry.was_closed(name):
        return _closed_error(name, registry)
    if name in registry.groups:
        members = ", ".join(cast("Group", registry.groups[name]))
        return TargetError(f"{name!r} is a group of servers ({members}); name one of them")
    if not registry.groups:
        return TargetError(f"no session named {name!r}{suggest(name, list(registry.sessions), 'sessions')}")
    return TargetError(f"no server named {name!r}{suggest(name, list(registry.names()), 'servers')}")


def _closed_error(name: str, registry: Registry) -> TargetError:
    open_names = registry.open_names()
    if not open_names:
        return TargetError(f"no session named {name!r} (it was closed); none is open: connect one first")
    return TargetError(f"no session named {name!r} (it was closed); open sessions: {', '.join(open_names)}")
