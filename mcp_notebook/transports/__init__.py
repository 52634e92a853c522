"""Transports move JSON-RPC messages between the connection and a server; see :mod:`.base`."""

from .base import Channel, OversizedFrame, Transport
from .memory import MemoryTransport
from .stdio import StdioTransport

__all__ = ["Channel", "MemoryTransport", "OversizedFrame", "StdioTransport", "Transport"]
