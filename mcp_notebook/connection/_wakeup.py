"""A request's wake-up: on asyncio one bare future, set once, awaited by the one caller waiting.

Why not an ``asyncio.Event``: a request is awaited by exactly one task, and an event is built for
many; its ``wait`` makes a future per wait (through the loop lookup and ``create_future``), keeps a
deque of waiters and removes itself from it, all on every call. Awaiting the loop's own future
does the same job with a third of the Python calls, on the C task's fast path (issue #41).

:class:`~._pending.PendingRequest` uses a future's three operations: ``done``, ``set_result`` and
``await``. A future is done once set, or once cancelled with the task that awaited it (then a late
answer sets nothing). Elsewhere (trio) :class:`EventWakeup` offers the same three over an
``anyio.Event``. A request woken by progress gets a fresh one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Generator
from typing import Any

import anyio

__all__ = ["EventWakeup", "future_wakeups"]


class EventWakeup:
    """A future's ``done``/``set_result``/``await`` over an ``anyio.Event`` (any backend)."""

    __slots__ = ("_event",)

    def __init__(self) -> None:
        self._event = anyio.Event()

    def done(self) -> bool:
        return self._event.is_set()

    def set_result(self, result: None, /) -> None:
        self._event.set()

    def __await__(self) -> Generator[Any, None, Any]:
        return self._event.wait().__await__()


def future_wakeups(loop: asyncio.AbstractEventLoop) -> Callable[[], asyncio.Future[None]]:
    """Make wake-ups bound to ``loop`` (the connection's, where its callers wait)."""
    return loop.create_future
