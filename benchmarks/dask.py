"""Rows per second of a tool whose work is CPU on the server, in one process and on Dask (issue #30).

The tool is ``burn`` (``--ms`` milliseconds of CPU per call, read-only) on the demo server
(benchmarks/burn_server.py: the demo server plus that one tool). A Python
MCP server runs its handlers on one core, so one server process is one core, however many calls
are in flight; more rows per second need more server processes, which is what
``mcp_notebook.dask.map_tool`` gives (one per worker). Measured in one run, side by side:

- ``Session.map_tool``: one session, one server, ``concurrency`` calls in flight (the baseline).
- dask, 1 worker: ``mcp_notebook.dask.map_tool`` on a LocalCluster of one worker process (one
  thread): one server, reused by every partition. The claim: within 20 % of ``Session.map_tool``
  (the connection is opened once per worker, not once per partition).
- dask, 2 workers: two worker processes, two servers. The claim: at least 1.6× one process on a
  2-core machine.

Each measurement starts with the server already running (the session is open; each worker has run
a small warm-up map), so it is rows per second of the map itself. Repeats are interleaved; the
median is reported.

Run: ``python -m benchmarks.dask`` (about two minutes; ``--rows N``, ``--ms MS``, ``--repeat N``,
``--smoke``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

import pandas as pd

DEMO = [sys.executable, "-m", "benchmarks.burn_server"]


def frame(rows: int, ms: float) -> pd.DataFrame:
    return pd.DataFrame({"ms": [ms] * rows}, index=range(rows))


def _check(result: pd.DataFrame, rows: int) -> None:
    if len(result) != rows or bool(result.is_error.any()):
        raise SystemExit(f"a map went wrong: {int(result.is_error.sum())} error rows of {len(result)}")


def _rate(run: Callable[[], pd.DataFrame], rows: int) -> float:
    start = time.perf_counter()
    result = run()
    seconds = time.perf_counter() - start
    _check(result, rows)
    return rows / seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=600)
    parser.add_argument("--ms", type=float, default=20.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: check that every case runs")
    args = parser.parse_args(argv)
    if args.smoke:
        args.rows, args.ms, args.repeat = 40, 1.0, 1

    from distributed import Client, LocalCluster

    from mcp_notebook.dask import map_tool
    from mcp_notebook.notebook import Session

    data = frame(args.rows, args.ms)
    rates: dict[str, list[float]] = {"Session.map_tool": [], "dask, 1 worker": [], "dask, 2 workers": []}
    session = Session(DEMO, show_progress=False)
    clusters = {
        name: LocalCluster(n_workers=n, processes=True, threads_per_worker=1, dashboard_address=None)
        for name, n in (("dask, 1 worker", 1), ("dask, 2 workers", 2))
    }
    clients = {name: Client(cluster, set_as_default=False) for name, cluster in clusters.items()}
    try:
        for client in clients.values():  # warm-up: every worker starts its server
            warm = frame(8 * len(client.nthreads()), 0.0)
            _check(map_tool(DEMO, "burn", warm, client=client).compute(), len(warm))

        def on_cluster(client: Client) -> Callable[[], pd.DataFrame]:
            def run() -> pd.DataFrame:
                lazy = map_tool(DEMO, "burn", data, client=client, concurrency=args.concurrency)
                result: pd.DataFrame = client.compute(lazy).result()
                return result

            return run

        cases: dict[str, Callable[[], pd.DataFrame]] = {
            "Session.map_tool": lambda: session.map_tool(
                "burn", data, concurrency=args.concurrency, progress=False
            ),
            **{name: on_cluster(client) for name, client in clients.items()},
        }
        for repeat in range(args.repeat):
            names = list(cases)
            names = names[repeat % len(names) :] + names[: repeat % len(names)]  # rotate the order
            for name in names:
                rates[name].append(_rate(cases[name], args.rows))
    finally:
        session.close()
        for client in clients.values():
            client.close()
        for cluster in clusters.values():
            cluster.close()

    median = {name: statistics.median(values) for name, values in rates.items()}
    base, one, two = median["Session.map_tool"], median["dask, 1 worker"], median["dask, 2 workers"]
    print(f"{args.rows} rows, burn {args.ms:g} ms of server CPU per row, concurrency {args.concurrency}")
    print(f"{'case':<18} {'rows/s':>8}  runs")
    for name, values in rates.items():
        print(f"{name:<18} {median[name]:>8.1f}  {', '.join(f'{v:.1f}' for v in values)}")
    print(f"dask 1 worker / Session.map_tool: {one / base:.2f}  (claim: >= 0.80)")
    print(f"dask 2 workers / Session.map_tool: {two / base:.2f}  (claim: >= 1.60)")
    print(f"dask 2 workers / dask 1 worker: {two / one:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
