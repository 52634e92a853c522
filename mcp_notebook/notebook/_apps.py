"""An MCP App's run, as notebook state: :class:`AppRun` owns the host and relays on the engine.

:class:`~mcp_notebook.apps.AppHost` (the core) answers a View's messages. In a notebook it runs on
the session's engine thread, and what the View logs goes into the session's log. That is this
layer's business, not the widget's: the widgets' ``AppView`` only draws the View and hands each
message it posts to :meth:`AppRun.receive_soon` (issue #27: no widget reaches into the engine or
writes the model).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..apps import AppHost
from ._dialogs import DialogPlace, current_place

if TYPE_CHECKING:
    from ..apps import AppResource

__all__ = ["AppRun"]


class AppRun:
    """One MCP App over a session: the :class:`~mcp_notebook.apps.AppHost`, run on the engine.

    ``session`` is what the run needs of a session: ``client``, ``model`` and its engine (a
    :class:`~mcp_notebook.notebook.Session`). ``tool`` (a name or a Tool; ``name`` is its name),
    ``arguments`` and ``host_options`` go to the host; ``send``, ``confirm_open_link`` and
    ``on_change`` are the drawing's callbacks; ``place`` is where the dialogs of the View's calls
    show when the run was not opened by a widget's call (whose place wins).
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
        place: DialogPlace | None = None,
        **host_options: Any,
    ) -> None:
        self.session = session
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

        self._engine.call(self.host.receive, message, keep)
        return answers[-1] if answers else None

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
