"""The notebook's one rate limiter (issue #28): its contract, counted, never timed.

Every throttled thing (the model's log publishing, ``in_flight``, progress bars, the log, status
and explorer views) goes through :class:`Coalescer`; these tests pin what they all rely on: the
first poke runs at once, any number of pokes within one interval run at most twice, the last
state is always drawn, a failing run is logged once and never reaches whoever poked, and close
stops it (``flush`` draws what was pending). Counts are read after ``settle()``: once the UI
thread has run everything due, never after a guessed pause.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import pytest

from mcp_notebook.notebook._coalesce import Coalescer

#: An interval no test can outlive: within it, counts are exact.
FOREVER = 3600.0


def _wait_for(predicate: Any, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.01)


class _Drawing:
    """A state and what a coalescer drew of it."""

    def __init__(self) -> None:
        self.value = 0
        self.seen: list[int] = []
        self.drawn = threading.Event()

    def draw(self) -> None:
        self.seen.append(self.value)
        self.drawn.set()


def test_the_first_poke_runs_at_once_and_a_thousand_more_within_the_interval_run_once_more() -> None:
    drawing = _Drawing()
    limiter = Coalescer(drawing.draw, FOREVER)
    limiter.poke()
    assert drawing.drawn.wait(15)  # at once, not after an hour
    for value in range(1, 1001):
        drawing.value = value
        limiter.poke()
    # Every run due by now has happened (the UI thread caught up; not a guess of how long it
    # takes), and none of the 1,000 pokes ran: the trailing run is due an hour later.
    assert limiter.settle(15)
    assert (limiter.runs, drawing.seen) == (1, [0])
    limiter.close(flush=True)  # ... and closing draws it now, with the final state
    assert (limiter.runs, drawing.seen) == (2, [0, 1000])
    limiter.poke()
    assert limiter.runs == 2  # closed: pokes are ignored


def test_the_final_state_is_always_drawn() -> None:
    drawing = _Drawing()
    limiter = Coalescer(drawing.draw, 0.02)
    try:
        for value in range(1, 5001):
            drawing.value = value
            limiter.poke()
        _wait_for(lambda: drawing.seen[-1:] == [5000])
        assert limiter.runs < 5000
    finally:
        limiter.close()


def test_a_trailing_limiter_waits_one_interval_before_its_first_run() -> None:
    drawing = _Drawing()
    limiter = Coalescer(drawing.draw, FOREVER, leading=False)
    for value in range(100):
        drawing.value = value
        limiter.poke()
    assert limiter.settle(15)  # whatever was due by now has run
    assert limiter.runs == 0  # a count that settles within the interval is never shown
    limiter.close(flush=True)
    assert drawing.seen == [99]


def test_a_failing_run_is_logged_once_and_never_reaches_the_caller(caplog: pytest.LogCaptureFixture) -> None:
    def broken() -> None:
        raise RuntimeError("the redraw broke")

    limiter = Coalescer(broken, 0.01, what="a broken view")
    try:
        with caplog.at_level(logging.DEBUG, logger="mcp_notebook.notebook"):
            for _ in range(5):
                limiter.poke()  # never raises
                runs = limiter.runs
                _wait_for(lambda runs=runs: limiter.runs > runs)
        failures = [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert len(failures) == 1, failures
        assert "a broken view" in failures[0].getMessage()
        assert failures[0].exc_info is not None
    finally:
        limiter.close()


def test_close_drops_a_pending_run_and_waits_for_one_in_progress() -> None:
    entered, release = threading.Event(), threading.Event()
    drawing = _Drawing()

    def slow() -> None:
        entered.set()
        release.wait(15)
        drawing.draw()

    limiter = Coalescer(slow, FOREVER)
    limiter.poke()
    assert entered.wait(15)
    limiter.poke()  # pending: due in an hour
    closer = threading.Thread(target=limiter.close)
    closer.start()
    closer.join(0.2)
    assert closer.is_alive()  # close waits for the run in progress (this bounds nothing)
    release.set()
    closer.join(15)
    assert not closer.is_alive()
    assert (limiter.runs, drawing.seen) == (1, [0])  # the pending run was dropped


def test_settle_waits_for_a_run_in_progress_and_for_runs_already_due() -> None:
    entered, release = threading.Event(), threading.Event()
    drawing = _Drawing()

    def slow() -> None:
        entered.set()
        release.wait(15)
        drawing.draw()

    limiter = Coalescer(slow, FOREVER)
    try:
        limiter.poke()
        assert entered.wait(15)
        assert not limiter.settle(0.05)  # the run in progress has not ended (this bounds nothing)
        release.set()
        assert limiter.settle(15)
        assert (limiter.runs, drawing.seen) == (1, [0])
    finally:
        limiter.close()
