"""The pure rules of tasks (mcp_notebook.protocol._task_shapes and the capability envelope), by tables."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_notebook import McpError
from mcp_notebook.protocol._envelope import client_capabilities, without_extensions
from mcp_notebook.protocol._task_shapes import (
    MAX_POLL,
    MIN_POLL,
    TASKS_EXTENSION,
    TaskState,
    created_task,
    flavour_of,
    is_unknown_task,
    needs_tasks_extension,
    next_poll_delay,
    parse_task,
    run_as_task,
    task_support,
)
from tests.raises import raises_mcp

CORE_TASK = {
    "taskId": "t1",
    "status": "working",
    "ttl": 300000,
    "createdAt": "2026-12-02T01:39:01.336Z",
    "lastUpdatedAt": "2026-12-02T01:39:01.338Z",
    "pollInterval": 1000,
    "statusMessage": "Gathering sources...",
}
EXTENSION_TASK = {
    "taskId": "t2",
    "status": "completed",
    "createdAt": "2026-12-02T01:39:12+00:00",
    "lastUpdatedAt": "2026-12-02T01:39:13+00:00",
    "ttlMs": 900000,
    "pollIntervalMs": 100,
    "resultType": "complete",
    "result": {"content": [{"type": "text", "text": "3"}], "isError": False},
}


def test_a_core_task_reads_its_millisecond_fields_as_seconds() -> None:
    state = parse_task(CORE_TASK, "core")
    assert state == TaskState(
        task_id="t1",
        status="working",
        status_message="Gathering sources...",
        created_at="2026-12-02T01:39:01.336Z",
        last_updated_at="2026-12-02T01:39:01.338Z",
        ttl=300.0,
        poll_interval=1.0,
    )
    assert not state.terminal


def test_an_extension_task_carries_its_result_inline() -> None:
    state = parse_task(EXTENSION_TASK, "extension")
    assert state.ttl == 900.0
    assert state.poll_interval == 0.1
    assert state.result == EXTENSION_TASK["result"]
    assert state.terminal


def test_each_flavour_reads_only_its_own_field_names() -> None:
    # A core reading of an extension task finds no ttl or interval, and no inline outcome.
    state = parse_task(EXTENSION_TASK, "core")
    assert (state.ttl, state.poll_interval, state.result) == (None, None, None)
    assert parse_task(CORE_TASK, "extension").ttl is None


@pytest.mark.parametrize(
    ("raw", "what"),
    [
        ("a string", "not an object"),
        ({"status": "working"}, "without a taskId"),
        ({"taskId": "", "status": "working"}, "without a taskId"),
        ({"taskId": 7, "status": "working"}, "without a taskId"),
        ({"taskId": "t", "status": "sleeping"}, "unknown status"),
        ({"taskId": "t"}, "unknown status"),
    ],
)
def test_a_task_without_an_id_or_a_known_status_is_a_protocol_error(raw: Any, what: str) -> None:
    with pytest.raises(McpError) as info:
        parse_task(raw, "core")
    assert info.value.kind == "protocol"
    assert what in info.value.message


@pytest.mark.parametrize(
    ("field", "value"),
    [("ttl", -1), ("ttl", "forever"), ("ttl", True), ("pollInterval", None), ("statusMessage", 42)],
)
def test_ill_typed_optional_fields_are_dropped(field: str, value: Any) -> None:
    state = parse_task({**CORE_TASK, field: value}, "core")
    assert (
        getattr(
            state, {"ttl": "ttl", "pollInterval": "poll_interval", "statusMessage": "status_message"}[field]
        )
        is None
    )


def test_a_huge_status_message_is_cut() -> None:
    state = parse_task({**CORE_TASK, "statusMessage": "x" * 100_000}, "core")
    assert state.status_message is not None
    assert len(state.status_message) == 2000


def test_created_task_tells_a_task_from_a_tool_result() -> None:
    assert created_task({"task": CORE_TASK}, "core") == parse_task(CORE_TASK, "core")
    assert created_task({"content": []}, "core") is None
    flat = {**CORE_TASK, "resultType": "task"}
    assert created_task(flat, "extension") is not None
    assert created_task({"content": [], "resultType": "complete"}, "extension") is None
    with raises_mcp("protocol"):
        created_task({"task": "nope"}, "core")


@pytest.mark.parametrize(
    ("era", "capabilities", "flavour"),
    [
        ("legacy", {"tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}, "core"),
        ("legacy", {"tasks": {"list": {}}}, None),  # tasks, but not for tool calls
        ("legacy", {"tasks": {"requests": {"tools": {}}}}, None),
        ("legacy", {}, None),
        ("modern", {"extensions": {TASKS_EXTENSION: {}}}, "extension"),
        ("modern", {"extensions": {"io.modelcontextprotocol/ui": {}}}, None),
        ("modern", {"tasks": {"requests": {"tools": {"call": {}}}}}, None),  # the wrong era's field
        ("legacy", {"extensions": {TASKS_EXTENSION: {}}}, None),
        (None, {"extensions": {TASKS_EXTENSION: {}}}, None),
        ("modern", {"extensions": ["not", "a", "map"]}, None),
    ],
)
def test_the_flavour_follows_the_era_and_the_servers_capabilities(
    era: Any, capabilities: dict[str, Any], flavour: Any
) -> None:
    assert flavour_of(era, capabilities) == flavour


@pytest.mark.parametrize(
    ("tool", "support"),
    [
        ({"execution": {"taskSupport": "required"}}, "required"),
        ({"execution": {"taskSupport": "optional"}}, "optional"),
        ({"execution": {"taskSupport": "forbidden"}}, "forbidden"),
        ({"execution": {"taskSupport": "sometimes"}}, None),
        ({"execution": "required"}, None),
        ({}, None),
    ],
)
def test_task_support_is_read_from_execution(tool: dict[str, Any], support: Any) -> None:
    assert task_support(tool) == support


REQUIRED = {"execution": {"taskSupport": "required"}}
OPTIONAL = {"execution": {"taskSupport": "optional"}}
FORBIDDEN = {"execution": {"taskSupport": "forbidden"}}
SILENT: dict[str, Any] = {}


@pytest.mark.parametrize(
    ("flavour", "tool", "asked", "task_only", "expected"),
    [
        # 2025-11-25: the tool says; silence means forbidden.
        ("core", REQUIRED, None, False, True),
        ("core", REQUIRED, True, False, True),
        ("core", REQUIRED, False, False, "invalid"),
        ("core", OPTIONAL, None, False, False),
        ("core", OPTIONAL, True, False, True),
        ("core", OPTIONAL, False, False, False),
        ("core", FORBIDDEN, None, False, False),
        ("core", FORBIDDEN, True, False, "invalid"),
        ("core", SILENT, None, False, False),
        ("core", SILENT, True, False, "invalid"),
        ("core", None, None, False, False),  # the tool is not listed
        # The extension: the server decides; a refusal taught us the tool needs a task.
        ("extension", SILENT, None, False, False),
        ("extension", SILENT, True, False, True),
        ("extension", SILENT, None, True, True),
        ("extension", SILENT, False, True, "invalid"),
        ("extension", REQUIRED, None, False, True),
        ("extension", FORBIDDEN, True, False, "invalid"),
        ("extension", None, True, False, True),
        # No tasks at all.
        (None, REQUIRED, None, False, False),
        (None, SILENT, False, False, False),
        (None, SILENT, True, False, "invalid"),
    ],
)
def test_when_a_call_runs_as_a_task(
    flavour: Any, tool: Any, asked: Any, task_only: bool, expected: Any
) -> None:
    if expected == "invalid":
        with pytest.raises(McpError) as info:
            run_as_task(flavour, tool, "t", asked=asked, task_only=task_only)
        assert info.value.kind == "invalid"
        assert "'t'" in info.value.message
    else:
        assert run_as_task(flavour, tool, "t", asked=asked, task_only=task_only) is expected


@pytest.mark.parametrize(
    ("interval", "failures", "expected"),
    [
        (1.0, 0, 1.0),
        (0.0, 0, MIN_POLL),  # never a busy loop
        (3600.0, 0, MAX_POLL),  # never an hour without a look
        (None, 0, 1.0),
        (0.1, 1, 1.0),  # a failed poll backs off from at least half a second
        (0.1, 2, 2.0),
        (1.0, 50, MAX_POLL),
    ],
)
def test_the_poll_interval_is_the_servers_bounded_with_backoff(
    interval: Any, failures: int, expected: float
) -> None:
    state = TaskState("t", "working", poll_interval=interval)
    assert next_poll_delay(state, failures=failures) == pytest.approx(expected)


def test_a_refusal_for_want_of_the_extension_is_recognised() -> None:
    data = {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}}
    assert needs_tasks_extension(McpError("server", "x", code=-32021, data=data))
    assert needs_tasks_extension(McpError("server", "x", code=-32021))
    other = {"requiredCapabilities": {"extensions": {"io.modelcontextprotocol/ui": {}}}}
    assert not needs_tasks_extension(McpError("server", "x", code=-32021, data=other))
    assert not needs_tasks_extension(McpError("server", "x", code=-32602, data=data))


def test_an_unknown_task_is_a_server_invalid_params_error() -> None:
    assert is_unknown_task(McpError("server", "Task not found", code=-32602))
    assert not is_unknown_task(McpError("timeout", "slow", code=-32602))
    assert not is_unknown_task(McpError("server", "boom", code=-32603))


def test_modern_capabilities_declare_the_extension_and_a_call_can_leave_it_out() -> None:
    modern = client_capabilities(
        "modern", sampling=False, elicitation_modes=("form",), roots=False, extensions=(TASKS_EXTENSION,)
    )
    assert modern == {"elicitation": {"form": {}}, "extensions": {TASKS_EXTENSION: {}}}
    legacy = client_capabilities(
        "legacy", sampling=False, elicitation_modes=(), roots=False, extensions=(TASKS_EXTENSION,)
    )
    assert legacy == {}  # the handshake has no extensions field
    trimmed = without_extensions(modern, [TASKS_EXTENSION])
    assert trimmed == {"elicitation": {"form": {}}}
    assert modern["extensions"] == {TASKS_EXTENSION: {}}  # the original is untouched
    both = {"extensions": {TASKS_EXTENSION: {}, "io.modelcontextprotocol/ui": {}}}
    assert without_extensions(both, [TASKS_EXTENSION]) == {"extensions": {"io.modelcontextprotocol/ui": {}}}
    assert without_extensions(legacy, [TASKS_EXTENSION]) is legacy
