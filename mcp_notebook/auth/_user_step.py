"""The human step of the authorization code grant: a person signs in, the redirect comes back.

Why apart from the flow: it is the one step that waits for a person (up to ``authorize_timeout``),
through either the caller's ``on_authorize`` callback or a loopback listener, and it tells
listeners (a connection pausing its deadlines) while it lasts. The flow hands it the authorization
URL and gets the redirect's parameters back; nothing here knows about tokens.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import sys
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

import anyio
import anyio.to_thread

from ..protocol._errors import McpError
from ._loopback import LoopbackReceiver
from ._policy import parse_redirect

__all__ = ["OnAuthorize", "UserStep"]

logger = logging.getLogger("mcp_notebook.auth")

OnAuthorize = Callable[[str], Awaitable[str | Mapping[str, Any]] | str | Mapping[str, Any]]


class UserStep:
    """Where the redirect comes back (``on_authorize`` or a loopback listener), and who to tell."""

    def __init__(
        self,
        *,
        on_authorize: OnAuthorize | None,
        redirect_uri: str | None,
        callback_port: int,
        authorize_timeout: float | None,
    ) -> None:
        self.on_authorize = on_authorize
        self.redirect_uri = redirect_uri
        self._callback_port = callback_port
        self.authorize_timeout = authorize_timeout
        self._listeners: list[Callable[[bool], None]] = []

    def __repr__(self) -> str:
        return f"UserStep(redirect_uri={self.redirect_uri!r})"

    def listen(self, listener: Callable[[bool], None]) -> Callable[[], None]:
        """Call ``listener(True)`` when the step starts and ``listener(False)`` when it ends;
        returns a function that removes the listener."""
        listeners = self._listeners
        listeners.append(listener)
        return lambda: listeners.remove(listener) if listener in listeners else None

    def receiver(self) -> LoopbackReceiver:
        if self.redirect_uri is None:
            return LoopbackReceiver("127.0.0.1", self._callback_port, "/callback")
        parts = urlsplit(self.redirect_uri)
        host = parts.hostname or "127.0.0.1"
        return LoopbackReceiver(
            "127.0.0.1" if host == "localhost" else host, parts.port or 80, parts.path or "/"
        )

    async def run(
        self, server_url: str, url: str, state: str, receiver: LoopbackReceiver | None
    ) -> dict[str, str]:
        """The human step: the user authorizes in a browser; we get the redirect's parameters."""
        with self.held():
            return await self._wait_for_user(server_url, url, state, receiver)

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """While a person signs in (any flow): the listeners hear ``True`` now and ``False`` at the end."""
        self._tell(True)
        try:
            yield
        finally:
            self._tell(False)

    def _tell(self, active: bool) -> None:
        for listener in list(self._listeners):
            try:
                listener(active)
            except Exception:
                logger.exception("a sign-in listener raised; ignored")

    async def _wait_for_user(
        self, server_url: str, url: str, state: str, receiver: LoopbackReceiver | None
    ) -> dict[str, str]:
        if receiver is not None:
            print(
                f"To authorize access to {server_url}, open this URL in a browser:\n\n  {url}\n\n"
                f"Waiting for the redirect to {receiver.redirect_uri} ...",
                file=sys.stderr,
                flush=True,
            )
            return await receiver.receive(state, timeout=self.authorize_timeout)
        callback = self.on_authorize
        assert callback is not None
        try:
            with anyio.fail_after(self.authorize_timeout):
                if inspect.iscoroutinefunction(callback):
                    result: Any = await callback(url)
                else:
                    result = await anyio.to_thread.run_sync(callback, url, abandon_on_cancel=True)
                if inspect.isawaitable(result):
                    result = await result
        except TimeoutError:
            raise McpError(
                "auth", f"on_authorize did not return the redirect within {self.authorize_timeout:g} s"
            ) from None
        return parse_redirect(result)
