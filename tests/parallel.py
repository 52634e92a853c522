"""How the suite splits across pytest-xdist workers (scripts/test.sh runs ``-n auto --dist loadfile``).

``--dist loadfile`` keeps a file's tests on one worker, in order, so its module fixtures (a kernel, a
JupyterLab, a fresh clone) are made once. Here the files in :data:`SERIAL` also count as one file:
they run one after another on one worker, never beside each other: the tests that measure real time
against a deadline, the soak and the benchmark smoke tests (each a CPU hog that would stretch the
others' clocks). (``--dist loadgroup`` with ``xdist_group`` marks would say the same, but pytest 9.2
no longer lets pytest-xdist 3.8 rename the test ids that carry the group, so it ignores them.)
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

import pytest

SERIAL_SCOPE = "serial: real-clock deadlines, soak, benchmarks"
#: Test files that must not overlap one another.
SERIAL = re.compile(r"test_(call_deadline|deadlines|deadline_properties|soak|benchmarks_smoke)\.py")


def scope_of(nodeid: str) -> str:
    """The unit of work a test belongs to: its file, or the serial scope."""
    file = nodeid.split("::", 1)[0]
    return SERIAL_SCOPE if SERIAL.fullmatch(PurePosixPath(file).name) else file


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile``, with the serial files as one file."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SerialAwareFileScheduling(LoadFileScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

    return SerialAwareFileScheduling(config, log)
