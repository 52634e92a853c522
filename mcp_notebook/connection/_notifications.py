"""A bounded, drop-oldest notification buffer with an async iterator face.

A consumer that stops reading must never stall the connection or grow memory without bound, so a
full buffer drops its oldest entry and counts it in ``dropped`` (the newest state of a server is
what a notebook wants to see).
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

import anyio

from ..protocol.jsonrpc import Notification

__all__ = ["NotificationQueue"]


class NotificationQueue:
    """Notifications for one consumer. Iterate with ``async for``; ``close()`` ends the iteration."""

    def __init__(self, maxsize: int, on_close: Callable[[NotificationQueue], None] | None = None) -> None:
        if maxsize < 1:
            raise ValueError(f"maxsize={maxsize} must be >= 1")
        self._items: collections.deque[Notification] = collections.deque(maxlen=maxsize)
        self._wakeup = anyio.Event()
        self._closed = False
        self._on_close = on_close
        #: How many notifications were dropped because the consumer fell behind.
        self.dropped = 0

    def put(self, notification: Notification) -> None:
        if self._closed:
            return
        if len(self._items) == self._items.maxlen:
            self.dropped += 1
        self._items.append(notification)
        self._wakeup.set()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._wakeup.set()
            if self._on_close is not None:
                self._on_close(self)

    def __len__(self) -> int:
        return len(self._items)

    def __aiter__(self) -> NotificationQueue:
        return self

    async def __anext__(self) -> Notification:
        while not self._items:
            if self._closed:
                raise StopAsyncIteration
            await self._wakeup.wait()
            self._wakeup = anyio.Event()
        return self._items.popleft()

    async def __aenter__(self) -> NotificationQueue:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.close()
