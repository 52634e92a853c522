"""``mcp_notebook.dask.map_tool``: a tool over a dask DataFrame, one connection per worker.

The result is lazy (``map_partitions`` with a ``meta``), so it composes with the rest of a dask
pipeline; nothing runs until it is computed. Each partition runs ``_partition.run_partition`` on
a worker. Only ``pandas``/``dask``/``distributed`` imports inside functions: ``import
mcp_notebook.dask`` (and so the notebook layer, which reaches ``_rows``) never loads dask.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ._partition import run_partition
from ._spec import Job, ServerSpec

if TYPE_CHECKING:
    import dask.dataframe
    import distributed
    import pandas

__all__ = ["map_tool"]

#: Rows per partition when a pandas frame is split here (a partition is one task on one worker).
_ROWS_PER_PARTITION = 5_000

_registered: set[str] = set()  # schedulers given the plugin by this process
_registered_lock = threading.Lock()


def map_tool(
    target: Any,
    tool: str,
    frame: pandas.DataFrame | dask.dataframe.DataFrame,
    *,
    columns: Mapping[str, str] | None = None,
    concurrency: int = 16,
    timeout: float | None = None,
    client: distributed.Client | None = None,
    **client_options: Any,
) -> dask.dataframe.DataFrame:
    """Call ``tool`` once per row of ``frame`` on a Dask cluster; a lazy dask DataFrame of the answers.

    ``target`` and ``client_options`` are what :class:`mcp_notebook.Client` takes (a command, a
    URL, ``headers=``, ``auth=``, ``env=``, ...). Each worker process opens one connection per
    server on first use (a stdio server is started once per worker) and every partition it runs
    calls through it, ``concurrency`` calls at a time. Columns are the tool's arguments (rename
    with ``columns={"column": "argument"}``; columns the tool does not take are left out).

    The result has the columns of ``Session.map_tool``, ``result``, ``is_error`` and ``error``,
    on the input's index (a pandas ``frame`` is split in order, not sorted). A failing call is an
    error row. If a worker dies mid-partition, Dask reruns the partition: for a tool annotated
    ``readOnlyHint`` or ``idempotentHint`` every row is called again; for any other tool, the rows
    the lost run had started come back as error rows saying they may or may not have run, and only
    the others are called.

    ``client`` is the ``distributed.Client`` of the cluster (default: the current one); the
    server definition, secrets included, travels to the workers only inside the tasks' payload,
    never in task names, reprs or logs.
    """
    import dask.dataframe as dd
    import distributed
    import pandas as pd

    if concurrency < 1:
        raise ValueError("concurrency must be >= 1")
    cluster = client if client is not None else distributed.default_client()
    _register_plugin(cluster)
    if not isinstance(frame, dd.DataFrame):
        frame = dd.from_pandas(frame, npartitions=_partitions(len(frame), cluster), sort=False)
    job = Job(ServerSpec(target, client_options), tool, dict(columns or {}), concurrency, timeout)
    meta = pd.DataFrame(
        {
            "result": pd.Series([], dtype=object),
            "is_error": pd.Series([], dtype=bool),
            "error": pd.Series([], dtype=object),
        },
        index=frame._meta.index,
    )
    mapped: dask.dataframe.DataFrame = frame.map_partitions(
        run_partition,
        job,
        meta=meta,
        token=f"mcp-map-{_printable_name(tool)}",
        transform_divisions=False,
    )
    return mapped


def _partitions(rows: int, cluster: distributed.Client) -> int:
    """Enough partitions to keep every worker thread busy, and none over ``_ROWS_PER_PARTITION``."""
    threads = max(1, sum(cluster.nthreads().values()))
    return int(max(1, min(rows, max(2 * threads, -(-rows // _ROWS_PER_PARTITION)))))


def _register_plugin(cluster: distributed.Client) -> None:
    """Give the cluster's workers the plugin that closes their connections, once per scheduler
    (registering it again would tear down, and so close, the connections the workers hold)."""
    from ._plugin import NAME, ConnectionsPlugin

    address = str(cluster.scheduler_info().get("address") or id(cluster))
    with _registered_lock:
        if address in _registered:
            return
        cluster.register_plugin(ConnectionsPlugin(), name=NAME)
        _registered.add(address)


def _printable_name(tool: str) -> str:
    """The tool's name as a key part (dask keys are shown on the dashboard): safe characters only."""
    return re.sub(r"[^A-Za-z0-9_.]", "_", tool)[:60]
