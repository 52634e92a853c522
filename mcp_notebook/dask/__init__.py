"""Map an MCP tool over a Dask cluster: :func:`map_tool` (the ``dask`` extra).

A layer of its own between ``client`` and ``notebook`` (pyproject.toml's layers contract): it needs
only the core :class:`~mcp_notebook.Client`, and the notebook's ``Session.map_tool`` calls into it
(a dask DataFrame, or ``cluster=``). Importing this package does not import dask or distributed:
they load when :func:`map_tool` runs, so ``import mcp_notebook`` stays light and the notebook
layer may use the shared row loop (``_rows``) without the extra installed.

How it works: ``_spec`` seals the server definition (secrets only in the payload), ``_registry``
keeps one connection per worker process and server, ``_ledger`` records started rows on the
scheduler so a rerun never repeats an unsafe call, ``_partition`` runs one partition, ``_map``
builds the lazy graph.
"""

from ._map import map_tool

__all__ = ["map_tool"]
