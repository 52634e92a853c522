"""An agent's run awaited on a session's engine while the cell blocks (``Session.run_agent``).

Why: ipykernel delivers an interrupt to a cell that awaits only when the await ends (ipykernel
issue #881), so an awaited agent run, and the server's call it is waiting on, cannot be stopped. A
blocking call can: the engine turns the cell's KeyboardInterrupt into a cancel of what it runs.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from ._engine import Engine

__all__ = ["run_on_engine"]

_T = TypeVar("_T")


def run_on_engine(
    engine: Engine,
    run: Awaitable[_T] | Callable[[], Awaitable[_T]],
    block: Callable[[Callable[[], Awaitable[_T]]], _T],
) -> _T:
    """``block(fn)`` where ``fn`` awaits ``run`` (or ``run()``) on the engine: the body of
    :meth:`Session.run_agent` and the notebook ``Group.run_agent``.

    A coroutine that never ran (the session was closed, the cell interrupted before the engine
    started it) is closed, on the engine where it would have run, so Python does not warn that it
    was never awaited, long after, about a run the cell already reported as not made.
    """
    if inspect.isawaitable(run):
        if asyncio.isfuture(run):
            raise TypeError(
                "run_agent() was given a future or task, bound to the loop it was made on: "
                "pass a function that makes it, run_agent(lambda: ...), so it is made on the engine"
            )
        awaitable = run

        async def run_agent() -> _T:
            return await awaitable

    elif callable(run):
        make = run

        async def run_agent() -> _T:
            return await make()

    else:
        kind = type(run).__name__
        raise TypeError(f"run_agent() takes an awaitable or a function returning one, not {kind}")
    try:
        return block(run_agent)
    except BaseException:
        if inspect.iscoroutine(run):
            _close_unstarted(engine, run)
        raise


def _close_unstarted(engine: Engine, coroutine: Coroutine[Any, Any, Any]) -> None:
    def close() -> None:
        if inspect.getcoroutinestate(coroutine) == inspect.CORO_CREATED:
            coroutine.close()

    try:
        # After the cancelled call's own steps (queued first): it either started the coroutine
        # (the cancellation ends it) or never will.
        engine.soon(close)
    except RuntimeError:  # the engine's loop is gone: nobody else can run it
        close()
