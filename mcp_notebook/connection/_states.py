"""The connection's lifecycle as one table: states, events, and which event moves which state.

Everything that changes a connection's state goes through :meth:`Lifecycle.apply` in this module,
as in h11's ``_state.py``: the connection reports what happened (an event) and this module says
where that leads, or refuses the event as impossible, so no part of the connection can put it in a
state the table does not allow.

Theory of operation. A connection starts ``connecting``; once its transport gives it a channel it
is ``negotiating`` (the era probe or handshake); an agreed era makes it ``ready``. A channel lost
while ``ready`` (a crashed server, a dropped stream of the HTTP+SSE binding) makes it
``reconnecting``, and the next channel starts over at ``negotiating``. A legacy HTTP server that
forgets the session sends a ``ready`` connection back to ``negotiating`` on the same channel, until
the handshake is done again. Closing (the user's ``close``) makes any state ``closing`` while the
channel and its tasks shut down, and ``closed`` once they have (``finished``). ``closed`` is final:
the user closed it, the first connection failed, a failure was fatal (a version or auth error),
or reconnecting was given up.

An event the table does not allow raises :class:`ForbiddenTransition`, a :class:`ConnectionBug`:
as h11's ``LocalProtocolError``, it means the connection's own code went wrong, never the server.

The table does not decide *whether* to reconnect (that needs the options and how the channel
ended); the connection decides, and reports ``lost`` (it will retry) or ``give_up``.
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = [
    "EVENTS",
    "STATES",
    "TRANSITIONS",
    "ConnectionBug",
    "ConnectionState",
    "ForbiddenTransition",
    "Lifecycle",
    "LifecycleEvent",
]

ConnectionState = Literal["connecting", "negotiating", "ready", "reconnecting", "closing", "closed"]
LifecycleEvent = Literal[
    "channel_open",  # the transport gave us a channel
    "negotiated",  # the era and version are agreed
    "lost",  # the channel ended or negotiation failed; another attempt will follow
    "renew",  # the server forgot our session: handshake again on the same channel
    "give_up",  # a failure that ends it all: first attempt, fatal error, attempts exhausted
    "close",  # the user closed the client: shut down
    "finished",  # the shutdown is over: the channel and its tasks are gone
]

STATES: tuple[ConnectionState, ...] = get_args(ConnectionState)
EVENTS: tuple[LifecycleEvent, ...] = get_args(LifecycleEvent)

TRANSITIONS: dict[ConnectionState, dict[LifecycleEvent, ConnectionState]] = {
    "connecting": {"channel_open": "negotiating", "give_up": "closed", "close": "closing"},
    "negotiating": {"negotiated": "ready", "lost": "reconnecting", "give_up": "closed", "close": "closing"},
    "ready": {"lost": "reconnecting", "renew": "negotiating", "give_up": "closed", "close": "closing"},
    "reconnecting": {
        "channel_open": "negotiating",
        "lost": "reconnecting",
        "give_up": "closed",
        "close": "closing",
    },
    "closing": {"finished": "closed", "close": "closing", "channel_open": "closing", "lost": "closing"},
    "closed": {"close": "closed", "give_up": "closed", "lost": "closed"},
}
"""Special cases, beside the table: ``closing`` absorbs a second ``close``, a channel that opened
as the close began (it is shut at once) and the news of a channel lost meanwhile; ``closed``
absorbs the late news of a channel that was still shutting down (``lost``, ``give_up``) and a
``close`` after the connection gave up; nothing leaves it."""


class ConnectionBug(RuntimeError):
    """The connection's own code went wrong (an internal error): never the server's doing."""


class ForbiddenTransition(ConnectionBug):
    """An event the current state does not allow: a bug in the connection, never the server's."""


class Lifecycle:
    """The current state, moved only by :meth:`apply`."""

    __slots__ = ("ever_ready", "state")

    def __init__(self) -> None:
        self.state: ConnectionState = "connecting"
        #: Has the connection been ready once? (A failure before that is the caller's error.)
        self.ever_ready = False

    def apply(self, event: LifecycleEvent) -> ConnectionState:
        """Move by ``event``; returns the new state (which may be the old one)."""
        allowed = TRANSITIONS[self.state]
        if event not in allowed:
            raise ForbiddenTransition(f"{event!r} cannot happen while {self.state!r}")
        self.state = allowed[event]
        if self.state == "ready":
            self.ever_ready = True
        return self.state
