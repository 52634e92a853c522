"""Many calls at once against a slow HTTP server, in a fresh process: do they all complete, does the
client's memory stay flat, and how many sockets does it hold to the server?

``python -m benchmarks.http_load_probe --client ours --url URL --batch 1000 --batches 5`` prints one
JSON object. Issue #13 asks that 1,000 calls in flight against 100 ms per call all complete, with
flat memory and sockets bounded by the client's ``max_connections``. One fresh process per client,
as in :mod:`benchmarks.memory_probe`, so that one client's imports and garbage do not count
against another's.

- A batch is ``--batch`` concurrent ``echo`` calls. A call that raises is counted as failed, not
  fatal: "every call completes" is what is measured.
- Memory (psutil, this process): RSS before batch 1, after batch 1 and after the last one (flat
  memory: no growth from batch 1 to the last), and the peak during all batches above the start
  (Linux ``VmHWM``). Then as many batches again with tracemalloc on: the Python heap's growth from
  the first of them to the last, which tells a leak from the allocator's noise in RSS (the rule of
  the stdio memory case).
- Sockets: a sampler counts this process's TCP sockets whose remote port is the server's, every
  ``--sample-ms``, in a worker thread (psutil walks ``/proc``: a few milliseconds with a thousand
  sockets, which would otherwise stall the event loop that is serving the calls), and keeps the peak.
- ``--timeout`` bounds the batches: past it the probe reports what completed so far.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psutil

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.clients import Adapter, Target, make
from benchmarks.memory_probe import peak, reset_peak

MB = 1024 * 1024


def rss() -> int:
    return int(psutil.Process().memory_info().rss)


async def settle(seconds: float) -> None:
    """Let answers in transit land and garbage go before a memory reading."""
    gc.collect()
    await asyncio.sleep(seconds)
    gc.collect()


class SocketSampler:
    """The most TCP sockets this process held to one server port at any sample."""

    def __init__(self, port: int, interval: float) -> None:
        self.port = port
        self.interval = interval
        self.peak = 0
        self.samples = 0
        self._process = psutil.Process()
        self._stop = asyncio.Event()

    def count(self) -> int:
        return sum(
            1 for c in self._process.net_connections(kind="tcp") if c.raddr and c.raddr.port == self.port
        )

    async def run(self, limit: float) -> None:
        """Sample until stopped, or for ``limit`` seconds at most."""
        loop = asyncio.get_running_loop()
        end = loop.time() + limit
        while not self._stop.is_set() and loop.time() < end:
            self.peak = max(self.peak, await asyncio.to_thread(self.count))
            self.samples += 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), self.interval)

    def stop(self) -> None:
        self._stop.set()


class Tally:
    """Calls that answered and calls that raised, with the first error kept to explain a failure."""

    def __init__(self) -> None:
        self.completed = 0
        self.failed = 0
        self.first_error = ""

    async def call(self, adapter: Adapter, i: int) -> None:
        try:
            await adapter.call("echo", {"text": f"load {i}"})
        except Exception as exc:  # counted: the probe measures whether every call completes
            self.failed += 1
            self.first_error = self.first_error or f"{type(exc).__name__}: {exc}"[:300]
        else:
            self.completed += 1


async def batch(adapter: Adapter, size: int, tally: Tally) -> None:
    await asyncio.gather(*(tally.call(adapter, i) for i in range(size)))


async def measure(adapter: Adapter, size: int, batches: int, settle_s: float, out: dict[str, Any]) -> None:
    """Run the batches, filling ``out`` as they go so that a timeout still leaves the counts."""
    tally = Tally()
    durations: list[float] = []
    before = rss()
    has_hwm = reset_peak()
    try:
        for n in range(batches):
            started = time.perf_counter()
            await batch(adapter, size, tally)
            durations.append(time.perf_counter() - started)
            if n == 0:
                await settle(settle_s)
                after_one = rss()
                out["rss_first_batch_mb"] = (after_one - before) / MB
        await settle(settle_s)
        out["rss_growth_mb"] = (rss() - after_one) / MB
        if has_hwm:
            out["rss_peak_mb"] = (peak() - before) / MB
        out["heap_growth_kb"] = await heap_growth(adapter, size, batches, settle_s, tally) / 1024
    finally:
        out["completed"] = tally.completed
        out["failed"] = tally.failed
        out["first_error"] = tally.first_error
        out["batch_s"] = statistics.median(durations) if durations else None


async def heap_growth(adapter: Adapter, size: int, batches: int, settle_s: float, tally: Tally) -> int:
    """Bytes of traced Python heap gained from the first of ``batches`` batches to the last."""
    tracemalloc.start()
    try:
        await batch(adapter, size, tally)
        await settle(settle_s)
        first = tracemalloc.get_traced_memory()[0]
        for _ in range(batches - 1):
            await batch(adapter, size, tally)
        await settle(settle_s)
        return tracemalloc.get_traced_memory()[0] - first
    finally:
        tracemalloc.stop()


async def probe(
    name: str, url: str, size: int, batches: int, settle_s: float, sample_ms: float, limit: float
) -> dict[str, Any]:
    adapter = make(name, http=True, raw_connections=size)
    await adapter.connect(Target(url=url))
    calls = 2 * size * batches  # the RSS batches, then the traced ones
    out: dict[str, Any] = {"client": name, "calls": calls, "batch": size, "batches": batches}
    try:
        await batch(adapter, min(size, 100), Tally())  # warm: lazy imports, first validation, a pool
        await settle(settle_s)
        sampler = SocketSampler(urlsplit(url).port or 80, sample_ms / 1000)
        async with asyncio.TaskGroup() as tg:
            tg.create_task(sampler.run(limit + 5))
            try:
                async with asyncio.timeout(limit):
                    await measure(adapter, size, batches, settle_s, out)
            except TimeoutError:
                out["timed_out"] = True
            finally:
                sampler.stop()
        out["peak_sockets"] = sampler.peak
        out["socket_samples"] = sampler.samples
        out["max_connections"] = adapter.connection_cap()
    finally:
        await adapter.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Calls in flight against a slow HTTP server (prints JSON).")
    parser.add_argument("--client", required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--batch", type=int, default=1000, help="calls at once")
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--settle", type=float, default=0.2, help="seconds to wait before a memory reading")
    parser.add_argument("--sample-ms", type=float, default=20.0, help="socket sampling interval")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds for all batches")
    args = parser.parse_args(argv)
    result = asyncio.run(
        probe(args.client, args.url, args.batch, args.batches, args.settle, args.sample_ms, args.timeout)
    )
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
