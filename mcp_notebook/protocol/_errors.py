"""The one exception family of mcp-notebook, and the JSON-RPC / MCP error codes.

Every failure a user can see is an :class:`McpError`. Its ``kind`` says what went wrong in terms a caller
can act on (retry after a transport error, wait longer after a timeout, fix the arguments after an
``invalid`` one); ``code``, ``message`` and ``data`` carry the JSON-RPC error where there is one.

Each kind is also a subclass, so ``except McpTimeout:`` reads as what it catches:
``McpError("timeout", ...)`` builds an :class:`McpTimeout` (``McpError.__new__`` picks the class
by kind), and ``McpTimeout("...")`` is the same error. ``kind`` stays, for code that reads it.

In a notebook an McpError draws as one short block (IPython's ``_render_traceback_``: the kind, the
message, the call, what to do and the user's own frames, none of ours); the full traceback is
``%mcp tb``, or everywhere with :func:`set_full_tracebacks` or ``MCP_NOTEBOOK_TRACEBACK=full``.

Every message is bounded (:data:`MAX_ERROR_CHARS`): a server can send a megabyte of error text,
and a 200,000-character tool name quoted with its neighbours made a 2.4 MB error; an error must fit
a cell. The cut is made here, once, for every McpError: ``message``, ``str()``, ``repr()`` and the
notebook's short block show the head and tail with how much was cut between, and ``full_message``
keeps the whole text. Message builders cut names with :func:`clip` (and pass the uncut text as
``full_message``) so that a long name does not crowd out the rest of the message.

This module must never put a secret into a message: callers build messages from method names, tool
names, option names and server-provided error text only, never from arguments, headers or env values.
"""

from __future__ import annotations

import functools
import os
import sysconfig
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Literal

from ._printable import printable

__all__ = [
    "CONNECTION_CLOSED",
    "ERROR_KINDS",
    "FATAL_KINDS",
    "HEADER_MISMATCH",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "MAX_ERROR_CHARS",
    "MAX_NAME_CHARS",
    "METHOD_NOT_FOUND",
    "MISSING_REQUIRED_CLIENT_CAPABILITY",
    "PARSE_ERROR",
    "REFUSAL_KINDS",
    "REQUEST_TIMEOUT",
    "RESOURCE_NOT_FOUND",
    "TRACEBACK_ENV",
    "UNRETRIED_KINDS",
    "UNSUPPORTED_PROTOCOL_VERSION",
    "URL_ELICITATION_REQUIRED",
    "ErrorKind",
    "McpAuthError",
    "McpCancelled",
    "McpClosed",
    "McpError",
    "McpInvalidInput",
    "McpOverloaded",
    "McpProtocolError",
    "McpServerError",
    "McpTimeout",
    "McpTransportError",
    "McpVersionError",
    "advise_first_connect",
    "clip",
    "full_tracebacks",
    "set_full_tracebacks",
    "short_traceback",
]

# JSON-RPC 2.0
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# Client-side codes used by the other SDKs as well, so logs read the same everywhere.
CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001
# MCP
RESOURCE_NOT_FOUND = -32002  # legacy era only; modern servers use -32602
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022
URL_ELICITATION_REQUIRED = -32042  # 2025-11-25 only

#: The most characters an error's message (and ``str()``) shows; the rest is in ``full_message``.
MAX_ERROR_CHARS = 2_000
#: The most characters a name (a tool's, an argument's) takes inside a message.
MAX_NAME_CHARS = 100
_CUT = " … [{cut:,} characters cut; the whole text is the error's full_message] … "


def clip(text: str, limit: int = MAX_NAME_CHARS) -> str:
    """``text`` cut to at most ``limit`` characters, ending with an ellipsis when it was cut: a name
    as a message quotes it."""
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def _bounded(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    """``text`` cut to at most ``limit`` characters: its head (three quarters) and its tail (what
    to do is often said last), with how much was cut between."""
    if len(text) <= limit:
        return text
    room = limit - len(_CUT.format(cut=len(text)))
    head = room * 3 // 4
    tail = room - head
    return text[:head] + _CUT.format(cut=len(text) - head - tail) + text[len(text) - tail :]


ErrorKind = Literal[
    "transport",  # the pipe or socket failed, the server died, a frame was unreadable
    "timeout",  # the deadline passed; the server was asked to cancel
    "protocol",  # the server broke the protocol (bad shape, unknown era, too many rounds)
    "server",  # the server answered with a JSON-RPC error
    "auth",  # credentials are missing or were refused
    "overloaded",  # too many requests in flight or queued: refused before sending
    "cancelled",  # the caller or the server cancelled the request
    "closed",  # the client is closed (or closed while the request waited)
    "version",  # no protocol version both sides speak
    "invalid",  # the caller's input was refused before sending (e.g. arguments against inputSchema)
]
ERROR_KINDS: frozenset[str] = frozenset(ErrorKind.__args__)  # type: ignore[attr-defined]
#: How a server says no to a handshake, as opposed to being unreachable or slow: a refusal of a
#: handshake it accepted before means it changed (probe its era again).
REFUSAL_KINDS: frozenset[ErrorKind] = frozenset({"version", "protocol", "server"})
#: A failed negotiation of these kinds ends the connection: another attempt would fail alike.
FATAL_KINDS: frozenset[ErrorKind] = REFUSAL_KINDS | {"auth"}
#: A group member's first connect that fails this way is not tried again: the server's version,
#: its protocol and the credentials stay what they were. A server's own error ("server") may pass,
#: so a group retries it where a connection that was refused stops.
UNRETRIED_KINDS: frozenset[ErrorKind] = FATAL_KINDS - {"server"}


class McpError(Exception):
    """A failure talking to an MCP server.

    ``kind`` is one of :data:`ErrorKind`. ``code``/``message``/``data`` are the JSON-RPC error fields
    when the server sent one (``kind == "server"``) and the conventional client-side code otherwise
    (-32000 connection closed, -32001 request timeout). The message says what to do where we know.
    """

    kind: ErrorKind
    code: int | None
    #: The message, cut to :data:`MAX_ERROR_CHARS` (what ``str()`` and the notebook show).
    message: str
    #: The whole message, uncut (a server's whole error text, every name in full).
    full_message: str
    data: Any
    #: The call that failed, in words (``"tools/call 'add' on 'demo'"``), where a layer that knows
    #: it set it; shown in the short traceback.
    call: str | None = None
    #: What to do, where the layer that raised it knows better than the kind's usual advice (a
    #: program that was not found: there is no session that could reconnect); shown in the short
    #: traceback.
    advice: str | None = None
    #: The kind a subclass stands for (None on McpError itself, which takes any kind).
    _KIND: ClassVar[ErrorKind | None] = None

    def __new__(cls, *args: Any, **kwargs: Any) -> McpError:
        # McpError("timeout", ...) is an McpTimeout: the class follows the kind, so existing code
        # that builds errors by kind raises the subclasses. Subclasses (and an unknown kind,
        # refused by __init__) are built as they are.
        if cls is McpError:
            kind = args[0] if args else kwargs.get("kind")
            cls = _CLASS_OF_KIND.get(kind, McpError) if isinstance(kind, str) else McpError
        return super().__new__(cls)

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        code: int | None = None,
        data: Any = None,
        full_message: str | None = None,
    ) -> None:
        if kind not in ERROR_KINDS:
            raise ValueError(f"unknown McpError kind {kind!r}")
        if self._KIND is not None and kind != self._KIND:
            raise ValueError(f"{type(self).__name__} is kind {self._KIND!r}, not {kind!r}")
        message = message if isinstance(message, str) else str(message)
        self.full_message = message if full_message is None else full_message
        self.message = _bounded(message)
        super().__init__(self.message)
        self.kind = kind
        self.code = code
        self.data = data

    def rewrite(self, change: Callable[[str], str]) -> None:
        """Apply ``change`` (masking secrets, say) to the whole text and cut the message again from
        the result, so the rule sees every character: a secret that straddled the cut would
        otherwise show its first half in ``str()`` and stay whole in ``full_message``."""
        derived = self.message == _bounded(self.full_message)
        self.full_message = change(self.full_message)
        self.message = _bounded(self.full_message) if derived else change(self.message)
        self.args = (self.message, *self.args[1:])

    @classmethod
    def from_jsonrpc(cls, error: Any, *, context: str = "") -> McpError:
        """Build a ``server`` error from a JSON-RPC error object, tolerating a malformed one."""
        if not isinstance(error, dict):
            return McpError("protocol", f"{context}server sent a malformed error object")
        code = error.get("code")
        message = error.get("message")
        if not isinstance(message, str):
            message = "server error without a message"
        if not isinstance(code, int) or isinstance(code, bool):
            code = None
        kind: ErrorKind = "version" if code == UNSUPPORTED_PROTOCOL_VERSION else "server"
        return McpError(kind, f"{context}{message}", code=code, data=error.get("data"))

    def __str__(self) -> str:
        # The message often quotes the server (its error text, its stderr): a traceback or a log
        # line prints this, so a terminal escape in it is shown, not obeyed. ``message`` stays raw.
        # Escapes can lengthen it (six characters for one): cut again to the bound.
        message = _bounded(printable(self.message, multiline=True))
        return message if self.code is None else f"{message} (code {self.code})"

    def __repr__(self) -> str:
        return f"McpError(kind={self.kind!r}, code={self.code!r}, message={self.message!r})"

    @property
    def _render_traceback_(self) -> Callable[[], list[str]]:
        # IPython draws an exception that has this method with the lines it returns (the
        # protocol ipyparallel uses): one short block instead of our frames and anyio's. With full
        # tracebacks switched on the attribute is missing (AttributeError), so IPython draws its
        # usual traceback, in the current %xmode.
        if full_tracebacks():
            raise AttributeError("_render_traceback_")
        return lambda: short_traceback(self)

    def __reduce__(self) -> tuple[Any, ...]:
        # Exceptions with keyword-only arguments do not pickle by default; notebooks and worker
        # pools pickle exceptions to move them between processes.
        return (_rebuild, (self.kind, self.message, self.code, self.data, self.full_message))


def _rebuild(
    kind: ErrorKind, message: str, code: int | None, data: Any, full_message: str | None = None
) -> McpError:
    return McpError(kind, message, code=code, data=data, full_message=full_message)


class _KindError(McpError):
    """An error of one kind: built as ``McpTimeout("message")`` or, like any McpError, with the
    kind first (``McpTimeout("timeout", "message")``)."""

    def __init__(
        self,
        *args: Any,
        code: int | None = None,
        data: Any = None,
        full_message: str | None = None,
        **named: Any,
    ) -> None:
        kind: Any = named.pop("kind", self._KIND) if len(args) < 2 else args[0]
        if len(args) == 2:
            message = args[1]
        elif len(args) == 1 and "message" in named:
            kind, message = args[0], named.pop("message")
        elif len(args) == 1:
            message = args[0]
        elif not args and "message" in named:
            message = named.pop("message")
        else:
            raise TypeError(f"{type(self).__name__}() takes the message (or the kind and the message)")
        if named:
            raise TypeError(f"{type(self).__name__}() got unexpected argument(s): {', '.join(sorted(named))}")
        super().__init__(kind, message, code=code, data=data, full_message=full_message)


class McpTransportError(_KindError):
    """The pipe or socket failed, the server died, or a frame was unreadable (kind "transport")."""

    _KIND = "transport"


class McpTimeout(_KindError):
    """The deadline passed; the server was asked to cancel (kind "timeout")."""

    _KIND = "timeout"


class McpProtocolError(_KindError):
    """The server broke the protocol: a bad shape, an unknown era, too many rounds (kind "protocol")."""

    _KIND = "protocol"


class McpServerError(_KindError):
    """The server answered with a JSON-RPC error (kind "server"; ``code`` is the server's)."""

    _KIND = "server"


class McpAuthError(_KindError):
    """Credentials are missing or were refused (kind "auth")."""

    _KIND = "auth"


class McpOverloaded(_KindError):
    """Too many requests in flight or queued: refused before sending (kind "overloaded")."""

    _KIND = "overloaded"


class McpCancelled(_KindError):
    """The caller or the server cancelled the request (kind "cancelled")."""

    _KIND = "cancelled"


class McpClosed(_KindError):
    """The client is closed, or closed while the request waited (kind "closed")."""

    _KIND = "closed"


class McpVersionError(_KindError):
    """No protocol version both sides speak (kind "version")."""

    _KIND = "version"


class McpInvalidInput(_KindError):
    """The caller's input was refused before sending, e.g. arguments against the tool's inputSchema
    (kind "invalid")."""

    _KIND = "invalid"


_CLASS_OF_KIND: dict[str, type[McpError]] = {
    cls._KIND: cls
    for cls in (
        McpTransportError,
        McpTimeout,
        McpProtocolError,
        McpServerError,
        McpAuthError,
        McpOverloaded,
        McpCancelled,
        McpClosed,
        McpVersionError,
        McpInvalidInput,
    )
    if cls._KIND is not None
}


# --- the short picture a notebook shows (IPython's ``_render_traceback_``) --------------------------

#: Set to ``full`` (or ``1``) to have notebooks show McpErrors with their full traceback.
TRACEBACK_ENV = "MCP_NOTEBOOK_TRACEBACK"
_FULL: list[bool] = [False]
#: What to do, by kind: the message says what happened, this says what a user can try.
_ADVICE: dict[str, str] = {
    "transport": "the server or the connection failed; the session reconnects by itself: call again",
    "timeout": "the server was asked to cancel; pass a longer timeout= (or start_tool() for long work)",
    "protocol": "the server broke the protocol: a bug to report to its authors",
    "server": "the server refused the request: its message above says why",
    "auth": "check the credentials (token, login) and connect again",
    "overloaded": "too many calls at once: wait for some to finish, then call again",
    "cancelled": "the call was cancelled: call again if it is still wanted",
    "closed": "the session is closed: connect again",
    "version": "no protocol version in common: update the server or pin protocol=",
    "invalid": "nothing was sent: fix the call as the message says",
}
#: What to do when the first connect failed, by kind, where the usual advice assumes a session that
#: is up and reconnects by itself: before the first connect there is none, so nothing retries.
_CONNECT_ADVICE: dict[str, str] = {
    "transport": "nothing is connected, so nothing retries by itself: fix what the message says "
    "(the command, the address, the server), then connect again",
    "timeout": "the server did not get ready in time: connect again with a longer connect_timeout=",
}
_MAX_FRAMES = 4
_MAX_CALL_CHARS = 300
_RED, _BOLD, _RESET = "\x1b[0;31m", "\x1b[1m", "\x1b[0m"


def advise_first_connect(err: McpError) -> McpError:
    """``err``, a first connect's failure, with advice that fits it (unless its raiser gave some)."""
    if err.advice is None:
        err.advice = _CONNECT_ADVICE.get(err.kind)
    return err


def full_tracebacks() -> bool:
    """Whether notebooks show McpErrors with their full traceback: :func:`set_full_tracebacks`
    (``%mcp tb full``), or the environment variable :data:`TRACEBACK_ENV` set to ``full``."""
    return _FULL[0] or os.environ.get(TRACEBACK_ENV, "").strip().lower() in ("full", "1")


def set_full_tracebacks(full: bool) -> None:
    """Show McpErrors in notebooks with their full traceback (True) or as one short block."""
    _FULL[0] = bool(full)


def short_traceback(err: McpError) -> list[str]:
    """The lines a notebook shows for ``err``: its class, kind and message, the call, what to do,
    the user's own frames (a cell, their modules) and none of ours, the library's or anyio's."""
    lines = [f"{_RED}{type(err).__name__}{_RESET} [{err.kind}]: {err}"]
    if err.call:
        lines.append(f"  {_BOLD}call:{_RESET} {printable(clip(err.call, _MAX_CALL_CHARS))}")
    advice = err.advice or _ADVICE.get(err.kind, "see the message")
    lines.append(f"  {_BOLD}what to do:{_RESET} {advice}")
    frames = _user_frames(err.__traceback__)
    for frame in frames[-_MAX_FRAMES:]:
        lines.append(clip(f"  {_where(frame)}: {frame.line or ''}".rstrip(": "), _MAX_CALL_CHARS))
    lines.append(f"  (the full traceback: %mcp tb, or {TRACEBACK_ENV}=full)")
    return lines


@functools.cache
def _internal_roots() -> tuple[str, ...]:
    """Where our code, the standard library and installed packages live (found when first drawn)."""
    package = str(Path(__file__).resolve().parent.parent)
    paths = sysconfig.get_paths()
    roots = {paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib") if key in paths}
    return (package, *sorted(str(Path(root).resolve()) for root in roots))


def _user_frames(tb: Any) -> list[traceback.FrameSummary]:
    """The frames of ``tb`` that are the user's: a notebook cell or their own files, not ours, the
    standard library's or an installed package's (IPython, anyio)."""
    summary = traceback.StackSummary.extract(traceback.walk_tb(tb), limit=None, lookup_lines=True)
    internal = _internal_roots()
    return [
        frame
        for frame in summary
        if not frame.filename.startswith("<frozen") and not _resolved(frame.filename).startswith(internal)
    ]


def _resolved(filename: str) -> str:
    try:
        return str(Path(filename).resolve())
    except (OSError, ValueError):
        return filename


def _where(frame: traceback.FrameSummary) -> str:
    name = "" if frame.name == "<module>" else f", in {frame.name}"
    if "ipykernel_" in frame.filename or frame.filename.startswith("<ipython-input"):
        return f"cell, line {frame.lineno}{name}"
    return f"{frame.filename}, line {frame.lineno}{name}"
