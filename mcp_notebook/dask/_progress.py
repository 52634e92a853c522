"""Run a lazy map on the cluster and report rows as partitions finish (the notebook's bar).

Why here and not in the notebook layer: it is distributed's futures API, and the notebook twin
(``Session.map_tool`` with ``cluster=`` or a dask DataFrame) only hands in a callback. Partition
results stay on the workers while the count is taken (``len`` runs where the data is), so the
kernel fetches nothing it did not ask for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import dask.dataframe
    import distributed

__all__ = ["run_with_progress"]


def run_with_progress(
    lazy: dask.dataframe.DataFrame,
    cluster: distributed.Client,
    rows_done: Callable[[int], None],
    *,
    keep_on_cluster: bool,
) -> Any:
    """Compute ``lazy`` on ``cluster``, calling ``rows_done(total so far)`` as partitions finish.

    ``keep_on_cluster``: return the result as a dask DataFrame persisted on the workers (for a
    dask DataFrame in); otherwise the pandas DataFrame, gathered."""
    from distributed import as_completed, futures_of

    persisted = cluster.persist(lazy)
    done = 0
    counts = [cluster.submit(len, part, pure=False) for part in futures_of(persisted)]
    for finished in as_completed(counts):
        done += int(finished.result())
        rows_done(done)
    if keep_on_cluster:
        return persisted
    return cluster.compute(persisted).result()
