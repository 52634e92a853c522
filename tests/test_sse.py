"""The SSE decoder (protocol/_sse.py): the event-stream rules as tables, chunking as a property,
and the byte bound that keeps a hostile stream from being buffered whole."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcp_notebook.protocol._sse import EventTooLarge, SseDecoder, SseEvent

from .fuzz_traffic import budget


def decode_all(data: bytes, limit: int = 1 << 20) -> tuple[list[SseEvent | EventTooLarge], SseDecoder]:
    decoder = SseDecoder(limit)
    return decoder.feed(data), decoder


@pytest.mark.parametrize(
    ("stream", "expected"),
    [
        (b"data: hello\n\n", [SseEvent("", b"hello", None)]),
        (b"data:hello\n\n", [SseEvent("", b"hello", None)]),
        (b"data:  two spaces\n\n", [SseEvent("", b" two spaces", None)]),
        (b"data: a\ndata: b\n\n", [SseEvent("", b"a\nb", None)]),
        (b"event: endpoint\ndata: /messages?s=1\n\n", [SseEvent("endpoint", b"/messages?s=1", None)]),
        (b"id: 7\ndata: x\n\n", [SseEvent("", b"x", "7")]),
        (b"data: crlf\r\n\r\n", [SseEvent("", b"crlf", None)]),
        (b"data: cr\r\rdata: next\r\r", [SseEvent("", b"cr", None), SseEvent("", b"next", None)]),
        (b": keep-alive\n\ndata: x\n\n", [SseEvent("", b"x", None)]),
        (b"data\n\n", [SseEvent("", b"", None)]),  # a field with no colon: empty value, still data
        (b"id: 1\n\n", []),  # a priming event: nothing dispatched, but the id is kept
        (b"event: ping\n\n", []),  # no data, no event
        (b"data: unterminated", []),  # nothing until the blank line
        (b"unknown: field\ndata: x\n\n", [SseEvent("", b"x", None)]),
    ],
)
def test_event_stream_rules(stream: bytes, expected: list[SseEvent]) -> None:
    events, _ = decode_all(stream)
    assert events == expected


def test_priming_event_sets_the_last_event_id() -> None:
    _, decoder = decode_all(b"id: prime-1\ndata:\n\n")
    assert decoder.last_event_id == "prime-1"


@pytest.mark.parametrize(
    ("line", "expected"),
    [(b"retry: 500\n", 500), (b"retry: 5x\n", None), (b"retry: -1\n", None), (b"retry:\n", None)],
)
def test_retry_takes_digits_only(line: bytes, expected: int | None) -> None:
    _, decoder = decode_all(line)
    assert decoder.retry == expected


def test_an_id_with_nul_is_ignored() -> None:
    _, decoder = decode_all(b"id: good\n\nid: b\0ad\n\n")
    assert decoder.last_event_id == "good"


STREAM = (
    b": hello\r\nid: 1\r\ndata:\r\n\r\n"
    b'event: message\ndata: {"jsonrpc":"2.0"}\ndata: second\n\n'
    b"retry: 250\rdata: \xc3\xa9t\xc3\xa9\r\r"
    b"id: 9\ndata: last\n\n"
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_any_chunking_gives_the_same_events(cuts: list[int]) -> None:
    """The network splits a stream anywhere, a CRLF included; the events must not depend on where."""
    whole, reference = decode_all(STREAM)
    decoder = SseDecoder(1 << 20)
    events: list[SseEvent | EventTooLarge] = []
    bounds = [0, *sorted(cuts), len(STREAM)]
    for start, end in itertools.pairwise(bounds):
        events.extend(decoder.feed(STREAM[start:end]))
    assert (
        events
        == whole
        == [
            SseEvent("", b"", "1"),  # the priming event: empty data (the bindings skip it)
            SseEvent("message", b'{"jsonrpc":"2.0"}\nsecond', "1"),
            SseEvent("", "été".encode(), "1"),
            SseEvent("", b"last", "9"),
        ]
    )
    assert (decoder.last_event_id, decoder.retry) == (reference.last_event_id, reference.retry) == ("9", 250)


def test_an_endless_line_is_dropped_as_it_arrives_not_buffered() -> None:
    limit = 64 * 1024
    decoder = SseDecoder(limit)
    reports: list[SseEvent | EventTooLarge] = []
    reports += decoder.feed(b"data: ")
    for _ in range(200):  # 200 x 16 KiB = 3.2 MiB of one line
        reports += decoder.feed(b"x" * 16 * 1024)
        assert len(decoder._line) <= limit  # never more than the bound held
    reports += decoder.feed(b"\n\ndata: next\n\n")
    assert len(reports) == 2
    assert isinstance(reports[0], EventTooLarge)
    assert reports[0].limit == limit
    # What had arrived when the bound was passed ("data: " and four 16 KiB chunks), not the
    # last chunk alone (the line buffer used to be cleared before it was counted).
    assert reports[0].size == len(b"data: ") + 4 * 16 * 1024 > limit
    assert str(reports[0].size) in reports[0].reason
    assert reports[1] == SseEvent("", b"next", None)


def test_many_data_lines_over_the_bound_are_one_report_and_the_stream_goes_on() -> None:
    decoder = SseDecoder(1024)
    events = decoder.feed(b"".join(b"data: " + b"y" * 100 + b"\n" for _ in range(50)) + b"\n")
    events += decoder.feed(b"data: ok\n\n")
    assert [type(e) for e in events] == [EventTooLarge, SseEvent]
    assert events[1] == SseEvent("", b"ok", None)


def test_the_bound_counts_bytes_not_characters() -> None:
    text = "é" * 600  # 600 characters, 1,200 bytes
    events, _ = decode_all(b"data: " + text.encode() + b"\n\n", limit=1024)
    assert [type(e) for e in events] == [EventTooLarge]
    events, _ = decode_all(b"data: " + text.encode() + b"\n\n", limit=1200)
    assert events == [SseEvent("", text.encode(), None)]


# Every way the network can split one multi-line event (issue #36): a comment, an id, an event
# name and three data lines, with each of the three line ends. A decoder that stops pairing a CR
# at the end of one chunk with the LF that opens the next reads that LF as a blank line and cuts
# the message in two; the table and chunking tests above never put a CRLF between two data lines.
_FIELDS = (b": keep-alive", b"id: 42", b"event: message", b'data: {"a":', b"data:  1,", b'data: "b": 2}')
_WANTED = [SseEvent("message", b'{"a":\n 1,\n"b": 2}', "42"), SseEvent("", b"next", "42")]


def _multi_line_stream(end: bytes) -> bytes:
    return end.join(_FIELDS) + end + end + b"data: next" + end + end


def _feed_in_pieces(stream: bytes, cuts: tuple[int, ...]) -> list[SseEvent | EventTooLarge]:
    decoder = SseDecoder(1 << 20)
    events: list[SseEvent | EventTooLarge] = []
    for start, end in itertools.pairwise((0, *cuts, len(stream))):
        events += decoder.feed(stream[start:end])
    assert decoder.last_event_id == "42"
    return events


@pytest.mark.parametrize("end", [b"\r\n", b"\r", b"\n"], ids=["CRLF", "CR", "LF"])
def test_a_multi_line_event_split_at_every_pair_of_byte_boundaries(end: bytes) -> None:
    stream = _multi_line_stream(end)
    wrong = {
        cuts: events
        for cuts in itertools.combinations(range(len(stream) + 1), 2)
        if (events := _feed_in_pieces(stream, cuts)) != _WANTED
    }
    assert not wrong, f"{len(wrong)} splits decode wrongly, e.g. {next(iter(wrong.items()))}"


@pytest.mark.parametrize("end", [b"\r\n", b"\r", b"\n"], ids=["CRLF", "CR", "LF"])
def test_a_multi_line_event_fed_one_byte_at_a_time(end: bytes) -> None:
    stream = _multi_line_stream(end)
    assert _feed_in_pieces(stream, tuple(range(1, len(stream)))) == _WANTED


# The same as a property: any events, each line ended by any of the three line ends, cut anywhere.
_text = st.text(st.characters(blacklist_characters="\r\n\0", blacklist_categories=("Cs",)), max_size=8)
_line_ends = st.sampled_from([b"\r\n", b"\r", b"\n"])


@st.composite
def _events(draw: st.DrawFn) -> tuple[bytes, list[SseEvent]]:
    """A stream of events written with random line ends, and the events it must decode to."""
    stream = b""
    wanted: list[SseEvent] = []
    last_id: str | None = None
    for _ in range(draw(st.integers(1, 4))):
        lines: list[bytes] = []
        if draw(st.booleans()):
            lines.append(b":" + draw(_text).encode())
        if draw(st.booleans()):
            last_id = draw(_text)
            lines.append(b"id: " + last_id.encode())
        name = draw(_text.filter(lambda t: not t.startswith(" ")))
        lines.append(b"event: " + name.encode())
        data = draw(st.lists(_text.filter(lambda t: not t.startswith(" ")), min_size=1, max_size=4))
        lines += [b"data: " + d.encode() for d in data]
        for line in [*lines, b""]:
            end = draw(_line_ends)
            if not line and end == b"\n" and stream.endswith(b"\r"):
                end = b"\r"  # CR then LF is one line end (CRLF), not two: keep the blank line
            stream += line + end
        wanted.append(SseEvent(name, "\n".join(data).encode(), last_id))
    return stream, wanted


@pytest.mark.fuzz
def test_any_events_with_any_line_ends_cut_anywhere(pytestconfig: pytest.Config) -> None:
    @settings(
        max_examples=budget(pytestconfig),
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(written=_events(), data=st.data())
    def decodes_the_same(written: tuple[bytes, list[SseEvent]], data: st.DataObject) -> None:
        stream, wanted = written
        cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=16), label="cuts"))
        decoder = SseDecoder(1 << 20)
        events: list[SseEvent | EventTooLarge] = []
        for start, end in itertools.pairwise((0, *cuts, len(stream))):
            events += decoder.feed(stream[start:end])
        assert events == wanted

    decodes_the_same()
