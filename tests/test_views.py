"""Reactive views (``session.live_frame``, ``watch_resource``, ``watch_tool``) against the real demo
server: they follow the server's changes by themselves, coalesce bursts, never overlap calls, stop
cleanly (giving back what they subscribed), stop with their session, and read well without a kernel."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("pandas")
pytest.importorskip("ipywidgets")

import itertools

import mcp_notebook
from mcp_notebook import ResourceContents
from mcp_notebook.notebook import Session
from mcp_notebook.notebook._frames import resource_to_dataframe
from mcp_notebook.notebook._views import LiveFrame, ResourceWatch, ToolWatch

from .conftest import demo_server
from .fakes import wait_until

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

NOTE = "demo://note"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


@pytest.fixture
def session() -> Iterator[Session]:
    opened = mcp_notebook.connect(demo_server(), show_progress=False, dialogs=False)
    try:
        yield opened
    finally:
        opened.close()


def _calls(session: Session, tool: str) -> list[dict[str, Any]]:
    return [e for e in session.model.history if e["method"] == "tools/call" and e["name"] == tool]


# --- live frames ----------------------------------------------------------------------------------


def test_a_live_tools_frame_redraws_after_the_server_adds_a_tool(session: Session) -> None:
    tools = session.live_frame("tools")
    assert isinstance(tools, LiveFrame)
    assert "add_tool" in set(tools.frame["name"])  # there at once, for code
    renders = tools.renders
    widget = tools.widget

    session.call_tool("add_tool", {"name": "shout"})

    wait_until(lambda: "shout" in set(tools.frame["name"]))
    assert tools.renders > renders
    wait_until(lambda: "shout" in widget.body.value)  # the display follows (drawn just after .frame)
    tools.stop()


def test_a_live_history_frame_grows_after_a_call(session: Session) -> None:
    history = session.live_frame("history")
    assert len(history.frame) == 0

    session.call_tool("add", {"a": 1, "b": 2})

    wait_until(lambda: len(history.frame) == 1)
    assert history.frame["name"].tolist() == ["add"]
    assert history.frame["outcome"].tolist() == ["ok"]


def test_a_burst_of_changes_is_drawn_once_with_the_final_state(session: Session) -> None:
    history = session.live_frame("history")
    renders = history.renders

    async def burst() -> None:  # fifty changes on the engine, with no chance to draw in between
        for index in range(50):
            session.model.append("history", {"time": time.time(), "method": "x", "name": str(index)})

    session._engine.call(burst)

    wait_until(lambda: len(history.frame) == 50)
    assert history.renders == renders + 1
    assert history.frame["name"].iloc[-1] == "49"


def test_a_stream_of_changes_is_drawn_at_most_rate_times_a_second(session: Session) -> None:
    history = session.live_frame("history", rate=2)
    renders = history.renders
    started = time.monotonic()
    for index in range(40):
        session.model.append("history", {"time": time.time(), "method": "x", "name": str(index)})
        time.sleep(0.02)
    elapsed = time.monotonic() - started

    wait_until(lambda: len(history.frame) == 40)  # the final state is always shown
    drawn = history.renders - renders
    assert 1 <= drawn <= elapsed * 2 + 2, (drawn, elapsed)


def test_live_frames_of_every_list(session: Session) -> None:
    for what in ("tools", "resources", "resource_templates", "prompts", "history", "tasks"):
        view = session.live_frame(what)
        assert view.frame is not None
        view.stop()
    assert {"demo://note"} <= set(session.live_frame("resources").frame["uri"])
    with pytest.raises(ValueError, match="one of"):
        session.live_frame("servers")


# --- watching a resource --------------------------------------------------------------------------


def test_watch_resource_follows_set_note_and_unsubscribes_on_stop(session: Session) -> None:
    note = session.watch_resource(NOTE)
    assert isinstance(note, ResourceWatch)
    note.wait_ready()
    assert NOTE in session.client.subscriptions
    assert note.value == "empty"
    assert note.frame["text"].tolist() == ["empty"]

    session.call_tool("set_note", {"text": "first"})
    wait_until(lambda: note.value == "first")
    session.call_tool("set_note", {"text": "second"})
    wait_until(lambda: note.value == "second")
    assert note.updates == 2
    assert note.frame["text"].tolist() == ["second"]
    assert note.error is None

    note.stop()
    assert note.stopped
    assert NOTE not in session.client.subscriptions
    reads = note.reads
    session.call_tool("set_note", {"text": "unheard"})
    time.sleep(0.3)
    assert note.reads == reads
    assert note.value == "second"


def test_watch_resource_keeps_a_subscription_the_user_took(session: Session) -> None:
    session.subscribe(NOTE)
    note = session.watch_resource(NOTE, as_frame=False).wait_ready()
    assert note.frame is None
    assert note.value == "empty"
    session.call_tool("set_note", {"text": "hello"})
    wait_until(lambda: note.value == "hello")
    note.stop()
    assert NOTE in session.client.subscriptions


def test_a_second_watch_inherits_the_subscription(session: Session) -> None:
    first = session.watch_resource(NOTE).wait_ready()
    second = session.watch_resource(NOTE).wait_ready()
    first.stop()
    assert NOTE in session.client.subscriptions
    session.call_tool("set_note", {"text": "still heard"})
    wait_until(lambda: second.value == "still heard")
    second.stop()
    assert NOTE not in session.client.subscriptions


def test_watch_resource_shows_a_csv_as_its_table(session: Session) -> None:
    sales = session.watch_resource("demo://data/sales.csv").wait_ready()
    assert list(sales.frame.columns) == ["date", "region", "product", "units", "price"]
    assert len(sales.frame) > 100
    assert sales.frame.attrs["rule"] == "csv"


def test_watch_resource_shows_an_error_instead_of_raising(session: Session) -> None:
    missing = session.watch_resource("demo://region/atlantis").wait_ready()
    assert missing.error
    assert "atlantis" in missing.error
    assert missing.frame is None
    assert "atlantis" in repr(missing)
    assert "mcpnb-live-error" in missing._repr_html_()


# --- watching a tool ------------------------------------------------------------------------------


def test_watch_tool_every_calls_again_and_never_overlaps(session: Session) -> None:
    watch = session.watch_tool("slow_count", {"steps": 1, "delay": 0.5}, every=0.2)
    assert isinstance(watch, ToolWatch)

    wait_until(lambda: watch.calls >= 3, timeout=10)
    watch.stop()
    wait_until(lambda: session.model.in_flight == 0)

    assert watch.skipped > 0  # ticks came during the slow calls and were dropped
    assert watch.errors == 0
    assert "Counted to 1" in watch.result.text
    assert watch.frame["text"].str.contains("Counted").all()
    calls = sorted(_calls(session, "slow_count"), key=lambda e: e["time"])
    assert len(calls) >= 3
    for earlier, later in itertools.pairwise(calls):
        assert earlier["time"] + earlier["duration"] <= later["time"] + 0.05, (earlier, later)


def test_watch_tool_on_a_resource_calls_again_on_each_update(session: Session) -> None:
    watch = session.watch_tool("echo", {"text": "hi"}, on=NOTE)
    wait_until(lambda: watch.calls == 1)
    assert NOTE in session.client.subscriptions

    session.call_tool("set_note", {"text": "changed"})
    wait_until(lambda: watch.calls == 2)
    assert watch.updates == 1
    assert watch.result.text == "hi"

    watch.stop()
    assert NOTE not in session.client.subscriptions


def test_stop_ends_every_call(session: Session) -> None:
    watch = session.watch_tool("add", {"a": 1, "b": 2}, every=0.1)
    wait_until(lambda: watch.calls >= 2)
    watch.stop()
    wait_until(lambda: session.model.in_flight == 0)
    calls, recorded = watch.calls, len(_calls(session, "add"))
    time.sleep(0.5)
    assert watch.calls == calls
    assert len(_calls(session, "add")) == recorded
    assert session.views == []
    assert "stopped" in repr(watch)


def test_watch_tool_refuses_a_too_short_interval_or_no_trigger(session: Session) -> None:
    with pytest.raises(ValueError, match="at least"):
        session.watch_tool("add", {"a": 1, "b": 2}, every=0.01)
    with pytest.raises(ValueError, match="every=SECONDS"):
        session.watch_tool("add", {"a": 1, "b": 2})


def test_a_tool_error_is_counted_and_shown(session: Session) -> None:
    watch = session.watch_tool("fail", {"message": "boom"}, every=5)
    wait_until(lambda: watch.calls == 1)
    assert watch.errors == 1
    assert "boom" in (watch.error or "")
    watch.stop()


def test_closing_the_session_stops_its_views() -> None:
    session = mcp_notebook.connect(demo_server(), show_progress=False, dialogs=False)
    tools = session.live_frame("tools")
    note = session.watch_resource(NOTE).wait_ready()
    watch = session.watch_tool("add", {"a": 1, "b": 2}, every=0.1)
    wait_until(lambda: watch.calls >= 1)

    session.close()

    assert tools.stopped
    assert note.stopped
    assert watch.stopped
    calls = watch.calls
    time.sleep(0.3)
    assert watch.calls == calls
    with pytest.raises(mcp_notebook.McpError):
        session.live_frame("tools")


# --- without a kernel ------------------------------------------------------------------------------


def test_views_read_well_without_a_kernel(session: Session) -> None:
    tools = session.live_frame("tools")
    bundle = tools._repr_mimebundle_()
    assert bundle["text/plain"].startswith("<LiveFrame live: tools of mcp-notebook-demo")
    assert "rows" in bundle["text/plain"]
    assert "sales_records" in bundle["text/plain"]
    assert "<table" in bundle["text/html"]
    assert "sales_records" in bundle["text/html"]
    assert WIDGET_VIEW in bundle  # and the live widget where a front end can draw it

    session.call_tool("set_note", {"text": "<script>alert(1)</script>"})
    note = session.watch_resource(NOTE).wait_ready()
    html = note._repr_mimebundle_()["text/html"]
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    tools.stop()
    assert "stopped" in tools._repr_html_()


# --- resource contents as frames (pure) ------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "rule", "columns", "rows"),
    [
        ({"uri": "x", "mimeType": "application/json", "text": '[{"a": 1}, {"a": 2}]'}, "json", ["a"], 2),
        ({"uri": "x", "text": '{"items": [{"a": 1}], "total": 1}'}, "json", ["a"], 1),
        ({"uri": "x.csv", "text": "a,b\n1,2\n"}, "csv", ["a", "b"], 1),
        ({"uri": "x", "mimeType": "text/tab-separated-values", "text": "a\tb\n1\t2\n"}, "csv", ["a", "b"], 1),
        # text/plain holding data is data (fastmcp and the SDK label a str resource so; issue #29)
        ({"uri": "x", "mimeType": "text/plain", "text": "[1, 2]"}, "json", ["value"], 2),
        ({"uri": "x", "mimeType": "text/plain", "text": "1, 2"}, "contents", None, 1),
        ({"uri": "x", "mimeType": "image/png", "blob": "AAAA"}, "contents", None, 1),
    ],
)
def test_resource_contents_as_a_frame(content: dict[str, Any], rule: str, columns: Any, rows: int) -> None:
    df = resource_to_dataframe(ResourceContents.from_dict({"contents": [content]}))
    assert df.attrs["rule"] == rule
    assert len(df) == rows
    if columns is not None:
        assert list(df.columns) == columns
    else:
        assert list(df.columns) == ["uri", "mime_type", "text", "data_size"]


def test_a_blob_is_sized_never_copied() -> None:
    df = ResourceContents.from_dict({"contents": [{"uri": "x", "blob": "AAAA"}]}).to_dataframe()
    assert df["data_size"].tolist() == [3]
    assert "AAAA" not in df.to_string()


# --- a group's live frame ----------------------------------------------------------------------------


def test_a_change_while_the_first_frame_is_built_is_not_missed(
    session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first frame is built in the caller's thread (pandas can take a while on a loaded machine,
    # the first time more so); a tools change landing meanwhile must still reach the frame. (A
    # group's frame once never showed the member's tools: they arrived during that first build.)
    from mcp_notebook.notebook import _frames

    built = _frames.tools_frame
    first = True

    def slow_first_build(items: Any) -> Any:
        nonlocal first
        if first:
            first = False
            session.call_tool("add_tool", {"name": "shout"})
            wait_until(lambda: "shout" in {t.name for t in session.model.tools})
        return built(items)

    monkeypatch.setattr(_frames, "tools_frame", slow_first_build)
    tools = session.live_frame("tools")
    wait_until(lambda: "shout" in set(tools.frame["name"]))
    tools.stop()


def test_a_groups_live_tools_frame_follows_its_members() -> None:
    from mcp_notebook import Group

    group = Group({"one": demo_server()}, show_progress=False, dialogs=False)
    try:
        tools = group.live_frame("tools")
        board = group.live_frame("servers")
        wait_until(lambda: "one.add" in set(tools.frame["name"]))
        assert set(board.frame["server"]) == {"one"}

        group["one"].call_tool("add_tool", {"name": "shout"})

        wait_until(lambda: "one.shout" in set(tools.frame["name"]))
        assert "tools of group 'group'" in repr(tools)
        with pytest.raises(ValueError, match="one of"):
            group.live_frame("history")
    finally:
        group.close()
    assert tools.stopped
    assert board.stopped
