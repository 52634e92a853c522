"""The connection layer: one router per server (see :mod:`._connection`)."""

from ._connection import Connection, ConnectionEvent, ConnectionState, ConnectionStats, ProgressCallback
from ._handlers import ClientHandlers, Handler
from ._home import Home
from ._log_budget import LogBudget
from ._negotiate import Negotiated
from ._notifications import NotificationQueue
from ._options import ConnectionOptions
from ._progress import GuardedProgress

__all__ = [
    "ClientHandlers",
    "Connection",
    "ConnectionEvent",
    "ConnectionOptions",
    "ConnectionState",
    "ConnectionStats",
    "GuardedProgress",
    "Handler",
    "Home",
    "LogBudget",
    "Negotiated",
    "NotificationQueue",
    "ProgressCallback",
]
