"""``mcp_notebook.dask.map_tool`` on a real cluster: a LocalCluster of two worker processes (and one
started with the ``dask`` command-line tools), real servers over stdio and HTTP (issue #30).

What is checked: every row answered right and aligned to the input's index (unsorted, string),
a dask DataFrame in and out, one stdio server per worker however many partitions, a worker killed
mid-partition (no non-idempotent row executed twice, every idempotent row answered), and secrets
(an env value, a bearer token) in no task key, graph repr, worker log or exception.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

pytest.importorskip("distributed")

import dask.dataframe as dd
import pandas as pd
from distributed import Client, LocalCluster

from mcp_notebook import McpError
from mcp_notebook.dask import map_tool
from tests.conftest import demo_server, python_server, wait_gone
from tests.http_peers import HttpPeer, _python_peer

SECRET_ENV = "dask-env-secret-7f3c91b2"
TOKEN = secrets.token_hex(16)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Client]:
    with (
        LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as local,
        Client(local) as client,
    ):
        yield client


@pytest.fixture(scope="module")
def http_demo() -> Iterator[HttpPeer]:
    argv = [sys.executable, "-m", "mcp_notebook.demo", "--http", "0", "--token", TOKEN]
    with _python_peer("demo-token", argv) as peer:
        yield peer


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _registry_counts(cluster: Client) -> dict[str, dict[str, int]]:
    def counts() -> dict[str, int]:
        from mcp_notebook.dask import _registry

        return _registry.open_count()

    return cluster.run(counts)  # type: ignore[no-any-return]


def test_ten_thousand_rows_over_stdio_aligned_to_an_unsorted_index(cluster: Client) -> None:
    count = 10_000
    index = pd.Index([(i * 7919) % count for i in range(count)])  # a permutation: unsorted
    frame = pd.DataFrame({"a": range(count), "b": [2 * i for i in range(count)]}, index=index)
    out = map_tool(demo_server(), "add", frame, client=cluster)
    assert isinstance(out, dd.DataFrame)
    result = out.compute()
    assert list(result.columns) == ["result", "is_error", "error"]
    assert len(result) == count
    assert list(result.index) == list(index)
    assert not result.is_error.any()
    assert (result.result == frame.a + frame.b).all()
    assert result.error.isna().all()


def test_dask_frame_with_a_string_index_in_and_out(cluster: Client) -> None:
    names = [f"row-{i:03d}" for i in range(120)][::-1]
    frame = pd.DataFrame({"text": [f"hello {n}" for n in names], "unused": 1}, index=names)
    lazy = dd.from_pandas(frame, npartitions=3)  # sorts the string index: its own order
    out = map_tool(demo_server(), "echo", lazy, client=cluster, concurrency=4)
    assert out.npartitions == 3
    # composes: a further lazy step before computing
    shouted = out.map_partitions(lambda part: part.assign(loud=part.result.str.upper())).compute()
    expected = lazy.compute()
    assert list(shouted.index) == list(expected.index)
    assert list(shouted.result) == list(expected.text)
    assert list(shouted.loud) == [t.upper() for t in expected.text]


def test_error_rows_like_session_map_tool(cluster: Client) -> None:
    frame = pd.DataFrame({"message": ["one", "two"]}, index=["x", "y"])
    result = map_tool(demo_server(), "fail", frame, client=cluster).compute()
    assert list(result.is_error) == [True, True]
    assert ["one" in result.error["x"], "two" in result.error["y"]] == [True, True]


def test_http_with_a_bearer_token(cluster: Client, http_demo: HttpPeer) -> None:
    frame = pd.DataFrame({"a": range(300), "b": 1}, index=[f"k{i}" for i in range(300)])
    out = map_tool(http_demo.url, "add", frame, client=cluster, auth=TOKEN)
    result = out.compute()
    assert not result.is_error.any()
    assert list(result.result) == [float(i + 1) for i in range(300)]
    assert list(result.index) == list(frame.index)


def test_one_stdio_server_per_worker_for_every_partition(cluster: Client, tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    command = python_server("ledger_server.py", "--starts", str(starts))
    frame = pd.DataFrame({"row": range(160)})
    lazy = dd.from_pandas(frame, npartitions=16, sort=False)
    for _ in range(2):  # two maps, 32 partitions: still one server per worker
        result = map_tool(command, "mark_safe", lazy, client=cluster, concurrency=4).compute()
        assert list(result.result) == list(range(160))
    started = [line.split() for line in _lines(starts)]
    workers = {parent for _, parent in started}
    assert 1 <= len(started) <= 2
    assert len(workers) == len(started)  # never two servers in one worker


def _kill_run(cluster: Client, tmp_path: Path, tool: str) -> tuple[pd.DataFrame, Counter[int], int]:
    log, marker = tmp_path / "log", tmp_path / "marker"
    kill_row = 150
    command = python_server(
        "ledger_server.py", "--log", str(log), "--kill-row", str(kill_row), "--marker", str(marker)
    )
    frame = pd.DataFrame({"row": range(400)}, index=[f"r{i}" for i in range(400)])
    lazy = dd.from_pandas(frame, npartitions=4, sort=False)
    result = map_tool(command, tool, lazy, client=cluster, concurrency=8).compute()
    assert marker.exists(), "the server never killed its worker"
    executions = Counter(int(line.split()[1]) for line in _lines(log))
    assert list(result.index) == list(frame.index)
    return result, executions, kill_row


def test_worker_killed_mid_partition_repeats_no_unsafe_row(cluster: Client, tmp_path: Path) -> None:
    result, executions, kill_row = _kill_run(cluster, tmp_path, "mark")
    twice = sorted(row for row, n in executions.items() if n > 1)
    assert twice == [], f"non-idempotent rows executed more than once: {twice}"
    lost = result[result.is_error]
    assert f"r{kill_row}" in lost.index  # it ran, its answer died with the worker
    assert lost.error.str.contains("may or may not have run").all()
    answered = result[~result.is_error]
    assert [int(i[1:]) for i in answered.index] == list(answered.result)
    assert all(executions[row] == 1 for row in answered.result)  # every answer from one execution
    # Rows are recorded only as they start: of the killed partition's rows after the kill, at most
    # the ones in flight (concurrency 8) are written off; the rest never started and are called.
    after = [f"r{row}" for row in range(kill_row + 1, 200)]
    assert int(result.loc[after, "is_error"].sum()) < 8


def test_worker_killed_mid_partition_answers_every_idempotent_row(cluster: Client, tmp_path: Path) -> None:
    result, executions, kill_row = _kill_run(cluster, tmp_path, "mark_safe")
    assert not result.is_error.any()
    assert list(result.result) == list(range(400))
    assert executions[kill_row] == 2  # called again on the rerun


def _everything_said(cluster: Client) -> str:
    logs = cluster.get_worker_logs()
    said = [line for entries in logs.values() for _, line in entries]
    said += [line for _, line in cluster.get_scheduler_logs()]
    return "\n".join(said)


def test_secrets_stay_out_of_keys_reprs_logs_and_errors(
    cluster: Client, http_demo: HttpPeer, tmp_path: Path
) -> None:
    command = python_server("ledger_server.py", "--starts", str(tmp_path / "starts"))
    frame = pd.DataFrame({"row": range(20)})
    out = map_tool(command, "mark_safe", frame, client=cluster, env={"LEDGER_SECRET": SECRET_ENV})
    http = map_tool(
        http_demo.url,
        "add",
        frame.rename(columns={"row": "a"}).assign(b=0),
        client=cluster,
        headers={"X-Api-Key": SECRET_ENV},
        auth=TOKEN,
    )
    shown: list[str] = []
    for lazy in (out, http):
        graph = lazy.__dask_graph__()
        shown += [repr(key) for key in graph]
        shown += [repr(task) for task in graph.values()]
        shown += [repr(lazy), str(lazy.expr), lazy.expr.tree_repr()]
    assert not out.compute().is_error.any()
    assert not http.compute().is_error.any()
    # a failing connect (no such program; a refused token) raises without naming the secrets
    missing = [str(tmp_path / "no-such-server"), "--token", TOKEN]
    failures: list[BaseException] = []
    for target, options in (
        (missing, {"env": {"LEDGER_SECRET": SECRET_ENV}}),
        (http_demo.url, {"auth": "wrong-" + TOKEN}),
    ):
        with pytest.raises(McpError) as caught:
            map_tool(target, "mark_safe", frame, client=cluster, **options).compute()
        failures.append(caught.value)
    shown += [str(f) for f in failures] + [repr(f) for f in failures]
    shown.append(_everything_said(cluster))
    text = "\n".join(shown)
    assert "mark_safe" in text  # the checks look at real text
    for secret in (SECRET_ENV, TOKEN):
        assert secret not in text


def test_scheduler_and_workers_started_by_the_dask_command(tmp_path: Path) -> None:
    scheduler_file = tmp_path / "scheduler.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    processes: list[subprocess.Popen[bytes]] = []
    dask_bin = Path(sys.executable).parent / "dask"

    def start(*args: str) -> None:
        processes.append(
            subprocess.Popen(
                [str(dask_bin), *args],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=tmp_path,
            )
        )

    start("scheduler", "--scheduler-file", str(scheduler_file), "--port", "0", "--no-dashboard")
    try:
        deadline = time.monotonic() + 60  # a hang guard only
        while not scheduler_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        for _ in range(2):
            start("worker", "--scheduler-file", str(scheduler_file), "--nthreads", "1", "--no-dashboard")
        with Client(scheduler_file=str(scheduler_file), timeout=60) as client:
            client.wait_for_workers(2, timeout=60)
            starts = tmp_path / "starts"
            command = python_server("ledger_server.py", "--starts", str(starts))
            frame = pd.DataFrame({"row": range(200)}, index=range(200)[::-1])
            result = map_tool(command, "mark", frame, client=client, concurrency=4).compute()
            assert list(result.result) == list(range(200))
            assert not result.is_error.any()
            assert len(client.scheduler_info()["workers"]) == 2
            assert 1 <= len(_lines(starts)) <= 2
            client.shutdown()
    finally:
        for process in processes:
            if process.poll() is None:
                process.terminate()
        left = wait_gone([psutil.Process(p.pid) for p in processes if p.poll() is None], 30)
        for process in left:
            process.kill()


def test_session_map_tool_runs_on_the_cluster(cluster: Client) -> None:
    from mcp_notebook.notebook import Session

    session = Session(demo_server(), show_progress=False)
    try:
        frame = pd.DataFrame({"a": [1, 2, 3, 4], "b": [10, 20, 30, 40]}, index=["z", "x", "w", "y"])
        here = session.map_tool("add", frame, progress=False)
        there = session.map_tool("add", frame, cluster=cluster)  # pandas in, pandas out, with a bar
        assert isinstance(there, pd.DataFrame)
        assert list(there.index) == list(here.index)
        assert list(there.result) == list(here.result) == [11.0, 22.0, 33.0, 44.0]
        lazy = dd.from_pandas(frame, npartitions=2, sort=False)
        out = session.map_tool("add", lazy)  # a dask DataFrame: the default client, a dask one back
        assert isinstance(out, dd.DataFrame)
        assert list(out.compute().result) == [11.0, 22.0, 33.0, 44.0]
    finally:
        session.close()


def test_group_map_tool_runs_on_the_cluster(cluster: Client) -> None:
    from mcp_notebook.notebook import Group

    group = Group({"demo": demo_server()}, show_progress=False, max_reconnect_attempts=1)
    try:
        frame = pd.DataFrame({"a": [1, 2], "b": [10, 20]}, index=["p", "q"])
        out = group.map_tool("demo.add", frame, cluster=cluster, progress=False)
        assert list(out.result) == [11.0, 22.0]
        assert list(out.index) == ["p", "q"]
    finally:
        group.close()
