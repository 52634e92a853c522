"""A time limit on every test, so a hang fails the run naming the test instead of holding CI.

pytest-timeout enforces it with its ``signal`` method (pyproject's [tool.pytest.ini_options]): at
the limit SIGALRM raises ``Failed: Timeout`` in the test's own thread, so the test fails with a
traceback through the call it waited in, the stacks of the other threads, and (added here) the stack
of every asyncio task, which is where a coroutine waits; then the run goes on. Its ``thread`` method
would end the whole process, and its dump shows only the event loop's frames, never the coroutine.

A signal is not always enough: an event loop that spins (a deadline sweeper that never catches up)
can catch the ``Failed`` in a callback, log it and spin on. So :class:`Backstop` arms a watchdog
thread per test that fires :data:`GRACE` seconds after the limit: it prints the test's id and every
thread's stack, then ends the process. Under pytest-xdist the controller reports the worker crashed
while running that test, starts a new worker and carries on; the run's status is 1.

Unit tests get the default from pyproject (``timeout``); the slow classes below get their own,
matched on the test file's name. A ``@pytest.mark.timeout(...)`` on a test wins over both, and
``--timeout`` on the command line replaces the default (not a class's limit).
"""

from __future__ import annotations

import asyncio
import faulthandler
import os
import re
import signal
import sys
import threading
import traceback
from collections.abc import Iterator
from types import FrameType
from typing import Any

import pytest

#: (test file pattern, seconds): generous, for a busy 2-core machine running two workers.
SLOW_CLASSES: tuple[tuple[str, float], ...] = (
    (r"test_binder\.py", 900),  # a fresh virtualenv, then every notebook executed
    (r"test_front_door\.py", 900),  # a fresh clone, a fresh virtualenv, the tour, JupyterLab
    (r"test_benchmarks_smoke\.py", 600),
    (r"test_conformance\.py", 600),  # the Node conformance harness against our client
    (r"test_soak\.py", 600),
    (r"test_notebooks\.py", 600),  # notebooks executed by nbclient
    (r"test_browser\w*\.py", 300),  # JupyterLab driven through Chromium
    (r"test_(kernel\w*|connect_once_kernel|lab_stop|jupyter_session)\.py", 300),  # real kernels
    (r"test_dask\.py", 300),  # LocalCluster workers
    (r"test_wheel\.py", 300),  # pip builds the wheel
)
#: Seconds past a test's limit before the watchdog gives up on the signal and ends the process.
GRACE = 60.0


def class_limit(filename: str) -> float | None:
    """The limit of the slow class a test file belongs to, or None for a unit test."""
    for pattern, seconds in SLOW_CLASSES:
        if re.fullmatch(pattern, filename):
            return seconds
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        limit = class_limit(item.path.name)
        if limit is not None and item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(limit))


def limit_of(item: pytest.Item) -> float:
    """The limit pytest-timeout applies to ``item`` (0: none): its mark, else --timeout or the ini."""
    mark = item.get_closest_marker("timeout")
    if mark is not None and mark.args:
        return float(mark.args[0] or 0)
    if mark is not None and "timeout" in mark.kwargs:
        return float(mark.kwargs["timeout"] or 0)
    option = item.config.getoption("timeout", None)
    if option is not None:
        return float(option)
    return float(item.config.getini("timeout") or 0)


@pytest.hookimpl(hookwrapper=True)
def pytest_timeout_set_timer(item: pytest.Item, settings: Any) -> Iterator[None]:
    """Make pytest-timeout's SIGALRM handler print where each asyncio task waits before it fails the test.

    The signal lands in the event loop's poll, so the test's traceback ends there; the coroutine that
    waited is suspended and on no thread's stack. Its task's stack says where it is.
    """
    yield
    if settings.method != "signal" or threading.current_thread() is not threading.main_thread():
        return
    fail = signal.getsignal(signal.SIGALRM)
    if not callable(fail):
        return

    def handler(signum: int, frame: Any) -> None:
        __tracebackhide__ = True
        _print_asyncio_tasks()
        fail(signum, frame)

    signal.signal(signal.SIGALRM, handler)


def _print_asyncio_tasks() -> None:
    """Each task's awaits, outermost first, when the alarm interrupted a running asyncio loop."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    print(f"{'+' * 30} Timeout: where each asyncio task waits {'+' * 30}")
    for task in asyncio.all_tasks(loop):
        frames = [(frame, frame.f_lineno) for frame in _awaiting_frames(task.get_coro())]
        print(f"{task!r}:\n{''.join(traceback.format_list(traceback.StackSummary.extract(frames)))}")


def _awaiting_frames(awaitable: Any) -> Iterator[FrameType]:
    """The frames of a suspended coroutine and of each coroutine or generator it awaits in turn."""
    while awaitable is not None:
        frame = getattr(awaitable, "cr_frame", None) or getattr(awaitable, "gi_frame", None)
        if frame is not None:
            yield frame
        awaitable = getattr(awaitable, "cr_await", None) or getattr(awaitable, "gi_yieldfrom", None)


class Backstop:
    """Ends the process, naming the test and dumping every stack, when a test outlives its limit."""

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Iterator[None]:
        limit = limit_of(item)
        if limit <= 0:
            yield
            return
        watchdog = threading.Timer(limit + GRACE, _give_up, (item, limit))
        watchdog.daemon = True
        watchdog.start()
        try:
            yield
        finally:
            watchdog.cancel()


def _give_up(item: pytest.Item, limit: float) -> None:
    capture = item.config.pluginmanager.getplugin("capturemanager")
    if capture is not None:
        capture.suspend_global_capture(in_=True)
    sys.stderr.write(
        f"\n{'+' * 30} Timeout {'+' * 30}\n{item.nodeid} still runs {GRACE:.0f} s after its {limit:.0f} s "
        "limit (the signal did not stop it): every thread's stack, then the process ends\n"
    )
    sys.stderr.flush()
    faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
    sys.stderr.write(f"{'+' * 30} Timeout: {item.nodeid} {'+' * 30}\n")
    sys.stderr.flush()
    os._exit(1)
