"""Groups of servers in the ``%mcp`` magics (``%mcp connect --all``): one namespace of server names,
tool names across servers, and the status board.

What it owns: which server a name typed in a magic means once sessions connected one by one and
the servers of connected groups share one namespace; the ``SERVER.TOOL`` names offered across all
of them; the board that ``%mcp connect --all`` shows (HTML, with a text fallback for terminals;
``%mcp servers`` is the registry's DataFrame, :mod:`..notebook._registry`). It never connects and
never asks a server anything: completion calls it on every Tab, so it reads only the lists the
models already hold. The precedence of names below is the registry's
(:func:`..notebook._registry.server_names`); this module applies it to tools and the board.

Precedence of names
===================

- A session connected on its own (``%mcp connect NAME …``, or ``connect()`` in code) comes first.
  A group's server of the same name stays reachable through its group only (``%mcp connect --all
  -o G``, then ``G["NAME"]``); the board and ``%mcp servers`` mark it hidden.
- Among groups, the one connected last comes first.
- ``%mcp call TOOL``: the current session's tool of that name, when it has one; otherwise
  ``SERVER.TOOL``, fastmcp's ``SERVER_TOOL``, or a tool name that exactly one server offers, over
  every server of the namespace (the core group's rule, :func:`client._client_group.resolve_tool_name`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..client._client_group import resolve_tool_name
from ..display import _html
from ..notebook._group import board_html
from ..notebook._registry import GroupPort, SessionPort, server_names
from ._magic_args import one_line
from ._session import connect_all

if TYPE_CHECKING:
    import pandas

    from ..client._results import Tool
    from ._session import Group

__all__ = [
    "ServerBoard",
    "board_text",
    "group_rows",
    "open_group",
    "qualified_tool_names",
    "resolve_tool",
    "server_names",
    "tool_lists",
]

SEPARATOR = "."


def open_group(config: str | None, only: Sequence[str], **options: Any) -> Group:
    """``%mcp connect --all [CONFIG] [--only …]``: the Group of the config's servers."""
    return connect_all(config, only=list(only) or None, **options)


def tool_lists(sessions: Mapping[str, SessionPort], groups: Mapping[str, GroupPort]) -> dict[str, list[Tool]]:
    """Each usable server's tools as its model holds them (a group's server that is not up: none)."""
    lists: dict[str, list[Tool]] = {}
    for server, group_name in server_names(sessions, groups).items():
        session = sessions.get(server) if group_name is None else groups[group_name].sessions.get(server)
        lists[server] = list(session.model.tools) if session is not None else []
    return lists


def resolve_tool(name: str, lists: Mapping[str, Sequence[Tool]]) -> tuple[str, str]:
    """``(server, tool)`` for ``SERVER.TOOL``, ``SERVER_TOOL`` or a unique ``TOOL``; McpError otherwise."""

    def offers(server: str, tool: str) -> bool:
        return any(t.name == tool for t in lists.get(server, ()))

    return resolve_tool_name(name, list(lists), offers, SEPARATOR)


def qualified_tool_names(lists: Mapping[str, Sequence[Tool]]) -> list[str]:
    return [f"{server}{SEPARATOR}{tool.name}" for server, tools in lists.items() for tool in tools]


# --- the board -----------------------------------------------------------------------------------


_TEXT_COLUMNS = (
    ("server", "server"),
    ("status", "status"),
    ("protocol", "protocol"),
    ("tools", "tools"),
    ("in flight", "in_flight"),
    ("last error", "last_error"),
)
_MAX_CELL = 80


def _cell(row: Mapping[str, Any], key: str) -> str:
    if key == "protocol":
        value: Any = " ".join(str(v) for v in (row.get("era"), row.get("protocol_version")) if v)
    else:
        value = row.get(key)
    text = "" if value is None else one_line(str(value))  # server text: no escapes, one line
    return text if len(text) <= _MAX_CELL else text[: _MAX_CELL - 1] + "…"


def board_text(rows: Sequence[Mapping[str, Any]]) -> str:
    """The board as a plain-text table (the fallback where HTML is not shown)."""
    table = [[title for title, _ in _TEXT_COLUMNS]]
    table += [[_cell(row, key) for _, key in _TEXT_COLUMNS] for row in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(_TEXT_COLUMNS))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in table
    )


class ServerBoard:
    """What ``%mcp connect --all`` shows: one board per section (a group's servers). HTML in a
    notebook, text elsewhere; ``to_dataframe()`` for code."""

    def __init__(self, sections: Sequence[tuple[str, Sequence[Mapping[str, Any]]]]) -> None:
        self.sections = [(title, [dict(row) for row in rows]) for title, rows in sections]

    def _repr_html_(self) -> str:
        section = _html.Markup("<div><b>{}</b>{}</div>")
        # a plain str: marimo cannot serialise markupsafe's Markup, a str subclass (#38)
        sections = (section.format(title, board_html(rows)) for title, rows in self.sections)
        return str(_html.Markup("").join(sections))

    def __repr__(self) -> str:
        return "\n\n".join(f"{one_line(title)}\n{board_text(rows)}" for title, rows in self.sections)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))

    def to_dataframe(self) -> pandas.DataFrame:
        import pandas as pd

        rows = [{"section": title, **row} for title, section in self.sections for row in section]
        return pd.DataFrame(rows)


def group_rows(
    group_name: str, group: Group, names: Mapping[str, str | None], current: str | None
) -> list[dict[str, Any]]:
    """The group's board rows, marking the current server and the ones hidden by other names."""
    rows = []
    for row in group.model.servers:
        row = dict(row)
        server = row["server"]
        if names.get(server, group_name) != group_name:
            owner = names[server]
            row["server"] = f"{server} (hidden by {'the session' if owner is None else f'group {owner!r}'})"
        elif server == current:
            row["server"] = f"{server} (current)"
        rows.append(row)
    return rows
