"""Both frame parsers (orjson and the standard library fallback) accept and refuse the same frames.

Found by tests/test_fuzz.py: without orjson, a server's "\\ud800" escape became a lone surrogate
in a string the client later sends back (an input_required round's requestState), and sending it
raised UnicodeEncodeError in the caller instead of a clear error. NaN and Infinity, which are not
JSON, also got through. Plus the classification rules for ids, which decide what a frame can
touch: only an int or a string names a request.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcp_notebook.protocol import _jsonrpc as jsonrpc
from mcp_notebook.protocol._jsonrpc import FrameError, Notification, classify, decode


@pytest.fixture(params=["orjson", "stdlib"])
def parser(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "stdlib":
        monkeypatch.setattr(jsonrpc, "_orjson", None)
    elif jsonrpc._orjson is None:
        pytest.skip("orjson is not installed")
    return str(request.param)


def notification(value: str) -> bytes:
    return b'{"jsonrpc": "2.0", "method": "m", "params": {"v": ' + value.encode() + b"}}"


REFUSED = {
    "NaN": notification("NaN"),
    "Infinity": notification("Infinity"),
    "-Infinity": notification("-Infinity"),
    "lone high surrogate": notification('"\\ud800"'),
    "lone low surrogate": notification('"x\\udfff"'),
    "lone surrogate in a key": b'{"jsonrpc": "2.0", "method": "m", "params": {"\\udc00": 1}}',
    "raw lone surrogate in a str frame": '{"jsonrpc": "2.0", "method": "m", "params": {"v": "\ud800"}}',
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_frames_that_are_not_strict_json_are_refused_by_both_parsers(parser: str, case: str) -> None:
    with pytest.raises(FrameError):
        decode(REFUSED[case])


def test_an_escaped_surrogate_pair_is_one_character_for_both_parsers(parser: str) -> None:
    message = decode(notification('"\\ud83d\\ude00"'))
    assert isinstance(message, Notification)
    assert message.params == {"v": "\N{GRINNING FACE}"}


@pytest.mark.parametrize("bad_id", [[1], {"a": 1}, 1.0, True, None], ids=repr)
def test_a_request_with_an_id_that_is_not_an_int_or_string_is_malformed(bad_id: Any) -> None:
    with pytest.raises(FrameError):
        classify({"jsonrpc": "2.0", "id": bad_id, "method": "ping"})


@pytest.mark.parametrize("bad_id", [[1], {"a": 1}, 1.5, False], ids=repr)
def test_a_result_with_an_id_that_is_not_an_int_or_string_is_malformed(bad_id: Any) -> None:
    with pytest.raises(FrameError) as caught:
        classify({"jsonrpc": "2.0", "id": bad_id, "result": {}})
    assert caught.value.id is None


@pytest.mark.parametrize(
    "obj",
    [
        {"jsonrpc": "2.0", "id": 7, "result": [1]},
        {"jsonrpc": "2.0", "id": 7},
        {"jsonrpc": "1.0", "id": 7, "result": {}},
        {"id": 7, "result": {}},
    ],
    ids=["result not an object", "neither result nor error", "wrong version", "no version"],
)
def test_an_unusable_answer_to_one_of_our_ids_names_that_id(obj: dict[str, Any]) -> None:
    with pytest.raises(FrameError) as caught:
        classify(obj)
    assert caught.value.id == 7


@pytest.mark.parametrize(
    "obj",
    [
        {"jsonrpc": "1.0", "id": 7, "method": "ping"},
        {"jsonrpc": "2.0", "id": 7, "method": ["ping"]},
        {"jsonrpc": "2.0", "id": 7, "method": "ping", "params": "x"},
    ],
    ids=["wrong version", "method not a string", "params not an object"],
)
def test_an_unreadable_server_request_names_its_id_to_refuse_and_none_to_fail(obj: dict[str, Any]) -> None:
    with pytest.raises(FrameError) as caught:
        classify(obj)
    assert caught.value.id is None
    assert caught.value.request_id == 7


def test_an_unreadable_request_with_an_unusable_id_names_nothing() -> None:
    with pytest.raises(FrameError) as caught:
        classify({"jsonrpc": "2.0", "id": [7], "method": "ping", "params": "x"})
    assert caught.value.request_id is None
