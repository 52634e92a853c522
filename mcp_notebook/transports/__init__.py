"""Transports move JSON-RPC messages between the connection and a server; see :mod:`._base`.

The face of the package: the leaf modules are private. :class:`HttpTransport` is imported on first
use, so ``import mcp_notebook`` does not load httpx for a notebook that only runs stdio servers.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._base import Channel, NotDelivered, OversizedFrame, RequestFailed, Transport
from ._inprocess import is_sdk_server, sdk_server_transport
from ._memory import MemoryTransport
from ._stdio import StdioTransport

if TYPE_CHECKING:
    from ._http import HttpTransport

__all__ = [
    "Channel",
    "HttpTransport",
    "MemoryTransport",
    "NotDelivered",
    "OversizedFrame",
    "RequestFailed",
    "StdioTransport",
    "Transport",
    "is_sdk_server",
    "sdk_server_transport",
]


def __getattr__(name: str) -> Any:
    if name == "HttpTransport":
        return importlib.import_module("._http", __name__).HttpTransport
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
