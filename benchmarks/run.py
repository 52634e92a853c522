"""Every benchmark case, every client, in one run: ``python -m benchmarks.run [--quick] [--json PATH]``.

Clients are interleaved within each repetition (the order rotates from one repetition to the next)
and every number reported is the median over repetitions, because these machines are noisy: only
numbers from the same run are compared. The table shows each client's median and the ratio
ours/theirs; each row says which direction is better (for times, a ratio below 1 means we are
faster; for calls/s, a ratio above 1 does). The table is also written as JSON (default
``benchmarks/out/results.json``) and Markdown (next to it, ``.md``).

``--smoke`` runs every case once at tiny sizes (a test uses it so the benchmark cannot rot);
``--quick`` is a shorter real run.
"""

from __future__ import annotations

import argparse
import asyncio
import fnmatch
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.clients import CLIENTS, LABELS, Adapter, Counter, Target, make
from benchmarks.echo_server import make_records

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
ECHO = (sys.executable, str(HERE / "echo_server.py"))
DEMO = (sys.executable, "-m", "mcp_notebook.demo")
RUN_TIMEOUT = 300.0

SIZES: dict[str, dict[str, Any]] = {
    "full": {
        "repeat": 5,
        "heavy_repeat": 3,
        "demo_repeat": 3,
        "memory_repeat": 2,
        "import_repeat": 7,
        "seq_calls": 2000,
        "seq_demo_calls": 300,
        "seq_http_calls": 500,
        "in_flight": {10: 2000, 100: 3000, 1000: 5000},
        # HTTP in flight: calls at once x the server's ms per call; a row lasts about row_seconds at
        # the ideal rate, with min_rounds calls per worker, zero_calls at 0 ms, max_calls at most.
        "http_levels": (1, 10, 100, 1000),
        "http_delays": (0, 20, 100),
        "http_row_seconds": 2.0,
        "http_min_rounds": 5,
        "http_max_calls": 5000,
        "http_zero_calls": 2000,
        "http_timeout": 60.0,
        "load_batches": 5,
        "tools": 5000,
        "big_bytes": 10_000_000,
        "flood": 10_000,
        "records": 100_000,
        "mem_batch": 1000,
        "mem_batches": 5,
    },
    "quick": {
        "repeat": 3,
        "heavy_repeat": 2,
        "demo_repeat": 2,
        "memory_repeat": 1,
        "import_repeat": 5,
        "seq_calls": 300,
        "seq_demo_calls": 100,
        "seq_http_calls": 200,
        "in_flight": {10: 500, 100: 1000, 1000: 2000},
        "http_levels": (1, 100, 1000),
        "http_delays": (0, 20, 100),
        "http_row_seconds": 1.0,
        "http_min_rounds": 3,
        "http_max_calls": 3000,
        "http_zero_calls": 500,
        "http_timeout": 30.0,
        "load_batches": 2,
        "tools": 5000,
        "big_bytes": 10_000_000,
        "flood": 10_000,
        "records": 100_000,
        "mem_batch": 1000,
        "mem_batches": 5,
    },
    # Every case once, sizes ÷ 100 (concurrency ÷ 10); the SDK demo server (1 s to start) only for ours.
    "smoke": {
        "repeat": 1,
        "heavy_repeat": 1,
        "demo_repeat": 1,
        "memory_repeat": 1,
        "import_repeat": 1,
        "seq_calls": 10,
        "seq_demo_calls": 3,
        "seq_http_calls": 5,
        "in_flight": {10: 20, 100: 100, 1000: 200},
        "http_levels": (1, 1000),
        "http_delays": (0, 5),
        "http_row_seconds": 0.05,
        "http_min_rounds": 2,
        "http_max_calls": 200,
        "http_zero_calls": 20,
        "http_timeout": 30.0,
        "load_batches": 2,
        "tools": 50,
        "big_bytes": 100_000,
        "flood": 100,
        "records": 1000,
        "mem_batch": 10,
        "mem_batches": 2,
        "mem_settle": 0.01,
        "concurrency_divisor": 10,
        "demo_clients": ("ours",),
    },
}


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    unit: str
    better: str  # "lower" or "higher"


@dataclass
class Case:
    id: str
    title: str
    metrics: list[Metric]
    run: Callable[[str], Awaitable[dict[str, Any]]]
    repeat: int
    clients: tuple[str, ...] = CLIENTS
    not_applicable: dict[str, str] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    note: str = ""
    #: Seconds one client gets for one repetition; past it the cell reads "timeout", and the run goes on.
    timeout: float = RUN_TIMEOUT
    #: The server's milliseconds per call, for the cases against a slow server: their rows show the
    #: ideal calls/s (in flight / delay) and each client's share of it.
    delay_ms: float | None = None
    #: Shown in a table of its own (its metrics are not comparable row by row with the others').
    own_table: bool = False

    @property
    def ideal_rate(self) -> float | None:
        """Calls/s if every call took exactly the server's delay and nothing else (None at 0 ms)."""
        if not self.delay_ms:
            return None
        return float(self.params["in_flight"]) / (self.delay_ms / 1000)


# --- helpers --------------------------------------------------------------------------------------


def echo_target(*args: str) -> Target:
    return Target(argv=(*ECHO, *args))


async def connected(client: str, target: Target, mode: str = "auto", raw_connections: int = 100) -> Adapter:
    adapter = make(client, http=target.http, raw_connections=raw_connections)
    try:
        await adapter.connect(target, mode)
    except BaseException:
        await adapter.close()
        raise
    return adapter


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


async def warm_up(adapter: Adapter, calls: int = 20) -> None:
    for _ in range(calls):
        await adapter.call("echo", {"text": "warm up"})


# --- case bodies (one client, one repetition) -----------------------------------------------------


def connect_first_call(target: Target) -> Callable[[str], Awaitable[dict[str, Any]]]:
    async def run(client: str) -> dict[str, Any]:
        adapter = make(client, http=target.http)
        started = time.perf_counter()
        try:
            await adapter.connect(target, "auto")
            await adapter.call("echo", {"text": "first"})
            elapsed = time.perf_counter() - started
        finally:
            await adapter.close()
        return {"ms": elapsed * 1000}

    return run


def sequential(target: Target, calls: int) -> Callable[[str], Awaitable[dict[str, Any]]]:
    async def run(client: str) -> dict[str, Any]:
        adapter = await connected(client, target)
        try:
            await warm_up(adapter)
            latencies = []
            clock = time.perf_counter
            args = {"text": "hello"}
            started = clock()
            for _ in range(calls):
                t0 = clock()
                await adapter.call("echo", args)
                latencies.append(clock() - t0)
            total = clock() - started
        finally:
            await adapter.close()
        return {
            "p50": percentile(latencies, 0.5) * 1e3,
            "p99": percentile(latencies, 0.99) * 1e3,
            "rate": calls / total,
        }

    return run


def in_flight(
    target: Target, concurrency: int, calls: int, *, warm_calls: int = 20, warm_round: int | None = None
) -> Callable[[str], Awaitable[dict[str, Any]]]:
    """N workers calling in a loop. ``warm_calls`` sequential calls and one round of ``warm_round``
    concurrent calls (default: up to 100) come first, untimed; against a slow server both are kept
    small, or the warm-up would take longer than the row. Over HTTP the raw client may open one
    connection per call in flight, so it stays the limit."""
    per_worker = max(1, calls // concurrency)
    round_size = min(concurrency, 100) if warm_round is None else warm_round

    async def run(client: str) -> dict[str, Any]:
        adapter = await connected(client, target, raw_connections=min(max(concurrency, 1), 1000))
        try:
            await warm_up(adapter, warm_calls)
            await asyncio.gather(*(adapter.call("echo", {"text": "w"}) for _ in range(round_size)))

            async def worker() -> None:
                args = {"text": "hello"}
                for _ in range(per_worker):
                    await adapter.call("echo", args)

            gc.collect()
            started = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(concurrency)))
            elapsed = time.perf_counter() - started
            cap = adapter.connection_cap()
        finally:
            await adapter.close()
        out: dict[str, Any] = {"rate": concurrency * per_worker / elapsed}
        if target.http and cap is not None:
            out["_max_connections"] = cap
        return out

    return run


def http_calls(sizes: dict[str, Any], concurrency: int, delay_ms: float) -> int:
    """Calls for one HTTP in-flight row: enough rounds of ``concurrency`` calls to last about
    ``http_row_seconds`` at the ideal rate (at 0 ms: a fixed count), at least ``http_min_rounds``
    per worker, and at most ``http_max_calls`` so that the clients far below the ideal still finish
    a row in seconds."""
    floor = concurrency * sizes["http_min_rounds"]
    if not delay_ms:
        return max(sizes["http_zero_calls"], floor)
    rounds = round(sizes["http_row_seconds"] * 1000 / delay_ms)
    return max(floor, min(concurrency * rounds, sizes["http_max_calls"]))


def list_tools(tools: int) -> Callable[[str], Awaitable[dict[str, Any]]]:
    async def run(client: str) -> dict[str, Any]:
        adapter = await connected(client, echo_target("--tools", str(tools)))
        try:
            assert await adapter.list_tools() == tools  # warm: lazy imports, first validation
            gc.collect()
            started = time.perf_counter()
            count = await adapter.list_tools()
            elapsed = time.perf_counter() - started
            assert count == tools, f"listed {count} tools, expected {tools}"
        finally:
            await adapter.close()
        return {"ms": elapsed * 1000}

    return run


def big_result(size: int) -> Callable[[str], Awaitable[dict[str, Any]]]:
    async def run(client: str) -> dict[str, Any]:
        adapter = await connected(client, echo_target())
        try:
            await adapter.call("big", {"size": 1000})
            gc.collect()
            started = time.perf_counter()
            result = await adapter.call("big", {"size": size})
            elapsed = time.perf_counter() - started
            assert len(adapter.text(result)) == size
        finally:
            await adapter.close()
        return {"ms": elapsed * 1000}

    return run


def log_flood(count: int) -> Callable[[str], Awaitable[dict[str, Any]]]:
    """notifications/message on a legacy connection: drained when the app-level counter has them all."""

    async def run(client: str) -> dict[str, Any]:
        adapter = await connected(client, echo_target("--era", "legacy"), "legacy")
        try:
            await adapter.call("flood", {"count": 10, "kind": "log"})
            gc.collect()
            before = adapter.notifications_seen()
            started = time.perf_counter()
            await adapter.call("flood", {"count": count, "kind": "log"})
            deadline = time.monotonic() + 60
            # Each library counts in its own callback; polling the count is the one way common to all.
            while adapter.notifications_seen() - before < count and time.monotonic() < deadline:  # noqa: ASYNC110
                await asyncio.sleep(0.0005)
            elapsed = time.perf_counter() - started
            seen = adapter.notifications_seen() - before
        finally:
            await adapter.close()
        return {"ms": elapsed * 1000, "_seen": seen}

    return run


def progress_flood(count: int) -> Callable[[str], Awaitable[dict[str, Any]]]:
    """Progress notifications for one modern call: drained when the call returns."""

    async def run(client: str) -> dict[str, Any]:
        adapter = await connected(client, echo_target("--era", "modern"))
        try:
            await adapter.call_with_progress("flood", {"count": 10}, Counter())
            gc.collect()
            counter = Counter()
            started = time.perf_counter()
            await adapter.call_with_progress("flood", {"count": count}, counter)
            elapsed = time.perf_counter() - started
        finally:
            await adapter.close()
        return {"ms": elapsed * 1000, "_callbacks": counter.n}

    return run


def dataframe(rows: int) -> Callable[[str], Awaitable[dict[str, Any]]]:
    import pandas as pd

    async def run(client: str) -> dict[str, Any]:
        adapter = await connected(client, echo_target("--era", "modern"))
        try:
            await adapter.call("records", {"count": 10})
            gc.collect()
            started = time.perf_counter()
            result = await adapter.call("records", {"count": rows})
            received = time.perf_counter()
            frame = pd.DataFrame(adapter.structured(result)["result"])
            done = time.perf_counter()
            assert len(frame) == rows
        finally:
            await adapter.close()
        out: dict[str, Any] = {
            "call": (received - started) * 1000,
            "frame": (done - received) * 1000,
            "total": (done - started) * 1000,
        }
        if client == "raw":  # the baseline: pandas.DataFrame(records) on a list already in memory
            records = make_records(rows)
            gc.collect()
            t0 = time.perf_counter()
            pd.DataFrame(records)
            out["baseline"] = (time.perf_counter() - t0) * 1000
        return out

    return run


IMPORTS = {
    "ours": "import mcp_notebook",
    "ours_novalidate": "import mcp_notebook",
    "sdk": "from mcp import Client",
    "fastmcp": "from fastmcp import Client",
    "raw": "import asyncio, json",
}
NOTEBOOK_LIBS = ("pandas", "IPython", "ipywidgets", "traitlets", "numpy", "tqdm")


async def import_time(client: str) -> dict[str, Any]:
    code = (
        "import time, sys\n"
        "t = time.perf_counter()\n"
        f"{IMPORTS[client]}\n"
        "d = time.perf_counter() - t\n"
        f"print(d, ','.join(sorted(set({NOTEBOOK_LIBS!r}) & set(sys.modules))))\n"
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, stdout=asyncio.subprocess.PIPE, cwd=str(ROOT)
    )
    out, _ = await proc.communicate()
    seconds, _, loaded = out.decode().strip().partition(" ")
    return {"ms": float(seconds) * 1000, "_notebook_libs": loaded}


async def probe_json(*argv: str) -> dict[str, Any]:
    """Run a probe module in a fresh interpreter and return the JSON object it prints last; the
    probe is killed if this coroutine is cancelled (a row's timeout), so no process outlives it."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        *argv,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=str(ROOT),
    )
    try:
        out, err = await proc.communicate()
    except BaseException:
        proc.kill()
        await proc.wait()
        raise
    if proc.returncode != 0:
        raise RuntimeError(f"{argv[0]} failed: {err.decode()[-500:]}")
    return json.loads(out.decode().strip().splitlines()[-1])  # type: ignore[no-any-return]


async def first_call(client: str) -> dict[str, Any]:
    """The first call of a tool whose schema uses formats, in a fresh interpreter
    (benchmarks.first_call_probe): what that call pays once per process (issue #37)."""
    data = await probe_json("benchmarks.first_call_probe", "--client", client)
    values: dict[str, Any] = {k: v for k, v in data.items() if isinstance(v, int | float)}
    values["_heavy_modules"] = data.get("heavy") or "-"
    return values


def memory(sizes: dict[str, Any]) -> Callable[[str], Awaitable[dict[str, Any]]]:
    async def run(client: str) -> dict[str, Any]:
        data = await probe_json(
            "benchmarks.memory_probe",
            *("--client", client, "--flood", str(sizes["flood"])),
            *("--batch", str(sizes["mem_batch"]), "--batches", str(sizes["mem_batches"])),
            *("--settle", str(sizes.get("mem_settle", 0.2))),
        )
        return {k: v for k, v in data.items() if isinstance(v, int | float) and v is not None}

    return run


LOAD_EXTRAS = ("calls", "failed", "max_connections", "first_error", "timed_out", "socket_samples")


def http_load(
    url: str, batch: int, batches: int, settle: float, limit: float
) -> Callable[[str], Awaitable[dict[str, Any]]]:
    """``batches`` batches of ``batch`` concurrent calls in a fresh process (benchmarks.http_load_probe):
    completed calls, memory across batches, peak sockets to the server."""

    async def run(client: str) -> dict[str, Any]:
        data = await probe_json(
            "benchmarks.http_load_probe",
            *("--client", client, "--url", url, "--batch", str(batch), "--batches", str(batches)),
            *("--settle", str(settle), "--timeout", str(limit)),
        )
        out: dict[str, Any] = {f"_{key}": data[key] for key in LOAD_EXTRAS if data.get(key) is not None}
        for key in (
            "completed",
            "rss_first_batch_mb",
            "rss_growth_mb",
            "rss_peak_mb",
            "heap_growth_kb",
            "peak_sockets",
            "batch_s",
        ):
            if data.get(key) is not None:
                out[key] = data[key]
        return out

    return run


# --- the cases ------------------------------------------------------------------------------------


def build_cases(sizes: dict[str, Any], http_urls: dict[str, str]) -> list[Case]:
    r, heavy = sizes["repeat"], sizes["heavy_repeat"]
    div = sizes.get("concurrency_divisor", 1)
    demo_clients = tuple(sizes.get("demo_clients", CLIENTS))
    ms_lower = lambda label: Metric("ms", label, "ms", "lower")  # noqa: E731
    seq_metrics = [
        Metric("p50", "p50 latency", "ms", "lower"),
        Metric("p99", "p99 latency", "ms", "lower"),
        Metric("rate", "calls/s", "calls/s", "higher"),
    ]
    cases = [
        Case(
            "connect/stdio/echo/modern",
            "connect + first call, stdio, echo server (modern, 2026-07-28)",
            [ms_lower("time")],
            connect_first_call(echo_target("--era", "modern")),
            r,
            note="includes spawning the server; every client negotiates in auto mode",
        ),
        Case(
            "connect/stdio/echo/legacy",
            "connect + first call, stdio, echo server (legacy only: discover → -32601 → initialize)",
            [ms_lower("time")],
            connect_first_call(echo_target("--era", "legacy")),
            r,
        ),
        Case(
            "connect/stdio/sdk-demo/modern",
            "connect + first call, stdio, SDK server (`python -m mcp_notebook.demo`, dual era)",
            [ms_lower("time")],
            connect_first_call(Target(argv=DEMO)),
            sizes["demo_repeat"],
            clients=demo_clients,
        ),
        Case(
            "connect/stdio/sdk-demo/legacy",
            "connect + first call, stdio, SDK server (`--legacy-only`)",
            [ms_lower("time")],
            connect_first_call(Target(argv=(*DEMO, "--legacy-only"))),
            sizes["demo_repeat"],
            clients=demo_clients,
        ),
        Case(
            "connect/http/echo/modern",
            "connect + first call, HTTP, echo server (modern; server already running)",
            [ms_lower("time")],
            connect_first_call(Target(url=http_urls["modern"])),
            r,
        ),
        Case(
            "connect/http/echo/legacy",
            "connect + first call, HTTP, echo server (legacy only; server already running)",
            [ms_lower("time")],
            connect_first_call(Target(url=http_urls["legacy"])),
            r,
        ),
        Case(
            "sequential/stdio/echo",
            f"sequential tools/call round trips, stdio, echo server ({sizes['seq_calls']} calls)",
            seq_metrics,
            sequential(echo_target(), sizes["seq_calls"]),
            r,
            params={"calls": sizes["seq_calls"]},
        ),
        Case(
            "sequential/stdio/sdk-demo",
            f"sequential tools/call round trips, stdio, SDK server `echo` ({sizes['seq_demo_calls']} calls)",
            seq_metrics,
            sequential(Target(argv=DEMO), sizes["seq_demo_calls"]),
            sizes["demo_repeat"],
            clients=demo_clients,
            params={"calls": sizes["seq_demo_calls"]},
        ),
        Case(
            "sequential/http/echo",
            f"sequential tools/call round trips, HTTP, echo server ({sizes['seq_http_calls']} calls)",
            seq_metrics,
            sequential(Target(url=http_urls["modern"]), sizes["seq_http_calls"]),
            heavy,
            params={"calls": sizes["seq_http_calls"]},
        ),
    ]
    for level, calls in sizes["in_flight"].items():
        concurrency = max(1, level // div)
        cases.append(
            Case(
                f"in-flight-{level}/stdio/echo",
                f"throughput, {level:,} calls in flight on one connection, stdio, echo server",
                [Metric("rate", "calls/s", "calls/s", "higher")],
                in_flight(echo_target(), concurrency, calls),
                heavy if level >= 1000 else r,
                params={"in_flight": concurrency, "calls": calls},
            )
        )
    cases += http_in_flight_cases(sizes, http_urls)
    cases += [
        Case(
            "list-tools/stdio/echo",
            f"list_tools of {sizes['tools']:,} tools (pages of 1,000), stdio",
            [ms_lower("time")],
            list_tools(sizes["tools"]),
            heavy,
            params={"tools": sizes["tools"]},
        ),
        Case(
            "big-result/stdio/echo",
            f"one tool result of {sizes['big_bytes'] / 1e6:g} MB (text), stdio",
            [ms_lower("time")],
            big_result(sizes["big_bytes"]),
            heavy,
            params={"bytes": sizes["big_bytes"]},
        ),
        Case(
            "flood-log/stdio/echo",
            f"flood of {sizes['flood']:,} notifications/message (legacy), time to drain",
            [ms_lower("time to drain")],
            log_flood(sizes["flood"]),
            heavy,
            params={"notifications": sizes["flood"]},
            note="drained = the call returned and the app-level log callback/counter saw them all",
        ),
        Case(
            "flood-progress/stdio/echo",
            f"flood of {sizes['flood']:,} progress notifications on one call (modern), time to drain",
            [ms_lower("time to drain")],
            progress_flood(sizes["flood"]),
            heavy,
            params={"notifications": sizes["flood"]},
            note="drained = the call returned; ours coalesces progress (≤ 64 pending per call), "
            "the others run the callback for each",
        ),
        Case(
            "memory/stdio/echo",
            "memory (client process, fresh process per client, legacy connection)",
            [
                Metric(
                    "flood_rss_peak_mb", f"flood of {sizes['flood']:,}: peak RSS above start", "MB", "lower"
                ),
                Metric("flood_heap_peak_mb", f"flood of {sizes['flood']:,}: peak Python heap", "MB", "lower"),
                Metric("idle_rss_mb", "one idle connection: RSS", "MB", "lower"),
                Metric("idle_heap_kb", "one idle connection: Python heap", "KB", "lower"),
                Metric(
                    "inflight_rss_first_batch_mb",
                    f"{sizes['mem_batch']:,} in flight: RSS after 1 batch",
                    "MB",
                    "lower",
                ),
                Metric(
                    "inflight_rss_growth_mb",
                    f"{sizes['mem_batch']:,} in flight: RSS growth, 1 → {sizes['mem_batches']} batches",
                    "MB",
                    "lower",
                ),
                Metric(
                    "inflight_heap_growth_kb",
                    f"{sizes['mem_batch']:,} in flight: heap growth, 1 → {sizes['mem_batches']} batches",
                    "KB",
                    "lower",
                ),
            ],
            memory(sizes),
            sizes["memory_repeat"],
            params={"flood": sizes["flood"], "batch": sizes["mem_batch"], "batches": sizes["mem_batches"]},
            note="RSS: /proc/self/status (peak: VmHWM, reset via /proc/self/clear_refs); heap: tracemalloc",
        ),
        Case(
            "import",
            "import time (fresh interpreter; ours: `import mcp_notebook`, raw: `import asyncio, json`)",
            [Metric("ms", "import", "ms", "lower")],
            import_time,
            sizes["import_repeat"],
        ),
        Case(
            "first-call/stdio/echo/formats",
            "first call of a tool whose inputSchema uses formats (`visit`: uri, date-time in an anyOf), "
            "fresh interpreter per sample",
            [
                Metric("first_ms", "first call", "ms", "lower"),
                Metric("warm_ms", "the same call again", "ms", "lower"),
                Metric("total_ms", "import + connect + first call", "ms", "lower"),
                Metric("full_ms", "then the first call of a tool jsonschema judges ($ref)", "ms", "lower"),
            ],
            first_call,
            sizes["import_repeat"],
            not_applicable={
                "ours_novalidate": "checks nothing, as the SDK client",
                "fastmcp": "the SDK's client underneath",
                "raw": "checks nothing",
            },
            note="ours checks the arguments (the quick check takes `visit`'s anyOf; `place`'s $ref goes "
            "to jsonschema); the SDK client checks nothing; the extra `heavy_modules` names what was loaded",
        ),
        Case(
            "dataframe/stdio/echo",
            f"{sizes['records']:,}-row structured result → pandas DataFrame",
            [
                Metric("call", "call (wire → result object)", "ms", "lower"),
                Metric("frame", "DataFrame(result's records)", "ms", "lower"),
                Metric("total", "call + DataFrame", "ms", "lower"),
                Metric("baseline", "pandas.DataFrame(records), list in memory", "ms", "lower"),
            ],
            dataframe(sizes["records"]),
            heavy,
            params={"rows": sizes["records"]},
            note="`result.to_dataframe()` comes with the notebook issue; today it is "
            "pandas.DataFrame(result.structured_content['result'])",
        ),
    ]
    return cases


def http_in_flight_cases(sizes: dict[str, Any], http_urls: dict[str, str]) -> list[Case]:
    """Issue #13: every in-flight level against every server delay, then the load case (the highest
    level against the longest delay, in batches) for completion, memory and sockets."""
    div = sizes.get("concurrency_divisor", 1)
    note = (
        "HTTP/1.1, one call per connection at a time: raw opens up to one connection per call in "
        "flight (the limit); ours uses its default max_connections, the SDK and fastmcp their "
        "httpx pools' defaults"
    )
    cases = []
    for delay in sizes["http_delays"]:
        for level in sizes["http_levels"]:
            concurrency = max(1, level // div)
            calls = http_calls(sizes, concurrency, delay)
            cases.append(
                Case(
                    f"in-flight-{level}/http/echo/delay-{delay}",
                    f"throughput, {level:,} calls in flight on one connection, HTTP, echo server "
                    f"taking {delay} ms per call",
                    [Metric("rate", "calls/s", "calls/s", "higher")],
                    in_flight(
                        Target(url=http_urls[f"delay-{delay}"]),
                        concurrency,
                        calls,
                        warm_calls=20 if not delay else 2,
                        warm_round=None if not delay else concurrency,
                    ),
                    sizes["heavy_repeat"],
                    params={"in_flight": concurrency, "calls": calls, "delay_ms": delay},
                    note=note,
                    timeout=sizes["http_timeout"],
                    delay_ms=delay,
                )
            )
    level, delay = max(sizes["http_levels"]), max(sizes["http_delays"])
    batch, batches = max(1, level // div), sizes["load_batches"]
    limit = 3 * sizes["http_timeout"]  # twice the batches of a row, and room for a slow client
    cases.append(
        Case(
            f"load-{level}/http/echo/delay-{delay}",
            f"{level:,} calls at once against {delay} ms per call, {batches} batches (fresh process "
            "per client): every call completes, memory flat, sockets bounded",
            [
                Metric("completed", f"calls completed of {2 * batch * batches:,}", "calls", "higher"),
                Metric("rss_first_batch_mb", "RSS after batch 1", "MB", "lower"),
                Metric("rss_growth_mb", f"RSS growth, 1 → {batches} batches", "MB", "lower"),
                Metric("rss_peak_mb", "peak RSS above start", "MB", "lower"),
                Metric("heap_growth_kb", f"heap growth, 1 → {batches} batches", "KB", "lower"),
                Metric("peak_sockets", "peak TCP sockets to the server", "sockets", "lower"),
                Metric("batch_s", "seconds per batch", "s", "lower"),
            ],
            http_load(http_urls[f"delay-{delay}"], batch, batches, sizes.get("mem_settle", 0.2), limit),
            sizes["memory_repeat"],
            params={"in_flight": batch, "batches": batches, "calls": 2 * batch * batches, "delay_ms": delay},
            note="RSS: psutil in the client's process; sockets: psutil net_connections to the server's "
            "port, sampled every 20 ms in a thread; max_connections: the client's own setting where it "
            "has one (raw: the batch size)",
            timeout=limit + 30,
            own_table=True,
        )
    )
    return cases


# --- running --------------------------------------------------------------------------------------


async def run_case(case: Case, clients: tuple[str, ...], log: Callable[[str], None]) -> dict[str, Any]:
    active = [c for c in clients if c in case.clients and c not in case.not_applicable]
    samples: dict[str, dict[str, list[float]]] = {c: {} for c in active}
    extras: dict[str, dict[str, Any]] = {c: {} for c in active}
    errors: dict[str, str] = {}
    timeouts: set[str] = set()
    started = time.perf_counter()
    for rep in range(case.repeat):
        shift = rep % max(1, len(active))
        for client in active[shift:] + active[:shift]:
            if client in errors:
                continue
            gc.collect()
            try:
                values = await bounded(case.run(client), case.timeout)
            except RowTimeout as exc:
                timeouts.add(client)
                errors[client] = str(exc)
                log(f"  {client}: TIMEOUT {errors[client]}")
                continue
            except Exception as exc:  # a client failing one case must not stop the run
                errors[client] = f"{type(exc).__name__}: {exc}"[:300]
                log(f"  {client}: ERROR {errors[client]}")
                continue
            for key, value in values.items():
                if key.startswith("_"):
                    extras[client][key[1:]] = value
                elif value is not None:
                    samples[client].setdefault(key, []).append(float(value))
    results: dict[str, Any] = {}
    for client in clients:
        if client in case.not_applicable:
            results[client] = {"status": "n/a", "reason": case.not_applicable[client]}
        elif client not in case.clients:
            results[client] = {"status": "skipped", "reason": "not run at this size (--smoke)"}
        elif client in errors:
            results[client] = {
                "status": "timeout" if client in timeouts else "error",
                "reason": errors[client],
            }
        else:
            results[client] = {
                "status": "ok",
                "metrics": {
                    key: {"median": statistics.median(values), "samples": values}
                    for key, values in samples[client].items()
                },
                **({"extra": extras[client]} if extras[client] else {}),
            }
    ratios: dict[str, dict[str, float]] = {}
    for metric in case.metrics:
        ours = _median(results.get("ours"), metric.key)
        row: dict[str, float] = {}
        for other in ("sdk", "fastmcp", "raw"):
            theirs = _median(results.get(other), metric.key)
            if metric.key == "frame" and other == "raw":
                theirs = _median(results.get("raw"), "baseline")  # ours / pandas.DataFrame(records)
            if ours is not None and theirs:
                row[f"ours/{other}"] = ours / theirs
        ratios[metric.key] = row
    report: dict[str, Any] = {
        "id": case.id,
        "title": case.title,
        "note": case.note,
        "params": case.params,
        "repeat": case.repeat,
        "metrics": [m.__dict__ for m in case.metrics],
        "results": results,
        "ratios": ratios,
        "seconds": time.perf_counter() - started,
    }
    if case.own_table:
        report["own_table"] = True
    if case.delay_ms is not None:
        report["ideal"] = ideal_of(case, results)
        if report["ideal"]["share"].get("ours") is not None:
            ratios["rate"]["ours/ideal"] = report["ideal"]["share"]["ours"]
    return report


class RowTimeout(Exception):
    """One client's repetition of a case ran past the case's timeout."""


async def bounded(run: Awaitable[dict[str, Any]], seconds: float) -> dict[str, Any]:
    """``run`` within ``seconds``; past them the run is cancelled and ``RowTimeout`` raised.

    Whatever the cancelled run raises on its way out counts as the timeout when this scope expired:
    the SDK's client, closed while its requests are cancelled, raises an ExceptionGroup of
    BrokenResourceError instead of letting the cancellation through."""
    scope = asyncio.timeout(seconds)
    try:
        async with scope:
            return await run
    except BaseException:
        if scope.expired():
            raise RowTimeout(f"no result within {seconds:g} s") from None
        raise


def ideal_of(case: Case, results: dict[str, Any]) -> dict[str, Any]:
    """The ideal calls/s of a case against a slow server, and each client's share of it."""
    ideal = case.ideal_rate
    share: dict[str, float] = {}
    for client, result in results.items():
        rate = _median(result, "rate")
        if ideal and rate is not None:
            share[client] = rate / ideal
    return {"rate": ideal, "delay_ms": case.delay_ms, "in_flight": case.params["in_flight"], "share": share}


def _median(result: dict[str, Any] | None, key: str) -> float | None:
    if not result or result.get("status") != "ok":
        return None
    metric = result["metrics"].get(key)
    return float(metric["median"]) if metric else None


def start_http_servers(delays: tuple[int, ...] = ()) -> tuple[dict[str, str], list[subprocess.Popen[str]]]:
    """One HTTP echo server per era, and one per server delay (``delay-{ms}``; 0 ms is the modern one).

    A server per delay, not a delay per request, so that every client sends the same requests."""
    urls: dict[str, str] = {}
    procs: list[subprocess.Popen[str]] = []
    wanted: dict[str, tuple[str, ...]] = {"modern": ("--era", "modern"), "legacy": ("--era", "legacy")}
    for delay in delays:
        if delay:
            wanted[f"delay-{delay}"] = ("--era", "modern", "--delay", str(delay))
    try:
        for key, args in wanted.items():
            proc = subprocess.Popen(
                [*ECHO, *args, "--http", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
            )
            procs.append(proc)
            assert proc.stdout is not None
            line = proc.stdout.readline().split()
            if len(line) != 2 or line[0] != "listening":
                raise RuntimeError(f"the HTTP echo server {' '.join(args)} did not start (said {line!r})")
            urls[key] = f"http://127.0.0.1:{line[1]}/mcp"
    except BaseException:
        stop(procs)
        raise
    urls["delay-0"] = urls["modern"]
    return urls, procs


def stop(procs: list[subprocess.Popen[str]]) -> None:
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# --- reporting ------------------------------------------------------------------------------------


def machine() -> dict[str, Any]:
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    ram = None
    try:
        with open("/proc/meminfo") as f:
            ram = round(int(f.readline().split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    versions = {}
    for package in ("mcp-notebook", "mcp", "fastmcp", "anyio", "pydantic", "httpx2", "pandas"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return {
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "ram_gb": ram,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "packages": versions,
    }


def code_state() -> dict[str, Any]:
    """The commit measured, and any uncommitted changes to the library (they are measured too)."""

    def git(*args: str) -> str:
        try:
            out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10)
        except (OSError, subprocess.SubprocessError):
            return ""
        return out.stdout.strip() if out.returncode == 0 else ""

    status = git("status", "--porcelain", "--", "mcp_notebook")
    dirty = [line.split(maxsplit=1)[1] for line in status.splitlines() if line.strip()]
    return {"commit": git("rev-parse", "--short", "HEAD") or None, "uncommitted": dirty}


def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit in ("calls/s", "calls", "sockets"):
        return f"{value:,.0f}"
    if unit in ("MB",):
        return f"{value:.2f}"
    if unit == "KB":
        return f"{value:.1f}"
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.3g}"


def cell(result: dict[str, Any], metric: Metric) -> str:
    status = result.get("status")
    if status in ("n/a", "skipped", "error", "timeout"):
        return str(status)
    return fmt(_median(result, metric.key), metric.unit)


def main_cases(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [case for case in report["cases"] if not case.get("own_table")]


def has_ideal(report: dict[str, Any]) -> bool:
    """Whether the table needs the ideal columns (a run without the slow-server cases keeps today's)."""
    return any("ideal" in case for case in main_cases(report))


def ideal_cells(case: dict[str, Any]) -> tuple[str, str]:
    """The ideal calls/s and ours' share of it: blank for cases without a slow server, "-" at 0 ms."""
    if "ideal" not in case:
        return "", ""
    rate = case["ideal"]["rate"]
    if rate is None:
        return "-", "-"
    share = case["ideal"]["share"].get("ours")
    return fmt(rate, "calls/s"), f"{share:.2f}" if share is not None else "—"


def table_rows(report: dict[str, Any], clients: tuple[str, ...]) -> list[list[str]]:
    with_ideal = has_ideal(report)
    rows = []
    for case in main_cases(report):
        ideal, share = ideal_cells(case)
        for m in case["metrics"]:
            metric = Metric(**m)
            row = [case["id"], f"{metric.label} ({metric.unit})", "↓" if metric.better == "lower" else "↑"]
            row += [cell(case["results"][c], metric) for c in clients]
            if with_ideal:
                row.append(ideal)
            ratios = case["ratios"].get(metric.key, {})
            for other in ("sdk", "fastmcp", "raw"):
                value = ratios.get(f"ours/{other}")
                row.append(f"{value:.2f}" if value is not None else "—")
            if with_ideal:
                row.append(share)
            rows.append(row)
    return rows


def header(clients: tuple[str, ...], with_ideal: bool = False) -> list[str]:
    ideal, share = (["ideal"], ["ours/ideal"]) if with_ideal else ([], [])
    return [
        "case",
        "metric",
        "better",
        *(LABELS[c] for c in clients),
        *ideal,
        "ours/SDK",
        "ours/fastmcp",
        "ours/raw",
        *share,
    ]


LOAD_HEADER = [
    "case",
    "client",
    "completed / calls",
    "failed",
    "RSS after batch 1 (MB)",
    "RSS growth (MB)",
    "peak RSS (MB)",
    "heap growth (KB)",
    "peak sockets",
    "max_connections",
    "s per batch",
]


def load_rows(report: dict[str, Any], clients: tuple[str, ...]) -> list[list[str]]:
    """One row per client of each load case: did every call complete, memory, sockets."""
    rows = []
    for case in report["cases"]:
        if not case.get("own_table"):
            continue
        for client in clients:
            result = case["results"][client]
            row = [case["id"], LABELS[client]]
            if result.get("status") != "ok":
                rows.append(row + [str(result.get("status"))] + [""] * (len(LOAD_HEADER) - 3))
                continue
            extra = result.get("extra", {})
            done = _median(result, "completed")
            calls = extra.get("calls", case["params"]["calls"])
            row.append(f"{done:,.0f} / {calls:,}" if done is not None else f"— / {calls:,}")
            row.append(f"{extra.get('failed', 0):,}" + (" (timed out)" if extra.get("timed_out") else ""))
            for key in ("rss_first_batch_mb", "rss_growth_mb", "rss_peak_mb"):
                row.append(fmt(_median(result, key), "MB"))
            row.append(fmt(_median(result, "heap_growth_kb"), "KB"))
            row.append(fmt(_median(result, "peak_sockets"), "sockets"))
            cap = extra.get("max_connections")
            row.append(f"{cap:,}" if cap is not None else "—")
            row.append(fmt(_median(result, "batch_s"), "s"))
            rows.append(row)
    return rows


def text_table(head: list[str], rows: list[list[str]], left: int = 2) -> str:
    """Aligned columns: the first ``left`` to the left (names), the rest to the right (numbers)."""
    rows = [head, *rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for n, row in enumerate(rows):
        lines.append(
            "  ".join(
                v.ljust(w) if i < left else v.rjust(w)
                for i, (v, w) in enumerate(zip(row, widths, strict=True))
            ).rstrip()
        )
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def markdown_table(head: list[str], rows: list[list[str]], align: list[str]) -> str:
    """``align``: one Markdown alignment marker per column (``---``, ``:-:``, ``--:``)."""
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def evaluate_targets(report: dict[str, Any]) -> list[dict[str, Any]]:
    cases = {c["id"]: c for c in report["cases"]}

    def med(case_id: str, client: str, key: str) -> float | None:
        case = cases.get(case_id)
        return _median(case["results"].get(client), key) if case else None

    def ratio(case_id: str, a: str, b: str, key: str) -> float | None:
        x, y = med(case_id, a, key), med(case_id, b, key)
        return x / y if x is not None and y else None

    targets: list[dict[str, Any]] = []

    def add(name: str, goal: str, value: float | None, met: bool | None, detail: str) -> None:
        targets.append({"target": name, "goal": goal, "value": value, "met": met, "detail": detail})

    def ratio_target(name: str, goal: str, case_id: str, theirs: str, at_least: float, shown: str) -> None:
        """One row per client of ours: calls/s ours/theirs in ``case_id``, met when >= ``at_least``."""
        for client in ("ours", "ours_novalidate"):
            value = ratio(case_id, client, theirs, "rate")
            add(
                f"{name} ({LABELS[client]})",
                goal,
                value,
                None if value is None else value >= at_least,
                shown.format(value) if value is not None else "not measured",
            )

    ratio_target(
        "sequential ≥ 85 % of the raw limit",
        "calls/s ours/raw ≥ 0.85 (stdio, echo server)",
        "sequential/stdio/echo",
        "raw",
        0.85,
        "{:.0%} of raw",
    )
    ratio_target(
        "100 in flight ≥ 10× the SDK client",
        "calls/s ours/SDK ≥ 10 (stdio, echo server)",
        "in-flight-100/stdio/echo",
        "sdk",
        10,
        "{:.2f}×",
    )
    ratio_target(
        "≥ 2× the SDK over HTTP",
        "calls/s ours/SDK ≥ 2 (HTTP, 100 in flight, echo server answering at once)",
        "in-flight-100/http/echo/delay-0",
        "sdk",
        2,
        "{:.2f}×",
    )
    ratio_target(
        "≥ 3× the SDK over HTTP at 20 ms per call",
        "calls/s ours/SDK ≥ 3 (HTTP, 100 in flight, echo server taking 20 ms per call)",
        "in-flight-100/http/echo/delay-20",
        "sdk",
        3,
        "{:.2f}×",
    )
    ideal = cases.get("in-flight-100/http/echo/delay-20", {}).get("ideal", {})
    for client in ("ours", "ours_novalidate"):
        share = ideal.get("share", {}).get(client)
        add(
            f"≥ 60 % of the ideal over HTTP at 20 ms per call ({LABELS[client]})",
            "calls/s ≥ 0.6 × in flight / delay (HTTP, 100 in flight, 20 ms per call: 5,000 calls/s)",
            share,
            None if share is None else share >= 0.6,
            "not measured" if share is None else f"{share:.0%} of {ideal['rate']:,.0f} calls/s",
        )
    targets += load_targets(report)
    first = med("memory/stdio/echo", "ours", "inflight_rss_first_batch_mb")
    growth = med("memory/stdio/echo", "ours", "inflight_rss_growth_mb")
    heap = med("memory/stdio/echo", "ours", "inflight_heap_growth_kb")
    flat = None
    if growth is not None and heap is not None:
        flat = growth <= max(1.0, 0.1 * (first or 0)) and heap <= 256
    add(
        "1,000 in flight with flat memory (ours)",
        "RSS growth from 1 to 5 batches ≤ max(1 MB, 10 % of the first batch's); heap growth ≤ 256 KB",
        growth,
        flat,
        "not measured"
        if growth is None
        else f"RSS +{first:.2f} MB after batch 1, then {growth:+.2f} MB; heap {heap:+.1f} KB",
    )
    ms = med("import", "ours", "ms")
    extra = cases.get("import", {}).get("results", {}).get("ours", {}).get("extra", {})
    libs = extra.get("notebook_libs", "")
    add(
        "import < 100 ms without notebook libraries",
        "median `import mcp_notebook` < 100 ms, no notebook library loaded",
        ms,
        None if ms is None else (ms < 100 and not libs),
        "not measured" if ms is None else f"{ms:.1f} ms; notebook libraries loaded: {libs or 'none'}",
    )
    return targets


def load_targets(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Issue #13's load targets for our client: every call of the load case completed, memory flat
    across its batches (the rule of the stdio memory target), peak sockets ≤ its max_connections."""
    case = next((c for c in report["cases"] if c["id"].startswith("load-")), None)
    result = case["results"].get("ours", {}) if case else {}
    where = f"({case['id']})" if case else ""
    extra = result.get("extra", {})
    done, calls = _median(result, "completed"), extra.get("calls")
    first, growth = _median(result, "rss_first_batch_mb"), _median(result, "rss_growth_mb")
    heap = _median(result, "heap_growth_kb")
    sockets, cap = _median(result, "peak_sockets"), extra.get("max_connections")
    status = result.get("status", "not measured")
    if status == "ok":  # the probe ran but some readings are missing: it ran out of time before them
        status = "not measured (the probe timed out)" if extra.get("timed_out") else "not measured"

    def row(name: str, goal: str, value: float | None, met: bool | None, detail: str) -> dict[str, Any]:
        return {
            "target": f"{name} (ours)",
            "goal": f"{goal} {where}".strip(),
            "value": value,
            "met": met,
            "detail": detail,
        }

    complete = None if done is None or calls is None else done >= calls and not extra.get("failed")
    flat = None
    if growth is not None and first is not None and heap is not None:
        flat = growth <= max(1.0, 0.1 * first) and heap <= 256
    bounded = None if sockets is None or cap is None else sockets <= cap
    return [
        row(
            "1,000 in flight over HTTP: every call completes",
            "every call of the load case answered",
            done,
            complete,
            status
            if done is None
            else f"{done:,.0f} of {calls:,} completed, {extra.get('failed', 0)} failed",
        ),
        row(
            "1,000 in flight over HTTP with flat memory",
            "RSS growth from batch 1 to the last ≤ max(1 MB, 10 % of the first batch's); "
            "heap growth ≤ 256 KB (the stdio rule)",
            growth,
            flat,
            status
            if growth is None or heap is None
            else f"RSS +{first:.2f} MB after batch 1, then {growth:+.2f} MB; heap {heap:+.1f} KB",
        ),
        row(
            "1,000 in flight over HTTP: sockets bounded by max_connections",
            "peak TCP sockets to the server ≤ the client's max_connections",
            sockets,
            bounded,
            status
            if sockets is None
            else f"peak {sockets:.0f} sockets; max_connections {cap if cap is not None else 'not readable'}",
        ),
    ]


def targets_text(targets: list[dict[str, Any]]) -> str:
    lines = []
    for t in targets:
        mark = "n/a" if t["met"] is None else ("MET" if t["met"] else "MISSED")
        lines.append(f"- [{mark}] {t['target']}: {t['detail']}  (goal: {t['goal']})")
    return "\n".join(lines)


# --- main -----------------------------------------------------------------------------------------


def selected(case_id: str, spec: str) -> bool:
    """``--cases``: a part with a wildcard matches whole ids (``in-flight-1/*`` is not in-flight-10),
    any other part is a substring (``http`` selects every HTTP case), as before wildcards existed."""
    for part in spec.split(","):
        if any(c in part for c in "*?["):
            if fnmatch.fnmatchcase(case_id, part):
                return True
        elif part in case_id:
            return True
    return False


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    sizes = dict(SIZES[mode])
    if args.repeat is not None:
        for key in ("repeat", "heavy_repeat", "demo_repeat", "memory_repeat", "import_repeat"):
            sizes[key] = args.repeat if key in ("repeat", "import_repeat") else min(sizes[key], args.repeat)
    clients = tuple(args.clients.split(",")) if args.clients else CLIENTS
    for client in clients:
        if client not in CLIENTS:
            raise SystemExit(f"unknown client {client!r}; choose from {', '.join(CLIENTS)}")
    for client in clients:  # import every library up front, outside any timing
        make(client)
    import pandas  # noqa: F401

    def log(message: str) -> None:
        if not args.quiet:
            print(message, file=sys.stderr, flush=True)

    urls, servers = start_http_servers(tuple(sizes["http_delays"]))
    started = time.perf_counter()
    report: dict[str, Any] = {
        "mode": mode,
        "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "machine": machine(),
        "code": code_state(),
        "sizes": {k: (str(v) if isinstance(v, dict) else v) for k, v in sizes.items()},
        "clients": {c: LABELS[c] for c in clients},
        "cases": [],
    }
    try:
        for case in build_cases(sizes, urls):
            if args.cases and not selected(case.id, args.cases):
                continue
            log(f"{case.id} ({case.repeat}×)")
            report["cases"].append(await run_case(case, clients, log))
    finally:
        stop(servers)
    report["seconds"] = time.perf_counter() - started
    report["targets"] = evaluate_targets(report)
    report["table"] = {"header": header(clients, has_ideal(report)), "rows": table_rows(report, clients)}
    if any(case.get("own_table") for case in report["cases"]):
        report["load_table"] = {"header": LOAD_HEADER, "rows": load_rows(report, clients)}
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n\n")[0])
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="fewer repetitions and calls")
    size.add_argument(
        "--smoke", action="store_true", help="every case once at tiny sizes (for the test suite)"
    )
    parser.add_argument(
        "--json", type=Path, default=HERE / "out" / "results.json", help="where to write JSON"
    )
    parser.add_argument("--repeat", type=int, default=None, help="repetitions of the timing cases")
    parser.add_argument("--clients", default=None, help=f"comma-separated subset of {','.join(CLIENTS)}")
    parser.add_argument(
        "--cases",
        default=None,
        help="comma-separated substrings of case ids to run (`http`: every HTTP case), "
        "or shell-style patterns matching whole ids ('in-flight-100/http/*')",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = parser.parse_args(argv)

    report = asyncio.run(main_async(args))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    table, load = report["table"], report.get("load_table")
    align = ["---", "---", ":-:"] + ["--:"] * (len(table["header"]) - 3)
    markdown = markdown_table(table["header"], table["rows"], align)
    if load:
        markdown += "\n\n" + markdown_table(
            load["header"], load["rows"], ["---", "---"] + ["--:"] * (len(load["header"]) - 2)
        )
    markdown += "\n\nTargets:\n\n" + targets_text(report["targets"]) + "\n"
    args.json.with_suffix(".md").write_text(markdown)
    if table["rows"]:
        print(text_table(table["header"], table["rows"]))
        print()
    if load:
        print(text_table(load["header"], load["rows"]))
        print()
    print(
        "ratio = ours / theirs; ↓ lower is better (ratio < 1: ours is better), ↑ higher is better (ratio > 1)"
    )
    print("raw column of 'DataFrame(result's records)': ours/raw compares with pandas.DataFrame(records)")
    if has_ideal(report):
        print("ideal = calls in flight / the server's delay per call (- at 0 ms); ours/ideal: ours' share")
    print()
    print(targets_text(report["targets"]))
    code = report["code"]
    dirty = ", ".join(code["uncommitted"]) or "none"
    print(f"\ncode: commit {code['commit']}, uncommitted changes measured: {dirty}")
    print(f"{report['mode']} run took {report['seconds']:.0f} s; JSON: {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
