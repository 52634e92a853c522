"""In-memory transport: a server running as a coroutine in the same event loop.

For unit tests of the connection logic (a scripted fake server) and for in-process servers. Every
message is serialized to JSON and back on the way, so the two sides never share a dict and a
message that would not survive the wire does not survive here either.
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream

from ..protocol._errors import McpError
from ..protocol._jsonrpc import FrameError, Message, classify
from ..protocol._versions import Era
from ._base import NotDelivered

__all__ = ["MemoryTransport", "ServeFunction"]

#: ``serve(incoming, outgoing)``: read client messages from ``incoming``, write to ``outgoing``.
ServeFunction = Callable[
    [ObjectReceiveStream[dict[str, Any]], ObjectSendStream[dict[str, Any]]], Awaitable[None]
]


class MemoryTransport:
    """Connect to ``serve``, started afresh in a task for every ``connect()``."""

    def __init__(self, serve: ServeFunction, *, name: str = "in-memory server") -> None:
        self._serve = serve
        self._name = name
        self.connections = 0

    def __repr__(self) -> str:
        return f"MemoryTransport({self._name!r})"

    def describe(self) -> str:
        return self._name

    def recent_stderr(self) -> list[str]:
        return []

    def era_hint(self) -> tuple[Era, str] | None:
        return None

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[_MemoryChannel]:
        to_server_send, to_server_receive = anyio.create_memory_object_stream[dict[str, Any]](math.inf)
        to_client_send, to_client_receive = anyio.create_memory_object_stream[dict[str, Any]](math.inf)
        self.connections += 1

        async def run_server() -> None:
            async with to_server_receive, to_client_send:
                await self._serve(to_server_receive, to_client_send)

        async with anyio.create_task_group() as tg:
            tg.start_soon(run_server)
            try:
                yield _MemoryChannel(to_server_send, to_client_receive)
            finally:
                to_server_send.close()
                to_client_receive.close()
                tg.cancel_scope.cancel()


class _MemoryChannel:
    def __init__(
        self, outgoing: ObjectSendStream[dict[str, Any]], incoming: ObjectReceiveStream[dict[str, Any]]
    ) -> None:
        self._outgoing = outgoing
        self._incoming = incoming

    congested = False  # the streams are unbounded
    hears_server = True
    routes_by_headers = False

    async def send(self, message: dict[str, Any]) -> None:
        try:
            await self._outgoing.send(json.loads(json.dumps(message)))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            # A memory stream refuses the whole object or takes it: this one was never delivered.
            raise NotDelivered("the in-memory server stopped") from None

    async def receive(self) -> Message | FrameError:
        try:
            raw = await self._incoming.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
            raise McpError("transport", "the in-memory server stopped", code=-32000) from None
        try:
            return classify(json.loads(json.dumps(raw)))
        except FrameError as exc:
            return exc
        except (TypeError, ValueError):
            return FrameError("in-memory server sent a value that is not JSON")
