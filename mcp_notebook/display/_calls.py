"""One call of a session's history as text: the one rule the explorer's history list and its
picker, a panel's snapshot and the session log's agent lines share (issue #39).

A history entry (``session.model.history``: time, method, name, arguments, duration, outcome,
result_size, via) reads ``12:03:04  add(a=2, b=3)  ok  7 ms``; a call an agent framework made
through :mod:`mcp_notebook.agents` (``via`` set) ends with ``  via pydantic-ai``, and that mark is
never the part a cut drops: a long call is cut in its arguments, so the reader always sees who
made it. Every piece is made printable (a U+202E in an argument would make the rest read
"sm 7 ko"); escaping for markup is the caller's (``display._html.escape``).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from ..protocol._printable import printable
from ._durations import short_duration
from ._html import short

__all__ = ["ARGUMENTS_WIDTH", "VIA_WIDTH", "arguments_line", "by_agents", "call_line", "via_of"]

#: How many characters of a call's arguments a history row shows (the tooltip holds them all).
ARGUMENTS_WIDTH = 80
#: The most characters of a ``via`` (a framework's name) shown.
VIA_WIDTH = 40


def arguments_line(arguments: Any, width: int = ARGUMENTS_WIDTH) -> str:
    """``a=2, b="x\\ny"``: the arguments on one line, each value as JSON (control characters and
    quotes escaped), cut at ``width``; ``…`` when they were not recorded (redacted)."""
    if not isinstance(arguments, dict):
        return "…"
    parts = []
    for name, value in arguments.items():
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
        parts.append(f"{json.dumps(str(name))[1:-1]}={text}")
    return short(", ".join(parts), width)


def via_of(entry: Mapping[str, Any]) -> str | None:
    """Who made the call, as shown (printable, at most :data:`VIA_WIDTH` characters): an agent
    framework's name; None for the notebook's own calls (no ``via``, or an empty one)."""
    via = entry.get("via")
    if not isinstance(via, str) or not via.strip():  # None, a frame's NA, ""
        return None
    return short(printable(via.strip()), VIA_WIDTH)


def call_line(entry: Mapping[str, Any], width: int = 200, *, clock: bool = True, via: bool = True) -> str:
    """``12:03:04  add(a=2, b=3)  ok  7 ms`` (``clock=False``: without the time), then
    ``  via pydantic-ai`` for an agent's call (``via=False``: never); at most ``width`` characters,
    cut before the ``via`` mark, never in it."""
    took = short_duration(entry.get("duration"))
    call = f"{entry.get('name')}({arguments_line(entry.get('arguments'))})"
    line = f"{call}  {entry.get('outcome')}  {took}".rstrip()
    if clock:
        line = f"{time.strftime('%H:%M:%S', time.localtime(entry.get('time') or 0))}  {line}"
    who = via_of(entry) if via else None
    mark = f"  via {who}" if who else ""
    return short(printable(line), max(1, width - len(mark))) + mark


def by_agents(entries: Iterable[Mapping[str, Any]]) -> str:
    """`` (3 via pydantic-ai, 1 via langchain)``: how many of ``entries`` each agent framework
    made, most first; ``""`` when none was an agent's (what a count of calls is followed by)."""
    # one walk of the history (up to 10,000 entries, at each redraw of a card): each name is made
    # printable once, not once per call
    raw = Counter(via if isinstance(via := entry.get("via"), str) else None for entry in entries)
    made: Counter[str] = Counter()
    for via, count in raw.items():
        who = via_of({"via": via})
        if who is not None:
            made[who] += count
    return f" ({', '.join(f'{n} via {who}' for who, n in made.most_common())})" if made else ""
