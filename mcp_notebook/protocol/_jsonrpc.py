"""JSON-RPC 2.0 messages: encoding, decoding and classification, with no I/O.

A transport hands this module the bytes of one frame and gets back one of four message kinds
(:class:`Request`, :class:`Notification`, :class:`Response`, :class:`ErrorResponse`) or a
:class:`FrameError` that says why the frame is unusable. Everything above works with these small
objects; nothing above parses JSON-RPC by hand. Batches (2025-03-26 only) are not sent by servers we
talk to and are refused as malformed frames.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from types import ModuleType
from typing import Any

_orjson: ModuleType | None
try:  # optional: about three times faster than the standard library on every frame
    import orjson as _orjson
except ImportError:  # pragma: no cover - the tests patch it away to cover this path
    _orjson = None

__all__ = [
    "ErrorResponse",
    "FrameError",
    "Message",
    "Notification",
    "Request",
    "RequestId",
    "Response",
    "classify",
    "decode",
    "encode",
    "error_response",
    "json_number",
    "probable_response_id",
]

RequestId = int | str


@dataclass(slots=True)
class Request:
    id: RequestId
    method: str
    params: dict[str, Any] | None


@dataclass(slots=True)
class Notification:
    method: str
    params: dict[str, Any] | None


@dataclass(slots=True)
class Response:
    id: RequestId
    result: dict[str, Any]


@dataclass(slots=True)
class ErrorResponse:
    id: RequestId | None
    error: dict[str, Any]


Message = Request | Notification | Response | ErrorResponse


class FrameError(ValueError):
    """A frame that is not a usable JSON-RPC message. ``head`` is the start of it, for a log line.

    ``id`` is set when the frame is unusable but plainly answers one of our requests (it has a
    valid id and no method): that request can then fail at once instead of waiting for its deadline.
    ``request_id`` is set when it is plainly a request from the server (a method and a valid id):
    the server can then be told it was invalid instead of waiting for an answer that never comes.
    """

    def __init__(
        self,
        reason: str,
        head: bytes = b"",
        *,
        id: RequestId | None = None,
        request_id: RequestId | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.head = head
        self.id = id
        self.request_id = request_id


def encode(message: dict[str, Any]) -> bytes:
    """One message as compact UTF-8 JSON without a newline inside (stdio frames are lines)."""
    if _orjson is not None:
        try:
            return bytes(_orjson.dumps(message))
        except TypeError:
            pass  # integers past 64 bits, non-string keys: the standard library copes
    # ensure_ascii=False keeps non-ASCII text compact; JSON escapes any raw newline inside strings.
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()


def decode(frame: bytes | str) -> Message:
    """Parse and classify one frame; raise :class:`FrameError` when it is not a JSON-RPC message."""
    head = frame[:200] if isinstance(frame, bytes) else frame[:200].encode(errors="replace")
    obj = _parse(frame, head)
    try:
        return classify(obj)
    except FrameError as exc:
        exc.head = exc.head or head
        raise


#: a run of 19 digits: an integer literal that may not fit 64 bits (or just digits in a string)
_LONG_DIGITS = re.compile(rb"[0-9]{19}")
_LONG_DIGITS_TEXT = re.compile("[0-9]{19}")


def _parse(frame: bytes | str, head: bytes) -> Any:
    # orjson reads an integer past 64 bits as a float (2**70 -> 1.1805916207174113e+21): a frame
    # that may hold one goes through the standard library, which keeps every integer exact.
    pattern: Any = _LONG_DIGITS if isinstance(frame, bytes) else _LONG_DIGITS_TEXT
    if _orjson is not None and not pattern.search(frame):
        # orjson insists on UTF-8 without lone surrogates and bounds nesting, like the path below.
        try:
            return _orjson.loads(frame)
        except _orjson.JSONDecodeError as exc:
            raise _refusal(frame, head, str(exc.msg)) from None
    try:
        # Strict UTF-8 first: json.loads(bytes) would guess UTF-16/32 and let lone surrogates in.
        text = frame.decode("utf-8") if isinstance(frame, bytes) else frame
        # NaN and Infinity are not JSON; orjson refuses them, so must this path.
        obj = json.loads(text, parse_constant=_not_json)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        raise _refusal(frame, head, "") from None
    # A "\ud800" escape decodes to a lone surrogate, which no UTF-8 encoder accepts: a string
    # echoed back to the server (an input_required round's requestState) would fail to send.
    # orjson refuses such frames; here they are looked for only when the text could hold one.
    if _SURROGATE_HINT.search(text) and _holds_lone_surrogate(obj):
        raise _refusal(frame, head, "")
    return obj


def _refusal(frame: bytes | str, head: bytes, parser_says: str) -> FrameError:
    """Why a frame the strict reading refused was refused, and whose frame it was.

    Why a second, lenient reading: a server's answer refused for one value deep inside (a NaN, a
    lone surrogate, an integer past the digit limit, nesting past the limit) still names its request in
    a readable id, and that request should fail now, saying what was refused, instead of waiting
    for its deadline and reporting a timeout. The lenient reading takes every value the strict one
    refuses, notes each refusal, and classifies the frame as usual; it runs only for a refused
    frame, which costs one more parse of a frame already within ``max_message_bytes``.
    """
    noted = _Refusals()
    text = noted.text_of(frame)
    try:
        obj = json.loads(
            text, parse_constant=noted.constant, parse_float=noted.number, parse_int=noted.integer
        )
    except RecursionError:
        return FrameError(_NESTED, head, id=_deep_answer_id(frame))
    except ValueError as exc:
        return FrameError(noted.reason() or f"not JSON ({type(exc).__name__})", head)
    if _SURROGATE_HINT.search(text) and _holds_lone_surrogate(obj):
        noted.found["a lone surrogate (not UTF-8)"] = None
    reason = noted.reason()
    if not reason:
        nested = "depth" in parser_says or "recursion" in parser_says
        reason = _NESTED if nested else f"not UTF-8 JSON ({parser_says})" if parser_says else "not UTF-8 JSON"
    try:
        message = classify(obj)
    except FrameError as exc:
        return FrameError(reason, head, id=exc.id, request_id=exc.request_id)
    if isinstance(message, Response | ErrorResponse):
        return FrameError(reason, head, id=message.id)
    if isinstance(message, Request):
        return FrameError(reason, head, request_id=message.id)
    return FrameError(reason, head)


class _Refusals:
    """The lenient reading's hooks: they take what the strict reading refuses and note it."""

    def __init__(self) -> None:
        self.found: dict[str, None] = {}  # what was refused, in document order, once each

    def reason(self) -> str:
        return " and ".join(self.found)

    def text_of(self, frame: bytes | str) -> str:
        if isinstance(frame, str):
            return frame
        try:
            return frame.decode("utf-8")
        except UnicodeDecodeError:
            self.found["bytes that are not UTF-8"] = None
            return frame.decode("utf-8", errors="replace")

    def constant(self, name: str) -> None:
        self.found[f"{name} (not JSON)"] = None

    def number(self, text: str) -> float:
        value = float(text)
        if math.isinf(value):
            self.found["a number too large for a double"] = None
            return 0.0
        return value

    def integer(self, text: str) -> int:
        # Every integer is read exactly (see _parse); only one past the interpreter's digit limit
        # (sys.get_int_max_str_digits(), which bounds the quadratic cost of reading it) is refused.
        try:
            return int(text)
        except ValueError:
            self.found[f"an integer of {len(text) - text.startswith('-'):,} digits"] = None
            return 0


_NESTED = "JSON nested too deeply"


def _deep_answer_id(frame: bytes | str) -> RequestId | None:
    """The id of a response nested too deeply to parse, read from its top-level members.

    Only a frame whose first nested value is the ``result`` or ``error`` member counts: a request
    of the server's (a ``method`` and ``params``) must never fail one of ours that shares its id.
    """
    data = frame if isinstance(frame, bytes) else frame.encode(errors="replace")
    opening = _TOP_LEVEL_PREFIX.match(data[:_ID_SCAN_BYTES])
    if opening is None:
        return None
    keys = _MEMBER_KEY.findall(opening.group(0))
    if not keys or keys[-1] not in (b'"result"', b'"error"') or b'"method"' in keys:
        return None
    return probable_response_id(data[:_ID_SCAN_BYTES], data[-_ID_SCAN_BYTES:])


_SURROGATE_HINT = re.compile("\\\\u[dD][89a-fA-F]|[\ud800-\udfff]")
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _holds_lone_surrogate(obj: Any) -> bool:
    stack = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _LONE_SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def classify(obj: Any) -> Message:
    """Turn a parsed JSON value into a message object, checking only what routing depends on."""
    if not isinstance(obj, dict):
        kind = "batch" if isinstance(obj, list) else type(obj).__name__
        raise FrameError(f"a JSON {kind} is not a JSON-RPC message")
    method = obj.get("method")
    if obj.get("jsonrpc") != "2.0":
        raise FrameError(
            "missing or wrong 'jsonrpc' version",
            id=_answered_id(obj, method),
            request_id=_asking_id(obj, method),
        )
    if method is not None:
        if not isinstance(method, str):
            raise FrameError("'method' is not a string", request_id=_asking_id(obj, method))
        params = obj.get("params")
        if params is not None and not isinstance(params, dict):
            raise FrameError(
                f"params of {method[:80]!r} are not an object", request_id=_asking_id(obj, method)
            )
        if "id" in obj:
            rid = obj["id"]
            if not _valid_id(rid):
                raise FrameError(f"request {method[:80]!r} has an invalid id")
            return Request(rid, method, params)
        return Notification(method, params)
    if "id" not in obj:
        raise FrameError("neither a request, a notification nor a response")
    rid = obj["id"]
    if "error" in obj:
        error = obj["error"]
        if not isinstance(error, dict):
            error = {"code": None, "message": "malformed error object"}
        return ErrorResponse(rid if _valid_id(rid) else None, error)
    if "result" in obj:
        if not _valid_id(rid):
            raise FrameError("response has an invalid id")
        result = obj["result"]
        if not isinstance(result, dict):
            raise FrameError("result is not an object", id=rid)
        return Response(rid, result)
    raise FrameError("response without 'result' or 'error'", id=rid if _valid_id(rid) else None)


def _valid_id(value: Any) -> bool:
    # Exact types: bool is an int subclass in Python but not a valid JSON-RPC id, and a float,
    # list or object never names a request (a list or object is not even hashable).
    kind = type(value)
    return kind is int or kind is str


def _asking_id(obj: dict[str, Any], method: Any) -> RequestId | None:
    """The id of a request-shaped object (a method and an id), when it is a valid one."""
    if method is None:
        return None
    rid = obj.get("id")
    return rid if _valid_id(rid) else None


def _answered_id(obj: dict[str, Any], method: Any) -> RequestId | None:
    """The id of a response-shaped object (no method), when it is a valid one."""
    if method is not None:
        return None
    rid = obj.get("id")
    return rid if _valid_id(rid) else None


def json_number(value: Any) -> float | None:
    """A JSON number as a float (None for anything else, booleans included).

    An integer too large for a float (the standard library parses one of any length) becomes
    an infinity of its sign instead of raising OverflowError in whoever reads it.
    """
    if type(value) is float:
        return value
    if type(value) is not int:
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def error_response(request_id: RequestId, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """The JSON-RPC error response we send back to a server request."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


# The top-level "id" of a response whose body is too large to parse: scan only the members that come
# before the first nested object or array, so an "id" inside the result is never mistaken for it.
_TOP_LEVEL_ID = re.compile(
    rb'^\s*\{(?:[^{}\[\]"]|"(?:[^"\\]|\\.)*")*?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")(?=\s*[,}])',
)


# ... or at its very end: '"id": X }' closing the frame is a top-level member (one brace, then the end).
_TRAILING_ID = re.compile(rb'[,{]\s*"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*\}\s*$')


# The members of a frame before its first nested value, up to that value's opening bracket.
_TOP_LEVEL_PREFIX = re.compile(rb'^\s*\{(?:[^{}\[\]"]|"(?:[^"\\]|\\.)*")*?[{\[]')
_MEMBER_KEY = re.compile(rb'("(?:[^"\\]|\\.)*")\s*:')
_ID_SCAN_BYTES = 4096


def probable_response_id(head: bytes, tail: bytes = b"") -> RequestId | None:
    """The id of an oversized frame, read from its first or last bytes, or None when unsure.

    Used only to fail the one request an oversized response belongs to instead of letting it wait
    for its deadline; a wrong guess is ruled out because only top-level members are accepted.
    """
    match = _TOP_LEVEL_ID.match(head) or _TRAILING_ID.search(tail)
    if match is None:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return value if _valid_id(value) else None
