"""A request's wake-up on asyncio: one future, set once, awaited by the one caller waiting.

Why not an ``asyncio.Event``: a request is awaited by exactly one task, and an event is built for
many; its ``wait`` makes a future per wait (through the loop lookup and ``create_future``), keeps a
deque of waiters and removes itself from it, all on every call. Awaiting the future itself does
the same job with a third of the Python calls (issue #41's hot path).

It has the two methods :class:`~._pending.PendingRequest` uses of an event: ``set`` (idempotent,
and harmless once the waiter was cancelled, which cancels the future) and ``wait`` (an awaitable).
A request woken by progress gets a fresh one, as it got a fresh event.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable

__all__ = ["future_wakeups"]


class _FutureWakeup(asyncio.Future[None]):
    __slots__ = ()

    def set(self) -> None:
        if not self.done():  # (done: set before, or cancelled with the task that awaited it)
            self.set_result(None)

    def wait(self) -> _FutureWakeup:
        return self


def future_wakeups(loop: asyncio.AbstractEventLoop) -> Callable[[], _FutureWakeup]:
    """Make wake-ups bound to ``loop`` (the connection's, where its callers wait)."""
    return functools.partial(_FutureWakeup, loop=loop)
