"""A background task owned by an object (a client, a group), not by the task that started it.

Why not a task group in the caller: anyio task groups cannot outlive the task that opened them, nor
a cancel scope around the call that started them, and a notebook cell's task ends long before a
client connected in it should. So the owner starts one task of its own (on asyncio a loop task,
on trio a system task), keeps it, cancels it through a scope and awaits its end on close: nothing
is orphaned, and everything inside it is structured (task groups, cancel scopes) as usual.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

__all__ = ["OwnedTask", "spawn_owned"]


class OwnedTask:
    """The handle of a task started by :func:`spawn_owned`."""

    def __init__(self) -> None:
        self.scope = anyio.CancelScope()
        self.done = anyio.Event()
        #: The asyncio task (None on trio): a reference, so the loop does not drop it.
        self.task: asyncio.Task[Any] | None = None

    def cancel(self) -> None:
        self.scope.cancel()

    async def stop(self, grace: float) -> None:
        """Wait up to ``grace`` seconds for the task to end by itself, then cancel it (shielded)."""
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(grace):
                await self.done.wait()
            if not self.done.is_set():
                self.scope.cancel()
                with anyio.move_on_after(5):
                    await self.done.wait()


def spawn_owned(run: Callable[[], Awaitable[None]], *, name: str) -> OwnedTask:
    """Start ``run()`` in a task of its own; ``run`` must handle its own errors (it may not raise)."""
    owned = OwnedTask()

    async def host() -> None:
        try:
            with owned.scope:
                await run()
        finally:
            owned.done.set()

    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    if loop is not None:
        owned.task = loop.create_task(host(), name=name)
    else:
        import trio  # anyio's only other backend

        # trio's equivalent of a loop task. It must never raise, which host() ensures as long as
        # run() does; it is cancelled when trio.run ends.
        trio.lowlevel.spawn_system_task(host, name=name, context=contextvars.copy_context())
    return owned
