"""Which rows of a partition may already have run: recorded on the scheduler before they start.

Why: when a worker dies mid-partition, Dask runs the partition again elsewhere, and the rows the
dead worker had sent may or may not have run on the server. For a tool that is neither read-only
nor idempotent (its annotations' ``readOnlyHint``/``idempotentHint``; missing means no), running
such a row twice could pay twice or send two mails, so the rerun must know which rows started.
The worker's memory died with it, so the record lives on the scheduler (``Client.set_metadata``:
one small RPC, no extra service), under ``("mcp_notebook.dask", run id, partition number, first
row)``.

A row is recorded *before* its call is sent. Records are batched without delaying anyone more
than one RPC: a row that wants to start joins the pending batch; whoever holds the lock sends
everything pending at once, and rows that were sent by someone else's RPC start without another.
With ``concurrency`` slots that is at most one RPC in flight and about one RPC per
``concurrency`` rows under load, never one per row, and a row is recorded only when it really is
about to start (so rows that never started are called on the rerun, not written off).

The records stay on the scheduler after the map: a partition whose result is lost after it
finished is computed again, and must again not repeat its rows. Computing the same lazy result
twice is such a rerun too (``persist()`` a result you need twice).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import anyio.to_thread

__all__ = ["LOST", "PREFIX", "Ledger"]

PREFIX = "mcp_notebook.dask"

#: The error of a row not called again because an earlier run of its partition may have run it.
LOST = (
    "not called: an earlier run of this partition (a worker that was lost, or the same result "
    "computed again) had started this row, so it may or may not have run, and the tool {tool!r} "
    "is not annotated readOnlyHint or idempotentHint"
)


class Ledger:
    """The started rows of one partition run; ``record(rows)`` stores a batch (a blocking call,
    run in a thread)."""

    def __init__(self, record: Callable[[list[int]], None]) -> None:
        self._record = record
        self._pending: list[int] = []
        self._sent: set[int] = set()
        self._lock = anyio.Lock()

    async def started(self, position: int) -> None:
        """Return once ``position`` is recorded as started (batched with any others waiting)."""
        self._pending.append(position)
        async with self._lock:
            if position in self._sent:
                self._sent.discard(position)
                return
            batch, self._pending = self._pending, []
            await anyio.to_thread.run_sync(self._record, batch)
            self._sent.update(batch)
            self._sent.discard(position)


def started_before(records: Any) -> set[int]:
    """The rows an earlier run recorded (``get_metadata``'s nested dict of batches), as a set."""
    rows: set[int] = set()
    if isinstance(records, dict):
        for batch in records.values():
            if isinstance(batch, list | tuple):  # msgpack hands lists back as tuples
                rows.update(int(r) for r in batch)
    return rows
