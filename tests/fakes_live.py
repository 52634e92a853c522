"""A fake server with ``subscriptions/listen`` streams, for the live-state tests (in-memory transport).

``ListenServer`` is a :class:`tests.fakes.FakeServer` that also answers ``subscriptions/listen`` the
way PROTOCOL.md §3.7 describes: it first sends ``notifications/subscriptions/acknowledged`` carrying
``_meta["io.modelcontextprotocol/subscriptionId"]`` (the listen request's JSON-RPC id) and the
honoured subset of the filter, then keeps the request open (no response) until the test ends it,
with a result (a graceful end) or with ``notifications/cancelled`` naming the listen id::

    server = ListenServer(capabilities={"tools": {"listChanged": True}})
    async with Client(server) as client:
        listen = await server.next_listen()
        await listen.notify("notifications/tools/list_changed")
        listen.end("result")

It also scripts the list methods a FakeServer lacks (resources, templates, prompts) and
``resources/subscribe``; ``listen_mode="unsupported"`` answers every listen with -32601,
``listen_mode="end_at_once"`` ends every stream right after acknowledging it, and
``hold_acks()`` makes new streams wait for ``release_acks()`` before acknowledging.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio

from tests.fakes import NO_REPLY, FakeConnection, FakeServer, RpcError

SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


class Listen:
    """One ``subscriptions/listen`` request the fake server holds open."""

    def __init__(self, server: ListenServer, message: dict[str, Any], conn: FakeConnection) -> None:
        self.server = server
        self.message = message
        self.conn = conn
        self.id: Any = message["id"]
        self.filter: dict[str, Any] = dict(message.get("params", {}).get("notifications") or {})
        self.honoured: dict[str, Any] = {}
        #: ``len(server.received)`` just before the acknowledgement was sent: whatever the client
        #: sent in reaction to it has this index or a higher one.
        self.acked_at: int | None = None
        self.acked = False
        self._end = anyio.Event()
        self._how = "result"

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """A notification on this stream (it carries this stream's subscription id)."""
        await self.conn.notify(method, with_subscription(params, self.id))

    def end(self, how: str = "result") -> None:
        """End the stream from the server side: ``"result"`` (graceful) or ``"cancelled"``."""
        assert how in ("result", "cancelled")
        self._how = how
        self._end.set()

    @property
    def cancelled_by_client(self) -> bool:
        return self.cancel_index() is not None

    def cancel_index(self) -> int | None:
        """Index in ``server.received`` of the client's ``notifications/cancelled`` for this stream."""
        for index, message in enumerate(self.server.received):
            if (
                message.get("method") == "notifications/cancelled"
                and "id" not in message
                and (message.get("params") or {}).get("requestId") == self.id
            ):
                return index
        return None

    async def _serve(self) -> Any:
        gate = self.server._ack_gate
        if gate is not None:
            await gate.wait()
        # Recorded before sending: whatever the client sends in reaction has a higher index.
        self.acked_at = len(self.server.received)
        await self.conn.notify(
            "notifications/subscriptions/acknowledged",
            with_subscription({"notifications": self.honoured}, self.id),
        )
        self.acked = True
        self.server._listens_changed()
        if self.server.listen_mode == "end_at_once":
            self._end.set()
        await self._end.wait()
        if self._how == "result":
            return {"resultType": "complete", "_meta": {SUBSCRIPTION_ID: self.id}}
        await self.conn.notify("notifications/cancelled", {"requestId": self.id, "reason": "server shutdown"})
        return NO_REPLY


def with_subscription(params: dict[str, Any] | None, subscription: Any) -> dict[str, Any]:
    """``params`` with ``_meta[subscriptionId]`` set (a new dict)."""
    stamped = dict(params or {})
    meta = dict(stamped.get("_meta") or {})
    meta[SUBSCRIPTION_ID] = subscription
    stamped["_meta"] = meta
    return stamped


def _echo_filter(wanted: dict[str, Any]) -> dict[str, Any]:
    return dict(wanted)


class ListenServer(FakeServer):
    def __init__(
        self,
        era: str = "modern",
        *,
        listen_mode: str = "stream",
        honour: Callable[[dict[str, Any]], dict[str, Any]] = _echo_filter,
        resources: list[dict[str, Any]] | None = None,
        templates: list[dict[str, Any]] | None = None,
        prompts: list[dict[str, Any]] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(era, **kwargs)
        assert listen_mode in ("stream", "unsupported", "end_at_once")
        self.listen_mode = listen_mode
        self.honour = honour
        self.resources = list(resources or [])
        self.templates = list(templates or [])
        self.prompts = list(prompts or [])
        #: Every listen request answered, in order, across connections.
        self.listens: list[Listen] = []
        self._listen_event = anyio.Event()
        self._ack_gate: anyio.Event | None = None
        self.on("subscriptions/listen", self._listen)
        self.on("resources/list", self._list("resources"))
        self.on("resources/templates/list", self._list("resourceTemplates"))
        self.on("prompts/list", self._list("prompts"))
        self.on("resources/subscribe", self._ok)
        self.on("resources/unsubscribe", self._ok)

    # --- observation ----------------------------------------------------------------------------

    def listen_requests(self) -> list[dict[str, Any]]:
        return self.requests("subscriptions/listen")

    async def next_listen(self, count: int | None = None, timeout: float = 3.0) -> Listen:
        """The ``count``-th acknowledged listen (1-based; default: the next one after those seen)."""
        if count is None:
            count = len(self.listens) + 1
        with anyio.fail_after(timeout):
            while len(self.listens) < count or not self.listens[count - 1].acked:
                await self._listen_event.wait()
        return self.listens[count - 1]

    def hold_acks(self) -> None:
        """New listen streams wait for :meth:`release_acks` before acknowledging."""
        self._ack_gate = anyio.Event()

    def release_acks(self) -> None:
        gate, self._ack_gate = self._ack_gate, None
        if gate is not None:
            gate.set()

    def _listens_changed(self) -> None:
        self._listen_event.set()
        self._listen_event = anyio.Event()

    # --- handlers -------------------------------------------------------------------------------

    async def _listen(self, message: dict[str, Any], conn: FakeConnection) -> Any:
        if self.listen_mode == "unsupported":
            raise RpcError(-32601, "method not found: subscriptions/listen")
        listen = Listen(self, message, conn)
        listen.honoured = self.honour(listen.filter)
        self.listens.append(listen)
        return await listen._serve()

    def _list(self, key: str) -> Any:
        attribute = {"resources": "resources", "resourceTemplates": "templates", "prompts": "prompts"}[key]

        async def handler(message: dict[str, Any], conn: FakeConnection) -> Any:
            return {key: getattr(self, attribute)}

        return handler

    async def _ok(self, message: dict[str, Any], conn: FakeConnection) -> Any:
        return {}
