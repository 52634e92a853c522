"""The demo server's task tools, in both task flavours, through our Client, over stdio and HTTP.

The bundled demo server (the official SDK, dual-era) runs ``build_report`` and ``confirm_export``
only as tasks and ``sum_numbers`` as one when asked: the 2025-11-25 core tasks on a legacy
(``initialize``) connection, the 2026-07-28 extension ``io.modelcontextprotocol/tasks`` on a modern
one. Every behaviour runs against four real servers: stdio in each era (the dual-era server, the
client pinned to the legacy era for the second) and Streamable HTTP in each era
(:func:`tests.http_peers.sdk_http`, one process per era for the module). Wire facts that the client
hides (the ``-32021`` refusal, ``execution.taskSupport``, the ``related-task`` stamp, status
notifications) are checked with raw requests on the client's connection.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest

from mcp_notebook import Client, McpError
from mcp_notebook.demo import build_server
from mcp_notebook.protocol._task_shapes import TASKS_EXTENSION
from tests.conftest import demo_server
from tests.http_peers import sdk_http
from tests.raises import raises_mcp

RELATED_TASK = "io.modelcontextprotocol/related-task"
WRITING = re.compile(r"^Writing section (\d+) of (\d+)\.\.\.$")
SAFETY = 20  # seconds: a bound on waits for what must happen soon, never an assertion on speed


@dataclass(frozen=True)
class Target:
    id: str
    era: str
    start: Callable[[], contextlib.AbstractContextManager[Any]]
    options: dict[str, Any] = field(default_factory=dict)
    target: Any = None  # argv or URL, once started

    @property
    def flavour(self) -> str:
        return "core" if self.era == "legacy" else "extension"

    def client(self, **options: Any) -> Client:
        return Client(self.target, **self.options, **options)


@contextlib.contextmanager
def _url(start: contextlib.AbstractContextManager[Any]) -> Iterator[str]:
    with start as server:
        yield server.url


TARGETS = [
    Target("stdio-modern", "modern", lambda: contextlib.nullcontext(demo_server())),
    Target("stdio-legacy", "legacy", lambda: contextlib.nullcontext(demo_server()), {"protocol": "legacy"}),
    Target("http-modern", "modern", lambda: _url(sdk_http("modern"))),
    Target("http-legacy", "legacy", lambda: _url(sdk_http("legacy"))),
]


@pytest.fixture(params=TARGETS, ids=[t.id for t in TARGETS], scope="module")
def peer(request: pytest.FixtureRequest) -> Iterator[Target]:
    """The server: an HTTP process started once for the module, or an argv (a process per client)."""
    target: Target = request.param
    with target.start() as started:
        yield Target(target.id, target.era, target.start, target.options, started)


pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaked_processes")]


class Answers:
    """An elicitation handler that records what it was asked and answers with ``reply``."""

    def __init__(self, reply: Any) -> None:
        self.reply = reply
        self.asked: list[dict[str, Any]] = []

    def __call__(self, params: dict[str, Any]) -> Any:
        self.asked.append(params)
        return self.reply


def _bare(result: dict[str, Any]) -> dict[str, Any]:
    """A modern result without the envelope every result carries (its type, the server's info)."""
    return {key: value for key, value in result.items() if key not in ("resultType", "_meta")}


async def _wait_for_message(handle: Any, pattern: re.Pattern[str]) -> re.Match[str]:
    """Refresh the handle until its status message matches (the server writes it as it works)."""
    with anyio.fail_after(SAFETY):
        while True:
            await handle.refresh()
            match = pattern.match(handle.status_message or "")
            if match:
                return match
            await anyio.sleep(0.05)


# --- what the server declares --------------------------------------------------------------------


async def test_the_server_offers_tasks_in_the_flavour_of_the_era(peer: Target) -> None:
    async with peer.client() as client:
        assert client.era == peer.era
        assert client.tasks_flavour == peer.flavour
        tools = {tool.name: tool for tool in await client.list_tools()}
        if peer.era == "legacy":
            assert client.server_capabilities["tasks"] == {
                "list": {},
                "cancel": {},
                "requests": {"tools": {"call": {}}},
            }
            assert TASKS_EXTENSION not in client.server_capabilities.get("extensions", {})
            support = {name: tool.raw.get("execution", {}).get("taskSupport") for name, tool in tools.items()}
            assert support["build_report"] == "required"
            assert support["confirm_export"] == "required"
            assert support["sum_numbers"] == "optional"
            assert support["echo"] is None  # absent: forbidden
        else:
            assert client.server_capabilities["extensions"][TASKS_EXTENSION] == {}
            assert "tasks" not in client.server_capabilities
            assert {"build_report", "confirm_export", "sum_numbers", "echo"} <= set(tools)


# --- build_report: started, followed, refreshed, cancelled ---------------------------------------------


async def test_call_tool_follows_a_task_to_its_result(peer: Target) -> None:
    async with peer.client() as client:
        result = await client.call_tool("build_report", {"topic": "Q1 sales", "sections": 3, "delay": 0.05})
        assert not result.is_error
        report = result.structured_content
        assert report["topic"] == "Q1 sales"
        assert [s["number"] for s in report["sections"]] == [1, 2, 3]
        assert [s["title"] for s in report["sections"]] == [
            "Overview",
            "The north region",
            "The south region",
        ]
        assert report["words"] == sum(len(s["text"].split()) for s in report["sections"])
        (handle,) = client.tasks
        assert (handle.tool, handle.status, handle.done) == ("build_report", "completed", True)


async def test_start_tool_returns_working_and_refresh_shows_the_status_message(peer: Target) -> None:
    async with peer.client() as client:
        handle = await client.start_tool("build_report", {"topic": "slow", "sections": 20, "delay": 0.3})
        assert handle.status == "working"
        assert not handle.done
        assert handle.poll_interval == 0.25
        assert handle.ttl == 600.0
        match = await _wait_for_message(handle, WRITING)
        assert match.group(2) == "20"
        assert 1 <= int(match.group(1)) <= 20
        assert handle.status == "working"
        assert await handle.cancel()


async def test_result_waits_for_the_end(peer: Target) -> None:
    async with peer.client() as client:
        handle = await client.start_tool("build_report", {"topic": "waiting", "sections": 4, "delay": 0.1})
        result = await handle.result()
        assert handle.status == "completed"
        assert handle.status_message == "Done."
        assert len(result.structured_content["sections"]) == 4
        assert result.structured_content["topic"] == "waiting"


async def test_cancel_ends_the_task_cancelled_and_the_server_agrees(peer: Target) -> None:
    async with peer.client() as client:
        handle = await client.start_tool("build_report", {"topic": "never", "sections": 20, "delay": 0.5})
        await _wait_for_message(handle, WRITING)
        assert await handle.cancel()
        assert handle.status == "cancelled"
        with pytest.raises(McpError) as raised:
            await handle.result()
        assert raised.value.kind == "cancelled"
        # A later tasks/get, straight on the wire, agrees; and the task stays cancelled.
        raw = await client.connection.request("tasks/get", {"taskId": handle.task_id})
        assert raw["status"] == "cancelled"
        assert raw["statusMessage"] == "Cancelled at the client's request."
        if peer.era == "legacy":
            with raises_mcp("server") as again:
                await client.connection.request("tasks/cancel", {"taskId": handle.task_id})
            assert again.value.code == -32602
            assert "terminal status: cancelled" in again.value.message
        else:
            acknowledged = await client.connection.request("tasks/cancel", {"taskId": handle.task_id})
            assert _bare(acknowledged) == {}
        attached = await client.get_task(handle.task_id)
        assert attached.status == "cancelled"


async def test_a_tool_error_inside_a_task_reads_as_each_flavour_says(peer: Target) -> None:
    async with peer.client() as client:
        # An empty topic is refused by the tool's own argument check, inside the task.
        result = await client.call_tool("build_report", {"topic": ""}, validate=False)
        assert result.is_error
        assert "topic" in result.text
        (handle,) = client.tasks
        # 2025-11-25: a call whose result has isError ends "failed"; the extension: "completed".
        assert handle.status == ("failed" if peer.era == "legacy" else "completed")


async def test_an_unknown_task_id_is_invalid_params(peer: Target) -> None:
    async with peer.client() as client:
        with raises_mcp("server") as raised:
            await client.get_task("no-such-task")
        assert raised.value.code == -32602
        assert "Task not found" in raised.value.message


# --- confirm_export: a task that waits for the user ---------------------------------------------------


async def test_the_input_request_is_answered_by_the_elicitation_handler(peer: Target) -> None:
    answers = Answers({"confirm": True, "format": "json"})
    async with peer.client(elicitation=answers) as client:
        result = await client.call_tool("confirm_export", {"rows": 2})
        outcome = result.structured_content
        assert outcome["exported"] is True
        assert (outcome["rows"], outcome["format"]) == (2, "json")
        assert outcome["preview"].startswith("[")
        assert outcome["message"] == f"Exported 2 rows as JSON ({outcome['size']} bytes)."
        (asked,) = answers.asked
        assert asked["message"] == "Export 2 rows of sales data? Pick a format."
        schema = asked["requestedSchema"]
        assert schema["properties"]["confirm"]["type"] == "boolean"
        assert schema["properties"]["format"]["enum"] == ["csv", "json"]
        (handle,) = client.tasks
        assert handle.status == "completed"
        if peer.era == "legacy":  # the server's own request names the task it serves
            assert asked["_meta"][RELATED_TASK] == {"taskId": handle.task_id}


async def test_a_declined_form_ends_the_task_without_exporting(peer: Target) -> None:
    answers = Answers(None)  # the handler's shorthand for "decline"
    async with peer.client(elicitation=answers) as client:
        handle = await client.start_tool("confirm_export", {"rows": 5})
        outcome = (await handle.result()).structured_content
        assert outcome == {
            "exported": False,
            "rows": 5,
            "format": None,
            "size": None,
            "preview": None,
            "message": "Not exported: the user declined the form.",
        }
        assert len(answers.asked) == 1
        assert handle.status == "completed"


async def test_a_task_waiting_for_input_a_client_cannot_give_says_so(peer: Target) -> None:
    async with peer.client() as client:  # no elicitation handler
        handle = await client.start_tool("confirm_export", {"rows": 1})
        # 2025-11-25: the server's tasks/result refuses (a server error); the extension: the client's
        # own answer to the input request fails (a protocol error), and the handle says so.
        kind = "server" if peer.era == "legacy" else "protocol"
        with raises_mcp(kind, match="needs input that this client could not give"):
            await handle.result(timeout=SAFETY)
        # The server still waits for an answer; cancelling ends it.
        raw = await client.connection.request("tasks/get", {"taskId": handle.task_id})
        assert raw["status"] == "input_required"
        assert raw["statusMessage"] == "Export 1 rows of sales data? Pick a format."
        if peer.era == "modern":
            (request,) = raw["inputRequests"].values()
            assert request["method"] == "elicitation/create"
            assert request["params"]["mode"] == "form"
        await client.connection.request("tasks/cancel", {"taskId": handle.task_id})
        raw = await client.connection.request("tasks/get", {"taskId": handle.task_id})
        assert raw["status"] == "cancelled"


# --- the other tools --------------------------------------------------------------------------------


async def test_an_ordinary_tool_is_unaffected(peer: Target) -> None:
    async with peer.client() as client:
        assert (await client.call_tool("echo", {"text": "plain"})).text == "plain"
        assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {"result": 3.0}
        assert client.tasks == []
        if peer.era == "legacy":  # no taskSupport: forbidden, refused before anything is sent
            with pytest.raises(McpError) as raised:
                await client.start_tool("echo", {"text": "as a task"})
            assert raised.value.kind == "invalid"
        else:  # the extension's server decides: it runs an ordinary tool at once
            first = await client.start_tool("echo", {"text": "as a task"})
            second = await client.start_tool("echo", {"text": "again"})
            assert first.done
            assert second.done
            assert (await first.result()).text == "as a task"
            assert (await second.result()).text == "again"
            assert client.tasks == []  # no task was made on the server


async def test_an_optional_task_tool_runs_inline_unless_asked(peer: Target) -> None:
    async with peer.client() as client:
        inline = await client.call_tool("sum_numbers", {"numbers": [1, 2, 3.5]})
        assert inline.structured_content == {"result": 6.5}
        assert client.tasks == []
        as_task = await client.call_tool("sum_numbers", {"numbers": [2, 2]}, task=True)
        assert as_task.structured_content == {"result": 4.0}
        (handle,) = client.tasks
        assert (handle.tool, handle.status) == ("sum_numbers", "completed")


# --- era-specific wire facts ------------------------------------------------------------------------


async def test_legacy_list_tasks_lists_them(peer: Target) -> None:
    async with peer.client() as client:
        if peer.era == "modern":
            with pytest.raises(McpError) as raised:
                await client.list_tasks()
            assert raised.value.kind == "invalid"
            return
        running = await client.start_tool("build_report", {"topic": "listed", "sections": 20, "delay": 0.5})
        await client.call_tool("build_report", {"topic": "done", "sections": 1, "delay": 0})
        finished = client.tasks[-1]
        listed = {handle.task_id: handle for handle in await client.list_tasks()}
        # The HTTP server is shared by the module: other tests' tasks may be listed too.
        assert listed[running.task_id].status == "working"
        assert listed[finished.task_id].status == "completed"
        await running.cancel()


async def test_a_required_task_tool_called_plainly_is_refused(peer: Target) -> None:
    async with peer.client() as client:
        arguments = {"name": "build_report", "arguments": {"topic": "plain"}}
        if peer.era == "modern":
            with raises_mcp("server") as raised:
                await client.connection.request(
                    "tools/call", arguments, without_extensions=(TASKS_EXTENSION,)
                )
            assert raised.value.code == -32021
            assert TASKS_EXTENSION in raised.value.data["requiredCapabilities"]["extensions"]
            # An optional task tool runs inline for a request that does not declare the extension.
            inline = await client.connection.request(
                "tools/call",
                {"name": "sum_numbers", "arguments": {"numbers": [1]}},
                without_extensions=(TASKS_EXTENSION,),
            )
            assert inline["structuredContent"] == {"result": 1.0}
            assert "taskId" not in inline
        else:
            answer = await client.connection.request("tools/call", arguments)
            assert answer["isError"] is True
            assert "requires task augmentation" in answer["content"][0]["text"]
            with raises_mcp("server") as raised:
                await client.connection.request(
                    "tools/call", {"name": "echo", "arguments": {"text": "x"}, "task": {}}
                )
            assert raised.value.code == -32601


LEGACY_TARGETS = [t for t in TARGETS if t.era == "legacy"]


# tasks/result and notifications/tasks/status are 2025-11-25 only: run against the legacy peers
# alone (no skip that every run reports).
@pytest.mark.parametrize(
    "peer", LEGACY_TARGETS, ids=[t.id for t in LEGACY_TARGETS], indirect=True, scope="module"
)
async def test_legacy_tasks_result_names_its_task_and_status_notifications_arrive(peer: Target) -> None:
    assert peer.era == "legacy"
    seen: list[dict[str, Any]] = []
    ended = anyio.Event()

    def on_notification(message: Any) -> None:
        if message.method == "notifications/tasks/status":
            seen.append(message.params)
            if message.params["status"] == "completed":
                ended.set()

    async with peer.client() as client:
        client.connection.on_notification(on_notification)
        created = await client.connection.request(
            "tools/call",
            {"name": "build_report", "arguments": {"topic": "raw", "sections": 2, "delay": 0.05}, "task": {}},
        )
        task = created["task"]
        assert (task["status"], task["ttl"], task["pollInterval"]) == ("working", 600000, 250)
        result = await client.connection.request("tasks/result", {"taskId": task["taskId"]})
        assert result["_meta"][RELATED_TASK] == {"taskId": task["taskId"]}
        assert result["structuredContent"]["topic"] == "raw"
        if peer.id.startswith("stdio"):  # over HTTP they ride a GET stream this client may not open
            with anyio.fail_after(SAFETY):
                await ended.wait()
            mine = [p for p in seen if p["taskId"] == task["taskId"]]
            assert "Writing section 1 of 2..." in [p.get("statusMessage") for p in mine]
            assert mine[-1]["status"] == "completed"


async def test_tasks_work_with_an_in_process_server() -> None:
    """The in-process transport runs the server's lifespan too, so its task group is there."""
    for protocol in ("auto", "legacy"):
        async with Client(build_server(), protocol=protocol) as client:
            result = await client.call_tool("build_report", {"topic": "memory", "sections": 2, "delay": 0})
            assert [s["number"] for s in result.structured_content["sections"]] == [1, 2]
            assert client.tasks[0].status == "completed"
