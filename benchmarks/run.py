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
        "http_in_flight": {10: 1000, 100: 2000},
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
        "http_in_flight": {10: 300, 100: 500},
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
        "http_in_flight": {10: 10, 100: 20},
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


# --- helpers --------------------------------------------------------------------------------------


def echo_target(*args: str) -> Target:
    return Target(argv=(*ECHO, *args))


async def connected(client: str, target: Target, mode: str = "auto") -> Adapter:
    adapter = make(client, http=target.http)
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


def in_flight(target: Target, concurrency: int, calls: int) -> Callable[[str], Awaitable[dict[str, Any]]]:
    per_worker = max(1, calls // concurrency)

    async def run(client: str) -> dict[str, Any]:
        adapter = await connected(client, target)
        try:
            await warm_up(adapter)
            await asyncio.gather(*(adapter.call("echo", {"text": "w"}) for _ in range(min(concurrency, 100))))

            async def worker() -> None:
                args = {"text": "hello"}
                for _ in range(per_worker):
                    await adapter.call("echo", args)

            gc.collect()
            started = time.perf_counter()
            await asyncio.gather(*(worker() for _ in range(concurrency)))
            elapsed = time.perf_counter() - started
        finally:
            await adapter.close()
        return {"rate": concurrency * per_worker / elapsed}

    return run


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


def memory(sizes: dict[str, Any]) -> Callable[[str], Awaitable[dict[str, Any]]]:
    async def run(client: str) -> dict[str, Any]:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "benchmarks.memory_probe",
            "--client",
            client,
            "--flood",
            str(sizes["flood"]),
            "--batch",
            str(sizes["mem_batch"]),
            "--batches",
            str(sizes["mem_batches"]),
            "--settle",
            str(sizes.get("mem_settle", 0.2)),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=str(ROOT),
        )
        out, err = await proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"memory probe failed: {err.decode()[-500:]}")
        data = json.loads(out.decode().strip().splitlines()[-1])
        return {k: v for k, v in data.items() if isinstance(v, int | float) and v is not None}

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
    for level, calls in sizes["http_in_flight"].items():
        concurrency = max(1, level // div)
        cases.append(
            Case(
                f"in-flight-{level}/http/echo",
                f"throughput, {level:,} calls in flight on one connection, HTTP, echo server",
                [Metric("rate", "calls/s", "calls/s", "higher")],
                in_flight(Target(url=http_urls["modern"]), concurrency, calls),
                heavy,
                params={"in_flight": concurrency, "calls": calls},
                note="HTTP/1.1: at most 100 connections (httpx2's default pool), so ≤ 100 truly in flight",
            )
        )
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


# --- running --------------------------------------------------------------------------------------


async def run_case(case: Case, clients: tuple[str, ...], log: Callable[[str], None]) -> dict[str, Any]:
    active = [c for c in clients if c in case.clients and c not in case.not_applicable]
    samples: dict[str, dict[str, list[float]]] = {c: {} for c in active}
    extras: dict[str, dict[str, Any]] = {c: {} for c in active}
    errors: dict[str, str] = {}
    started = time.perf_counter()
    for rep in range(case.repeat):
        shift = rep % max(1, len(active))
        for client in active[shift:] + active[:shift]:
            if client in errors:
                continue
            gc.collect()
            try:
                values = await asyncio.wait_for(case.run(client), RUN_TIMEOUT)
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
            results[client] = {"status": "error", "reason": errors[client]}
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
    return {
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


def _median(result: dict[str, Any] | None, key: str) -> float | None:
    if not result or result.get("status") != "ok":
        return None
    metric = result["metrics"].get(key)
    return float(metric["median"]) if metric else None


def start_http_servers() -> tuple[dict[str, str], list[subprocess.Popen[str]]]:
    urls: dict[str, str] = {}
    procs: list[subprocess.Popen[str]] = []
    for era in ("modern", "legacy"):
        proc = subprocess.Popen(
            [*ECHO, "--era", era, "--http", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        procs.append(proc)
        assert proc.stdout is not None
        line = proc.stdout.readline().split()
        if len(line) != 2 or line[0] != "listening":
            raise RuntimeError(f"the HTTP echo server did not start (said {line!r})")
        urls[era] = f"http://127.0.0.1:{line[1]}/mcp"
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
    if unit == "calls/s":
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
    if status == "n/a":
        return "n/a"
    if status == "skipped":
        return "skipped"
    if status == "error":
        return "error"
    return fmt(_median(result, metric.key), metric.unit)


def table_rows(report: dict[str, Any], clients: tuple[str, ...]) -> list[list[str]]:
    rows = []
    for case in report["cases"]:
        for m in case["metrics"]:
            metric = Metric(**m)
            row = [case["id"], f"{metric.label} ({metric.unit})", "↓" if metric.better == "lower" else "↑"]
            row += [cell(case["results"][c], metric) for c in clients]
            ratios = case["ratios"].get(metric.key, {})
            for other in ("sdk", "fastmcp", "raw"):
                value = ratios.get(f"ours/{other}")
                row.append(f"{value:.2f}" if value is not None else "—")
            rows.append(row)
    return rows


def header(clients: tuple[str, ...]) -> list[str]:
    return ["case", "metric", "better", *(LABELS[c] for c in clients), "ours/SDK", "ours/fastmcp", "ours/raw"]


def text_table(report: dict[str, Any], clients: tuple[str, ...]) -> str:
    rows = [header(clients), *table_rows(report, clients)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for n, row in enumerate(rows):
        lines.append(
            "  ".join(
                v.ljust(w) if i < 2 else v.rjust(w) for i, (v, w) in enumerate(zip(row, widths, strict=True))
            )
        )
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def markdown_table(report: dict[str, Any], clients: tuple[str, ...]) -> str:
    head = header(clients)
    lines = [
        "| " + " | ".join(head) + " |",
        "|" + "|".join(["---", "---", ":-:"] + ["--:"] * (len(head) - 3)) + "|",
    ]
    for row in table_rows(report, clients):
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
        "calls/s ours/SDK ≥ 2 (HTTP, 100 in flight, echo server)",
        "in-flight-100/http/echo",
        "sdk",
        2,
        "{:.2f}×",
    )
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


def targets_text(targets: list[dict[str, Any]]) -> str:
    lines = []
    for t in targets:
        mark = "n/a" if t["met"] is None else ("MET" if t["met"] else "MISSED")
        lines.append(f"- [{mark}] {t['target']}: {t['detail']}  (goal: {t['goal']})")
    return "\n".join(lines)


# --- main -----------------------------------------------------------------------------------------


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

    urls, servers = start_http_servers()
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
            if args.cases and not any(part in case.id for part in args.cases.split(",")):
                continue
            log(f"{case.id} ({case.repeat}×)")
            report["cases"].append(await run_case(case, clients, log))
    finally:
        stop(servers)
    report["seconds"] = time.perf_counter() - started
    report["targets"] = evaluate_targets(report)
    report["table"] = {"header": header(clients), "rows": table_rows(report, clients)}
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
    parser.add_argument("--cases", default=None, help="comma-separated substrings of case ids to run")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = parser.parse_args(argv)

    report = asyncio.run(main_async(args))
    clients = tuple(report["clients"])
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    markdown = markdown_table(report, clients) + "\n\nTargets:\n\n" + targets_text(report["targets"]) + "\n"
    args.json.with_suffix(".md").write_text(markdown)
    print(text_table(report, clients))
    print()
    print(
        "ratio = ours / theirs; ↓ lower is better (ratio < 1: ours is better), ↑ higher is better (ratio > 1)"
    )
    print("raw column of 'DataFrame(result's records)': ours/raw compares with pandas.DataFrame(records)")
    print()
    print(targets_text(report["targets"]))
    code = report["code"]
    dirty = ", ".join(code["uncommitted"]) or "none"
    print(f"\ncode: commit {code['commit']}, uncommitted changes measured: {dirty}")
    print(f"{report['mode']} run took {report['seconds']:.0f} s; JSON: {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
