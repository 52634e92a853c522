"""The notebook Group over real servers: sessions by name, the live board, one tool table, calls."""

from __future__ import annotations

import sys

import pandas as pd
import pytest

from mcp_notebook.notebook import Group, connect_all
from tests.conftest import demo_server, everything_server
from tests.fakes import wait_until
from tests.raises import raises_mcp
from tests.test_frames_uniform import assert_uniform

RUN_DEMO = "runpy.run_module('mcp_notebook.demo', run_name='__main__')"
LATE_DEMO = "import runpy, sys\nsys.argv = ['x']\n" + RUN_DEMO + "\n"
MISSING = "/nonexistent/mcp-server-that-is-not-there"


@pytest.fixture
def group(no_leaked_processes):
    servers = {"demo": demo_server(), "everything": everything_server(), "broken": [MISSING]}
    group = Group(
        servers, show_progress=False, backoff_initial=0.05, backoff_max=0.1, max_reconnect_attempts=1
    )
    yield group
    group.close()


def test_board_sessions_and_tool_table(group):
    assert group.statuses["demo"] == "ready"
    assert group.statuses["everything"] == "ready"
    assert set(group.sessions) == {"demo", "everything"}
    assert group["demo"].model.era == "modern"
    assert group["everything"].model.era == "legacy"
    with raises_mcp("transport", match="not connected"):
        group["broken"]
    assert list(group) == ["demo", "everything", "broken"]

    wait_until(lambda: group.model.total_tools >= 12 + 5)
    board = {row["server"]: row for row in group.model.servers}
    assert board["demo"]["status"] == "ready"
    assert board["demo"]["tools"] == len(group["demo"].model.tools)
    assert board["broken"]["status"] in ("failed", "connecting", "gave up")
    assert MISSING in board["broken"]["last_error"]
    wait_until(lambda: group.model.statuses["broken"] == "gave up", timeout=10)

    frame = group.tools_frame()
    assert list(frame.columns[:2]) == ["server", "name"]
    assert set(frame["server"]) == {"demo", "everything"}
    assert ("demo", "add") in set(zip(frame["server"], frame["name"], strict=True))
    names = {t.name for t in group.model.tools}
    assert {"demo.add", "everything.get-sum"} <= names

    assert float(group.call_tool("demo.add", {"a": 2, "b": 5}).text) == 7
    assert "hey" in group.call_tool("everything.echo", {"message": "hey"}).text
    assert float(group.call_tool("demo_add", {"a": 1, "b": 1}).text) == 2  # fastmcp's spelling
    assert group["demo"].model.history[-1]["name"] == "add"

    result = group.map_tool("demo.add", pd.DataFrame({"a": [1, 2], "b": [10, 20]}), progress=False)
    assert [float(v) for v in result["result"]] == [11, 22]

    html = group._repr_html_()
    assert "broken" in html
    assert "ready" in html
    assert repr(group).startswith("<Group 3 servers")


def test_merged_log_has_a_server_column(group):
    group.call_tool("everything.toggle-simulated-logging", {})
    wait_until(lambda: any(e["server"] == "everything" for e in group.model.log), timeout=10)
    frame = group.log_frame()
    assert "everything" in set(frame["server"])
    assert_uniform(frame, "group.log_frame()")  # local aware times, pd.NA (issue #29)


def test_a_late_server_gets_its_session_when_it_comes_up(tmp_path, no_leaked_processes):
    script = tmp_path / "late.py"
    group = Group(
        {"late": [sys.executable, str(script)]},
        show_progress=False,
        backoff_initial=0.05,
        backoff_max=0.1,
        max_reconnect_attempts=100,
    )
    try:
        assert group.statuses["late"] in ("failed", "connecting")
        script.write_text(LATE_DEMO)
        group.reconnect("late")
        wait_until(lambda: "late" in group.sessions, timeout=20)
        wait_until(lambda: group.model.total_tools > 0, timeout=10)
        assert float(group.call_tool("late.add", {"a": 1, "b": 2}).text) == 3
    finally:
        group.close()
    assert group.statuses["late"] == "closed"


def test_no_secret_reaches_a_repr_the_board_or_a_log(tmp_path, caplog, no_leaked_processes):
    import json
    import logging

    from tests.http_peers import sdk_http

    caplog.set_level(logging.DEBUG)
    env_secret, header_secret, input_secret = "env-s3cr3t-1", "hdr-s3cr3t-2", "inp-s3cr3t-3"
    (tmp_path / ".env").write_text("FROM_FILE=file-s3cr3t-4\n")
    with sdk_http("modern") as web:
        config = {
            "inputs": [{"type": "promptString", "id": "tok", "password": True}],
            "servers": {
                "demo": {
                    "command": sys.executable,
                    "args": ["-m", "mcp_notebook.demo"],
                    "env": {"API_KEY": env_secret},
                    "envFile": "${workspaceFolder}/.env",
                },
                "web": {
                    "type": "http",
                    "url": web.url,
                    "headers": {"X-Api-Key": header_secret, "Authorization": "Bearer ${input:tok}"},
                },
                "broken": {"command": MISSING, "env": {"API_KEY": env_secret}},
            },
        }
        path = tmp_path / "mcp.json"
        path.write_text(json.dumps(config))
        group = connect_all(path, inputs={"tok": input_secret}, show_progress=False, max_reconnect_attempts=0)
        try:
            assert group.statuses == {"demo": "ready", "web": "ready", "broken": "gave up"}
            # The secrets do reach the servers' options (so the checks below look at real values).
            _, demo_options = group.core.members["demo"]._spec.client_args()
            assert demo_options["env"]["API_KEY"] == env_secret
            assert demo_options["env"]["FROM_FILE"] == "file-s3cr3t-4"
            _, web_options = group.core.members["web"]._spec.client_args()
            assert web_options["headers"]["Authorization"] == f"Bearer {input_secret}"
            shown = [
                repr(group),
                group._repr_html_(),
                repr(group.core),
                repr(group.model.servers),
                repr(group.core.members),
                repr(group.sessions),
                group.tools_frame().to_string(),
                *(repr(s.client) for s in group.sessions.values()),
                caplog.text,
            ]
            for secret in (env_secret, header_secret, input_secret, "file-s3cr3t-4"):
                assert not any(secret in text for text in shown), secret
        finally:
            group.close()


def test_wait_returns_before_a_slow_server_which_joins_when_up(no_leaked_processes):
    slow = [sys.executable, "-c", "import time, runpy, sys; time.sleep(3); sys.argv = ['x']; " + RUN_DEMO]
    group = Group({"demo": demo_server(), "slow": slow}, show_progress=False, wait=0.5)
    try:
        assert group.statuses["slow"] in ("connecting", "negotiating")
        assert "slow" not in group.sessions
        wait_until(lambda: "slow" in group.sessions, timeout=30)
        assert float(group.call_tool("slow.add", {"a": 1, "b": 1}).text) == 2
        wait_until(lambda: group.model.statuses == {"demo": "ready", "slow": "ready"})
    finally:
        group.close()


# --- issue #29 item 8: servers by name, counts only once the lists are in, failed and gave up ---------


def test_connect_all_takes_servers_by_name_as_a_group_does(no_leaked_processes):
    demo = demo_server()
    servers = {
        "sales": {"command": demo[0], "args": demo[1:]},  # an entry as a config file spells it
        "calc": demo,  # an argv list, as Group and ClientGroup take
        "bad": {"url": "ftp://example.invalid/mcp"},  # an entry that cannot be read shows why
    }
    group = connect_all(servers, show_progress=False, register=False)
    try:
        assert list(group) == ["sales", "calc", "bad"]
        assert group.statuses["sales"] == group.statuses["calc"] == "ready"
        assert "url" in (group.core.members["bad"].error_message or "")
        assert float(group.call_tool("sales.add", {"a": 1, "b": 2}).text) == 3
        assert float(group.call_tool("calc.add", {"a": 2, "b": 2}).text) == 4
    finally:
        group.close()
    only = connect_all(servers, only=["sales"], show_progress=False, register=False)
    try:
        assert list(only) == ["sales"]
    finally:
        only.close()
    # A config file's whole content as a dict is still read as the file.
    document = connect_all({"mcpServers": {"sales": servers["sales"]}}, show_progress=False, register=False)
    try:
        assert list(document) == ["sales"]
    finally:
        document.close()


@pytest.fixture
def boards(monkeypatch):
    """Every board a group publishes, from its first (a model that records its own ``servers``)."""
    from mcp_notebook.notebook import _group as group_module
    from mcp_notebook.notebook._model import GroupModel

    seen: list[list[dict]] = []

    class Recording(GroupModel):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.observe(lambda change: seen.append([dict(row) for row in change.new]), names="servers")

    monkeypatch.setattr(group_module, "GroupModel", Recording)
    return seen


def test_the_board_never_counts_tools_before_the_list_is_in(boards, no_leaked_processes):
    from mcp_notebook.notebook._group import board_html

    group = Group({"sales": demo_server(), "calc": demo_server()}, show_progress=False, register=False)
    try:
        wait_until(lambda: all(row["tools"] for row in group.model.servers))
        final = {row["server"]: row["tools"] for row in group.model.servers}
        assert final == {name: len(group[name].model.tools) for name in ("sales", "calc")}
        assert final["sales"] > 0
        shown = [(row["server"], row["status"], row["tools"]) for board in boards for row in board]
        # Every count ever drawn is the real one; before the list is in there is none.
        assert all(tools in (None, final[server]) for server, _, tools in shown), shown
        # ... and the board says "…" for it, not 0 (nor an empty cell, which reads as none).
        assert "…" in board_html([{"server": "x", "status": "ready", "tools": None}])
    finally:
        group.close()


def test_a_missing_command_shows_failed_with_its_reason_and_attempts_then_gave_up(
    boards, no_leaked_processes
):
    from mcp_notebook.notebook._group import board_html

    group = Group(
        {"broken": [MISSING]},
        show_progress=False,
        register=False,
        backoff_initial=0.05,
        backoff_max=0.1,
        max_reconnect_attempts=2,
    )
    try:
        wait_until(lambda: group.statuses["broken"] == "gave up")
        rows = [board[0] for board in boards]
        failed = [row for row in rows if row["status"] == "failed"]
        assert [row["failures"] for row in failed] == [1, 2]
        assert all("was not found" in row["last_error"] and MISSING in row["last_error"] for row in failed)
        assert "reconnecting" not in {row["status"] for row in rows}
        last = group.model.servers[0]
        assert (last["status"], last["failures"]) == ("gave up", 3)
        assert "was not found" in last["last_error"]
        html = group._repr_html_()
        assert "gave up" in html
        assert "3 attempts" in html
        assert "3 attempts" in board_html([last])
    finally:
        group.close()
    assert group.statuses["broken"] == "closed"
