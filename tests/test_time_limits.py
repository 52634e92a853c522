"""The per-test time limits (tests/time_limits.py), run on a throwaway suite in a pytest subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.time_limits import class_limit

ROOT = Path(__file__).resolve().parent.parent

CONFTEST = """
from tests import time_limits

time_limits.GRACE = 1.0  # the watchdog's grace, short for this suite

def pytest_configure(config):
    config.pluginmanager.register(time_limits, "limits")
    config.pluginmanager.register(time_limits.Backstop(), "backstop")
"""

HANG = """
import anyio
import pytest

@pytest.fixture
def anyio_backend():
    return "asyncio"

@pytest.mark.anyio
async def test_waits_forever():
    await anyio.sleep_forever()

def test_after_the_hang():
    pass
"""

SWALLOW = """
import time

def test_swallows_the_timeout():
    while True:
        try:
            time.sleep(5)
        except BaseException:
            pass  # what a spinning event loop does with the signal's Failed
"""


def _run(tmp_path: Path, source: str, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_suite.py").write_text(source)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_hang_fails_naming_the_test_and_where_it_waited_and_the_run_goes_on(tmp_path: Path) -> None:
    run = _run(tmp_path, HANG, "--timeout", "1", "--timeout-method", "signal")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "FAILED test_suite.py::test_waits_forever - Failed: Timeout" in run.stdout
    assert "where each asyncio task waits" in run.stdout
    assert "in test_waits_forever" in run.stdout  # the task's stack reaches the line that waited
    assert "await anyio.sleep_forever()" in run.stdout
    assert "1 failed, 1 passed" in run.stdout


def test_a_test_that_swallows_the_signal_is_ended_by_the_watchdog_naming_it(tmp_path: Path) -> None:
    run = _run(tmp_path, SWALLOW, "--timeout", "1", "--timeout-method", "signal")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "test_suite.py::test_swallows_the_timeout still runs 1 s after its 1 s limit" in run.stderr
    assert 'test_suite.py", line 7 in test_swallows_the_timeout' in run.stderr  # where it was


def test_the_slow_classes_get_their_own_limits_and_unit_tests_the_default() -> None:
    assert class_limit("test_binder.py") == 900
    assert class_limit("test_browser_panels.py") == 300
    assert class_limit("test_kernel.py") == 300
    assert class_limit("test_soak.py") == 600
    assert class_limit("test_sse.py") is None
    assert class_limit("test_connection.py") is None
