"""The ``Session`` and ``Group`` users get: the notebook layer's, plus the methods that open widgets.

The notebook layer (:mod:`mcp_notebook.notebook`) holds everything about a session but its widgets,
because widgets sit above it and it never imports them. These subclasses add ``explorer()``,
``dashboard()``, ``app()``, ... (each widget module imported on first use, so importing this needs no
ipywidgets). Importing this module makes the notebook layer's ``connect()``, ``connect_all()`` and
the magics hand out these classes (``use_session_class``/``use_group_class``), and
``mcp_notebook.connect``, ``mcp_notebook.Session``, ... are these.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from ..notebook import _group, _once, _progress, _session, _sign_in
from ..notebook._views import Picture

if TYPE_CHECKING:
    from ..notebook._dialogs import DialogsFactory
    from ..widgets._app import AppView

__all__ = ["Group", "Session", "connect", "connect_all"]


def _progress_panel(description: str, total: float | None) -> Any:
    """A call's progress bar in a notebook: one of our panels (imported on the first bar)."""
    from ..widgets._progress_bar import progress_panel

    return progress_panel(description, total)


_progress.draw_bars_with(_progress_panel)


def _device_sign_in_panel(sign_in: Any, write: Any) -> Any:
    """A device sign-in's panel under the cell (the widgets module loads at the first sign-in)."""
    from ..widgets._sign_in import show_device_sign_in

    return show_device_sign_in(sign_in, write)


_sign_in.show_device_codes_with(_device_sign_in_panel)


def _live_view_widget(view: Any, header: str, body: str) -> Any:
    """The widget factory the live views get (the widgets module loads when one is first drawn)."""
    from ..widgets._live import LiveViewWidget

    return LiveViewWidget(view, header, body)


def _notebook_dialogs(name: str) -> Any:
    """The dialogs factory sessions get: widgets that ask the person at the notebook."""
    from ..widgets._dialogs import NotebookDialogs

    return NotebookDialogs(name)


class Session(_session.Session):
    """One MCP server (see :class:`mcp_notebook.notebook.Session`), with its widgets one call away."""

    @classmethod
    def dialogs_factory(cls) -> DialogsFactory | None:
        return _notebook_dialogs

    def _view_options(self) -> dict[str, Any]:
        return {"widget_factory": _live_view_widget}

    def explorer(self, *, include_app_only: bool = False) -> Any:
        """The tool explorer: forms from each tool's inputSchema, results, history (tools only an
        MCP App's View may call are listed with ``include_app_only``)."""
        from ..widgets import explorer

        return explorer(self, include_app_only=include_app_only)

    def status_widget(self) -> Any:
        """A live status panel: state, era, protocol, server, reconnects, last error, in flight."""
        from ..widgets._status import status_widget

        return status_widget(self)

    def resources_widget(self) -> Any:
        """The resource browser: list, templates, read view, subscriptions with live updates."""
        from ..widgets._resources import resources_widget

        return resources_widget(self)

    def prompts_widget(self) -> Any:
        """The prompt panel: arguments with the server's completions, rendered messages."""
        from ..widgets._prompts import prompts_widget

        return prompts_widget(self)

    def log_widget(self) -> Any:
        """The server's notifications and log messages, live, with a level filter."""
        from ..widgets._log import log_widget

        return log_widget(self)

    def tasks_widget(self) -> Any:
        """The tasks panel: every task started or attached to, live, with Cancel and results."""
        from ..widgets._tasks_panel import tasks_widget

        return tasks_widget(self)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """The card, live where a front end draws widgets (its calls count follows the session's
        calls, issue #38); the text and the card's picture everywhere else (a terminal, nbconvert,
        GitHub and nbviewer show a saved notebook's HTML)."""
        bundle: dict[str, Any] = {"text/plain": repr(self), "text/html": self._repr_html_()}
        try:
            drawn = self._live_card()._repr_mimebundle_() or {}
        except ImportError:  # no ipywidgets: the picture
            drawn = {}
        view = "application/vnd.jupyter.widget-view+json"
        if isinstance(drawn, dict) and view in drawn:
            bundle[view] = drawn[view]
        return bundle

    def _display_(self) -> Any:
        """marimo shows what this returns (it draws no ipywidgets view of a bundle): the live card."""
        try:
            return self._live_card()
        except ImportError:  # no ipywidgets: the picture
            return Picture(self._repr_html_())

    def _live_card(self) -> Any:
        """The one live card of this session (made again if it was closed)."""
        from ..widgets._card import session_card

        card = self.__dict__.get("_mcpnb_card")
        if card is None or card.comm is None:
            card = self.__dict__["_mcpnb_card"] = session_card(self)
        return card

    def dashboard(self) -> Any:
        """Status on top, then a Tab: tool explorer, tasks, resources, log."""
        from ..widgets._dashboard import dashboard

        return dashboard(self)

    def app(self, tool: Any, arguments: Mapping[str, Any] | None = None, **options: Any) -> AppView:
        """A tool's MCP App, live in the cell: calls the tool, loads its ``ui://`` View, returns the
        :class:`~mcp_notebook.widgets.AppView` (display it once).

        The View runs sandboxed in the front end; its messages are answered by an
        :class:`~mcp_notebook.apps.AppHost` on the engine thread, so ``view.model_context``,
        ``view.messages`` and ``view.status`` follow it from Python. Raises
        :class:`~mcp_notebook.apps.AppError` for a tool without a ``ui://`` resource or one that is
        not an MCP App page; a tool that fails gives a view whose status is "error". ``options``
        go to the host (``theme="dark"``...). The call is in the session's history like any other.
        """
        view = self._app_view(tool, arguments, options)
        try:
            self._run(self._open_app, view, arguments)
        except BaseException:
            view._discard()
            raise
        return view

    async def aapp(self, tool: Any, arguments: Mapping[str, Any] | None = None, **options: Any) -> AppView:
        """:meth:`app` for cells that ``await``."""
        view = self._app_view(tool, arguments, options)
        try:
            await self._arun(self._open_app, view, arguments)
        except BaseException:
            view._discard()
            raise
        return view

    def _app_view(self, tool: Any, arguments: Mapping[str, Any] | None, options: dict[str, Any]) -> AppView:
        self._check_open()
        from ..widgets._app import AppView

        return AppView(self, tool, arguments, **options)

    async def _open_app(self, view: AppView, arguments: Mapping[str, Any] | None) -> Any:
        if view.host.defer_call:  # the tool is called by view.call(), and recorded then
            return await view.aopen()
        return await self._recorded("tools/call", view.tool, dict(arguments or {}), view.aopen)

    def roots_widget(self) -> Any:
        """The roots this client declares; editable when ``roots=`` was a ``RootsList``."""
        from ..widgets._dialogs import roots_widget

        return roots_widget(self)


class Group(_group.Group):
    """Several MCP servers (see :class:`mcp_notebook.notebook.Group`), with their widgets; each
    server's session is a :class:`Session` of this module, so ``group["name"].explorer()`` works."""

    session_class = Session

    def _view_options(self) -> dict[str, Any]:
        return {"widget_factory": _live_view_widget}

    def status_widget(self) -> Any:
        """The status board: one row per server (status, era, tools, in flight, reconnects, error), live."""
        from ..widgets._group_panels import group_status_widget

        return group_status_widget(self)

    def explorer(self, server: str | None = None) -> Any:
        """The tool explorer with a server selector (or every server's tools, each named SERVER.TOOL)."""
        from ..widgets._group_panels import group_explorer

        return group_explorer(self, server)

    def log_widget(self) -> Any:
        """Every server's log messages and notifications, merged, live, with a server column."""
        from ..widgets._group_panels import group_log_widget

        return group_log_widget(self)


_session.use_session_class(Session)
_group.use_group_class(Group)


@functools.wraps(_session.connect)
def connect(target: Any, **options: Any) -> Session:
    # One session per name (issue #29): a re-run connect cell gets its session back, or replaces it.
    return cast("Session", _once.connect_once(_session.connect, target, options))


connect.__doc__ = (connect.__doc__ or "") + (
    "\n    Run again (a re-run cell), it opens no second server: the session it opened before for "
    "this\n    name (or, without ``name``, this target) comes back when the target and options are the "
    "same,\n    else it is closed, with a one-line note, and a new one takes its name.\n"
)


@functools.wraps(_group.connect_all)
def connect_all(config: Any = None, **options: Any) -> Group:
    return cast("Group", _group.connect_all(config, **options))
