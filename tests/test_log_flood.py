"""Logging that cannot flood: what a server causes once per message is logged within a budget.

A server that prints a million junk lines (or malformed notifications, or log messages of its own)
must not cost a million log records: with no logging configured, Python's last-resort handler
prints each WARNING into the notebook cell. Per connection and kind, the first few are logged in
full, then at most one summary per interval with the counts, and a final summary on close;
``client.stats`` keeps the exact counts and notification listeners still get every message.

The limiter itself (``connection/_log_budget.py``) is tested with a fake clock; the whole path
against a real stdio server (``tests/servers/script_server.py`` with ``inject``'s ``repeat``).
"""

from __future__ import annotations

import base64
import json
import logging
import os
import re
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from mcp_notebook import Client
from mcp_notebook.connection._log_budget import BURST, INTERVAL, LogBudget
from mcp_notebook.protocol._jsonrpc import Notification

from .conftest import PYTHON, python_server
from .fakes import FakeServer, reply

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaked_processes")]


class Records(logging.Handler):
    """Every record that reaches a logger, kept (the test's own view of what a cell would print)."""

    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def messages(self) -> list[str]:
        return [r.getMessage() for r in self.records]


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def captured() -> Iterator[tuple[logging.Logger, Records]]:
    log = logging.getLogger("mcp_notebook.tests.log_budget")
    handler = Records()
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    log.propagate = False
    try:
        yield log, handler
    finally:
        log.removeHandler(handler)


def budget_for(log: logging.Logger, clock: FakeClock, **kwargs: Any) -> LogBudget:
    return LogBudget(log, clock, where=lambda: "srv", noun="warnings", **kwargs)


def summaries(handler: Records) -> list[str]:
    return [m for m in handler.messages() if "suppressed" in m]


def held_back(messages: list[str], kind: str) -> int:
    """The total a list of summaries reports for ``kind``."""
    pattern = re.compile(rf"(\d[\d,]*) more {re.escape(repr(kind))}")
    return sum(int(m.replace(",", "")) for text in messages for m in pattern.findall(text))


# --- the limiter, with a fake clock --------------------------------------------------------------


def test_the_first_records_of_a_kind_are_logged_in_full_and_the_rest_only_counted(captured) -> None:
    log, handler = captured
    clock = FakeClock()
    budget = budget_for(log, clock, burst=5, interval=10.0)
    for n in range(1000):
        budget.log(logging.WARNING, "bad frame", "bad line %d", n)
        clock.now += 0.001
    assert handler.messages() == [f"bad line {n}" for n in range(5)]
    assert budget.suppressed == {"bad frame": 995}
    assert budget.due() == 1010.0


def test_kinds_have_budgets_of_their_own(captured) -> None:
    log, handler = captured
    budget = budget_for(log, FakeClock(), burst=2)
    for _ in range(10):
        budget.log(logging.WARNING, "bad frame", "bad")
    budget.log(logging.WARNING, "malformed notification", "malformed")
    assert handler.messages() == ["bad", "bad", "malformed"]


def test_one_summary_per_interval_with_the_counts_of_every_kind(captured) -> None:
    log, handler = captured
    clock = FakeClock()
    budget = budget_for(log, clock, burst=1, interval=10.0, hint=" (see stats)")
    for _ in range(123_457):
        budget.log(logging.WARNING, "bad frame", "bad")
    for _ in range(4):
        budget.log(logging.ERROR, "listener failure", "raised")
    clock.now = 1009.9
    budget.tick()
    budget.log(logging.WARNING, "bad frame", "bad")
    assert summaries(handler) == []  # not before the interval ends
    clock.now = 1010.0
    budget.tick()
    budget.tick()  # once per interval, however often asked
    assert summaries(handler) == [
        "srv: suppressed 123,457 more 'bad frame' and 3 more 'listener failure' warnings "
        "in the last 10 s (see stats)"
    ]
    summary = handler.records[-1]
    assert summary.levelno == logging.ERROR  # the highest level held back
    assert budget.suppressed == {}
    assert budget.due() is None


def test_a_kind_that_keeps_flooding_stays_limited_and_a_quiet_one_gets_its_burst_back(captured) -> None:
    log, handler = captured
    clock = FakeClock()
    budget = budget_for(log, clock, burst=2, interval=10.0)
    for _ in range(5):
        budget.log(logging.WARNING, "bad frame", "bad")
    budget.log(logging.WARNING, "late", "late")
    for _ in range(6):  # a minute of one bad frame per second, nothing else
        for _ in range(10):
            clock.now += 1.0
            budget.log(logging.WARNING, "bad frame", "bad")
    messages = handler.messages()
    assert messages.count("bad") == 2  # never in full again while the flood goes on
    assert len(summaries(handler)) == 6  # one per interval
    assert held_back(summaries(handler), "bad frame") == 3 + 60 - 1  # the last one is still untold
    budget.log(logging.WARNING, "late", "late")  # quiet for a whole interval: a fresh burst
    assert handler.messages().count("late") == 2
    clock.now += 20.0  # the flood stopped: one interval to tell the rest, then quiet
    budget.tick()
    clock.now += 20.0
    budget.log(logging.WARNING, "bad frame", "bad")
    assert handler.messages().count("bad") == 3


def test_close_tells_what_is_still_held_back_and_only_that(captured) -> None:
    log, handler = captured
    clock = FakeClock()
    budget = budget_for(log, clock, burst=1, interval=10.0)
    budget.log(logging.WARNING, "bad frame", "bad")
    budget.close()
    assert summaries(handler) == []  # nothing held back, nothing to say
    for _ in range(3):
        budget.log(logging.WARNING, "bad frame", "bad")
    clock.now += 0.5
    budget.close()
    assert summaries(handler) == ["srv: suppressed 2 more 'bad frame' warnings in the last 0.5 s"]
    budget.close()
    assert len(summaries(handler)) == 1


def test_records_nobody_would_see_are_neither_logged_nor_counted(captured) -> None:
    log, handler = captured
    log.setLevel(logging.WARNING)
    budget = budget_for(log, FakeClock(), burst=1)
    for _ in range(10):
        budget.log(logging.DEBUG, "late response", "late")
    assert handler.records == []
    assert budget.suppressed == {}


def test_a_full_record_names_its_caller_not_the_limiter(captured) -> None:
    log, handler = captured
    budget_for(log, FakeClock()).log(logging.WARNING, "bad frame", "bad")
    assert handler.records[0].funcName == "test_a_full_record_names_its_caller_not_the_limiter"


class _Telling(Records):
    """Records, and says when a summary ("suppressed ...") has been logged."""

    def __init__(self) -> None:
        super().__init__()
        self.told = anyio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        super().emit(record)
        if "suppressed" in record.getMessage():
            self.told.set()


def _telling(log: logging.Logger) -> tuple[_Telling, anyio.Event]:
    handler = _Telling()
    log.addHandler(handler)
    return handler, handler.told


async def test_the_summary_is_logged_when_its_interval_ends_without_another_record(captured) -> None:
    log, handler = captured
    clock = FakeClock()
    budget = budget_for(log, clock, burst=1, interval=10.0)
    handler, told = _telling(log)
    async with anyio.create_task_group() as tg:
        tg.start_soon(budget.run)
        await anyio.lowlevel.checkpoint()  # let it go idle
        for _ in range(4):
            budget.log(logging.WARNING, "bad frame", "bad")
        clock.now += 10.0  # the interval is over; nothing else is logged
        with anyio.fail_after(5):
            await told.wait()
        tg.cancel_scope.cancel()
    assert summaries(handler) == ["srv: suppressed 3 more 'bad frame' warnings in the last 10 s"]


async def test_an_attached_budget_runs_a_summary_task_only_while_something_is_held_back(
    captured,
) -> None:
    # Why attach and not run: a connection has two budgets and its task tracker one, nearly never
    # exceeded; an idle task apiece was 3 KB of every idle client's heap (issue #41).
    log, handler = captured
    clock = FakeClock()
    budget = budget_for(log, clock, burst=1, interval=10.0)
    handler, told = _telling(log)

    def tasks() -> int:
        return len(anyio.get_running_tasks())

    async with anyio.create_task_group() as tg:
        budget.attach(tg)
        alone = tasks()
        budget.log(logging.WARNING, "bad frame", "bad")  # within the burst: no summary to come
        await anyio.wait_all_tasks_blocked()
        assert tasks() == alone
        for _ in range(3):
            budget.log(logging.WARNING, "bad frame", "bad")
        assert tasks() == alone + 1  # one summary task, however many records are held back
        clock.now += 10.0  # the interval is over (before that task reads the clock); nothing else is logged
        with anyio.fail_after(5):  # a hang guard: the summary task sleeps the interval in real time
            await told.wait()
        await anyio.wait_all_tasks_blocked()
        assert tasks() == alone  # told: nothing is held back, and the task has ended
        budget.attach(None)
    assert summaries(handler) == ["srv: suppressed 3 more 'bad frame' warnings in the last 10 s"]


# --- a real server that floods -------------------------------------------------------------------


def script_server() -> list[str]:
    return python_server("script_server.py")


def b64(line: bytes | dict[str, Any]) -> str:
    raw = line if isinstance(line, bytes) else json.dumps(line).encode()
    return base64.b64encode(raw).decode()


@pytest.fixture
def ours() -> Iterator[Records]:
    """Every WARNING-or-worse record of the client's loggers (what a cell would print)."""
    handler = Records()
    handler.setLevel(logging.WARNING)
    root = logging.getLogger("mcp_notebook")
    root.addHandler(handler)
    try:
        yield handler
    finally:
        root.removeHandler(handler)


def client_records(handler: Records) -> list[logging.LogRecord]:
    return [r for r in handler.records if r.name != "mcp_notebook.server"]


def at_most(full: int, started: float) -> int:
    """What a flood that began at ``started`` may cost: ``full`` records in full, one summary per
    interval it lasted, and the final one (a handful unless the machine is very slow)."""
    return full + 1 + int((anyio.current_time() - started) / INTERVAL) + 1


ROOT = str(Path(__file__).resolve().parents[1])
JUNK = 200_000
FEW_JUNK = 20_000


async def test_a_server_printing_200k_junk_lines_costs_a_handful_of_records(ours: Records) -> None:
    started = anyio.current_time()
    async with Client(script_server(), timeout=120) as client:
        before = client.stats.malformed_frames
        with anyio.fail_after(120):
            result = await client.call_tool(
                "inject", {"lines": [b64(b"this is not JSON-RPC")], "repeat": JUNK}
            )
        assert result.text == "injected"
        assert (await client.call_tool("echo", {"n": 7})).text == "7"
        assert client.stats.malformed_frames - before == JUNK  # exact, whatever was logged
    records = client_records(ours)
    assert len(records) <= at_most(BURST, started), [r.getMessage()[:100] for r in records]
    full = [r for r in records if "not JSON-RPC" in r.getMessage()]
    assert len(full) == BURST
    told = [r.getMessage() for r in records if "suppressed" in r.getMessage()]
    assert told, "no summary of what was held back"
    assert held_back(told, "bad frame") == JUNK - BURST
    assert "client.stats" in told[-1]


MALFORMED = 100_000


async def test_a_flood_of_malformed_notifications_costs_a_handful_of_records(ours: Records) -> None:
    bad_progress = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": [1]}}
    started = anyio.current_time()
    async with Client(script_server(), timeout=120) as client:
        before = client.stats.malformed_frames
        with anyio.fail_after(120):
            result = await client.call_tool("inject", {"lines": [b64(bad_progress)], "repeat": MALFORMED})
        assert result.text == "injected"
        assert client.stats.malformed_frames - before == MALFORMED
    records = client_records(ours)
    assert len(records) <= at_most(BURST, started), [r.getMessage()[:100] for r in records]
    told = [r.getMessage() for r in records if "suppressed" in r.getMessage()]
    assert held_back(told, "malformed notification") == MALFORMED - BURST


SERVER_LOGS = 50_000
SERVER_BURST = 20  # of each level in full (the connection's _SERVER_LOG_BURST)


async def test_the_servers_own_log_flood_is_bounded_but_every_message_reaches_listeners(
    ours: Records,
) -> None:
    def message(level: str, data: str) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": level, "data": data}}

    heard: list[Notification] = []
    started = anyio.current_time()
    async with Client(script_server(), timeout=120) as client:
        client.connection.on_notification(
            lambda n: heard.append(n) if n.method == "notifications/message" else None
        )
        with anyio.fail_after(120):
            await client.call_tool(
                "inject", {"lines": [b64(message("warning", "chatter"))], "repeat": SERVER_LOGS}
            )
            await client.call_tool("inject", {"lines": [b64(message("error", "the disk is full"))]})
    assert len(heard) == SERVER_LOGS + 1  # listeners are not rate-limited
    server = [r for r in ours.records if r.name == "mcp_notebook.server"]
    messages = [r.getMessage() for r in server]
    assert len(server) <= at_most(SERVER_BURST + 1, started), messages[-5:]
    assert messages.count("server: chatter") == SERVER_BURST
    assert "server: the disk is full" in messages  # a flood of one level cannot hide another
    told = [m for m in messages if "suppressed" in m]
    assert held_back(told, "warning message") == SERVER_LOGS - SERVER_BURST


async def test_with_no_logging_configured_a_flood_prints_a_handful_of_lines() -> None:
    """The audit's case: nobody configured logging, so Python's last-resort handler prints every
    WARNING on stderr (in a notebook, into the cell). A flood must print a few lines and a count."""
    code = textwrap.dedent(
        f"""
        import base64, anyio
        from mcp_notebook import Client

        async def main():
            async with Client({script_server()!r}, timeout=120) as client:
                line = base64.b64encode(b"junk").decode()
                await client.call_tool("inject", {{"lines": [line], "repeat": {FEW_JUNK}}})
                assert (await client.call_tool("echo", {{"n": 1}})).text == "1"
                print("malformed_frames", client.stats.malformed_frames)

        anyio.run(main)
        """
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))}
    started = anyio.current_time()
    done = await anyio.run_process([PYTHON, "-c", code], env=env, check=False)
    out, err = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 0, err[-2000:]
    assert out.split() == ["malformed_frames", str(FEW_JUNK)]
    printed = err.splitlines()
    assert len(printed) <= at_most(BURST, started), printed[:12]
    assert held_back(printed, "bad frame") == FEW_JUNK - BURST, printed


MALFORMED_STATUSES = 2_000
TASK_CAPS = {"tools": {}, "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}


async def test_a_flood_of_malformed_task_statuses_costs_a_handful_of_records(ours: Records) -> None:
    """The task poller's warning is the server's doing once per notification too (in-memory fake:
    no real server sends a broken status on demand)."""
    task = {"taskId": "t1", "status": "working", "pollInterval": 60_000}
    server = FakeServer("legacy", capabilities=TASK_CAPS)
    server.tool("job", reply({"task": task}))
    server.tools[-1]["execution"] = {"taskSupport": "required"}
    server.on("tasks/get", reply(task))
    server.on("tasks/cancel", reply({**task, "status": "cancelled"}))
    started = anyio.current_time()
    async with Client(server) as client:
        handle = await client.start_tool("job")
        for _ in range(MALFORMED_STATUSES):
            await server.connection.notify("notifications/tasks/status", {"taskId": handle.task_id})
        await client.ping()  # the reader has handled every notification sent before its answer
        assert handle.status == "working"
    records = [r for r in ours.records if r.name == "mcp_notebook.tasks"]
    assert len(records) <= at_most(BURST, started), [r.getMessage()[:100] for r in records]
    told = [r.getMessage() for r in records if "suppressed" in r.getMessage()]
    assert held_back(told, "malformed task status") == MALFORMED_STATUSES - BURST


async def test_a_progress_callback_that_raises_is_logged_once_per_call_and_the_call_succeeds(
    ours: Records,
) -> None:
    """A callback with a bug meets a chatty server: one traceback for the call, not one per update."""
    calls: list[float] = []

    def broken(progress: float, total: float | None, message: str | None) -> None:
        calls.append(progress)
        raise ZeroDivisionError("a bug in the user's callback")

    async with Client(python_server("deadline_server.py"), timeout=30) as client:
        with anyio.fail_after(30):
            result = await client.call_tool(
                "tick", {"every": 0.01, "for": 0.6, "token": "given"}, progress=broken
            )
    assert result.text == "ticked"
    assert len(calls) >= 10  # every update still reached the callback
    raised = [r for r in ours.records if "progress callback raised" in r.getMessage()]
    assert len(raised) == 1, [r.getMessage() for r in raised]
    assert raised[0].exc_info is not None
    assert raised[0].exc_info[0] is ZeroDivisionError
