"""Which failed request may be sent again, after doing what: one table, pure.

A request is resent only when the server provably did not run it (DESIGN.md, "never resend a
request that may have run"), and each way of recovering is used at most once per request, so a
server that keeps failing the same way fails the call instead of looping:

* ``not_delivered`` -> ``resend_unsent``: the channel was gone before any byte was written
  (:class:`NotSent`); send it on the next channel.
* ``unsupported_version`` -> ``rediscover``: a modern server answered ``-32022``; it changed
  versions and refused the request unexecuted.
* ``session_expired`` -> ``renew_session``: a legacy HTTP server forgot our session (404).
* ``header_mismatch`` -> ``relist_tools``: ``-32020`` to ``tools/call``; our ``Mcp-Param-*``
  headers disagree with the tool as the server has it now.

The router classifies each failure with :func:`classify_failure`, asks :func:`allowed_recovery`
with the recoveries the request has used so far, and performs the one it gets (or raises; a
failure that comes back after its recovery is raised as :func:`failed_again` says, so the caller
learns the recovery was tried, not only the last symptom).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from types import MappingProxyType
from typing import Any, Literal

from ..protocol._errors import HEADER_MISMATCH, UNSUPPORTED_PROTOCOL_VERSION, McpError
from ..protocol._http_binding import is_session_expiry
from ..protocol._negotiation import EraRules
from ..protocol._versions import Era
from ..transports._base import Channel

__all__ = [
    "RECOVERY",
    "Failure",
    "NotSent",
    "Recovery",
    "allowed_recovery",
    "classify_failure",
    "failed_again",
    "relist_tools",
]

Failure = Literal["not_delivered", "unsupported_version", "session_expired", "header_mismatch"]
Recovery = Literal["resend_unsent", "rediscover", "renew_session", "relist_tools"]

RECOVERY: Mapping[Failure, Recovery] = MappingProxyType(
    {
        "not_delivered": "resend_unsent",
        "unsupported_version": "rediscover",
        "session_expired": "renew_session",
        "header_mismatch": "relist_tools",
    }
)

#: What each recovery did, as the error of a request that failed the same way after it says.
_DONE: Mapping[Recovery, str] = MappingProxyType(
    {
        "resend_unsent": "it was sent again",
        "rediscover": "the server's version was discovered again",
        "renew_session": "the session was renewed",
        "relist_tools": "the tools were listed again",
    }
)

#: Pages of ``tools/list`` fetched at most to learn the tools anew (a server's cursor that never
#: ends must not keep a call waiting forever).
MAX_RELIST_PAGES = 1000


class NotSent(Exception):
    """A request whose message was provably not written to ``channel``: it never reached the server."""

    def __init__(self, error: McpError, channel: Channel | None = None) -> None:
        super().__init__(error.message)
        self.error = error
        self.channel = channel


def classify_failure(exc: BaseException, rules: EraRules, method: str) -> Failure | None:
    """The failure ``exc`` is, for a ``method`` request in ``rules``' era; None: not recoverable."""
    if isinstance(exc, NotSent):
        return "not_delivered"
    if not isinstance(exc, McpError):
        return None
    if exc.code == UNSUPPORTED_PROTOCOL_VERSION and rules.rediscovers_on_unsupported_version:
        return "unsupported_version"
    if is_session_expiry(exc) and rules.renews_expired_session:
        return "session_expired"
    if exc.code == HEADER_MISMATCH and method == "tools/call":
        return "header_mismatch"
    return None


def allowed_recovery(
    failure: Failure | None, used: frozenset[Recovery], *, reconnect: bool
) -> Recovery | None:
    """The recovery ``failure`` allows, unless the request used it already (or, for a message that
    was not sent, the connection does not reconnect: there is no next channel to send it on)."""
    if failure is None:
        return None
    recovery = RECOVERY[failure]
    if recovery in used or (recovery == "resend_unsent" and not reconnect):
        return None
    return recovery


def failed_again(error: McpError, failure: Failure | None, used: frozenset[Recovery]) -> McpError:
    """``error``, saying so when it is the failure a recovery this request used was meant to cure
    (a legacy server that forgets the renewed session too): the request is not retried twice."""
    if failure is None or RECOVERY[failure] not in used:
        return error
    done = _DONE[RECOVERY[failure]]
    message = f"{error.full_message}, again after {done}; given up"
    return McpError(error.kind, message, code=error.code, data=error.data)


async def relist_tools(
    exchange: Callable[..., Awaitable[dict[str, Any]]], *, era: Era, version: str, timeout: float
) -> None:
    """Fetch every page of ``tools/list`` (so the transport learns the tools' header parameters)."""
    cursor: Any = None
    for _ in range(MAX_RELIST_PAGES):
        result = await exchange(
            "tools/list", {"cursor": cursor} if cursor else None, era=era, version=version, timeout=timeout
        )
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str) or not cursor:
            break
