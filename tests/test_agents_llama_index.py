"""LlamaIndex's FunctionAgent calling the demo server's tools through this client (issue #39).

The agent really runs: ``FunctionAgent`` (llama-index-core's workflow agent) with its own offline
double, ``MockFunctionCallingLLM``, scripted to call a tool with arguments of its choosing and then
answer with what the tool message said. Each test asserts what the model was sent (the schema,
the tool message it read next) and what the notebook recorded, against the demo server as a real
process over stdio and over HTTP, in both eras.

A server process costs a second to start, a session over a running one milliseconds: the module
starts one demo over HTTP and keeps a session open per route (place and era) for the tests that only
list and call tools that change nothing (they read the newest history entry, never the whole
history). A test that cancels, times out, answers a dialog or needs a clean history opens its own
session, over the module's HTTP demo unless it is about stdio. The full route matrix runs on the main
call and the task-only tool; the others run in one place.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

pytest.importorskip("llama_index.core")

from llama_index.core.agent.workflow import FunctionAgent, ToolCallResult
from llama_index.core.base.llms.types import ChatMessage, ImageBlock, MessageRole, ToolCallBlock
from llama_index.core.llms import MockFunctionCallingLLM
from llama_index.core.tools import FunctionTool
from llama_index.core.workflow.errors import WorkflowCancelledByUser

import mcp_notebook
from mcp_notebook import Client, ClientGroup
from mcp_notebook.agents import allama_index_tools, llama_index_tools
from mcp_notebook.notebook import Group, Session

from .conftest import demo_server, python_server
from .fakes import eventually
from .http_peers import sdk_http
from .widget_helpers import wait_for

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaked_processes")]

HANG_GUARD = 30  # seconds: only stops a hang, never a measurement


class ScriptedModel:
    """A model that calls ``tool`` with ``arguments``, then answers with the tool message it read."""

    def __init__(self, tool: str, arguments: dict[str, Any]) -> None:
        self.tool = tool
        self.arguments = arguments
        self.requests: list[list[ChatMessage]] = []
        self.tools_offered: list[Any] = []

    def __call__(self, messages: list[ChatMessage], **kwargs: Any) -> ChatMessage:
        self.requests.append(list(messages))
        self.tools_offered.append(kwargs.get("tools"))
        answers = [m for m in messages if m.role == MessageRole.TOOL]
        if answers:
            return ChatMessage(role=MessageRole.ASSISTANT, content=f"the tool said: {answers[-1].content}")
        call = ToolCallBlock(tool_call_id="call-1", tool_name=self.tool, tool_kwargs=self.arguments)
        return ChatMessage(role=MessageRole.ASSISTANT, blocks=[call])

    @property
    def tool_message(self) -> ChatMessage:
        """The tool message the model read in its second request."""
        assert len(self.requests) == 2, f"the model was asked {len(self.requests)} times"
        [message] = [m for m in self.requests[1] if m.role == MessageRole.TOOL]
        return message


async def run_agent(tools: list[FunctionTool], model: ScriptedModel) -> tuple[str, list[ToolCallResult]]:
    """Run a FunctionAgent to its end: its answer and the tool results it recorded."""
    agent = FunctionAgent(tools=tools, llm=MockFunctionCallingLLM(response_generator=model), streaming=False)
    with anyio.fail_after(HANG_GUARD):
        handler = agent.run(user_msg="go")
        results = [event async for event in handler.stream_events() if isinstance(event, ToolCallResult)]
        answer = await handler
    return str(answer), results


# --- sources: the demo over stdio and HTTP, both eras -----------------------------------------------

ROUTES = ["stdio-modern", "stdio-legacy", "http-modern", "http-legacy"]


@pytest.fixture(scope="module")
def http_demo() -> Iterator[str]:
    """One demo server over HTTP for the module (both eras: a client's first request picks one). A
    module fixture is set up before ``no_leaked_processes`` looks, so it is no leak."""
    with sdk_http("modern") as peer:
        yield peer.url


@pytest.fixture(scope="module")
def shared(http_demo: str) -> Iterator[dict[str, Session]]:
    """A session per route, open for the whole module, for tests that change nothing on the server or
    in the session (no cancel, no close, no dialog) and read only the newest history entry."""
    opened: dict[str, Session] = {}
    try:
        for route in ROUTES:
            transport, era = route.split("-")
            target = demo_server() if transport == "stdio" else http_demo
            protocol = "legacy" if era == "legacy" else "auto"
            opened[route] = mcp_notebook.connect(target, show_progress=False, protocol=protocol)
            assert opened[route].model.era == era
        yield opened
    finally:
        for session in opened.values():
            session.close()


@pytest.fixture(params=ROUTES)
def session(request: pytest.FixtureRequest, shared: dict[str, Session]) -> Session:
    """The shared session of each route in turn."""
    return shared[request.param]


@pytest.fixture
def stdio_session(shared: dict[str, Session]) -> Session:
    """The shared session over stdio in the default era: the one place of the tests that need no matrix."""
    return shared["stdio-modern"]


def only(tools: list[FunctionTool], name: str) -> FunctionTool:
    [tool] = [t for t in tools if t.metadata.name == name]
    return tool


def newest_entry(session: Session, before: int) -> dict[str, Any]:
    """The newest history entry of a shared session, which must be one the test's own call added
    (``before``: the history's length when the test began)."""
    added = session.model.history[before:]
    assert added, "the test's call is not in the session's history"
    return dict(added[-1])


# --- the agent's calls ---------------------------------------------------------------------------


async def test_the_agent_calls_a_tool_with_the_models_arguments_and_the_model_reads_the_result(
    session: Session,
) -> None:
    before = len(session.model.history)
    tools = llama_index_tools(session, tools=["add", "sales_records"])
    model = ScriptedModel("add", {"a": 2, "b": 3.5})
    answer, [result] = await run_agent(tools, model)

    # the model was offered the MCP schema unchanged, every key of it
    offered = {tool.metadata.name: tool for tool in model.tools_offered[0]}
    assert set(offered) == {"add", "sales_records"}
    [add_schema] = [t.input_schema for t in session.list_tools() if t.name == "add"]
    assert offered["add"].metadata.get_parameters_dict() == add_schema
    assert offered["add"].metadata.to_openai_tool()["function"]["parameters"] == add_schema
    assert offered["add"].metadata.fn_schema.model_json_schema() == add_schema

    assert model.tool_message.content == "5.5"
    assert answer == "the tool said: 5.5"
    assert result.tool_output.raw_output == {"result": 5.5}  # the structured value
    assert not result.tool_output.is_error
    entry = newest_entry(session, before)
    assert (entry["name"], entry["arguments"], entry["via"]) == ("add", {"a": 2, "b": 3.5}, "llama-index")


@pytest.mark.parametrize("route", ["stdio-modern", "stdio-legacy"])
async def test_a_tool_error_reaches_the_model_as_an_error_and_the_run_goes_on(
    route: str, shared: dict[str, Session]
) -> None:
    session = shared[route]
    before = len(session.model.history)
    model = ScriptedModel("fail", {"message": "the warehouse is closed"})
    answer, [result] = await run_agent(llama_index_tools(session), model)
    assert result.tool_output.is_error
    assert "the warehouse is closed" in model.tool_message.content
    assert answer.startswith("the tool said:")
    assert newest_entry(session, before)["outcome"] == "tool_error"


async def test_a_refused_argument_is_told_to_the_model_which_can_retry(stdio_session: Session) -> None:
    session = stdio_session
    model = ScriptedModel("add", {"a": "two", "b": 3})
    answer, [result] = await run_agent(llama_index_tools(session, tools=["add"]), model)
    assert result.tool_output.is_error
    assert "arguments.a must be of type 'number'" in model.tool_message.content
    assert "nothing was sent" in model.tool_message.content
    assert answer.startswith("the tool said:")
    # called directly (a loop of one's own), the refusal is an error output too, not an exception
    output = await only(llama_index_tools(session, tools=["add"]), "add").acall(a="two", b=3)
    assert output.is_error
    assert "nothing was sent" in output.content


async def test_a_calls_deadline_is_kept_and_the_model_is_told_the_call_timed_out(http_demo: str) -> None:
    session = mcp_notebook.connect(http_demo, show_progress=False, timeout=0.5)
    try:
        model = ScriptedModel("slow_count", {"steps": 600, "delay": 0.1})
        answer, [result] = await run_agent(llama_index_tools(session, tools=["slow_count"]), model)
        entry = session.model.history[-1]
    finally:
        session.close()
    assert entry["outcome"] == "timeout"
    assert result.tool_output.is_error  # raised by the tool, made an error output by the agent
    assert getattr(result.tool_output.exception, "kind", None) == "timeout"
    assert model.tool_message.content == str(result.tool_output.exception)
    assert answer.startswith("the tool said:")


async def test_a_task_only_tool_is_followed_to_its_result(session: Session) -> None:
    model = ScriptedModel("build_report", {"topic": "regions", "sections": 2, "delay": 0})
    _, [result] = await run_agent(llama_index_tools(session, tools=["build_report"]), model)
    assert not result.tool_output.is_error
    report = result.tool_output.raw_output
    assert report["topic"] == "regions"
    assert [section["number"] for section in report["sections"]] == [1, 2]
    assert "regions" in model.tool_message.content


def test_blocking_calls_work_in_a_cell_without_an_event_loop(stdio_session: Session) -> None:
    before = len(stdio_session.model.history)
    tool = only(llama_index_tools(stdio_session), "echo")
    output = tool.call(text="hello")
    assert (output.content, output.is_error, output.raw_output) == ("hello", False, "hello")
    assert newest_entry(stdio_session, before)["via"] == "llama-index"


# --- dialogs --------------------------------------------------------------------------------------


@pytest.mark.parametrize("route", ["stdio-modern", "http-modern", "http-legacy"])
async def test_an_elicitation_during_the_agents_call_shows_its_dialog_and_the_answer_reaches_the_server(
    route: str, http_demo: str
) -> None:
    pytest.importorskip("ipywidgets")
    from mcp_notebook.widgets._dialogs import NotebookDialogs

    shown: list[Any] = []  # what would go under the running cell
    dialogs = NotebookDialogs("demo", output=shown.append)
    transport, era = route.split("-")
    target = demo_server() if transport == "stdio" else http_demo
    protocol = "legacy" if era == "legacy" else "auto"
    session = mcp_notebook.connect(target, show_progress=False, dialogs=dialogs, protocol=protocol)

    def user() -> None:
        wait_for(lambda: dialogs.open_dialogs, HANG_GUARD, "the agent's dialog")
        dialog = dialogs.open_dialogs[0]
        dialog.form.set_value({"name": "Ada"})
        dialog.accept_button.click()

    answering = threading.Thread(target=user, daemon=True)
    answering.start()
    try:
        model = ScriptedModel("ask_user_name", {"greeting": "Welcome"})
        answer, _ = await run_agent(llama_index_tools(session, tools=["ask_user_name"]), model)
    finally:
        answering.join(HANG_GUARD)
        session.close()
    assert answer == "the tool said: Welcome, Ada! Nice to meet you."
    assert len(shown) == 1  # under the running cell
    assert dialogs.history[-1].answered


async def test_a_core_clients_elicitation_handler_answers_the_agents_call(http_demo: str) -> None:
    async with Client(
        http_demo, elicitation=lambda params: {"action": "accept", "content": {"name": "Lin"}}
    ) as c:
        model = ScriptedModel("ask_user_name", {})
        answer, _ = await run_agent(await allama_index_tools(c, tools=["ask_user_name"]), model)
    assert answer == "the tool said: Hello, Lin! Nice to meet you."


# --- cancellation ---------------------------------------------------------------------------------


async def _cancelled_while_calling(tools: list[FunctionTool], in_flight: Any) -> None:
    """Run an agent whose model calls slow_count, and cancel the run once the call is on the wire."""
    model = ScriptedModel("slow_count", {"steps": 600, "delay": 0.1})
    agent = FunctionAgent(tools=tools, llm=MockFunctionCallingLLM(response_generator=model), streaming=False)
    with anyio.fail_after(HANG_GUARD):
        handler = agent.run(user_msg="count")
        await eventually(in_flight, HANG_GUARD)
        await handler.cancel_run()
        with pytest.raises(WorkflowCancelledByUser):
            await handler


@pytest.mark.parametrize("route", ["stdio-legacy", "http-modern"])
async def test_a_cancelled_run_cancels_the_servers_call_from_a_session(route: str, http_demo: str) -> None:
    transport, era = route.split("-")
    target = demo_server() if transport == "stdio" else http_demo
    session = mcp_notebook.connect(
        target, show_progress=False, protocol="legacy" if era == "legacy" else "auto"
    )
    try:
        client = session.client  # its stats are a snapshot each time they are read
        await _cancelled_while_calling(llama_index_tools(session), lambda: client.stats.in_flight == 1)
        wait_for(lambda: client.stats.in_flight == 0, HANG_GUARD, "the call to end")
        assert client.stats.cancellations == 1
        wait_for(lambda: session.model.history, HANG_GUARD, "the history entry")
        entry = session.model.history[-1]
        assert (entry["name"], entry["outcome"], entry["via"]) == ("slow_count", "cancelled", "llama-index")
        assert session.call_tool("echo", {"text": "still here"}).text == "still here"
    finally:
        session.close()


async def test_a_cancelled_run_cancels_the_servers_call_from_a_core_client() -> None:
    async with Client(python_server("bad_server.py"), timeout=HANG_GUARD) as client:
        tools = await allama_index_tools(client, tools=["stall"])
        model = ScriptedModel("stall", {})
        agent = FunctionAgent(
            tools=tools, llm=MockFunctionCallingLLM(response_generator=model), streaming=False
        )
        with anyio.fail_after(HANG_GUARD):
            handler = agent.run(user_msg="stall")
            await eventually(lambda: client.stats.in_flight == 1, HANG_GUARD)
            await handler.cancel_run()
            with pytest.raises(WorkflowCancelledByUser):
                await handler
            await eventually(lambda: client.stats.in_flight == 0, HANG_GUARD)
        assert client.stats.cancellations == 1
        received = json.loads((await client.call_tool("received")).text)
    [[stall_id, _]] = [call for call in received["calls"] if call[1] == "stall"]
    assert [notice["requestId"] for notice in received["cancelled"]] == [stall_id]


# --- groups, images, secrets, the import ----------------------------------------------------------


async def test_a_groups_tools_keep_their_prefixed_names_and_reach_their_server(http_demo: str) -> None:
    group = Group({"sales": http_demo, "ops": http_demo}, show_progress=False)
    try:
        tools = llama_index_tools(group, tools=["sales.add", "ops.add"])
        assert sorted(t.metadata.name for t in tools) == ["ops_add", "sales_add"]
        model = ScriptedModel("sales_add", {"a": 1, "b": 1})
        answer, _ = await run_agent(tools, model)
        assert answer == "the tool said: 2.0"
        entry = group["sales"].model.history[-1]
        assert (entry["name"], entry["via"]) == ("add", "llama-index")
        assert group["ops"].model.history == []
    finally:
        group.close()


async def test_a_core_client_groups_tools_keep_their_prefixed_names(http_demo: str) -> None:
    async with ClientGroup({"sales": http_demo, "ops": http_demo}) as group:
        tools = await allama_index_tools(group, tools=lambda tool: tool.name.endswith(".echo"))
        assert sorted(t.metadata.name for t in tools) == ["ops_echo", "sales_echo"]
        output = await only(tools, "ops_echo").acall(text="from ops")
    assert output.content == "from ops"


async def test_a_core_client_cannot_be_listed_or_called_without_await(http_demo: str) -> None:
    async with Client(http_demo) as client:
        with pytest.raises(TypeError, match="async only"):
            llama_index_tools(client)
        echo = only(await allama_index_tools(client), "echo")
        with pytest.raises(TypeError, match="async only"):
            echo.call(text="blocking")
        assert (await echo.acall(text="awaited")).content == "awaited"


async def test_an_image_reaches_the_model_as_an_image_block_beside_the_text() -> None:
    async with Client(python_server("pictures_server.py")) as client:
        model = ScriptedModel("execute_cell", {})
        _, [result] = await run_agent(await allama_index_tools(client, tools=["execute_cell"]), model)
    [image] = [b for b in model.tool_message.blocks if isinstance(b, ImageBlock)]  # what the model got
    assert image.image_mimetype == "image/png"
    assert base64.b64decode(image.image or b"").startswith(b"\x89PNG")
    assert "[image 2: image/png" in model.tool_message.content  # the text names it
    assert isinstance(result.tool_output.raw_output, dict)
    assert "images" in result.tool_output.raw_output


async def test_a_secret_the_server_echoes_is_masked_in_what_the_model_reads() -> None:
    from .test_secret_echo import ENV, SERVER, assert_masked

    async with Client(SERVER, env=ENV) as client:
        tool = only(await allama_index_tools(client), "leak")
        output = await tool.acall()
    assert_masked(output.content, what="the tool message")
    assert_masked(repr(output.raw_output), what="raw_output")


def test_importing_the_agents_package_imports_no_framework() -> None:
    code = (
        "import sys, mcp_notebook.agents\n"
        "loaded = [m for m in ('llama_index', 'smolagents') if m in sys.modules]\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=HANG_GUARD)
