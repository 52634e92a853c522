"""Server-sent events (the WHATWG event-stream format), decoded from bytes with a size bound.

Both HTTP bindings carry JSON-RPC messages as SSE events. This module turns the bytes of a stream,
in whatever chunks the network delivers them, into :class:`SseEvent` objects, and keeps the
stream-level state that resumption needs (the last event id, the server's ``retry``).

Why by hand rather than httpx-sse: a stream's events must be bounded in *bytes* before they are
buffered. httpx-sse decodes text and collects a whole line before anything can look at its size,
so a server that sends one endless ``data:`` line makes the client hold all of it. Here a line or
an event that passes ``max_event_bytes`` is dropped as it arrives: the decoder reports one
:class:`EventTooLarge`, discards the rest of that event up to its blank line, and goes on with the
next one. Sizes count the bytes of the ``data`` fields (and of a line still being received).

Rules followed (https://html.spec.whatwg.org/multipage/server-sent-events.html): lines end with
CRLF, LF or CR; a blank line dispatches the event; ``:`` starts a comment (a keep-alive); one space
after the colon is dropped; ``data`` lines are joined with LF; ``id`` without NUL sets the last
event id even when no event is dispatched (a "priming" event has an id and empty data); ``retry``
takes ASCII digits only; an event with no data is not dispatched.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EventTooLarge", "SseDecoder", "SseEvent"]


@dataclass(frozen=True, slots=True)
class SseEvent:
    #: The ``event`` field; "" means the default type, "message".
    event: str
    #: The data lines joined with LF, as bytes (JSON decoders take bytes).
    data: bytes
    #: The stream's last event id when this event was dispatched.
    id: str | None


@dataclass(frozen=True, slots=True)
class EventTooLarge:
    """An event passed the size bound; it was dropped without being buffered whole."""

    #: How many bytes of the event had arrived when the bound was passed (always more than
    #: ``limit``; the event is at least this large).
    size: int
    limit: int

    @property
    def reason(self) -> str:
        return f"an event of at least {self.size} bytes exceeded max_message_bytes={self.limit}"


class SseDecoder:
    """Feed it chunks of an event stream; it returns the events each chunk completes."""

    __slots__ = (
        "_after_cr",
        "_data",
        "_data_size",
        "_event",
        "_line",
        "_line_dropped",
        "_max",
        "_skipping",
        "last_event_id",
        "retry",
    )

    def __init__(self, max_event_bytes: int) -> None:
        self._max = max_event_bytes
        self._line = bytearray()  # the start of a line whose end has not arrived
        self._line_dropped = False  # the line being received is too long: its bytes are not kept
        self._data: list[bytes] = []
        self._data_size = 0
        self._event = ""
        self._skipping = False  # this event passed the bound: drop its fields until the blank line
        self._after_cr = False  # the last chunk ended in CR: a LF opening the next one is its pair
        #: The last ``id`` the stream set (resumption sends it as ``Last-Event-ID``).
        self.last_event_id: str | None = None
        #: The last ``retry`` the stream set, in milliseconds.
        self.retry: int | None = None

    def feed(self, chunk: bytes) -> list[SseEvent | EventTooLarge]:
        out: list[SseEvent | EventTooLarge] = []
        if self._after_cr and chunk[:1] == b"\n":
            chunk = chunk[1:]
        if not chunk:
            return out
        self._after_cr = chunk[-1:] == b"\r"
        if b"\r" in chunk:
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = chunk.split(b"\n")
        rest = lines.pop()  # after the last line end: the start of the next line
        for index, line in enumerate(lines):
            if index == 0 and (self._line or self._line_dropped):
                if self._line_dropped:
                    self._line_dropped = False
                    continue  # the end of a line too long to keep; its event is being skipped
                self._line += line
                line = bytes(self._line)
                self._line.clear()
            self._on_line(line, out)
        if rest:
            if self._line_dropped:
                pass
            elif len(self._line) + len(rest) + self._data_size > self._max:
                seen = self._data_size + len(self._line) + len(rest)  # before the line is let go
                self._line.clear()
                self._line_dropped = True
                self._too_large(seen, out)
            else:
                self._line += rest
        return out

    def _on_line(self, line: bytes, out: list[SseEvent | EventTooLarge]) -> None:
        if not line:
            if not self._skipping and self._data:
                out.append(SseEvent(self._event, b"\n".join(self._data), self.last_event_id))
            self._data = []
            self._data_size = 0
            self._event = ""
            self._skipping = False
            return
        if line[:1] == b":":
            return  # a comment: keep-alive
        name, colon, value = line.partition(b":")
        if colon and value[:1] == b" ":
            value = value[1:]
        if name == b"data":
            if self._skipping:
                return
            size = self._data_size + len(value) + (1 if self._data else 0)
            if size > self._max:
                self._too_large(size, out)
                return
            self._data.append(value)
            self._data_size = size
        elif name == b"id":
            if b"\0" not in value:
                self.last_event_id = value.decode("utf-8", "replace")
        elif name == b"retry":
            if value.isdigit():
                self.retry = int(value)
        elif name == b"event":
            self._event = value.decode("utf-8", "replace")

    def _too_large(self, size: int, out: list[SseEvent | EventTooLarge]) -> None:
        if not self._skipping:
            out.append(EventTooLarge(size, self._max))
        self._skipping = True
        self._data = []
        self._data_size = 0
