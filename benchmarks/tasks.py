"""Tasks: how long a client takes to bring back the results of tasks, side by side (issue #15).

The bundled demo server's ``build_report`` runs as a task (its work: ``sections`` × ``delay``
seconds). Each client calls it the way it would call any tool and gets the final result; what it
does in between (poll, hear notifications, answer) is its own business. Measured, in one run and
interleaved: the wall time until every result is back, for 1, 20 and 100 tasks at once, and the
requests each client sent per task where it says.

- ours: ``mcp_notebook.Client.call_tool`` (modern era: the 2026-07-28 tasks extension; and the
  same server on the legacy handshake: 2025-11-25 core tasks with status notifications).
- fastmcp: ``fastmcp.Client.call_tool`` with ``fastmcp_tasks`` imported (its client half of the
  extension; it has none for 2025-11-25 tasks).
- SDK: the official ``mcp`` client has no tasks: its call is refused (-32021), shown as n/a.
- raw: the limit for a polling client: no library, newline JSON over the pipe, ``tasks/get``
  exactly every ``pollIntervalMs``.
- ideal: the task's own work time, as if the result arrived the moment it was ready.

Run: ``python -m benchmarks.tasks`` (about a minute; ``--repeat N``, ``--quick``, ``--smoke``).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from typing import Any

from benchmarks.clients import RawStdio, Target

TOOL = "build_report"
SECTIONS, DELAY = 2, 0.25
ARGS = {"topic": "benchmark", "sections": SECTIONS, "delay": DELAY}
DEMO = Target(argv=(sys.executable, "-m", "mcp_notebook.demo"))
EXTENSION = "io.modelcontextprotocol/tasks"


class RawTasks(RawStdio):
    """A raw client that declares the tasks extension and polls each task at its interval."""

    requests_sent = 0

    def _params(self, params: dict[str, Any] | None, progress_token: int | None = None) -> dict[str, Any]:
        stamped = super()._params(params, progress_token)
        meta = dict(stamped["_meta"])
        meta["io.modelcontextprotocol/clientCapabilities"] = {"extensions": {EXTENSION: {}}}
        stamped["_meta"] = meta
        return stamped

    async def request(self, method: str, params: dict[str, Any] | None = None, progress: Any = None) -> Any:
        self.requests_sent += 1
        return await super().request(method, params, progress)

    async def run_task(self) -> dict[str, Any]:
        result = await self.request("tools/call", {"name": TOOL, "arguments": ARGS})
        while result.get("resultType") == "task" or result.get("status") in ("working", "input_required"):
            await asyncio.sleep(result.get("pollIntervalMs", 250) / 1000)
            result = await self.request("tasks/get", {"taskId": result["taskId"]})
        return result["result"]  # type: ignore[no-any-return]


class Runner:
    """One connected client and how it runs one task to its result."""

    name = "?"

    async def connect(self) -> None: ...

    async def run_task(self) -> Any: ...

    def requests(self) -> int | None:
        return None

    async def close(self) -> None: ...


class OursRunner(Runner):
    def __init__(self, protocol: str) -> None:
        self.protocol = protocol
        self.name = "ours" if protocol == "auto" else "ours (2025-11-25)"

    async def connect(self) -> None:
        from mcp_notebook import Client

        self.client = Client(list(DEMO.argv), protocol=self.protocol, timeout=300)
        await self.client.connect()

    async def run_task(self) -> Any:
        return await self.client.call_tool(TOOL, ARGS)

    def requests(self) -> int | None:
        return int(self.client.stats.requests)

    async def close(self) -> None:
        await self.client.aclose()


class FastMcpRunner(Runner):
    name = "fastmcp"

    async def connect(self) -> None:
        import fastmcp_tasks  # noqa: F401  # registers fastmcp's client half of the extension
        from fastmcp import Client
        from fastmcp.client.transports import StdioTransport

        transport = StdioTransport(DEMO.argv[0], list(DEMO.argv[1:]), keep_alive=False)
        self.client = Client(transport)
        await self.client.__aenter__()

    async def run_task(self) -> Any:
        return await self.client.call_tool(TOOL, ARGS)

    async def close(self) -> None:
        await self.client.__aexit__(None, None, None)


class RawRunner(Runner):
    name = "raw"

    async def connect(self) -> None:
        self.raw = RawTasks()
        await self.raw.connect(DEMO)

    async def run_task(self) -> Any:
        return await self.raw.run_task()

    def requests(self) -> int | None:
        return self.raw.requests_sent

    async def close(self) -> None:
        await self.raw.close()


async def sdk_can_run_a_task() -> str:
    """The official client on the same call: what it says."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    server = StdioServerParameters(command=DEMO.argv[0], args=list(DEMO.argv[1:]))
    try:
        async with Client(server, mode="auto") as client:
            await client.call_tool(TOOL, ARGS)
    except Exception as exc:  # whatever it raises is the answer
        while isinstance(exc, ExceptionGroup) and len(exc.exceptions) == 1:
            exc = exc.exceptions[0]
        return f"n/a ({type(exc).__name__}: {str(exc)[:90]})"
    return "ran"


async def one_round(runner: Runner, tasks: int) -> tuple[float, float | None]:
    """Seconds until ``tasks`` concurrent tasks are all back; requests sent per task."""
    before = runner.requests()
    started = time.perf_counter()
    results = await asyncio.gather(*(runner.run_task() for _ in range(tasks)))
    elapsed = time.perf_counter() - started
    assert len(results) == tasks
    after = runner.requests()
    per_task = (after - before) / tasks if before is not None and after is not None else None
    return elapsed, per_task


async def main(repeat: int, sizes: tuple[int, ...]) -> None:
    runners: list[Runner] = [OursRunner("auto"), OursRunner("legacy"), FastMcpRunner(), RawRunner()]
    for runner in runners:
        await runner.connect()
        await runner.run_task()  # warm-up: imports, tool lists, the first -32021
    samples: dict[tuple[str, int], list[tuple[float, float | None]]] = {}
    try:
        for round_number in range(repeat):
            order = runners[round_number % len(runners) :] + runners[: round_number % len(runners)]
            for size in sizes:
                for runner in order:
                    samples.setdefault((runner.name, size), []).append(await one_round(runner, size))
                print(f"round {round_number + 1}/{repeat} done", file=sys.stderr)
    finally:
        for runner in runners:
            await runner.close()
    sdk = await sdk_can_run_a_task()
    ideal = SECTIONS * DELAY
    names = [runner.name for runner in runners]
    print(
        f"\nTasks to their results: {TOOL}({SECTIONS} sections × {DELAY} s), demo server over stdio, "
        f"median of {repeat}"
    )
    print(f"SDK: {sdk}\n")
    head = ["tasks at once", *(f"{n} s" for n in names), "ideal s", "ours/fastmcp", "ours/raw", "ideal/ours"]
    print(" | ".join(head))
    for size in sizes:
        medians = {n: statistics.median(s[0] for s in samples[(n, size)]) for n in names}
        cells = [str(size), *(f"{medians[n]:.3f}" for n in names), f"{ideal:.3f}"]
        cells += [
            f"{medians['ours'] / medians['fastmcp']:.2f}",
            f"{medians['ours'] / medians['raw']:.2f}",
            f"{ideal / medians['ours']:.0%}",
        ]
        print(" | ".join(cells))
    print("\nrequests per task (where the client counts them):")
    for size in sizes:
        counts = []
        for n in names:
            values = [s[1] for s in samples[(n, size)] if s[1] is not None]
            counts.append(f"{n}={statistics.median(values):.1f}" if values else f"{n}=?")
        print(f"  {size} at once: " + ", ".join(counts))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="3 repetitions, 1 and 20 tasks")
    parser.add_argument("--smoke", action="store_true", help="once, 1 and 3 tasks (the test suite)")
    options = parser.parse_args()
    if options.smoke:
        asyncio.run(main(1, (1, 3)))
    elif options.quick:
        asyncio.run(main(3, (1, 20)))
    else:
        asyncio.run(main(options.repeat, (1, 20, 100)))
