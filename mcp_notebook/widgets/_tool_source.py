"""What an explorer lists and calls: a *tool source* (one session's tools, or a group's as
``SERVER.TOOL``), read from models only, and the small pictures of a tool it shows (annotation
badges, the Python line that repeats a call).

Kept apart from :mod:`._explorer` so that the group panels can build a source of their own
without the explorer's widgets, and so that the explorer module stays one job: the widget.
"""

from __future__ import annotations

import json
import pprint
from collections.abc import Callable
from typing import Any, NamedTuple

from ..client._results import Tool
from ..notebook._bounded import BoundedLog
from ._names import session_variable

__all__ = ["SessionTools", "ToolEntry", "ToolSource", "badges_html", "python_code", "tool_calls"]

_BADGES = (
    ("readOnlyHint", "read-only", "#1b873f"),
    ("destructiveHint", "destructive", "#b00020"),
    ("idempotentHint", "idempotent", "#0969da"),
    ("openWorldHint", "open-world", "#8250df"),
)


def badges_html(tool: Tool) -> str:
    """The tool's annotation hints that are explicitly true, as small badges (fixed words only)."""
    spans = [
        f'<span class="mcpnb-badge mcpnb-badge-{word}" style="font-size:0.75em;border:1px solid {colour};'
        f'color:{colour};border-radius:3px;padding:0 3px;margin-right:2px;white-space:nowrap">{word}</span>'
        for key, word, colour in _BADGES
        if tool.annotations.get(key) is True
    ]
    return "".join(spans)


def python_code(name: str, arguments: Any, *, variable: str = "session") -> str:
    """``session.call_tool("name", {...})`` for a call, the arguments as a Python literal."""
    if not isinstance(arguments, dict):  # redacted (Session(redact_arguments=True)) or not recorded
        return f"{variable}.call_tool({json.dumps(name)}, {{...}})  # the arguments were not recorded"
    args = pprint.pformat(arguments, sort_dicts=False, width=88, indent=1)
    if "\n" in args:
        args = args.replace("\n", "\n    ")
    return f"{variable}.call_tool({json.dumps(name)}, {args})"


class ToolEntry(NamedTuple):
    """One tool as an explorer lists it: the name shown, the session that runs it, the tool."""

    name: str
    session: Any
    tool: Tool


class ToolSource:
    """What an explorer lists and calls, read from models only.

    ``title`` is shown in the header, ``session`` is the one session (None when there are
    several), ``variable`` is what code copied from the history calls (``session.call_tool``).
    """

    title: str = ""
    session: Any = None
    variable: str = "session"

    def code_variable(self) -> str:
        """The name code copied from the history calls its session by (``variable`` by default)."""
        return self.variable

    def entries(self) -> list[ToolEntry]:
        """The tools to list, in order."""
        raise NotImplementedError

    def in_flight(self) -> int:
        """Requests waiting for their answer."""
        raise NotImplementedError

    def calls(self) -> list[dict[str, Any]]:
        """The tools/call history rows, oldest first, each ``name`` an entry's name."""
        raise NotImplementedError

    def recent_calls(self, count: int) -> list[dict[str, Any]]:
        """The newest ``count`` tools/call rows, newest first (what the history list shows)."""
        return self.calls()[-count:][::-1]

    def call_count(self) -> int:
        """How many rows :meth:`calls` has: the history list numbers its rows by their index there,
        as ``explorer.calls()[n]`` and ``explorer.rerun(n)`` count (oldest first)."""
        return len(self.calls())

    def history_frame(self) -> Any:
        raise NotImplementedError

    def follow(
        self,
        on_tools: Callable[[Any], None],
        on_history: Callable[[Any], None],
        on_in_flight: Callable[[Any], None],
    ) -> Callable[[], None]:
        """Call the handlers (from any thread) when the tools, the history or the count in flight
        change; returns the function that stops."""
        raise NotImplementedError


class SessionTools(ToolSource):
    """One session's tools under their own names: the explorer's usual source."""

    def __init__(self, session: Any, *, variable: str | None = None, include_app_only: bool = False) -> None:
        self.session = session
        self.title = str(getattr(session, "name", ""))
        self.variable = variable or "session"
        self._fixed = variable is not None
        #: List the tools only an MCP App's View may call too (the model leaves them out).
        self.include_app_only = include_app_only

    def code_variable(self) -> str:
        # the user's variable for the session (issue #29: it said ``session.`` for ``demo``)
        return self.variable if self._fixed else session_variable(self.session)

    def entries(self) -> list[ToolEntry]:
        tools = self.session.model.tools
        if self.include_app_only:
            tools = self.session.client.cached_tools or tools
        return [ToolEntry(t.name, self.session, t) for t in tools if isinstance(t, Tool)]

    def in_flight(self) -> int:
        return int(self.session.model.in_flight)

    def calls(self) -> list[dict[str, Any]]:
        return tool_calls(self.session.model.history)

    def call_count(self) -> int:
        # a walk of the bounded history (no copy): a redraw, at most a few a second, reads it
        return sum(1 for entry in self.session.model.history if _is_call(entry))

    def recent_calls(self, count: int) -> list[dict[str, Any]]:
        history = self.session.model.history
        if isinstance(history, BoundedLog):  # walks back from the newest, no copy of the rest
            return history.tail(count, _is_call)
        return super().recent_calls(count)

    def history_frame(self) -> Any:
        return self.session.history_frame()

    def follow(
        self,
        on_tools: Callable[[Any], None],
        on_history: Callable[[Any], None],
        on_in_flight: Callable[[Any], None],
    ) -> Callable[[], None]:
        model = self.session.model
        # status too: the explorer marks itself closed when its session closes (issue #29)
        hooks = (
            ("tools", on_tools),
            ("history", on_history),
            ("in_flight", on_in_flight),
            ("status", on_in_flight),
        )
        for name, handler in hooks:
            model.observe(handler, names=name)

        def unfollow() -> None:
            for name, handler in hooks:
                model.unobserve(handler, names=name)

        return unfollow


def tool_calls(history: Any) -> list[dict[str, Any]]:
    """The tools/call entries of a session's history, oldest first."""
    return [e for e in list(history) if _is_call(e)]


def _is_call(entry: Any) -> bool:
    return isinstance(entry, dict) and entry.get("method") == "tools/call"
