"""The Streamable HTTP binding's rules, without the HTTP: what an answer means, and session state.

The HTTP transport moves bytes; every decision about what a status, a content type or an error
body means lives here, as pure functions and one small state object, so each rule is a row in a
table test (PROTOCOL.md §3.3, §3.5, §4.2, §4.3):

* :func:`classify_status`: a request's answer is a body to read (JSON or SSE), no answer at all
  (202/204 to a request), a forgotten legacy session (404 on a request that carried one), or a
  refusal.
* :func:`refusal_means_sse`: an ``initialize`` refused with 400/404/405 and no JSON-RPC body is the
  2024-11-05 HTTP+SSE binding's sign; 429 and 5xx never are (a busy or broken server says nothing
  about its binding).
* :func:`refusal`: what a refusal tells the caller: the server's JSON-RPC error as it is, an auth
  error saying what to configure, a transport error for a gateway that is restarting, or a
  JSON-RPC error carrying ``httpStatus`` so that era negotiation (one function for stdio and HTTP,
  :func:`mcp_notebook.protocol._negotiation.after_discover`) can weigh it.
* :func:`retry_delay`: the server's SSE ``retry`` within sane bounds.
* :class:`LegacySession`: the ``Mcp-Session-Id`` and negotiated version of a legacy session, and
  the rule that only the request which carried the current id may end it.

The ``x-mcp-header`` rules are in :mod:`.headers`.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any, Literal

from ._errors import (
    CONNECTION_CLOSED,
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    McpError,
)
from ._jsonrpc import ErrorResponse, RequestId

__all__ = [
    "MODERN_ERRORS",
    "SESSION_EXPIRED",
    "LegacySession",
    "StatusMeaning",
    "body_kind",
    "classify_status",
    "is_session_expiry",
    "jsonrpc_error_in",
    "refusal",
    "refusal_means_sse",
    "reopen_outcome",
    "retry_delay",
    "session_expired_error",
    "stream_backoff",
]

#: Error codes only a modern server sends: a 4xx carrying one is modern, never legacy evidence.
MODERN_ERRORS = frozenset({UNSUPPORTED_PROTOCOL_VERSION, MISSING_REQUIRED_CLIENT_CAPABILITY, HEADER_MISMATCH})
#: ``McpError.data`` marker of a request the server refused because it forgot the session: the
#: request never ran, so the connection renews the session and sends it once more (§4.2).
SESSION_EXPIRED = "sessionExpired"

#: The server's SSE ``retry`` is honoured within these bounds (seconds): a hostile or broken value
#: can neither hammer the server nor park a stream for hours.
RETRY_BOUNDS = (0.1, 30.0)

StatusMeaning = Literal["body", "no-answer", "session-expired", "refused"]


def is_http_url(text: object) -> bool:
    """Whether ``text`` names an HTTP(S) endpoint: the one test for "is this target a URL".

    A connect target, a config entry and a link all ask it; other schemes (``file:``, ``ui:``) are
    not endpoints this client can speak to, so they are not URLs here.
    """
    return isinstance(text, str) and text.lower().startswith(("http://", "https://"))


def classify_status(method: str, status: int, *, modern: bool, sent_session: str | None) -> StatusMeaning:
    """What the status of a request's answer means before its body is read."""
    if status == 404 and not modern and sent_session is not None and method != "initialize":
        return "session-expired"
    if status >= 400:
        return "refused"
    if status in (202, 204):
        return "no-answer"
    return "body"


def body_kind(content_type: str | None) -> Literal["json", "sse"] | None:
    """``Content-Type`` of a 2xx answer: one JSON message, an SSE stream, or neither (an error)."""
    kind = (content_type or "").partition(";")[0].strip().lower()
    if kind == "application/json":
        return "json"
    if kind == "text/event-stream":
        return "sse"
    return None


def refusal_means_sse(method: str, status: int, body: bytes) -> bool:
    """Is this refusal the sign of a 2024-11-05 HTTP+SSE server (fall back to that binding)?"""
    return method == "initialize" and status in (400, 404, 405) and jsonrpc_error_in(body) is None


def jsonrpc_error_in(body: bytes) -> dict[str, Any] | None:
    """The JSON-RPC error object an HTTP error body carries, if it is one (era detection reads it)."""
    try:
        parsed = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    if isinstance(parsed, dict):
        error = parsed.get("error")
        if (
            isinstance(error, dict)
            and isinstance(error.get("code"), int)
            and not isinstance(error["code"], bool)
        ):
            return error
    return None


def refusal(
    request_id: RequestId,
    status: int,
    reason: str,
    body: bytes,
    *,
    challenge: str | None,
    where: str,
    credentials: bool,
) -> ErrorResponse | McpError:
    """What a non-2xx answer to a request means for its caller.

    A JSON-RPC error body is the server's answer and is passed on as it is. Otherwise 401/403 are
    auth errors that say what to configure (``challenge`` is the WWW-Authenticate value; only its
    scheme, error, scope and metadata URL are shown); 502-504 from a gateway are transport errors
    (the server may be restarting); other statuses become a JSON-RPC error carrying ``httpStatus``.
    """
    error = jsonrpc_error_in(body)
    if error is not None:
        return ErrorResponse(request_id, error)
    if status == 401:
        shown = _challenge(challenge)
        if credentials:
            return McpError(
                "auth",
                f"{where} refused our credentials (HTTP 401{shown}); check the token or sign in again",
            )
        return McpError(
            "auth",
            f"{where} requires authorization (HTTP 401{shown}). Pass auth=mcp_notebook.auth.OAuth() to "
            "sign in with OAuth, auth='<token>' for a bearer token, or headers={...} for an API key.",
        )
    if status == 403:
        return McpError("auth", f"{where} refused access (HTTP 403{_challenge(challenge)})")
    if status in (502, 503, 504):
        return McpError(
            "transport",
            f"{where} answered HTTP {status} {reason}; the server may be restarting",
            code=CONNECTION_CLOSED,
        )
    code = METHOD_NOT_FOUND if status in (404, 405) else INVALID_REQUEST if status < 500 else INTERNAL_ERROR
    text = _first_line(body)
    detail = f": {text}" if text else ""
    return ErrorResponse(
        request_id,
        {
            "code": code,
            "message": f"HTTP {status} {reason} from {where}{detail}",
            "data": {"httpStatus": status},
        },
    )


def retry_delay(retry_ms: int) -> float:
    """Seconds to wait before resuming a stream, from the server's ``retry:`` (clamped)."""
    return min(max(retry_ms / 1000, RETRY_BOUNDS[0]), RETRY_BOUNDS[1])


def stream_backoff(retry: float, failures: int) -> float:
    """Seconds to wait before reopening a stream after ``failures`` failed attempts in a row.

    The server's ``retry`` (seconds, already clamped) doubled per failure, capped at the upper
    retry bound, then jittered to 50-100 % so that the clients of a restarted server do not all
    come back in the same instant (with one failure: between one and two ``retry``). Only
    failures back off: a stream the server ends cleanly is resumed after exactly ``retry``.
    """
    step = float(min(RETRY_BOUNDS[1], retry * 2 ** min(failures, 16)))
    return step * random.uniform(0.5, 1.0)


def reopen_outcome(status: int) -> Literal["open", "retry", "stop"]:
    """What the answer to a GET that (re)opens an SSE stream means for reconnecting (SEP-1699).

    "open": the stream is up. "retry": a failure that may pass (5xx, 408, 429, a redirect we do
    not follow), so try again with backoff. "stop": this stream cannot be had (400, 404, 405 and
    the other 4xx: no such stream or session, no GET here, not allowed), so trying again is noise.
    """
    if 200 <= status < 300:
        return "open"
    if status < 400 or status >= 500 or status in (408, 429):
        return "retry"
    return "stop"


def session_expired_error(where: str) -> McpError:
    return McpError(
        "transport",
        f"{where} forgot our session (HTTP 404)",
        code=CONNECTION_CLOSED,
        data={SESSION_EXPIRED: True},
    )


def is_session_expiry(error: McpError) -> bool:
    return isinstance(error.data, dict) and error.data.get(SESSION_EXPIRED) is True


class LegacySession:
    """A legacy server's session: its id (if it gave one) and the version the handshake agreed.

    Many requests may carry the same id when the server forgets it; only the first 404 for the
    current id ends the session (:meth:`expire`), so the renewal happens once.
    """

    __slots__ = ("id", "version")

    def __init__(self) -> None:
        self.id: str | None = None
        self.version: str | None = None

    def headers(self) -> dict[str, str]:
        headers = {}
        if self.id is not None:
            headers["Mcp-Session-Id"] = self.id
        if self.version is not None:
            headers["MCP-Protocol-Version"] = self.version
        return headers

    def begin(self, session_header: str | None) -> None:
        """The answer to ``initialize`` arrived with this ``Mcp-Session-Id`` (or none)."""
        self.id = session_header or None

    def agreed(self, result: Mapping[str, Any]) -> None:
        """The ``initialize`` result: the version every later request names."""
        version = result.get("protocolVersion")
        self.version = version if isinstance(version, str) else None

    def expire(self, sent: str | None) -> bool:
        """The server forgot session ``sent``; True if that was the current one (now gone)."""
        if sent is None or sent != self.id:
            return False
        self.id = None
        return True


def _challenge(value: str | None) -> str:
    """The useful, non-secret part of a WWW-Authenticate challenge: scheme, error, scope."""
    if not value:
        return ""
    scheme = value.split(None, 1)[0]
    parts = [scheme]
    for key in ("error", "scope", "resource_metadata"):
        marker = f"{key}="
        start = value.find(marker)
        if start != -1:
            rest = value[start + len(marker) :]
            item = rest[1 : rest.find('"', 1)] if rest.startswith('"') else rest.split(",", 1)[0]
            parts.append(f"{key}={item}")
    return ", WWW-Authenticate: " + " ".join(parts)


def _first_line(body: bytes) -> str:
    text = body[:400].decode("utf-8", "replace").strip()
    if text.startswith("<"):  # an HTML error page says nothing useful in one line
        return ""
    return text.splitlines()[0][:160] if text else ""
