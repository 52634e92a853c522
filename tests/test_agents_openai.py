"""The OpenAI Agents SDK runs an agent over our demo server's tools, through this client (issue #39).

The agent is real (``Runner.run`` / ``Runner.run_sync`` of openai-agents); only the model is a
double: :class:`ScriptedModel` answers each model request from a script (first a call to a tool
with the test's arguments, then a final message) and keeps every request's input, so a test
asserts what the model was shown: the tool's output, an error it can react to, masked secrets.
The demo server runs as a real subprocess, over stdio and over HTTP, in both eras. Tracing is off
so nothing tries the network.

A server process costs a second to start, a connection to a running one milliseconds: the module
starts one demo over HTTP (the SDK's dual-era server; ``protocol="legacy"`` opens a legacy session on
it) and each test connects afresh. The stdio/HTTP x era matrix runs on the main call and the
cancelled run; the tests that need no matrix connect over the module's HTTP demo, in both eras where
the era changes how the server asks (dialogs, sampling, tasks).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio
import fastmcp
import pytest
from fastmcp.tools import ToolResult as FastToolResult

pytest.importorskip("agents")

from agents import Agent, ModelSettings, Runner, set_tracing_disabled
from agents.exceptions import AgentsException
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from mcp_notebook import Client, ClientGroup, McpError
from mcp_notebook.agents import openai_agents_server
from tests.conftest import demo_server, python_server
from tests.http_peers import sdk_http

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("no_leaked_processes")]

set_tracing_disabled(True)

DEMO = demo_server()
#: Only stops a hang: what a test waits for is driven by the server's own messages.
HANG_GUARD = 40


class ScriptedModel(Model):
    """A model that calls ``calls`` (tool name, arguments), one per turn, then says ``final``.

    ``inputs`` keeps the input of every request; ``tools`` the tool names offered on the first.
    """

    def __init__(self, calls: list[tuple[str, dict[str, Any]]], final: str = "done") -> None:
        self.calls = list(calls)
        self.final = final
        self.inputs: list[list[Any]] = []
        self.tools: list[str] = []

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        tools = args[2] if len(args) > 2 else kwargs["tools"]
        if not self.inputs:
            self.tools = [tool.name for tool in tools]
        self.inputs.append(list(input) if isinstance(input, list) else [input])
        turn = len(self.inputs)
        if self.calls:
            name, arguments = self.calls.pop(0)
            item: Any = ResponseFunctionToolCall(
                type="function_call", call_id=f"call-{turn}", name=name, arguments=json.dumps(arguments)
            )
        else:
            item = ResponseOutputMessage(
                id=f"msg-{turn}",
                type="message",
                role="assistant",
                status="completed",
                content=[ResponseOutputText(type="output_text", text=self.final, annotations=[])],
            )
        return ModelResponse(output=[item], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the tests run the agent without streaming")

    def outputs(self) -> list[list[dict[str, Any]]]:
        """The tool outputs the model was shown in its last request, in order (each a list of
        the Responses API's parts: ``input_text``, ``input_image``)."""
        seen = []
        for item in self.inputs[-1]:
            if isinstance(item, dict) and item.get("type") == "function_call_output":
                output = item["output"]
                seen.append([{"type": "input_text", "text": output}] if isinstance(output, str) else output)
        return seen

    def texts(self) -> list[str]:
        """The text the model read of each tool output."""
        return ["\n".join(part.get("text", "") for part in output) for output in self.outputs()]


def _agent(model: ScriptedModel, server: Any) -> Agent[Any]:
    return Agent(
        name="tester",
        instructions="Use the tools.",
        model=model,
        model_settings=ModelSettings(),
        mcp_servers=[server],
    )


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=["auto", "legacy"])
def protocol(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def http_demo() -> Iterator[str]:
    """One demo server over HTTP for the module, serving both eras. A module fixture is set up before
    ``no_leaked_processes`` looks, so it is no leak."""
    with sdk_http("modern") as peer:
        yield peer.url


@pytest.fixture
def target(transport: str, http_demo: str) -> Any:
    """What ``Client`` connects to: the demo over stdio, or the module's over HTTP."""
    return DEMO if transport == "stdio" else http_demo


async def test_the_model_calls_a_tool_with_its_arguments_and_reads_the_result(
    target: Any, protocol: str
) -> None:
    model = ScriptedModel([("add", {"a": 2, "b": 3.5})], final="it is 5.5")
    async with Client(target, protocol=protocol) as client:
        assert client.era == ("legacy" if protocol == "legacy" else "modern")
        result = await Runner.run(_agent(model, openai_agents_server(client)), "add 2 and 3.5")
        assert result.final_output == "it is 5.5"
        assert {"add", "echo", "slow_count", "fail"} <= set(model.tools)
        assert model.outputs() == [[{"type": "input_text", "text": "5.5"}]]
        assert client.stats.in_flight == 0


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_a_tool_error_and_a_refused_argument_reach_the_model_and_the_run_goes_on(
    protocol: str, http_demo: str
) -> None:
    model = ScriptedModel([("fail", {"message": "no such region: Mars"}), ("add", {"a": "two", "b": 1})])
    async with Client(http_demo, protocol=protocol) as client:
        # failure_error_function=None: the SDK would end the run on any exception from the tool;
        # neither of these is one, so the model reads both and the run goes on.
        server = openai_agents_server(client, failure_error_function=None)
        result = await Runner.run(_agent(model, server), "go")
        assert result.final_output == "done"
        # The tool's own failure: the server's text, as the model's next request carried it.
        second_request = [item for item in model.inputs[1] if item.get("type") == "function_call_output"]
        assert second_request[0]["output"] == [
            {"type": "input_text", "text": "Error executing tool fail: no such region: Mars"}
        ]
        # An argument the client refused before sending: what is wrong, so the model can retry.
        refused = model.texts()[1]
        assert refused.startswith("arguments for tool 'add' do not match its inputSchema"), refused
        assert "arguments.a must be of type 'number'" in refused, refused
        assert "nothing was sent" in refused, refused
        assert client.stats.in_flight == 0


async def test_a_deadline_is_told_to_the_model_by_default_and_ends_the_run_when_asked(http_demo: str) -> None:
    async with Client(http_demo) as client:
        slow = {"steps": 3, "delay": 30}
        model = ScriptedModel([("slow_count", slow)])
        told = openai_agents_server(client, call_options={"timeout": 0.5})
        assert (await Runner.run(_agent(model, told), "go")).final_output == "done"
        [text] = model.texts()
        assert text.startswith("The tool call failed (timeout):"), text

        strict = openai_agents_server(client, call_options={"timeout": 0.5}, failure_error_function=None)
        with pytest.raises(AgentsException) as raised:
            await Runner.run(_agent(ScriptedModel([("slow_count", slow)]), strict), "go")
        cause: BaseException | None = raised.value
        while cause is not None and type(cause).__name__ != "McpTimeout":
            cause = cause.__cause__
        assert cause is not None, raised.value
        assert client.stats.in_flight == 0


async def test_a_lost_server_ends_the_run_with_the_error() -> None:
    model = ScriptedModel([("crash", {})])
    async with Client(python_server("bad_server.py"), timeout=HANG_GUARD) as client:
        with pytest.raises(AgentsException) as raised:
            await Runner.run(_agent(model, openai_agents_server(client)), "crash it")
        assert len(model.inputs) == 1  # no retry by the model could mend it: the run ended there
        lost = raised.value.__cause__
        assert isinstance(lost, McpError), raised.value
        assert lost.kind == "transport"
        assert (await client.call_tool("echo", {"n": 1})).text  # the client restarted the server


async def test_a_cancelled_run_cancels_the_call_on_the_server(target: Any, protocol: str) -> None:
    async with Client(target, protocol=protocol) as client:
        run: asyncio.Task[Any] | None = None

        def cancel_the_run(*_progress: Any) -> None:  # the server said it started: cancel the agent
            assert run is not None
            run.cancel()

        server = openai_agents_server(client, call_options={"progress": cancel_the_run})
        model = ScriptedModel([("slow_count", {"steps": 1000, "delay": 0.05})])
        with anyio.fail_after(HANG_GUARD):
            run = asyncio.get_running_loop().create_task(Runner.run(_agent(model, server), "count"))
            with pytest.raises(asyncio.CancelledError):
                await run
        assert client.stats.cancellations == 1
        assert client.stats.in_flight == 0
        assert len(model.inputs) == 1  # the model never saw an output: the run ended there
        assert (await client.call_tool("add", {"a": 1, "b": 2})).text == "3.0"  # the session goes on


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_a_dialog_during_the_agents_call_is_answered(protocol: str, http_demo: str) -> None:
    asked: list[Any] = []

    def answer(params: Any) -> dict[str, str]:
        asked.append(params)
        return {"name": "Ada"}

    model = ScriptedModel([("ask_user_name", {"greeting": "Welcome"})])
    async with Client(http_demo, protocol=protocol, elicitation=answer) as client:
        await Runner.run(_agent(model, openai_agents_server(client)), "greet me")
    assert len(asked) == 1
    assert model.texts() == ["Welcome, Ada! Nice to meet you."]


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_a_sampling_request_during_the_agents_call_is_answered(protocol: str, http_demo: str) -> None:
    async def sample(params: dict[str, Any]) -> dict[str, Any]:
        assert "Summarize the following text" in params["messages"][0]["content"]["text"]
        return {"role": "assistant", "content": {"type": "text", "text": "Short."}, "model": "scripted"}

    model = ScriptedModel([("summarize", {"text": "A long text.", "max_words": 5})])
    async with Client(http_demo, protocol=protocol, sampling=sample) as client:
        await Runner.run(_agent(model, openai_agents_server(client)), "summarize")
    assert model.texts() == ["Short."]


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_a_task_only_tool_is_followed_to_its_result(protocol: str, http_demo: str) -> None:
    model = ScriptedModel([("build_report", {"topic": "Q3 sales", "sections": 2, "delay": 0})])
    async with Client(http_demo, protocol=protocol) as client:
        await Runner.run(_agent(model, openai_agents_server(client)), "report")
        [task] = client.tasks  # the call ran as a task, followed to its result
        assert task.status == "completed"
    [text] = model.texts()
    report = json.loads(text)
    assert report["topic"] == "Q3 sales"
    assert [section["number"] for section in report["sections"]] == [1, 2]


async def test_structured_content_and_images_are_handed_over_as_the_official_sdks(http_demo: str) -> None:
    async with Client(http_demo) as client:
        server = openai_agents_server(client)
        direct = await client.call_tool("sales_records", {"region": "north", "limit": 2})
        handed = await server.call_tool("sales_records", {"region": "north", "limit": 2})
        assert handed.structured_content == direct.structured_content is not None
        assert handed.is_error is False
        model = ScriptedModel([("sales_records", {"region": "north", "limit": 2})])
        structured = openai_agents_server(client, use_structured_content=True)
        await Runner.run(_agent(model, structured), "rows")
        assert json.loads(model.texts()[0]) == direct.structured_content
    pictures = [sys.executable, "tests/servers/pictures_server.py"]
    async with Client(pictures) as client:
        model = ScriptedModel([("execute_cell", {})])
        await Runner.run(_agent(model, openai_agents_server(client)), "run the cell")
        [[text, image]] = model.outputs()
        assert json.loads(text["text"])["kind"]
        assert image["type"] == "input_image"
        assert image["image_url"].startswith("data:image/png;base64,iVBOR")


async def test_a_secret_the_server_echoes_is_masked_in_what_the_model_and_the_sdks_log_see(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agents import _debug

    monkeypatch.setattr(_debug, "DONT_LOG_TOOL_DATA", False)  # the SDK logs each tool's result
    key, password = "sk-live-4f9a8b7c6d5e", "correct horse battery"
    secrets = {"API_KEY": key, "DB_PASSWORD": password}
    model = ScriptedModel([("leak", {}), ("fail", {})])
    async with Client(python_server("secret_echo_server.py"), env=secrets) as client:
        server = openai_agents_server(client)
        with caplog.at_level(logging.DEBUG, logger="openai.agents"):
            await Runner.run(_agent(model, server), "leak")
        handed = await server.call_tool("leak", {})
        prompt = await server.get_prompt("login")
    seen = {
        "model": json.dumps(model.inputs[-1]),
        "log": caplog.text,
        "result": handed.model_dump_json(by_alias=True),
        "prompt": prompt.model_dump_json(by_alias=True),
    }
    for where, text in seen.items():
        assert key not in text, where
        assert password not in text, where
        assert "***" in text, where
    leaked, failed = model.texts()
    assert leaked.startswith("the key is ***\n"), leaked
    assert failed.startswith("The tool call failed (server): tools/call 'fail': the key *** was refused"), (
        failed
    )
    assert handed.structured_content == {"key": "***", "rows": [{"user": "ada", "password": "***"}]}
    assert any(r.getMessage().startswith("MCP tool leak returned") for r in caplog.records)


async def test_structured_content_without_text_is_read_by_the_model_as_json() -> None:
    server = fastmcp.FastMCP("structured-only")

    @server.tool
    def totals() -> FastToolResult:
        return FastToolResult(content=[], structured_content={"north": 3, "south": 5})

    model = ScriptedModel([("totals", {})])
    async with Client(server) as client:
        await Runner.run(_agent(model, openai_agents_server(client)), "totals")
    assert model.texts() == ['{"north": 3, "south": 5}']


async def test_a_groups_tools_keep_their_server_in_provider_safe_names(http_demo: str) -> None:
    model = ScriptedModel([("south_add", {"a": 40, "b": 2})])
    async with ClientGroup({"north": http_demo, "south": http_demo}) as group:
        server = openai_agents_server(group, tools=["north.echo", "south.add"])
        await Runner.run(_agent(model, server), "add")
        assert sorted(model.tools) == ["north_echo", "south_add"]
        assert model.texts() == ["42.0"]
        assert (await server.list_prompts()).prompts == []  # a group keeps no prompt table
        with pytest.raises(Exception, match="serves no prompts"):
            await server.get_prompt("greeting", {"name": "Ada"})


async def test_the_sdks_tool_filter_sees_the_agent_asking_and_the_provider_safe_names(http_demo: str) -> None:
    def by_agent(context: Any, tool: Any) -> bool:
        return tool.name == ("north_echo" if context.agent.name == "reader" else "south_add")

    async with ClientGroup({"north": http_demo, "south": http_demo}) as group:
        reader, adder = ScriptedModel([]), ScriptedModel([])
        async with openai_agents_server(group, tool_filter=by_agent) as server:
            await Runner.run(Agent(name="reader", model=reader, mcp_servers=[server]), "read")
            await Runner.run(Agent(name="adder", model=adder, mcp_servers=[server]), "add")
        assert (reader.tools, adder.tools) == (["north_echo"], ["south_add"])
        static = openai_agents_server(group, tool_filter={"blocked_tool_names": ["north_echo", "south_echo"]})
        names = {tool.name for tool in await static.list_tools()}
        assert "north_add" in names
        assert not names & {"north_echo", "south_echo"}


async def test_prompts_are_served_and_the_session_is_never_closed_by_the_sdk(http_demo: str) -> None:
    async with Client(http_demo) as client:
        async with openai_agents_server(client) as server:
            listed = {prompt.name: prompt for prompt in (await server.list_prompts()).prompts}
            assert listed["greeting"].title == "Greeting"
            assert [argument.name for argument in listed["greeting"].arguments or []] == ["name"]
            prompt = await server.get_prompt("greeting", {"name": "Ada"})
            assert prompt.messages[0].role == "user"
            assert prompt.messages[0].content.text == "Write a short, friendly greeting for Ada."
        await server.cleanup()
        assert (await client.call_tool("add", {"a": 1, "b": 1})).text == "2.0"


def test_importing_the_agents_package_imports_no_framework() -> None:
    import subprocess

    code = "import sys, mcp_notebook.agents; print('agents' in sys.modules, 'mcp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split()[0] == "False"


# --- a notebook session: blocking runs, dialogs under the cell, the history ------------------------


def _tool_calls(session: Any) -> list[tuple[str, str | None, str]]:
    return [(e["name"], e["via"], e["outcome"]) for e in session.model.history if e["method"] == "tools/call"]


@pytest.mark.parametrize(("transport", "protocol"), [("stdio", "auto"), ("http", "auto"), ("http", "legacy")])
def test_run_sync_over_a_notebook_session_answers_its_dialog_and_records_each_call(
    target: Any, protocol: str
) -> None:
    pytest.importorskip("ipywidgets")
    import mcp_notebook
    from mcp_notebook.widgets._dialogs import NotebookDialogs

    from .widget_helpers import wait_for

    shown: list[Any] = []  # what would go under the running cell
    dialogs = NotebookDialogs("demo", output=shown.append)
    session = mcp_notebook.connect(
        target, show_progress=False, dialogs=dialogs, protocol=protocol, register=False
    )
    try:

        def answer() -> None:  # the person at the notebook, while the cell runs the agent
            wait_for(lambda: dialogs.open_dialogs, HANG_GUARD, "the agent's dialog")
            [dialog] = dialogs.open_dialogs
            dialog.form.set_value({"name": "Ada"})
            dialog.accept_button.click()

        person = threading.Thread(target=answer, daemon=True)
        person.start()
        model = ScriptedModel([("add", {"a": 2, "b": 3}), ("ask_user_name", {"greeting": "Welcome"})])
        result = Runner.run_sync(_agent(model, openai_agents_server(session)), "add, then greet me")
        person.join(HANG_GUARD)
        assert result.final_output == "done"
        assert model.texts() == ["5.0", "Welcome, Ada! Nice to meet you."]
        assert len(shown) == 1  # the dialog was drawn where the running cell's output goes
        assert _tool_calls(session) == [
            ("add", "openai-agents", "ok"),
            ("ask_user_name", "openai-agents", "ok"),
        ]
    finally:
        session.close()


async def test_a_cancelled_run_over_a_notebook_session_cancels_its_call(http_demo: str) -> None:
    import mcp_notebook

    session = mcp_notebook.connect(http_demo, show_progress=False, register=False)
    try:
        loop = asyncio.get_running_loop()
        run: asyncio.Task[Any] | None = None

        def cancel_the_run(*_progress: Any) -> None:  # on the session's engine thread
            assert run is not None
            loop.call_soon_threadsafe(run.cancel)

        recorded = asyncio.Event()  # the engine records the call as it unwinds, after the run ends
        session.model.observe(lambda _change: loop.call_soon_threadsafe(recorded.set), names="history")
        server = openai_agents_server(session, call_options={"progress": cancel_the_run})
        model = ScriptedModel([("slow_count", {"steps": 1000, "delay": 0.05})])
        with anyio.fail_after(HANG_GUARD):
            run = loop.create_task(Runner.run(_agent(model, server), "count"))
            with pytest.raises(asyncio.CancelledError):
                await run
            await recorded.wait()
        assert _tool_calls(session) == [("slow_count", "openai-agents", "cancelled")]
        assert session.client.stats.cancellations == 1
        assert (await session.acall_tool("add", {"a": 1, "b": 2})).text == "3.0"
    finally:
        await session.aclose()


def test_a_notebook_groups_tools_are_called_under_provider_safe_names_and_recorded(http_demo: str) -> None:
    import mcp_notebook

    config = {"mcpServers": {name: {"url": http_demo} for name in ("north", "south")}}
    with mcp_notebook.connect_all(config, show_progress=False, register=False) as group:
        model = ScriptedModel([("north_add", {"a": 1, "b": 2}), ("south_echo", {"text": "hi"})])
        server = openai_agents_server(group, tools=lambda tool: tool.name.endswith((".add", ".echo")))
        Runner.run_sync(_agent(model, server), "go")
        assert sorted(model.tools) == ["north_add", "north_echo", "south_add", "south_echo"]
        assert model.texts() == ["3.0", "hi"]
        assert _tool_calls(group["north"]) == [("add", "openai-agents", "ok")]  # each member's history
        assert _tool_calls(group["south"]) == [("echo", "openai-agents", "ok")]


@pytest.mark.usefixtures("default_sigint")
def test_an_interrupted_cell_running_the_agent_cancels_the_call_on_the_server(http_demo: str) -> None:
    import signal

    import mcp_notebook

    from .widget_helpers import wait_for

    session = mcp_notebook.connect(http_demo, show_progress=False, register=False)
    try:
        main, interrupted = threading.main_thread().ident, threading.Event()
        assert main is not None

        def interrupt(*_progress: Any) -> None:  # the server said it started: the person interrupts
            if not interrupted.is_set():
                interrupted.set()
                signal.pthread_kill(main, signal.SIGINT)  # as Jupyter's interrupt button does

        server = openai_agents_server(session, call_options={"progress": interrupt})
        model = ScriptedModel([("slow_count", {"steps": 1000, "delay": 0.05})])
        with pytest.raises(KeyboardInterrupt):
            Runner.run_sync(_agent(model, server), "count")
        wait_for(lambda: _tool_calls(session), HANG_GUARD, "the call's history entry")
        assert _tool_calls(session) == [("slow_count", "openai-agents", "cancelled")]
        assert session.client.stats.cancellations == 1
        assert session.call_tool("add", {"a": 1, "b": 2}).text == "3.0"
    finally:
        session.close()
