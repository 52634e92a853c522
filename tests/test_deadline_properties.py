"""Deadlines that cannot be lost: random interleavings of calls, answers, errors, silence,
progress, cancellation and a server crash (a reconnect), on asyncio and trio.

The invariant, for every request of every example: it ends exactly once, by its deadline at the
latest, never before its timeout when it timed out, and with an outcome its story allows;
afterwards nothing is pending and the client's counters add up. Connection logic only, so the
scripted in-memory server of ``tests/fakes.py`` plays the server (the real-server versions of these
behaviours are in test_faults.py, test_http_faults.py and the fuzzer).

"By its deadline" is exact on trio, which runs on a virtual clock (``MockClock``: a deadline fires
at its instant, to the millisecond, in no real time); asyncio runs on the real clock, where the
bound is the deadline plus 50 ms plus the scheduling noise measured during the same example (see
:mod:`tests.timing`). The budget is the fuzzer's (:func:`tests.fuzz_traffic.budget`): a few
examples in a normal run, ``FUZZ_EXAMPLES_LONG`` with ``pytest -m fuzz``, ``MCPNB_FUZZ_EXAMPLES=N``
to choose.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_notebook import Client, McpError

from .fakes import FakeConnection, FakeServer, RpcError, text_result
from .fuzz_traffic import budget
from .timing import BACKENDS, VIRTUAL_SLOP, run_on, scheduling_noise, virtual

pytestmark = pytest.mark.fuzz

#: Examples per backend in a normal run: the virtual clock makes trio's nearly free.
SHORT_BUDGET = {"asyncio": 20, "trio-virtual": 100}


@dataclass(frozen=True)
class Plan:
    behaviour: str  # answer | error | never | progress
    delay: float  # when the server answers (answer, error, progress)
    timeout: float
    cancel_after: float | None  # the caller gives up (a cancel scope) after this long
    start_after: float  # when the call is made


plans = st.builds(
    Plan,
    behaviour=st.sampled_from(["answer", "error", "never", "progress"]),
    delay=st.floats(0.0, 0.5),
    timeout=st.floats(0.05, 0.4),
    cancel_after=st.none() | st.floats(0.0, 0.4),
    start_after=st.floats(0.0, 0.2),
)


def tool_for(plan: Plan) -> Any:
    async def handler(message: dict[str, Any], conn: FakeConnection) -> Any:
        if plan.behaviour == "never":
            await anyio.sleep_forever()
        if plan.behaviour == "progress":
            steps = max(1, int(plan.delay / 0.05))
            for step in range(steps):
                await anyio.sleep(plan.delay / steps)
                if "progressToken" in message["params"].get("_meta", {}):
                    await conn.progress(message, step + 1, steps)
        else:
            await anyio.sleep(plan.delay)
        if plan.behaviour == "error":
            raise RpcError(-32603, "planned failure")
        return text_result("done")

    return handler


def allowed(plan: Plan, crashed: bool) -> set[str]:
    """The outcomes a request's story allows (a crash may cut any of them short)."""
    outcomes = {"timeout", "cancelled"}
    if plan.behaviour in ("answer", "progress"):
        outcomes.add("ok")
    if plan.behaviour == "error":
        outcomes.add("server")
    if crashed:
        outcomes |= {"transport"}
    return outcomes


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_request_ends_exactly_once_by_its_deadline(backend: str, pytestconfig: pytest.Config) -> None:
    @settings(
        max_examples=budget(pytestconfig, short=SHORT_BUDGET[backend]),
        deadline=None,
        database=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(
        script=st.lists(plans, min_size=1, max_size=6),
        crash_at=st.none() | st.floats(0.0, 0.3),
        progress_extends=st.booleans(),
    )
    def ends_by_its_deadline(script: list[Plan], crash_at: float | None, progress_extends: bool) -> None:
        run_on(backend, _every_request_ends_exactly_once_by_its_deadline, script, crash_at, progress_extends)

    ends_by_its_deadline()


async def _every_request_ends_exactly_once_by_its_deadline(
    script: list[Plan], crash_at: float | None, progress_extends: bool
) -> None:
    server = FakeServer("modern")
    for index, plan in enumerate(script):
        server.tool(f"t{index}", tool_for(plan))
    ended: dict[int, list[tuple[str, float]]] = {i: [] for i in range(len(script))}
    crashed = False
    longest = max(plan.start_after + plan.timeout for plan in script)
    async with Client(
        server,
        timeout=5,
        reset_timeout_on_progress=progress_extends,
        max_total_timeout=0.6,
        backoff_initial=0.01,
    ) as client:
        clock = anyio.current_time

        async def call(index: int, plan: Plan) -> None:
            await anyio.sleep(plan.start_after)
            started = clock()
            outcome = "cancelled"
            with anyio.CancelScope() as scope:
                if plan.cancel_after is not None:
                    scope.deadline = started + plan.cancel_after
                try:
                    progress = (lambda p, t, m: None) if plan.behaviour == "progress" else None
                    await client.call_tool(f"t{index}", {}, timeout=plan.timeout, progress=progress)
                    outcome = "ok"
                except McpError as exc:
                    outcome = exc.kind
            ended[index].append((outcome, clock() - started))

        async def crash() -> None:
            nonlocal crashed
            assert crash_at is not None
            await anyio.sleep(crash_at)
            crashed = True
            server.connection.drop()

        async with scheduling_noise() as noise:
            with anyio.fail_after(longest + 0.6 + 5):  # a hang fails the example
                async with anyio.create_task_group() as tg:
                    for index, plan in enumerate(script):
                        tg.start_soon(call, index, plan)
                    if crash_at is not None:
                        tg.start_soon(crash)

        late = noise.allowance()
        for index, plan in enumerate(script):
            assert len(ended[index]) == 1, f"request {index} ended {len(ended[index])} times"
            outcome, took = ended[index][0]
            assert outcome in allowed(plan, crashed), f"request {index}: {outcome} for {plan}"
            bound = 0.6 if progress_extends and plan.behaviour == "progress" else plan.timeout
            if plan.cancel_after is not None:
                bound = min(bound, plan.cancel_after)
            assert took <= bound + late, (
                f"request {index} took {took * 1000:.1f} ms, bound {bound * 1000:.1f} ms "
                f"+ {late * 1000:.1f} ms: {plan}"
            )
            if outcome == "timeout":
                assert took >= plan.timeout - VIRTUAL_SLOP, (
                    f"request {index} timed out early, after {took * 1000:.1f} ms: {plan}"
                )
        stats = client.stats
        assert stats.in_flight == 0
        assert stats.streams == 0
        assert sum(stats.outcomes.values()) == stats.requests


@pytest.mark.parametrize("backend", BACKENDS)
def test_input_rounds_share_one_deadline(backend: str) -> None:
    """Each ``input_required`` round used to start the timeout afresh, so a server that keeps
    asking for another round (here: state only, 0.15 s a round) held a call for rounds x timeout;
    then the client's own back-off between state-only rounds (0.05 s, 0.1 s, ...) was still left
    off the clock, and a 0.5 s call took 0.8 s."""
    run_on(backend, _input_rounds_share_one_deadline)


async def _input_rounds_share_one_deadline() -> None:
    server = FakeServer("modern")

    async def endless_rounds(message: dict[str, Any], conn: FakeConnection) -> Any:
        await anyio.sleep(0.15)
        return {"resultType": "input_required", "requestState": "again"}

    server.tool("rounds", endless_rounds)
    async with Client(server, timeout=5, max_input_rounds=100) as client, scheduling_noise() as noise:
        started = anyio.current_time()
        with pytest.raises(McpError) as caught:
            await client.call_tool("rounds", {}, timeout=0.5)
        took = anyio.current_time() - started
    assert caught.value.kind == "timeout"
    assert 0.5 - VIRTUAL_SLOP <= took <= 0.5 + noise.allowance(), f"{took * 1000:.1f} ms for a 0.5 s deadline"
    rounds = len(server.calls("rounds"))  # at 0, 0.2 and 0.45 s (0.15 s each, then a back-off)
    assert rounds == 3 if virtual() else 2 <= rounds <= 3, rounds
