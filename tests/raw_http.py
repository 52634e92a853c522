"""A tiny HTTP/1.1 server on anyio, in the test's own event loop, for byte-exact HTTP misbehaviour.

Why not uvicorn: the reader's tests and the fuzzer need to put arbitrary bytes in a body (invalid
UTF-8, half an event, a wrong content type) and to refuse or end a stream at an exact moment, and
they run thousands of examples, so a subprocess per server and an ASGI layer in between cost more
than they give. Every response closes its connection (``Connection: close``), so there is no
keep-alive state to get wrong; a streamed body (SSE) simply ends when the handler returns.

    async def app(request: RawRequest, reply: Reply) -> None:
        await reply.send(200, b'{"ok": true}', content_type="application/json")

    async with raw_http_server(app) as url:
        ...
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass

import anyio
import anyio.abc

__all__ = ["RawRequest", "Reply", "raw_http_server"]

_MAX_HEAD = 64 * 1024
_REASONS = {
    200: "OK",
    202: "Accepted",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    503: "Service Unavailable",
}


@dataclass
class RawRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: bytes


class Reply:
    """Writes one response: all at once (``send``) or as a stream (``start`` then ``write``)."""

    def __init__(self, stream: anyio.abc.ByteStream) -> None:
        self._stream = stream
        self.started = False

    async def start(self, status: int, *, content_type: str, headers: dict[str, str] | None = None) -> None:
        lines = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}", f"Content-Type: {content_type}"]
        lines += ["Connection: close", "Cache-Control: no-store"]
        lines += [f"{name}: {value}" for name, value in (headers or {}).items()]
        await self._stream.send(("\r\n".join(lines) + "\r\n\r\n").encode())
        self.started = True

    async def write(self, data: bytes) -> None:
        if data:
            await self._stream.send(data)

    async def send(
        self,
        status: int,
        body: bytes = b"",
        *,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        await self.start(
            status, content_type=content_type, headers={"Content-Length": str(len(body)), **(headers or {})}
        )
        await self.write(body)


App = Callable[[RawRequest, Reply], Awaitable[None]]


async def _read_request(stream: anyio.abc.ByteStream) -> RawRequest | None:
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > _MAX_HEAD:
            return None
        try:
            chunk = await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    request_line, *header_lines = head.decode("latin-1").split("\r\n")
    method, path, _version = request_line.split(" ", 2)
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        try:
            body += await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
            return None
    return RawRequest(method, path, headers, body[:length])


@asynccontextmanager
async def raw_http_server(app: App) -> AsyncIterator[str]:
    """Serve ``app`` on a free localhost port until the block ends; yields the base URL."""
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)

    async def handle(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            request = await _read_request(stream)
            if request is None:
                return
            # The client may go away mid-response: that ends this exchange, nothing else.
            with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, ConnectionError):
                await app(request, Reply(stream))

    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, handle)
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            tg.cancel_scope.cancel()
