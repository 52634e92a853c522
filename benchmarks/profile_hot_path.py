"""Profile our client's hot path against the echo server (stdio): where does a tools/call's time go?

``python -m benchmarks.profile_hot_path [--calls N] [--in-flight K] [--no-validate] [--pyinstrument]``

Two workloads, each on its own connection, after a warm-up: ``--calls`` sequential ``echo`` calls,
and the same number of calls with ``--in-flight`` of them outstanding at a time. cProfile's top
functions (by own time and by cumulative time) are written to ``benchmarks/out/profile-*.txt`` and
a short summary is printed; ``--pyinstrument`` also writes pyinstrument's call trees (if installed).
Profilers add overhead per Python call, so read the shares, not the absolute times.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import pstats
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mcp_notebook import Client

HERE = Path(__file__).resolve().parent
ECHO = [sys.executable, str(HERE / "echo_server.py")]


async def sequential(client: Client, calls: int, validate: bool) -> None:
    for _ in range(calls):
        await client.call_tool("echo", {"text": "hello"}, validate=validate)


async def in_flight(client: Client, calls: int, concurrency: int, validate: bool) -> None:
    async def worker() -> None:
        for _ in range(calls // concurrency):
            await client.call_tool("echo", {"text": "hello"}, validate=validate)

    await asyncio.gather(*(worker() for _ in range(concurrency)))


async def profiled(kind: str, calls: int, concurrency: int, validate: bool, tool: str) -> tuple[float, Any]:
    async with Client(ECHO) as client:
        for _ in range(50):
            await client.call_tool("echo", {"text": "warm"}, validate=validate)
        await in_flight(client, 200, min(concurrency, 100), validate)
        body = (
            sequential(client, calls, validate)
            if kind == "sequential"
            else in_flight(client, calls, concurrency, validate)
        )
        if tool == "cprofile":
            profiler: Any = cProfile.Profile()
            profiler.enable()
        elif tool == "pyinstrument":
            from pyinstrument import Profiler

            profiler = Profiler(interval=0.0002, async_mode="disabled")
            profiler.start()
        else:
            profiler = None
        started = time.perf_counter()
        await body
        elapsed = time.perf_counter() - started
        if tool == "cprofile":
            profiler.disable()
        elif tool == "pyinstrument":
            profiler.stop()
        return elapsed, profiler


def cprofile_report(profiler: cProfile.Profile, limit: int) -> str:
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.strip_dirs()
    out.write("=== by own time (tottime) ===\n")
    stats.sort_stats("tottime").print_stats(limit)
    out.write("\n=== by cumulative time ===\n")
    stats.sort_stats("cumulative").print_stats(limit)
    return out.getvalue()


def own_time_by_package(profiler: cProfile.Profile) -> list[tuple[str, float]]:
    """Own time grouped into mcp_notebook files, anyio, asyncio, json and the rest."""
    stats = pstats.Stats(profiler)
    groups: dict[str, float] = {}
    for (filename, _line, _name), (_cc, _nc, tottime, _ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        if "mcp_notebook" in filename:
            key = "mcp_notebook/" + filename.split("mcp_notebook/", 1)[1]
        elif "/anyio/" in filename or "/sniffio/" in filename:
            key = "anyio (and sniffio)"
        elif "/asyncio/" in filename or "selectors" in filename:
            key = "asyncio (event loop)"
        elif "/json/" in filename or (filename == "~" and "json" in _name):
            key = "json"
        elif "jsonschema" in filename or "referencing" in filename:
            key = "jsonschema"
        else:
            key = "other (builtins, I/O)" if filename == "~" else filename.rsplit("/", 1)[-1]
        groups[key] = groups.get(key, 0.0) + tottime
    total = sum(groups.values()) or 1.0
    return sorted(((k, v / total) for k, v in groups.items()), key=lambda kv: -kv[1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--in-flight", type=int, default=100)
    parser.add_argument("--no-validate", action="store_true")
    parser.add_argument("--pyinstrument", action="store_true")
    parser.add_argument("--limit", type=int, default=35)
    parser.add_argument("--out", type=Path, default=HERE / "out")
    args = parser.parse_args(argv)
    validate = not args.no_validate
    args.out.mkdir(parents=True, exist_ok=True)
    suffix = "" if validate else "-novalidate"
    for kind in ("sequential", f"in-flight-{args.in_flight}"):
        mode = "sequential" if kind == "sequential" else "in-flight"
        plain, _ = asyncio.run(profiled(mode, args.calls, args.in_flight, validate, "none"))
        elapsed, profiler = asyncio.run(profiled(mode, args.calls, args.in_flight, validate, "cprofile"))
        report = cprofile_report(profiler, args.limit)
        path = args.out / f"profile-{kind}{suffix}.txt"
        shares = own_time_by_package(profiler)
        summary = "\n".join(f"  {share:6.1%}  {name}" for name, share in shares[:14])
        header = (
            f"{kind}: {args.calls} calls, validate={validate}\n"
            f"unprofiled: {plain * 1e6 / args.calls:.0f} µs/call ({args.calls / plain:,.0f} calls/s); "
            f"under cProfile: {elapsed * 1e6 / args.calls:.0f} µs/call\n"
            f"own time by file/package (cProfile):\n{summary}\n\n"
        )
        path.write_text(header + report)
        print(header + f"  → {path}\n")
        if args.pyinstrument:
            _, prof = asyncio.run(profiled(mode, args.calls, args.in_flight, validate, "pyinstrument"))
            tree = args.out / f"profile-{kind}{suffix}.pyinstrument.txt"
            tree.write_text(prof.output_text(unicode=True, color=False, show_all=False))
            print(f"  → {tree}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
