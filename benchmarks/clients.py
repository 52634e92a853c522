"""One small adapter per client under test, so every case drives each of them the same way.

Clients: ``ours`` (``mcp_notebook.Client``, default settings), ``ours_novalidate`` (the same with
``validate=False`` per call), ``sdk`` (the official ``mcp`` 2.x ``Client``), ``fastmcp``
(``fastmcp.Client``) and ``raw``: a minimal client with no library at all (newline JSON over a
pipe, or hand-written HTTP/1.1 POSTs over keep-alive sockets) that marks the limit.

Each adapter's library is imported when the adapter is created, not when this module is, so a
memory probe that measures one client loads only that client's library.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import sys
from dataclasses import dataclass, field
from typing import Any

CLIENTS = ("ours", "ours_novalidate", "sdk", "fastmcp", "raw")
LABELS = {
    "ours": "ours",
    "ours_novalidate": "ours (validate=False)",
    "sdk": "SDK",
    "fastmcp": "fastmcp",
    "raw": "raw",
}
LIMIT = 64 * 1024 * 1024  # stream limits for 10 MB results


class NotSupported(Exception):
    """This client cannot run this case (say, our client over HTTP)."""


@dataclass(frozen=True)
class Target:
    """A server: a command (stdio) or a URL (HTTP)."""

    argv: tuple[str, ...] = ()
    url: str | None = None

    @property
    def http(self) -> bool:
        return self.url is not None


@dataclass
class Counter:
    """Counts notifications seen by the application-level callback."""

    n: int = 0
    done: asyncio.Event = field(default_factory=asyncio.Event)
    want: int = -1

    def hit(self) -> None:
        self.n += 1
        if self.n == self.want:
            self.done.set()

    def expect(self, want: int) -> None:
        self.n = 0
        self.want = want
        self.done = asyncio.Event()
        if want <= 0:
            self.done.set()


class Adapter:
    name = "?"

    def __init__(self) -> None:
        self.logs = Counter()

    async def connect(self, target: Target, mode: str = "auto") -> None:
        """``mode``: ``auto`` (probe, fall back) or ``legacy`` (handshake only)."""
        raise NotImplementedError

    async def call(self, name: str, args: dict[str, Any]) -> Any:
        raise NotImplementedError

    async def call_with_progress(self, name: str, args: dict[str, Any], counter: Counter) -> Any:
        raise NotImplementedError

    def structured(self, result: Any) -> Any:
        raise NotImplementedError

    def text(self, result: Any) -> str:
        raise NotImplementedError

    async def list_tools(self) -> int:
        """Every page; returns the number of tools."""
        raise NotImplementedError

    def notifications_seen(self) -> int:
        return self.logs.n

    def connection_cap(self) -> int | None:
        """The most HTTP connections this client opens to one server, where the client says so
        (HTTP/1.1 carries one request per connection, so this bounds the calls truly in flight)."""
        return None

    async def close(self) -> None:
        raise NotImplementedError


# --- ours -----------------------------------------------------------------------------------------


class Ours(Adapter):
    def __init__(self, validate: bool = True) -> None:
        super().__init__()
        from mcp_notebook import Client

        self._cls = Client
        self.validate = validate
        self.name = "ours" if validate else "ours_novalidate"
        self.client: Any = None

    async def connect(self, target: Target, mode: str = "auto") -> None:
        where = target.url if target.http else list(target.argv)
        self.client = self._cls(where, protocol=mode, timeout=300)
        await self.client.connect()

    async def call(self, name: str, args: dict[str, Any]) -> Any:
        return await self.client.call_tool(name, args, validate=self.validate)

    async def call_with_progress(self, name: str, args: dict[str, Any], counter: Counter) -> Any:
        def progress(done: float, total: float | None, message: str | None) -> None:
            counter.hit()

        return await self.client.call_tool(name, args, validate=self.validate, progress=progress)

    def structured(self, result: Any) -> Any:
        return result.structured_content

    def text(self, result: Any) -> str:
        return str(result.text)

    async def list_tools(self) -> int:
        return len(await self.client.list_tools())

    def notifications_seen(self) -> int:
        # Our client handles notifications/message itself (it logs them); its counter is the
        # application-visible count.
        return int(self.client.stats.notifications)

    def connection_cap(self) -> int | None:
        # No public accessor yet: the HTTP transport's own setting, if this client has one.
        cap = getattr(getattr(self.client, "_transport", None), "max_connections", None)
        return cap if isinstance(cap, int) else None

    async def close(self) -> None:
        if self.client is not None:
            await self.client.aclose()


# --- the official SDK -----------------------------------------------------------------------------


class _SdkLikeAdapter(Adapter):
    """What the official SDK's client and fastmcp's share: pydantic results with the same fields."""

    client: Any

    async def call(self, name: str, args: dict[str, Any]) -> Any:
        return await self.client.call_tool(name, args)

    def structured(self, result: Any) -> Any:
        return result.structured_content

    def text(self, result: Any) -> str:
        return "\n".join(getattr(b, "text", "") for b in result.content)


class Sdk(_SdkLikeAdapter):
    name = "sdk"

    def __init__(self) -> None:
        super().__init__()
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters

        self._cls = Client
        self._params = StdioServerParameters
        self.client: Any = None

    async def _on_log(self, params: Any) -> None:
        self.logs.hit()

    async def connect(self, target: Target, mode: str = "auto") -> None:
        server: Any = (
            target.url if target.http else self._params(command=target.argv[0], args=list(target.argv[1:]))
        )
        client = self._cls(server, mode=mode, logging_callback=self._on_log)
        await client.__aenter__()
        self.client = client

    async def call_with_progress(self, name: str, args: dict[str, Any], counter: Counter) -> Any:
        async def progress(done: float, total: float | None, message: str | None) -> None:
            counter.hit()

        return await self.client.call_tool(name, args, progress_callback=progress)

    async def list_tools(self) -> int:
        count = 0
        cursor = None
        while True:
            page = await self.client.list_tools(cursor=cursor)
            count += len(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return count

    async def close(self) -> None:
        if self.client is not None:
            await self.client.__aexit__(None, None, None)


# --- fastmcp --------------------------------------------------------------------------------------


class FastMcp(_SdkLikeAdapter):
    name = "fastmcp"

    def __init__(self) -> None:
        super().__init__()
        from fastmcp import Client
        from fastmcp.client.transports import StdioTransport

        self._cls = Client
        self._stdio = StdioTransport
        self.client: Any = None

    async def _on_log(self, message: Any) -> None:
        self.logs.hit()

    async def connect(self, target: Target, mode: str = "auto") -> None:
        transport: Any = (
            target.url
            if target.http
            else self._stdio(target.argv[0], list(target.argv[1:]), keep_alive=False)
        )
        client = self._cls(transport, mode=mode, log_handler=self._on_log)
        await client.__aenter__()
        self.client = client

    async def call_with_progress(self, name: str, args: dict[str, Any], counter: Counter) -> Any:
        async def progress(done: float, total: float | None, message: str | None) -> None:
            counter.hit()

        return await self.client.call_tool(name, args, progress_handler=progress)

    async def list_tools(self) -> int:
        return len(await self.client.list_tools())

    async def close(self) -> None:
        if self.client is not None:
            await self.client.__aexit__(None, None, None)


# --- raw: the limit -------------------------------------------------------------------------------

MODERN_VERSION = "2026-07-28"
_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
}
_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


class _RawBase(Adapter):
    """What both raw clients share: the era, the envelope, and result accessors."""

    modern = True

    def _params(self, params: dict[str, Any] | None, progress_token: int | None = None) -> dict[str, Any]:
        params = dict(params or {})
        if self.modern:
            meta = dict(_META)
            if progress_token is not None:
                meta["progressToken"] = progress_token
            params["_meta"] = meta
        elif progress_token is not None:
            params["_meta"] = {"progressToken": progress_token}
        return params

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        raise NotImplementedError

    async def notify(self, method: str) -> None:
        raise NotImplementedError

    async def _handshake(self, mode: str) -> None:
        """``auto``: probe ``server/discover``, fall back to ``initialize`` on an error (the least any
        auto-negotiating client must do); ``legacy``: the handshake only."""
        if mode == "auto":
            self.modern = True
            try:
                await self.request("server/discover")
                return
            except RuntimeError:
                pass
        self.modern = False
        await self.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        )
        await self.notify("notifications/initialized")

    async def call(self, name: str, args: dict[str, Any]) -> Any:
        return await self.request("tools/call", {"name": name, "arguments": args})

    def structured(self, result: Any) -> Any:
        return result.get("structuredContent")

    def text(self, result: Any) -> str:
        return "\n".join(b.get("text", "") for b in result["content"])

    async def list_tools(self) -> int:
        count = 0
        cursor = None
        while True:
            page = await self.request("tools/list", {"cursor": cursor} if cursor else None)
            count += len(page["tools"])
            cursor = page.get("nextCursor")
            if not cursor:
                return count


class RawStdio(_RawBase):
    name = "raw"

    def __init__(self) -> None:
        super().__init__()
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._progress: dict[int, Counter] = {}
        self._proc: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None

    async def connect(self, target: Target, mode: str = "auto") -> None:
        if target.http:
            raise NotSupported("use RawHttp")
        self._proc = await asyncio.create_subprocess_exec(
            *target.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            limit=LIMIT,
        )
        self._reader = asyncio.get_running_loop().create_task(self._read_loop())
        await self._handshake(mode)

    async def _read_loop(self) -> None:
        assert self._proc is not None
        assert self._proc.stdout is not None
        stdout = self._proc.stdout
        pending = self._pending
        while True:
            line = await stdout.readline()
            if not line:
                break
            msg = json.loads(line)
            rid = msg.get("id")
            if rid is not None and "method" not in msg:
                future = pending.pop(rid, None)
                if future is not None and not future.done():
                    future.set_result(msg)
            elif msg.get("method") == "notifications/progress":
                counter = self._progress.get(msg["params"]["progressToken"])
                if counter is not None:
                    counter.hit()
            else:
                self.logs.hit()
        for future in pending.values():
            if not future.done():
                future.set_exception(ConnectionError("the server closed its stdout"))

    async def _send(self, msg: dict[str, Any]) -> None:
        assert self._proc is not None
        assert self._proc.stdin is not None
        self._proc.stdin.write(_dumps(msg).encode() + b"\n")
        await self._proc.stdin.drain()

    async def request(
        self, method: str, params: dict[str, Any] | None = None, progress: Counter | None = None
    ) -> dict[str, Any]:
        rid = next(self._ids)
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        stamped = self._params(params, rid if progress is not None else None)
        if stamped:
            msg["params"] = stamped
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[rid] = future
        if progress is not None:
            self._progress[rid] = progress
        try:
            await self._send(msg)
            reply = await future
        finally:
            self._progress.pop(rid, None)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply["result"]  # type: ignore[no-any-return]

    async def notify(self, method: str) -> None:
        await self._send({"jsonrpc": "2.0", "method": method})

    async def call_with_progress(self, name: str, args: dict[str, Any], counter: Counter) -> Any:
        return await self.request("tools/call", {"name": name, "arguments": args}, progress=counter)

    async def close(self) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 5)
        except TimeoutError:
            proc.kill()
            await proc.wait()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader


class RawHttp(_RawBase):
    """Hand-written HTTP/1.1 POSTs over a pool of keep-alive connections, opened on demand up to
    ``max_connections``. The default (100) is the SDK's httpx2 pool size; the in-flight cases raise it
    to the number of calls in flight, so that raw stays the limit when each call waits on a slow
    server (HTTP/1.1 without pipelining: one call per connection at a time)."""

    name = "raw"

    def __init__(self, max_connections: int = 100) -> None:
        super().__init__()
        self._ids = itertools.count(1)
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
        self._all: list[asyncio.StreamWriter] = []
        self._cap = max_connections
        self._slots = asyncio.Semaphore(max_connections)
        self._host = ""
        self._port = 0
        self._path = "/"

    async def connect(self, target: Target, mode: str = "auto") -> None:
        from urllib.parse import urlsplit

        assert target.url is not None
        parts = urlsplit(target.url)
        self._host, self._port, self._path = (
            parts.hostname or "127.0.0.1",
            parts.port or 80,
            parts.path or "/",
        )
        await self._handshake(mode)

    async def _exchange(self, body: bytes) -> tuple[int, bytes]:
        async with self._slots:
            if self._idle:
                reader, writer = self._idle.pop()
            else:
                reader, writer = await asyncio.open_connection(self._host, self._port, limit=LIMIT)
                self._all.append(writer)
            version = f"MCP-Protocol-Version: {MODERN_VERSION}\r\n" if self.modern else ""
            writer.write(
                (
                    f"POST {self._path} HTTP/1.1\r\nHost: {self._host}:{self._port}\r\n"
                    "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                    f"{version}Content-Length: {len(body)}\r\n\r\n"
                ).encode()
                + body
            )
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.split(b"\r\n")
            status = int(lines[0].split()[1])
            length = 0
            for line in lines[1:]:
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            data = await reader.readexactly(length) if length else b""
            self._idle.append((reader, writer))
            return status, data

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": next(self._ids), "method": method}
        stamped = self._params(params)
        if stamped:
            msg["params"] = stamped
        status, data = await self._exchange(_dumps(msg).encode())
        reply = json.loads(data)
        if "error" in reply:
            raise RuntimeError(f"{method}: HTTP {status} {reply['error']}")
        return reply["result"]  # type: ignore[no-any-return]

    async def notify(self, method: str) -> None:
        await self._exchange(_dumps({"jsonrpc": "2.0", "method": method}).encode())

    async def call_with_progress(self, name: str, args: dict[str, Any], counter: Counter) -> Any:
        raise NotSupported("progress over HTTP is not benchmarked")

    def connection_cap(self) -> int | None:
        return self._cap

    async def close(self) -> None:
        for writer in self._all:
            writer.close()
        for writer in self._all:
            with contextlib.suppress(OSError):
                await writer.wait_closed()
        self._all.clear()
        self._idle.clear()


def make(name: str, *, http: bool = False, raw_connections: int = 100) -> Adapter:
    """The adapter for client ``name``; ``raw_connections`` caps the raw HTTP client's pool only (the
    libraries keep their own defaults: they are what users get)."""
    if name == "ours":
        return Ours(validate=True)
    if name == "ours_novalidate":
        return Ours(validate=False)
    if name == "sdk":
        return Sdk()
    if name == "fastmcp":
        return FastMcp()
    if name == "raw":
        return RawHttp(raw_connections) if http else RawStdio()
    raise ValueError(f"unknown client {name!r}")


def python_argv(*args: str) -> tuple[str, ...]:
    return (sys.executable, *args)
