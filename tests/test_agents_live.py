"""An agent's MCP calls, live in the notebook's panels, marked with the framework (issue #39 item 3).

Every framework adapter calls through ``mcp_notebook.agents``' ToolSource, so these tests call it
directly, as an adapter does: from another thread with an event loop of its own (what a
framework's ``run_sync`` does) and blocking from a worker thread, against the real demo server:
one process over HTTP for the module with a fresh session per test (a process per test would cost
a second each, a session milliseconds), over stdio where a secret goes into the server's
environment. What a user sees is read from the panels' real models (the tree a browser's view is
sent): the explorer's history rows (the dashboard's Tools tab, a group's explorer) end with a "via
pydantic-ai" badge, the log panel (the dashboard's Log tab, a group's log) has a line per agent
call, the history frame has ``via``; the notebook's own calls carry no mark. The log lines are
rate-limited (notebook/_agent_log.py), checked here without a clock: the writer is driven by hand.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from typing import Any

import anyio
import pandas as pd
import pytest

import mcp_notebook
from mcp_notebook.agents._source import ToolSource
from mcp_notebook.display._calls import by_agents, call_line, via_of
from mcp_notebook.notebook import _agent_log
from mcp_notebook.notebook._agent_log import LINES_PER_WRITE, AgentCallLog, agent_lines

from .conftest import demo_server
from .http_peers import sdk_http
from .widget_helpers import HOSTILE, assert_escaped, drawn, markup, wait_for

pytest.importorskip("ipywidgets")

WAIT = 30.0  # seconds a wait may last before the test fails; never a measurement

pytestmark = pytest.mark.usefixtures("no_leaked_processes")


@pytest.fixture(scope="module")
def http_demo() -> Iterator[str]:
    """One demo server over HTTP for the module. A module fixture is set up before
    ``no_leaked_processes`` looks, so it is no leak."""
    with sdk_http("modern") as peer:
        yield peer.url


@pytest.fixture
def session(http_demo: str) -> Iterator[Any]:
    """A session of the test's own (its history and panels start empty) over the module's demo."""
    opened = mcp_notebook.connect(http_demo, show_progress=False, dialogs=False)
    try:
        yield opened
    finally:
        opened.close()


def _tree_text(widget: Any) -> str:
    """Everything the browser's view of ``widget``'s panel is sent, as one string."""
    return json.dumps(drawn(widget))


def _rows(widget: Any) -> list[str]:
    """The explorer's history rows as the panel's model holds them (newest first), as HTML."""
    table = next(
        state["value"]
        for state in drawn(widget)["models"].values()
        if "mcpnb-history-rows" in state.get("_dom_classes", ())
    )
    return re.findall(r'<tr class="mcpnb-history-entry".*?</tr>', table, re.S)


# --- the panels follow an agent's calls as they happen ----------------------------------------------


def test_an_agents_calls_from_its_own_loop_show_in_the_dashboard_as_they_happen(session: Any) -> None:
    dashboard = session.dashboard()
    try:
        session.call_tool("add", {"a": 1, "b": 1})  # the notebook's own call: no mark
        source = ToolSource(session, framework="pydantic-ai")
        first_seen = threading.Event()
        errors: list[BaseException] = []
        results: list[str] = []

        async def agent_run() -> None:  # what a framework's run_sync runs, on a loop of its own
            await source.alist()
            results.append((await source.acall("add", {"a": 2, "b": 3})).text)
            await anyio.to_thread.run_sync(first_seen.wait, WAIT)  # the run goes on after the user saw it
            results.append((await source.acall("fail", {"message": "boom"})).text)

        def run_sync() -> None:
            try:
                anyio.run(agent_run)
            except BaseException as exc:  # handed to the test's thread
                errors.append(exc)

        agent = threading.Thread(target=run_sync, daemon=True)
        agent.start()
        try:
            # The first call is in the Tools tab's history while the agent's run is still going.
            wait_for(
                lambda: any("add(a=2, b=3)" in row and "via pydantic-ai" in row for row in _rows(dashboard)),
                WAIT,
                "the agent's first call, marked, in the dashboard",
            )
            assert agent.is_alive()
            assert len(results) == 1
        finally:
            first_seen.set()
            agent.join(WAIT)
        assert not errors, errors
        wait_for(lambda: len(_rows(dashboard)) == 3, WAIT, "the agent's second call in the dashboard")
        newest, middle, oldest = _rows(dashboard)
        assert "fail(message=&#34;boom&#34;)  tool_error" in newest
        assert '<span class="mcpnb-via"' in newest
        assert "via pydantic-ai" in newest
        assert "add(a=2, b=3)  ok" in middle
        assert "via pydantic-ai" in middle
        assert "add(a=1, b=1)  ok" in oldest
        assert "via" not in oldest
        # The picker says it in words too, and the text forms count the agent's calls.
        assert any("via pydantic-ai" in label for label in dashboard.explorer._history.pick.options[0])
        assert "3 calls (2 via pydantic-ai)" in dashboard.summary()
        assert "3 (2 via pydantic-ai)" in session._repr_html_()

        # The Log tab, once chosen (a hidden tab does not redraw), has a line per agent call.
        dashboard.tab.selected_index = 3
        wait_for(
            lambda: "pydantic-ai called fail" in _tree_text(dashboard), WAIT, "the agent's lines in the log"
        )
        text = _tree_text(dashboard)
        assert "pydantic-ai called add(a=2, b=3)  ok" in text
        assert "mcp_notebook.<wbr>agents" in text  # the source column
        assert "add(a=1, b=1)" not in markup(dashboard.log_view)  # the notebook's own call: no line
    finally:
        dashboard.close()


def test_blocking_calls_from_a_worker_thread_show_in_the_log_panel_and_the_history_frame(
    session: Any,
) -> None:
    log = session.log_widget()
    history = session.live_frame("history")
    try:
        source = ToolSource(session, framework="langchain")
        outcome: list[Any] = []
        worker = threading.Thread(target=lambda: outcome.append(source.call("echo", {"text": "hi"})))
        worker.start()
        worker.join(WAIT)
        assert "hi" in outcome[0].text
        wait_for(
            lambda: "langchain called echo" in _tree_text(log), WAIT, "the agent's line in the log panel"
        )
        line = next(e for e in log.entries() if "langchain called" in str(e["data"]))
        assert (line["kind"], line["source"]) == ("info", "mcp_notebook.agents")
        assert 'langchain called echo(text="hi")  ok' in line["data"]
        frame = session.history_frame()
        assert list(frame["via"]) == ["langchain"]
        history.wait_ready(WAIT)
        wait_for(lambda: len(history.frame) == 1, WAIT, "the live history frame")
        assert history.frame["via"].iloc[0] == "langchain"
    finally:
        history.stop()
        log.close()


def test_a_groups_explorer_and_log_mark_an_agents_calls_with_the_framework(http_demo: str) -> None:
    group = mcp_notebook.Group({"sales": http_demo}, show_progress=False, dialogs=False)
    try:
        explorer = group.explorer()
        log = group.log_widget()
        try:
            source = ToolSource(group, framework="openai-agents")
            assert "sales_add" in [tool.name for tool in source.list()]
            assert source.call("sales_add", {"a": 4, "b": 5}).text.startswith("9")
            wait_for(
                lambda: any("sales.add(a=4, b=5)" in r and "via openai-agents" in r for r in _rows(explorer)),
                WAIT,
                "the agent's call in the group's explorer",
            )
            wait_for(
                lambda: "openai-agents called add(a=4, b=5)" in _tree_text(log), WAIT, "the group's log line"
            )
            assert any(e.get("server") == "sales" for e in log.entries() if "openai-agents" in str(e["data"]))
            frame = explorer.explorer.history_frame()  # "All servers": every member's history
            assert frame[["server", "name", "via"]].values.tolist() == [["sales", "add", "openai-agents"]]
        finally:
            log.close()
            explorer.close()
    finally:
        group.close()


def test_a_hostile_framework_name_is_escaped_and_made_printable_in_every_panel(session: Any) -> None:
    explorer = session.explorer()
    log = session.log_widget()
    try:
        who = "\u202e" + HOSTILE  # (a name is cut at 40 characters: the bidi first)
        ToolSource(session, framework=who).call("add", {"a": 1, "b": 2})
        wait_for(lambda: len(_rows(explorer)) == 1, WAIT, "the call in the explorer")
        wait_for(lambda: log.entries(), WAIT, "the call's line in the log")
        for shown in (markup(explorer), markup(log), session._repr_html_(), explorer.snapshot_html()):
            assert_escaped(shown)
            assert "\u202e" not in shown
        assert "\\u202e" in _rows(explorer)[0]  # shown as its escape, not applied
    finally:
        log.close()
        explorer.close()


# --- the rules, one case at a time --------------------------------------------------------------------

_CALL = {"time": 0, "name": "add", "arguments": {"a": 2}, "duration": 0.007, "outcome": "ok"}


@pytest.mark.parametrize(
    ("via", "shown"),
    [
        (None, None),
        ("", None),
        ("  ", None),
        (pd.NA, None),
        (3, None),
        ("pydantic-ai", "pydantic-ai"),
        ("a\u202eb\x1b", "a\\u202eb\\x1b"),
        ("x" * 100, "x" * 39 + "…"),
    ],
)
def test_who_made_a_call_is_shown_printable_and_short_and_nothing_for_the_notebooks_own(
    via: Any, shown: str | None
) -> None:
    assert via_of({**_CALL, "via": via}) == shown


def test_a_call_line_ends_with_the_framework_and_a_cut_never_drops_it() -> None:
    assert call_line(_CALL, clock=False) == "add(a=2)  ok  7 ms"
    agent = {**_CALL, "via": "smolagents"}
    assert call_line(agent, clock=False) == "add(a=2)  ok  7 ms  via smolagents"
    assert call_line(agent, clock=False, via=False) == "add(a=2)  ok  7 ms"
    long = {**agent, "arguments": {"text": "y" * 300}}
    line = call_line(long, 60)
    assert len(line) == 60
    assert line.endswith("…  via smolagents")
    assert (
        by_agents([agent, agent, _CALL, {**_CALL, "via": "langchain"}])
        == " (2 via smolagents, 1 via langchain)"
    )
    assert by_agents([_CALL]) == ""


def _entry(name: str, outcome: str = "ok", via: str | None = "pydantic-ai") -> dict[str, Any]:
    return {**_CALL, "name": name, "outcome": outcome, "via": via}


def _driven(**options: Any) -> tuple[AgentCallLog, list[dict[str, Any]]]:
    """A writer whose rate limiter is stopped: the test writes with ``flush()``, no clock involved."""
    rows: list[dict[str, Any]] = []
    writer = AgentCallLog(lambda name, row: rows.append({"to": name, **row}), **options)
    writer.writes.close()
    return writer, rows


def test_each_agent_call_gets_a_line_at_its_level_and_the_notebooks_own_calls_none() -> None:
    writer, rows = _driven()
    writer.note(_entry("add", via=None))
    writer.note(_entry("add"))
    writer.note(_entry("fail", "tool_error"))
    writer.note(_entry("slow_count", "cancelled"))
    writer.note(_entry("add", "timeout"))
    writer.flush()
    assert [(r["to"], r["level"], r["logger"]) for r in rows] == [
        ("log", "info", "mcp_notebook.agents"),
        ("log", "info", "mcp_notebook.agents"),
        ("log", "info", "mcp_notebook.agents"),
        ("log", "warning", "mcp_notebook.agents"),
    ]
    assert [r["data"] for r in rows] == [
        "pydantic-ai called add(a=2)  ok  7 ms",
        "pydantic-ai called fail(a=2)  tool_error  7 ms",
        "pydantic-ai called slow_count(a=2)  cancelled  7 ms",
        "pydantic-ai called add(a=2)  timeout  7 ms",
    ]
    writer.flush()
    assert len(rows) == 4  # nothing new, nothing written


def test_a_flood_of_agent_calls_is_one_counting_line_per_framework_per_write() -> None:
    writer, rows = _driven()
    for n in range(LINES_PER_WRITE + 20):
        writer.note(_entry("add" if n % 3 else "fail", "ok" if n % 3 else "tool_error"))
    writer.note(_entry("echo", via="langchain"))
    writer.flush()
    assert [r["data"] for r in rows] == [
        "pydantic-ai made 25 calls since the last line: add 16, fail 9; ok 16, tool_error 9 "
        "(each is in session.history_frame())",
        "langchain made 1 calls since the last line: echo 1; ok 1 (each is in session.history_frame())",
    ]
    assert [r["level"] for r in rows] == ["info", "info"]


def test_the_queue_between_two_writes_is_bounded_and_what_it_dropped_is_still_counted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_agent_log, "MAX_QUEUED", 10)
    writer, rows = _driven()
    for _ in range(4):
        writer.note(_entry("echo", via="langchain"))  # the oldest: dropped, counted
    for _ in range(10):
        writer.note(_entry("add"))
    assert len(writer._queued) == 10
    writer.flush()
    assert [r["data"] for r in rows] == [
        "pydantic-ai made 10 calls since the last line: add 10; ok 10 (each is in session.history_frame())",
        "langchain made 4 calls since the last line (each is in session.history_frame())",
    ]


def test_a_line_is_masked_as_the_servers_log_rows_are() -> None:
    writer, rows = _driven(mask=lambda text: text.replace("s3cr3t", "****"))
    writer.note({**_entry("echo"), "arguments": {"text": "s3cr3t"}})
    writer.flush()
    assert rows[0]["data"] == 'pydantic-ai called echo(text="****")  ok  7 ms'


def test_the_lines_are_written_without_the_caller_waiting_and_the_last_ones_when_the_writer_closes() -> None:
    rows: list[dict[str, Any]] = []
    writer = AgentCallLog(lambda _name, row: rows.append(row), interval=3600.0)
    writer.note(_entry("add"))  # the first after a quiet spell: written at once, on the UI thread
    assert writer.writes.settle(WAIT)
    writer.note(_entry("echo"))  # due an hour later
    assert len(rows) == 1
    writer.close()
    assert [r["data"].split("(")[0] for r in rows] == ["pydantic-ai called add", "pydantic-ai called echo"]


def test_agent_lines_of_no_calls_are_none() -> None:
    assert agent_lines([]) == []


def test_the_session_writes_an_agents_last_lines_when_it_closes(http_demo: str) -> None:
    opened = mcp_notebook.connect(http_demo, show_progress=False, dialogs=False)
    try:
        source = ToolSource(opened, framework="llama-index")
        for n in range(3):
            source.call("add", {"a": n, "b": 0})
    finally:
        opened.close()
    lines = [e["data"] for e in opened.model._streams["log"] if e.get("logger") == "mcp_notebook.agents"]
    told = sum(int(line.split(" made ")[1].split()[0]) if " made " in line else 1 for line in lines)
    assert told == 3, lines


def test_a_secret_the_agent_passes_in_its_arguments_is_masked_in_the_log_line() -> None:
    secret = "tok-agent-9f8e7d6c5b4a"
    opened = mcp_notebook.connect(demo_server(), show_progress=False, dialogs=False, env={"DEMO_KEY": secret})
    log = opened.log_widget()
    try:
        ToolSource(opened, framework="pydantic-ai").call("echo", {"text": f"key={secret}"})
        wait_for(lambda: log.entries(), WAIT, "the agent's line in the log")
        assert "pydantic-ai called echo" in log.entries()[0]["data"]
        assert secret not in _tree_text(log)
        assert secret not in json.dumps(list(opened.model.log))
    finally:
        log.close()
        opened.close()


def test_an_agents_call_has_its_progress_bar_say_whose_it_is(
    monkeypatch: pytest.MonkeyPatch, http_demo: str
) -> None:
    from mcp_notebook.notebook import _session

    described: list[str] = []
    real = _session.ProgressBar

    def recorded(description: str, *args: Any, **kwargs: Any) -> Any:
        described.append(description)
        return real(description, *args, **kwargs)

    monkeypatch.setattr(_session, "ProgressBar", recorded)
    opened = mcp_notebook.connect(http_demo, dialogs=False)  # show_progress: the default
    try:
        opened.call_tool("add", {"a": 1, "b": 1})
        ToolSource(opened, framework="smolagents").call("add", {"a": 1, "b": 2})
    finally:
        opened.close()
    assert described == [f"{opened.name}: add", f"{opened.name}: add via smolagents"]
