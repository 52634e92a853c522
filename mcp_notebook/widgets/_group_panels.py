"""Widgets of a :class:`~mcp_notebook.notebook.Group`: the status board, the explorer, the merged log.

Each is the single-session widget fed from ``group.model`` (and the sessions it lists), not a copy:
the board's badges are :mod:`._status`'s, the explorer is :class:`._explorer.Explorer` over a
source that lists every server's tools as ``SERVER.TOOL``, the log is :class:`._log.LogView` with a
server column. They observe the models, which the engine thread writes, and only set widget traits
from there. Retry runs on the engine (``group.areconnect``), so a click never blocks the kernel.
Every server string (names, errors, versions) is escaped or shown through text controls.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable
from typing import Any

from ..display._html import escape, short, state_badge
from ..notebook._group import attempts_cell, tools_cell
from . import _ui as W
from ._explorer import Explorer
from ._fallback import Fallback, plural
from ._log import LogView, log_entry
from ._result_view import html_widget as _html
from ._shown import HTML, Label
from ._status import state_class
from ._tool_source import SessionTools, ToolEntry, ToolSource, tool_calls

__all__ = ["ALL_SERVERS", "GroupExplorer", "GroupLogWidget", "GroupStatusWidget", "GroupTools"]

#: The explorer's choice of every server's tools (a server name never has a space).
ALL_SERVERS = "All servers"
_RETRY_STATES = frozenset({"reconnecting", "failed", "gave up", "closed"})
# The board's columns: key, heading, width.
_COLUMNS = (
    ("server", "server", "8em"),
    ("status", "status", "7em"),
    ("protocol", "protocol", "10em"),
    ("info", "server info", "11em"),
    ("tools", "tools", "3.5em"),
    ("in_flight", "in flight", "4.5em"),
    ("reconnects", "reconnects", "7em"),
    ("last_error", "last error", ""),
)


# --- the status board ---------------------------------------------------------------------------


def _cell(key: str, width: str) -> W.HTML:
    cell = HTML(layout=W.Layout(width=width or "auto", flex="" if width else "1", margin="0 4px 0 0"))
    cell.add_class(f"mcpnb-group-cell-{key.replace('_', '-')}")  # not -status: the board's own class
    return cell


class _BoardRow:
    """One server's row: a cell per column, then the Retry button."""

    def __init__(self, board: GroupStatusWidget, server: str) -> None:
        self.server = server
        self.cells = {key: _cell(key, width) for key, _, width in _COLUMNS}
        self.retry = W.Button(description="Retry", icon="refresh", tooltip="try this server again now")
        self.retry.add_class("mcpnb-group-retry")
        self.retry.layout = W.Layout(width="7em", visibility="hidden")
        self.retry.on_click(lambda _b: board.retry(server))
        self.widget = W.HBox(
            [*self.cells.values(), self.retry], layout=W.Layout(width="100%", align_items="center")
        )
        self.widget.add_class("mcpnb-group-row")
        self._state_class = ""

    def update(self, row: dict[str, Any]) -> None:
        status = str(row.get("status") or "")
        css = state_class(status).replace(" ", "-")  # "gave up": a class name has no space
        badge = self.cells["status"]
        if css != self._state_class:
            if self._state_class:
                badge.remove_class(self._state_class)
            badge.add_class(css)
            self._state_class = css
        protocol = " ".join(str(v) for v in (row.get("era"), row.get("protocol_version")) if v)
        info = " ".join(str(v) for v in (row.get("server_name"), row.get("server_version")) if v)
        error = row.get("last_error") or ""
        target = row.get("target")
        values = {
            "server": f'<b title="{escape(short(target, 1000))}">{escape(short(self.server, 200))}</b>',
            "status": state_badge(status),
            "protocol": escape(short(protocol, 200)),
            "info": escape(short(info, 200)),
            "tools": tools_cell(row),  # "…" until the list is in: never a count taken before it
            "in_flight": str(int(row.get("in_flight") or 0)),
            "reconnects": attempts_cell(row),
            "last_error": (
                f'<span style="color:#b00020">{escape(short(error, 1000))}</span>' if error else ""
            ),
        }
        for key, value in values.items():
            if self.cells[key].value != value:
                self.cells[key].value = value
        self.retry.layout.visibility = "visible" if status in _RETRY_STATES else "hidden"
        self.retry.disabled = status not in _RETRY_STATES


class GroupStatusWidget(Fallback, W.VBox):
    """The status board (CSS class ``mcpnb-group-status``): one row per server, live.

    ``rows`` maps each server to its row (``cells`` by column, ``retry``); :meth:`retry` is what
    a row's Retry button does; ``message`` says why a retry could not start. ``close()`` stops
    following the group.
    """

    def __init__(self, group: Any) -> None:
        self.group = group
        self.rows: dict[str, _BoardRow] = {}
        self._lock = threading.Lock()
        self._futures: set[concurrent.futures.Future[Any]] = set()
        heading = [_html(f"<b>{escape(title)}</b>", "mcpnb-group-heading") for _, title, _ in _COLUMNS]
        for cell, (_, _, width) in zip(heading, _COLUMNS, strict=True):
            cell.layout = W.Layout(width=width or "auto", flex="" if width else "1", margin="0 4px 0 0")
        header = W.HBox([*heading, W.Box(layout=W.Layout(width="7em"))], layout=W.Layout(width="100%"))
        self.table = W.VBox([header], layout=W.Layout(width="100%"))
        self.table.add_class("mcpnb-group-board")
        self.message = Label()
        self.message.add_class("mcpnb-group-message")
        super().__init__(
            [_html("<b>MCP servers</b>", "mcpnb-group-title"), self.table, self.message],
            layout=W.Layout(width="100%"),
        )
        self.add_class("mcpnb-group-status")
        self._header = header
        group.model.observe(self._changed, names="servers")
        self.refresh()

    def _changed(self, change: Any) -> None:
        self.refresh()

    def summary(self) -> str:
        """``<MCP servers: 3: 2 ready, 1 closed; 24 tools>``, then a line a server."""
        board = [row for row in list(self.group.model.servers) if isinstance(row, dict)]
        counts: dict[str, int] = {}
        for row in board:
            counts[str(row.get("status"))] = counts.get(str(row.get("status")), 0) + 1
        states = ", ".join(f"{n} {s}" for s, n in counts.items()) or "none"
        tools = plural(int(self.group.model.total_tools), "tool")
        lines = [f"<MCP servers: {len(board)}: {states}; {tools}>"]
        for row in board:
            protocol = " ".join(str(v) for v in (row.get("era"), row.get("protocol_version")) if v) or "?"
            error = f" · {short(row.get('last_error'), 120)}" if row.get("last_error") else ""
            count = row.get("tools")
            tools_here = f", {plural(int(count), 'tool')}" if isinstance(count, int) else ""
            if count is None and row.get("status") == "ready":
                tools_here = ", tools …"  # the list is not in yet
            if row.get("failures"):
                tools_here += f", {attempts_cell(row)}"
            server = short(row.get("server"), 60)
            lines.append(f"  {server} {row.get('status')}, {protocol}{tools_here}{error}")
        return "\n".join(lines)

    def snapshot_html(self) -> str:
        from ..notebook._group import board_html

        rows = [row for row in list(self.group.model.servers) if isinstance(row, dict)]
        return f"<div><b>MCP servers</b>{board_html(rows)}</div>"

    def refresh(self) -> None:
        with self._lock:
            # Read inside the lock: a refresh on another thread that read the board earlier must
            # not draw its older rows (and counts) over a newer one's.
            board = [row for row in list(self.group.model.servers) if isinstance(row, dict)]
            order = []
            for row in board:
                name = str(row.get("server"))
                view = self.rows.get(name)
                if view is None:
                    view = self.rows[name] = _BoardRow(self, name)
                view.update(row)
                order.append(view.widget)
            for name in [n for n in self.rows if n not in {str(r.get("server")) for r in board}]:
                self.rows.pop(name).widget.close()
            children = [self._header, *order]
            if list(self.table.children) != children:
                self.table.children = children

    def retry(self, server: str) -> concurrent.futures.Future[Any] | None:
        """What a row's Retry button does: ``group.areconnect(server)`` on the engine (not waited for)."""
        self.message.value = f"retrying {short(server, 200)}…"
        try:
            future: Any = self.group.spawn(self.group.areconnect, server)
        except Exception as exc:  # the engine is gone (interpreter exit)
            self.message.value = f"could not retry {short(server, 200)}: {short(str(exc), 300)}"
            return None
        with self._lock:
            self._futures.add(future)
        future.add_done_callback(lambda done: self._retried(server, done))
        return future  # type: ignore[no-any-return]

    def _retried(self, server: str, future: concurrent.futures.Future[Any]) -> None:
        with self._lock:
            self._futures.discard(future)
        if future.cancelled():
            self.message.value = ""
            return
        error = future.exception()
        if error is None:
            self.message.value = ""
        else:
            self.message.value = f"could not retry {short(server, 200)}: {short(str(error), 300)}"

    def close(self) -> None:
        if getattr(self, "_unfollowed", False):
            super().close()
            return
        self._unfollowed = True
        self.group.model.unobserve(self._changed, names="servers")
        for row in self.rows.values():
            row.widget.close()
        super().close()


# --- the explorer -------------------------------------------------------------------------------


def _up(group: Any) -> list[tuple[str, Any]]:
    """The sessions of the servers that came up, in the group's order."""
    sessions = dict(group.model.sessions)
    return [(name, sessions[name]) for name in list(group) if name in sessions]


class GroupTools(ToolSource):
    """Every up server's tools, each listed as ``SERVER.TOOL`` and run on its own session."""

    title = "all servers"
    session = None
    variable = "group"

    def __init__(self, group: Any) -> None:
        self.group = group
        self.separator = str(getattr(getattr(group, "core", None), "separator", "."))

    def _name(self, server: str, tool: str) -> str:
        return f"{server}{self.separator}{tool}"

    def entries(self) -> list[ToolEntry]:
        return [
            ToolEntry(self._name(server, entry.name), session, entry.tool)
            for server, session in _up(self.group)
            for entry in SessionTools(session).entries()
        ]

    def in_flight(self) -> int:
        return sum(int(session.model.in_flight) for _, session in _up(self.group))

    def calls(self) -> list[dict[str, Any]]:
        merged = [
            {**entry, "server": server, "name": self._name(server, str(entry.get("name")))}
            for server, session in _up(self.group)
            for entry in tool_calls(session.model.history)
        ]
        merged.sort(key=lambda e: float(e.get("time") or 0))
        return merged

    def call_count(self) -> int:
        return sum(SessionTools(session).call_count() for _, session in _up(self.group))

    def recent_calls(self, count: int) -> list[dict[str, Any]]:
        """The newest ``count`` calls of every server, newest first: each session's newest
        ``count`` only (its history's tail, no copy), so a redraw costs the rows shown, not the
        length of the histories."""
        newest = [
            {**entry, "server": server, "name": self._name(server, str(entry.get("name")))}
            for server, session in _up(self.group)
            for entry in SessionTools(session).recent_calls(count)
        ]
        newest.sort(key=lambda e: float(e.get("time") or 0), reverse=True)
        return newest[:count]

    def history_frame(self) -> Any:
        import pandas as pd

        parts = []
        for server, session in _up(self.group):
            part = session.history_frame()
            part.insert(0, "server", pd.Series([server] * len(part), dtype="string"))
            parts.append(part)
        if not parts:
            return pd.DataFrame({"server": pd.Series([], dtype="string")})
        return pd.concat(parts, ignore_index=True)

    def follow(
        self,
        on_tools: Callable[[Any], None],
        on_history: Callable[[Any], None],
        on_in_flight: Callable[[Any], None],
    ) -> Callable[[], None]:
        lock = threading.Lock()
        followed: dict[str, tuple[Any, Callable[[], None]]] = {}
        stopped = False

        def rehook(change: Any) -> None:  # the sessions changed (on the engine thread)
            with lock:
                if stopped:
                    return
                up = dict(_up(self.group))
                for name in list(followed):
                    session, unfollow = followed[name]
                    if up.get(name) is not session:
                        unfollow()
                        del followed[name]
                for name, session in up.items():
                    if name not in followed:
                        source = SessionTools(session)
                        followed[name] = (session, source.follow(on_tools, on_history, on_in_flight))
            if change is not None:
                on_tools(change)
                on_history(change)
                on_in_flight(change)

        def stop() -> None:
            nonlocal stopped
            self.group.model.unobserve(rehook, names="sessions")
            with lock:
                stopped = True
                for _, unfollow in followed.values():
                    unfollow()
                followed.clear()

        self.group.model.observe(rehook, names="sessions")
        rehook(None)
        return stop


class GroupExplorer(Fallback, W.VBox):
    """The tool explorer of a group, with a server selector (CSS class ``mcpnb-group-explorer``):
    a widget, shown by itself or inside any ipywidgets layout.

    ``selector`` (a Dropdown of "All servers" and the servers that are up) picks what the explorer
    below lists: one server's tools (that session's explorer) or every server's, named
    ``SERVER.TOOL``. Each choice keeps its explorer (form, result, a running call) while another is
    shown. ``explorer`` is the one shown; :meth:`show` picks a choice from code.
    """

    def __init__(self, group: Any, server: str | None = None) -> None:
        self.group = group
        self._lock = threading.RLock()  # picking a choice may pick another (one that went down)
        self.explorers: dict[str, Explorer] = {}
        self._sessions: dict[str, Any] = {}
        self.selector = W.Dropdown(options=self._choices(), value=ALL_SERVERS, description="Server")
        self.selector.add_class("mcpnb-group-server")
        self.box = W.VBox(layout=W.Layout(width="100%"))
        super().__init__([self.selector, self.box], layout=W.Layout(width="100%"))
        self.add_class("mcpnb-group-explorer")
        self.selector.observe(self._selected, names="value")
        group.model.observe(self._on_sessions, names="sessions")
        if server is not None:
            group[server]  # an unknown server is a KeyError; one that is not up says why
            self.selector.value = server
        self._show(self.selector.value)

    def _choices(self) -> list[str]:
        return [ALL_SERVERS, *(name for name, _ in _up(self.group))]

    @property
    def explorer(self) -> Explorer:
        """The explorer shown now."""
        return self.explorers[self.selector.value]

    def show(self, choice: str) -> Explorer:
        """Show ``choice`` (a server that is up, or :data:`ALL_SERVERS`) and return its explorer."""
        if choice not in self.selector.options:
            raise KeyError(f"{choice!r} is not up; choose one of {list(self.selector.options)}")
        self.selector.value = choice
        return self.explorer

    def _selected(self, change: Any) -> None:
        self._show(change.new)

    def _show(self, choice: str) -> None:
        with self._lock:
            explorer = self.explorers.get(choice)
            if explorer is None:
                if choice == ALL_SERVERS:
                    explorer = Explorer(GroupTools(self.group))
                else:
                    session = dict(self.group.model.sessions).get(choice)
                    if session is None:  # it went down meanwhile
                        self.selector.value = ALL_SERVERS
                        return
                    explorer = Explorer(SessionTools(session, variable=f"group[{choice!r}]"))
                    self._sessions[choice] = session
                self.explorers[choice] = explorer
            self.box.children = [explorer]

    def _on_sessions(self, change: Any) -> None:  # on the engine thread
        up = dict(_up(self.group))
        with self._lock:
            gone = [n for n, s in self._sessions.items() if up.get(n) is not s]
            for name in gone:  # its session ended (a closed server starts over with a new one)
                self._sessions.pop(name, None)
                stale = self.explorers.pop(name, None)
                if stale is not None:
                    stale.close()
        choices = self._choices()
        current = self.selector.value
        if list(self.selector.options) != choices:
            self.selector.options = choices
            # Setting options may move the value; show the same choice if it is still there.
            self.selector.value = current if current in choices else ALL_SERVERS
        if self.selector.value in gone or self.selector.value not in self.explorers:
            self._show(self.selector.value)

    def summary(self) -> str:
        up = plural(len(self.selector.options) - 1, "server")
        shown = self.explorers.get(self.selector.value)
        inner = f"\n  {shown.summary()}" if shown is not None else ""
        return f"<MCP group explorer: {up} up, showing {short(self.selector.value, 80)}>{inner}"

    def snapshot_html(self) -> str:
        shown = self.explorers.get(self.selector.value)
        body = shown.snapshot_html() if shown is not None else ""
        return f"<div><b>Server</b> {escape(self.selector.value)}</div>{body}"

    @property
    def widget(self) -> GroupExplorer:
        """The explorer itself (it is the widget; kept for code written when it held one)."""
        return self

    def close(self) -> None:
        """Stop following the group and close every explorer (running calls are cancelled)."""
        if getattr(self, "_closing", False) or not hasattr(self, "box"):
            super().close()  # closed already, or its construction failed
            return
        self._closing = True
        self.group.model.unobserve(self._on_sessions, names="sessions")
        self.selector.unobserve(self._selected, names="value")
        with self._lock:
            explorers, self.explorers = list(self.explorers.values()), {}
        for explorer in explorers:
            explorer.close()
        self.selector.close()
        self.box.close()
        super().close()


# --- the merged log -----------------------------------------------------------------------------


class GroupLogWidget(LogView):
    """Every server's log messages and notifications (``group.model.log``), with a server column
    and a server filter (``column_filter``) besides the level filter."""

    def __init__(self, group: Any, *, max_entries: int = 200, level: str = "debug") -> None:
        self.group = group
        model = group.model

        def read() -> list[dict[str, Any]]:
            return [
                log_entry(e, notification=e.get("kind") == "notification")
                for e in list(model.log)
                if isinstance(e, dict)
            ]

        super().__init__(
            model,
            ["log"],
            read,
            row=lambda _name, e: log_entry(e, notification=e.get("kind") == "notification"),
            column="server",
            choices=lambda: [str(name) for name in group],  # a group's servers are fixed
            max_entries=max_entries,
            level=level,
        )


# --- what Group's methods call ------------------------------------------------------------------


def group_status_widget(group: Any) -> GroupStatusWidget:
    """The live status board of ``group``."""
    return GroupStatusWidget(group)


def group_explorer(group: Any, server: str | None = None) -> GroupExplorer:
    """The tool explorer of ``group``, showing ``server``'s tools (by default every server's)."""
    return GroupExplorer(group, server)


def group_log_widget(group: Any, **options: Any) -> GroupLogWidget:
    """The merged live log of ``group``."""
    return GroupLogWidget(group, **options)
