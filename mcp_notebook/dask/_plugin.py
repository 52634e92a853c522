"""The worker plugin that closes a worker's connections when the worker closes.

Its own module because it subclasses ``distributed.WorkerPlugin``: the rest of this package does
not import distributed at module level (``import mcp_notebook.dask`` stays light), and ``map_tool``
imports this only when it runs.
"""

from __future__ import annotations

from typing import Any

import anyio.to_thread
from distributed import WorkerPlugin

from . import _registry

__all__ = ["NAME", "ConnectionsPlugin"]

NAME = "mcp-notebook-dask-connections"


class ConnectionsPlugin(WorkerPlugin):
    """Closes this worker process's MCP connections (and stops its stdio servers) at teardown."""

    name = NAME

    async def teardown(self, worker: Any) -> None:
        # In a thread: closing waits for the servers to stop, and the worker's own event loop
        # (this coroutine's) must keep answering its nanny meanwhile.
        await anyio.to_thread.run_sync(_registry.close_all)
