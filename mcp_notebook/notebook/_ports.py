"""What the notebook's helper modules need of a session or group: narrow typed ports.

A helper never imports the module of the object that owns it (issue #27): :class:`SessionTask`
(``_session_tasks``) and the live views (``_views``) are typed by these Protocols, which
:class:`~mcp_notebook.notebook.Session` and :class:`~mcp_notebook.notebook.Group` satisfy, so
``_session`` imports them and never the other way round.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from ..client import Client
    from ..client._results import ResourceContents, ToolResult
    from ._engine import Engine

__all__ = ["SessionPort", "TaskSession", "ViewOwner", "ViewSession", "WidgetFactory"]

_T = TypeVar("_T")

#: Draws a live view: ``factory(view, header_html, body_html)`` returns its widget. The top layer
#: (:mod:`mcp_notebook.jupyter`) hands one in; the notebook layer never imports widgets.
WidgetFactory = Callable[[Any, str, str], Any]


class SessionPort(Protocol):
    """What a :class:`~mcp_notebook.notebook.SessionTask` needs: a name and the blocking/async runners."""

    name: str

    def _run(self, fn: Callable[..., Awaitable[_T]], *args: Any) -> _T: ...

    async def _arun(self, fn: Callable[..., Awaitable[_T]], *args: Any) -> _T: ...


class TaskSession(SessionPort, Protocol):
    """What the session's task functions (``_session_tasks``) need: its client, model, history."""

    @property
    def client(self) -> Client: ...

    @property
    def model(self) -> Any: ...

    async def _recorded(
        self, method: str, name: str | None, arguments: Any, call: Callable[[], Awaitable[_T]]
    ) -> _T: ...

    def list_tasks(self) -> list[Any]: ...  # SessionTasks (their module imports this one)


class ViewOwner(Protocol):
    """What a live frame runs over (a session or a group): its engine, model and set of views."""

    @property
    def _engine(self) -> Engine: ...

    @property
    def model(self) -> Any: ...

    @property
    def _views(self) -> set[Any]: ...


class ViewSession(ViewOwner, Protocol):
    """What a resource or tool watch needs of its session, beyond :class:`ViewOwner`."""

    @property
    def client(self) -> Client: ...

    @property
    def _closed(self) -> bool: ...

    async def acall_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, **options: Any
    ) -> ToolResult: ...

    async def aread_resource(self, uri: str) -> ResourceContents: ...
