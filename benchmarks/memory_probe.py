"""Memory of one client, measured in a fresh process that loads only that client's library.

``python -m benchmarks.memory_probe --client ours --flood 10000 --batch 1000 --batches 5`` prints one
JSON object. All steps talk to the echo server over stdio on a legacy (``initialize``) connection, so
the flood of ``notifications/message`` is legitimate for every client.

- idle connection: RSS growth from opening a second connection (after one was opened and closed, so
  lazy imports and one-off caches are not counted) and its Python heap (tracemalloc, a third
  connection opened with tracing on);
- notification flood: the peak RSS above the level before the flood (Linux ``VmHWM``, reset through
  ``/proc/self/clear_refs``), and the peak traced Python heap during a second flood;
- calls in flight: RSS after 1 batch of ``--batch`` concurrent calls, and its growth from there to
  ``--batches`` batches (flat memory means no growth), plus the traced heap growth over the same span.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import re
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.clients import Adapter, Target, make

ECHO = (sys.executable, str(Path(__file__).resolve().parent / "echo_server.py"))
MB = 1024 * 1024


def _status(field: str) -> int:
    """A /proc/self/status field in bytes (Linux)."""
    with open("/proc/self/status") as f:
        match = re.search(rf"^{field}:\s+(\d+) kB", f.read(), re.M)
    return int(match.group(1)) * 1024 if match else 0


def rss() -> int:
    return _status("VmRSS")


def reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak() -> int:
    return _status("VmHWM")


SETTLE = 0.2  # seconds to let buffers and the server settle before a reading


async def settle() -> None:
    gc.collect()
    await asyncio.sleep(SETTLE)
    gc.collect()


async def open_client(name: str) -> Adapter:
    adapter = make(name)
    await adapter.connect(Target(argv=(*ECHO, "--era", "legacy")), "legacy")
    for _ in range(20):
        await adapter.call("echo", {"text": "warm"})
    return adapter


async def flood(adapter: Adapter, count: int) -> None:
    before = adapter.notifications_seen()
    await adapter.call("flood", {"count": count, "kind": "log"})
    deadline = time.monotonic() + 60
    # Each library counts in its own callback; polling the count is the one way common to all.
    while adapter.notifications_seen() - before < count and time.monotonic() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.001)


async def batch(adapter: Adapter, size: int) -> None:
    await asyncio.gather(*(adapter.call("echo", {"text": f"in flight {i}"}) for i in range(size)))


async def probe(name: str, flood_count: int, batch_size: int, batches: int) -> dict[str, Any]:
    out: dict[str, Any] = {"client": name}
    # Warm-up connection: lazy imports, caches, the first spawn.
    warm = await open_client(name)
    await flood(warm, min(flood_count, 100))
    await batch(warm, min(batch_size, 100))
    await warm.close()
    await settle()

    # One idle connection.
    base = rss()
    adapter = await open_client(name)
    await settle()
    out["idle_rss_mb"] = (rss() - base) / MB
    tracemalloc.start()
    await settle()
    traced_base = tracemalloc.get_traced_memory()[0]
    third = await open_client(name)
    await settle()
    out["idle_heap_kb"] = (tracemalloc.get_traced_memory()[0] - traced_base) / 1024
    await third.close()
    tracemalloc.stop()
    await settle()

    # Notification flood: peak RSS, then peak traced heap.
    before = rss()
    has_hwm = reset_peak()
    started = time.perf_counter()
    await flood(adapter, flood_count)
    out["flood_seconds"] = time.perf_counter() - started
    out["flood_rss_peak_mb"] = (peak() - before) / MB if has_hwm else None
    out["flood_seen"] = adapter.notifications_seen()
    await settle()
    tracemalloc.start()
    await settle()
    traced_base = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    await flood(adapter, flood_count)
    out["flood_heap_peak_mb"] = (tracemalloc.get_traced_memory()[1] - traced_base) / MB
    tracemalloc.stop()
    await settle()

    # Calls in flight: RSS after 1 batch versus after `batches` batches.
    before = rss()
    reset_peak()
    await batch(adapter, batch_size)
    await settle()
    after_one = rss()
    for _ in range(batches - 1):
        await batch(adapter, batch_size)
    await settle()
    after_all = rss()
    out["inflight_batch"] = batch_size
    out["inflight_batches"] = batches
    out["inflight_rss_first_batch_mb"] = (after_one - before) / MB
    out["inflight_rss_growth_mb"] = (after_all - after_one) / MB
    out["inflight_rss_peak_mb"] = (peak() - before) / MB if has_hwm else None
    tracemalloc.start()
    await batch(adapter, batch_size)
    await settle()
    traced_one = tracemalloc.get_traced_memory()[0]
    for _ in range(batches - 1):
        await batch(adapter, batch_size)
    await settle()
    out["inflight_heap_growth_kb"] = (tracemalloc.get_traced_memory()[0] - traced_one) / 1024
    tracemalloc.stop()
    await adapter.close()
    return out


def main(argv: list[str] | None = None) -> int:
    global SETTLE
    parser = argparse.ArgumentParser(description="Memory of one MCP client (prints JSON).")
    parser.add_argument("--client", required=True)
    parser.add_argument("--flood", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--settle", type=float, default=SETTLE, help="seconds to wait before each reading")
    args = parser.parse_args(argv)
    SETTLE = args.settle
    result = asyncio.run(probe(args.client, args.flood, args.batch, args.batches))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
