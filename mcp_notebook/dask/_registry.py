"""One connection per worker process and server, opened on first use, reused by every partition.

Why a module-level registry: a Dask worker process runs many partitions (one after another, or a
few at once on its threads), each a plain function call with no state of its own. Opening a
``Client`` per partition starts a stdio server per partition (issue #30 measured that most of a
naive map's time went there). So the first partition that needs a server opens it, and the
client stays in this process's registry, keyed by :attr:`ServerSpec.key` (a salted digest: no
secret in it), for every later partition.

The clients live on one background event loop thread per process (an anyio blocking portal):
partitions run in worker threads, which are not event loops, and each calls into the portal. A
client whose connection ended (the server crashed) is replaced on next use.

Closing: :class:`~mcp_notebook.dask._plugin.ConnectionsPlugin` (a ``distributed.WorkerPlugin``
registered by ``map_tool``) calls :func:`close_all` when the worker closes; ``atexit`` does too,
for a process that ends without closing its worker. A worker killed outright closes nothing: its
stdio servers see their stdin end and exit.
"""

from __future__ import annotations

import atexit
import contextlib
import queue
import threading
from typing import TYPE_CHECKING

import anyio
from anyio.from_thread import BlockingPortal

from ..client._client import Client

if TYPE_CHECKING:
    from ._spec import ServerSpec

__all__ = ["client_for", "close_all", "open_count"]

_lock = threading.Lock()  # guards the portal and the registry, and makes opening one at a time
_portal: BlockingPortal | None = None
_stopped: threading.Event | None = None  # set when the loop thread has ended
_clients: dict[str, Client] = {}
#: Connections opened by this process so far (tests read it through ``client.run``).
_opened = 0

#: How long closing may take at worker shutdown, per server (it stops the server process).
_CLOSE_GRACE = 5.0


def _the_portal() -> BlockingPortal:
    """This process's event loop thread, started on first use.

    A daemon thread of our own rather than ``anyio.from_thread.start_blocking_portal`` (whose
    thread the interpreter joins *before* running ``atexit``): a worker process that ends without
    tearing down its plugins must still reach :func:`close_all` through ``atexit``.
    """
    global _portal, _stopped
    if _portal is None:
        ready: queue.SimpleQueue[BlockingPortal] = queue.SimpleQueue()
        _stopped = threading.Event()

        async def serve() -> None:
            async with BlockingPortal() as portal:
                ready.put(portal)
                await portal.sleep_until_stopped()

        def run(stopped: threading.Event) -> None:
            try:
                anyio.run(serve)
            finally:
                stopped.set()

        threading.Thread(target=run, args=(_stopped,), name="mcp-notebook-dask", daemon=True).start()
        _portal = ready.get()
        atexit.register(close_all)
    return _portal


async def _open(server: ServerSpec) -> Client:
    target, options = server.client_arguments()
    client = Client(target, **options)
    return await client.connect()


def client_for(server: ServerSpec) -> tuple[BlockingPortal, Client]:
    """The portal and this process's open client for ``server``, opening it on first use.

    Raises the McpError of a failed connect (the partition's task then fails, and Dask retries it,
    perhaps on another worker)."""
    global _opened
    with _lock:
        portal = _the_portal()
        client = _clients.get(server.key)
        if client is None or client.closed_reason is not None:
            if client is not None:
                _clients.pop(server.key)
                with contextlib.suppress(Exception):
                    portal.call(client.aclose)
            client = portal.call(_open, server)
            _clients[server.key] = client
            _opened += 1
        return portal, client


def open_count() -> dict[str, int]:
    """How many connections this process holds now and has opened in all."""
    with _lock:
        return {"open": len(_clients), "opened": _opened}


def close_all() -> None:
    """Close every connection (stopping stdio servers) and the portal's loop. Idempotent."""
    global _portal
    with _lock:
        portal, stopped = _portal, _stopped
        clients = list(_clients.values())
        _clients.clear()
        _portal = None
    if portal is None or stopped is None:
        return

    async def close_each() -> None:
        with anyio.move_on_after(_CLOSE_GRACE):
            async with anyio.create_task_group() as tg:
                for client in clients:
                    tg.start_soon(client.aclose)

    with contextlib.suppress(Exception):
        portal.call(close_each)
        portal.call(portal.stop)
    stopped.wait(_CLOSE_GRACE)
