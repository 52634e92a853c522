"""The connection's lifecycle table (connection/_states.py): every transition, every forbidden one."""

from __future__ import annotations

import itertools

import pytest

from mcp_notebook.connection._states import (
    EVENTS,
    STATES,
    TRANSITIONS,
    ConnectionBug,
    ForbiddenTransition,
    Lifecycle,
)

EXPECTED = {
    ("connecting", "channel_open"): "negotiating",
    ("connecting", "give_up"): "closed",
    ("connecting", "close"): "closing",
    ("negotiating", "negotiated"): "ready",
    ("negotiating", "lost"): "reconnecting",
    ("negotiating", "give_up"): "closed",
    ("negotiating", "close"): "closing",
    ("ready", "lost"): "reconnecting",
    ("ready", "renew"): "negotiating",
    ("ready", "give_up"): "closed",
    ("ready", "close"): "closing",
    ("reconnecting", "channel_open"): "negotiating",
    ("reconnecting", "lost"): "reconnecting",
    ("reconnecting", "give_up"): "closed",
    ("reconnecting", "close"): "closing",
    ("closing", "finished"): "closed",
    ("closing", "close"): "closing",
    ("closing", "channel_open"): "closing",
    ("closing", "lost"): "closing",
    ("closed", "close"): "closed",
    ("closed", "give_up"): "closed",
    ("closed", "lost"): "closed",
}


def at(state: str) -> Lifecycle:
    machine = Lifecycle()
    machine.state = state  # type: ignore[assignment]
    return machine


@pytest.mark.parametrize(("state", "event"), list(itertools.product(STATES, EVENTS)))
def test_every_pair_of_state_and_event(state: str, event: str) -> None:
    machine = at(state)
    expected = EXPECTED.get((state, event))
    if expected is None:
        with pytest.raises(ForbiddenTransition, match=f"{event!r} cannot happen while {state!r}"):
            machine.apply(event)  # type: ignore[arg-type]
        assert machine.state == state, "a refused event leaves the state alone"
    else:
        assert machine.apply(event) == expected  # type: ignore[arg-type]
        assert machine.state == expected


def test_the_table_is_exactly_the_expected_one() -> None:
    table = {(s, e): target for s, row in TRANSITIONS.items() for e, target in row.items()}
    assert table == EXPECTED


def test_nothing_leaves_closed() -> None:
    assert set(TRANSITIONS["closed"].values()) == {"closed"}


def test_a_life_with_a_crash_a_session_renewal_and_a_close() -> None:
    machine = Lifecycle()
    assert not machine.ever_ready
    steps = [
        "channel_open",
        "negotiated",
        "lost",
        "channel_open",
        "negotiated",
        "renew",
        "negotiated",
        "close",
        "finished",
    ]
    states = [machine.apply(step) for step in steps]  # type: ignore[arg-type]
    assert states == [
        "negotiating",
        "ready",
        "reconnecting",
        "negotiating",
        "ready",
        "negotiating",
        "ready",
        "closing",
        "closed",
    ]
    assert machine.ever_ready


def test_only_closing_leads_to_closed_after_a_close() -> None:
    """A close never skips ``closing``: whatever the state, the shutdown is a state of its own."""
    for state in ("connecting", "negotiating", "ready", "reconnecting"):
        assert TRANSITIONS[state]["close"] == "closing"  # type: ignore[index]
    assert set(TRANSITIONS["closing"].values()) <= {"closing", "closed"}


def test_a_forbidden_transition_is_an_internal_error() -> None:
    assert issubclass(ForbiddenTransition, ConnectionBug)
    with pytest.raises(ConnectionBug):
        at("closing").apply("negotiated")
