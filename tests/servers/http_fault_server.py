"""A small MCP-over-HTTP server that misbehaves on request, for the HTTP transport's fault tests.

A raw ASGI app on uvicorn (no MCP SDK), so every byte on the wire is under the test's control.
``python tests/servers/http_fault_server.py [flags]`` binds ``--host`` (default ``127.0.0.1``)
on ``--port`` (default 0: a free port) plus a second, "other" port on the same host, then prints
exactly one line to stdout, ``MCP_HTTP_URL=http://127.0.0.1:PORT/mcp``, once it accepts
connections. Logging goes to stderr.

MCP endpoint ``/mcp`` (and ``/moved``, the same-origin redirect target) on either port:

Legacy Streamable HTTP, 2025-11-25 (the default)
    ``initialize`` (answers the requested version if it is a handshake version, else 2025-11-25;
    JSON body, ``Mcp-Session-Id`` header), ``notifications/initialized``, ``ping``,
    ``tools/list`` (JSON body) and ``tools/call`` (always an SSE body: a priming event with an
    ``id:``, ``retry:`` and empty data, then ``notifications/progress`` events if the request
    carries ``_meta.progressToken``, then the response; every event has an ``id:``). Tools:

    ``echo``  ``{"text": string}`` -> the text, as text content
    ``slow``  ``{"seconds": number = 1, "steps": integer = 1}`` -> "slow done after Ns", sleeping
              ``seconds`` in ``steps`` parts with a progress notification after each

    Checks, in order: ``Content-Type: application/json`` (else 415), ``Accept`` naming both
    ``application/json`` and ``text/event-stream`` (else 406), a parseable single JSON-RPC message
    (else 400), an ``MCP-Protocol-Version`` header, if any, that is a handshake version (else 400
    with a plain -32600 error, as a 2025-11-25 server answers a modern probe) and equals the
    session's negotiated version. Anything but ``initialize`` needs an ``Mcp-Session-Id``: missing
    -> 400, unknown -> 404. Notifications and responses -> 202; ``notifications/cancelled``
    cancels the running call (no response is sent; its stream ends). Unknown methods -> -32601.
    ``GET`` with the session opens an idle standalone SSE stream; ``GET`` with ``Last-Event-ID``
    resumes a ``tools/call`` stream after that event (400 if the id is unknown), delivering what
    follows, the response included. ``DELETE`` ends the session (200).

Modern, 2026-07-28 (``--modern``, or ``POST /_admin/set {"modern": true}``)
    POST only (``GET``/``DELETE`` -> 405). ``server/discover`` (``supportedVersions:
    ["2026-07-28"]``), ``tools/list`` and ``tools/call`` as above, every response an SSE body
    (events without ids); results carry ``resultType``, ``ttlMs``/``cacheScope`` where the schema
    wants them and ``_meta["io.modelcontextprotocol/serverInfo"]``. The per-request envelope is
    checked: ``MCP-Protocol-Version`` must be 2026-07-28 (else, and for ``initialize``, 400
    -32022 with ``data: {supported, requested}``), ``_meta`` must hold the protocol version and
    client capabilities (else 400 -32602), and the header must equal the ``_meta`` version,
    ``Mcp-Method`` the method and ``Mcp-Name`` the tool name on ``tools/call`` (else 400 -32020;
    ``=?base64?...?=`` values are decoded). Unknown methods -> 404 -32601. Notifications -> 202.
    Closing a ``tools/call`` response cancels the call.

Switches (each an argv flag, or a field of ``POST /_admin/set`` with a JSON object body):

``forget``            ``POST /_admin/forget``: forget every session, as a restart would; the next
                      request with an old ``Mcp-Session-Id`` gets 404.
``forget_calls``      ``{"forget_calls": true}`` (legacy): every ``tools/call`` forgets every session
                      and is answered 404, as a server behind a balancer that keeps no sessions
                      does: a renewed session is forgotten again.
``drop``              ``--drop end|abort`` / ``{"drop": "end"|"abort"|"off"}``: the response stream
                      of a ``tools/call`` is dropped after its first events, either ended cleanly
                      (``end``) or by closing the connection mid-body (``abort``). Legacy: after the
                      priming event (``id:`` + ``retry:``) and ``drop_after`` more events; the call
                      keeps running and the client resumes with ``GET`` + ``Last-Event-ID`` and
                      gets the response there (SEP-1699). Modern: after ``drop_after`` events, with
                      no final response ever (the call is cancelled; the client must re-issue it).
                      ``drop_times`` (default -1, unlimited) limits how many streams are dropped;
                      ``drop_after`` defaults to 0 and ``retry_ms`` (the ``retry:`` value) to 100.
                      ``{"drop": "poll"}`` (legacy): a long call polled (SEP-1699): the POST
                      stream ends cleanly like ``end``, and so does every resuming ``GET`` after
                      sending only the events there are so far, until the response is sent.
``unauthorized``      ``--unauthorized`` / ``{"unauthorized": true}``: every MCP request gets 401
                      with ``WWW-Authenticate: Bearer`` (``Bearer error="invalid_token"`` when an
                      ``Authorization`` header was sent) and no OAuth metadata anywhere. With
                      ``token`` set, requests carrying ``Authorization: Bearer <token>`` pass.
``redirect``          ``--redirect other-port|localhost|same-origin``: a request to ``/mcp`` at the
                      main origin (``127.0.0.1:PORT``) gets a ``redirect_status`` (default 307)
                      redirect to ``http://127.0.0.1:OTHER/mcp`` (another port: another origin),
                      ``http://localhost:PORT/mcp`` (another host name: another origin) or
                      ``http://127.0.0.1:PORT/moved`` (the same origin). The targets serve MCP
                      normally, so a client that follows gets answers, and ``/_admin/seen`` shows
                      whether the redirected request carried an ``Authorization`` header.
``list_changed``      ``{"list_changed": true}``: announce ``tools.listChanged`` (so a client watches
                      the list: legacy on its GET stream, modern on ``subscriptions/listen``).
``get_stream``        ``{"get_stream": "open"|"refuse"|"drop"|"poll"|"fail"}``: the legacy standalone
                      GET stream is held open (default), refused with 405, ended as soon as it
                      starts (nothing sent), ended cleanly right after a priming event (``id:
                      get-N``, ``retry: <retry_ms>``: the server making the client poll, SEP-1699;
                      a GET with ``Last-Event-ID: get-N`` resumes it), or answered 500.
``listen_end``        ``{"listen_end": S}``: modern ``subscriptions/listen`` streams end gracefully S
                      seconds after the acknowledgement (the ``complete`` result, then the end of
                      the body); negative (default): held open.
``listen_drop``       ``{"listen_drop": S}``: modern ``subscriptions/listen`` streams (acknowledged
                      with the filter asked for) are cut S seconds after the acknowledgement, as a
                      proxy that closes idle streams does; negative (default): held open.
``header_tools``      ``{"header_tools": true}`` (modern): ``tools/list`` adds ``region_echo``, whose
                      ``region`` argument is declared ``x-mcp-header: <region_header>`` (default
                      ``Region``; a call must carry it as ``Mcp-Param-<region_header>``, else 400
                      -32020), and two tools whose declarations break the rules
                      (``nullable_header``: on a ``["string", "null"]`` property; ``header_in_items``:
                      under ``items``). Changing ``region_header`` mid-session makes a client's
                      learnt header stale, as a server that changed its tool does.
``pad``               ``{"pad": N}``: ``echo`` answers its text followed by N bytes of ``x``, and
                      ``tools/list`` gives its first tool a description of N bytes: answers larger
                      than a client's ``max_message_bytes``, as an SSE event and as a JSON body.

HTTP+SSE, 2024-11-05, polled (``GET /sse``, ``POST /messages?session_id=...``; legacy mode only)
    ``GET /sse`` opens a session: one ``endpoint`` event naming ``/messages?session_id=S``, then
    the stream ends cleanly. Every event has an id (``S/n``) and ``retry: <retry_ms>``: the server
    makes the client poll (SEP-1699). ``GET /sse`` with ``Last-Event-ID: S/n`` resumes session S:
    the events after ``n`` (answers to what was posted), then the end again. ``initialize``,
    ``ping`` and ``tools/list`` are answered (on the stream); other requests get -32601; POSTs get
    202. ``{"sse_get": "fail"}`` answers every ``GET /sse`` with 500 (default ``"poll"``).

Admin endpoints (never subject to the switches; JSON bodies):

``GET /_admin/state``       the switches, the main and other ports, the number of sessions
``POST /_admin/set``        change switches (fields as above; ``modern``, ``token``, ...)
``POST /_admin/forget``     forget all sessions -> ``{"forgotten": n}``
``POST /_admin/reset``      switches back to the command line's, sessions and records cleared
``GET /_admin/seen``        ``{"requests": [...], "cancelled": [...], "dropped": [...]}``: every MCP
                            HTTP request (``port``, ``host``, ``method``, ``path``,
                            ``authorization``, ``session``, ``protocol_version``, ``last_event_id``,
                            ``mcp_method``, ``mcp_name``, ``rpc_method``, ``rpc_id``, ``status``,
                            ``at``: when it arrived, by the server's monotonic clock),
                            and the JSON-RPC ids of calls cancelled and of streams dropped
``POST /_admin/clear_seen`` forget those records
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import dataclasses
import json
import logging
import socket
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import uvicorn

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"
SERVER_INFO = {"name": "http-fault-server", "version": "1.0.0"}
URL_PREFIX = "MCP_HTTP_URL="
MCP_PATHS = ("/mcp", "/moved")
SSE_PATHS = ("/sse", "/messages")
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

TOOLS = [
    {
        "name": "echo",
        "description": "Return the text unchanged.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    },
    {
        "name": "slow",
        "description": "Sleep `seconds` in `steps` parts, reporting progress after each part.",
        "inputSchema": {
            "type": "object",
            "properties": {"seconds": {"type": "number"}, "steps": {"type": "integer", "minimum": 1}},
        },
    },
]

Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]

logger = logging.getLogger("http_fault_server")


class _Abort(Exception):
    """Raised after a response has started: uvicorn then closes the connection mid-body."""


@dataclasses.dataclass
class Switches:
    modern: bool = False
    drop: str = "off"  # off | end | abort | poll
    drop_times: int = -1  # streams still to drop; -1 = every one
    drop_after: int = 0  # events sent (after the legacy priming event) before the drop
    retry_ms: int = 100
    unauthorized: bool = False
    token: str | None = None
    redirect: str = "off"  # off | other-port | localhost | same-origin
    redirect_status: int = 307
    pad: int = 0  # bytes added to echo's text and to tools/list (an answer over max_message_bytes)
    list_changed: bool = False  # announce tools.listChanged (legacy: initialize; modern: discover)
    get_stream: str = "open"  # legacy standalone GET stream: open | refuse (405) | drop | poll | fail
    listen_drop: float = -1.0  # modern: end each subscriptions/listen stream this many s after its ack
    listen_end: float = -1.0  # modern: end each listen gracefully (complete) this many s after its ack
    sse_get: str = "poll"  # HTTP+SSE: GET /sse polls (poll) or is answered 500 (fail)
    header_tools: bool = False  # modern: also list tools with x-mcp-header declarations (two broken)
    region_header: str = "Region"  # the header name `region_echo` declares (change it: -32020)
    forget_calls: bool = False  # legacy: each tools/call forgets every session and gets 404

    def update(self, changes: dict[str, Any]) -> None:
        known = {f.name for f in dataclasses.fields(self)}
        unknown = set(changes) - known
        if unknown:
            raise ValueError(f"unknown switches: {sorted(unknown)}")
        for name, value in changes.items():
            setattr(self, name, value)
        if self.get_stream not in ("open", "refuse", "drop", "poll", "fail"):
            raise ValueError(f"get_stream must be open, refuse, drop, poll or fail, not {self.get_stream!r}")
        if self.drop not in ("off", "end", "abort", "poll"):
            raise ValueError(f"drop must be off, end, abort or poll, not {self.drop!r}")
        if self.redirect not in ("off", "other-port", "localhost", "same-origin"):
            raise ValueError(
                f"redirect must be off, other-port, localhost or same-origin, not {self.redirect!r}"
            )

    def take_drop(self) -> str | None:
        """How to drop the next response stream (``end``/``abort``), or None to deliver it whole."""
        if self.drop == "off" or self.drop_times == 0:
            return None
        if self.drop_times > 0:
            self.drop_times -= 1
        return self.drop


class EventLog:
    """The events of one legacy ``tools/call`` response stream, kept for resumption."""

    def __init__(self, session_id: str) -> None:
        self.id = uuid.uuid4().hex[:12]
        self.session_id = session_id
        self.events: list[tuple[str, str | None]] = []  # (event id, JSON data); None = priming event
        self.done = False
        self._changed = asyncio.Condition()

    async def add(self, data: str | None) -> None:
        async with self._changed:
            self.events.append((f"{self.id}/{len(self.events)}", data))
            self._changed.notify_all()

    async def finish(self) -> None:
        async with self._changed:
            self.done = True
            self._changed.notify_all()

    async def wait_beyond(self, index: int) -> None:
        """Wait until there is an event at ``index`` or the stream is finished."""
        async with self._changed:
            await self._changed.wait_for(lambda: len(self.events) > index or self.done)

    def index_of(self, event_id: str) -> int | None:
        for i, (eid, _) in enumerate(self.events):
            if eid == event_id:
                return i
        return None


@dataclasses.dataclass
class Session:
    id: str
    protocol_version: str
    streams: dict[str, EventLog] = dataclasses.field(default_factory=dict)
    calls: dict[str, asyncio.Task[None]] = dataclasses.field(default_factory=dict)
    polls: int = 0  # priming events sent on the standalone GET stream (get_stream="poll")


def _dumps(message: Any) -> str:
    return json.dumps(message, separators=(",", ":"))


def _error(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _decode_header_value(value: str) -> str:
    if value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[len("=?base64?") : -2]).decode("utf-8")
        except ValueError:
            return value
    return value


async def _read_body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    return b"".join(chunks)


async def _respond(
    send: Send,
    status: int,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> None:
    """One whole response; a non-bytes ``body`` is sent as JSON."""
    all_headers = dict(headers or {})
    if body is None:
        payload = b""
    elif isinstance(body, bytes):
        payload = body
    else:
        payload = _dumps(body).encode()
        all_headers.setdefault("content-type", "application/json")
    raw = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in all_headers.items()]
    raw.append((b"content-length", str(len(payload)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": payload, "more_body": False})


async def _start_sse(send: Send, headers: dict[str, str] | None = None) -> None:
    all_headers = {"content-type": "text/event-stream", "cache-control": "no-cache", **(headers or {})}
    raw = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in all_headers.items()]
    await send({"type": "http.response.start", "status": 200, "headers": raw})


async def _send_chunk(send: Send, text: str) -> None:
    await send({"type": "http.response.body", "body": text.encode(), "more_body": True})


async def _end(send: Send) -> None:
    await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _until_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _race_disconnect(receive: Receive, writing: Awaitable[None]) -> bool:
    """Run ``writing`` until it finishes or the client goes away; True if the client went away."""
    writer = asyncio.ensure_future(writing)
    watcher = asyncio.ensure_future(_until_disconnect(receive))
    try:
        done, _ = await asyncio.wait({writer, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (writer, watcher):
            if not task.done():
                task.cancel()
        await asyncio.gather(writer, watcher, return_exceptions=True)
    if writer in done:
        writer.result()  # re-raises _Abort
        return False
    return True


def _key(request_id: Any) -> str:
    return _dumps(request_id)


class FaultServer:
    """The ASGI app, with all its state."""

    def __init__(self, startup: Switches) -> None:
        self.startup = startup
        self.switches = dataclasses.replace(startup)
        self.sessions: dict[str, Session] = {}
        #: HTTP+SSE sessions: the (event type, data) of every event, in order (index = id suffix).
        self.sse_sessions: dict[str, list[tuple[str, str]]] = {}
        self.requests: list[dict[str, Any]] = []
        self.cancelled: list[Any] = []
        self.dropped: list[Any] = []
        self.host = "127.0.0.1"
        self.port = 0
        self.other_port = 0

    # ------------------------------------------------------------------ dispatch

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        path = scope["path"]
        if path.startswith("/_admin/"):
            await self.admin(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        record: dict[str, Any] = {
            "port": scope["server"][1] if scope.get("server") else None,
            "host": headers.get("host"),
            "method": scope["method"],
            "path": path,
            "authorization": headers.get("authorization"),
            "session": headers.get("mcp-session-id"),
            "protocol_version": headers.get("mcp-protocol-version"),
            "last_event_id": headers.get("last-event-id"),
            "mcp_method": headers.get("mcp-method"),
            "mcp_name": headers.get("mcp-name"),
            "rpc_method": None,
            "rpc_id": None,
            "status": None,
            "at": time.monotonic(),  # when it arrived, by the server's clock (reconnect gaps)
        }
        self.requests.append(record)

        async def recording_send(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                record["status"] = message["status"]
            await send(message)

        await self.mcp(scope, receive, recording_send, headers, record)

    async def mcp(
        self,
        scope: dict[str, Any],
        receive: Receive,
        send: Send,
        headers: dict[str, str],
        record: dict[str, Any],
    ) -> None:
        switches = self.switches
        if scope["path"] not in MCP_PATHS + SSE_PATHS or (scope["path"] in SSE_PATHS and switches.modern):
            await _respond(send, 404, b"Not Found", {"content-type": "text/plain"})
            return
        # Read the whole body first, so the record names the JSON-RPC message even when a
        # switch answers before it is looked at.
        body = await _read_body(receive) if scope["method"] == "POST" else b""
        with contextlib.suppress(ValueError, AttributeError):
            message = json.loads(body)
            record["rpc_method"], record["rpc_id"] = message.get("method"), message.get("id")
        if switches.unauthorized:
            authorization = headers.get("authorization")
            if switches.token is None or authorization != f"Bearer {switches.token}":
                challenge = "Bearer" if authorization is None else 'Bearer error="invalid_token"'
                await _respond(
                    send,
                    401,
                    {"error": "invalid_token", "error_description": "Authentication required"},
                    {"www-authenticate": challenge},
                )
                return
        if switches.redirect != "off" and self._at_main_origin(scope, headers) and scope["path"] == "/mcp":
            target = {
                "other-port": f"http://127.0.0.1:{self.other_port}/mcp",
                "localhost": f"http://localhost:{self.port}/mcp",
                "same-origin": f"http://127.0.0.1:{self.port}/moved",
            }[switches.redirect]
            await _respond(send, switches.redirect_status, b"", {"location": target})
            return
        method = scope["method"]
        if scope["path"] in SSE_PATHS:
            await self.sse_binding(scope, send, headers, body)
            return
        if switches.modern:
            if method != "POST":
                await _respond(send, 405, b"", {"allow": "POST"})
                return
            await self.modern_post(body, receive, send, headers)
        elif method == "POST":
            await self.legacy_post(body, receive, send, headers)
        elif method == "GET":
            await self.legacy_get(receive, send, headers)
        elif method == "DELETE":
            await self.legacy_delete(send, headers)
        else:
            await _respond(send, 405, b"", {"allow": "GET, POST, DELETE"})

    def _tools(self) -> list[dict[str, Any]]:
        if not self.switches.pad:
            return TOOLS
        return [{**TOOLS[0], "description": "x" * self.switches.pad}, *TOOLS[1:]]

    def _at_main_origin(self, scope: dict[str, Any], headers: dict[str, str]) -> bool:
        port = scope["server"][1] if scope.get("server") else None
        host = headers.get("host", "").rsplit(":", 1)[0]
        return port == self.port and host != "localhost"

    async def _parse(self, body: bytes, send: Send, headers: dict[str, str]) -> dict[str, Any] | None:
        """The POSTed JSON-RPC message, or None once an error response was sent."""
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type != "application/json":
            await _respond(send, 415, _error(None, -32600, "Unsupported Media Type: use application/json"))
            return None
        accept = headers.get("accept", "")
        if "application/json" not in accept or "text/event-stream" not in accept:
            await _respond(
                send,
                406,
                _error(None, -32600, "Not Acceptable: accept application/json and text/event-stream"),
            )
            return None
        try:
            message = json.loads(body)
        except ValueError as exc:
            await _respond(send, 400, _error(None, -32700, f"Parse error: {exc}"))
            return None
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            await _respond(send, 400, _error(None, -32600, "Invalid Request: one JSON-RPC message expected"))
            return None
        return message

    # --------------------------------------------------------------------- legacy

    async def legacy_post(self, body: bytes, receive: Receive, send: Send, headers: dict[str, str]) -> None:
        message = await self._parse(body, send, headers)
        if message is None:
            return
        method = message.get("method")
        version = headers.get("mcp-protocol-version")
        if version is not None and version not in HANDSHAKE_VERSIONS:
            text = f"Bad Request: Unsupported protocol version: {version}"
            await _respond(send, 400, _error(None, -32600, text))
            return
        if method == "initialize" and "id" in message:
            await self.initialize(message, send)
            return
        session = await self._session(send, headers)
        if session is None:
            return
        if version is not None and version != session.protocol_version:
            text = f"Bad Request: MCP-Protocol-Version {version}, negotiated {session.protocol_version}"
            await _respond(send, 400, _error(None, -32600, text))
            return
        if "id" not in message or method is None:  # a notification or a response
            if method == "notifications/cancelled":  # before the 202: the client may ask seen() next
                self._cancel(session, (message.get("params") or {}).get("requestId"))
            await _respond(send, 202)
            return
        request_id = message["id"]
        if method == "tools/call" and self.switches.forget_calls:
            self.sessions.clear()
            await _respond(send, 404, _error(None, -32600, "Session not found"))
        elif method == "ping":
            await _respond(send, 200, {"jsonrpc": "2.0", "id": request_id, "result": {}})
        elif method == "tools/list":
            await _respond(
                send, 200, {"jsonrpc": "2.0", "id": request_id, "result": {"tools": self._tools()}}
            )
        elif method == "tools/call":
            await self.legacy_call(session, message, receive, send)
        else:
            await _respond(send, 200, _error(request_id, -32601, f"Method not found: {method}"))

    async def initialize(self, message: dict[str, Any], send: Send) -> None:
        params = message.get("params") or {}
        requested = params.get("protocolVersion")
        version = requested if requested in HANDSHAKE_VERSIONS else LATEST_HANDSHAKE
        session = Session(uuid.uuid4().hex, version)
        self.sessions[session.id] = session
        result = {"protocolVersion": version, "capabilities": self._capabilities(), "serverInfo": SERVER_INFO}
        await _respond(
            send,
            200,
            {"jsonrpc": "2.0", "id": message["id"], "result": result},
            {"mcp-session-id": session.id},
        )

    async def _session(self, send: Send, headers: dict[str, str]) -> Session | None:
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            await _respond(send, 400, _error(None, -32600, "Bad Request: Missing session ID"))
            return None
        session = self.sessions.get(session_id)
        if session is None:
            await _respond(send, 404, _error(None, -32600, "Session not found"))
        return session

    def _cancel(self, session: Session, request_id: Any) -> None:
        task = session.calls.get(_key(request_id))
        if task is not None and not task.done():
            task.cancel()
            self.cancelled.append(request_id)

    async def legacy_call(
        self, session: Session, message: dict[str, Any], receive: Receive, send: Send
    ) -> None:
        log = EventLog(session.id)
        session.streams[log.id] = log
        await log.add(None)
        request_id = message["id"]

        async def emit(notification: dict[str, Any]) -> None:
            await log.add(_dumps(notification))

        async def run() -> None:
            try:
                response = await self.call_tool(message, emit, modern=False)
                await log.add(_dumps(response))
            finally:
                session.calls.pop(_key(request_id), None)
                await log.finish()

        session.calls[_key(request_id)] = asyncio.ensure_future(run())
        drop = self.switches.take_drop()
        if drop is not None:
            self.dropped.append(request_id)
        await _start_sse(send, {"mcp-session-id": session.id})
        await _race_disconnect(receive, self._replay(log, 0, send, drop, self.switches.drop_after))

    async def _replay(self, log: EventLog, start: int, send: Send, drop: str | None, drop_after: int) -> None:
        """Send ``log``'s events from index ``start`` until it is finished (or dropped)."""
        index, sent = start, 0
        while True:
            await log.wait_beyond(index)
            if index >= len(log.events):  # finished, all sent
                await _end(send)
                return
            event_id, data = log.events[index]
            if data is None:
                await _send_chunk(send, f"id: {event_id}\nretry: {self.switches.retry_ms}\ndata: \n\n")
            else:
                await _send_chunk(send, f"id: {event_id}\nevent: message\ndata: {data}\n\n")
                sent += 1
            index += 1
            if drop is not None and sent >= drop_after:
                if drop == "abort":
                    raise _Abort
                await _end(send)
                return

    async def legacy_get(self, receive: Receive, send: Send, headers: dict[str, str]) -> None:
        if "text/event-stream" not in headers.get("accept", ""):
            await _respond(send, 406, _error(None, -32600, "Not Acceptable: accept text/event-stream"))
            return
        session = await self._session(send, headers)
        if session is None:
            return
        last_event_id = headers.get("last-event-id")
        if last_event_id is None or last_event_id.startswith("get-"):
            # The standalone stream (a Last-Event-ID from it resumes it): this server never sends
            # a message on it.
            get_stream = self.switches.get_stream
            if get_stream == "refuse":
                await _respond(send, 405, b"", {"allow": "POST, DELETE"})
                return
            if get_stream == "fail":
                await _respond(send, 500, b"Internal Server Error", {"content-type": "text/plain"})
                return
            await _start_sse(send, {"mcp-session-id": session.id})
            if get_stream == "poll":
                session.polls += 1
                priming = f"id: get-{session.polls}\nretry: {self.switches.retry_ms}\ndata: \n\n"
                await _send_chunk(send, priming)
            if get_stream in ("drop", "poll"):
                await _end(send)
                return
            await _until_disconnect(receive)
            return
        log = session.streams.get(last_event_id.split("/", 1)[0])
        index = log.index_of(last_event_id) if log is not None else None
        if log is None or index is None:
            await _respond(send, 400, _error(None, -32600, f"Unknown Last-Event-ID: {last_event_id}"))
            return
        await _start_sse(send, {"mcp-session-id": session.id})
        if self.switches.drop == "poll":  # what there is so far, then the end: come back later
            for event_id, data in log.events[index + 1 :]:
                if data is not None:
                    await _send_chunk(send, f"id: {event_id}\nevent: message\ndata: {data}\n\n")
            await _end(send)
            return
        await _race_disconnect(receive, self._replay(log, index + 1, send, None, 0))

    async def legacy_delete(self, send: Send, headers: dict[str, str]) -> None:
        session = await self._session(send, headers)
        if session is None:
            return
        del self.sessions[session.id]
        for task in session.calls.values():
            task.cancel()
        await _respond(send, 200)

    # --------------------------------------------------------------------- modern

    async def modern_post(self, body: bytes, receive: Receive, send: Send, headers: dict[str, str]) -> None:
        message = await self._parse(body, send, headers)
        if message is None:
            return
        method = message.get("method")
        request_id = message.get("id")
        params = message.get("params") or {}
        meta = params.get("_meta") or {}
        header_version = headers.get("mcp-protocol-version")
        if method == "initialize" or header_version != MODERN:
            requested = params.get("protocolVersion") if method == "initialize" else header_version
            data = {"supported": [MODERN], "requested": requested or "2025-03-26"}
            await _respond(send, 400, _error(request_id, -32022, "Unsupported protocol version", data))
            return
        if "id" not in message:  # a notification: nothing to do with it
            await _respond(send, 202)
            return
        if META_VERSION not in meta or META_CAPABILITIES not in meta:
            text = f"Invalid params: _meta needs {META_VERSION} and {META_CAPABILITIES}"
            await _respond(send, 400, _error(request_id, -32602, text))
            return
        mismatch = None
        if meta[META_VERSION] != header_version:
            mismatch = "MCP-Protocol-Version does not match _meta"
        elif headers.get("mcp-method") != method:
            mismatch = "Mcp-Method header missing or not the method"
        elif method == "tools/call" and _decode_header_value(headers.get("mcp-name", "")) != params.get(
            "name"
        ):
            mismatch = "Mcp-Name header missing or not the tool name"
        elif method == "tools/call" and params.get("name") == "region_echo":
            wanted = str((params.get("arguments") or {}).get("region"))
            got = headers.get(f"mcp-param-{self.switches.region_header.lower()}")
            if got is None or _decode_header_value(got) != wanted:
                mismatch = f"Mcp-Param-{self.switches.region_header} missing or not the region argument"
        if mismatch is not None:
            await _respond(send, 400, _error(request_id, -32020, f"Header mismatch: {mismatch}"))
            return
        meta_out = {META_SERVER_INFO: SERVER_INFO}
        if method == "server/discover":
            result = {
                "supportedVersions": [MODERN],
                "capabilities": self._capabilities(),
                "resultType": "complete",
                "ttlMs": 0,
                "cacheScope": "private",
                "_meta": meta_out,
            }
        elif method == "tools/list":
            result = {
                "tools": TOOLS + self._header_tools() if self.switches.header_tools else TOOLS,
                "resultType": "complete",
                "ttlMs": 0,
                "cacheScope": "private",
                "_meta": meta_out,
            }
        elif method == "tools/call":
            await self.modern_call(message, receive, send)
            return
        elif method == "subscriptions/listen":
            await self.modern_listen(message, receive, send)
            return
        else:
            await _respond(send, 404, _error(request_id, -32601, f"Method not found: {method}"))
            return
        await _start_sse(send)
        await _send_chunk(
            send,
            f"event: message\ndata: {_dumps({'jsonrpc': '2.0', 'id': request_id, 'result': result})}\n\n",
        )
        await _end(send)

    async def modern_listen(self, message: dict[str, Any], receive: Receive, send: Send) -> None:
        """Acknowledge what was asked for; then hold the stream, or drop it (``listen_drop``)."""
        params = message.get("params") or {}
        ack = {
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {
                "_meta": {"io.modelcontextprotocol/subscriptionId": message["id"]},
                "notifications": params.get("notifications") or {},
            },
        }
        await _start_sse(send)
        await _send_chunk(send, f"event: message\ndata: {_dumps(ack)}\n\n")
        if self.switches.listen_end >= 0:  # the server ends the subscription on purpose
            await asyncio.sleep(self.switches.listen_end)
            meta = {"io.modelcontextprotocol/subscriptionId": message["id"]}
            complete = {"resultType": "complete", "_meta": meta}
            response = {"jsonrpc": "2.0", "id": message["id"], "result": complete}
            await _send_chunk(send, f"event: message\ndata: {_dumps(response)}\n\n")
            await _end(send)
            return
        if self.switches.listen_drop < 0:
            await _until_disconnect(receive)
            return
        await asyncio.sleep(self.switches.listen_drop)
        raise _Abort  # a proxy cutting an idle stream: the connection closes mid-body

    def _header_tools(self) -> list[dict[str, Any]]:
        """One tool with a valid ``x-mcp-header`` and two whose declarations break the rules."""
        region = {"type": "string", "x-mcp-header": self.switches.region_header}
        return [
            {
                "name": "region_echo",
                "inputSchema": {"type": "object", "properties": {"region": region}, "required": ["region"]},
            },
            {
                "name": "nullable_header",
                "inputSchema": {
                    "type": "object",
                    "properties": {"zone": {"type": ["string", "null"], "x-mcp-header": "Zone"}},
                },
            },
            {
                "name": "header_in_items",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "tags": {"type": "array", "items": {"type": "string", "x-mcp-header": "Tag"}}
                    },
                },
            },
        ]

    async def sse_binding(
        self, scope: dict[str, Any], send: Send, headers: dict[str, str], body: bytes
    ) -> None:
        """HTTP+SSE (2024-11-05), polled; see the module docstring."""
        if scope["path"] == "/sse" and scope["method"] == "GET":
            if self.switches.sse_get == "fail":
                await _respond(send, 500, b"Internal Server Error", {"content-type": "text/plain"})
                return
            session_id, _, index = (headers.get("last-event-id") or "").partition("/")
            events = self.sse_sessions.get(session_id)
            if events is None or not index.isdigit():
                session_id, start = uuid.uuid4().hex, 0
                events = self.sse_sessions[session_id] = [("endpoint", f"/messages?session_id={session_id}")]
            else:
                start = int(index) + 1
            await _start_sse(send)
            for n in range(start, len(events)):
                event, data = events[n]
                chunk = (
                    f"id: {session_id}/{n}\nretry: {self.switches.retry_ms}\nevent: {event}\ndata: {data}\n\n"
                )
                await _send_chunk(send, chunk)
            await _end(send)
            return
        query = dict(p.partition("=")[::2] for p in scope.get("query_string", b"").decode().split("&"))
        events = self.sse_sessions.get(query.get("session_id", ""))
        if scope["path"] != "/messages" or scope["method"] != "POST" or events is None:
            await _respond(send, 404, b"Not Found", {"content-type": "text/plain"})
            return
        try:
            message = json.loads(body)
        except ValueError:
            await _respond(send, 400, b"Bad Request", {"content-type": "text/plain"})
            return
        if isinstance(message, dict) and "method" in message and "id" in message:
            results: dict[str, Any] = {
                "initialize": {
                    "protocolVersion": "2024-11-05",
                    "capabilities": self._capabilities(),
                    "serverInfo": SERVER_INFO,
                },
                "ping": {},
                "tools/list": {"tools": self._tools()},
            }
            result = results.get(message["method"])
            answer = (
                {"jsonrpc": "2.0", "id": message["id"], "result": result}
                if result is not None
                else _error(message["id"], -32601, f"Method not found: {message['method']}")
            )
            events.append(("message", _dumps(answer)))
        await _respond(send, 202, b"Accepted", {"content-type": "text/plain"})

    def _capabilities(self) -> dict[str, Any]:
        return {"tools": {"listChanged": True} if self.switches.list_changed else {}}

    async def modern_call(self, message: dict[str, Any], receive: Receive, send: Send) -> None:
        request_id = message["id"]
        drop = self.switches.take_drop()
        drop_after = self.switches.drop_after
        if drop is not None:
            self.dropped.append(request_id)
        await _start_sse(send)
        sent = 0
        enough = asyncio.Event()  # set once the events to send before a drop are out

        async def emit(notification: dict[str, Any]) -> None:
            nonlocal sent
            if drop is not None and sent >= drop_after:
                return
            await _send_chunk(send, f"event: message\ndata: {_dumps(notification)}\n\n")
            sent += 1
            if sent >= drop_after:
                enough.set()

        async def write() -> None:
            if drop is not None and drop_after == 0:
                raise _Dropped
            call = asyncio.ensure_future(self.call_tool(message, emit, modern=True))
            try:
                if drop is not None:
                    # Dropped once its events are out, or when it is done: never with the answer.
                    waiter = asyncio.ensure_future(enough.wait())
                    await asyncio.wait({call, waiter}, return_when=asyncio.FIRST_COMPLETED)
                    waiter.cancel()
                    raise _Dropped
                response = await call
            finally:
                if not call.done():
                    call.cancel()
            await _send_chunk(send, f"event: message\ndata: {_dumps(response)}\n\n")
            await _end(send)

        try:
            if await _race_disconnect(receive, write()):
                self.cancelled.append(request_id)
        except _Dropped:
            if drop == "abort":
                raise _Abort from None
            await _end(send)

    # ---------------------------------------------------------------------- tools

    async def call_tool(
        self,
        message: dict[str, Any],
        emit: Callable[[dict[str, Any]], Awaitable[None]],
        *,
        modern: bool,
    ) -> dict[str, Any]:
        request_id = message["id"]
        params = message.get("params") or {}
        name = params.get("name")
        arguments = params.get("arguments") or {}
        token = (params.get("_meta") or {}).get("progressToken")
        if name == "echo":
            text = str(arguments.get("text", "")) + "x" * self.switches.pad
        elif name == "region_echo":
            text = f"region {arguments.get('region')}"
        elif name == "slow":
            seconds = float(arguments.get("seconds", 1.0))
            steps = max(1, int(arguments.get("steps", 1)))
            for step in range(1, steps + 1):
                await asyncio.sleep(seconds / steps)
                if token is not None:
                    progress = {"progressToken": token, "progress": step, "total": steps}
                    await emit({"jsonrpc": "2.0", "method": "notifications/progress", "params": progress})
            text = f"slow done after {seconds:g}s"
        else:
            return _error(request_id, -32602, f"Unknown tool: {name}")
        result: dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": False}
        if modern:
            result.update(resultType="complete", _meta={META_SERVER_INFO: SERVER_INFO})
        return {"jsonrpc": "2.0", "id": request_id, "result": result}

    # ---------------------------------------------------------------------- admin

    async def admin(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        action = scope["path"][len("/_admin/") :]
        method = scope["method"]
        body = await _read_body(receive)
        if method == "GET" and action == "state":
            await _respond(send, 200, self.state())
        elif method == "GET" and action == "seen":
            seen = {"requests": self.requests, "cancelled": self.cancelled, "dropped": self.dropped}
            await _respond(send, 200, seen)
        elif method == "POST" and action == "set":
            try:
                changes = json.loads(body or b"{}")
                if not isinstance(changes, dict):
                    raise ValueError("a JSON object of switches expected")
                self.switches.update(changes)
            except ValueError as exc:
                await _respond(send, 400, {"error": str(exc)})
                return
            await _respond(send, 200, self.state())
        elif method == "POST" and action == "forget":
            forgotten = len(self.sessions)
            self._forget()
            await _respond(send, 200, {"forgotten": forgotten})
        elif method == "POST" and action == "reset":
            self._forget()
            self.switches = dataclasses.replace(self.startup)
            self._clear_seen()
            await _respond(send, 200, self.state())
        elif method == "POST" and action == "clear_seen":
            self._clear_seen()
            await _respond(send, 200, {})
        else:
            await _respond(send, 404, {"error": f"no admin action {method} {action}"})

    def _forget(self) -> None:
        sessions, self.sessions = self.sessions, {}
        for session in sessions.values():
            for task in session.calls.values():
                task.cancel()

    def _clear_seen(self) -> None:
        self.requests, self.cancelled, self.dropped = [], [], []

    def state(self) -> dict[str, Any]:
        return {
            "switches": dataclasses.asdict(self.switches),
            "port": self.port,
            "other_port": self.other_port,
            "sessions": len(self.sessions),
        }


class _Dropped(Exception):
    """A modern response stream is to be dropped here."""


class _HideAborts(logging.Filter):
    """Keep uvicorn from logging a traceback for every deliberate mid-body abort."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and record.exc_info[0] is _Abort)


def _bind(host: str, port: int) -> socket.socket:
    family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.setblocking(False)
    return sock


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--modern", action="store_true", help="serve 2026-07-28 only (POST, SSE responses)")
    parser.add_argument("--drop", choices=["off", "end", "abort"], default="off")
    parser.add_argument("--drop-times", type=int, default=-1)
    parser.add_argument("--drop-after", type=int, default=0)
    parser.add_argument("--retry-ms", type=int, default=100)
    parser.add_argument("--unauthorized", action="store_true")
    parser.add_argument("--token")
    parser.add_argument(
        "--redirect", choices=["off", "other-port", "localhost", "same-origin"], default="off"
    )
    parser.add_argument("--redirect-status", type=int, default=307)
    parser.add_argument("--log-level", default="WARNING")
    args = parser.parse_args(argv)

    logging.basicConfig(
        level=args.log_level, stream=sys.stderr, format="http_fault_server %(levelname)s %(message)s"
    )
    logging.getLogger("uvicorn.error").addFilter(_HideAborts())
    switches = Switches(
        modern=args.modern,
        drop=args.drop,
        drop_times=args.drop_times,
        drop_after=args.drop_after,
        retry_ms=args.retry_ms,
        unauthorized=args.unauthorized,
        token=args.token,
        redirect=args.redirect,
        redirect_status=args.redirect_status,
    )
    app = FaultServer(switches)
    main_socket, other_socket = _bind(args.host, args.port), _bind(args.host, 0)
    app.host = args.host
    app.port = main_socket.getsockname()[1]
    app.other_port = other_socket.getsockname()[1]
    host = f"[{args.host}]" if ":" in args.host else args.host
    url = f"http://{host}:{app.port}/mcp"

    class AnnouncingServer(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if not self.should_exit:
                sys.stdout.write(f"{URL_PREFIX}{url}\n")
                sys.stdout.flush()

    config = uvicorn.Config(
        app,
        log_config=None,
        log_level=args.log_level.lower(),
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=1,
    )
    AnnouncingServer(config).run(sockets=[main_socket, other_socket])


if __name__ == "__main__":
    main()
