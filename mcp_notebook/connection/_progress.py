"""A user's progress callback, shielded from the connection and the connection's log from it.

Progress arrives once per server notification, so a callback with a bug would otherwise log one
traceback per notification: a chatty server and a typo flood a notebook cell the way junk frames
used to (see :mod:`._log_budget`). The first failure is logged with its traceback, which is what
the user needs to fix it; later ones are only counted. A failure never reaches the request.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable
from typing import Any

__all__ = ["GuardedProgress", "ProgressCallback"]

logger = logging.getLogger("mcp_notebook.connection")

#: ``callback(progress, total, message)``; may be a coroutine function.
ProgressCallback = Callable[[float, float | None, str | None], Any]


class GuardedProgress:
    """Calls ``callback`` for every update of one request; logs its first exception only."""

    __slots__ = ("_callback", "failures")

    def __init__(self, callback: ProgressCallback) -> None:
        self._callback = callback
        self.failures = 0

    @classmethod
    def wrap(cls, callback: ProgressCallback | None) -> GuardedProgress | None:
        """``callback`` guarded once (a guard given again is kept: its count goes on)."""
        if callback is None or isinstance(callback, GuardedProgress):
            return callback
        return cls(callback)

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        try:
            outcome = self._callback(progress, total, message)
            if inspect.isawaitable(outcome):
                await outcome
        except Exception:
            self.failures += 1
            if self.failures == 1:
                logger.exception(
                    "a progress callback raised; ignored (its later failures for this call are not logged)"
                )
