"""Transports move JSON-RPC messages between the connection and a server; see :mod:`.base`."""

from ._base import Channel, OversizedFrame, Transport
from ._memory import MemoryTransport
from ._stdio import StdioTransport

__all__ = ["Channel", "MemoryTransport", "OversizedFrame", "StdioTransport", "Transport"]
