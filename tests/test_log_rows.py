"""The log view sends what changed (issue #28): a new message re-sends a chunk, not the table.

Real widgets on a real :class:`SessionModel` (its log published by the notebook's coalescer); the
bytes counted are the values the view's widgets sync. Counts only, no timing.
"""

from __future__ import annotations

import gc
import time
from typing import Any

import ipywidgets as W

from mcp_notebook.notebook import SessionModel
from mcp_notebook.widgets._log import LogWidget

from .widget_helpers import widget_models


def _wait_for(predicate: Any, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


class _Session:
    name = "rows"

    def __init__(self) -> None:
        self.model = SessionModel()


def _log(model: SessionModel, index: int) -> None:
    model.append("log", {"time": 1000.0 + index, "level": "info", "logger": "t", "data": f"line {index}"})


def test_a_new_message_sends_a_chunk_not_the_table_and_makes_no_widget() -> None:
    session = _Session()
    view = LogWidget(session)
    try:
        for index in range(300):  # more than the view holds
            _log(session.model, index)
        _wait_for(lambda: "line 299<" in view.table.value)
        table = view.table.value
        assert table.count('class="mcpnb-log-entry"') <= view.max_entries
        sent: list[int] = []
        parts = [view.table] if isinstance(view.table, W.HTML) else view.table.widgets()  # one table before
        for widget in parts:
            widget.observe(lambda change: sent.append(len(change["new"])), names="value")
        gc.collect()  # an earlier test's unheld controls close now, not in the middle of the count
        live = widget_models()

        for index in range(300, 310):
            _log(session.model, index)
            _wait_for(lambda index=index: f"line {index}<" in view.table.value)

        # Ten redraws at most, each re-sending at most one chunk (plus a trimmed old one):
        # the whole table each time would be ten tables.
        assert sum(sent) <= 2 * len(table), (sum(sent), len(table))
        assert widget_models() <= live, "a message made a widget model"
        rows = view.table.value.count('class="mcpnb-log-entry"')
        assert view.max_entries - 2 * view.table.size <= rows <= view.max_entries
    finally:
        view.close()


def test_the_panels_make_no_widget_model_from_the_first_call_and_message_on(no_leaked_processes: Any) -> None:
    """Every row a panel shows exists once the panel is built: the explorer's history rows too (they
    used to be made as the first calls came, eight new models during the benchmark's flood)."""
    import mcp_notebook

    from .conftest import demo_server
    from .widget_helpers import history_rows

    with mcp_notebook.connect(demo_server(), show_progress=False, log_level="debug") as session:
        panels = [session.log_widget(), session.status_widget(), session.dashboard(), session.explorer()]
        gc.collect()  # an earlier test's unheld controls close now, not in the middle of the count
        live = widget_models()
        for index in range(3):
            session.call_tool("write_log", {"message": f"note {index}", "level": "info"})
        log, explorer = panels[0], panels[3]
        _wait_for(lambda: "note 2" in log.table.value)
        _wait_for(lambda: len(history_rows(explorer)) == 3)
        assert widget_models() <= live, "a call or a message made a widget model"
        for panel in panels:
            panel.close()


def test_the_page_never_holds_more_rows_than_the_limit_between_two_messages() -> None:
    # The front end applies the view's messages one by one: after each (a chunk's value, the box's
    # children), what the page shows must stay within the limit, as the browser test samples it.
    session = _Session()
    view = LogWidget(session)
    rows = view.table
    ring = rows.widgets()
    page: dict[str, Any] = {"children": tuple(rows.children)}
    page.update({w.model_id: w.value for w in ring})
    most = 0

    def on_page() -> int:
        return sum(page.get(w.model_id, "").count('class="mcpnb-log-entry"') for w in page["children"])

    def heard(change: Any) -> None:
        nonlocal most
        if change["name"] == "children":
            page["children"] = tuple(change["new"])
        else:
            page[change["owner"].model_id] = change["new"]
        most = max(most, on_page())

    rows.observe(heard, names="children")
    for widget in ring:
        widget.observe(heard, names="value")
    try:
        index = 0
        for burst in (150, 30, 7, 60, 1, 90, 13, 250, 5, 40):  # fills, trims, a flood, trims again
            for _ in range(burst):
                _log(session.model, index)
                index += 1
            _wait_for(lambda index=index: f"line {index - 1}<" in view.table.value)
            assert most <= view.max_entries, (burst, most)
        assert on_page() >= view.max_entries // 2
    finally:
        view.close()
