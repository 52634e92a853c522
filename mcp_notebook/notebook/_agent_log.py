"""A line in the session's log for each tool call an agent framework made (issue #39).

Why the log: a user who runs an agent in a cell watches the log panel (or the dashboard's Log
tab, a group's merged log, ``%mcp log``) to follow what happens, and the history says *what* was
called but not in the story the server tells. So each call made through
:mod:`mcp_notebook.agents` (a history entry with ``via``) also becomes one row of
``session.model.log``, between the server's own messages: level ``info`` (``warning`` when the
call failed in the client: a deadline, a refused argument, a lost server), logger
``mcp_notebook.agents`` (as the client's own warnings are ``mcp_notebook.client``), and the data
``pydantic-ai called add(a=2, b=3)  ok  7 ms`` (the history list's line, ``display/_calls.py``).
The notebook's own calls get no line: the user made them and sees their results in the cell.

Why it cannot flood: an agent loop with a scripted model can make hundreds of calls a second, and
``model.log`` is a bounded log (``max_log`` rows, ``MAX_LOG_BYTES``) the server's messages share:
a line per call would push them all out. So :meth:`AgentCallLog.note` only queues the entry (O(1),
from the engine thread, never waiting) and pokes a :class:`~._coalesce.Coalescer`, which writes
at most once per :data:`INTERVAL` (the first call after a quiet spell at once, the last calls
always told). A write with at most :data:`LINES_PER_WRITE` calls queued gives each its line; with
more it gives one line per framework that counts them by tool and outcome (``pydantic-ai made
37 calls since the last line: add 30, fail 7; ok 28, tool_error 9``). Agent lines thus take at
most ``LINES_PER_WRITE / INTERVAL`` rows a second, and one a second per framework during a flood;
every call stays in the history (``session.history_frame()``), which is where the rest are.
The queue itself is bounded (:data:`MAX_QUEUED` entries; past it the oldest are only counted).

A line is masked as the server's log rows are (``protocol/_secrets``): the arguments an agent's
model chose may repeat a secret the session was given.
"""

from __future__ import annotations

import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping
from typing import Any

from ..display._calls import call_line, via_of
from ._coalesce import Coalescer

__all__ = ["INTERVAL", "LINES_PER_WRITE", "LOGGER", "MAX_QUEUED", "AgentCallLog", "agent_lines"]

#: Seconds between two writes of agent lines to a session's log.
INTERVAL = 1.0
#: The most calls one write tells a line each; more are told as one line per framework.
LINES_PER_WRITE = 5
#: The most calls queued between two writes; past it the oldest are counted, not kept.
MAX_QUEUED = 1_000
#: The ``logger`` of the agent lines (the log panel's "source" column).
LOGGER = "mcp_notebook.agents"
#: The outcomes of a call that reached its end in the tool (its own failure included) or was
#: cancelled by the agent or the user: ``info``; anything else failed in the client: ``warning``.
_QUIET = frozenset({"ok", "tool_error", "cancelled"})
#: Tools (and outcomes) a counting line names, at most; the rest are "…".
_NAMED = 5

_Row = dict[str, Any]


def _counted(counts: Counter[str]) -> str:
    parts = [f"{key} {n}" for key, n in counts.most_common(_NAMED)]
    return ", ".join(parts) + (", …" if len(counts) > _NAMED else "")


def agent_lines(
    entries: list[tuple[float, Mapping[str, Any]]], dropped: Mapping[str, int] | None = None
) -> list[_Row]:
    """The log rows for ``entries`` (when each call ended, its history entry), oldest first: a line
    each, or, with more than :data:`LINES_PER_WRITE` of them or any ``dropped`` (calls not kept
    by framework, the queue being full), one line per framework counting its calls."""
    dropped = {via: n for via, n in (dropped or {}).items() if n > 0}
    if len(entries) <= LINES_PER_WRITE and not dropped:
        rows = []
        for ended, entry in entries:
            level = "info" if entry.get("outcome") in _QUIET else "warning"
            text = f"{via_of(entry) or '?'} called {call_line(entry, clock=False, via=False)}"
            rows.append(_row(ended, level, text))
        return rows
    frameworks: dict[str, list[tuple[float, Mapping[str, Any]]]] = {}
    for ended, entry in entries:
        frameworks.setdefault(via_of(entry) or "?", []).append((ended, entry))
    rows = []
    for via, calls in frameworks.items():
        tools = Counter(str(entry.get("name")) for _, entry in calls)
        outcomes = Counter(str(entry.get("outcome")) for _, entry in calls)
        lost = dropped.pop(via, 0)
        more = f", {lost} more not counted by tool" if lost else ""
        level = "info" if set(outcomes) <= _QUIET else "warning"
        text = (
            f"{via} made {len(calls) + lost} calls since the last line: {_counted(tools)}; "
            f"{_counted(outcomes)}{more} (each is in session.history_frame())"
        )
        rows.append(_row(max(ended for ended, _ in calls), level, text))
    for via, lost in dropped.items():  # a framework whose every queued call was dropped
        text = f"{via} made {lost} calls since the last line (each is in session.history_frame())"
        rows.append(_row(time.time(), "info", text))
    return rows


def _row(ended: float, level: str, text: str) -> _Row:
    return {"time": ended, "level": level, "logger": LOGGER, "data": text}


class AgentCallLog:
    """Writes the agent lines of one session to ``append("log", row)`` (``SessionModel.append``),
    rate-limited as the module's docstring says; ``mask`` hides the session's secrets in a line."""

    def __init__(
        self,
        append: Callable[[str, _Row], None],
        *,
        mask: Callable[[str], str] = lambda text: text,
        interval: float = INTERVAL,
    ) -> None:
        self._append = append
        self._mask = mask
        self._queued: deque[tuple[float, Mapping[str, Any]]] = deque()
        self._dropped: Counter[str] = Counter()  # calls not kept (the queue full), by framework
        self._lock = threading.Lock()
        self.writes = Coalescer(self.flush, interval, what="the session log's agent lines")

    def note(self, entry: Mapping[str, Any]) -> None:
        """A call ended (its history entry): queue its line (any thread; never waits for a write).
        An entry with no ``via`` (the notebook's own call) is not an agent's: nothing."""
        if via_of(entry) is None:
            return
        with self._lock:
            if len(self._queued) >= MAX_QUEUED:
                _, oldest = self._queued.popleft()
                self._dropped[via_of(oldest) or "?"] += 1
            self._queued.append((time.time(), entry))
        self.writes.poke()

    def flush(self) -> None:
        """Write the lines of the calls queued so far, now (the coalescer's run)."""
        with self._lock:
            entries, self._queued = list(self._queued), deque()
            dropped, self._dropped = self._dropped, Counter()
        if not entries and not dropped:
            return
        for row in agent_lines(entries, dropped):
            self._append("log", {**row, "data": self._mask(row["data"])})

    def close(self) -> None:
        """Write what is queued, then no more (the session closed)."""
        self.writes.close(flush=True)
        self.flush()
