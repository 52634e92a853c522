"""A soak run: one connection under mixed load, its server killed every few seconds.

What a notebook left open all afternoon does to a client: calls, progress, server log messages,
list refreshes and malformed frames all at once, while the server process dies (SIGKILL) every
``--kill-every`` seconds and is restarted by the client. Every call must end (answered, or failed
with an ``McpError`` because its server died), nothing may hang, and memory, tasks and file
descriptors must stay flat: what the first half of the run grew to is what the second half ends
at, and once the client is closed the tasks, descriptors and child processes are back where they
were before it.

    python -m benchmarks.soak                      # 30 minutes, the documented run
    python -m benchmarks.soak --seconds 60         # what CI runs (tests/test_soak.py)

It prints one JSON report (also the return value of :func:`soak`) and exits non-zero when an
invariant broke. The server is ``benchmarks/echo_server.py`` over stdio in the legacy era (so
``flood(kind="log")`` sends log notifications and ``garbage`` writes malformed and stray lines).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psutil

from mcp_notebook import Client, McpError

ROOT = Path(__file__).resolve().parent.parent
ECHO = [sys.executable, str(ROOT / "benchmarks" / "echo_server.py"), "--era", "legacy"]
#: Growth allowed between the middle and the end of a run. Python's allocator keeps arenas, so
#: RSS moves by a few MB for reasons of its own; a leak of one object per call over tens of
#: thousands of calls is well above this.
RSS_SLACK_MB = 16.0
CALL_TIMEOUT = 20.0


@dataclass
class Report:
    seconds: float
    kill_every: float
    kills: int = 0
    calls: int = 0
    ok: int = 0
    failed: dict[str, int] = field(default_factory=dict)
    hung: int = 0
    malformed_frames: int = 0
    reconnects: int = 0
    rss_mb: dict[str, float] = field(default_factory=dict)
    tasks: dict[str, int] = field(default_factory=dict)
    fds: dict[str, int] = field(default_factory=dict)
    children_after: int = 0
    problems: list[str] = field(default_factory=list)


def _rss_mb() -> float:
    return psutil.Process().memory_info().rss / 1e6


def _fds() -> int:
    process = psutil.Process()
    return process.num_fds() if hasattr(process, "num_fds") else process.num_handles()


def _children() -> int:
    return len([p for p in psutil.Process().children(recursive=True) if p.status() != psutil.STATUS_ZOMBIE])


async def soak(seconds: float, *, kill_every: float = 3.0, workers: int = 16) -> Report:
    report = Report(seconds=seconds, kill_every=kill_every)
    gc.collect()
    report.tasks["before"] = len(asyncio.all_tasks())
    report.fds["before"] = _fds()
    started = time.monotonic()
    stop_at = started + seconds
    samples: list[tuple[float, float]] = []

    async with Client(ECHO, timeout=CALL_TIMEOUT, backoff_initial=0.05, max_reconnect_attempts=50) as client:

        async def one_call(index: int) -> None:
            kind = index % 5
            report.calls += 1
            try:
                async with asyncio.timeout(CALL_TIMEOUT * 2):
                    if kind == 0:
                        await client.call_tool("flood", {"count": 20}, progress=lambda p, t, m: None)
                    elif kind == 1:
                        await client.call_tool("flood", {"count": 20, "kind": "log"})
                    elif kind == 2:
                        await client.call_tool("garbage", {})
                    elif kind == 3:
                        await client.list_tools(refresh=True)
                    else:
                        await client.call_tool("echo", {"text": f"call {index}"})
                report.ok += 1
            except McpError as exc:
                report.failed[exc.kind] = report.failed.get(exc.kind, 0) + 1
            except TimeoutError:
                report.hung += 1

        async def worker(offset: int) -> None:
            index = offset
            while time.monotonic() < stop_at and client.status != "closed":
                await one_call(index)
                index += workers

        async def killer() -> None:
            while time.monotonic() + kill_every < stop_at:
                await asyncio.sleep(kill_every)
                pid = getattr(client._transport, "pid", None)
                if pid is not None:
                    try:
                        psutil.Process(pid).kill()
                        report.kills += 1
                    except psutil.NoSuchProcess:
                        pass

        async def sampler() -> None:
            while time.monotonic() < stop_at:
                gc.collect()
                samples.append((time.monotonic() - started, _rss_mb()))
                await asyncio.sleep(max(0.5, seconds / 40))

        async with asyncio.TaskGroup() as tg:
            for offset in range(workers):
                tg.create_task(worker(offset))
            tg.create_task(killer())
            tg.create_task(sampler())
        stats = client.stats
        report.malformed_frames = stats.malformed_frames
        report.reconnects = stats.reconnects
        report.tasks["during_end"] = len(asyncio.all_tasks())

    gc.collect()
    await asyncio.sleep(0.5)  # let closed transports release their descriptors
    report.tasks["after"] = len(asyncio.all_tasks())
    report.fds["after"] = _fds()
    report.children_after = _children()
    half = [rss for at, rss in samples if at >= seconds / 2]
    first = [rss for at, rss in samples if at < seconds / 2]
    if first and half:
        report.rss_mb = {"first_half_max": max(first), "second_half_max": max(half), "end": half[-1]}
    _judge(report)
    return report


def _judge(report: Report) -> None:
    problems = report.problems
    if report.hung:
        problems.append(f"{report.hung} calls hung past twice their deadline")
    if report.failed.get("closed"):
        problems.append(f"the client closed itself: {report.failed['closed']} calls failed as closed")
    if report.ok == 0:
        problems.append("no call succeeded")
    if report.kills and report.reconnects < report.kills // 2:
        problems.append(f"{report.kills} kills but only {report.reconnects} reconnects")
    if report.malformed_frames == 0:
        problems.append("the malformed frames were never seen (is the garbage tool called?)")
    if report.tasks["after"] > report.tasks["before"]:
        problems.append(f"tasks left behind: {report.tasks['before']} before, {report.tasks['after']} after")
    if report.fds["after"] > report.fds["before"] + 2:
        problems.append(
            f"file descriptors leaked: {report.fds['before']} before, {report.fds['after']} after"
        )
    if report.children_after:
        problems.append(f"{report.children_after} server processes left running")
    rss = report.rss_mb
    if rss and rss["second_half_max"] > rss["first_half_max"] + RSS_SLACK_MB:
        problems.append(
            f"memory grew: {rss['first_half_max']:.1f} MB in the first half, "
            f"{rss['second_half_max']:.1f} MB in the second (slack {RSS_SLACK_MB:g} MB)"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--seconds", type=float, default=1800.0)
    parser.add_argument("--kill-every", type=float, default=3.0)
    parser.add_argument("--workers", type=int, default=16)
    args = parser.parse_args(argv)
    os.environ.setdefault("PYTHONFAULTHANDLER", "1")
    # The garbage tool makes the client warn about every malformed line; the report counts them.
    logging.getLogger("mcp_notebook").setLevel(logging.ERROR)
    report = asyncio.run(soak(args.seconds, kill_every=args.kill_every, workers=args.workers))
    print(json.dumps(asdict(report), indent=2))
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
