"""A scripted fake MCP server for unit tests of the connection logic (in-memory transport).

``FakeServer`` is an ``async def serve(incoming, outgoing)`` callable, so ``Client(FakeServer())``
runs it over the in-memory transport, afresh for every (re)connection. It answers the era
negotiation by itself (``era="modern"``: a DiscoverResult; ``"legacy"``: -32601 to discover, then
``initialize``; ``"silent"``: a legacy server that never answers discover), lists its tools and
answers ``ping``. Everything else is scripted per test::

    server = FakeServer("legacy")
    server.tool("slow", never)                # a tool that never answers
    server.on("prompts/list", reply({...}))   # any method
    await server.connection.notify("notifications/tools/list_changed")

A handler is ``async def handler(message, conn)``; it returns the result dict, ``NO_REPLY`` (send
nothing), or raises ``RpcError`` (an error response). Each request runs in its own task, so a
handler may wait, send progress, or make a request to the client (``await conn.request(...)``).
Every message the client sent, on every connection, is in ``server.received``.
"""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.abc

MODERN_VERSION = "2026-07-28"
NO_REPLY: Any = object()

Handler = Callable[[dict[str, Any], "FakeConnection"], Awaitable[Any]]


class RpcError(Exception):
    """Raised by a handler: the request is answered with this JSON-RPC error."""

    def __init__(self, code: int, message: str = "error", data: Any = None) -> None:
        super().__init__(message)
        self.error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            self.error["data"] = data


# --- handler factories ------------------------------------------------------------------------


async def eventually(condition: Callable[[], Any], timeout: float = 3.0) -> None:
    """Wait until ``condition()`` is true (polling: the fake server runs in the same loop, and
    counters and statuses have no event to wait on)."""
    with anyio.fail_after(timeout):
        while not condition():  # noqa: ASYNC110
            await anyio.sleep(0.005)


def wait_until(condition: Callable[[], Any], timeout: float = 15.0) -> None:
    """The blocking twin of :func:`eventually`, for tests of the notebook layer (whose engine runs
    on a thread of its own). 15 s, not 5: it bounds a wait, it times nothing, and on a loaded 2-core
    machine a group's re-listing after a tools change took longer than 5 s."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {getattr(condition, '__name__', condition)}")
        time.sleep(0.01)


def text_result(text: str = "ok") -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def reply(result: dict[str, Any] | None = None) -> Handler:
    """Answer at once with ``result`` (a text tool result by default)."""

    async def handler(message: dict[str, Any], conn: FakeConnection) -> Any:
        return text_result() if result is None else result

    return handler


def never() -> Handler:
    """Never answer."""

    async def handler(message: dict[str, Any], conn: FakeConnection) -> Any:
        return NO_REPLY

    return handler


def after(seconds: float, result: dict[str, Any] | None = None) -> Handler:
    """Answer after ``seconds`` (even if the client cancelled meanwhile: a late answer)."""

    async def handler(message: dict[str, Any], conn: FakeConnection) -> Any:
        await anyio.sleep(seconds)
        return text_result() if result is None else result

    return handler


def fail(code: int, message: str = "error", data: Any = None) -> Handler:
    """Answer with a JSON-RPC error."""

    async def handler(message: dict[str, Any], conn: FakeConnection) -> Any:
        raise RpcError(code, message, data)

    return handler


# --- the server -------------------------------------------------------------------------------


class FakeServer:
    def __init__(
        self,
        era: str = "modern",
        *,
        name: str = "fake",
        capabilities: dict[str, Any] | None = None,
        instructions: str | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> None:
        assert era in ("modern", "legacy", "silent")
        self.era = era
        self.server_info = {"name": name, "version": "1.0"}
        self.capabilities = capabilities if capabilities is not None else {"tools": {}}
        self.instructions = instructions
        self.tools: list[dict[str, Any]] = list(tools or [])
        self.handlers: dict[str, Handler] = {}
        self.tool_handlers: dict[str, Handler] = {}
        #: Every message received from the client, in order, across connections.
        self.received: list[dict[str, Any]] = []
        self.connections: list[FakeConnection] = []
        #: When False, a new connection ends at once (the server "fails to start").
        self.accepting = True
        self._changed = anyio.Event()
        self.__name__ = f"FakeServer({era})"  # how the memory transport describes us
        self._defaults: dict[str, Handler] = {
            "server/discover": self._discover,
            "initialize": self._initialize,
            "ping": self._ping,
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
        }

    # --- scripting ----------------------------------------------------------------------------

    def on(self, method: str, handler: Handler) -> None:
        self.handlers[method] = handler

    def tool(
        self, name: str, handler: Handler | None = None, *, schema: dict[str, Any] | None = None
    ) -> None:
        """Add a tool to ``tools/list`` and script its ``tools/call`` (answers "ok" by default)."""
        self.tools.append({"name": name, "inputSchema": schema or {"type": "object"}})
        self.tool_handlers[name] = handler or reply()

    # --- observation --------------------------------------------------------------------------

    @property
    def connection(self) -> FakeConnection:
        """The newest connection."""
        return self.connections[-1]

    def requests(self, method: str | None = None) -> list[dict[str, Any]]:
        return [m for m in self.received if "id" in m and "method" in m and method in (None, m["method"])]

    def notifications(self, method: str | None = None) -> list[dict[str, Any]]:
        return [m for m in self.received if "id" not in m and method in (None, m.get("method"))]

    def calls(self, tool: str) -> list[dict[str, Any]]:
        return [m for m in self.requests("tools/call") if m["params"]["name"] == tool]

    async def wait_for(
        self, method: str, where: Callable[[dict[str, Any]], bool] = lambda m: True, timeout: float = 2.0
    ) -> dict[str, Any]:
        """The first message received with ``method`` matching ``where``, waiting for it if needed."""
        with anyio.fail_after(timeout):
            while True:
                for message in self.received:
                    if message.get("method") == method and where(message):
                        return message
                await self._changed.wait()

    # --- serving ------------------------------------------------------------------------------

    async def __call__(
        self,
        incoming: anyio.abc.ObjectReceiveStream[dict[str, Any]],
        outgoing: anyio.abc.ObjectSendStream[dict[str, Any]],
    ) -> None:
        conn = FakeConnection(self, outgoing)
        self.connections.append(conn)
        if not self.accepting:
            return
        async with anyio.create_task_group() as tg:
            conn.scope = tg.cancel_scope
            async for message in incoming:
                self.received.append(message)
                self._changed.set()
                self._changed = anyio.Event()
                if "method" not in message:
                    conn.on_response(message)
                elif "id" in message:
                    tg.start_soon(self._dispatch, conn, message)
            tg.cancel_scope.cancel()  # the client closed the channel

    async def _dispatch(self, conn: FakeConnection, message: dict[str, Any]) -> None:
        method = message["method"]
        handler = self.handlers.get(method) or self._defaults.get(method)
        try:
            if handler is None:
                raise RpcError(-32601, f"method not found: {method}")
            result = await handler(message, conn)
        except RpcError as exc:
            await conn.send({"jsonrpc": "2.0", "id": message["id"], "error": exc.error})
            return
        if result is not NO_REPLY:
            await conn.send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    # default behaviour

    async def _discover(self, message: dict[str, Any], conn: FakeConnection) -> Any:
        if self.era == "silent":
            return NO_REPLY
        if self.era == "legacy":
            raise RpcError(-32601, "method not found: server/discover")
        result: dict[str, Any] = {
            "resultType": "complete",
            "supportedVersions": [MODERN_VERSION],
            "capabilities": self.capabilities,
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": {"io.modelcontextprotocol/serverInfo": self.server_info},
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return result

    async def _initialize(self, message: dict[str, Any], conn: FakeConnection) -> Any:
        if self.era == "modern":
            raise RpcError(-32601, "method not found: initialize")
        result: dict[str, Any] = {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": self.capabilities,
            "serverInfo": self.server_info,
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return result

    async def _ping(self, message: dict[str, Any], conn: FakeConnection) -> Any:
        return {}

    async def _tools_list(self, message: dict[str, Any], conn: FakeConnection) -> Any:
        return {"tools": self.tools}

    async def _tools_call(self, message: dict[str, Any], conn: FakeConnection) -> Any:
        handler = self.tool_handlers.get(message["params"]["name"])
        if handler is None:
            raise RpcError(-32602, "unknown tool")
        return await handler(message, conn)


class FakeConnection:
    """One connection of the fake server: send to the client, ask it things, or drop it."""

    def __init__(self, server: FakeServer, outgoing: anyio.abc.ObjectSendStream[dict[str, Any]]) -> None:
        self.server = server
        self.scope: anyio.CancelScope | None = None
        self._outgoing = outgoing
        self._ids = itertools.count(1)
        self._waiting: dict[Any, tuple[anyio.Event, list[dict[str, Any]]]] = {}

    async def send(self, message: dict[str, Any]) -> None:
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            await self._outgoing.send(message)  # (or the client is gone)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)

    async def progress(
        self, request: dict[str, Any], progress: float, total: float | None = None, text: str | None = None
    ) -> None:
        """A progress notification for ``request`` (the client's message), using its progressToken."""
        params: dict[str, Any] = {
            "progressToken": request["params"]["_meta"]["progressToken"],
            "progress": progress,
        }
        if total is not None:
            params["total"] = total
        if text is not None:
            params["message"] = text
        await self.notify("notifications/progress", params)

    def next_id(self) -> str:
        return f"srv-{next(self._ids)}"

    async def request(
        self, method: str, params: dict[str, Any] | None = None, *, timeout: float = 2.0
    ) -> dict[str, Any]:
        """Send a request to the client and return its whole response message (result or error)."""
        request_id = self.next_id()
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        got = self.expect_response(request_id)
        await self.send(message)
        with anyio.fail_after(timeout):
            return await got()

    def expect_response(self, request_id: Any) -> Callable[[], Awaitable[dict[str, Any]]]:
        """Register interest in the response to ``request_id``; the returned function awaits it."""
        event, box = self._waiting[request_id] = (anyio.Event(), [])

        async def wait() -> dict[str, Any]:
            await event.wait()
            return box[0]

        return wait

    def on_response(self, message: dict[str, Any]) -> None:
        waiting = self._waiting.pop(message.get("id"), None)
        if waiting is not None:
            event, box = waiting
            box.append(message)
            event.set()

    def drop(self) -> None:
        """End this connection abruptly (the server process died)."""
        assert self.scope is not None
        self.scope.cancel()
