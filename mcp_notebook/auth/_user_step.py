"""The human step of the authorization code grant: a person signs in, the redirect comes back.

Why apart from the flow: it is the one step that waits for a person (up to ``authorize_timeout``),
through the caller's ``on_authorize`` callback, a loopback listener or a paste-back prompt
(:mod:`._paste`), and it tells listeners (a connection pausing its deadlines) while it lasts. The
flow hands it the authorization URL and gets the redirect's parameters back; nothing here knows
about tokens. Which of them runs is ``OAuth(flow=...)``, "auto" deciding by :mod:`._where`.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import os
import sys
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

import anyio
import anyio.to_thread

from ..protocol._errors import McpError
from . import _discovery as disco
from ._loopback import LoopbackReceiver
from ._paste import PastePrompt, SignInLink, paste_answer, terminal_prompt
from ._policy import parse_redirect
from ._where import SignInFlow, browser_elsewhere, choose_flow, in_jupyter_kernel

__all__ = ["OnAuthorize", "UserStep"]

logger = logging.getLogger("mcp_notebook.auth")

OnAuthorize = Callable[[str], Awaitable[str | Mapping[str, Any]] | str | Mapping[str, Any]]


class UserStep:
    """Where the redirect comes back (``on_authorize``, a loopback listener, a paste-back prompt),
    and who to tell."""

    def __init__(
        self,
        *,
        on_authorize: OnAuthorize | None,
        redirect_uri: str | None,
        callback_port: int,
        authorize_timeout: float | None,
        flow: SignInFlow = "auto",
    ) -> None:
        self.on_authorize = on_authorize
        self.redirect_uri = redirect_uri
        self._callback_port = callback_port
        self.authorize_timeout = authorize_timeout
        self.flow: SignInFlow = flow
        self._listeners: list[Callable[[bool], None]] = []
        self._prompts: list[PastePrompt] = []

    def __repr__(self) -> str:
        return f"UserStep(flow={self.flow!r}, redirect_uri={self.redirect_uri!r})"

    def paste_with(self, prompt: PastePrompt) -> Callable[[], None]:
        """Ask for the paste-back with ``prompt`` (the latest one given wins) instead of the
        terminal's; returns a function that takes it back."""
        prompts = self._prompts
        prompts.append(prompt)
        return lambda: prompts.remove(prompt) if prompt in prompts else None

    def flow_for(self, *, device_offered: bool) -> SignInFlow:
        """The flow this sign-in runs (``on_authorize`` given: "loopback"-like, the caller's own)."""
        if self.on_authorize is not None:
            return "loopback"
        return choose_flow(
            self.flow,
            elsewhere=browser_elsewhere(os.environ, platform=sys.platform, in_kernel=in_jupyter_kernel()),
            device_offered=device_offered,
            listens_for_redirect=self.redirect_uri is not None,
        )

    async def paste_redirect_uri(self) -> str:
        """The redirect URI of a paste-back sign-in: ``redirect_uri=`` as given, else a loopback
        address on a port free on this machine (nothing listens there: the browser's page fails
        to load, and the person copies its address)."""
        if self.redirect_uri is not None:
            return self.redirect_uri
        probe = LoopbackReceiver("127.0.0.1", self._callback_port, "/callback")
        try:
            return await probe.start()
        finally:
            await probe.aclose()

    def listen(self, listener: Callable[[bool], None]) -> Callable[[], None]:
        """Call ``listener(True)`` when the step starts and ``listener(False)`` when it ends;
        returns a function that removes the listener."""
        listeners = self._listeners
        listeners.append(listener)
        return lambda: listeners.remove(listener) if listener in listeners else None

    def receiver(self) -> LoopbackReceiver:
        """The listener for the redirect: where ``redirect_uri`` points on this machine, or, for an
        https address on another host (a proxy that forwards to this machine), on
        ``127.0.0.1:callback_port``, taking the address's path or its tail (:mod:`._loopback`)."""
        if self.redirect_uri is None:
            return LoopbackReceiver("127.0.0.1", self._callback_port, "/callback")
        parts = urlsplit(self.redirect_uri)
        host = parts.hostname or "127.0.0.1"
        if not disco.is_loopback_host(host):
            return LoopbackReceiver(
                "127.0.0.1", self._callback_port, parts.path or "/", public_uri=self.redirect_uri
            )
        return LoopbackReceiver(
            "127.0.0.1" if host == "localhost" else host, parts.port or 80, parts.path or "/"
        )

    async def run(
        self,
        server_url: str,
        url: str,
        state: str,
        receiver: LoopbackReceiver | None,
        *,
        paste: tuple[str, str] | None = None,
    ) -> dict[str, str]:
        """The human step: the user authorizes in a browser; we get the redirect's parameters.

        ``paste``: (redirect URI, issuer) of a paste-back sign-in."""
        with self.held():
            if paste is not None:
                redirect_uri, issuer = paste
                prompt = self._prompts[-1] if self._prompts else terminal_prompt
                pasted = await self._ask(prompt, SignInLink(server_url, url, redirect_uri))
                return paste_answer(pasted, expected_state=state, issuer=issuer)
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
        return parse_redirect(await self._ask(callback, url))

    async def _ask(self, callback: Callable[[Any], Any], question: Any) -> Any:
        """``callback(question)``'s answer within ``authorize_timeout`` (a plain function runs in a
        worker thread, so ``input()`` and ``getpass`` do not stall the event loop)."""
        try:
            with anyio.fail_after(self.authorize_timeout):
                if inspect.iscoroutinefunction(callback):
                    result: Any = await callback(question)
                else:
                    result = await anyio.to_thread.run_sync(callback, question, abandon_on_cancel=True)
                if inspect.isawaitable(result):
                    result = await result
        except TimeoutError:
            raise McpError(
                "auth",
                f"the sign-in was not completed within {self.authorize_timeout:g} s (authorize_timeout)",
            ) from None
        return result
