"""One partition on a worker: its rows through the worker's connection, ``concurrency`` at a time.

Runs in a worker's task thread. The calls themselves run on the registry's event loop thread
(``_registry``); for a tool that must not run twice the rows are recorded as started on the
scheduler first (``_ledger``), and rows an earlier run of this partition had started come back
as error rows instead of being called again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import _registry
from ._ledger import LOST, PREFIX, Ledger, started_before
from ._rows import Outcome, arguments_maker, call_rows, outcome_of

if TYPE_CHECKING:
    import pandas

    from ..client._client import Client
    from ..client._results import Tool
    from ._spec import Job

__all__ = ["run_partition", "safe_to_repeat"]


def safe_to_repeat(tool: Tool | None) -> bool:
    """Whether calling ``tool`` twice for a row is harmless, by its annotations (missing: no)."""
    if tool is None:
        return False
    hints = tool.annotations
    return hints.get("readOnlyHint") is True or hints.get("idempotentHint") is True


def run_partition(
    frame: pandas.DataFrame, job: Job, partition_info: dict[str, Any] | None = None
) -> pandas.DataFrame:
    """The ``result``/``is_error``/``error`` frame of one partition, on ``frame``'s index."""
    import pandas as pd

    number = int(partition_info["number"]) if partition_info else 0
    portal, client = _registry.client_for(job.server)
    tools = portal.call(_all_tools, client)
    tool = next((t for t in tools if t.name == job.tool), None)
    ledger: Ledger | None = None
    before: set[int] = set()
    if not safe_to_repeat(tool) and len(frame):
        ledger, before = _ledger_for(job, number)
    arguments_of = arguments_maker(
        frame.columns, job.renames, set(tool.parameters) if tool is not None else None
    )
    lost: Outcome = (None, True, LOST.format(tool=job.tool))

    async def one(position: int, values: tuple[Any, ...]) -> Outcome:
        if position in before:
            return lost
        if ledger is not None:
            await ledger.started(position)
        return await outcome_of(client.call_tool(job.tool, arguments_of(values), timeout=job.timeout))

    async def run_all() -> list[Outcome]:
        rows = enumerate(frame.itertuples(index=False, name=None))
        return await call_rows(one, rows, len(frame), job.concurrency)

    outcomes = portal.call(run_all)
    return pd.DataFrame(
        {
            "result": pd.Series([o[0] for o in outcomes], index=frame.index, dtype=object),
            "is_error": pd.Series([o[1] for o in outcomes], index=frame.index, dtype=bool),
            "error": pd.Series([o[2] for o in outcomes], index=frame.index, dtype=object),
        }
    )


async def _all_tools(client: Client) -> list[Tool]:
    return await client.list_tools(include_app_only=True)


def _ledger_for(job: Job, number: int) -> tuple[Ledger, set[int]]:
    """This partition's ledger, and the rows an earlier run of it recorded as started."""
    from distributed import get_client

    client = get_client()
    scheduler: Any = client.scheduler  # the scheduler's RPC (typed optional: set once connected)
    key = [PREFIX, job.run_id, str(number)]

    # asynchronous=False: the worker's client takes a call from a thread that is not one of the
    # worker's task threads (the ledger's, on the registry's loop) for an async context and would
    # hand back a coroutine that never runs; the record would silently not be kept.
    def get() -> Any:
        return client.sync(scheduler.get_metadata, keys=key, default=None, asynchronous=False)

    def record(rows: list[int]) -> None:
        client.sync(scheduler.set_metadata, keys=[*key, str(rows[0])], value=rows, asynchronous=False)

    before = started_before(get())

    return Ledger(record), before
