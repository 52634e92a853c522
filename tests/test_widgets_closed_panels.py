"""The tasks panel and the log panel keep their last picture, marked "closed", when their session
closes (issue #29 item 2: after a notebook's cleanup cell, a panel must not go blank or look live).

Real servers over stdio: the tasks test server runs a task to its end, the demo server logs a
line; then the session closes and each panel still shows its rows, with a ``closed`` badge. The
model's observers run on the observer thread (issue #28), so the tests wait for the badge.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("ipywidgets")

import mcp_notebook
from mcp_notebook.widgets._log import LogWidget
from mcp_notebook.widgets._tasks_panel import TasksWidget

from .conftest import demo_server
from .fakes import wait_until
from .widget_helpers import find

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

TASKS_SERVER = [sys.executable, str(Path(__file__).parent / "servers" / "tasks_server.py")]
WAIT = 30.0  # seconds: how long a wait may last before the test fails, never a measurement


def test_a_closed_session_leaves_the_tasks_panel_drawn_with_a_closed_badge() -> None:
    session = mcp_notebook.connect(TASKS_SERVER, show_progress=False, dialogs=False)
    panel = TasksWidget(session)
    try:
        session.start_tool("optional_sum", {"a": 1, "b": 2}).result(timeout=WAIT)
        wait_until(lambda: len(panel.rows) == 1, WAIT)
        assert "closed" not in panel.header.value
        session.close()
        wait_until(lambda: "mcpnb-badge" in panel.header.value, WAIT)
        assert ">closed<" in panel.header.value
        assert len(panel.rows) == 1  # the row stays as it was last
        assert "closed" in panel.summary()
        assert ">closed<" in panel.snapshot_html()
    finally:
        session.close()
        panel.close()


def test_a_closed_session_leaves_the_log_panel_drawn_with_a_closed_badge() -> None:
    session = mcp_notebook.connect(demo_server(), show_progress=False, dialogs=False, log_level="debug")
    panel = LogWidget(session)
    try:
        session.call_tool("write_log", {"message": "one line before the end", "level": "warning"})
        wait_until(lambda: "one line before the end" in panel.table.value, WAIT)
        badge = find(panel, "mcpnb-log-closed")[0]
        assert badge.value == ""
        session.close()
        wait_until(lambda: ">closed<" in badge.value, WAIT)
        assert "one line before the end" in panel.table.value  # the entries stay
        assert "closed" in panel.summary()
        assert ">closed<" in panel.snapshot_html()
    finally:
        session.close()
        panel.close()
