"""Many servers: how long until every server's tools are in one table, side by side (issue #16).

Four stdio servers of different start-up costs: two of our demo server on the official SDK (a
Python process, about a second to import), server-everything (node) and a "slow" demo server that
sleeps ``SLOW`` seconds before it starts: a server on a busy machine or behind a cold cache, the
slowest of the group. A fifth, whose command does not exist, joins in the runs marked "+ broken".

Measured in one run, interleaved, each the time from nothing to one table of every server's tools:

- ours: ``ClientGroup(servers).connect()`` then ``list_tools()``: every server at once.
- fastmcp: ``fastmcp.Client({"mcpServers": ...})`` (its multi-server config client, which mounts
  every server on one in-process proxy) entered, then ``list_tools()``.
- SDK: the official ``ClientSessionGroup``, ``connect_to_server`` for each server as its docs
  show (one after another), then ``.tools``.
- slowest alone: our ``Client`` on the slow server alone: the limit for connecting in parallel.
- sum alone: the four servers' times alone added up: what connecting one after another costs.

The claim: ours takes about as long as the slowest server alone (ratio near 1), and a server that
cannot start costs the others nothing.

Run: ``python -m benchmarks.group`` (about a minute; ``--repeat N``, ``--smoke``).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from tests.conftest import EVERYTHING_JS

SLOW = 2.0
DEMO = [sys.executable, "-m", "mcp_notebook.demo"]
_LATE_START = "import runpy, sys, time; time.sleep({delay}); sys.argv = ['demo']; " + (
    "runpy.run_module('mcp_notebook.demo', run_name='__main__')"
)
MISSING = ["/nonexistent/mcp-server-that-is-not-there"]


def servers(slow: float) -> dict[str, list[str]]:
    return {
        "alpha": DEMO,
        "beta": DEMO,
        "everything": ["node", str(EVERYTHING_JS), "stdio"],
        "slow": [sys.executable, "-c", _LATE_START.format(delay=slow)],
    }


async def ours(group_servers: dict[str, list[str]]) -> int:
    from mcp_notebook.group import ClientGroup

    # One attempt: the broken server's retries run in the background and never hold up connect().
    async with ClientGroup(group_servers, max_reconnect_attempts=0) as group:
        return len(await group.list_tools())


async def fastmcp(group_servers: dict[str, list[str]]) -> int:
    from fastmcp import Client

    config = {"mcpServers": {n: {"command": argv[0], "args": argv[1:]} for n, argv in group_servers.items()}}
    async with Client(config) as client:
        return len(await client.list_tools())


async def sdk(group_servers: dict[str, list[str]]) -> int:
    from mcp.client.session_group import ClientSessionGroup
    from mcp.client.stdio import StdioServerParameters

    async with ClientSessionGroup(component_name_hook=_sdk_name) as group:
        for argv in group_servers.values():
            await group.connect_to_server(StdioServerParameters(command=argv[0], args=argv[1:]))
        return len(group.tools)


def _sdk_name(name: str, info: Any) -> str:
    # The SDK refuses two servers with one tool name; qualify by server (two demos share names).
    return f"{info.name}-{id(info)}.{name}"


async def alone(argv: list[str]) -> int:
    from mcp_notebook import Client

    async with Client(argv) as client:
        return len(await client.list_tools())


async def timed(run: Callable[[], Awaitable[int]]) -> tuple[float | None, str]:
    """(seconds, note): None and the error's type when the client could not do it."""
    started = time.perf_counter()
    try:
        tools = await asyncio.wait_for(run(), timeout=120)
    except Exception as exc:  # a client that cannot cope with this case: shown, not a crash
        return None, f"fails: {type(exc).__name__}"
    return time.perf_counter() - started, f"{tools} tools"


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _ratio(a: float | None, b: float | None) -> str:
    return "n/a" if a is None or b is None or b == 0 else f"{a / b:.2f}"


async def main_async(repeat: int, slow: float) -> None:
    base = servers(slow)
    broken = {**base, "broken": MISSING}
    cases: dict[str, Callable[[], Awaitable[int]]] = {
        "slowest alone": lambda: alone(base["slow"]),
        "ours": lambda: ours(base),
        "ours + broken": lambda: ours(broken),
        "fastmcp": lambda: fastmcp(base),
        "fastmcp + broken": lambda: fastmcp(broken),
        "SDK": lambda: sdk(base),
        "SDK + broken": lambda: sdk(broken),
    }
    for name in ("alpha", "beta", "everything"):
        cases[f"{name} alone"] = lambda name=name: alone(base[name])  # type: ignore[misc]
    times: dict[str, list[float]] = {name: [] for name in cases}
    notes: dict[str, str] = {}
    for _ in range(repeat):  # interleaved: a noisy moment hits every client alike
        for name, run in cases.items():
            seconds, note = await timed(run)
            notes[name] = note
            if seconds is not None:
                times[name].append(seconds)
    median = {name: statistics.median(v) if v else None for name, v in times.items()}
    singles = [median[n] for n in ("alpha alone", "beta alone", "everything alone", "slowest alone")]
    summed = None if any(s is None for s in singles) else sum(s for s in singles if s is not None)
    slowest = median["slowest alone"]
    title = "# Many servers: seconds to one table of every server's tools"
    print(f"{title} (median of {repeat}; slow = {slow:g} s)")
    print()
    print("case | seconds | /slowest alone | what it got")
    print("--- | --- | --- | ---")
    rows = ["ours", "ours + broken", "fastmcp", "fastmcp + broken", "SDK", "SDK + broken", "slowest alone"]
    for name in rows:
        print(f"{name} | {_fmt(median[name])} | {_ratio(median[name], slowest)} | {notes[name]}")
    print(f"sum alone | {_fmt(summed)} | {_ratio(summed, slowest)} | one after another")
    print()
    print(
        f"ours/slowest alone: {_ratio(median['ours'], slowest)}; ours/fastmcp: "
        f"{_ratio(median['ours'], median['fastmcp'])}; ours/SDK: {_ratio(median['ours'], median['SDK'])}; "
        f"ours + broken/ours: {_ratio(median['ours + broken'], median['ours'])}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--slow", type=float, default=SLOW, help="seconds the slow server waits before starting"
    )
    parser.add_argument("--smoke", action="store_true", help="once, with a short wait: checks that it runs")
    args = parser.parse_args()
    if args.smoke:
        args.repeat, args.slow = 1, 0.5
    asyncio.run(main_async(args.repeat, args.slow))


if __name__ == "__main__":
    main()
