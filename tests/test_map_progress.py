"""Bounded bookkeeping for ``map_tool`` and progress bars (issue #28 item 4), against real servers.

``map_tool`` keeps ``concurrency`` workers pulling rows, so the tasks alive in the engine's loop
grow with concurrency, not with rows; a call's progress bar redraws far less often than a chatty
tool reports, and ends on the final value.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import mcp_notebook

from .conftest import demo_server

pytest.importorskip("traitlets")
pd = pytest.importorskip("pandas")

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

DEMO = demo_server()


def _task_counting_server() -> Any:
    """An in-process server (it runs in the engine's loop) whose tool records the loop's live tasks."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server = MCPServer("tasks-counter")
    seen = {"peak_tasks": 0, "in_flight": 0, "peak_in_flight": 0}

    @server.tool()
    async def square(x: int) -> int:
        seen["in_flight"] += 1
        seen["peak_in_flight"] = max(seen["peak_in_flight"], seen["in_flight"])
        seen["peak_tasks"] = max(seen["peak_tasks"], len(asyncio.all_tasks()))
        await asyncio.sleep(0)
        seen["in_flight"] -= 1
        if x % 7 == 3:
            raise ToolError(f"no square for {x}")
        return x * x

    server.seen = seen  # type: ignore[attr-defined]
    return server


def _baseline_tasks(session: Any) -> int:
    return int(session._engine.call(_count_tasks))


async def _count_tasks() -> int:
    return len(asyncio.all_tasks())


@pytest.mark.parametrize("concurrency", [1, 4])
def test_map_tool_keeps_only_concurrency_rows_alive(concurrency: int) -> None:
    server = _task_counting_server()
    with mcp_notebook.connect(server, show_progress=False) as session:
        idle = _baseline_tasks(session)
        rows = 300
        frame = pd.DataFrame({"x": range(rows)})
        result = session.map_tool("square", frame, concurrency=concurrency, progress=False)
    seen = server.seen
    assert seen["peak_in_flight"] <= concurrency
    # Each call in flight costs a few tasks (the worker, the server's handler); never one per row.
    assert seen["peak_tasks"] <= idle + 4 * concurrency + 4, (seen, idle)
    assert list(result.columns) == ["result", "is_error", "error"]
    assert len(result) == rows


@pytest.mark.parametrize(
    "index",
    [
        pd.Index([42, 7, 19, 3, 100, 8, 65, 1, 33, 12], name="unsorted"),
        pd.Index([f"row-{c}" for c in "jihgfedcba"], name="names"),
    ],
    ids=["unsorted", "strings"],
)
def test_map_tool_results_follow_the_input_index(index: Any) -> None:
    xs = [int(v) if isinstance(v, int) else ord(v[-1]) for v in index]
    frame = pd.DataFrame({"x": xs, "ignored": ["a"] * len(xs)}, index=index)
    with mcp_notebook.connect(_task_counting_server(), show_progress=False) as session:
        result = session.map_tool("square", frame, concurrency=3)
    assert list(result.index) == list(index)
    for label, x in zip(index, xs, strict=True):
        if x % 7 == 3:
            assert result.at[label, "is_error"]
            assert f"no square for {x}" in result.at[label, "error"]
        else:
            assert not result.at[label, "is_error"]
            assert result.at[label, "result"] == x * x
            assert pd.isna(result.at[label, "error"])


def test_map_tool_over_an_empty_frame() -> None:
    with mcp_notebook.connect(_task_counting_server(), show_progress=False) as session:
        result = session.map_tool("square", pd.DataFrame({"x": []}, dtype=int))
    assert len(result) == 0
    assert list(result.columns) == ["result", "is_error", "error"]


def test_a_chatty_call_redraws_its_bar_a_bounded_number_of_times(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """2,000 progress notifications: the bar is drawn far fewer times and ends on 2000/2000."""
    pytest.importorskip("tqdm")
    steps = 2000
    with mcp_notebook.connect(DEMO, show_progress=True) as session:
        capsys.readouterr()
        result = session.call_tool("slow_count", {"steps": steps, "delay": 0})
        assert f"Counted to {steps}" in result.text
    err = capsys.readouterr().err
    frames = [part for part in err.split("\r") if "slow_count" in part]
    assert frames, err[-500:]
    # tqdm draws a frame per refresh; unthrottled that was one per notification (2,000+).
    assert len(frames) < steps // 10, f"{len(frames)} redraws for {steps} notifications"
    assert f"{steps}/{steps}" in frames[-1], frames[-3:]
    assert f"step {steps}/{steps}" in frames[-1], frames[-3:]


@pytest.mark.usefixtures("default_sigint")
def test_ctrl_c_during_map_tool_stops_every_worker() -> None:
    """SIGINT to the blocked main thread cancels the rows in flight and starts no more."""
    import signal
    import threading
    import time

    if not hasattr(signal, "pthread_kill"):
        pytest.skip("needs signal.pthread_kill")
    main = threading.main_thread().ident
    assert main == threading.get_ident()
    frame = pd.DataFrame({"steps": [100] * 20, "delay": [0.1] * 20})
    with mcp_notebook.connect(DEMO, show_progress=False) as session:

        def interrupt() -> None:
            deadline = time.monotonic() + 10
            while session.model.in_flight < 3 and time.monotonic() < deadline:
                time.sleep(0.01)
            signal.pthread_kill(main, signal.SIGINT)  # type: ignore[arg-type]

        thread = threading.Thread(target=interrupt)
        thread.start()
        with pytest.raises(KeyboardInterrupt):
            session.map_tool("slow_count", frame, concurrency=3)
        thread.join(5)

        def outcomes() -> list[str]:
            return [e["outcome"] for e in session.model.history if e["name"] == "slow_count"]

        deadline = time.monotonic() + 5
        while (session.client.stats.in_flight or len(outcomes()) < 3) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert session.client.stats.in_flight == 0
        time.sleep(0.3)  # a fourth row, wrongly started after the interrupt, would show by now
        seen = outcomes()
        assert seen == ["cancelled"] * 3, seen  # the three rows in flight, no later row
        assert session.call_tool("add", {"a": 1, "b": 1}).structured_content == {"result": 2.0}
