"""Shared test fixtures: real server commands, and a check that no server process outlives a test.

How timing is asserted (issue #31; helpers in tests/timing.py):

- Correctness tests assert no timing budgets ("took < 60 s"): how fast something is belongs in
  benchmarks/. A generous timeout that only stops a hang (``anyio.fail_after``, nbclient's cell
  timeout) is fine, and says so.
- A deadline under test is asserted against itself, never a fixed slack. When the code runs wholly in
  the event loop (the connection over tests/fakes.py's in-memory server, the deadline sweeper), run
  it on trio's virtual clock (``timing.BACKENDS``: "trio-virtual" is ``MockClock`` with
  ``autojump_threshold=0``): a deadline fires at its instant, asserted to the millisecond
  (``timing.VIRTUAL_SLOP``), and the test takes no real time. Keep an asyncio run next to it on the
  real clock, bounded by the deadline + 50 ms + the scheduling noise measured in the same run
  (``async with timing.scheduling_noise() as noise: ...; noise.allowance()``).
- Real processes, sockets and threads keep real time: bound them by the timeout under test plus
  ``scheduling_noise``, or by a hang guard only.
- Hypothesis suites carry the ``fuzz`` mark and take their example counts from
  ``fuzz_traffic.budget`` (short by default, long under ``pytest -m fuzz``).

Time limits (tests/time_limits.py): every test has one, so a hang fails the run naming the test
with a stack dump of where it waited, instead of holding CI. Unit tests get 60 s (pyproject's
``timeout``); the slow classes, matched on the file's name, get more: 900 s binder and front door,
600 s benchmarks smoke, conformance, soak and notebook execution, 300 s browser, kernel, dask and
the wheel build. They are hang guards sized for a busy machine, never a measure of speed.
pytest-timeout's ``signal`` method fails the test in place (the report prints where each asyncio
task waits) and the run goes on; should a spinning event loop or trio swallow the signal, a
watchdog 60 s later prints the test's id and every thread's stack and ends the worker, which
pytest-xdist reports as a crash in that test.

In parallel: scripts/test.sh runs the suite on pytest-xdist workers (``-n 3 --dist loadfile``): a
file's tests stay on one worker; the real-clock deadline tests, the soak and the benchmark smoke
share one worker and never overlap (tests/parallel.py). Nothing may take a fixed port.

Skips: with ``CI=true`` (``.ci/run`` sets it) a skip whose reason matches no line of
tests/skip_allowlist.txt fails the run (tests/skip_policy.py); locally a skip stays a skip. An
expected ``McpError`` states its kind (``tests/raises.py``'s ``raises_mcp(kind, match=...)``).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from . import parallel, time_limits, wheels

TESTS = Path(__file__).resolve().parent
SERVERS = TESTS / "servers"
EVERYTHING_JS = TESTS / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
PYTHON = sys.executable


def python_server(script: str, *args: str) -> list[str]:
    """argv that runs one of our small test servers in tests/servers/."""
    return [PYTHON, str(SERVERS / script), *args]


def demo_server(*args: str) -> list[str]:
    return [PYTHON, "-m", "mcp_notebook.demo", *args]


def everything_server() -> list[str]:
    if not EVERYTHING_JS.exists():
        pytest.fail(f"{EVERYTHING_JS} is missing: run `npm ci --prefix tests` (the .ci/run script does)")
    return ["node", str(EVERYTHING_JS), "stdio"]


def _children() -> set[int]:
    """Our live descendants."""
    return {p.pid for p in psutil.Process(os.getpid()).children(recursive=True) if _alive(p)}


def _zombie(process: psutil.Process) -> bool:
    try:
        return process.status() == psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _alive(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def running(process: psutil.Process) -> bool:
    """Alive and not a zombie."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def wait_gone(processes: list[psutil.Process], timeout: float) -> list[psutil.Process]:
    """Waits until the processes have exited; returns those still running at the deadline."""
    deadline = time.monotonic() + timeout
    alive = [p for p in processes if running(p)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.02)
        alive = [p for p in alive if running(p)]
    return alive


@pytest.fixture
def no_leaked_processes():
    """Fails the test if a child process it started is still running (or a zombie) afterwards."""
    before = _children()
    yield
    deadline = time.monotonic() + 5
    leaked: set[int] = set()
    while time.monotonic() < deadline:
        leaked = _children() - before
        if not leaked:
            break
        time.sleep(0.05)
    zombies = [p.pid for p in psutil.Process(os.getpid()).children(recursive=True) if _zombie(p)]
    assert not leaked, f"server processes still running after the test: {sorted(leaked)}"
    assert not zombies, f"zombie processes left behind: {zombies}"


@pytest.fixture(scope="session")
def package_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package's wheel, built once per run (tests/wheels.py)."""
    return wheels.package_wheel(wheels.run_folder(tmp_path_factory))


@pytest.fixture
def anyio_backend():
    """The async tests run on asyncio (what Jupyter kernels use)."""
    return "asyncio"


# --- one skip policy (tests/skip_policy.py): in CI, a skip not in tests/skip_allowlist.txt fails ---


def pytest_configure(config: pytest.Config) -> None:
    from .skip_policy import SkipPolicy, in_ci, read_allowlist

    config.pluginmanager.register(SkipPolicy(strict=in_ci(), allowed=read_allowlist()), "mcpnb-skip-policy")
    config.pluginmanager.register(time_limits, "mcpnb-time-limits")
    config.pluginmanager.register(parallel, "mcpnb-parallel")
    config.pluginmanager.register(time_limits.Backstop(), "mcpnb-time-limit-backstop")


@pytest.fixture
def default_sigint() -> Iterator[None]:
    """Python's own SIGINT handler for the test, so a SIGINT to the main thread raises
    KeyboardInterrupt as Ctrl-C and a kernel's interrupt do; the handler in force before comes back
    after. Why not a skip when another is in force: an earlier test on the same worker (or the
    worker itself) may leave one, and an interrupt test that then never raises runs its slow call
    to the end and fails (or skipped, seen in CI runs)."""
    import signal

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
