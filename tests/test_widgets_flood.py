"""Panels under a chatty server (issue #28): a flood of log messages redraws them a few times a
second, not once per message, and creates no widgets.

A real in-process server (the official SDK's, legacy era, so log messages reach the session's log)
sends N log messages in one call while the log panel, the status panel and a dashboard are shown.
Every widget message the panels would send to the front end is counted by a comm that records
them (``comm.create_comm`` is meant to be replaced so); nothing here asserts a time: the bound on
messages is derived from N and from the redraw rates over the flood's own duration.
"""

from __future__ import annotations

import collections
import json
import time
import warnings
from typing import Any

import pytest

pytest.importorskip("ipywidgets")

import comm
from comm.base_comm import BaseComm
from mcp.server.mcpserver import Context, MCPServer

import mcp_notebook
from mcp_notebook.widgets._log import REDRAWS_PER_SECOND

from .widget_helpers import wait_for as _wait_for
from .widget_helpers import walk, widget_models

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

N = 3000
#: The issue's cap on redraws a second for each view (the log views redraw less often still).
RATE = 10.0


class _Sent:
    def __init__(self) -> None:
        self.messages: list[tuple[str, str, int]] = []  # (control id, msg_type, bytes)

    def of(self, widgets: set[str]) -> list[tuple[str, str, int]]:
        return [m for m in list(self.messages) if m[0] in widgets]


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> _Sent:
    """What goes to the front end, by control: each panel is one anywidget whose patches name the
    controls they change (mcp_notebook/widgets/_ui); a patch's bytes are counted once."""
    record = _Sent()

    class Counting(BaseComm):
        def publish_msg(
            self, msg_type: str, data: Any = None, metadata: Any = None, buffers: Any = None, **keys: Any
        ) -> None:
            size = len(json.dumps(data, default=str))
            content = data.get("content") if isinstance(data, dict) else None
            if not (isinstance(content, dict) and content.get("t") == "patch"):
                record.messages.append((self.comm_id, msg_type, size))
                return
            named = [*content.get("set", {}), *content.get("add", {}), *content.get("drop", [])]
            for index, control in enumerate(named):
                record.messages.append((control, "comm_msg", size if index == 0 else 0))

    monkeypatch.setattr(comm, "create_comm", lambda *a, **k: Counting(*a, **k))
    return record


def _flood_server() -> Any:
    server = MCPServer("flood")

    @server.tool()
    async def flood(ctx: Context, count: int) -> str:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # logging is deprecated in the modern era, not legacy
            for index in range(count):
                await ctx.info(f"line {index}", logger_name="flood")
        return "done"

    return server


def _live() -> int:
    """Live widget models (ipywidgets' registry and the panels' open virtual controls)."""
    return widget_models()


def _ids(*widgets: Any) -> set[str]:
    """The controls of ``widgets`` (by the ids their panels' patches name them)."""
    return {w.comm.comm_id for top in widgets for w in walk(top) if getattr(w, "comm", None) is not None}


def test_a_flood_redraws_the_panels_a_few_times_a_second_with_no_new_widgets(sent: _Sent) -> None:
    with mcp_notebook.connect(_flood_server(), protocol="legacy", show_progress=False, dialogs=False) as s:
        log, status, board = s.log_widget(), s.status_widget(), s.dashboard()
        for shown in (log, status, board):
            shown.as_panel()  # as displayed: each panel's anywidget sends its controls' changes
        views = (log, board.log_view)
        s.call_tool("flood", {"count": 1})  # the explorer shows its first call; then nothing new
        board.tab.selected_index = 3  # the log tab: its view follows too
        _wait_for(lambda: all("line 0" in v.table.value for v in views), 10, "the first line")
        # The log views' rows live in a fixed ring of chunk widgets, shown as they fill.
        ring = {w.comm.comm_id for v in views for w in v.table.widgets()}
        watched = _ids(log, status, board.status, board.log_view) | ring
        live = _live()
        before = len(sent.of(watched))

        started = time.monotonic()
        s.call_tool("flood", {"count": N})
        last = f"line {N - 1}<"
        _wait_for(lambda: all(last in v.table.value for v in views), 30, "the last line in both log views")
        took = time.monotonic() - started

        during = sent.of(watched)[before:]
        assert during, "the panels sent nothing: the count would prove nothing"
        assert {m[1] for m in during} <= {"comm_msg"}  # values changed; no widget opened
        # Each panel redraws at most RATE times a second (+1 for the last state), and a redraw
        # changes each of its widgets at most once: no widget hears more than that, however many
        # messages come. (A redraw may change several widgets, a status panel's counters or a log
        # view's filling chunks, so the total is bounded by the flood's size: far fewer than one per
        # message. A bound of one message per redraw failed on a loaded machine, where a 3 s flood
        # redrew each panel about 30 times, changing two or three widgets each time.)
        per_widget = collections.Counter(m[0] for m in during)
        most = max(per_widget.values(), default=0)
        assert most <= took * RATE + 2, (most, took, sorted(per_widget.values()))
        assert len(during) < N / 10
        # Not the whole table per message (that would be about N * N / 2 rows of ~100 bytes: 450 MB);
        # a few hundred bytes a line, however often a loaded machine redraws (603 KB was seen once).
        assert sum(m[2] for m in during) < N * 400
        # The panels make no new widget models however many messages come.
        assert _ids(log, status, board.status, board.log_view) <= watched
        assert _live() - live <= 0 or _explorer_only(board, live)
        assert log.entries()[-1]["data"] == f"line {N - 1}"

        # A log view in a tab nobody sees sends nothing; chosen again, it shows the last line.
        board.tab.selected_index = 0
        hidden = _ids(board.log_view)
        before = len(sent.of(hidden))
        s.call_tool("flood", {"count": 100})
        _wait_for(lambda: "line 99<" in log.table.value, 30, "the last line in the log panel")
        assert len(sent.of(hidden)) == before
        board.tab.selected_index = 3
        _wait_for(lambda: "line 99<" in board.log_view.table.value, 10, "the last line in the tab")
        for widget in (log, status, board):
            widget.close()


def test_a_redraw_that_comes_due_after_the_view_is_hidden_draws_nothing(sent: _Sent) -> None:
    # A flood leaves a redraw pending; choosing another tab before it comes due must not draw into
    # the hidden log view (a run seen once in CI: one message to a view nobody could see).
    with mcp_notebook.connect(_flood_server(), protocol="legacy", show_progress=False, dialogs=False) as s:
        board = s.dashboard()
        board.as_panel()  # as displayed
        board.tab.selected_index = 3
        view = board.log_view
        s.call_tool("flood", {"count": 1})
        _wait_for(lambda: "line 0<" in view.table.value, 10, "the first line")
        # No run left pending from the first line; then the next one comes due 5 s after the last.
        time.sleep(2 / REDRAWS_PER_SECOND)
        assert view._redraw.settle(10)
        view._redraw.interval = 5.0
        s.call_tool("flood", {"count": 1})
        told = lambda: [e["data"] for e in view.entries(filtered=False)].count("line 0") == 2  # noqa: E731
        _wait_for(told, 10, "the model told of the second line")  # (the view's redraw now pending)
        runs = view._redraw.runs
        board.tab.selected_index = 0
        hidden = _ids(view)
        before = len(sent.of(hidden))
        _wait_for(lambda: view._redraw.runs > runs, 10, "the pending redraw")
        assert len(sent.of(hidden)) == before
        assert view.table.value.count("line 0<") == 1  # the second line is not drawn yet
        board.tab.selected_index = 3  # shown again: everything the model kept
        _wait_for(lambda: view.table.value.count("line 0<") == 2, 10, "both lines")
        board.close()


def _explorer_only(board: Any, live: int) -> bool:
    """New widgets beyond ``live`` are the explorer's (its history of calls; not these panels)."""
    return _live() - live <= len(_ids(board.explorer))


def test_a_slow_observer_of_the_log_is_logged_once_and_does_not_hold_the_connection(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with mcp_notebook.connect(_flood_server(), protocol="legacy", show_progress=False, dialogs=False) as s:
        seen: list[int] = []

        def slow(change: Any) -> None:
            seen.append(len(change["new"]))
            time.sleep(0.3)

        s.model.observe(slow, names="log")
        with caplog.at_level("WARNING", logger="mcp_notebook.notebook"):
            # The call returns once the server sent every message: it never waits for the observer.
            s.call_tool("flood", {"count": 100})
            _wait_for(lambda: seen and seen[-1] == 100, 30, "the observer told of the last line")
            time.sleep(0.5)  # the observer's last call returns (and is timed)
        assert len(seen) < 100  # batches, not one call per message
        slow_records = [
            r for r in caplog.records if "took" in r.getMessage() and "observer" in r.getMessage()
        ]
        assert len(slow_records) == 1  # once, however many slow calls


def test_a_published_change_lists_every_new_entry_in_added() -> None:
    # Several appends between two publishes arrive as one change: `added` names each new entry
    # once, in order, even when the bounded log has dropped older ones meanwhile.
    from mcp_notebook.notebook import SessionModel

    model = SessionModel(max_log=4)
    seen: list[Any] = []
    model.observe(lambda change: seen.extend(change["added"]), names=["notifications"])
    for i in range(6):
        model.append("notifications", {"method": "m", "params": {"i": i}})
    _wait_for(lambda: len(model.notifications) == 4, 10, "the first publish")
    model.append("notifications", {"method": "m", "params": {"i": 6}})
    _wait_for(lambda: model.notifications[-1]["params"]["i"] == 6, 10, "the second publish")
    numbers = [entry["params"]["i"] for entry in seen]
    # Each entry once and in order; the ones still in the log were all announced (0 and 1 may
    # have been dropped by the bound before a publish saw them).
    assert numbers == sorted(set(numbers))
    assert numbers[-5:] == [2, 3, 4, 5, 6]
