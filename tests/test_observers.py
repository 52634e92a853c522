"""The connection never waits for the model's observers (issue #28, Deliver 2).

A user observer of ``session.model`` that blocks must not stop the engine from reading the
server: calls keep answering while it is blocked, it is logged once by name, and once released it
sees the final state. Real demo server; no timed assertions (the waits are only upper bounds).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest

import mcp_notebook
from mcp_notebook.notebook import SessionModel
from mcp_notebook.notebook._observers import Dispatcher, dispatcher

from .conftest import demo_server
from .fakes import wait_until


@pytest.fixture
def session(no_leaked_processes: Any) -> Any:
    s = mcp_notebook.connect(demo_server(), show_progress=False)
    try:
        yield s
    finally:
        s.close()


def test_a_blocked_history_observer_never_stops_the_calls(
    session: Any, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "slow" is any time at all here: the warning must not depend on how fast the machine is
    monkeypatch.setattr(dispatcher(), "slow", 0.0)
    release = threading.Event()
    entered = threading.Event()
    seen: list[tuple[int, list[Any]]] = []

    def stuck_on_history(change: Any) -> None:
        entered.set()
        release.wait(60)  # held by the test: a user's observer that blocks
        seen.append((len(change.new), list(change.added)))

    session.model.observe(stuck_on_history, names="history")
    results: list[Any] = []
    caller = threading.Thread(
        target=lambda: results.extend(session.call_tool("echo", {"text": f"n{i}"}) for i in range(50)),
        daemon=True,
    )
    try:
        with caplog.at_level(logging.WARNING, logger="mcp_notebook.notebook"):
            caller.start()
            assert entered.wait(15), "the observer never ran"
            # 50 calls complete while the observer is blocked (the test has not released it).
            caller.join(60)
            assert not caller.is_alive(), "calls waited for a blocked observer"
            assert len(results) == 50
            assert results[-1].text == "n49"
            # a call made now, still blocked, answers too
            assert session.call_tool("echo", {"text": "during"}).text == "during"
            assert not seen  # the observer is still inside its first change
        slow = [r for r in caplog.records if "stuck_on_history" in r.getMessage()]
        assert len(slow) == 1, [r.getMessage() for r in caplog.records]  # logged once, by name
    finally:
        release.set()
    # once released, it catches up (coalesced) and ends on the final state
    wait_until(lambda: seen and seen[-1][1] and seen[-1][1][-1]["arguments"] == {"text": "during"})
    assert seen[-1][0] == len(session.model.history) == 51
    heard = [entry["arguments"]["text"] for _, added in seen for entry in added]
    assert heard == [f"n{i}" for i in range(50)] + ["during"]  # every entry, in order, once
    assert len(seen) < 51  # the waiting changes were merged, not queued one by one
    session.model.unobserve(stuck_on_history, names="history")


def test_changes_made_off_the_engine_are_observed_where_they_are_made() -> None:
    model = SessionModel()
    threads: list[str] = []
    model.observe(lambda change: threads.append(threading.current_thread().name), names="status")
    model.status = "ready"
    assert threads == [threading.current_thread().name]


def test_the_dispatcher_merges_waiting_changes_per_observer_and_trait() -> None:
    hub = Dispatcher(slow=60)
    gate, entered = threading.Event(), threading.Event()
    got: list[Any] = []

    def observer(change: Any) -> None:
        entered.set()
        gate.wait(10)
        got.append(change)

    hub.submit(observer, {"name": "history", "old": 0, "new": 1, "added": ["a"]})
    assert entered.wait(10)
    for n in range(2, 6):
        hub.submit(observer, _bunch(name="history", old=n - 1, new=n, added=[f"e{n}"]))
    gate.set()
    assert hub.wait_idle(10)
    assert len(got) == 2
    assert (got[1]["old"], got[1]["new"], got[1]["added"]) == (1, 5, ["e2", "e3", "e4", "e5"])


def _bunch(**values: Any) -> Any:
    from traitlets import Bunch

    return Bunch(values)


def test_the_process_has_one_observer_dispatcher() -> None:
    assert dispatcher() is dispatcher()
