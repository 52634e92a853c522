"""How the suite splits across pytest-xdist workers (scripts/test.sh runs ``-n 4 --dist loadfile``).

``--dist loadfile`` keeps a file's tests on one worker, in order, so its module fixtures (a kernel, a
JupyterLab, a fresh clone) are made once. Here the files in :data:`SERIAL` also count as one file:
they run one after another on one worker, never beside each other: the tests that measure real time
against a deadline, the soak and the benchmark smoke tests (each a CPU hog that would stretch the
others' clocks). (``--dist loadgroup`` with ``xdist_group`` marks would say the same, but pytest 9.2
no longer lets pytest-xdist 3.8 rename the test ids that carry the group, so it ignores them.)

xdist hands files out by test count, most first, and a worker that finishes takes the next; so the
Binder test (five tests, four minutes) started last and ran alone at the end. :data:`HEAVY` lists the
files that take longest, with the seconds they took, and they are handed out first, longest first
(the longest-processing-time rule): what is left for the end is many short files that even out.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

import pytest

SERIAL_SCOPE = "serial: real-clock deadlines, soak, benchmarks"
#: Test files that must not overlap one another.
SERIAL = re.compile(r"test_(call_deadline|deadlines|deadline_properties|soak|benchmarks_smoke)\.py")


#: Seconds the slowest scopes took (the sum of their tests' junit times), measured on 2026-12-05 at
#: a448a2e with two workers on this 2-core machine. Only their order matters; re-measure with
#: ``--junitxml`` when a file grows past these.
HEAVY: dict[str, float] = {
    SERIAL_SCOPE: 330,
    "tests/test_binder.py": 250,
    "tests/test_browser_marimo.py": 100,  # measured alone on 2026-12-05 (issue #38), six marimo servers
    "tests/test_browser_runall.py": 175,
    "tests/test_conformance.py": 130,
    "tests/test_fallbacks.py": 130,
    "tests/test_browser.py": 120,
    "tests/test_servers.py": 110,
    "tests/test_notebooks.py": 100,
    "tests/test_tasks.py": 95,
    "tests/test_browser_panels.py": 85,
    "tests/test_front_door.py": 80,
    "tests/test_dask.py": 70,
    "tests/test_views.py": 65,
    "tests/test_live.py": 60,
    "tests/test_widgets_tasks.py": 58,
    "tests/test_browser_apps.py": 57,
    "tests/test_browser_marimo_panels.py": 75,  # alone on 2026-12-05 (#38): four marimo servers
    "tests/test_apps_host.py": 54,
    "tests/test_demo_tasks.py": 53,
    "tests/test_widgets_dialogs.py": 50,
    "tests/test_http_streams.py": 47,
    "tests/test_kernel.py": 43,
    # 2026-12-05 at c4e26b8 (issue #39), three workers while a CI run loaded the machine: after the
    # agents tests shared one HTTP demo per module (alone and unloaded they take 8 to 18 s)
    "tests/test_agents_openai.py": 42,
    "tests/test_agents_langchain.py": 38,
    "tests/test_agents_llama_index.py": 31,
    "tests/test_agents_sampling.py": 26,
}


def longest_first(scopes: list[str]) -> list[str]:
    """``scopes`` in the order to hand them out: the heavy ones first, longest first, then the rest as
    they were."""
    heavy = sorted((scope for scope in scopes if scope in HEAVY), key=HEAVY.__getitem__, reverse=True)
    return heavy + [scope for scope in scopes if scope not in HEAVY]


def scope_of(nodeid: str) -> str:
    """The unit of work a test belongs to: its file, or the serial scope."""
    file = nodeid.split("::", 1)[0]
    return SERIAL_SCOPE if SERIAL.fullmatch(PurePosixPath(file).name) else file


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile``, with the serial files as one file and the heavy files handed out first."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SerialAwareFileScheduling(LoadFileScheduling):  # type: ignore[misc]
        _ordered = False

        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

        def _assign_work_unit(self, node: Any) -> None:
            # The queue is whole by the first assignment (schedule() builds it, then assigns).
            if not self._ordered:
                self._ordered = True
                for scope in reversed(longest_first(list(self.workqueue))):
                    self.workqueue.move_to_end(scope, last=False)
            super()._assign_work_unit(node)

    return SerialAwareFileScheduling(config, log)
