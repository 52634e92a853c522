"""The line between the connection and the wire.

A :class:`Transport` is a recipe for reaching one server (a command to run, an in-process server);
``connect()`` turns it into a live :class:`Channel` for as long as its ``async with`` lasts, and can
be called again to reconnect (a stdio server is restarted that way). A channel moves JSON-RPC
messages: ``send`` takes a message dict, ``receive`` returns the next classified message or a
:class:`~mcp_notebook.protocol._jsonrpc.FrameError` describing a frame it could not use, and raises
``McpError(kind="transport")`` once the other side is gone.

A failed ``send`` says whether the message may have reached the server: :class:`NotDelivered` means
provably not (nothing was written: the channel was gone before the write began), so the connection
may send it again on the next channel; any other ``McpError`` means it may have arrived and run, so
it is never sent again (a non-idempotent tool must not run twice, and a request that crashed the
server must not crash the restarted one).

Transports know nothing of tools, caches, eras or widgets; that is why the line is drawn here: a new
transport is one file, and the connection logic is tested once for all of them. Example::

    async with StdioTransport(["python", "-m", "mcp_notebook.demo"]).connect() as channel:
        await channel.send({"jsonrpc": "2.0", "id": 1, "method": "ping"})
        message = await channel.receive()
"""

from __future__ import annotations

import asyncio
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

from ..protocol._errors import CONNECTION_CLOSED, McpError, McpTransportError
from ..protocol._jsonrpc import FrameError, Message, RequestId
from ..protocol._secrets import NO_SECRETS, Secrets
from ..protocol._versions import Era

__all__ = [
    "Channel",
    "NotDelivered",
    "OversizedFrame",
    "RequestFailed",
    "Transport",
    "on_asyncio",
    "secrets_of",
]


class NotDelivered(McpTransportError):
    """``send`` wrote nothing at all: the message cannot have reached the server.

    Raise it only with proof (the pipe or stream was already closed before the write began, the
    TCP connection was never made); when in doubt raise a plain ``McpError``, which the connection
    reads as "may have run" and never resends.
    """

    def __init__(self, message: str, *, code: int | None = CONNECTION_CLOSED) -> None:
        super().__init__("transport", message, code=code)


def on_asyncio() -> bool:
    """Is the running event loop asyncio's? (The fast paths are asyncio-only; trio gets anyio's.)"""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class OversizedFrame(FrameError):
    """A frame longer than ``max_message_bytes``; it was discarded and only its head kept."""

    def __init__(self, size: int, limit: int, head: bytes, tail: bytes = b"") -> None:
        super().__init__(f"a message of at least {size} bytes exceeded max_message_bytes={limit}", head)
        self.size = size
        self.limit = limit
        #: The last bytes of the frame: some servers (the TypeScript SDK) put "id" last.
        self.tail = tail


class RequestFailed:
    """One request failed in the transport, not in the server: deliver ``error`` to its caller.

    Message transports (HTTP) carry each request on its own exchange, so one can fail (a refused
    connection, a 401, a response stream cut short) while the channel stays usable for the others.
    """

    __slots__ = ("error", "id")

    def __init__(self, request_id: RequestId, error: McpError) -> None:
        self.id = request_id
        self.error = error

    def __repr__(self) -> str:
        return f"RequestFailed(id={self.id!r}, error={self.error!r})"


class Channel(Protocol):
    """One live connection to a server."""

    @property
    def congested(self) -> bool:
        """True when ``send`` may block for a while (the peer is not keeping up).

        The connection then bounds the send by the request's deadline; otherwise it skips that
        cost, which matters on the hot path.
        """
        ...

    @property
    def hears_server(self) -> bool:
        """True while a message the server sends on its own (a list change) can reach us.

        Pipes always can; legacy Streamable HTTP only while its GET stream is open. A cached list
        counts as watched only while this holds.
        """
        ...

    @property
    def routes_by_headers(self) -> bool:
        """True when modern requests carry ``Mcp-*`` routing headers (Streamable HTTP): a tool
        whose ``x-mcp-header`` declarations break the rules must then be left out of the list."""
        ...

    async def send(self, message: dict[str, Any]) -> None:
        """Send one JSON-RPC message; raises ``McpError(kind="transport")`` if the peer is gone.

        Raises :class:`NotDelivered` only when nothing of the message was written.
        """
        ...

    async def receive(self) -> Message | FrameError | RequestFailed:
        """The next message, a FrameError for a frame that was skipped, or a failed request.

        Raises ``McpError(kind="transport")`` when the channel is closed.
        """
        ...


class Transport(Protocol):
    """A way to reach one server, connectable again and again."""

    def connect(self) -> AbstractAsyncContextManager[Channel]:
        """Open a channel; leaving the context shuts it down gracefully (and stops a subprocess)."""
        ...

    def describe(self) -> str:
        """A short description for reprs and messages; it never contains a secret."""
        ...

    def recent_stderr(self) -> list[str]:
        """The server's recent stderr lines, newest last (empty when there is no such thing)."""
        ...

    def era_hint(self) -> tuple[Era, str] | None:
        """The era and version this server was found to speak before, if the transport remembers.

        HTTP remembers per endpoint so that a second client of a legacy-only server does not probe
        ``server/discover`` again; ``None`` means "probe as usual".
        """
        ...


def secrets_of(transport: object) -> Secrets:
    """The values ``transport`` was given to reach its server (env, headers, a token), to be masked
    wherever the server's text is shown; a transport without any (in-memory, a user's own
    without a ``secrets`` attribute) has none."""
    secrets = getattr(transport, "secrets", None)
    return secrets if isinstance(secrets, Secrets) else NO_SECRETS
