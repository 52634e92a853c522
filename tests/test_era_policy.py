"""The era policy's one home (issue #27): every era-dependent decision is a named property of
``protocol._negotiation.EraRules`` (so of ``Negotiated``), and the connection and the HTTP binding
ask those properties instead of comparing era strings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcp_notebook.protocol._errors import ERROR_KINDS, FATAL_KINDS, REFUSAL_KINDS, UNRETRIED_KINDS
from mcp_notebook.protocol._negotiation import EraRules, Negotiated, era_rules

MODERN_ONLY = {
    "answers_input_required",
    "rediscovers_on_unsupported_version",
    "reconnects_by_discover",
    "pings_with_discover",
    "routes_tools_by_header",
    "lists_carry_ttl",
    "listens_for_changes",
}
LEGACY_ONLY = {
    "renews_expired_session",
    "reprobes_after_refusal",
    "sets_log_level_per_session",
    "resumes_broken_streams",
    "tells_cancellation",
    "announces_list_changes",
    "subscribes_per_resource",
}
RULES = sorted(name for name, value in vars(EraRules).items() if isinstance(value, property))


def test_every_rule_is_in_the_table() -> None:
    assert set(RULES) == MODERN_ONLY | LEGACY_ONLY
    assert not MODERN_ONLY & LEGACY_ONLY


@pytest.mark.parametrize("rule", RULES)
def test_each_rule_holds_in_exactly_its_era(rule: str) -> None:
    assert getattr(era_rules("modern"), rule) is (rule in MODERN_ONLY)
    assert getattr(era_rules("legacy"), rule) is (rule in LEGACY_ONLY)


@pytest.mark.parametrize("era", ["modern", "legacy"])
def test_a_negotiated_result_answers_by_its_era(era: str) -> None:
    negotiated = Negotiated(era, "v")  # type: ignore[arg-type]
    for rule in RULES:
        assert getattr(negotiated, rule) is getattr(era_rules(era), rule)  # type: ignore[arg-type]


def test_the_log_level_is_sent_once_only_to_a_legacy_server_with_logging() -> None:
    assert Negotiated("legacy", "2025-06-18", capabilities={"logging": {}}).sends_log_level
    assert not Negotiated("legacy", "2025-06-18").sends_log_level
    assert not Negotiated("modern", "v", capabilities={"logging": {}}).sends_log_level


def test_a_group_retries_a_servers_own_error_but_not_a_refusal_that_will_repeat() -> None:
    assert {"version", "protocol", "auth"} == UNRETRIED_KINDS
    assert UNRETRIED_KINDS < FATAL_KINDS


def test_the_kinds_that_end_a_handshake() -> None:
    assert {"version", "protocol", "server"} == REFUSAL_KINDS
    assert REFUSAL_KINDS | {"auth"} == FATAL_KINDS
    assert ERROR_KINDS >= FATAL_KINDS


ERA_BRANCH = re.compile(r"""(==|!=)\s*["'](legacy|modern)["']|["'](legacy|modern)["']\s*(==|!=)""")
KIND_TUPLE = re.compile(r"""["']version["']\s*,\s*["']protocol["']""")


def test_no_module_outside_protocol_compares_eras_or_spells_kinds() -> None:
    package = Path(__file__).resolve().parent.parent / "mcp_notebook"
    files = [p for p in sorted(package.rglob("*.py")) if not {"protocol", "demo"} & set(p.parts)]
    assert len(files) > 100  # the whole package, not an empty glob
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert not ERA_BRANCH.search(text), f"{path.name} compares an era string"
        assert not KIND_TUPLE.search(text), f"{path.name} spells out failure kinds"
