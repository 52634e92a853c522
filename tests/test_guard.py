"""The benchmark guard (benchmarks/guard.py) fails, naming the case, when a ratio falls below its
floor or a figure rises above its ceiling, and it sees a real slowdown planted in the hot path: a
cancel scope around every request's write, the cost issue #41 found and removed.

No timing is asserted: the planted slowdown is caught by the guard's deterministic figure (Python
calls per call, counted by cProfile), which repeats from run to run whatever the machine's load.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from benchmarks import guard
from mcp_notebook.connection._requests import Outbox

IN_FLIGHT_COUNT = "in-flight-100/stdio/echo Python calls per call"


def test_the_floors_file_names_every_measured_case() -> None:
    limits = guard.load_limits()
    named = set(limits["floors"]) | set(limits["ceilings"])
    measured = {ratio.name for ratio in guard.RATIOS} | set(guard.HEAPS) | set(guard.CALL_COUNTS)
    assert named == measured
    assert guard.failures(dict.fromkeys(measured, 0.0), {"floors": {}, "ceilings": {}}) == []


def test_a_ratio_below_its_floor_fails_naming_the_case() -> None:
    limits = {"floors": {"in-flight-100/stdio/echo ours/SDK": 3.5}, "ceilings": {"idle heap KB": 170}}
    assert guard.failures({"in-flight-100/stdio/echo ours/SDK": 5.1, "idle heap KB": 156}, limits) == []

    failed = guard.failures({"in-flight-100/stdio/echo ours/SDK": 3.4, "idle heap KB": 171}, limits)

    assert failed == [
        "in-flight-100/stdio/echo ours/SDK: 3.40 is below its floor 3.5",
        "idle heap KB: 171.00 is above its ceiling 170",
    ]
    assert guard.failures({}, limits) == [
        "in-flight-100/stdio/echo ours/SDK: not measured (floor 3.5)",
        "idle heap KB: not measured (ceiling 170)",
    ]


@pytest.mark.anyio
async def test_a_cancel_scope_per_call_fails_the_guard(monkeypatch: pytest.MonkeyPatch) -> None:
    limits = {"ceilings": {IN_FLIGHT_COUNT: guard.load_limits()["ceilings"][IN_FLIGHT_COUNT]}}
    today = await guard.python_calls_per_call("in-flight")
    assert guard.failures({IN_FLIGHT_COUNT: today}, limits) == []

    write = Outbox._write

    async def write_in_a_scope(self: Outbox, *args: Any, **kwargs: Any) -> None:
        with anyio.CancelScope():  # the planted slowdown: one scope per call
            await write(self, *args, **kwargs)

    monkeypatch.setattr(Outbox, "_write", write_in_a_scope)
    slowed = await guard.python_calls_per_call("in-flight")

    failed = guard.failures({IN_FLIGHT_COUNT: slowed}, limits)
    assert len(failed) == 1
    assert failed[0].startswith(f"{IN_FLIGHT_COUNT}: {slowed:.2f} is above its ceiling")
