"""Table tests for the sans-IO protocol layer: every rule is a row with plain inputs and no I/O.

Covers ``mcp_notebook.protocol``: era negotiation (PROTOCOL.md §3.3), JSON-RPC framing, the oversized
frame id scan, the modern ``_meta`` envelope (§3.1, §3.2), error codes and ``McpError`` (§3.4), and the
version tables (§1).
"""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import pytest

from mcp_notebook.protocol import _envelope as envelope
from mcp_notebook.protocol import _jsonrpc as jsonrpc
from mcp_notebook.protocol import _versions as versions
from mcp_notebook.protocol._envelope import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
)
from mcp_notebook.protocol._errors import (
    ERROR_KINDS,
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    PARSE_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    McpError,
)
from mcp_notebook.protocol._jsonrpc import ErrorResponse, FrameError, Notification, Request, Response
from mcp_notebook.protocol._negotiation import (
    Adopt,
    DiscoverAgain,
    Fail,
    Initialize,
    Pin,
    after_discover,
    after_probe_ended_connection,
    check_initialize_result,
    first_step,
    parse_protocol_option,
)
from tests.raises import raises_mcp

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
UNKNOWN = "2099-01-01"

UI = "io.modelcontextprotocol/ui"
UI_SETTINGS = {"mimeTypes": ["text/html;profile=mcp-app"]}


# ---------------------------------------------------------------------------------------------------
# 1. Negotiation
# ---------------------------------------------------------------------------------------------------


def _summary(decision: Any) -> tuple[Any, ...]:
    """A decision as a comparable row: ("adopt", v) / ("discover", v) / ("initialize", v) / ("fail", kind)."""
    if isinstance(decision, Adopt):
        return ("adopt", decision.version)
    if isinstance(decision, DiscoverAgain):
        return ("discover", decision.version)
    if isinstance(decision, Initialize):
        return ("initialize", decision.version)
    if isinstance(decision, Fail):
        assert isinstance(decision.error, McpError)
        return ("fail", decision.error.kind)
    raise AssertionError(f"not a Decision: {decision!r}")


def _err(code: Any, data: Any = None, message: str = "nope") -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return error


def _unsupported(*supported: Any, requested: str = MODERN) -> dict[str, Any]:
    return _err(
        UNSUPPORTED_PROTOCOL_VERSION,
        {"supported": list(supported), "requested": requested},
        "Unsupported protocol version",
    )


def _discover_result(*supported: Any) -> dict[str, Any]:
    return {
        "supportedVersions": list(supported),
        "capabilities": {"tools": {}},
        "resultType": "complete",
        "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}},
    }


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        pytest.param("auto", Pin("auto", None), id="auto"),
        pytest.param("modern", Pin("modern", None), id="modern"),
        pytest.param("legacy", Pin("legacy", None), id="legacy"),
        pytest.param(MODERN, Pin("modern", MODERN), id="pinned-modern-version-is-modern-era"),
        pytest.param("2025-06-18", Pin("legacy", "2025-06-18"), id="pinned-handshake-version-is-legacy-era"),
        pytest.param("2024-11-05", Pin("legacy", "2024-11-05"), id="pinned-oldest-handshake-version"),
    ],
)
def test_parse_protocol_option(option: str, expected: Pin) -> None:
    assert parse_protocol_option(option) == expected


@pytest.mark.parametrize(
    "option",
    [
        pytest.param("", id="empty"),
        pytest.param("AUTO", id="case-sensitive"),
        pytest.param("draft", id="draft-is-not-spoken"),
        pytest.param("latest", id="latest-is-not-an-option"),
        pytest.param(UNKNOWN, id="unknown-future-version"),
        pytest.param("2025-11-24", id="near-miss-date"),
        pytest.param(" 2026-07-28", id="whitespace-not-stripped"),
    ],
)
def test_parse_protocol_option_rejects_invalid_value_naming_it(option: str) -> None:
    with pytest.raises(ValueError, match="protocol=") as info:
        parse_protocol_option(option)
    assert repr(option) in str(info.value)


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        pytest.param("auto", ("discover", MODERN), id="auto-probes-discover-at-latest-modern"),
        pytest.param("modern", ("discover", MODERN), id="modern-probes-discover-at-latest-modern"),
        pytest.param(MODERN, ("discover", MODERN), id="pinned-modern-probes-at-pinned"),
        pytest.param("legacy", ("initialize", LEGACY), id="legacy-initializes-offering-2025-11-25"),
        pytest.param("2025-06-18", ("initialize", "2025-06-18"), id="pinned-handshake-initializes-at-pinned"),
        pytest.param("2024-11-05", ("initialize", "2024-11-05"), id="pinned-oldest-initializes-at-pinned"),
    ],
)
def test_first_step(option: str, expected: tuple[str, str]) -> None:
    assert _summary(first_step(parse_protocol_option(option))) == expected


_LEGACY_ANSWER_CODES = [
    pytest.param(METHOD_NOT_FOUND, id="-32601-method-not-found"),
    pytest.param(INVALID_PARAMS, id="-32602-invalid-params"),
    pytest.param(INVALID_REQUEST, id="-32600-invalid-request"),
    pytest.param(-32000, id="-32000-implementation-defined"),
    pytest.param(INTERNAL_ERROR, id="-32603-internal-error"),
    pytest.param(PARSE_ERROR, id="-32700-parse-error"),
    pytest.param(-32002, id="-32002-legacy-resource-not-found"),
    pytest.param(-32001, id="-32001-request-timeout-code"),
    pytest.param(1, id="positive-code"),
    pytest.param(None, id="null-code"),
    pytest.param("-32022", id="string-code-is-not-32022"),
]


@pytest.mark.parametrize("code", _LEGACY_ANSWER_CODES)
def test_after_discover_any_other_error_falls_back_in_auto(code: Any) -> None:
    """The fallback is NOT keyed to one error code: every non-modern error means legacy."""
    decision = after_discover(Pin("auto", None), error=_err(code))
    assert _summary(decision) == ("initialize", LEGACY)


@pytest.mark.parametrize("code", _LEGACY_ANSWER_CODES)
def test_after_discover_any_other_error_fails_in_modern(code: Any) -> None:
    decision = after_discover(Pin("modern", None), error=_err(code))
    assert isinstance(decision, Fail)
    assert decision.error.kind != "version"


@pytest.mark.parametrize(
    ("option", "kwargs", "expected"),
    [
        # DiscoverResult
        pytest.param("auto", {"result": _discover_result(MODERN)}, ("adopt", MODERN), id="result-ours-adopt"),
        pytest.param(
            "modern", {"result": _discover_result(MODERN)}, ("adopt", MODERN), id="result-ours-adopt-modern"
        ),
        pytest.param(
            MODERN, {"result": _discover_result(MODERN)}, ("adopt", MODERN), id="result-ours-adopt-pinned"
        ),
        pytest.param(
            "auto",
            {"result": _discover_result(UNKNOWN, MODERN, LEGACY)},
            ("adopt", MODERN),
            id="result-ours-among-others-adopt",
        ),
        pytest.param(
            "auto",
            {"result": _discover_result(None, 7, {"v": 1}, MODERN)},
            ("adopt", MODERN),
            id="result-junk-entries-ignored-adopt",
        ),
        pytest.param(
            "auto",
            {"result": _discover_result(MODERN), "retried": True},
            ("adopt", MODERN),
            id="result-after-retry-adopt",
        ),
        pytest.param(
            "auto",
            {"result": _discover_result(UNKNOWN)},
            ("initialize", LEGACY),
            id="result-only-unknown-versions-initialize-auto",
        ),
        pytest.param(
            "auto",
            {"result": _discover_result(LEGACY, "2025-06-18")},
            ("initialize", LEGACY),
            id="result-only-handshake-versions-initialize-auto",
        ),
        pytest.param(
            "modern",
            {"result": _discover_result(UNKNOWN)},
            ("fail", "version"),
            id="result-only-unknown-versions-fail-modern",
        ),
        pytest.param(
            MODERN,
            {"result": _discover_result(UNKNOWN)},
            ("fail", "version"),
            id="result-pinned-version-not-listed-fail",
        ),
        pytest.param(
            "auto", {"result": {}}, ("initialize", LEGACY), id="empty-result-mock-initialize-never-adopt"
        ),
        pytest.param(
            "auto",
            {"result": {"capabilities": {}, "resultType": "complete"}},
            ("initialize", LEGACY),
            id="result-without-supportedVersions-initialize",
        ),
        pytest.param(
            "auto",
            {"result": {"supportedVersions": MODERN}},
            ("initialize", LEGACY),
            id="result-supportedVersions-string-not-list-initialize",
        ),
        pytest.param(
            MODERN,
            {"result": {"supportedVersions": MODERN}},
            ("fail", "version"),
            id="result-supportedVersions-string-not-list-pinned-fail",
        ),
        pytest.param("modern", {"result": {}}, ("fail", "version"), id="empty-result-mock-fail-modern"),
        # -32022 UnsupportedProtocolVersion
        pytest.param(
            "auto",
            {"error": _unsupported(UNKNOWN, MODERN)},
            ("discover", MODERN),
            id="32022-mutual-discover-again-never-fallback",
        ),
        pytest.param(
            "modern",
            {"error": _unsupported(MODERN)},
            ("discover", MODERN),
            id="32022-mutual-discover-again-modern",
        ),
        pytest.param(
            "auto",
            {"error": _unsupported(None, 3, MODERN)},
            ("discover", MODERN),
            id="32022-mutual-among-junk-discover-again",
        ),
        pytest.param(
            "auto",
            {"error": _unsupported(MODERN), "retried": True},
            ("fail", "version"),
            id="32022-after-retry-fail-version-auto",
        ),
        pytest.param(
            "modern",
            {"error": _unsupported(MODERN), "retried": True},
            ("fail", "version"),
            id="32022-after-retry-fail-version-modern",
        ),
        pytest.param(
            "auto",
            {"error": _unsupported(UNKNOWN), "retried": True},
            ("fail", "version"),
            id="32022-no-mutual-after-retry-fail-version-auto",
        ),
        pytest.param(
            "auto",
            {"error": _unsupported(UNKNOWN)},
            ("initialize", LEGACY),
            id="32022-no-mutual-initialize-auto",
        ),
        pytest.param(
            "auto",
            {"error": _unsupported()},
            ("initialize", LEGACY),
            id="32022-empty-supported-initialize-auto",
        ),
        pytest.param(
            "auto",
            {"error": _err(UNSUPPORTED_PROTOCOL_VERSION)},
            ("initialize", LEGACY),
            id="32022-without-data-initialize-auto",
        ),
        pytest.param(
            "auto",
            {"error": _err(UNSUPPORTED_PROTOCOL_VERSION, [MODERN])},
            ("initialize", LEGACY),
            id="32022-data-not-object-initialize-auto",
        ),
        pytest.param(
            "auto",
            {"error": _err(UNSUPPORTED_PROTOCOL_VERSION, {"supported": MODERN})},
            ("initialize", LEGACY),
            id="32022-supported-string-not-list-initialize-auto",
        ),
        pytest.param(
            "modern",
            {"error": _unsupported(UNKNOWN)},
            ("fail", "version"),
            id="32022-no-mutual-fail-modern",
        ),
        pytest.param(
            "modern",
            {"error": _err(UNSUPPORTED_PROTOCOL_VERSION)},
            ("fail", "version"),
            id="32022-without-data-fail-modern",
        ),
        pytest.param(
            MODERN,
            {"error": _unsupported(MODERN)},
            ("fail", "version"),
            id="32022-pinned-version-never-switches-fail",
        ),
        pytest.param(
            MODERN,
            {"error": _unsupported(UNKNOWN)},
            ("fail", "version"),
            id="32022-pinned-no-mutual-fail",
        ),
        # Timeout
        pytest.param("auto", {"timed_out": True}, ("initialize", LEGACY), id="timeout-initialize-auto"),
        pytest.param("modern", {"timed_out": True}, ("fail", "timeout"), id="timeout-fail-timeout-modern"),
        pytest.param(MODERN, {"timed_out": True}, ("fail", "timeout"), id="timeout-fail-timeout-pinned"),
    ],
)
def test_after_discover(option: str, kwargs: dict[str, Any], expected: tuple[str, str]) -> None:
    decision = after_discover(parse_protocol_option(option), **kwargs)
    assert _summary(decision) == expected


@pytest.mark.parametrize(
    "code",
    [
        pytest.param(MISSING_REQUIRED_CLIENT_CAPABILITY, id="-32021-missing-capability"),
        pytest.param(HEADER_MISMATCH, id="-32020-header-mismatch"),
    ],
)
@pytest.mark.parametrize("option", ["auto", "modern", MODERN])
@pytest.mark.parametrize("retried", [False, True], ids=["first", "retried"])
def test_after_discover_modern_refusal_fails_never_falls_back(code: int, option: str, retried: bool) -> None:
    error = _err(code, {"requiredCapabilities": {"sampling": {}}}, "refused")
    decision = after_discover(parse_protocol_option(option), error=error, retried=retried)
    assert isinstance(decision, Fail)
    assert decision.error.kind == "server"
    assert decision.error.code == code
    assert decision.error.data == {"requiredCapabilities": {"sampling": {}}}
    assert "refused" in decision.error.message


def test_after_discover_adopt_carries_the_discover_result() -> None:
    result = _discover_result(MODERN)
    decision = after_discover(Pin("auto", None), result=result)
    assert decision == Adopt(MODERN, result)


@pytest.mark.parametrize(
    ("option", "kwargs"),
    [
        pytest.param("modern", {"result": _discover_result(UNKNOWN, "x")}, id="result"),
        pytest.param("modern", {"error": _unsupported(UNKNOWN, "x")}, id="32022"),
        pytest.param("auto", {"error": _unsupported(UNKNOWN, "x"), "retried": True}, id="32022-retried"),
    ],
)
def test_after_discover_version_failure_names_server_versions(option: str, kwargs: dict[str, Any]) -> None:
    decision = after_discover(parse_protocol_option(option), **kwargs)
    assert isinstance(decision, Fail)
    error = decision.error
    assert error.kind == "version"
    assert error.code == UNSUPPORTED_PROTOCOL_VERSION
    assert UNKNOWN in error.message
    assert isinstance(error.data, dict)
    assert error.data["supported"] == [UNKNOWN, "x"]


def test_after_discover_without_an_outcome_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="after_discover"):
        after_discover(Pin("auto", None))


def test_after_discover_a_failing_http_server_is_named_with_what_it_answered() -> None:
    said = "HTTP 500 Internal Server Error from http://127.0.0.1:9/mcp: boom"
    decision = after_discover(
        Pin("auto", None), error={"code": -32603, "message": said, "data": {"httpStatus": 500}}
    )
    assert isinstance(decision, Fail)
    assert decision.error.kind == "transport"
    assert said in decision.error.message  # the status, its reason and the address (#37)


@pytest.mark.parametrize(
    ("option", "ended_before", "expected"),
    [
        ("auto", False, Pin("legacy", None)),  # an early mcp 1.x server: initialize, no probe
        ("auto", True, None),  # it ended the next connection too: failing, not old; never a loop
        ("modern", False, None),  # the user asked for modern: no fallback
        (MODERN, False, None),
    ],
)
def test_a_connection_ended_by_the_probe_is_tried_once_more_as_legacy(
    option: str, ended_before: bool, expected: Pin | None
) -> None:
    pin = parse_protocol_option(option)
    assert after_probe_ended_connection(pin, ended_before=ended_before) == expected


@pytest.mark.parametrize(
    ("option", "offered", "result", "expected"),
    [
        pytest.param("auto", LEGACY, {"protocolVersion": LEGACY, "capabilities": {}}, LEGACY, id="offered"),
        pytest.param(
            "legacy",
            LEGACY,
            {"protocolVersion": "2025-06-18", "capabilities": {}},
            "2025-06-18",
            id="server-choice-we-speak",
        ),
        pytest.param(
            "legacy",
            LEGACY,
            {"protocolVersion": "2024-11-05"},
            "2024-11-05",
            id="oldest-without-capabilities",
        ),
        pytest.param(
            "2025-06-18",
            "2025-06-18",
            {"protocolVersion": "2025-06-18", "capabilities": {}},
            "2025-06-18",
            id="pinned-match",
        ),
    ],
)
def test_check_initialize_result_accepts(
    option: str, offered: str, result: dict[str, Any], expected: str
) -> None:
    assert check_initialize_result(parse_protocol_option(option), offered, result) == expected


@pytest.mark.parametrize(
    ("option", "offered", "result", "kind"),
    [
        pytest.param("legacy", LEGACY, {"protocolVersion": UNKNOWN}, "version", id="version-we-dont-speak"),
        pytest.param(
            "legacy", LEGACY, {"protocolVersion": MODERN}, "version", id="modern-version-by-handshake"
        ),
        pytest.param(
            "2025-06-18", "2025-06-18", {"protocolVersion": LEGACY}, "version", id="pinned-version-mismatch"
        ),
        pytest.param("legacy", LEGACY, {"capabilities": {}}, "protocol", id="missing-protocolVersion"),
        pytest.param(
            "legacy", LEGACY, {"protocolVersion": 20251125}, "protocol", id="non-string-protocolVersion"
        ),
        pytest.param("legacy", LEGACY, {"protocolVersion": None}, "protocol", id="null-protocolVersion"),
        pytest.param(
            "legacy",
            LEGACY,
            {"protocolVersion": LEGACY, "capabilities": []},
            "protocol",
            id="capabilities-list",
        ),
    ],
)
def test_check_initialize_result_refuses(
    option: str, offered: str, result: dict[str, Any], kind: str
) -> None:
    with pytest.raises(McpError) as info:
        check_initialize_result(parse_protocol_option(option), offered, result)
    assert info.value.kind == kind


def test_check_initialize_result_unknown_version_names_what_we_speak() -> None:
    with raises_mcp("version") as info:
        check_initialize_result(Pin("legacy", None), LEGACY, {"protocolVersion": UNKNOWN})
    assert UNKNOWN in info.value.message
    assert info.value.data == {"supported": list(versions.HANDSHAKE_VERSIONS), "requested": LEGACY}


# ---------------------------------------------------------------------------------------------------
# 2. JSON-RPC classify / decode / encode
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        pytest.param(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"cursor": "c"}},
            Request(1, "tools/list", {"cursor": "c"}),
            id="request-int-id",
        ),
        pytest.param(
            {"jsonrpc": "2.0", "id": "a-1", "method": "ping"},
            Request("a-1", "ping", None),
            id="request-string-id-no-params",
        ),
        pytest.param(
            {"jsonrpc": "2.0", "id": 0, "method": "ping", "params": None},
            Request(0, "ping", None),
            id="request-id-zero-null-params",
        ),
        pytest.param(
            {"jsonrpc": "2.0", "id": -5, "method": "x", "params": {}},
            Request(-5, "x", {}),
            id="request-negative-id-empty-params",
        ),
        pytest.param(
            {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}},
            Notification("notifications/progress", {"progress": 1}),
            id="notification",
        ),
        pytest.param(
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            Notification("notifications/initialized", None),
            id="notification-no-params",
        ),
        pytest.param(
            {"jsonrpc": "2.0", "id": 3, "result": {"tools": []}},
            Response(3, {"tools": []}),
            id="response",
        ),
        pytest.param(
            {"jsonrpc": "2.0", "id": "x", "result": {}},
            Response("x", {}),
            id="response-string-id-empty-result",
        ),
        pytest.param(
            {"jsonrpc": "2.0", "id": 4, "error": {"code": -32601, "message": "no"}},
            ErrorResponse(4, {"code": -32601, "message": "no"}),
            id="error-response",
        ),
        pytest.param(
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse"}},
            ErrorResponse(None, {"code": -32700, "message": "parse"}),
            id="error-response-id-null",
        ),
        pytest.param(
            {"jsonrpc": "2.0", "id": True, "error": {"code": -32600, "message": "bad"}},
            ErrorResponse(None, {"code": -32600, "message": "bad"}),
            id="error-response-bool-id-is-unroutable",
        ),
        pytest.param(
            {"jsonrpc": "2.0", "id": 5, "error": "boom"},
            ErrorResponse(5, {"code": None, "message": "malformed error object"}),
            id="error-response-malformed-error-object",
        ),
        pytest.param(
            {"jsonrpc": "2.0", "id": 6, "error": {"code": 1, "message": "m"}, "result": {}},
            ErrorResponse(6, {"code": 1, "message": "m"}),
            id="error-wins-over-result",
        ),
    ],
)
@pytest.mark.usefixtures("json_library")
def test_classify(obj: dict[str, Any], expected: jsonrpc.Message) -> None:
    message = jsonrpc.classify(obj)
    assert type(message) is type(expected)
    assert message == expected


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param([{"jsonrpc": "2.0", "id": 1, "method": "ping"}], id="batch-rejected"),
        pytest.param([], id="empty-batch-rejected"),
        pytest.param("hello", id="string"),
        pytest.param(3, id="number"),
        pytest.param(None, id="null"),
        pytest.param({"id": 1, "method": "ping"}, id="missing-jsonrpc"),
        pytest.param({"jsonrpc": "1.0", "id": 1, "method": "ping"}, id="jsonrpc-1.0"),
        pytest.param({"jsonrpc": 2.0, "id": 1, "method": "ping"}, id="jsonrpc-number"),
        pytest.param({"jsonrpc": "2.0", "id": True, "method": "ping"}, id="request-bool-id-true"),
        pytest.param({"jsonrpc": "2.0", "id": False, "method": "ping"}, id="request-bool-id-false"),
        pytest.param({"jsonrpc": "2.0", "id": None, "method": "ping"}, id="request-null-id"),
        pytest.param({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, id="request-float-id"),
        pytest.param({"jsonrpc": "2.0", "id": [1], "method": "ping"}, id="request-list-id"),
        pytest.param({"jsonrpc": "2.0", "id": True, "result": {}}, id="response-bool-id"),
        pytest.param({"jsonrpc": "2.0", "id": None, "result": {}}, id="response-null-id"),
        pytest.param({"jsonrpc": "2.0", "id": 1, "method": 5}, id="method-not-string"),
        pytest.param({"jsonrpc": "2.0", "id": 1, "method": "x", "params": [1, 2]}, id="request-params-list"),
        pytest.param({"jsonrpc": "2.0", "method": "x", "params": "p"}, id="notification-params-string"),
        pytest.param({"jsonrpc": "2.0", "id": 1, "result": [1]}, id="result-list"),
        pytest.param({"jsonrpc": "2.0", "id": 1, "result": None}, id="result-null"),
        pytest.param({"jsonrpc": "2.0", "id": 1, "result": "ok"}, id="result-string"),
        pytest.param({"jsonrpc": "2.0", "id": 1}, id="response-without-result-or-error"),
        pytest.param({"jsonrpc": "2.0", "result": {}}, id="response-without-id"),
        pytest.param({"jsonrpc": "2.0"}, id="nothing"),
    ],
)
@pytest.mark.usefixtures("json_library")
def test_classify_rejects(obj: Any) -> None:
    with pytest.raises(FrameError):
        jsonrpc.classify(obj)


@pytest.mark.parametrize(
    "frame",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"   ", id="whitespace"),
        pytest.param(b"{", id="truncated"),
        pytest.param(b'{"jsonrpc":"2.0","id":1,"result":{}', id="truncated-response"),
        pytest.param(b"Server started on stdio", id="log-line-on-stdout"),
        pytest.param(b"{'jsonrpc': '2.0'}", id="python-repr"),
        pytest.param(b'{"jsonrpc":"2.0","id":1,"result":{}} x', id="trailing-garbage"),
        pytest.param(b"\xff\xfe\x00", id="non-utf8-invalid-start-byte"),
        pytest.param(
            b'{"jsonrpc":"2.0","method":"x","params":{"s":"caf\xe9"}}', id="non-utf8-latin1-in-string"
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","method":"x","params":{"s":"\xed\xa0\x80"}}', id="non-utf8-encoded-surrogate"
        ),
        pytest.param(
            '{"jsonrpc":"2.0","method":"x"}'.encode("utf-16"), id="non-utf8-utf16-with-bom-is-not-a-frame"
        ),
        pytest.param(
            '{"jsonrpc":"2.0","method":"x"}'.encode("utf-16-le"), id="non-utf8-utf16-le-is-not-a-frame"
        ),
        pytest.param(b"[" * 100_000, id="deeply-nested-json-is-a-frame-error-not-recursionerror"),
        pytest.param(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', id="batch"),
        pytest.param(b'{"jsonrpc":"2.0","id":true,"method":"ping"}', id="bool-id"),
        pytest.param(b'{"jsonrpc":"2.1","id":1,"method":"ping"}', id="wrong-version"),
        pytest.param("not json either", id="str-frame"),
    ],
)
@pytest.mark.usefixtures("json_library")
def test_decode_rejects(frame: bytes | str) -> None:
    with pytest.raises(FrameError) as info:
        jsonrpc.decode(frame)
    assert isinstance(info.value.reason, str)
    assert isinstance(info.value.head, bytes)


@pytest.mark.usefixtures("json_library")
def test_decode_keeps_the_head_of_a_non_json_frame_for_the_log() -> None:
    frame = b"garbage " * 100
    with pytest.raises(FrameError) as info:
        jsonrpc.decode(frame)
    assert info.value.head == frame[:200]


@pytest.mark.parametrize(
    ("frame", "expected"),
    [
        pytest.param(b'{"jsonrpc":"2.0","id":1,"method":"ping"}', Request(1, "ping", None), id="bytes"),
        pytest.param('{"jsonrpc":"2.0","id":1,"method":"ping"}', Request(1, "ping", None), id="str"),
        pytest.param(
            b' {"jsonrpc":"2.0","id":1,"method":"ping"}\r\n', Request(1, "ping", None), id="crlf-padded"
        ),
        pytest.param(
            '{"jsonrpc":"2.0","method":"m","params":{"t":"日本 ✓"}}'.encode(),
            Notification("m", {"t": "日本 ✓"}),
            id="utf8-non-ascii",
        ),
    ],
)
@pytest.mark.usefixtures("json_library")
def test_decode(frame: bytes | str, expected: jsonrpc.Message) -> None:
    assert jsonrpc.decode(frame) == expected


_ENCODE_CASES = [
    pytest.param({"jsonrpc": "2.0", "id": 1, "method": "ping"}, id="request"),
    pytest.param(
        {"jsonrpc": "2.0", "id": "s", "method": "tools/call", "params": {"arguments": {"q": "a\nb\r\nc"}}},
        id="newlines-in-strings",
    ),
    pytest.param(
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "héllo 世界 🚀\u2028"}},
        id="non-ascii",
    ),
    pytest.param(
        {"jsonrpc": "2.0", "id": 2, "result": {"text": "line1\nline2\n", "n": [1, 2]}}, id="response"
    ),
    pytest.param({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "x\ny"}}, id="error"),
    pytest.param({"jsonrpc": "2.0", "id": 9, "result": {"k\nkey": '\t\x00\x1f"\\'}}, id="control-chars"),
]


@pytest.mark.parametrize("message", _ENCODE_CASES)
@pytest.mark.usefixtures("json_library")
def test_encode_is_one_compact_utf8_line(message: dict[str, Any]) -> None:
    data = jsonrpc.encode(message)
    assert isinstance(data, bytes)
    assert b"\n" not in data
    assert b"\r" not in data
    assert json.loads(data.decode("utf-8")) == message


@pytest.mark.usefixtures("json_library")
def test_encode_keeps_non_ascii_compact() -> None:
    data = jsonrpc.encode({"jsonrpc": "2.0", "method": "m", "params": {"t": "日本🚀é"}})
    assert "日本🚀é".encode() in data
    assert b"\\u" not in data


@pytest.mark.parametrize("message", _ENCODE_CASES)
@pytest.mark.usefixtures("json_library")
def test_encode_decode_round_trip(message: dict[str, Any]) -> None:
    decoded = jsonrpc.decode(jsonrpc.encode(message))
    assert decoded == jsonrpc.classify(message)


def test_error_response_shape() -> None:
    assert jsonrpc.error_response(7, -32601, "no such method") == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32601, "message": "no such method"},
    }
    with_data = jsonrpc.error_response("r", -32602, "bad", {"field": "x"})
    assert with_data["error"]["data"] == {"field": "x"}
    assert jsonrpc.decode(jsonrpc.encode(with_data)) == ErrorResponse("r", with_data["error"])


# ---------------------------------------------------------------------------------------------------
# 3. probable_response_id
# ---------------------------------------------------------------------------------------------------

_HUGE = b"x" * 1_000_000


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        pytest.param(
            b'{"jsonrpc":"2.0","id":42,"result":{"content":[{"text":"' + _HUGE, 42, id="int-id-huge"
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","id":"req-7","result":{"text":"' + _HUGE, "req-7", id="string-id-huge"
        ),
        pytest.param(b'{"id":5,"jsonrpc":"2.0","result":{', 5, id="id-first"),
        pytest.param(b'{"jsonrpc":"2.0","id":0,"result":{', 0, id="id-zero"),
        pytest.param(b'{"jsonrpc":"2.0","id":-12,"result":{', -12, id="negative-id"),
        pytest.param(b' \n\t{ "jsonrpc" : "2.0" , "id" : 8 , "result":{', 8, id="whitespace-everywhere"),
        pytest.param(b'{"jsonrpc":"2.0","id":3}', 3, id="complete-small-frame"),
        pytest.param(b'{"jsonrpc":"2.0","id":"a\\"b","result":{', 'a"b', id="escaped-quote-in-string-id"),
        pytest.param(b'{"jsonrpc":"2.0","id":"\\u0041","result":{', "A", id="unicode-escape-in-string-id"),
        # Nested "id" before the top-level one is never taken.
        pytest.param(
            b'{"jsonrpc":"2.0","result":{"id":7,"text":"' + _HUGE, None, id="nested-result-id-not-taken"
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","result":{"id":7},"id":8}', None, id="nested-before-top-level-gives-up"
        ),
        pytest.param(b'{"jsonrpc":"2.0","error":{"id":7,"code":1', None, id="nested-error-id-not-taken"),
        pytest.param(
            b'{"jsonrpc":"2.0","method":"x","params":{"id":7', None, id="nested-params-id-not-taken"
        ),
        pytest.param(b'{"jsonrpc":"2.0","result":[{"id":7}', None, id="nested-array-id-not-taken"),
        pytest.param(b'{"jsonrpc":"2.0","x":[1,2],"id":7', None, id="array-before-id-gives-up"),
        # "id" inside strings.
        pytest.param(
            b'{"jsonrpc":"2.0","note":"say \\"id\\":5 here","id":9,"result":{',
            9,
            id="escaped-id-inside-string",
        ),
        pytest.param(
            b'{"jsonrpc":"2.0","note":"x\\",\\"id\\":5,', None, id="unterminated-string-with-fake-id"
        ),
        pytest.param(b'{"note":"C:\\\\","id":4,"result":{', 4, id="escaped-backslash-ends-string"),
        pytest.param(b'{"note":"{[","id":6,"result":{', 6, id="brackets-inside-string-ignored"),
        pytest.param(b'{"jsonrpc":"2.0","method":"id","id":3,', 3, id="id-as-string-value-then-real-id"),
        pytest.param(b'{"method":"id","params":{"id":3', None, id="id-as-string-value-then-nested-id"),
        pytest.param(b'{"jsonrpc":"2.0","idx":5,"result":{', None, id="similar-key-idx"),
        pytest.param(b'{"jsonrpc":"2.0","xid":5,"id":6,', 6, id="similar-key-xid-then-id"),
        pytest.param(b'{"id":{"x":1},"result":{', None, id="object-id"),
        # Invalid ids and non-frames.
        pytest.param(b'{"jsonrpc":"2.0","id":null,"error":{', None, id="null-id"),
        pytest.param(b'{"jsonrpc":"2.0","id":true,"result":{', None, id="bool-id"),
        pytest.param(b'{"jsonrpc":"2.0","id":"unterminated', None, id="truncated-string-id"),
        pytest.param(b'{"jsonrpc":"2.0","id":', None, id="truncated-before-id-value"),
        pytest.param(b'{"jsonrpc":"2.0","id":12', None, id="truncated-mid-number-is-no-guess"),
        pytest.param(b'{"jsonrpc":"2.0","id":1.5,"result":{', None, id="float-id-is-not-an-id"),
        pytest.param(b'{"jsonrpc":"2.0","id":1e3,"result":{', None, id="exponent-id-is-not-an-id"),
        pytest.param(b"", None, id="empty"),
        pytest.param(b'[{"jsonrpc":"2.0","id":1', None, id="batch"),
        pytest.param(b'garbage {"id":1', None, id="not-starting-with-object"),
        pytest.param(b'{"a":"b",' * 500, None, id="no-id-in-head"),
    ],
)
def test_probable_response_id(head: bytes, expected: jsonrpc.RequestId | None) -> None:
    found = jsonrpc.probable_response_id(head)
    assert found == expected
    assert type(found) is type(expected)


# ---------------------------------------------------------------------------------------------------
# 4. Envelope
# ---------------------------------------------------------------------------------------------------

CAPS = {"elicitation": {"form": {}}}
INFO = {"name": "mcp-notebook", "version": "0"}


def _stamp(params: dict[str, Any] | None, era: str, **kwargs: Any) -> dict[str, Any] | None:
    return envelope.stamp(params, era=era, version=MODERN, capabilities=CAPS, client_info=INFO, **kwargs)  # type: ignore[arg-type]


_MODERN_META = {META_PROTOCOL_VERSION: MODERN, META_CLIENT_CAPABILITIES: CAPS, META_CLIENT_INFO: INFO}


@pytest.mark.parametrize(
    ("params", "era", "kwargs", "expected"),
    [
        pytest.param(None, "modern", {}, {"_meta": _MODERN_META}, id="modern-none-params-gets-meta"),
        pytest.param({}, "modern", {}, {"_meta": _MODERN_META}, id="modern-empty-params-gets-meta"),
        pytest.param(
            {"name": "t", "arguments": {"a": 1}},
            "modern",
            {},
            {"name": "t", "arguments": {"a": 1}, "_meta": _MODERN_META},
            id="modern-three-required-keys",
        ),
        pytest.param(
            None,
            "modern",
            {"log_level": "debug"},
            {"_meta": {**_MODERN_META, META_LOG_LEVEL: "debug"}},
            id="modern-log-level",
        ),
        pytest.param(
            None,
            "modern",
            {"progress_token": 5, "log_level": "info"},
            {"_meta": {**_MODERN_META, META_LOG_LEVEL: "info", "progressToken": 5}},
            id="modern-progress-token-and-log-level",
        ),
        pytest.param(
            {"_meta": {"traceparent": "00-abc", "progressToken": "old"}},
            "modern",
            {"progress_token": "new"},
            {"_meta": {"traceparent": "00-abc", **_MODERN_META, "progressToken": "new"}},
            id="modern-existing-meta-kept",
        ),
        pytest.param(
            {"_meta": "junk"}, "modern", {}, {"_meta": _MODERN_META}, id="modern-non-object-meta-replaced"
        ),
        pytest.param(None, "legacy", {}, None, id="legacy-none-params-nothing-to-add-stays-none"),
        pytest.param({"a": 1}, "legacy", {}, {"a": 1}, id="legacy-adds-no-meta"),
        pytest.param({"a": 1}, "legacy", {"log_level": "debug"}, {"a": 1}, id="legacy-ignores-log-level"),
        pytest.param(
            None,
            "legacy",
            {"progress_token": 3},
            {"_meta": {"progressToken": 3}},
            id="legacy-progress-token-only",
        ),
        pytest.param(
            {"a": 1, "_meta": {"x/y": 1}},
            "legacy",
            {"progress_token": "p"},
            {"a": 1, "_meta": {"x/y": 1, "progressToken": "p"}},
            id="legacy-progress-token-keeps-existing-meta",
        ),
        pytest.param(
            None, "legacy", {"progress_token": 0}, {"_meta": {"progressToken": 0}}, id="progress-token-0"
        ),
    ],
)
def test_stamp(params: dict[str, Any] | None, era: str, kwargs: dict[str, Any], expected: Any) -> None:
    before = copy.deepcopy(params)
    stamped = _stamp(params, era, **kwargs)
    assert stamped == expected
    assert params == before, "stamp() changed the caller's params"


def test_stamp_never_mutates_nested_caller_meta() -> None:
    params = {"name": "t", "_meta": {"traceparent": "t"}}
    caller_meta = params["_meta"]
    stamped = _stamp(params, "modern", progress_token=1)
    assert stamped is not None
    assert stamped is not params
    assert stamped["_meta"] is not caller_meta
    assert caller_meta == {"traceparent": "t"}


@pytest.mark.parametrize(
    ("era", "kwargs", "expected"),
    [
        pytest.param("legacy", {}, {}, id="legacy-nothing-declared"),
        pytest.param("modern", {}, {}, id="modern-nothing-declared"),
        pytest.param(
            "legacy", {"roots": True}, {"roots": {"listChanged": False}}, id="legacy-roots-listChanged"
        ),
        pytest.param("modern", {"roots": True}, {"roots": {}}, id="modern-roots-no-listChanged"),
        pytest.param("modern", {"sampling": True}, {"sampling": {}}, id="sampling"),
        pytest.param(
            "modern", {"elicitation_modes": ["form"]}, {"elicitation": {"form": {}}}, id="elicitation-form"
        ),
        pytest.param(
            "legacy",
            {"elicitation_modes": ("form", "url")},
            {"elicitation": {"form": {}, "url": {}}},
            id="elicitation-form-and-url",
        ),
        pytest.param(
            "modern",
            {"elicitation_modes": iter(["url"])},
            {"elicitation": {"url": {}}},
            id="elicitation-iterator",
        ),
        pytest.param(
            "modern",
            {"sampling": True, "roots": True, "elicitation_modes": ["form", "url"]},
            {"sampling": {}, "roots": {}, "elicitation": {"form": {}, "url": {}}},
            id="modern-everything",
        ),
        pytest.param(
            "legacy",
            {"sampling": True, "roots": True, "elicitation_modes": ["form"]},
            {"sampling": {}, "roots": {"listChanged": False}, "elicitation": {"form": {}}},
            id="legacy-everything",
        ),
        pytest.param(
            "legacy",
            {"extensions": ["io.modelcontextprotocol/tasks"], "extension_settings": {UI: UI_SETTINGS}},
            {"extensions": {UI: UI_SETTINGS}},
            id="legacy-ui-extension-only",
        ),
        pytest.param(
            "modern",
            {"extensions": ["io.modelcontextprotocol/tasks"], "extension_settings": {UI: UI_SETTINGS}},
            {"extensions": {"io.modelcontextprotocol/tasks": {}, UI: UI_SETTINGS}},
            id="modern-tasks-and-ui-extensions",
        ),
        pytest.param(
            "modern",
            {"extensions": [UI], "extension_settings": {UI: UI_SETTINGS}},
            {"extensions": {UI: UI_SETTINGS}},
            id="settings-win",
        ),
    ],
)
def test_client_capabilities(era: str, kwargs: dict[str, Any], expected: dict[str, Any]) -> None:
    args: dict[str, Any] = {"sampling": False, "elicitation_modes": [], "roots": False, **kwargs}
    assert envelope.client_capabilities(era, **args) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        pytest.param({}, "complete", id="absent-is-complete"),
        pytest.param({"content": []}, "complete", id="absent-with-content-is-complete"),
        pytest.param({"resultType": "complete"}, "complete", id="complete"),
        pytest.param({"resultType": "input_required"}, "input_required", id="input-required"),
        pytest.param({"resultType": "task"}, "task", id="task-extension"),
    ],
)
def test_result_type(result: dict[str, Any], expected: str) -> None:
    assert envelope.result_type(result) == expected


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("streaming", id="unknown-string"),
        pytest.param("Complete", id="wrong-case"),
        pytest.param("", id="empty-string"),
        pytest.param(1, id="number"),
        pytest.param(["complete"], id="list-unhashable"),
        pytest.param({"type": "complete"}, id="object-unhashable"),
    ],
)
def test_result_type_unknown_is_protocol_error(value: Any) -> None:
    with pytest.raises(McpError) as info:
        envelope.result_type({"resultType": value})
    assert info.value.kind == "protocol"


# ---------------------------------------------------------------------------------------------------
# 5. McpError
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", sorted(ERROR_KINDS))
def test_mcperror_accepts_every_kind(kind: str) -> None:
    assert McpError(kind, "m").kind == kind  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "kind",
    [
        pytest.param("bogus", id="unknown"),
        pytest.param("", id="empty"),
        pytest.param("Server", id="wrong-case"),
    ],
)
def test_mcperror_rejects_unknown_kind(kind: str) -> None:
    with pytest.raises(ValueError, match="kind"):
        McpError(kind, "m")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("error", "kind", "code", "message", "data"),
    [
        pytest.param(
            {"code": -32601, "message": "Method not found"},
            "server",
            -32601,
            "ctx: Method not found",
            None,
            id="well-formed",
        ),
        pytest.param(
            {"code": -32022, "message": "Unsupported", "data": {"supported": [MODERN], "requested": "x"}},
            "version",
            -32022,
            "ctx: Unsupported",
            {"supported": [MODERN], "requested": "x"},
            id="32022-is-version",
        ),
        pytest.param(
            {"code": -32602, "data": [1]},
            "server",
            -32602,
            "ctx: server error without a message",
            [1],
            id="missing-message",
        ),
        pytest.param(
            {"code": -1, "message": 5},
            "server",
            -1,
            "ctx: server error without a message",
            None,
            id="non-string-message",
        ),
        pytest.param({"message": "m"}, "server", None, "ctx: m", None, id="missing-code"),
        pytest.param({"code": "-32601", "message": "m"}, "server", None, "ctx: m", None, id="string-code"),
        pytest.param({"code": 1.5, "message": "m"}, "server", None, "ctx: m", None, id="float-code"),
        pytest.param(
            {"code": True, "message": "m"}, "server", None, "ctx: m", None, id="bool-code-is-no-code"
        ),
        pytest.param({}, "server", None, "ctx: server error without a message", None, id="empty-object"),
        pytest.param(None, "protocol", None, None, None, id="null-error"),
        pytest.param("boom", "protocol", None, None, None, id="string-error"),
        pytest.param([{"code": 1}], "protocol", None, None, None, id="list-error"),
    ],
)
def test_mcperror_from_jsonrpc(
    error: Any, kind: str, code: int | None, message: str | None, data: Any
) -> None:
    exc = McpError.from_jsonrpc(error, context="ctx: ")
    assert exc.kind == kind
    assert exc.code == code
    assert type(exc.code) is type(code)
    if message is not None:
        assert exc.message == message
    else:
        assert exc.message.startswith("ctx: ")
    assert exc.data == data


@pytest.mark.parametrize(
    ("exc", "text"),
    [
        pytest.param(McpError("server", "boom", code=-32603), "boom (code -32603)", id="with-code"),
        pytest.param(McpError("version", "v", code=-32022), "v (code -32022)", id="version-code"),
        pytest.param(McpError("timeout", "slow"), "slow", id="without-code"),
        pytest.param(McpError("server", "zero", code=0), "zero (code 0)", id="code-zero"),
    ],
)
def test_mcperror_str_includes_code(exc: McpError, text: str) -> None:
    assert str(exc) == text
    assert repr(exc.code) in repr(exc)


@pytest.mark.parametrize(
    "exc",
    [
        pytest.param(McpError("timeout", "slow"), id="plain"),
        pytest.param(
            McpError("version", "no mutual", code=-32022, data={"supported": [MODERN], "requested": "x"}),
            id="code-and-data",
        ),
        pytest.param(
            McpError.from_jsonrpc({"code": -32601, "message": "nope"}, context="c: "), id="from-jsonrpc"
        ),
    ],
)
@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_mcperror_pickle_round_trip(exc: McpError, protocol: int) -> None:
    clone = pickle.loads(pickle.dumps(exc, protocol=protocol))
    assert type(clone) is type(exc)
    assert (clone.kind, clone.code, clone.message, clone.data) == (exc.kind, exc.code, exc.message, exc.data)
    assert str(clone) == str(exc)
    assert copy.copy(exc).kind == exc.kind


# ---------------------------------------------------------------------------------------------------
# 6. Versions
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "era"),
    [
        pytest.param("2026-07-28", "modern", id="2026-07-28-modern"),
        pytest.param("2025-11-25", "legacy", id="2025-11-25-legacy"),
        pytest.param("2025-06-18", "legacy", id="2025-06-18-legacy"),
        pytest.param("2025-03-26", "legacy", id="2025-03-26-legacy"),
        pytest.param("2024-11-05", "legacy", id="2024-11-05-legacy"),
        pytest.param("draft", None, id="draft-unknown"),
        pytest.param(UNKNOWN, None, id="future-unknown"),
        pytest.param("", None, id="empty-unknown"),
        pytest.param("2026-07-28 ", None, id="trailing-space-unknown"),
        pytest.param("auto", None, id="option-name-is-not-a-version"),
    ],
)
def test_era_of(version: str, era: str | None) -> None:
    assert versions.era_of(version) == era


def test_version_tables_are_consistent() -> None:
    assert versions.SUPPORTED_VERSIONS == versions.MODERN_VERSIONS + versions.HANDSHAKE_VERSIONS
    assert versions.LATEST_MODERN_VERSION == MODERN
    assert versions.LATEST_HANDSHAKE_VERSION == LEGACY
    assert not set(versions.MODERN_VERSIONS) & set(versions.HANDSHAKE_VERSIONS)
    assert all(versions.era_of(v) == "modern" for v in versions.MODERN_VERSIONS)
    assert all(versions.era_of(v) == "legacy" for v in versions.HANDSHAKE_VERSIONS)


@pytest.mark.parametrize(
    ("offered", "expected"),
    [
        pytest.param([MODERN], MODERN, id="ours"),
        pytest.param([UNKNOWN, MODERN, LEGACY], MODERN, id="ours-among-others"),
        pytest.param(
            [None, 7, 1.5, True, {"v": MODERN}, [MODERN], MODERN], MODERN, id="junk-entries-skipped"
        ),
        pytest.param([], None, id="empty-list"),
        pytest.param([UNKNOWN], None, id="unknown-only"),
        pytest.param([LEGACY, "2025-06-18"], None, id="handshake-versions-are-not-modern"),
        pytest.param([{"v": MODERN}, [MODERN]], None, id="unhashable-entries-only"),
        pytest.param(MODERN, None, id="string-not-list"),
        pytest.param((MODERN,), None, id="tuple-not-json-list"),
        pytest.param({MODERN: True}, None, id="object"),
        pytest.param(None, None, id="none"),
        pytest.param(20260728, None, id="number"),
    ],
)
def test_pick_mutual_modern(offered: Any, expected: str | None) -> None:
    assert versions.pick_mutual_modern(offered) == expected


@pytest.fixture(params=["orjson", "stdlib-json"])
def json_library(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every rule holds with the optional orjson fast path and with the standard library alone."""
    if request.param == "stdlib-json":
        monkeypatch.setattr(jsonrpc, "_orjson", None)
    return str(request.param)
