"""The state one OAuth sign-in passes between its steps, and the bounded reads of its responses.

Why a module of its own: the flow (:mod:`._oauth`) and the steps it delegates to (client identity
in :mod:`._client_auth`, the human step in :mod:`._user_step`) all read the same per-request mailbox;
keeping it here lets those steps depend on this small record instead of on the object that owns them.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from ..protocol._errors import McpError
from ..transports._http_common import safe_url
from ..transports._http_engine import TooLarge, read_bounded
from ._discovery import AuthServer, ProtectedResource
from ._records import ClientInfo, Tokens

__all__ = ["HTTP_TIMEOUT", "Discovered", "Flow", "ServerState", "read_capped", "set_aside"]

HTTP_TIMEOUT = httpx.Timeout(30.0).as_dict()  # metadata, registration and token requests


@dataclass
class Discovered:
    resource: str  # the `resource` parameter: the PRM's resource as published, else the canonical URL
    server: AuthServer
    prm: ProtectedResource | None


class ServerState:
    """One protected resource (an MCP server, named by its canonical URL) and the tokens held for it.

    Why one per URL and not one per origin: RFC 8707 binds a token to the resource it was issued for,
    and two MCP servers on one origin (a gateway's tenants, ``/a/mcp`` and ``/b/mcp``) are two
    resources. Each gets its own tokens, loaded from and saved to the store under its own URL, so one
    server's token never reaches the other.
    """

    __slots__ = ("loaded", "tokens", "url")

    def __init__(self, url: str) -> None:
        self.url = url  # canonical_resource() of the server's URL: the store's key
        self.tokens: Tokens | None = None
        self.loaded = False  # the store has been read for this server

    def __repr__(self) -> str:
        return f"ServerState({self.url!r}, tokens={self.tokens!r})"


class Flow:
    """Per-request state shared by the flow and its sub-steps: the server it goes to, the mailbox
    for the latest response, and what this request has already tried (so it cannot loop)."""

    def __init__(self, request: httpx.Request, server: ServerState, max_bytes: int) -> None:
        self.request = request
        self.server = server
        self.max_bytes = max_bytes
        self.response: httpx.Response | None = None
        self.refreshed = False
        self.authorized = False
        self.step_ups = 0
        self.discovered: Discovered | None = None
        self.client: ClientInfo | None = None
        self.tokens: Tokens | None = None

    async def received(self) -> httpx.Response:
        response, self.response = self.response, None
        if response is None:  # pragma: no cover - a flow bug, not a server's
            raise RuntimeError("OAuth flow resumed without a response")
        await read_capped(response, self.max_bytes)
        return response


async def read_capped(response: httpx.Response, limit: int) -> None:
    """Read a response the flow looks at, or that httpx would read whole before the next request,
    counting its decoded bytes as they arrive: OAuth documents are small, so a server that sends
    a huge one (or a gzip bomb) fails this sign-in instead of filling the client's memory."""
    try:
        await read_bounded(response, limit)
    except TooLarge as exc:
        raise McpError(
            "auth",
            f"{safe_url(response.url)} answered with more than max_response_bytes={limit} bytes (at least "
            f"{exc.size}); refused. Pass OAuth(max_response_bytes=...) to accept larger OAuth responses.",
        ) from None


async def set_aside(response: httpx.Response, limit: int) -> None:
    """Finish with the body of a 401 or 403 the flow is about to answer. The flow does not need it,
    but httpx reads a response whole before sending the flow's next request; read here within
    ``limit``, a larger body (a gzip bomb for an error page) is dropped instead, connection and all."""
    try:
        await read_bounded(response, limit)
    except TooLarge:
        response.headers.pop("content-encoding", None)
        response.stream = httpx.ByteStream(b"")
