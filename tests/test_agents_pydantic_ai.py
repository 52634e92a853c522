"""pydantic-ai agents calling the demo server's tools through this client (issue #39).

Every test runs a real pydantic-ai ``Agent`` with its own offline double: a ``FunctionModel``
scripted to call the tool the test chooses with the arguments it chooses, which records every
request the agent sends it, so the test reads what the model was shown of each tool's result (its
``ToolReturnPart``: content and outcome) and sees the run finish. ``TestModel`` (which makes up
arguments from each schema) checks the toolset works with no script at all. The server is the
bundled demo as a real subprocess, over stdio and over HTTP, in both eras.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.tools import ToolDefinition

import mcp_notebook
from mcp_notebook import Client, ClientGroup
from mcp_notebook.agents import pydantic_ai_toolset
from mcp_notebook.notebook import Group, Session

from .conftest import demo_server, python_server
from .http_peers import sdk_http
from .raises import raises_mcp
from .widget_helpers import wait_for

#: Only stops a hang: every wait below is ended by an event (a progress, a dialog), not a delay.
HANG_GUARD = 30
SECRET = "s3cret-Token-4711"


# --- the scripted model -----------------------------------------------------------------------


class Script:
    """A FunctionModel's function: one tool call per turn (name, arguments), then a final text.

    Keeps every request the agent sent, and the tool definitions it was given.
    """

    def __init__(self, *calls: tuple[str, dict[str, Any]], final: str = "done") -> None:
        self.calls = list(calls)
        self.final = final
        self.requests: list[ModelRequest] = []
        self.tools: list[ToolDefinition] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        self.requests.append(last)
        self.tools = list(info.function_tools)
        turn = len(self.requests) - 1
        if turn < len(self.calls):
            name, arguments = self.calls[turn]
            return ModelResponse(parts=[ToolCallPart(name, arguments, tool_call_id=f"call-{turn}")])
        return ModelResponse(parts=[TextPart(self.final)])

    def agent(self, toolset: Any) -> Agent[None, str]:
        return Agent(FunctionModel(self), toolsets=[toolset])

    @property
    def returns(self) -> list[ToolReturnPart]:
        """What the model was shown of each call, in order."""
        return [p for r in self.requests for p in r.parts if isinstance(p, ToolReturnPart)]


# --- the servers ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    """One demo server over HTTP for the module: it serves both eras (protocol= picks one)."""
    with sdk_http("modern") as peer:
        yield peer.url


PEERS = ["stdio-auto", "stdio-legacy", "http-auto", "http-legacy"]


def _target(request: pytest.FixtureRequest, peer: str) -> tuple[Any, str]:
    transport, era = peer.split("-")
    target = request.getfixturevalue("http_url") if transport == "http" else demo_server()
    return target, era


def _era(protocol: str) -> str:
    return "legacy" if protocol == "legacy" else "modern"


@pytest.fixture(params=PEERS)
def session(request: pytest.FixtureRequest) -> Iterator[Session]:
    target, protocol = _target(request, request.param)
    opened = mcp_notebook.connect(
        target, protocol=protocol, show_progress=False, register=False, dialogs=False
    )
    try:
        assert opened.model.era == _era(protocol)
        yield opened
    finally:
        opened.close()


def _stdio_session(protocol: str = "auto", **options: Any) -> Session:
    return mcp_notebook.connect(
        demo_server(), protocol=protocol, show_progress=False, register=False, **options
    )


# --- the package imports no framework ---------------------------------------------------------


def test_importing_the_package_imports_no_pydantic_ai() -> None:
    code = "import sys, mcp_notebook.agents; print(sorted(m for m in sys.modules if 'pydantic_ai' in m))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"


# --- calls, results, history ------------------------------------------------------------------


def test_the_model_calls_with_its_arguments_and_reads_the_results(session: Session) -> None:
    script = Script(
        ("add", {"a": 2, "b": 40}),
        ("sales_records", {"region": "north", "limit": 2}),
        ("echo", {"text": "hello agent"}),
    )
    result = script.agent(pydantic_ai_toolset(session)).run_sync("add, list and echo")

    assert result.output == "done"
    add, sales, echo = script.returns
    assert (add.tool_name, add.outcome, add.content) == ("add", "success", {"result": 42.0})
    # structuredContent reaches the model as data, the rows as the tool's output schema says
    assert sales.outcome == "success"
    assert [row["region"] for row in sales.content["result"]] == ["north", "north"]
    assert set(sales.content["result"][0]) == {"date", "region", "product", "units", "price"}
    assert (echo.content, echo.outcome) == ("hello agent", "success")
    # each call is in the session's history, marked with the framework that made it
    calls = [(e["name"], e["arguments"], e["outcome"], e["via"]) for e in session.model.history]
    assert calls[-3:] == [
        ("add", {"a": 2, "b": 40}, "ok", "pydantic-ai"),
        ("sales_records", {"region": "north", "limit": 2}, "ok", "pydantic-ai"),
        ("echo", {"text": "hello agent"}, "ok", "pydantic-ai"),
    ]
    frame = session.history_frame()
    assert list(frame["via"].tail(3)) == ["pydantic-ai"] * 3


def test_a_session_serves_an_awaited_run_too(session: Session) -> None:
    # ``await agent.run(...)`` on a loop of the caller's: the calls run on the session's engine.
    script = Script(("add", {"a": 1, "b": 1}))

    async def run() -> str:
        return (await script.agent(pydantic_ai_toolset(session)).run("add")).output

    assert asyncio.run(run()) == "done"
    assert script.returns[0].content == {"result": 2.0}
    assert session.model.history[-1]["via"] == "pydantic-ai"


@pytest.mark.anyio
@pytest.mark.parametrize("peer", PEERS)
async def test_a_core_client_in_its_own_loop(request: pytest.FixtureRequest, peer: str) -> None:
    target, protocol = _target(request, peer)
    async with Client(target, protocol=protocol) as client:
        assert client.era == _era(protocol)
        script = Script(
            ("add", {"a": 0.5, "b": 2}), ("build_report", {"topic": "north", "sections": 2, "delay": 0})
        )
        result = await script.agent(pydantic_ai_toolset(client)).run("add, then a report")
    assert result.output == "done"
    add, report = script.returns
    assert add.content == {"result": 2.5}
    # a task-only tool, followed to its end by the client: the model reads the finished report
    assert (report.outcome, report.content["topic"], len(report.content["sections"])) == (
        "success",
        "north",
        2,
    )


def test_testmodel_calls_every_tool_it_is_given_and_ends() -> None:
    # TestModel makes up arguments from each schema: the toolset's schemas are usable as they are.
    session = _stdio_session()
    try:
        toolset = pydantic_ai_toolset(session, tools=["add", "echo", "sales_records"])
        result = Agent(TestModel(), toolsets=[toolset]).run_sync("anything")
        called = {e["name"] for e in session.model.history if e["via"] == "pydantic-ai"}
    finally:
        session.close()
    assert called == {"add", "echo", "sales_records"}
    assert '"add"' in result.output
    assert '"echo"' in result.output


def test_the_tool_definitions_the_model_is_given() -> None:
    session = _stdio_session()
    try:
        script, schemas = Script(), Script()
        toolset = pydantic_ai_toolset(session, tools=["add", "ask_user_name", "sales_records"])
        script.agent(toolset).run_sync("list")
        # a tool's output schema is pydantic-ai's return schema, sent where the agent asks for it
        schemas.agent(pydantic_ai_toolset(session, tools=["add"]).include_return_schemas()).run_sync("list")
        listed = {tool.name: tool for tool in session.list_tools()}
    finally:
        session.close()
    tools = {tool.name: tool for tool in script.tools}
    assert set(tools) == {"add", "ask_user_name", "sales_records"}  # tools= kept only these
    add = tools["add"]
    assert add.parameters_json_schema == listed["add"].input_schema
    assert add.description == listed["add"].description
    assert add.metadata is not None
    assert add.metadata["annotations"]["readOnlyHint"] is True
    assert add.metadata["mcp_name"] == "add"
    # a read-only tool runs beside others; one that may change things runs alone, in order
    assert (add.sequential, tools["ask_user_name"].sequential) == (False, True)
    assert toolset.id == session.name
    [with_schema] = schemas.tools  # (a model without a place for it reads it in the description)
    described = (with_schema.description or "").split("Return schema:")
    assert len(described) == 2
    assert json.loads(described[1]) == listed["add"].output_schema


# --- what the model is told when a call does not succeed --------------------------------------


def test_a_tool_error_reaches_the_model_and_the_run_goes_on(session: Session) -> None:
    script = Script(("fail", {"message": "the warehouse is closed"}), ("add", {"a": 1, "b": 2}))
    result = script.agent(pydantic_ai_toolset(session)).run_sync("try")
    assert result.output == "done"
    failed, added = script.returns
    assert failed.outcome == "failed"
    assert "the warehouse is closed" in failed.model_response_str()
    assert added.content == {"result": 3.0}  # the model went on after the error
    assert [e["outcome"] for e in session.model.history[-2:]] == ["tool_error", "ok"]


def test_tool_errors_retry_makes_it_a_retry_prompt_bounded_by_max_retries() -> None:
    session = _stdio_session()
    try:
        toolset = pydantic_ai_toolset(session, tool_errors="retry", max_retries=1)
        script = Script(("fail", {"message": "once"}), ("add", {"a": 1, "b": 1}))
        assert script.agent(toolset).run_sync("try").output == "done"
        assert [p.outcome for p in script.returns] == ["retried", "success"]
        assert "once" in script.returns[0].model_response_str()
        # failing more often than max_retries in a row ends the run, as pydantic-ai's own tools do
        again = Script(*[("fail", {"message": "again"})] * 3)
        with pytest.raises(UnexpectedModelBehavior, match="exceeded max retries"):
            again.agent(toolset).run_sync("try")
    finally:
        session.close()


def test_refused_arguments_are_told_to_the_model_which_calls_again(session: Session) -> None:
    script = Script(("add", {"a": "two", "b": 2}), ("add", {"a": 2, "b": 2}))
    result = script.agent(pydantic_ai_toolset(session)).run_sync("add")
    assert result.output == "done"
    refused, added = script.returns
    assert refused.outcome == "retried"
    assert "arguments.a must be of type 'number'" in refused.model_response_str()
    assert added.content == {"result": 4.0}
    # the client refused it before sending: no call reached the server
    assert [e["outcome"] for e in session.model.history[-2:]] == ["invalid", "ok"]


def test_a_call_past_its_deadline_is_a_failed_result() -> None:
    session = _stdio_session()
    try:
        script = Script(("slow_count", {"steps": 100, "delay": 0.5}), ("add", {"a": 1, "b": 1}))
        result = script.agent(pydantic_ai_toolset(session, timeout=1.0)).run_sync("count")
        entries = [e["outcome"] for e in session.model.history]
    finally:
        session.close()
    assert result.output == "done"
    timed_out, _ = script.returns
    assert timed_out.outcome == "failed"
    assert "ran out of time" in timed_out.model_response_str()
    assert entries == ["timeout", "ok"]


@pytest.mark.anyio
async def test_a_lost_connection_ends_the_run_with_the_clients_error() -> None:
    async with Client(demo_server()) as client:
        toolset = pydantic_ai_toolset(client)
    script = Script(("add", {"a": 1, "b": 1}))
    with raises_mcp("closed"):
        await script.agent(toolset).run("add")


# --- cancellation -----------------------------------------------------------------------------

SLOW = ("slow_count", {"steps": 100, "delay": 0.5})


def _no_late_progress(stats: Any) -> None:
    """The server stopped the cancelled call: over a later two-second call it sent no progress
    for it (a call still counting would send some every half second, dropped as unknown)."""
    assert stats.dropped_progress <= 1, f"the server kept counting: {stats.dropped_progress} progress dropped"


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_a_cancelled_run_cancels_the_call_on_the_server_session(protocol: str) -> None:
    session = _stdio_session(protocol)
    try:

        async def run_and_cancel() -> None:
            loop = asyncio.get_running_loop()
            tasks: list[asyncio.Task[Any]] = []
            # progress arrives on the session's engine thread once the server is counting
            toolset = pydantic_ai_toolset(
                session, progress=lambda *_: loop.call_soon_threadsafe(tasks[0].cancel)
            )
            tasks.append(asyncio.ensure_future(Script(SLOW).agent(toolset).run("count")))
            with anyio.fail_after(HANG_GUARD), pytest.raises(asyncio.CancelledError):
                await tasks[0]
            # wait for the call's end with the run's loop still open: leaving it would cancel
            # whatever the run left behind, and hide a call the run did not cancel
            await asyncio.to_thread(wait_for, lambda: session.model.history, HANG_GUARD, "the call's end")

        asyncio.run(run_and_cancel())
        assert session.client.stats.in_flight == 0
        entry = session.model.history[-1]
        assert (entry["name"], entry["outcome"], entry["via"]) == ("slow_count", "cancelled", "pydantic-ai")
        assert session.client.stats.cancellations == 1
        session.call_tool("slow_count", {"steps": 2, "delay": 1.0})
        _no_late_progress(session.client.stats)
    finally:
        session.close()


@pytest.mark.anyio
@pytest.mark.parametrize("peer", PEERS)
async def test_a_cancelled_run_cancels_the_call_on_the_server_client(
    request: pytest.FixtureRequest, peer: str
) -> None:
    target, protocol = _target(request, peer)
    async with Client(target, protocol=protocol) as client:
        with anyio.fail_after(HANG_GUARD), anyio.CancelScope() as scope:
            toolset = pydantic_ai_toolset(client, progress=lambda *_: scope.cancel())
            await Script(SLOW).agent(toolset).run("count")
        assert scope.cancelled_caught, "the run ended before it was cancelled"
        assert client.stats.in_flight == 0
        assert client.stats.outcomes.get("cancelled") == 1
        if peer.startswith("stdio"):  # one pipe: late progress would arrive and be counted
            await client.call_tool("slow_count", {"steps": 2, "delay": 1.0})
            assert client.stats.cancellations == 1
            _no_late_progress(client.stats)


# --- dialogs ----------------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_a_dialog_during_an_agents_call_is_answered_under_the_cell(protocol: str) -> None:
    pytest.importorskip("ipywidgets")
    from mcp_notebook.widgets._dialogs import NotebookDialogs

    shown: list[Any] = []  # what goes under the running cell
    dialogs = NotebookDialogs("demo", output=shown.append)
    session = _stdio_session(protocol, dialogs=dialogs)

    def answer() -> None:
        wait_for(lambda: dialogs.open_dialogs, HANG_GUARD, "the agent's dialog")
        [dialog] = dialogs.open_dialogs
        dialog.form.set_value({"name": "Ada"})
        dialog.accept_button.click()

    answering = threading.Thread(target=answer)
    answering.start()
    try:
        script = Script(("ask_user_name", {"greeting": "Welcome"}))
        result = script.agent(pydantic_ai_toolset(session)).run_sync("greet me")
    finally:
        answering.join(HANG_GUARD)
        session.close()
    assert result.output == "done"
    assert script.returns[0].content == "Welcome, Ada! Nice to meet you."
    assert shown, "the dialog was not shown under the cell"
    assert dialogs.history[-1].answered


@pytest.mark.anyio
@pytest.mark.parametrize("peer", ["http-auto", "http-legacy"])
async def test_a_clients_elicitation_handler_answers_an_agents_call(
    request: pytest.FixtureRequest, peer: str
) -> None:
    target, protocol = _target(request, peer)
    asked: list[Any] = []

    async def elicitation(params: Any) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"name": "Grace"}}

    async with Client(target, protocol=protocol, elicitation=elicitation) as client:
        script = Script(("ask_user_name", {}))
        await script.agent(pydantic_ai_toolset(client)).run("greet me")
    assert len(asked) == 1
    assert script.returns[0].content == "Hello, Grace! Nice to meet you."


# --- groups, secrets, images ------------------------------------------------------------------


def test_a_groups_tools_keep_their_prefixed_names() -> None:
    group = Group({"north": demo_server(), "south": demo_server()}, show_progress=False, register=False)
    try:
        script = Script(("north_add", {"a": 1, "b": 2}), ("south_echo", {"text": "from the south"}))
        toolset = pydantic_ai_toolset(group, tools=["north.add", "south.echo"])
        assert script.agent(toolset).run_sync("both").output == "done"
        north = group["north"].model.history[-1]
        south = group["south"].model.history[-1]
    finally:
        group.close()
    assert sorted(t.name for t in script.tools) == ["north_add", "south_echo"]
    assert [p.content for p in script.returns] == [{"result": 3.0}, "from the south"]
    assert (north["name"], north["via"], south["name"], south["via"]) == (
        "add",
        "pydantic-ai",
        "echo",
        "pydantic-ai",
    )


@pytest.mark.anyio
async def test_a_client_groups_tools_keep_their_prefixed_names() -> None:
    async with ClientGroup({"a": demo_server(), "b": demo_server()}) as group:
        script = Script(("b_add", {"a": 20, "b": 22}))
        await script.agent(pydantic_ai_toolset(group)).run("add on b")
    assert {"a_add", "b_add", "a_echo", "b_echo"} <= {t.name for t in script.tools}
    assert script.returns[0].content == {"result": 42.0}


def test_a_secret_echoed_by_the_server_never_reaches_the_model() -> None:
    session = _stdio_session(env={"DEMO_API_KEY": SECRET})
    try:
        script = Script(
            ("echo", {"text": f"the key is {SECRET}"}), ("fail", {"message": f"bad key {SECRET}"})
        )
        result = script.agent(pydantic_ai_toolset(session)).run_sync("echo")
    finally:
        session.close()
    echoed, failed = script.returns
    assert SECRET not in str(echoed.content)
    assert "the key is" in str(echoed.content)
    assert SECRET not in failed.model_response_str()
    assert "bad key" in failed.model_response_str()
    # the run's transcript as pydantic-ai saves it: the secret only in the model's own two calls
    saved = ModelMessagesTypeAdapter.dump_json(result.all_messages()).decode()
    assert saved.count(SECRET) == 2


def test_an_image_reaches_the_model_as_binary_content() -> None:
    session = mcp_notebook.connect(
        python_server("pictures_server.py"), show_progress=False, register=False, dialogs=False
    )
    try:
        script = Script(("execute_cell", {}))
        assert script.agent(pydantic_ai_toolset(session)).run_sync("plot").output == "done"
    finally:
        session.close()
    [returned] = script.returns
    assert isinstance(returned.content, list)
    [picture] = [part for part in returned.content if isinstance(part, BinaryContent)]
    assert picture.media_type == "image/png"
    assert picture.data.startswith(b"\x89PNG")
    assert isinstance(returned.content[0], str)  # the structured value beside it, as JSON text
