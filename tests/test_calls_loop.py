"""A loop of calls with panels on screen (issue #28): the history grows in place, ``in_flight`` is
written at a bounded rate, and the explorer reuses its rows, so live widget models stay flat.

Real demo server, real widgets (ipywidgets' registry counts every live model); no timing asserts.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

import mcp_notebook
from mcp_notebook.notebook import SessionModel
from mcp_notebook.notebook._coalesce import Coalescer

from .conftest import demo_server
from .fakes import wait_until
from .widget_helpers import history_rows, widget_models


@pytest.fixture
def session(no_leaked_processes: Any) -> Any:
    s = mcp_notebook.connect(demo_server(), show_progress=False)
    try:
        yield s
    finally:
        s.close()


def _live_widgets() -> int:
    """Live widget models (ipywidgets' and our panels' virtual controls: one is alive until closed)."""
    return widget_models()


def _newest_row_tooltip(explorer: Any) -> str:
    rows = history_rows(explorer)
    return rows[0].tooltip if rows else ""


def test_a_loop_of_calls_with_the_dashboard_and_explorer_keeps_live_widgets_flat(session: Any) -> None:
    board = session.dashboard()
    explorer = session.explorer()
    try:
        for index in range(25):  # warm-up: more calls than the list has rows
            session.call_tool("echo", {"text": f"warm{index}"})
        for shown in (board.explorer, explorer):
            wait_until(lambda shown=shown: "warm24" in _newest_row_tooltip(shown))
        live = _live_widgets()

        for index in range(60):
            session.call_tool("echo", {"text": f"loop{index}"})

        for shown in (board.explorer, explorer):  # the list ends on the last call
            wait_until(lambda shown=shown: "loop59" in _newest_row_tooltip(shown))
            rows = history_rows(shown)
            assert len(rows) == 20
            assert '"loop40"' in rows[-1].tooltip
        assert _live_widgets() <= live, "a call left new live widget models behind"
    finally:
        explorer.close()
        board.close()


def test_the_history_grows_in_place_and_observers_hear_each_entry(session: Any) -> None:
    history = session.model.history
    added: list[Any] = []
    session.model.observe(lambda change: added.extend(change.added), names="history")
    for index in range(3):
        session.call_tool("echo", {"text": f"n{index}"})

    assert session.model.history is history  # appended to, never copied and replaced
    wait_until(lambda: len(added) == 3)  # observed on the observer thread, just after each call
    assert [e["arguments"]["text"] for e in added] == ["n0", "n1", "n2"]
    assert added[-1] is history[-1]
    assert [e["arguments"] for e in history[-2:]] == [{"text": "n1"}, {"text": "n2"}]
    assert list(session.history_frame()["name"]) == ["echo"] * 3


def test_the_history_is_bounded_and_reads_like_a_list() -> None:
    model = SessionModel(max_history=3)
    history = model.history
    assert history == []
    for index in range(5):
        model.append("history", {"i": index})
    assert model.history is history
    assert history == [{"i": 2}, {"i": 3}, {"i": 4}]
    assert (len(history), history[0], history[-1], history[1:]) == (
        3,
        {"i": 2},
        {"i": 4},
        [{"i": 3}, {"i": 4}],
    )
    assert history.appended == 5
    assert history.tail(2) == [{"i": 4}, {"i": 3}]
    model.history = [{"i": n} for n in range(10)]  # assigning a list still works, bounded
    assert model.history == [{"i": 7}, {"i": 8}, {"i": 9}]


def test_in_flight_that_settles_before_it_is_shown_writes_nothing(session: Any) -> None:
    model = session.model
    heard: list[Any] = []
    model.observe(lambda change: heard.append(change.new), names="in_flight")

    async def flicker() -> None:  # on the engine, as the connection reports requests
        for _ in range(50):
            model.update(in_flight=1)
            model.update(in_flight=0)

    session._engine.call(flicker)

    async def settle() -> None:
        model.update(in_flight=3)

    session._engine.call(settle)
    wait_until(lambda: heard and heard[-1] == 3)  # the observers run on their own thread
    # The fifty round trips are coalesced: the final count is shown, and (a loaded machine can
    # let the observer thread in between two updates now and then) far fewer than 100 changes.
    assert heard[-1] == 3
    assert heard.count(3) == 1
    assert len(heard) <= 5, heard


def test_coalesced_runs_once_more_for_any_number_of_pokes_and_sees_the_last_state() -> None:
    entered, release = threading.Event(), threading.Event()
    state = {"value": 0, "active": 0, "most": 0}
    seen: list[int] = []

    def draw() -> None:
        state["active"] += 1
        state["most"] = max(state["most"], state["active"])
        seen.append(state["value"])
        entered.set()
        release.wait(10)
        state["active"] -= 1

    redraws = Coalescer(draw, 0.05)
    redraws.poke()
    assert entered.wait(10)
    for value in range(1, 101):  # while the first run draws
        state["value"] = value
        redraws.poke()
    time.sleep(0.3)  # room for a wrong second run to start beside the first (this bounds nothing)
    release.set()
    wait_until(lambda: len(seen) == 2)
    time.sleep(0.3)  # room for a wrong third run to show (this bounds nothing)
    assert seen == [0, 100]
    assert redraws.runs == 2
    assert state["most"] == 1  # never two runs at once
