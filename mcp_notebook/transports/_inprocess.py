"""Serving an official-SDK server object (``mcp`` / fastmcp) in this process, over memory.

Handy for tests and notebooks that define a server in a cell: no subprocess, no pipe. The SDK is
imported only when such an object is given. The SDK server's own dispatcher runs on one pair of
memory streams; messages cross as plain dicts (validated by the SDK's own message adapter on the
way in), so our side sees exactly what the wire would carry.
"""

from __future__ import annotations

import math
from typing import Any

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream

from ._memory import MemoryTransport

__all__ = ["is_sdk_server", "sdk_server_transport"]


def _lowlevel(server: Any) -> Any:
    """The low-level SDK ``Server`` inside ``mcp``'s MCPServer (``_lowlevel_server``) or fastmcp's
    FastMCP (``_mcp_server``); private names, but the only way in, and both SDKs' clients use them."""
    for attribute in ("_lowlevel_server", "_mcp_server"):
        inner = getattr(server, attribute, None)
        if inner is not None:
            return inner
    return server


def is_sdk_server(obj: Any) -> bool:
    """True for objects that look like an ``mcp`` SDK server (checked without importing the SDK)."""
    low = _lowlevel(obj)
    return callable(getattr(low, "run", None)) and callable(
        getattr(low, "create_initialization_options", None)
    )


def sdk_server_transport(server: Any) -> MemoryTransport:
    low = _lowlevel(server)
    name = str(getattr(server, "name", None) or getattr(low, "name", None) or "in-process server")

    async def serve(
        incoming: ObjectReceiveStream[dict[str, Any]], outgoing: ObjectSendStream[dict[str, Any]]
    ) -> None:
        from mcp.shared.message import SessionMessage
        from mcp_types import jsonrpc_message_adapter

        to_server_send, to_server_receive = anyio.create_memory_object_stream[Any](math.inf)
        from_server_send, from_server_receive = anyio.create_memory_object_stream[Any](math.inf)

        async def pump_in() -> None:
            async with to_server_send:
                async for message in incoming:
                    try:
                        parsed = jsonrpc_message_adapter.validate_python(message, by_name=False)
                    except Exception as exc:  # the SDK reports bad frames to the server as exceptions
                        await to_server_send.send(exc)
                        continue
                    await to_server_send.send(SessionMessage(parsed))

        async def pump_out() -> None:
            async with from_server_receive:
                async for item in from_server_receive:
                    await outgoing.send(
                        item.message.model_dump(by_alias=True, exclude_unset=True, mode="json")
                    )

        async with anyio.create_task_group() as tg:
            tg.start_soon(pump_in)
            tg.start_soon(pump_out)
            await low.run(to_server_receive, from_server_send, low.create_initialization_options())
            tg.cancel_scope.cancel()

    return MemoryTransport(serve, name=name)
