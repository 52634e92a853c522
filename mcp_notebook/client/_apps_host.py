"""The host side of an MCP App: what a View (the app's HTML, in an iframe) is answered.

:class:`AppHost` owns one View of one tool call. It reads the tool's ``ui://`` resource and calls
the tool at the same time, and then answers the View's JSON-RPC (spec 2026-01-26): the handshake,
the tool's input and result, the requests a View may make of the host and, through the host, of
the server. It moves plain JSON-RPC dicts: ``send`` delivers one to the View, :meth:`receive`
takes one from it. It never draws, never opens a link and never imports the notebook layer; the
widget relays messages and draws what this object decides.

Rules it keeps (the spec's, and ours where the spec leaves room):

- Nothing is sent to the View before it says ``ui/notifications/initialized``, except answers to
  its own requests. Then ``tool-input`` once, then ``tool-result`` (or ``tool-cancelled`` when the
  call raised) as soon as both the View and the result are there.
- A View that sends ``ui/initialize`` again is a new page (its frame reloaded, the widget was drawn
  a second time, or a script stood in for the View before the real one ran): it is owed the input
  and the outcome again, after its own ``initialized``. Sent once for good, they could reach a page
  that was still loading and be lost, leaving the real View waiting forever.
- A View may call, through the host, only the tools whose ``_meta.ui.visibility`` includes
  "app"; any other call is refused here and never reaches the server.
- A link is opened only when it is ``https:`` and ``confirm_open_link`` said yes.
- A file is offered for saving (``ui/download-file``) only when ``confirm_download`` is given
  (else the capability is not advertised and the method is not found), only with the contents the
  View embedded (:mod:`~mcp_notebook.protocol._app_files`: bounded, a safe name, never a path), and
  only when ``confirm_download`` said yes; a no is the spec's ``{"isError": true}``.
- With ``defer_call=True`` the View opens before the tool is called: :meth:`send_partial_input`
  streams the arguments as they are being prepared (``tool-input-partial``, the latest one to a View
  that was not ready yet), :meth:`call` fixes them and calls the tool (``tool-input``, after which
  no partial input is sent).
- Whatever a View sends, :meth:`receive` never raises: a malformed message is dropped (logged at
  DEBUG), a bad request gets a JSON-RPC error.

Example, with a relay that hands the View's messages to ``host.receive``::

    host = AppHost(client, "show_chart", {"n": 5}, send=relay.post)
    resource = await host.open()        # resource.html, resource.csp_header, resource.allow
    ...                                 # the View runs: relay -> await host.receive(message)
    await host.close()
"""

from __future__ import annotations

import inspect
import json
import logging
import math
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio

from .._version import __version__
from ..protocol._app_files import AppDownload, DownloadRefused, parse_download_request
from ..protocol._apps import (
    APPS_PROTOCOL_VERSION,
    callable_by_app,
    valid_sources,
)
from ..protocol._errors import McpError
from ._apps_resource import AppError, AppResource, parse_resource
from ._owned import OwnedTask, spawn_owned
from ._results import Tool, ToolResult

if TYPE_CHECKING:
    from ._client import Client

__all__ = ["AppError", "AppHost", "AppResource"]

log = logging.getLogger("mcp_notebook.apps")

SUPPORTED_VERSIONS = (APPS_PROTOCOL_VERSION,)
#: A message from a View larger than this (as JSON) is dropped.
MAX_MESSAGE_CHARS = 4 * 1024 * 1024
MAX_HEIGHT = 10_000
MAX_MESSAGES = 1_000
#: Files a View may offer in its life (each offer is put to the user; a View must not nag forever).
MAX_DOWNLOAD_OFFERS = 100
MAX_ID_CHARS = 256
TEARDOWN_WAIT = 2.0

METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
#: Refused by the host (a link declined, a tool a View may not call): the request was valid.
REFUSED = -32000

_CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
_PERMISSION_KEYS = ("camera", "microphone", "geolocation", "clipboardWrite")
_MODALITIES: dict[str, dict[str, Any]] = {"text": {}, "image": {}, "resource": {}, "resourceLink": {}}

Send = Callable[[dict[str, Any]], Awaitable[None] | None]
ConfirmDownload = Callable[[list[AppDownload]], Awaitable[bool] | bool]


class _RequestError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _is_id(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, str) and 0 < len(value) <= MAX_ID_CHARS


def _too_big(message: dict[str, Any]) -> bool:
    try:
        return len(json.dumps(message, allow_nan=False)) > MAX_MESSAGE_CHARS
    except (TypeError, ValueError, RecursionError):
        return True  # not JSON: no View sent that through postMessage honestly


def _json_object(value: Any, what: str) -> dict[str, Any]:
    """``value`` as a plain JSON object (a copy), or ValueError: it goes to the View as it is."""
    if not isinstance(value, Mapping):
        raise ValueError(f"{what} must be a mapping, not {type(value).__name__}")
    try:
        text = json.dumps(dict(value), allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ValueError(f"{what} must be JSON (plain dicts, lists, strings, numbers)") from exc
    if len(text) > MAX_MESSAGE_CHARS:
        raise ValueError(f"{what} are larger than {MAX_MESSAGE_CHARS} characters as JSON")
    copy: dict[str, Any] = json.loads(text)
    return copy


def _https_link(url: Any) -> bool:
    if not isinstance(url, str) or len(url) > 8192 or not url.isprintable() or any(c.isspace() for c in url):
        return False
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return parts.scheme.lower() == "https" and bool(parts.hostname)


class AppHost:
    """One View of one tool call: reads the View, calls the tool, answers the View's JSON-RPC.

    ``send(message)`` (sync or async) delivers one JSON-RPC message to the View.
    ``confirm_open_link(url)`` asks the user whether to open a link (None refuses every link);
    only ``True`` opens it, and opening is the caller's job (``opened_links`` says which).
    ``confirm_download(files)`` asks the user whether to save the
    :class:`~mcp_notebook.protocol._app_files.AppDownload` files a View offers (None: this host
    saves none); only ``True`` accepts them, and saving is the caller's job (``downloads`` lists
    every offer, accepted or not, without its bytes). ``defer_call=True`` leaves the tool uncalled
    until :meth:`call`. ``on_change(name, value)`` is told of each change of ``status``,
    ``messages``, ``model_context``, ``height``, ``display_mode``, ``error``, ``opened_links``,
    ``downloads`` and ``initialized``. ``on_log(params)`` receives the View's
    ``notifications/message`` params.
    Callbacks that raise are logged, never propagated.

    Every method runs on the event loop of ``client`` (in a notebook, the engine thread), and
    ``send`` and the callbacks are called there. :meth:`receive` returns once the message is
    handled (a proxied ``tools/call`` included): a relay that wants a slow call not to hold the
    messages behind it hands each message to :meth:`receive` in a task of its own.
    """

    def __init__(
        self,
        client: Client,
        tool: Tool | str,
        arguments: Mapping[str, Any] | None,
        *,
        send: Send,
        confirm_open_link: Callable[[str], Awaitable[bool] | bool] | None = None,
        confirm_download: ConfirmDownload | None = None,
        defer_call: bool = False,
        on_change: Callable[[str, Any], None] | None = None,
        on_log: Callable[[dict[str, Any]], None] | None = None,
        host_info: Mapping[str, str] | None = None,
        theme: str = "light",
    ) -> None:
        if not isinstance(tool, Tool | str):
            raise TypeError(f"tool must be a Tool or a tool name, not {type(tool).__name__}")
        self._client = client
        self._tool_ref = tool
        self.tool: Tool | None = tool if isinstance(tool, Tool) else None
        self.arguments: dict[str, Any] = dict(arguments or {})
        self._send_fn = send
        self._confirm = confirm_open_link
        self._confirm_download = confirm_download
        self.defer_call = bool(defer_call)
        self._on_change = on_change
        self._on_log = on_log
        self._host_info = dict(host_info or {"name": "mcp-notebook", "version": __version__})
        self.theme = theme if theme in ("light", "dark") else "light"

        self.status = "loading"
        self.resource: AppResource | None = None
        self.result: ToolResult | None = None
        self.error: str | None = None
        self.messages: list[dict[str, Any]] = []
        self.model_context: dict[str, Any] | None = None
        self.height: int | None = None
        self.display_mode = "inline"
        self.initialized = False
        self.opened_links: list[str] = []
        self.downloads: list[dict[str, Any]] = []
        self.app_info: dict[str, Any] | None = None
        self.app_capabilities: dict[str, Any] | None = None

        self._call_done = False
        self._cancel_reason: str | None = None
        self._input_sent = False
        self._input_final = not self.defer_call  # the arguments are the call's, not a draft
        self._partial: dict[str, Any] | None = None  # the latest partial input, and its number
        self._partial_number = 0
        self._partial_sent = 0  # the number of the partial input the current page last got
        self._outcome_sent = False
        self._view_ready = False  # the current page said initialized (reset by its ui/initialize)
        self._deliver_lock = anyio.Lock()
        self._call_task: OwnedTask | None = None
        self._next_id = 0
        self._pending: dict[int, anyio.Event] = {}
        self._teardown_id: int | None = None
        self._closing = False

    def __repr__(self) -> str:
        name = self.tool.name if self.tool else self._tool_ref
        return f"<AppHost {name!r} {self.status}>"

    # --- lifecycle ----------------------------------------------------------------------------

    async def open(self) -> AppResource:
        """Call the tool and read its View at once; return the View once it is read.

        Raises :class:`AppError` (status "error", nothing shown) when the tool has no View, the
        View does not exist or is not ``text/html;profile=mcp-app``; the call, already sent, is
        left to finish (its result lands in ``result``). A call that fails (an exception or an
        ``isError`` result) makes the status "error" with ``error`` set, but the View is still
        returned: it is told of the failure (``tool-result`` with isError, or ``tool-cancelled``).
        The call may still be running when this returns ("ready"); the View gets its result when
        both are there. With ``defer_call`` the tool is not called here but by :meth:`call`.
        """
        if self.status != "loading" or self._call_task is not None or self.resource is not None:
            raise RuntimeError("an AppHost is opened once")
        try:
            tool = await self._resolve_tool()
        except McpError as exc:  # AppError, or the tool list could not be had
            self._fail(str(exc))
            raise
        uri = tool.ui_resource_uri
        assert uri is not None  # _resolve_tool checked
        if not self.defer_call:
            self._start_call()
        try:
            try:
                contents = await self._client.read_resource(uri)
            except McpError as exc:
                raise AppError(f"the View {uri} of tool {tool.name!r} could not be read: {exc}") from exc
            resource = parse_resource(uri, contents.raw)
        except AppError as exc:
            self._fail(str(exc))
            raise
        self.resource = resource
        if self.status == "loading":
            self._set("status", "ready")
        return resource

    async def close(self, reason: str = "closed") -> None:
        """Ask the View to tear down (``ui/resource-teardown``), wait briefly for it, end.

        Idempotent. A View that never initialized is not asked (nothing is sent to it before).
        A call still running is cancelled.
        """
        if self.status == "closed":
            return
        event = await self._start_teardown(reason)
        if event is not None:
            with anyio.CancelScope(shield=True), anyio.move_on_after(TEARDOWN_WAIT):
                await event.wait()
        await self._finish()

    async def _start_teardown(self, reason: str) -> anyio.Event | None:
        if self._closing:
            return self._pending.get(self._teardown_id) if self._teardown_id is not None else None
        self._closing = True
        if not self.initialized:
            return None
        request_id = self._new_id()
        event = anyio.Event()
        self._pending[request_id] = event
        self._teardown_id = request_id
        await self._send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "ui/resource-teardown",
                "params": {"reason": reason},
            }
        )
        return event

    async def _finish(self) -> None:
        if self.status == "closed":
            return
        task = self._call_task
        if task is not None and not task.done.is_set():
            await task.stop(0)
        self._pending.clear()
        self._set("status", "closed")

    # --- the tool call ------------------------------------------------------------------------

    async def _resolve_tool(self) -> Tool:
        if self.tool is None:
            name = self._tool_ref
            tools = await self._client.list_tools(include_app_only=True)
            found = next((t for t in tools if t.name == name), None)
            if found is None:
                raise AppError(f"the server has no tool {name!r}")
            self.tool = found
        if self.tool.ui_resource_uri is None:
            raise AppError(
                f"tool {self.tool.name!r} is not an MCP App: its _meta names no ui:// resource "
                "(_meta.ui.resourceUri)"
            )
        return self.tool

    async def send_partial_input(self, arguments: Mapping[str, Any]) -> None:
        """Show the View the arguments as they are so far (``ui/notifications/tool-input-partial``).

        For a host opened with ``defer_call=True`` while the call is being prepared (an agent
        streaming a tool call's arguments, a form being filled): each one replaces the last, and a
        View that is not ready yet gets only the latest, after its ``initialized``. The spec lets
        a View ignore them and forbids it to rely on them. RuntimeError once :meth:`call` fixed
        the input; ValueError for arguments that are not a JSON object within the message bound.
        """
        if self._input_final:
            raise RuntimeError("the tool's input is final (the tool was called): no partial input now")
        if self.status == "closed":
            raise RuntimeError("the View is closed")
        self._partial = _json_object(arguments, "partial arguments")
        self._partial_number += 1
        await self._deliver()

    async def call(self, arguments: Mapping[str, Any] | None = None) -> None:
        """Call the tool with ``arguments`` (a host opened with ``defer_call=True``, once).

        The View is sent them as ``ui/notifications/tool-input`` (no partial input after it), then
        the result as ever. Returns once the call is started; ``result`` holds it when it ends.
        """
        if not self.defer_call:
            raise RuntimeError("call() is for a host made with defer_call=True (the others call at open)")
        if self.resource is None or self.status == "closed":
            raise RuntimeError("open() the View first (and not after close())")
        final = _json_object(arguments or {}, "arguments")
        async with self._deliver_lock:  # no partial input between the final one and its sending
            if self._input_final:
                raise RuntimeError("the tool was called already (once per View)")
            self.arguments = final
            self._input_final = True
        self._start_call()
        await self._deliver()

    def _start_call(self) -> None:
        assert self.tool is not None
        self._call_task = spawn_owned(self._run_call, name=f"mcp-notebook app {self.tool.name}")

    async def _run_call(self) -> None:
        assert self.tool is not None
        try:
            result = await self._client.call_tool(self.tool.name, self.arguments)
        except anyio.get_cancelled_exc_class():
            raise
        except Exception as exc:
            self._cancel_reason = str(exc) or type(exc).__name__
            self._call_done = True
            self._fail(f"tool {self.tool.name!r} failed: {self._cancel_reason}")
        else:
            self.result = result
            self._call_done = True
            if result.is_error:
                self._fail(f"tool {self.tool.name!r} reported an error: {result.text[:1000]}")
        try:
            await self._deliver()
        except Exception:
            log.debug("delivering the tool's outcome to the View failed", exc_info=True)

    def _fail(self, message: str) -> None:
        self._set("error", message)
        if self.status != "closed":
            self._set("status", "error")

    async def _deliver(self) -> None:
        """Send the View what it is owed, in order: tool-input once, then the outcome once."""
        async with self._deliver_lock:
            if not self._view_ready or self._closing:
                return
            if not self._input_sent and self._input_final:
                self._input_sent = True
                await self._notify("ui/notifications/tool-input", {"arguments": self.arguments})
            elif not self._input_sent and self._partial_sent != self._partial_number:
                self._partial_sent = self._partial_number
                partial = {"arguments": self._partial}
                await self._notify("ui/notifications/tool-input-partial", partial)
            if self._call_done and not self._outcome_sent:
                self._outcome_sent = True
                if self.result is not None:
                    await self._notify("ui/notifications/tool-result", self.result.raw)
                else:
                    await self._notify("ui/notifications/tool-cancelled", {"reason": self._cancel_reason})

    # --- messages from the View ---------------------------------------------------------------

    async def receive(self, message: Any, reply: Send | None = None) -> None:
        """Handle one message from the View; never raises.

        ``reply``, when given, gets the answer to a request instead of the View. For a message
        that does not come from the View (a script or a notebook standing in for it): its answer
        must not reach the View, whose own requests may use the very same ids, and a View takes
        an answer by its id (the demo board once read a stand-in's ``{}`` as its ``tools/call``
        result).
        """
        try:
            await self._receive(message, reply)
        except Exception:
            log.debug("an MCP App View's message could not be handled", exc_info=True)

    async def _receive(self, message: Any, reply: Send | None) -> None:
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or _too_big(message):
            log.debug("dropped a malformed message from an MCP App View")
            return
        method = message.get("method")
        if method is None:
            self._on_response(message)
            return
        if not isinstance(method, str) or len(method) > 200:
            log.debug("dropped a View message with a bad method")
            return
        if self.status == "closed" or (self._closing and "id" in message):
            if "id" in message and _is_id(message["id"]):
                await self._reply_error(message["id"], REFUSED, "the View is closing", reply)
            return
        if "id" not in message:
            self._on_notification(method, message.get("params"))
            if method == "ui/notifications/initialized":
                await self._deliver()
            elif method == "ui/notifications/request-teardown":
                await self._start_teardown("the View asked to close")
            return
        await self._on_request(message["id"], method, message.get("params", {}), reply)

    async def _on_request(self, request_id: Any, method: str, params: Any, reply: Send | None) -> None:
        if not _is_id(request_id):
            log.debug("dropped a View request with a bad id")
            return
        if params is None:
            params = {}
        if not isinstance(params, dict):
            await self._reply_error(request_id, INVALID_PARAMS, "params must be an object", reply)
            return
        if method == "ui/initialize" and reply is None:
            await self._new_page()
        try:
            result = await self._answer(method, params)
        except _RequestError as exc:
            await self._reply_error(request_id, exc.code, exc.message, reply)
        except McpError as exc:
            code = exc.code if exc.kind == "server" and isinstance(exc.code, int) else INTERNAL_ERROR
            await self._reply_error(request_id, code, exc.message, reply)
        except Exception as exc:
            log.debug("answering a View's %s failed", method, exc_info=True)
            failed = f"the host failed: {type(exc).__name__}"
            await self._reply_error(request_id, INTERNAL_ERROR, failed, reply)
        else:
            await self._send({"jsonrpc": "2.0", "id": request_id, "result": result}, reply)

    async def _new_page(self) -> None:
        """The View's page starts (again): it is owed the input and the outcome after its own
        ``initialized``. A script standing in for the View (``reply`` given) is no new page: the
        View that already has them would get them twice."""
        async with self._deliver_lock:  # never between a delivery's two messages
            self._view_ready = False
            self._input_sent = False
            self._partial_sent = 0
            self._outcome_sent = False

    def _on_response(self, message: dict[str, Any]) -> None:
        request_id = message.get("id")
        if not _is_id(request_id) or ("result" not in message and "error" not in message):
            log.debug("dropped a View message that is neither request, notification nor response")
            return
        event = self._pending.pop(request_id, None) if isinstance(request_id, int) else None
        if event is None:
            log.debug("dropped a View response to no request of ours")
            return
        event.set()
        if request_id == self._teardown_id and self.status != "closed":
            # The View is ready to go; a close() waiting on the event finishes, and a teardown the
            # View asked for ends here.
            self._set("status", "closed")

    def _on_notification(self, method: str, params: Any) -> None:
        params = params if isinstance(params, dict) else {}
        if method == "ui/notifications/initialized":
            self._view_ready = True
            if not self.initialized:
                self._set("initialized", True)
        elif method == "notifications/message":
            if self._on_log is not None:
                self._call(self._on_log, params)
        elif method == "ui/notifications/size-changed":
            height = params.get("height")
            if isinstance(height, int | float) and not isinstance(height, bool) and math.isfinite(height):
                clamped = max(0, min(MAX_HEIGHT, int(height)))
                if clamped != self.height:
                    self._set("height", clamped)
        else:
            log.debug("ignored the View's notification %s", method)

    async def _answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        # One handler per method the host offers (a dict, not a chain of ifs: the methods are
        # the table, and one more is one more line).
        handlers: dict[str, Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]] = {
            "ui/initialize": self._on_initialize,
            "ping": self._on_ping,
            "tools/call": self._proxy_call,
            "resources/read": self._on_read_resource,
            "resources/list": self._on_list_resources,
            "ui/message": self._on_message,
            "ui/update-model-context": self._on_update_model_context,
            "ui/open-link": self._on_open_link,
            "ui/request-display-mode": self._on_request_display_mode,
            "ui/download-file": self._on_download_file,
        }
        handler = handlers.get(method)
        if handler is None:
            raise _RequestError(METHOD_NOT_FOUND, f"the host does not offer {method!r}")
        return await handler(params)

    async def _on_initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._initialize(params)

    async def _on_ping(self, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    async def _on_read_resource(self, params: dict[str, Any]) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str) or not uri:
            raise _RequestError(INVALID_PARAMS, "resources/read needs a uri")
        contents = await self._client.read_resource(uri)
        return contents.raw

    async def _on_list_resources(self, params: dict[str, Any]) -> dict[str, Any]:
        resources = await self._client.list_resources()
        return {"resources": [r.raw for r in resources]}

    async def _on_message(self, params: dict[str, Any]) -> dict[str, Any]:
        if len(self.messages) >= MAX_MESSAGES:
            raise _RequestError(REFUSED, "too many messages from this View")
        self.messages.append(params)
        self._set("messages", list(self.messages))
        return {}

    async def _on_update_model_context(self, params: dict[str, Any]) -> dict[str, Any]:
        self._set("model_context", params)
        return {}

    async def _on_open_link(self, params: dict[str, Any]) -> dict[str, Any]:
        return await self._open_link(params.get("url"))

    async def _on_request_display_mode(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"mode": self.display_mode}  # inline is the only mode a notebook output has

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        requested = params.get("protocolVersion")
        version = requested if requested in SUPPORTED_VERSIONS else APPS_PROTOCOL_VERSION
        info = params.get("appInfo")
        caps = params.get("appCapabilities")
        self.app_info = info if isinstance(info, dict) else None
        self.app_capabilities = caps if isinstance(caps, dict) else None
        return {
            "protocolVersion": version,
            "hostInfo": dict(self._host_info),
            "hostCapabilities": self.host_capabilities(),
            "hostContext": self.host_context(),
        }

    def host_capabilities(self) -> dict[str, Any]:
        """What this host offers a View (only what it answers)."""
        caps: dict[str, Any] = {
            "serverTools": {},
            "serverResources": {},
            "logging": {},
            "updateModelContext": {**_MODALITIES, "structuredContent": {}},
            "message": dict(_MODALITIES),
        }
        if self._confirm is not None:
            caps["openLinks"] = {}
        if self._confirm_download is not None:
            caps["downloadFile"] = {}
        resource = self.resource
        if resource is not None:
            csp = {key: valid_sources(resource.csp, key) for key in _CSP_KEYS}
            granted = [
                k
                for k, f in zip(
                    _PERMISSION_KEYS, ("camera", "microphone", "geolocation", "clipboard-write"), strict=True
                )
                if f in resource.allow.split("; ")
            ]
            caps["sandbox"] = {
                "csp": {key: value for key, value in csp.items() if value},
                "permissions": {key: {} for key in granted},
            }
        return caps

    def host_context(self) -> dict[str, Any]:
        context: dict[str, Any] = {
            "theme": self.theme,
            "displayMode": self.display_mode,
            "availableDisplayModes": ["inline"],
            "platform": "web",
        }
        if self.tool is not None:
            context["toolInfo"] = {"tool": self.tool.raw}
        return context

    async def _proxy_call(self, params: dict[str, Any]) -> dict[str, Any]:
        name = params.get("name")
        arguments = params.get("arguments", {})
        if not isinstance(name, str) or not name:
            raise _RequestError(INVALID_PARAMS, "tools/call needs a tool name")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise _RequestError(INVALID_PARAMS, "tools/call arguments must be an object")
        tools = await self._client.list_tools(include_app_only=True)
        tool = next((t for t in tools if t.name == name), None)
        if tool is None:
            raise _RequestError(INVALID_PARAMS, f"the server has no tool {name!r}")
        if not callable_by_app(tool.meta):
            log.info("refused an MCP App View's call of %r (not visible to apps)", name)
            raise _RequestError(
                REFUSED, f"tool {name!r} is not available to apps (its visibility lacks 'app')"
            )
        try:
            result = await self._client.call_tool(name, arguments)
        except McpError as exc:
            if exc.kind == "invalid":
                raise _RequestError(INVALID_PARAMS, exc.message) from exc
            raise
        return result.raw

    async def _open_link(self, url: Any) -> dict[str, Any]:
        if self._confirm is None:
            raise _RequestError(REFUSED, "this host opens no links")
        if not _https_link(url):
            raise _RequestError(REFUSED, "only https: links are opened")
        assert isinstance(url, str)
        try:
            answer: Any = self._confirm(url)
            allowed = await answer if inspect.isawaitable(answer) else answer
        except Exception:
            log.debug("confirm_open_link raised", exc_info=True)
            allowed = False
        if allowed is not True:
            raise _RequestError(REFUSED, "the user did not open the link")
        self.opened_links.append(url)
        self._set("opened_links", list(self.opened_links))
        return {}

    async def _on_download_file(self, params: dict[str, Any]) -> dict[str, Any]:
        if self._confirm_download is None:
            # Not offered (no downloadFile capability): as unknown to the View as any method.
            raise _RequestError(METHOD_NOT_FOUND, "this host saves no files (no downloadFile capability)")
        try:
            files = parse_download_request(params)
        except DownloadRefused as exc:
            raise _RequestError(INVALID_PARAMS, str(exc)) from exc
        if len(self.downloads) + len(files) > MAX_DOWNLOAD_OFFERS:
            raise _RequestError(REFUSED, "too many downloads from this View")
        try:
            answer: Any = self._confirm_download(files)
            accepted = await answer if inspect.isawaitable(answer) else answer
        except Exception:
            log.warning("confirm_download raised; the download is refused", exc_info=True)
            accepted = False
        accepted = accepted is True
        self.downloads.extend({**file.describe(), "accepted": accepted} for file in files)
        self._set("downloads", list(self.downloads))
        # A no is a result, not an error: the spec's {isError: true}, which the SDK's
        # App.downloadFile hands back to the View (an error would throw where it expects a value).
        return {} if accepted else {"isError": True}

    # --- sending --------------------------------------------------------------------------------

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    async def _notify(self, method: str, params: dict[str, Any]) -> None:
        await self._send({"jsonrpc": "2.0", "method": method, "params": params})

    async def _reply_error(self, request_id: Any, code: int, message: str, reply: Send | None = None) -> None:
        error = {"code": code, "message": message}
        await self._send({"jsonrpc": "2.0", "id": request_id, "error": error}, reply)

    async def _send(self, message: dict[str, Any], to: Send | None = None) -> None:
        """``message`` to the View (or to ``to``, whoever asked in the View's stead)."""
        if self.status == "closed" and to is None:
            return
        try:
            sent = (to or self._send_fn)(message)
            if inspect.isawaitable(sent):
                await sent
        except anyio.get_cancelled_exc_class():
            raise
        except Exception:
            log.debug("sending a message to the MCP App View failed", exc_info=True)

    def _set(self, name: str, value: Any) -> None:
        setattr(self, name, value)
        if self._on_change is not None:
            self._call(self._on_change, name, value)

    @staticmethod
    def _call(callback: Callable[..., Any], *args: Any) -> None:
        try:
            callback(*args)
        except Exception:
            log.warning("an MCP App observer raised", exc_info=True)
