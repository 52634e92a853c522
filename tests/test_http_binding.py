"""The HTTP binding's rules as tables (protocol/_http_binding.py, the x-mcp-header split, and the
era evidence an HTTP status gives to negotiation), then the era memory against real servers."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import psutil
import pytest

from mcp_notebook import Client, McpError
from mcp_notebook.protocol._headers import InvalidToolHeaders, header_params, split_by_header_rules
from mcp_notebook.protocol._http_binding import (
    LegacySession,
    body_kind,
    classify_status,
    is_session_expiry,
    jsonrpc_error_in,
    refusal,
    refusal_means_sse,
    reopen_outcome,
    retry_delay,
    session_expired_error,
    stream_backoff,
)
from mcp_notebook.protocol._jsonrpc import ErrorResponse
from mcp_notebook.protocol._negotiation import Fail, Initialize, Pin, after_discover
from tests.http_peers import FaultPeer
from tests.http_peers import fault_server_fixture as fault_server_fixture

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    ("method", "status", "modern", "session", "meaning"),
    [
        ("tools/call", 200, False, "s1", "body"),
        ("tools/call", 404, False, "s1", "session-expired"),
        ("tools/call", 404, False, None, "refused"),  # no session sent: nothing to expire
        ("tools/call", 404, True, None, "refused"),  # modern: unknown method, never a session
        ("initialize", 404, False, "s1", "refused"),  # the handshake itself is never "expired"
        ("tools/call", 202, False, "s1", "no-answer"),
        ("tools/call", 204, True, None, "no-answer"),
        ("tools/call", 500, False, "s1", "refused"),
        ("tools/call", 429, True, None, "refused"),
    ],
)
def test_what_a_status_means(
    method: str, status: int, modern: bool, session: str | None, meaning: str
) -> None:
    assert classify_status(method, status, modern=modern, sent_session=session) == meaning


@pytest.mark.parametrize(
    ("method", "status", "body", "sse"),
    [
        ("initialize", 400, b"", True),
        ("initialize", 404, b"Not Found", True),
        ("initialize", 405, b"<html>no</html>", True),
        ("initialize", 400, b'{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"v"}}', False),
        ("initialize", 429, b"", False),  # busy: says nothing about the binding
        ("initialize", 500, b"", False),
        ("initialize", 503, b"", False),
        ("initialize", 401, b"", False),
        ("tools/call", 405, b"", False),  # only the handshake decides the binding
    ],
)
def test_only_a_plain_4xx_to_initialize_means_http_sse(
    method: str, status: int, body: bytes, sse: bool
) -> None:
    assert refusal_means_sse(method, status, body) is sse


@pytest.mark.parametrize(
    ("content_type", "kind"),
    [
        ("application/json", "json"),
        ("application/json; charset=utf-8", "json"),
        ("Text/Event-Stream", "sse"),
        ("text/html", None),
        (None, None),
    ],
)
def test_body_kind(content_type: str | None, kind: str | None) -> None:
    assert body_kind(content_type) == kind


@pytest.mark.parametrize(
    "body",
    [b"", b"not json", b"[]", b'{"error": "text"}', b'{"error": {"code": true}}', b"[" * 100_000],
)
def test_bodies_that_carry_no_jsonrpc_error(body: bytes) -> None:
    assert jsonrpc_error_in(body) is None


def test_a_jsonrpc_error_body_is_the_servers_answer_whatever_the_status() -> None:
    body = b'{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"bad"}}'
    answer = refusal(7, 400, "Bad Request", body, challenge=None, where="W", credentials=False)
    assert answer == ErrorResponse(7, {"code": -32602, "message": "bad"})


def test_401_says_what_to_configure_and_shows_no_secret() -> None:
    challenge = 'Bearer error="invalid_token", scope="files", realm="secret-realm-value"'
    plain = refusal(1, 401, "Unauthorized", b"", challenge=challenge, where="W", credentials=False)
    assert isinstance(plain, McpError)
    assert plain.kind == "auth"
    assert "auth=mcp_notebook.auth.OAuth()" in plain.message
    assert "secret-realm-value" not in plain.message
    signed = refusal(1, 401, "Unauthorized", b"", challenge=challenge, where="W", credentials=True)
    assert isinstance(signed, McpError)
    assert "refused our credentials" in signed.message


@pytest.mark.parametrize("status", [502, 503, 504])
def test_a_gateway_error_is_a_transport_error(status: int) -> None:
    answer = refusal(1, status, "Bad Gateway", b"", challenge=None, where="W", credentials=False)
    assert isinstance(answer, McpError)
    assert answer.kind == "transport"


@pytest.mark.parametrize(("status", "code"), [(404, -32601), (405, -32601), (429, -32600), (500, -32603)])
def test_other_statuses_become_errors_carrying_the_status(status: int, code: int) -> None:
    answer = refusal(1, status, "X", b"plain words\nmore", challenge=None, where="W", credentials=False)
    assert isinstance(answer, ErrorResponse)
    assert answer.error["code"] == code
    assert answer.error["data"] == {"httpStatus": status}
    assert "plain words" in answer.error["message"]


def test_a_session_ends_once_for_the_id_that_is_current() -> None:
    session = LegacySession()
    session.begin("s1")
    session.agreed({"protocolVersion": "2025-11-25"})
    assert session.headers() == {"Mcp-Session-Id": "s1", "MCP-Protocol-Version": "2025-11-25"}
    assert session.expire("s1") is True
    assert session.expire("s1") is False  # the 7 other requests that carried it renew nothing
    assert session.headers() == {"MCP-Protocol-Version": "2025-11-25"}
    session.begin("s2")
    assert session.expire("s1") is False
    assert session.id == "s2"
    assert is_session_expiry(session_expired_error("W"))


@pytest.mark.parametrize(
    ("retry_ms", "seconds"), [(500, 0.5), (0, 0.1), (1, 0.1), (30_000, 30.0), (10**12, 30.0)]
)
def test_the_servers_retry_is_clamped(retry_ms: int, seconds: float) -> None:
    assert retry_delay(retry_ms) == seconds


@pytest.mark.parametrize("failures", [1, 2, 3, 4])
def test_failures_back_off_from_the_retry_doubling_with_jitter(failures: int) -> None:
    step = 0.2 * 2**failures
    delays = [stream_backoff(0.2, failures) for _ in range(200)]
    assert all(step / 2 <= d <= step for d in delays)  # one failure: between one and two retries
    assert len(set(delays)) > 1  # jittered: clients of one restarted server do not return in step


def test_backing_off_never_waits_longer_than_the_retry_bound() -> None:
    assert stream_backoff(0.5, 1000) <= 30.0


@pytest.mark.parametrize(
    ("status", "outcome"),
    [
        (200, "open"),
        (500, "retry"),
        (503, "retry"),
        (429, "retry"),
        (408, "retry"),
        (302, "retry"),
        (400, "stop"),
        (401, "stop"),
        (404, "stop"),
        (405, "stop"),
    ],
)
def test_what_a_reopening_answer_means(status: int, outcome: str) -> None:
    assert reopen_outcome(status) == outcome


# --- era evidence: one function for stdio and HTTP ----------------------------------------------


@pytest.mark.parametrize(
    ("status", "decision"),
    [(400, Initialize), (404, Initialize), (405, Initialize), (429, Fail), (500, Fail), (503, Fail)],
)
def test_a_busy_or_broken_server_is_no_evidence_of_the_legacy_era(status: int, decision: type) -> None:
    error = {"code": -32600, "message": f"HTTP {status}", "data": {"httpStatus": status}}
    outcome = after_discover(Pin("auto", None), error=error)
    assert isinstance(outcome, decision)
    if isinstance(outcome, Fail):
        assert outcome.error.kind == "transport"


# --- x-mcp-header: one bad tool never breaks the list -------------------------------------------


@pytest.mark.parametrize(
    "schema",
    [
        {"properties": {"a": {"type": ["string", "null"], "x-mcp-header": "A"}}},
        {"properties": {"a": {"type": {"weird": 1}, "x-mcp-header": "A"}}},
        {"properties": {"a": {"type": "number", "x-mcp-header": "A"}}},
        {"properties": {"a": {"type": "string", "x-mcp-header": ["A"]}}},
        {"properties": {"a": {"type": "string", "x-mcp-header": "bad name"}}},
        {
            "properties": {
                "a": {"type": "string", "x-mcp-header": "A"},
                "b": {"type": "string", "x-mcp-header": "a"},
            }
        },
        {"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}},
    ],
)
def test_broken_declarations_are_invalid_never_a_crash(schema: dict) -> None:
    with pytest.raises(InvalidToolHeaders):
        header_params(schema)


def test_a_schema_nested_past_the_recursion_limit_is_invalid_not_a_crash() -> None:
    schema: dict = {"type": "string", "x-mcp-header": "Deep"}
    for _ in range(sys.getrecursionlimit() + 50):
        schema = {"properties": {"p": schema}}
    with pytest.raises(InvalidToolHeaders):
        header_params(schema)


def test_split_keeps_every_good_tool() -> None:
    tools = [
        {"name": "good", "inputSchema": {"properties": {"r": {"type": "string", "x-mcp-header": "R"}}}},
        {
            "name": "bad",
            "inputSchema": {"properties": {"r": {"type": ["string", "null"], "x-mcp-header": "R"}}},
        },
        {"name": "plain", "inputSchema": {"type": "object"}},
        "not an object",
    ]
    kept, dropped = split_by_header_rules(tools)
    assert [t if isinstance(t, str) else t["name"] for t in kept] == ["good", "plain", "not an object"]
    assert [name for name, _ in dropped] == ["bad"]


# --- the era an endpoint speaks: remembered per client, probed again after a refusal -------------


@pytest.mark.anyio
async def test_each_client_probes_the_era_itself(fault_server: FaultPeer) -> None:
    for _ in range(2):
        async with Client(fault_server.url, timeout=10) as client:
            assert client.era == "legacy"
    assert len(fault_server.requests(rpc_method="server/discover")) == 2, "nothing is remembered process-wide"


@pytest.mark.anyio
async def test_a_server_upgraded_to_modern_is_probed_again_after_it_refuses_the_handshake(
    tmp_path: Path,
) -> None:
    flag = tmp_path / "upgraded"
    echo = ROOT / "benchmarks" / "echo_server.py"
    script = (
        f'if [ -f "{flag}" ]; then exec "{sys.executable}" "{echo}" --era modern; '
        f'else exec "{sys.executable}" "{echo}" --era legacy; fi'
    )
    async with Client(["sh", "-c", script], timeout=10, backoff_initial=0.05) as client:
        assert client.era == "legacy"
        flag.touch()
        pid = client._transport.pid  # type: ignore[attr-defined]
        assert pid is not None
        psutil.Process(pid).kill()  # the server restarts, upgraded
        with anyio.fail_after(20):
            while client.era != "modern" or client.status != "ready":  # noqa: ASYNC110 - the engine's state
                await anyio.sleep(0.05)
        assert (await client.call_tool("echo", {"text": "after"})).text == "after"
