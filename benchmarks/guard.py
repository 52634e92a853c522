"""The benchmark's ratio goals as a check CI runs: ``python -m benchmarks.guard [--rounds N]``.

Why: a quarter of the pipelined throughput once went unnoticed across a wave of changes (issue
#41), because nothing failed when a ratio fell. This runs the few cases the goals are about, at
small sizes, each client in turn within every round (the order rotating), and compares the
medians' ratios with the floors in ``benchmarks/floors.toml``. A ratio below its floor (or a heap
above its ceiling) fails the run, naming the case.

Ratios, not absolute rates: our client and the one we compare it with run side by side on the
same machine in the same minute, so a noisy neighbour slows both. The floors sit well below the
ratios measured when they were written (the file says when, and on which commit), so only a real
loss fails; raise them when the code gets faster. ``--write`` prints today's medians in the file's
format, to set new floors from.

Kept out of the parallel test run (scripts/test.sh runs it on its own line, after pytest): two
processes measuring at once would measure each other.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
import tomllib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.run import echo_target, in_flight, probe_json, sequential

HERE = Path(__file__).resolve().parent
FLOORS = HERE / "floors.toml"

#: Calls per measurement: enough for a rate to mean something, few enough for CI's budget.
IN_FLIGHT_CALLS = 4000
SEQUENTIAL_CALLS = 1000


@dataclass(frozen=True)
class Ratio:
    """calls/s of ``ours`` over ``theirs`` in one case, which must stay at or above its floor."""

    name: str
    case: Callable[[], Callable[[str], Awaitable[dict[str, Any]]]]
    theirs: str


RATIOS = (
    Ratio(
        "in-flight-100/stdio/echo ours/SDK",
        lambda: in_flight(echo_target(), 100, IN_FLIGHT_CALLS),
        "sdk",
    ),
    Ratio("sequential/stdio/echo ours/raw", lambda: sequential(echo_target(), SEQUENTIAL_CALLS), "raw"),
)

#: Heap figures from benchmarks.memory_probe (KB, lower is better), which must stay at or below
#: their ceilings (tracemalloc's figures repeat from run to run).
HEAPS = {
    "memory/stdio/echo idle heap KB": "idle_heap_kb",
    "memory/stdio/echo in-flight heap growth KB": "inflight_heap_growth_kb",
}


#: Python function calls per tool call, counted by cProfile (deterministic, unlike a rate on a
#: shared machine: a cancel scope or a backend lookup more per call shows at once).
CALL_COUNTS = {
    "in-flight-100/stdio/echo Python calls per call": "in-flight",
    "sequential/stdio/echo Python calls per call": "sequential",
}
COUNTED_CALLS = 1000


async def python_calls_per_call(mode: str) -> float:
    """How many Python function calls (ours, anyio's, asyncio's, builtins) one echo call costs."""
    import pstats

    from benchmarks.profile_hot_path import profiled

    _, profiler = await profiled(mode, COUNTED_CALLS, 100, True, "cprofile")
    stats = pstats.Stats(profiler)
    total = sum(calls for (_, calls, _, _, _) in stats.stats.values())  # type: ignore[attr-defined]
    return float(total) / COUNTED_CALLS


async def measure(rounds: int, log: Callable[[str], None] = print) -> dict[str, float]:
    """Each ratio's median over ``rounds`` alternated rounds, and each heap figure's median."""
    rates: dict[tuple[str, str], list[float]] = {}
    for round_ in range(rounds):
        for ratio in RATIOS:
            clients = ["ours", ratio.theirs]
            if round_ % 2:
                clients.reverse()  # neither client always runs first (warm caches, a neighbour's burst)
            for client in clients:
                result = await ratio.case()(client)
                rates.setdefault((ratio.name, client), []).append(result["rate"])
    measured = {
        ratio.name: statistics.median(rates[ratio.name, "ours"])
        / statistics.median(rates[ratio.name, ratio.theirs])
        for ratio in RATIOS
    }
    heaps: dict[str, list[float]] = {}
    for _ in range(max(1, rounds // 2)):
        probe = await probe_json(
            "benchmarks.memory_probe",
            *("--client", "ours", "--flood", "100", "--batch", "200", "--batches", "3"),
            *("--settle", "0.05"),
        )
        for name, key in HEAPS.items():
            heaps.setdefault(name, []).append(float(probe[key]))
    measured.update({name: statistics.median(values) for name, values in heaps.items()})
    for name, mode in CALL_COUNTS.items():
        measured[name] = min([await python_calls_per_call(mode) for _ in range(2)])
    for name, value in measured.items():
        log(f"  {name}: {value:.2f}")
    return measured


def load_limits(path: Path = FLOORS) -> dict[str, Any]:
    with path.open("rb") as file:
        return tomllib.load(file)


def failures(measured: Mapping[str, float], limits: Mapping[str, Any]) -> list[str]:
    """One line per case past its limit (a ratio below its floor, a heap above its ceiling), or
    missing from the measurement; empty when every case is within its limit."""
    out = []
    for name, floor in limits.get("floors", {}).items():
        value = measured.get(name)
        if value is None:
            out.append(f"{name}: not measured (floor {floor})")
        elif value < floor:
            out.append(f"{name}: {value:.2f} is below its floor {floor}")
    for name, ceiling in limits.get("ceilings", {}).items():
        value = measured.get(name)
        if value is None:
            out.append(f"{name}: not measured (ceiling {ceiling})")
        elif value > ceiling:
            out.append(f"{name}: {value:.2f} is above its ceiling {ceiling}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="alternated rounds (the median is kept)")
    parser.add_argument("--floors", type=Path, default=FLOORS)
    parser.add_argument("--write", action="store_true", help="print today's medians; check nothing")
    args = parser.parse_args(argv)
    limits = load_limits(args.floors)
    started = time.perf_counter()
    print(f"benchmark guard: {args.rounds} alternated rounds (floors from {args.floors.name})")
    measured = asyncio.run(measure(args.rounds))
    print(f"  ({time.perf_counter() - started:.0f} s)")
    if args.write:
        for name, value in measured.items():
            print(f'"{name}" = {value:.2f}')
        return 0
    failed = failures(measured, limits)
    for line in failed:
        print(f"FAIL {line}")
    if not failed:
        print("every figure is within its limit (benchmarks/floors.toml)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
