"""The resend rules as table cases (connection/_recovery.py): which failure a request ended with,
which one recovery that allows, and that each recovery is used at most once per request."""

from __future__ import annotations

import pytest

from mcp_notebook.connection._recovery import (
    RECOVERY,
    Failure,
    NotSent,
    Recovery,
    allowed_recovery,
    classify_failure,
    failed_again,
)
from mcp_notebook.protocol._errors import (
    CONNECTION_CLOSED,
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    UNSUPPORTED_PROTOCOL_VERSION,
    McpError,
)
from mcp_notebook.protocol._http_binding import session_expired_error
from mcp_notebook.protocol._negotiation import era_rules
from mcp_notebook.transports import NotDelivered

MODERN, LEGACY = era_rules("modern"), era_rules("legacy")
UNSUPPORTED = McpError("version", "unsupported", code=UNSUPPORTED_PROTOCOL_VERSION, data={"supported": []})
MISMATCH = McpError("server", "header mismatch", code=HEADER_MISMATCH)
EXPIRED = session_expired_error("http://127.0.0.1:1/mcp")
UNSENT = NotSent(McpError("transport", "not connected", code=CONNECTION_CLOSED))

CASES = [
    # (exception, era rules, method, failure)
    (UNSENT, MODERN, "tools/call", "not_delivered"),
    (UNSENT, LEGACY, "resources/read", "not_delivered"),
    (UNSUPPORTED, MODERN, "tools/call", "unsupported_version"),
    (UNSUPPORTED, LEGACY, "tools/call", None),  # a legacy server's -32022 is its answer
    (EXPIRED, LEGACY, "tools/list", "session_expired"),
    (EXPIRED, MODERN, "tools/list", None),  # no sessions in the modern era
    (MISMATCH, MODERN, "tools/call", "header_mismatch"),
    (MISMATCH, LEGACY, "tools/call", "header_mismatch"),
    (MISMATCH, MODERN, "resources/read", None),  # only tool calls carry Mcp-Param-* headers
    (McpError("transport", "the pipe broke", code=CONNECTION_CLOSED), MODERN, "tools/call", None),
    (McpError("timeout", "too slow"), LEGACY, "tools/call", None),
    (McpError("server", "boom", code=INTERNAL_ERROR), MODERN, "tools/call", None),
    # A transport's NotDelivered is turned into NotSent by the router; raw, it may have run.
    (NotDelivered("gone"), MODERN, "tools/call", None),
    (RuntimeError("a bug"), MODERN, "tools/call", None),
]


@pytest.mark.parametrize(("exc", "rules", "method", "failure"), CASES)
def test_classify_failure(exc: BaseException, rules: object, method: str, failure: Failure | None) -> None:
    assert classify_failure(exc, rules, method) == failure  # type: ignore[arg-type]


def test_every_failure_has_exactly_one_recovery_and_no_two_share_one() -> None:
    failures = {failure for *_, failure in CASES if failure is not None}
    assert set(RECOVERY) == failures
    assert len(set(RECOVERY.values())) == len(RECOVERY)
    assert dict(RECOVERY) == {
        "not_delivered": "resend_unsent",
        "unsupported_version": "rediscover",
        "session_expired": "renew_session",
        "header_mismatch": "relist_tools",
    }


@pytest.mark.parametrize("failure", list(RECOVERY))
def test_each_recovery_at_most_once_per_request(failure: Failure) -> None:
    used: frozenset[Recovery] = frozenset()
    first = allowed_recovery(failure, used, reconnect=True)
    assert first == RECOVERY[failure]
    used |= {first}
    assert allowed_recovery(failure, used, reconnect=True) is None
    # Another failure's recovery is still there: the budget is per recovery, not per request.
    for other in RECOVERY:
        if other != failure:
            assert allowed_recovery(other, used, reconnect=True) == RECOVERY[other]


def test_a_request_can_use_every_recovery_once_and_then_fails() -> None:
    used: frozenset[Recovery] = frozenset()
    for failure in RECOVERY:
        recovery = allowed_recovery(failure, used, reconnect=True)
        assert recovery is not None
        used |= {recovery}
    assert used == set(RECOVERY.values())
    assert all(allowed_recovery(failure, used, reconnect=True) is None for failure in RECOVERY)


def test_no_recovery_for_an_unrecoverable_failure() -> None:
    assert allowed_recovery(None, frozenset(), reconnect=True) is None


def test_an_unsent_message_waits_for_no_next_channel_when_the_connection_does_not_reconnect() -> None:
    assert allowed_recovery("not_delivered", frozenset(), reconnect=False) is None
    # The other recoveries happen on the same channel, reconnecting or not.
    for failure in ("unsupported_version", "session_expired", "header_mismatch"):
        assert allowed_recovery(failure, frozenset(), reconnect=False) == RECOVERY[failure]  # type: ignore[arg-type]


def test_a_failure_back_after_its_recovery_says_the_recovery_was_tried() -> None:
    again = failed_again(EXPIRED, "session_expired", frozenset({"renew_session"}))
    assert again.message == f"{EXPIRED.message}, again after the session was renewed; given up"
    assert (again.kind, again.code, again.data) == (EXPIRED.kind, EXPIRED.code, EXPIRED.data)
    # A first failure, another recovery used, or an unrecoverable one: the error as it came.
    assert failed_again(EXPIRED, "session_expired", frozenset()) is EXPIRED
    assert failed_again(EXPIRED, "session_expired", frozenset({"rediscover"})) is EXPIRED
    assert failed_again(MISMATCH, None, frozenset(RECOVERY.values())) is MISMATCH
