"""How a :class:`~mcp_notebook.client.Client` reaches its server: the transport for a target.

A target is a command (string or argv list: stdio), an ``http(s)://`` URL (with ``headers``,
``auth`` and ``http_client``), a ready :class:`Transport`, an in-process official-SDK server, or
an ``async def serve(incoming, outgoing)`` function. This module also holds the two rules that let a
person sign in over OAuth without a deadline running out under them. Split out of the client
(issue #27) so the client module keeps to the requests; it never imports the client.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..connection import Connection
from ..protocol._http_binding import is_http_url
from ..transports._base import Transport
from ..transports._inprocess import is_sdk_server, sdk_server_transport
from ..transports._memory import MemoryTransport
from ..transports._stdio import StdioTransport

if TYPE_CHECKING:  # httpx costs ~50 ms to import; a stdio-only user never pays for it
    import httpx

__all__ = ["hold_deadlines_during_sign_in", "make_transport", "room_for_sign_in"]


def room_for_sign_in(auth: Any, options: dict[str, Any]) -> dict[str, Any]:
    """Give negotiation time for a person to sign in, unless the caller chose the timeouts.

    OAuth's human step happens inside the first request (the probe), whose usual deadlines are
    seconds. Over HTTP a server always answers the probe with some status, so waiting longer
    costs nothing there; the step itself is bounded by the OAuth object's ``authorize_timeout``.
    """
    wait = getattr(auth, "authorize_timeout", None)
    if not isinstance(wait, int | float) or isinstance(wait, bool):
        return options
    room = float(wait) + 30.0
    adjusted = dict(options)
    adjusted.setdefault("probe_timeout", room)
    adjusted.setdefault("connect_timeout", room)
    return adjusted


def hold_deadlines_during_sign_in(auth: Any, connection: Connection) -> Callable[[], None]:
    """Pause the connection's request deadlines while ``auth`` waits for a person to sign in.

    A 401 in mid-session starts the sign-in inside whichever request met it, and the others wait
    for the token: without this, the person would have one request deadline (60 s by default) to
    finish, and every waiting request would time out. The sign-in is bounded by the OAuth object's
    own ``authorize_timeout``. Returns the function that unhooks it.
    """
    subscribe = getattr(auth, "on_user_step", None)
    if not callable(subscribe):
        return lambda: None
    held: list[Callable[[], None]] = []

    def changed(active: bool) -> None:
        if active:
            held.append(connection.hold_deadlines())
        elif held:
            held.pop()()

    unsubscribe: Callable[[], None] = subscribe(changed)

    def unhook() -> None:
        unsubscribe()
        while held:
            held.pop()()

    return unhook


def _http_auth(auth: str | httpx.Auth | None) -> httpx.Auth | None:
    """A string is a bearer token; anything else must already be an ``httpx.Auth``."""
    import httpx

    if auth is None or isinstance(auth, httpx.Auth):
        return auth
    if isinstance(auth, str):
        from ..auth import BearerToken

        token: httpx.Auth = BearerToken(auth)
        return token
    raise TypeError("auth must be a token string, mcp_notebook.auth.OAuth(...) or another httpx.Auth")


def _refuse_url_in_argv(target: Any) -> None:
    """A list whose first item is a URL is a URL typed as a command: say so, not "not found".

    Run as a command it would fail as a program that does not exist, which hides the slip.
    """
    if isinstance(target, str | bytes) or not isinstance(target, Sequence) or not target:
        return
    first = target[0]
    if isinstance(first, str) and is_http_url(first):
        raise ValueError(
            f"{first!r} is a server URL, not a command: pass the URL as a string ({first!r}), "
            "not inside a list"
        )


def make_transport(
    target: Any,
    *,
    env: Mapping[str, str] | None,
    cwd: str | os.PathLike[str] | None,
    max_message_bytes: int,
    inherit_env: bool,
    shutdown_timeout: float,
    headers: Mapping[str, str] | None = None,
    auth: str | httpx.Auth | None = None,
    http_client: httpx.AsyncClient | None = None,
) -> Transport:
    if is_http_url(target):
        if env is not None or cwd is not None:
            raise ValueError("env= and cwd= apply only to a server started from a command, not to a URL")
        from ..transports._http import HttpTransport

        return HttpTransport(
            target,
            headers=headers,
            auth=_http_auth(auth),
            http_client=http_client,
            max_message_bytes=max_message_bytes,
        )
    _refuse_url_in_argv(target)
    if headers is not None or auth is not None or http_client is not None:
        raise ValueError("headers=, auth= and http_client= apply only to a server URL (http:// or https://)")
    if isinstance(target, str) or (
        isinstance(target, Sequence)
        and not isinstance(target, bytes)
        and all(isinstance(a, str | os.PathLike) for a in target)
    ):
        return StdioTransport(
            target,
            env=env,
            cwd=cwd,
            inherit_env=inherit_env,
            max_message_bytes=max_message_bytes,
            shutdown_timeout=shutdown_timeout,
        )
    if env is not None or cwd is not None:
        raise ValueError("env= and cwd= apply only to a server started from a command")
    if callable(getattr(target, "connect", None)) and callable(getattr(target, "describe", None)):
        return target  # type: ignore[no-any-return]
    if is_sdk_server(target):
        return sdk_server_transport(target)
    if callable(target):
        return MemoryTransport(target, name=getattr(target, "__name__", "in-memory server"))
    raise TypeError(
        f"cannot connect to {type(target).__name__}: give a command (string or argv list), "
        "a Transport, an SDK server object or an async serve(incoming, outgoing) function"
    )
