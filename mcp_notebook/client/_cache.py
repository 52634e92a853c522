"""The last known tool, resource, template and prompt lists, and how fresh each one is.

A :class:`CachedList` holds one list and its generation. Anything that makes the list doubtful (a
``list_changed`` notification, a lost connection) bumps the generation and marks it stale; a fetch
remembers the generation it started at and is stored only if nothing bumped it meanwhile, so a
fetch that raced an invalidation can never overwrite the news with an older answer.

Freshness (PROTOCOL.md §3.9): a stored list is fresh while it is not stale and either its ``ttlMs``
has not run out, or the server promised to tell us about changes (a legacy ``listChanged``
capability, or a modern ``subscriptions/listen`` stream whose acknowledgement honoured that list).
This module does no I/O; :mod:`mcp_notebook.client._live` fetches and invalidates.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ..protocol._jsonrpc import json_number

__all__ = ["KINDS", "CachedList", "Freshness", "ListKind"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ListKind:
    """How one list travels: its method, result key, change notification and capability."""

    name: str
    method: str
    key: str
    notification: str
    capability: str
    listen_flag: str


KINDS: dict[str, ListKind] = {
    kind.name: kind
    for kind in (
        ListKind(
            "tools", "tools/list", "tools", "notifications/tools/list_changed", "tools", "toolsListChanged"
        ),
        ListKind(
            "resources",
            "resources/list",
            "resources",
            "notifications/resources/list_changed",
            "resources",
            "resourcesListChanged",
        ),
        ListKind(
            "resource_templates",
            "resources/templates/list",
            "resourceTemplates",
            "notifications/resources/list_changed",
            "resources",
            "resourcesListChanged",
        ),
        ListKind(
            "prompts",
            "prompts/list",
            "prompts",
            "notifications/prompts/list_changed",
            "prompts",
            "promptsListChanged",
        ),
    )
}


@dataclass(frozen=True, slots=True)
class Freshness:
    """How much to trust a cached list right now."""

    #: Wall-clock time (``time.time()``) the stored list was fetched, or None if never.
    fetched_at: float | None
    #: True when the list may be used without asking the server.
    fresh: bool
    #: True when something changed (or may have) since it was fetched.
    stale: bool
    #: True when the server will tell us about changes (listChanged / an honoured listen).
    watched: bool
    #: Seconds until the server's ttlMs runs out (None without a TTL).
    expires_in: float | None


class CachedList(Generic[T]):
    """One list and its freshness; the single owner of that state."""

    def __init__(self, kind: ListKind, clock: Callable[[], float]) -> None:
        self.kind = kind
        self._clock = clock
        self.value: list[T] | None = None
        self.generation = 0
        self.stale = False
        self.fetched_at: float | None = None
        self._expires = -math.inf
        self._watched: Callable[[], bool] = lambda: False

    def watch_with(self, watched: Callable[[], bool]) -> None:
        """Tell the list how to learn whether the server currently reports its changes."""
        self._watched = watched

    def invalidate(self) -> None:
        self.generation += 1
        if self.value is not None:
            self.stale = True

    def store(self, generation: int, value: list[T], ttl_ms: float | None) -> bool:
        """Keep ``value`` if no invalidation happened since ``generation`` was read."""
        if generation != self.generation:
            return False
        self.value = value
        self.stale = False
        self.fetched_at = time.time()
        ttl = max(0.0, ttl_ms or 0.0) / 1000.0
        self._expires = self._clock() + min(ttl, 86_400.0)  # a day at most, as the SDK clamps it
        return True

    def is_fresh(self) -> bool:
        if self.value is None or self.stale:
            return False
        return self._watched() or self._clock() < self._expires

    def freshness(self) -> Freshness:
        remaining = self._expires - self._clock() if self.value is not None else None
        return Freshness(
            fetched_at=self.fetched_at,
            fresh=self.is_fresh(),
            stale=self.stale,
            watched=self._watched(),
            expires_in=max(0.0, remaining) if remaining is not None and remaining > -math.inf else None,
        )


def ttl_of(result: dict[str, Any]) -> float | None:
    """A result's ``ttlMs`` (absent or invalid: None; negative: 0)."""
    value = json_number(result.get("ttlMs"))
    if value is None or math.isnan(value):
        return None
    return max(0.0, value)
