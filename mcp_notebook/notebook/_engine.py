"""The engine thread: one event loop, in a daemon thread of its own, for every notebook session.

Why a thread: a notebook's cells run on the kernel's event loop one at a time, and a cell that
computes (``time.sleep(2)``, a pandas job) stops that loop. A connection living there would stop
answering pings, routing progress and receiving notifications until the cell ends. On its own loop
the connection keeps working, the widgets keep updating, a client opened in one cell can be closed
in another, and nest-asyncio (archived) is not needed.

Callers on other threads use :meth:`Engine.call` (blocking, interruptible with Ctrl-C / kernel
interrupt, which cancels the work on the engine) or :meth:`Engine.acall` (awaitable from any
asyncio loop, e.g. a cell's top-level ``await``).
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import threading
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from typing import Any, TypeVar

import anyio
import anyio.abc
import anyio.from_thread

from ..protocol._errors import full_tracebacks

__all__ = ["Engine", "Spawned", "get_engine", "on_engine_thread"]

T = TypeVar("T")


class Engine:
    def __init__(self) -> None:
        self._portal_cm: AbstractContextManager[anyio.from_thread.BlockingPortal] = (
            anyio.from_thread.start_blocking_portal("asyncio", name="mcp-notebook-engine")
        )
        self.portal = self._portal_cm.__enter__()
        self.thread_id: int = self.portal.call(threading.get_ident)
        self._stopped = False
        self._calls: set[asyncio.Task[Any]] = set()
        # Work started from the engine thread itself (handlers, the connection's callbacks) lives in this
        # task group, which the engine owns and cancels when it stops: nothing is orphaned.
        self._host, (self._loop, self._tasks) = self.portal.start_task(self._host_tasks)

    def on_engine_thread(self) -> bool:
        return threading.get_ident() == self.thread_id

    def call(
        self,
        fn: Callable[..., Awaitable[T]],
        *args: Any,
        wait: Callable[[concurrent.futures.Future[T]], T] | None = None,
    ) -> T:
        """Run ``await fn(*args)`` on the engine and wait for it here (not from the engine itself).

        ``wait`` replaces the plain ``future.result()`` (the widget layer's waits keep answering
        dialog clicks while a cell is blocked).
        """
        if self.on_engine_thread():
            raise RuntimeError(
                "this blocking method was called from the engine thread (a handler or observer); "
                "use its async twin instead, e.g. `await session.acall_tool(...)`"
            )
        # One hop to the loop (the portal's start_task_soon waits for the loop twice: once to
        # start the task, once for its result), which a loop of blocking calls pays every call.
        # The task sets this future itself as it ends (run_coroutine_threadsafe would set it from
        # a done-callback, one loop iteration later): the waiting thread wakes that much sooner.
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._loop.call_soon_threadsafe(self._start, future, fn, args)
        try:
            return wait(future) if wait is not None else future.result()
        except KeyboardInterrupt as interrupt:
            future.cancel()  # an interrupted cell cancels the request, which cancels it on the server
            if not full_tracebacks():  # IPython draws it as this one line (see McpError)
                line = f"KeyboardInterrupt: {_described(fn, args)} interrupted; the request was cancelled"
                setattr(interrupt, "_render_traceback_", lambda: [line])  # noqa: B010
            raise

    def _start(
        self, future: concurrent.futures.Future[T], fn: Callable[..., Awaitable[T]], args: Any
    ) -> None:
        # On the loop. A future cancelled before it got here is not started.
        if future.cancelled():
            return
        task = self._loop.create_task(self._tracked(future, fn, *args))
        future.add_done_callback(
            lambda done: done.cancelled() and self._loop.call_soon_threadsafe(task.cancel)
        )

    async def _tracked(
        self, future: concurrent.futures.Future[T], fn: Callable[..., Awaitable[T]], *args: Any
    ) -> None:
        # A task of call() is the loop's, not the portal's: kept here so that stop() ends it.
        task = asyncio.current_task()
        if task is not None:
            self._calls.add(task)
        try:
            result = await fn(*args)
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as exc:
            with contextlib.suppress(concurrent.futures.InvalidStateError):  # cancelled meanwhile
                future.set_exception(exc)
            if not isinstance(exc, Exception):
                raise  # SystemExit, KeyboardInterrupt: as run_coroutine_threadsafe would
        else:
            with contextlib.suppress(concurrent.futures.InvalidStateError):
                future.set_result(result)
        finally:
            self._calls.discard(task)

    async def _cancel_calls(self) -> None:
        calls = [task for task in self._calls if task is not asyncio.current_task()]
        for task in calls:
            task.cancel()
        await asyncio.gather(*calls, return_exceptions=True)

    async def acall(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Await ``fn(*args)`` run on the engine, from another event loop."""
        if self.on_engine_thread():
            return await fn(*args)
        future: concurrent.futures.Future[T] = self.portal.start_task_soon(fn, *args)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            future.cancel()
            raise

    def soon(self, fn: Callable[[], Any]) -> None:
        """Run the plain callable ``fn`` on the engine's loop soon, from any thread, without waiting.

        For a thread that may hold a lock the loop also takes: the portal's ``start_task_soon``
        blocks until the loop has started the task, so an observer that pokes the engine while
        holding a group's board lock, as the loop waits for that lock, would never return.
        Raises RuntimeError once the loop is closed.
        """
        self._loop.call_soon_threadsafe(fn)

    def spawn(
        self, fn: Callable[..., Awaitable[Any]], *args: Any
    ) -> concurrent.futures.Future[Any] | Spawned:
        """Start background work on the engine, from any thread; cancel it with ``.cancel()``."""
        if not self.on_engine_thread():
            return self.portal.start_task_soon(fn, *args)
        handle = Spawned(self._loop)

        async def run() -> None:
            with handle.scope:
                await fn(*args)

        self._tasks.start_soon(run)
        return handle

    async def _host_tasks(
        self, *, task_status: anyio.abc.TaskStatus[tuple[asyncio.AbstractEventLoop, anyio.abc.TaskGroup]]
    ) -> None:
        async with anyio.create_task_group() as tasks:
            task_status.started((asyncio.get_running_loop(), tasks))
            await anyio.sleep_forever()

    def stop(self) -> None:
        if not self._stopped:
            self._stopped = True
            with contextlib.suppress(Exception):  # the loop may be gone already
                self.portal.call(self._cancel_calls)
            self._host.cancel()
            self._portal_cm.__exit__(None, None, None)


class Spawned:
    """Work started from the engine thread; ``cancel()`` may be called from any thread."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.scope = anyio.CancelScope()
        self._loop = loop

    def cancel(self) -> None:
        self._loop.call_soon_threadsafe(self.scope.cancel)


_engine: Engine | None = None
_lock = threading.Lock()
_exit_hooks: list[Callable[[], None]] = []


def get_engine() -> Engine:
    """The process-wide engine, started on first use."""
    global _engine
    with _lock:
        if _engine is None:
            _engine = Engine()
            atexit.register(_shutdown)
        return _engine


def on_engine_thread() -> bool:
    """True on the engine's thread (False while no engine runs); cheap, for every model write."""
    engine = _engine
    return engine is not None and threading.get_ident() == engine.thread_id


def on_exit(hook: Callable[[], None]) -> None:
    """Run ``hook`` at interpreter exit, before the engine stops (sessions close themselves)."""
    _exit_hooks.append(hook)


def _shutdown() -> None:
    global _engine
    for hook in reversed(_exit_hooks):
        with contextlib.suppress(Exception):  # at exit there is nobody left to tell
            hook()
    with _lock:
        engine, _engine = _engine, None
    if engine is not None:
        engine.stop()


def _described(fn: Callable[..., Any], args: tuple[Any, ...]) -> str:
    """``call_tool('slow')``: the blocking call a cell was in, for the line an interrupt shows."""
    name = getattr(fn, "__name__", "")
    if not name.lstrip("_").isidentifier():
        return "the call"
    first = f"{args[0]!r}" if args and isinstance(args[0], str) else ""
    return f"{name.lstrip('_')}({first})"
