"""An MCP App's run, as notebook state: :class:`AppRun` owns the host and relays on the engine.

:class:`~mcp_notebook.apps.AppHost` (the core) answers a View's messages. In a notebook it runs on
the session's engine thread, and what the View logs goes into the session's log. That is this
layer's business, not the widget's: the widgets' ``AppView`` only draws the View and hands each
message it posts to :meth:`AppRun.receive_soon` (issue #27: no widget reaches into the engine or
writes the model).

Files a View offers (``ui/download-file``) are this layer's decision too: ``on_download`` (a
Python hook) answers when given; else the widget asks the user in the view, but only for a request
the View itself sent (a script standing in for the View through :meth:`AppRun.receive` has nobody
in front of a page to ask: refused); an accepted file is also written into ``save_to`` when given.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio.to_thread

from ..apps import AppHost
from ..client._app_saving import save_download
from ._dialogs import DialogPlace, current_place

if TYPE_CHECKING:
    from ..apps import AppResource
    from ..protocol._app_files import AppDownload

logger = logging.getLogger("mcp_notebook.apps")

#: Set while the host handles a message a script handed in for the View (AppRun.receive).
_STAND_IN: ContextVar[bool] = ContextVar("mcp_notebook_app_stand_in", default=False)

__all__ = ["AppRun"]


class AppRun:
    """One MCP App over a session: the :class:`~mcp_notebook.apps.AppHost`, run on the engine.

    ``session`` is what the run needs of a session: ``client``, ``model`` and its engine (a
    :class:`~mcp_notebook.notebook.Session`). ``tool`` (a name or a Tool; ``name`` is its name),
    ``arguments`` and ``host_options`` go to the host; ``send``, ``confirm_open_link``,
    ``ask_download`` (the view's Save / Refuse question) and ``on_change`` are the drawing's
    callbacks; ``place`` is where the dialogs of the View's calls show when the run was not opened
    by a widget's call (whose place wins). ``on_download(file)`` (called in a worker thread, once
    per :class:`~mcp_notebook.protocol._app_files.AppDownload`) answers a View's download instead
    of the user: True accepts, anything else refuses. ``save_to``, an existing folder, receives a
    copy of every accepted file (``saved`` lists their paths).
    """

    def __init__(
        self,
        session: Any,
        tool: Any,
        arguments: Mapping[str, Any] | None,
        *,
        name: str,
        send: Callable[[dict[str, Any]], Any],
        confirm_open_link: Callable[[str], Awaitable[bool]],
        on_change: Callable[[str, Any], Any],
        ask_download: Callable[[list[AppDownload]], Awaitable[bool]] | None = None,
        on_download: Callable[[AppDownload], Any] | None = None,
        save_to: str | os.PathLike[str] | None = None,
        place: DialogPlace | None = None,
        **host_options: Any,
    ) -> None:
        if on_download is not None and not callable(on_download):
            raise TypeError("on_download must be a function of one AppDownload")
        self.session = session
        self._ask_download = ask_download
        self._on_download = on_download
        self._save_to = Path(save_to) if save_to is not None else None
        if self._save_to is not None and not self._save_to.is_dir():  # said now, not at the first file
            raise NotADirectoryError(f"save_to must be an existing folder: {str(self._save_to)!r} is not one")
        #: The files written into ``save_to``, oldest first.
        self.saved: list[Path] = []
        self.tool = name  # the tool's name, for the log
        self._engine = session._engine
        # Opened by a call from a widget (the explorer): the View's own calls ask their dialogs
        # there; else in ``place`` (the view's own dialog area), else under the running cell.
        self._place = current_place() or place
        #: The core's host (its ``result``, ``error``, ``resource``, ...).
        self.host = AppHost(
            session.client,
            tool,
            dict(arguments or {}),
            send=send,
            confirm_open_link=confirm_open_link,
            confirm_download=self._confirm_download if ask_download or on_download else None,
            on_change=on_change,
            on_log=self._on_log,
            **host_options,
        )

    async def open(self) -> AppResource:
        """Call the tool and load the View's resource (on the engine thread)."""
        return await self.host.open()

    async def close(self, reason: str = "closed") -> None:
        """Tear the View down (``ui/resource-teardown``)."""
        await self.host.close(reason)

    def receive_soon(self, message: Any) -> None:
        """A message the View posted, from any thread: handled on the engine, not waited for."""
        receive: Callable[..., Awaitable[None]] = self.host.receive
        if self._place is not None:
            receive = self._place.placed(self.session, receive)
        self._engine.spawn(receive, message)

    def receive(self, message: Any) -> dict[str, Any] | None:
        """Hand the host one message as the View would, wait until it is handled, and return the
        host's answer to it (None for a notification). For scripts, tests and notebooks without a
        front end, or beside one: the answer comes back here, never to the View, whose own
        requests may carry the same ids (the View would take it for the answer to one of them)."""
        answers: list[dict[str, Any]] = []

        def keep(answer: dict[str, Any]) -> None:
            answers.append(answer)

        async def stand_in() -> None:
            token = _STAND_IN.set(True)
            try:
                await self.host.receive(message, keep)
            finally:
                _STAND_IN.reset(token)

        self._engine.call(stand_in)
        return answers[-1] if answers else None

    # --- the tool's input, streamed before the call (defer_call=True) ---------------------------

    def send_partial_input(self, arguments: Mapping[str, Any]) -> None:
        """The host's :meth:`~mcp_notebook.apps.AppHost.send_partial_input`, from a cell."""
        self._engine.call(self.host.send_partial_input, arguments)

    def call(self, arguments: Mapping[str, Any] | None = None) -> None:
        """Call the deferred tool with ``arguments`` (recorded in the session's history)."""
        final = dict(arguments or {})
        self._engine.call(
            self.session._recorded, "tools/call", self.tool, final, lambda: self.host.call(final)
        )

    # --- ui/download-file -----------------------------------------------------------------------

    async def _confirm_download(self, files: list[AppDownload]) -> bool:
        """The host's ``confirm_download``: the hook, else the user in the view, then ``save_to``."""
        if self._on_download is not None:
            accepted = await anyio.to_thread.run_sync(self._ask_hook, files)
        elif self._ask_download is None or _STAND_IN.get():
            return False  # no page a user looks at asked: nobody to confirm with
        else:
            accepted = await self._ask_download(files)
        if accepted and self._save_to is not None:
            await anyio.to_thread.run_sync(self._save, files)
        return accepted

    def _ask_hook(self, files: list[AppDownload]) -> bool:
        hook = self._on_download
        assert hook is not None
        try:
            return all(hook(file) is True for file in files)  # asked in order until a no
        except Exception:
            logger.warning("on_download raised; the download was refused", exc_info=True)
            return False

    def _save(self, files: list[AppDownload]) -> None:
        assert self._save_to is not None
        for file in files:
            try:
                self.saved.append(save_download(file, self._save_to))
            except OSError:
                logger.warning(
                    "the app's file %r could not be saved in %s", file.name, self._save_to, exc_info=True
                )

    def spawn(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
        """Start ``fn(*args)`` on the engine (a teardown), from any thread."""
        return self._engine.spawn(fn, *args)

    def attach(self, view: Any) -> None:
        """Close ``view`` with the session: a View whose server is gone has nobody to answer it."""
        views = getattr(self.session, "_views", None)
        if isinstance(views, set):
            views.add(view)

    def detach(self, view: Any) -> None:
        views = getattr(self.session, "_views", None)
        if isinstance(views, set):
            views.discard(view)

    def _on_log(self, params: dict[str, Any]) -> None:
        """A View's ``notifications/message``: into the session's log, marked as the app's."""
        entry = {
            "time": time.time(),
            "level": params.get("level") if isinstance(params, dict) else None,
            "logger": (params.get("logger") if isinstance(params, dict) else None) or f"app:{self.tool}",
            "data": params.get("data") if isinstance(params, dict) else params,
        }
        self.session.model.append("log", entry)
