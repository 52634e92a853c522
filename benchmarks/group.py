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

A second table does the same for the issue's five: the SDK demo server over stdio (modern era),
server-everything over stdio (legacy), the SDK over Streamable HTTP, server-everything over
HTTP+SSE (both already running, as remote servers are) and the missing command.

The claim: ours takes about as long as the slowest server alone (ratio near 1; on 2 cores the
Python servers' imports compete for the CPU, which the ratio includes), and a server that cannot
start costs the others nothing.

Run: ``python -m benchmarks.group`` (about three minutes; ``--repeat N``, ``--smoke``).
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
from tests.http_peers import everything_http, sdk_http

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


# A server: an argv list (stdio), or a URL (Streamable HTTP; one ending in /sse is HTTP+SSE).
Server = list[str] | str


def _ours_target(server: Server) -> Any:
    if isinstance(server, str) and server.endswith("/sse"):
        from mcp_notebook.transports._http import HttpTransport

        return HttpTransport(server, mode="sse")  # as a config entry of type "sse" gives
    return server


async def ours(group_servers: dict[str, Server]) -> int:
    from mcp_notebook.client._client_group import ClientGroup

    # One attempt: the broken server's retries run in the background and never hold up connect().
    targets = {name: _ours_target(server) for name, server in group_servers.items()}
    async with ClientGroup(targets, max_reconnect_attempts=0) as group:
        return len(await group.list_tools())


def _fastmcp_entry(server: Server) -> dict[str, Any]:
    if isinstance(server, str):
        return {"url": server, "transport": "sse" if server.endswith("/sse") else "http"}
    return {"command": server[0], "args": server[1:]}


async def fastmcp(group_servers: dict[str, Server]) -> int:
    from fastmcp import Client

    config = {"mcpServers": {name: _fastmcp_entry(server) for name, server in group_servers.items()}}
    async with Client(config) as client:
        return len(await client.list_tools())


async def sdk(group_servers: dict[str, Server]) -> int:
    from mcp.client.session_group import (
        ClientSessionGroup,
        SseServerParameters,
        StreamableHttpParameters,
    )
    from mcp.client.stdio import StdioServerParameters

    async with ClientSessionGroup(component_name_hook=_sdk_name) as group:
        for server in group_servers.values():
            if isinstance(server, str) and server.endswith("/sse"):
                params: Any = SseServerParameters(url=server)
            elif isinstance(server, str):
                params = StreamableHttpParameters(url=server)
            else:
                params = StdioServerParameters(command=server[0], args=server[1:])
            await group.connect_to_server(params)
        return len(group.tools)


def _sdk_name(name: str, info: Any) -> str:
    # The SDK refuses two servers with one tool name; qualify by server (two demos share names).
    return f"{info.name}-{id(info)}.{name}"


async def alone(server: Server) -> int:
    from mcp_notebook import Client

    async with Client(_ours_target(server)) as client:
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


async def scenario(title: str, base: dict[str, Server], slowest_name: str, repeat: int) -> None:
    """One table: every client on ``base``, and on ``base`` plus a server that cannot start."""
    broken = {**base, "broken": MISSING}
    cases: dict[str, Callable[[], Awaitable[int]]] = {
        "ours": lambda: ours(base),
        "ours + broken": lambda: ours(broken),
        "fastmcp": lambda: fastmcp(base),
        "fastmcp + broken": lambda: fastmcp(broken),
        "SDK": lambda: sdk(base),
        "SDK + broken": lambda: sdk(broken),
    }
    for name, server in base.items():
        cases[f"{name} alone"] = lambda server=server: alone(server)  # type: ignore[misc]
    times: dict[str, list[float]] = {name: [] for name in cases}
    notes: dict[str, str] = {}
    for _ in range(repeat):  # interleaved: a noisy moment hits every client alike
        for name, run in cases.items():
            seconds, note = await timed(run)
            notes[name] = note
            if seconds is not None:
                times[name].append(seconds)
    median = {name: statistics.median(v) if v else None for name, v in times.items()}
    singles = [median[f"{name} alone"] for name in base]
    summed = None if any(s is None for s in singles) else sum(s for s in singles if s is not None)
    slowest = median[f"{slowest_name} alone"]
    print(f"{title} (median of {repeat})")
    print()
    print("case | seconds | /slowest alone | what it got")
    print("--- | --- | --- | ---")
    for name in [*list(cases)[:6], f"{slowest_name} alone"]:
        print(f"{name} | {_fmt(median[name])} | {_ratio(median[name], slowest)} | {notes[name]}")
    print(f"sum alone | {_fmt(summed)} | {_ratio(summed, slowest)} | one after another")
    print()
    print(
        f"ours/slowest alone: {_ratio(median['ours'], slowest)}; ours/fastmcp: "
        f"{_ratio(median['ours'], median['fastmcp'])}; ours/SDK: {_ratio(median['ours'], median['SDK'])}; "
        f"ours + broken/ours: {_ratio(median['ours + broken'], median['ours'])}"
    )
    print()


async def main_async(repeat: int, slow: float) -> None:
    title = "# Many servers: seconds to one table of every server's tools"
    await scenario(f"{title}, four stdio servers, one slow ({slow:g} s)", servers(slow), "slow", repeat)
    # The five: stdio in both eras, the SDK over Streamable HTTP, server-everything over SSE
    # (those two already running, as remote servers are), and the missing command.
    with sdk_http("modern") as web, everything_http("sse") as sse:
        five = {
            "demo": DEMO,
            "everything": ["node", str(EVERYTHING_JS), "stdio"],
            "sdk-http": web.url,
            "everything-sse": sse.url,
        }
        await scenario(f"{title}, stdio and HTTP in both eras", five, "demo", repeat)


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
