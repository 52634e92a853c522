"""An MCP App in a notebook cell: :class:`AppView` draws a tool's ``ui://`` View and relays its messages.

Who does what (DESIGN.md, "MCP Apps"): :class:`mcp_notebook.apps.AppHost` is the host. It calls
the tool, reads the View's HTML, builds the CSP, answers every JSON-RPC message of the View and
refuses what the rules refuse. This widget only moves messages and draws, so a rule is never written
twice and the host can be tested without a browser:

- the front end (``widgets/mcp_app.js`` in the repository, shipped inside the package as
  ``mcp_notebook/widgets/static/mcp_app.js``) runs the View in an iframe with
  ``sandbox="allow-scripts"`` (never ``allow-same-origin``), its ``srcdoc`` the View's HTML with the
  host's CSP as the first element of ``<head>`` (:func:`with_csp`), and its ``allow`` the host's
  permissions attribute;
- what the View posts arrives here as an anywidget custom message and goes, verbatim, to
  ``host.receive(...)`` on the session's engine thread: the kernel's thread only hands it over;
- what the host sends goes to the front end with the widget's ``send``, and from there to the View;
- the host's state (``on_change``) lands in the traits below, from the engine thread (ipywidgets
  syncs traits from any thread in ipykernel).

A link the View asks to open (``ui/open-link``) is https only and needs a click on "Open" in the
view, which shows its host in bold; the click opens it from the front end (a user gesture, so no
popup blocker) and the answer comes back through the ``link_answer`` trait. A trait, not a custom
message, on purpose: the custom-message channel carries whatever the View posts, and a View must
not be able to answer its own consent question.

A file the View asks to save (``ui/download-file``) is put to the user the same way: the view
shows each file's name, type and size with "Save" and "Refuse"; the bytes reach the front end in a
custom message of the kernel's (with the file as a binary buffer, never in a trait: a saved notebook
does not keep them), and "Save" hands them to the browser's own download, in the notebook's page,
never the View's frame. The answer comes back through the ``download_answer`` trait. Unless an
``on_download`` hook answers instead (for runs without a page: nbclient, scripts), see
:class:`~mcp_notebook.notebook._apps.AppRun`; ``save_to=`` also keeps a copy in a folder.

A dialog the server asks for during one of the View's calls shows in the view's dialog area
(``mcpnb-dialog-area``, under the View when it is shown in a cell), or in the explorer's when the
explorer opened the app.

Saved notebooks: the text/plain and static HTML forms are a summary (tool, resource, status, the
model context's keys); the View's HTML is never embedded in them.
"""

from __future__ import annotations

import html
import json
import logging
import re
import threading
import time
from collections.abc import Mapping
from itertools import count
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
import anywidget
import ipywidgets as W
import traitlets as T

from ..display._html import escape, short
from ..notebook._apps import AppRun
from ._dialogs import DialogArea, _link_target
from ._fallback import Fallback
from ._static import static_path

if TYPE_CHECKING:
    from ..apps import AppResource
    from ..protocol._app_files import AppDownload

__all__ = ["AppView", "front_end_path", "with_csp"]

logger = logging.getLogger("mcp_notebook.widgets")

_FRONT_END = "mcp_app.js"
_DEFAULT_HEIGHT = 360
_MAX_HEIGHT = 4000
# A leading doctype (after a BOM or blanks): the CSP meta goes right after it. See with_csp.
_DOCTYPE = re.compile(r"^\ufeff?\s*<!doctype[^>]*>", re.IGNORECASE)
_ON_CHANGE = (
    "status",
    "messages",
    "model_context",
    "height",
    "display_mode",
    "error",
    "initialized",
    "opened_links",
    "downloads",
)
#: The key of the kernel's own custom message that carries a download's bytes to the front end.
#: The host's messages for the View are JSON-RPC objects whose top-level keys it builds itself
#: (jsonrpc, id, method, params, result, error), so a View cannot make one that looks like this.
_DOWNLOAD_KEY = "mcpnb_download"


def front_end_path(name: str = _FRONT_END) -> Path:
    """Where the App view's front end (or another of ``widgets/``) is: see :mod:`._static`."""
    return static_path(name)


def with_csp(page: str, csp: str) -> str:
    """``page`` with ``<meta http-equiv="Content-Security-Policy" content=csp>`` as its first element.

    Why not after the page's own ``<head>`` tag: finding that tag means parsing HTML, and a page can
    hide a fake one in a comment or a script. The meta goes at the very start instead (after a
    leading doctype, so the page keeps standards mode); the HTML parser then opens ``<html>`` and
    ``<head>`` for it, so it is the first element of the head whatever follows, and the page's own
    ``<html>``/``<head>`` tags merge into those. A CSP meta of the page's own can only add
    restrictions: every policy is enforced.
    """
    meta = f'<meta http-equiv="Content-Security-Policy" content="{html.escape(csp, quote=True)}">'
    match = _DOCTYPE.match(page)
    if match:
        return page[: match.end()] + meta + page[match.end() :]
    return meta + page.removeprefix("\ufeff")


def _tool_name(tool: Any) -> str:
    return str(getattr(tool, "name", tool))


class AppView(Fallback, anywidget.AnyWidget):
    """A tool's MCP App, live in the cell. Made by ``session.app(tool, arguments)``.

    Traits (all synced with the front end): ``tool``; ``resource_uri``; ``csp``, the policy the
    iframe enforces, as the header string the host built (the server's ``_meta.ui.csp`` dict it
    came from is ``view.resource.csp``); ``status`` (loading, ready, error, closed) and ``error``;
    ``messages``, the ``ui/message`` the View sent, oldest first; ``model_context``, the View's last
    ``ui/update-model-context`` (None before one); ``height`` in pixels (the View's
    ``size-changed``); ``display_mode``; ``initialized``, whether the View finished its handshake
    (``ui/notifications/initialized``); ``opened_links``, the links the user agreed to open;
    ``downloads``, every file the View offered (name, mime_type, size, accepted), oldest first; and
    for the front end ``srcdoc`` (the page with its CSP), ``allow`` (the iframe's permissions),
    ``link_request`` / ``link_answer`` (the open-link dialog), ``download_request`` /
    ``download_answer`` (the Save / Refuse question).

    ``save_to`` (a folder) keeps a copy of each file the user saved (``view.saved`` lists them);
    ``on_download(file)`` answers downloads instead of the user (True saves). With
    ``defer_call=True`` the tool is not called yet: ``view.send_partial_input(arguments)`` shows the
    View the arguments so far, ``view.call(arguments)`` calls it.

    ``view.host`` is the :class:`~mcp_notebook.apps.AppHost`; ``view.result`` is the tool's result,
    None until the call ends (``view.wait()`` waits for it). Show a view once: every displayed
    copy would start the View again. ``view.close()`` tears it down (``ui/resource-teardown``).
    """

    _esm = front_end_path()

    tool = T.Unicode("").tag(sync=True)
    resource_uri = T.Unicode("").tag(sync=True)
    csp = T.Unicode("").tag(sync=True)
    status = T.Unicode("loading").tag(sync=True)
    error = T.Unicode(None, allow_none=True).tag(sync=True)
    messages: T.List[Any] = T.List().tag(sync=True)
    model_context = T.Dict(allow_none=True).tag(sync=True)
    height = T.Int(_DEFAULT_HEIGHT).tag(sync=True)
    display_mode = T.Unicode("inline").tag(sync=True)
    initialized = T.Bool(False).tag(sync=True)
    opened_links: T.List[Any] = T.List().tag(sync=True)
    srcdoc = T.Unicode("").tag(sync=True)
    allow = T.Unicode("").tag(sync=True)
    link_request = T.Dict(allow_none=True).tag(sync=True)
    link_answer = T.Dict(allow_none=True).tag(sync=True)
    downloads: T.List[Any] = T.List().tag(sync=True)
    download_request = T.Dict(allow_none=True).tag(sync=True)
    download_answer = T.Dict(allow_none=True).tag(sync=True)

    snapshot_note = "A summary of the MCP App; run the cell to see the app itself."

    def __init__(
        self,
        session: Any,
        tool: Any,
        arguments: Mapping[str, Any] | None = None,
        *,
        theme: str = "light",
        save_to: Any = None,
        on_download: Any = None,
        **host_options: Any,
    ) -> None:
        # (a traitlets Dict's default is {} whatever it is given: None is set here)
        super().__init__(
            tool=_tool_name(tool),
            model_context=None,
            link_request=None,
            link_answer=None,
            download_request=None,
            download_answer=None,
        )
        self.add_class("mcpnb-app-view")
        self.session = session
        self._links = count(1)
        self._lock = threading.Lock()
        self._pending_link: tuple[int, threading.Event, list[bool]] | None = None
        self._asks = count(1)
        self._pending_download: tuple[int, threading.Event, list[bool]] | None = None
        self._closing = False  # no more relaying: the View is gone
        self._teardown_started = False
        #: Where the dialogs of the View's calls show (under the View, when shown in a cell).
        self.dialog_area = DialogArea(label=f"app {self.tool}")
        self._box: W.VBox | None = None
        try:
            #: The run on the engine (notebook layer); ``view.host`` is its AppHost.
            self.run = AppRun(
                session,
                tool,
                arguments,
                name=self.tool,
                send=self._to_front_end,
                confirm_open_link=self._confirm_open_link,
                ask_download=self._ask_download,
                on_download=on_download,
                save_to=save_to,
                on_change=self._on_host_change,
                place=self.dialog_area.place,
                host_info={"name": "mcp-notebook", "version": _version()},
                theme=theme,
                **host_options,
            )
        except BaseException:  # a bad tool or option: the widget made above must not linger
            self.dialog_area.close()
            anywidget.AnyWidget.close(self)
            raise
        self.host = self.run.host
        self.run.attach(self)
        self.on_msg(self._from_front_end)
        self.observe(self._on_link_answer, names=["link_answer"])
        self.observe(self._on_download_answer, names=["download_answer"])

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """Shown in a cell: the View with its dialog area under it (one box, made once)."""
        bundle = super()._repr_mimebundle_(**kwargs)
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, None)
        if self._box is None:
            # the dialog area is a panel of its own (one anywidget), under the View's
            self._box = W.VBox([self, self.dialog_area.as_panel()], layout=W.Layout(width="100%"))
        view = "application/vnd.jupyter.widget-view+json"
        boxed = self._box._repr_mimebundle_(**kwargs)
        if isinstance(boxed, dict) and view in boxed and view in data:
            data[view] = boxed[view]
        return (data, metadata) if isinstance(bundle, tuple) else data

    # --- opening --------------------------------------------------------------------------------

    async def aopen(self) -> AppResource:
        """Call the tool and load the View (on the engine thread). AppError for a tool without a
        usable ``ui://`` resource; a failing tool leaves the view in status "error"."""
        resource = await self.run.open()
        self._show(resource)
        return resource

    def _show(self, resource: AppResource) -> None:
        with self.hold_trait_notifications():
            self.resource_uri = resource.uri
            self.csp = resource.csp_header
            self.allow = resource.allow
            self.srcdoc = with_csp(resource.html, resource.csp_header)
            self._sync_from_host()

    def _sync_from_host(self) -> None:
        for name in _ON_CHANGE:
            self._set(name, getattr(self.host, name, None))

    @property
    def resource(self) -> AppResource | None:
        return self.host.resource

    @property
    def result(self) -> Any:
        """The tool's result (the View got it as ``ui/notifications/tool-result``)."""
        return self.host.result

    def wait(self, timeout: float = 30.0) -> Any:
        """Block until the tool's call has ended (or ``timeout`` seconds), then return its result.

        ``session.app()`` returns as soon as the View can be drawn; the call runs on, and the View
        gets its result when it comes. None when the call failed (``error`` says why) or is still
        running at the timeout. It waits for the server, not the page, so it is safe in a cell.
        """
        deadline = time.monotonic() + timeout
        while self.host.result is None and self.host.error is None and self.status != "closed":
            if time.monotonic() >= deadline:
                break
            time.sleep(0.02)
        return self.host.result

    # --- the relay ------------------------------------------------------------------------------

    def _from_front_end(self, _widget: Any, content: Any, _buffers: Any) -> None:
        """A message the View posted (on the kernel's thread): to the host, on the engine."""
        if self._closing:
            return
        self.run.receive_soon(content)

    def receive(self, message: Any) -> dict[str, Any] | None:
        """Hand the host one message as if the View had posted it, wait until it is handled, and
        return the host's answer (None for a notification).

        For scripts, tests and notebooks run without a front end (nbclient, a terminal), where no
        View runs. The answer comes back here, not to the front end: when a View does run (Run All
        in JupyterLab, before the View reported anything), its own requests use the same ids, and
        an answer meant for Python would be taken for the answer to the View's own call.
        Notifications the host sends (the tool's result after ``ui/notifications/initialized``)
        still go to the front end.
        """
        return self.run.receive(message)

    def _to_front_end(self, message: dict[str, Any]) -> None:
        """The host's ``send``: one JSON-RPC message for the View."""
        self.send(message)

    def _on_host_change(self, name: str, value: Any) -> None:
        self._set(name, value)

    def _set(self, name: str, value: Any) -> None:
        if name not in _ON_CHANGE:
            return
        if name == "height":
            if not isinstance(value, int | float) or isinstance(value, bool):
                return
            value = max(0, min(_MAX_HEIGHT, int(value)))
        elif name == "status" and not isinstance(value, str):
            return
        elif name in ("messages", "opened_links", "downloads"):
            value = list(value or [])
        elif name == "initialized":
            value = bool(value)
        elif name == "model_context":
            value = dict(value) if isinstance(value, Mapping) else None
        elif name == "display_mode":
            value = str(value or "inline")
        elif name == "error":
            value = None if value is None else str(value)
        try:
            setattr(self, name, value)
        except T.TraitError:
            logger.warning("the app host reported a bad %s; ignored", name, exc_info=True)

    # --- ui/open-link ---------------------------------------------------------------------------

    async def _confirm_open_link(self, url: str) -> bool:
        """Ask the user (the host's ``confirm_open_link``): only https, one question at a time."""
        if _link_target(url) is None:
            return False
        event, answer = threading.Event(), [False]
        with self._lock:
            if self._pending_link is not None or self._closing:
                return False  # a View may not pile up questions
            ident = next(self._links)
            self._pending_link = (ident, event, answer)
        self.link_request = {"id": ident, "url": url}
        try:
            await anyio.to_thread.run_sync(event.wait, abandon_on_cancel=True)
        finally:
            with self._lock:
                self._pending_link = None
            self.set_trait("link_request", None)
        return answer[0]

    def _on_link_answer(self, change: Any) -> None:
        value = change["new"]
        if not isinstance(value, dict):
            return
        with self._lock:
            pending = self._pending_link
        if pending is None or value.get("id") != pending[0]:
            return
        _ident, event, answer = pending
        answer[0] = value.get("open") is True
        event.set()

    def answer_link(self, open_it: bool) -> None:
        """Answer the pending open-link question as the buttons would (for scripts and tests)."""
        with self._lock:
            pending = self._pending_link
        if pending is not None:
            self.link_answer = {"id": pending[0], "open": bool(open_it)}

    # --- ui/download-file ------------------------------------------------------------------------

    async def _ask_download(self, files: list[AppDownload]) -> bool:
        """Ask the user in the view whether to save ``files`` (one question at a time)."""
        event, answer = threading.Event(), [False]
        with self._lock:
            if self._pending_download is not None or self._closing:
                return False  # a View may not pile up questions
            ident = next(self._asks)
            self._pending_download = (ident, event, answer)
        try:
            # The bytes first, then the question: the front end has them when it draws "Save".
            self.send({_DOWNLOAD_KEY: ident}, buffers=[file.data for file in files])
            shown = [{"name": f.name, "type": f.mime_type, "size": f.size} for f in files]
            self.download_request = {"id": ident, "files": shown}
            await anyio.to_thread.run_sync(event.wait, abandon_on_cancel=True)
        finally:
            with self._lock:
                self._pending_download = None
            self.set_trait("download_request", None)
        return answer[0]

    def _on_download_answer(self, change: Any) -> None:
        value = change["new"]
        if not isinstance(value, dict):
            return
        with self._lock:
            pending = self._pending_download
        if pending is None or value.get("id") != pending[0]:
            return
        _ident, event, answer = pending
        answer[0] = value.get("save") is True
        event.set()

    def answer_download(self, save: bool) -> None:
        """Answer the pending Save / Refuse question as the buttons would (for scripts and tests);
        a Save from here saves no file in the browser (only ``save_to`` keeps one)."""
        with self._lock:
            pending = self._pending_download
        if pending is not None:
            self.download_answer = {"id": pending[0], "save": bool(save)}

    @property
    def saved(self) -> list[Any]:
        """The paths of the files written into ``save_to``, oldest first."""
        return list(self.run.saved)

    # --- the tool's input, before the call (defer_call=True) ------------------------------------

    def send_partial_input(self, arguments: Mapping[str, Any]) -> None:
        """Show the View the tool's arguments so far (``ui/notifications/tool-input-partial``):
        for a view made with ``defer_call=True``, before :meth:`call`. A View not ready yet gets
        the latest one once it is; RuntimeError after :meth:`call`."""
        self.run.send_partial_input(arguments)

    def call(self, arguments: Mapping[str, Any] | None = None) -> None:
        """Call the tool of a view made with ``defer_call=True`` with its final ``arguments``; the
        View gets them (``tool-input``), then the result. Returns once the call is sent
        (``view.wait()`` waits for its result)."""
        self.run.call(arguments)

    # --- lifetime -------------------------------------------------------------------------------

    async def aclose(self, reason: str = "closed") -> None:
        """Tear the View down (``ui/resource-teardown``), then stop relaying."""
        self._refuse_pending_link()
        await self.run.close(reason)
        self._closing = True

    def close(self) -> None:
        """Tear the View down, then close the widget; returns at once, from any thread.

        Not waited for here: the View answers ``ui/resource-teardown`` through a comm message, which
        the kernel handles on this very thread once the cell ends (``await view.aclose()`` waits).
        """
        self._forget()
        if self._closing or self.comm is None:
            self._close_dialog_area()
            super().close()
            return
        if self._teardown_started:
            return
        self._teardown_started = True
        self._refuse_pending_link()

        async def teardown() -> None:
            try:
                await self.aclose()
            except Exception:
                logger.warning("tearing down the app %s failed", self.tool, exc_info=True)
            finally:
                self._closing = True
                self._close_dialog_area()
                anywidget.AnyWidget.close(self)

        self.run.spawn(teardown)

    def _close_dialog_area(self) -> None:
        self.dialog_area.close()
        box, self._box = self._box, None
        if box is not None:
            box.children = ()
            box.close()

    def _stop(self, give_back: bool = True) -> None:
        """The session closes (its views are stopped with it)."""
        self.close()

    def _forget(self) -> None:
        run = getattr(self, "run", None)  # None: the host could not be made
        if run is not None:
            run.detach(self)

    def _discard(self) -> None:
        """Close the widget of a view that never opened (nothing to tear down)."""
        self._closing = True
        self._forget()
        anywidget.AnyWidget.close(self)

    def _refuse_pending_link(self) -> None:
        with self._lock:
            pending = self._pending_link
            download = self._pending_download
        if pending is not None:
            pending[1].set()
        if download is not None:
            download[1].set()

    # --- what a saved notebook shows ------------------------------------------------------------

    def summary(self) -> str:
        line = f"<MCP App {short(self.tool, 80)}: {self.status}, {short(self.resource_uri, 200)}>"
        if self.error:
            line += f"\n  error: {short(self.error, 300)}"
        if self.model_context is not None:
            line += f"\n  model context: {short(_json(self.model_context), 300)}"
        return line

    def snapshot_html(self) -> str:
        rows = [
            ("tool", self.tool),
            ("resource", self.resource_uri),
            ("status", self.status),
        ]
        if self.error:
            rows.append(("error", short(self.error, 500)))
        if self.model_context is not None:
            keys = ", ".join(sorted(str(k) for k in self.model_context))
            rows.append(("model context", short(keys or "(empty)", 500)))
        if self.messages:
            rows.append(("messages", str(len(self.messages))))
        cells = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>" for k, v in rows)
        return f'<div class="mcpnb-app-summary"><b>MCP App</b><table>{cells}</table></div>'


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


def _version() -> str:
    from .._version import __version__

    return str(__version__)
