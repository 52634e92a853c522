"""Every frame a session builds looks the same way (issue #29), checked on the real demo server.

Column names are snake_case; a missing value is ``pd.NA`` (``NaT`` in a datetime column), never
``None`` or ``NaN``; columns that can miss values are nullable (``string``, ``Int64``, ``Float64``,
``boolean``) or hold objects; times are aware, in local time, to the millisecond; durations are
float seconds, never ``Timedelta``. A progress bar shows whole numbers as integers.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

import mcp_notebook
from mcp_notebook.notebook import Session

from .conftest import demo_server

pd = pytest.importorskip("pandas")
pytestmark = pytest.mark.usefixtures("no_leaked_processes")

SNAKE = re.compile(r"[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*")
NULLABLE = ("string", "Int64", "Float64", "boolean")


@pytest.fixture(scope="module")
def demo() -> Iterator[Session]:
    with mcp_notebook.connect(demo_server(), show_progress=False) as session:
        session.call_tool("add", {"a": 1, "b": 2})
        with pytest.raises(mcp_notebook.McpError):
            session.call_tool("add", {"a": "one", "b": 2})  # refused locally: no result size
        session.read_resource("demo://readme")
        yield session


def _local_offset(stamp: Any) -> Any:
    return stamp.to_pydatetime().astimezone().utcoffset()


def assert_uniform(frame: Any, what: str) -> None:
    """The rules of the module's docstring, column by column."""
    for name, column in frame.items():
        where = f"{what}[{name!r}] ({column.dtype})"
        assert SNAKE.fullmatch(str(name)), f"{where}: not snake_case"
        assert column.dtype.kind != "m", f"{where}: a Timedelta column"
        if isinstance(column.dtype, pd.DatetimeTZDtype):
            for stamp in column.dropna():
                assert stamp.utcoffset() == _local_offset(stamp), f"{where}: not local time"
                assert stamp.nanosecond == 0, f"{where}: {stamp} past the millisecond"
                assert stamp.microsecond % 1000 == 0, f"{where}: {stamp} past the millisecond"
            continue
        assert column.dtype.kind != "M", f"{where}: a naive datetime"
        if column.dtype == object:
            for value in column:
                assert value is not None, f"{where}: None"
                assert not (isinstance(value, float) and math.isnan(value)), f"{where}: NaN"
        elif column.isna().any():
            assert str(column.dtype) in NULLABLE, f"{where}: missing values in a non-nullable column"


def test_tools_resources_prompts_frames(demo: Session) -> None:
    for what in ("tools_frame", "resources_frame", "prompts_frame"):
        frame = getattr(demo, what)()
        assert len(frame) > 0, what
        assert_uniform(frame, what)
    resources = demo.resources_frame()
    assert "mime_type" in resources.columns
    assert resources["size"].isna().any()  # the demo does not give sizes
    assert all(value is pd.NA for value in resources["size"])


def test_history_frame(demo: Session) -> None:
    frame = demo.history_frame()
    assert_uniform(frame, "history_frame")
    assert str(frame["duration"].dtype) == "Float64"
    assert (frame["duration"] >= 0).all()
    assert isinstance(frame["time"].dtype, pd.DatetimeTZDtype)
    refused = frame[frame["outcome"] != "ok"]
    assert len(refused) >= 1
    assert all(size is pd.NA for size in refused["result_size"])


def test_tasks_frame(demo: Session) -> None:
    done = demo.start_tool("build_report", {"topic": "frames", "sections": 1, "delay": 0.01})
    done.result(timeout=30)
    running = demo.start_tool("build_report", {"topic": "slow", "sections": 20, "delay": 1.0})
    try:
        frame = demo.tasks_frame().set_index("task_id")
        assert_uniform(frame.reset_index(), "tasks_frame")
        for name in ("started", "ended"):
            assert isinstance(frame[name].dtype, pd.DatetimeTZDtype), name
        assert str(frame["elapsed"].dtype) == "Float64"
        assert pd.isna(frame.loc[running.task_id, "ended"])
        assert not pd.isna(frame.loc[done.task_id, "ended"])
        history = demo.history_frame()
        assert frame["started"].dtype == history["time"].dtype  # one zone for every frame
    finally:
        running.cancel()


def test_map_tool_frame(demo: Session) -> None:
    rows = pd.DataFrame({"a": [1, 2], "b": [2, None]}, index=["x", "y"])
    frame = demo.map_tool("add", rows, progress=False)
    assert_uniform(frame, "map_tool")
    assert str(frame["is_error"].dtype) == "boolean"
    assert str(frame["error"].dtype) == "string"
    assert frame.loc["x", "error"] is pd.NA
    assert frame.loc["y", "result"] is pd.NA
    assert bool(frame.loc["y", "is_error"])


def test_the_servers_frame(demo: Session) -> None:
    from mcp_notebook.notebook._registry import REGISTRY

    frame = REGISTRY.frame()
    assert demo.name in set(frame["name"])
    assert_uniform(frame, "servers")
    assert frame.set_index("name").loc[demo.name, "last_error"] is pd.NA


def test_result_and_resource_frames(demo: Session) -> None:
    blocks = demo.call_tool("echo", {"text": "hello"}).to_dataframe()
    assert blocks.attrs["rule"] == 6
    assert list(blocks.columns) == ["type", "text", "mime_type", "uri", "name", "data_size"]
    assert_uniform(blocks, "echo result")
    assert blocks.loc[0, "data_size"] is pd.NA
    contents = demo.read_resource("demo://readme").to_dataframe()
    assert list(contents.columns) == ["uri", "mime_type", "text", "data_size"]
    assert_uniform(contents, "readme contents")


def test_progress_bar_shows_whole_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("tqdm")
    with mcp_notebook.connect(demo_server(), show_progress=True) as shown:
        shown.call_tool("slow_count", {"steps": 3, "delay": 0.3})
    err = capsys.readouterr().err
    assert "3/3" in err, err
    assert ".0/" not in err, err


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (0.007393598, "7 ms"),
        (0.0004, "0.4 ms"),
        (0.25, "250 ms"),
        (0.9996, "1.0 s"),
        (1.234, "1.2 s"),
        (59.99, "1 min 00 s"),
        (125, "2 min 05 s"),
        (3725, "1 h 02 min"),
        (None, ""),
        (float("nan"), ""),
    ],
)
def test_short_duration(seconds: Any, shown: str) -> None:
    from mcp_notebook.display._durations import short_duration

    assert short_duration(seconds) == shown
    assert short_duration(pd.NA) == ""


def test_a_live_history_table_shows_durations_short(demo: Session) -> None:
    from mcp_notebook.display._durations import short_duration

    live = demo.live_frame("history")
    try:
        deadline = time.monotonic() + 30  # a hang guard only
        while live.frame is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert live.frame is not None
        seconds = live.frame["duration"].dropna()
        assert len(seconds) >= 1
        html = live._body_html()
        for value in seconds:
            assert f"<td>{short_duration(value)}</td>" in html, html
        assert "0 days" not in html
    finally:
        live.stop()


def test_server_data_with_gaps_reads_pd_na() -> None:
    from mcp_notebook.notebook._frames import resource_to_dataframe, result_to_dataframe

    records = [{"id": 1, "name": "a", "score": 1.5, "tags": ["x"]}, {"id": 2}]
    frame = result_to_dataframe({"content": [], "structuredContent": {"rows": records}})
    assert_uniform(frame, "records with gaps")
    assert str(frame["id"].dtype) == "int64"  # a complete column keeps its dtype
    assert str(frame["score"].dtype) == "Float64"
    assert str(frame["name"].dtype) == "string"
    assert frame.loc[1, "tags"] is pd.NA
    contents = {"contents": [{"uri": "t.csv", "mimeType": "text/csv", "text": "a,b\n1,\n,x\n"}]}
    table = resource_to_dataframe(contents)
    assert table.attrs["rule"] == "csv"
    assert_uniform(table, "csv with gaps")
