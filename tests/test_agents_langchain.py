"""LangChain agents call MCP tools through this client (issue #39), against real servers.

The agent is LangChain's own: ``langchain.agents.create_agent`` (a LangGraph loop whose ``ToolNode``
invokes each tool with the model's tool call, as in production) over LangChain's fake chat model
``FakeMessagesListChatModel``, scripted with the tool calls a model would make and keeping what a
provider's model is sent (the tools it was bound to, every request). The tools come from
``mcp_notebook.agents.langchain_tools`` (a notebook Session or Group, blocking ``invoke``) or
``alangchain_tools`` (a core Client or ClientGroup, ``ainvoke``), and the server is the bundled demo
over stdio and over HTTP, in both protocol eras; tests/servers/ supplies a server that reports the
cancellations it was sent, one that echoes its secrets, and one that answers with an image.

What a user sees is asserted: the arguments the model chose reached the tool, the model's next
request holds the result (the text, the structured value as the ToolMessage's artifact, images as
image blocks), a tool's error and a refused argument reach the model as ``status="error"`` and the
run goes on, a cancelled run cancels the server's call, a dialog is answered, a task-only tool's
result comes back, a group's tools keep their prefixed names, and the session's history names
LangChain as the caller.

A server process costs a second to start, a session over a running one milliseconds: the module
starts one demo over HTTP and keeps a session open per place and era for the tests that only list
and call tools that change nothing (they read the newest history entries, never the whole history).
A test that cancels, times out, closes or needs a clean history opens its own session, over the
module's HTTP demo unless it is about stdio. The full stdio/HTTP x era matrix runs on the main call,
the task-only tool and the cancelled run; the others run in one place.
"""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import anyio
import pytest
from langchain.agents import create_agent
from langchain_core.callbacks import AsyncCallbackHandler, BaseCallbackHandler, StdOutCallbackHandler
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

import mcp_notebook
from mcp_notebook import Client, ClientGroup
from mcp_notebook.agents import alangchain_tools, langchain_tools
from mcp_notebook.notebook import Group, Session
from mcp_notebook.widgets._dialogs import NotebookDialogs

from .conftest import demo_server, python_server
from .http_peers import sdk_http
from .raises import raises_mcp
from .test_secret_echo import ENV, assert_masked
from .widget_helpers import wait_for

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

DEMO = demo_server()
#: Only stops a hang; nothing here is a measurement.
WAIT = 30.0
PLACES = ["stdio", "http"]
ERAS = ["auto", "legacy"]


# --- LangChain's fake chat model, as a provider's model is used ---------------------------------


class ScriptedModel(FakeMessagesListChatModel):
    """LangChain's fake chat model answering from a script, keeping what a real model is sent."""

    #: The tools as the provider would receive them (OpenAI's function format).
    bound: list[dict[str, Any]] = Field(default_factory=list)
    #: Every request's messages, in order.
    requests: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any) -> Any:
        self.bound[:] = [convert_to_openai_tool(tool) for tool in tools]
        return self.bind(tools=self.bound, **kwargs)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.requests.append(list(messages))
        return super()._generate(messages, *args, **kwargs)

    def tool_messages(self, request: int = -1) -> list[ToolMessage]:
        return [m for m in self.requests[request] if isinstance(m, ToolMessage)]


def calls(*steps: tuple[str, dict[str, Any]], answer: str = "done") -> ScriptedModel:
    """A model that makes these tool calls, one per turn, then answers ``answer``."""
    turns: list[BaseMessage] = [
        AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call_{i}"}])
        for i, (name, args) in enumerate(steps, 1)
    ]
    return ScriptedModel(responses=[*turns, AIMessage(answer)])


def ask(text: str = "go") -> dict[str, Any]:
    return {"messages": [HumanMessage(text)]}


def newest_entry(session: Session, before: int) -> dict[str, Any]:
    """The newest history entry of a shared session, which must be one the test's own call added
    (``before``: the history's length when the test began)."""
    added = session.model.history[before:]
    assert added, "the test's call is not in the session's history"
    return dict(added[-1])


# --- where the demo runs ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def http_demo() -> Iterator[str]:
    """One demo server over Streamable HTTP for the module (both eras: a client's first request picks
    one). A module fixture is set up before ``no_leaked_processes`` looks, so it is no leak."""
    with sdk_http("modern") as peer:
        yield peer.url


@pytest.fixture(params=PLACES)
def demo(request: pytest.FixtureRequest, http_demo: str) -> Any:
    """The demo server as a Client or connect() takes it: a command (stdio) or the module's URL."""
    return DEMO if request.param == "stdio" else http_demo


def expected_era(protocol: str) -> str:
    return "modern" if protocol == "auto" else "legacy"


@pytest.fixture(scope="module")
def shared(http_demo: str) -> Iterator[dict[tuple[str, str], Session]]:
    """A session per (place, protocol), open for the whole module, for tests that change nothing on
    the server or in the session (no cancel, no close, no dialog) and read only the newest history."""
    opened: dict[tuple[str, str], Session] = {}
    try:
        for place in PLACES:
            for protocol in ERAS:
                target = DEMO if place == "stdio" else http_demo
                opened[place, protocol] = mcp_notebook.connect(
                    target, show_progress=False, protocol=protocol, timeout=WAIT
                )
        yield opened
    finally:
        for session in opened.values():
            session.close()


@pytest.fixture
def session_of() -> Iterator[Any]:
    opened: list[Session] = []

    def connect(target: Any, protocol: str = "auto", **options: Any) -> Session:
        session = mcp_notebook.connect(
            target, show_progress=False, protocol=protocol, timeout=WAIT, **options
        )
        opened.append(session)
        return session

    yield connect
    for session in opened:
        session.close()


# --- a call: the model's arguments in, the result out, the history entry ------------------------


@pytest.mark.parametrize("protocol", ERAS)
@pytest.mark.parametrize("place", PLACES)
def test_an_agent_calls_the_tool_the_model_chose_and_the_model_reads_its_result(
    place: str, protocol: str, shared: dict[tuple[str, str], Session]
) -> None:
    session = shared[place, protocol]
    before = len(session.model.history)
    assert session.model.era == expected_era(protocol)
    model = calls(("add", {"a": 2, "b": 3}), answer="2 + 3 = 5")

    run = create_agent(model, langchain_tools(session)).invoke(ask("What is 2 + 3?"))

    assert run["messages"][-1].content == "2 + 3 = 5"  # the run went on to the model's answer
    [add] = [tool for tool in model.bound if tool["function"]["name"] == "add"]
    assert add["function"]["description"] == "Add two numbers."
    assert add["function"]["parameters"]["required"] == ["a", "b"]  # the server's schema, as it is
    [seen] = model.tool_messages()
    assert (seen.name, seen.tool_call_id, seen.status) == ("add", "call_1", "success")
    assert seen.content == "5.0"
    assert seen.artifact == {"result": 5.0}  # structuredContent, for the program
    entry = newest_entry(session, before)
    assert (entry["name"], entry["arguments"], entry["outcome"]) == ("add", {"a": 2, "b": 3}, "ok")
    assert entry["via"] == "langchain"
    assert session.history_frame()["via"].iloc[-1] == "langchain"


@pytest.mark.anyio
@pytest.mark.parametrize("protocol", ERAS)
async def test_an_async_agent_over_a_core_client_reads_structured_records(
    http_demo: str, protocol: str
) -> None:
    async with Client(http_demo, protocol=protocol, timeout=WAIT) as client:
        assert client.era == expected_era(protocol)
        tools = await alangchain_tools(client, tools=["sales_records", "add"])
        assert sorted(tool.name for tool in tools) == ["add", "sales_records"]
        model = calls(("sales_records", {"region": "north", "limit": 2}))

        run = await create_agent(model, tools).ainvoke(ask())

    assert run["messages"][-1].content == "done"
    [seen] = model.tool_messages()
    rows = seen.artifact["result"]
    assert [row["region"] for row in rows] == ["north", "north"]
    assert '"region": "north"' in seen.content  # the model reads the records as JSON text


def test_tool_metadata_carries_the_mcp_name_title_and_annotations(
    shared: dict[tuple[str, str], Session],
) -> None:
    session = shared["stdio", "auto"]
    before = len(session.model.history)
    [add] = langchain_tools(session, tools=["add"])
    assert add.metadata == {
        "mcp_name": "add",
        "mcp_title": "Add two numbers",
        "mcp_annotations": {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False},
    }
    assert add.response_format == "content_and_artifact"
    # Called by hand in a cell (no tool call): the text, as LangChain gives a tool's content.
    assert add.invoke({"a": 1, "b": 2}) == "3.0"
    assert newest_entry(session, before)["via"] == "langchain"


# --- errors: what the model is told, what ends the run ------------------------------------------


@pytest.mark.parametrize("protocol", ERAS)
def test_a_tool_error_reaches_the_model_and_the_run_goes_on(
    protocol: str, shared: dict[tuple[str, str], Session]
) -> None:
    session = shared["stdio", protocol]
    before = len(session.model.history)
    model = calls(("fail", {"message": "the disk is full"}), answer="I could not: the disk is full.")

    run = create_agent(model, langchain_tools(session)).invoke(ask())

    [seen] = model.tool_messages()
    assert seen.status == "error"
    assert "the disk is full" in seen.content
    assert run["messages"][-1].content == "I could not: the disk is full."
    assert newest_entry(session, before)["outcome"] == "tool_error"


def test_a_refused_argument_is_told_to_the_model_which_tries_again(
    shared: dict[tuple[str, str], Session],
) -> None:
    session = shared["stdio", "auto"]
    before = len(session.model.history)
    model = calls(("add", {"a": "two", "b": 3}), ("add", {"a": 2, "b": 3}), answer="5")

    run = create_agent(model, langchain_tools(session)).invoke(ask())

    refused, added = model.tool_messages()
    assert refused.status == "error"
    assert "do not match its inputSchema" in refused.content
    assert "arguments.a must be of type 'number'" in refused.content
    assert "nothing was sent" in refused.content
    assert (added.status, added.content) == ("success", "5.0")
    assert run["messages"][-1].content == "5"
    outcomes = [(entry["name"], entry["outcome"]) for entry in session.model.history[before:]]
    assert outcomes == [("add", "invalid"), ("add", "ok")]


@pytest.mark.anyio
async def test_a_deadline_ends_the_run_with_the_clients_error(http_demo: str) -> None:
    """A deadline is not the model's to mend: the run stops with the McpError a call of one's own gets."""
    async with Client(http_demo, timeout=WAIT) as client:
        tools = await alangchain_tools(client, tools=["slow_count"], timeout=0.5)
        model = calls(("slow_count", {"steps": 100, "delay": 1}))
        with raises_mcp("timeout"):
            await create_agent(model, tools).ainvoke(ask())
        assert client.stats.timeouts == 1


@pytest.mark.anyio
async def test_a_core_clients_tools_say_at_once_that_they_are_async_only(http_demo: str) -> None:
    async with Client(http_demo, timeout=WAIT) as client:
        with pytest.raises(TypeError, match=r"await alangchain_tools\(client\)"):
            langchain_tools(client)
        tools = await alangchain_tools(client, tools=["add"])
        with pytest.raises(TypeError, match="async only"):
            create_agent(calls(("add", {"a": 1, "b": 2})), tools).invoke(ask())


# --- cancellation -------------------------------------------------------------------------------


class CancelOnProgress(AsyncCallbackHandler):
    """Cancels the run when the tool reports the server's first progress (the call has started)."""

    def __init__(self, scope: anyio.CancelScope) -> None:
        self.scope = scope
        self.progress: list[dict[str, Any]] = []

    async def on_custom_event(self, name: str, data: Any, **kwargs: Any) -> None:
        if name == "mcp_progress":
            self.progress.append(data)
            self.scope.cancel()


async def _run_cancelled_on_progress(tools: list[Any], tool: str, args: dict[str, Any]) -> CancelOnProgress:
    agent = create_agent(calls((tool, args)), tools)
    with anyio.fail_after(WAIT), anyio.CancelScope() as scope:
        handler = CancelOnProgress(scope)
        await agent.ainvoke(ask(), {"callbacks": [handler]})
    assert scope.cancelled_caught, "the run ended before it was cancelled"
    return handler


@pytest.mark.anyio
async def test_a_cancelled_run_cancels_the_call_on_the_server() -> None:
    """The server reports the notifications/cancelled it was sent, naming the agent's call."""
    async with Client(python_server("bad_server.py"), timeout=WAIT) as client:
        tools = await alangchain_tools(client, tools=["stall"])
        handler = await _run_cancelled_on_progress(tools, "stall", {})
        assert handler.progress[0] == {"tool": "stall", "progress": 0, "total": None, "message": None}
        assert client.stats.cancellations == 1
        received = json.loads((await client.call_tool("received")).text)
    [[stall_id, _]] = [call for call in received["calls"] if call[1] == "stall"]
    assert [notice["requestId"] for notice in received["cancelled"]] == [stall_id]


@pytest.mark.anyio
@pytest.mark.parametrize("protocol", ERAS)
async def test_a_cancelled_run_cancels_the_demos_slow_count(demo: Any, protocol: str) -> None:
    async with Client(demo, protocol=protocol, timeout=WAIT) as client:
        tools = await alangchain_tools(client, tools=["slow_count"])
        handler = await _run_cancelled_on_progress(tools, "slow_count", {"steps": 1000, "delay": 0.05})
        assert handler.progress[0]["message"] == "step 1/1000"
        assert client.stats.cancellations == 1
        assert (await client.call_tool("add", {"a": 1, "b": 1})).text == "2.0"  # the client goes on


@pytest.mark.anyio
async def test_a_cancelled_run_over_a_session_cancels_its_request(http_demo: str, session_of: Any) -> None:
    """The session's call runs on its engine: cancelling the agent's task cancels it there."""
    session = session_of(http_demo)
    tools = await alangchain_tools(session, tools=["slow_count"])  # a session lists async too
    started = anyio.Event()
    cancelled = threading.Event()
    loop = asyncio.get_running_loop()

    def follow(event: Any) -> None:  # on the session's engine thread
        if event.kind == "request_start" and event.data["method"] == "tools/call":
            loop.call_soon_threadsafe(started.set)
        if event.kind == "cancel" and event.data["method"] == "tools/call":
            cancelled.set()

    session.client.on_event(follow)
    agent = create_agent(calls(("slow_count", {"steps": 1000, "delay": 0.05})), tools)
    run = asyncio.ensure_future(agent.ainvoke(ask()))
    with anyio.fail_after(WAIT):
        await started.wait()
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run
    assert cancelled.wait(WAIT), "the client did not cancel the call"
    assert session.client.stats.cancellations == 1
    entry = session.model.history[-1]
    assert (entry["name"], entry["outcome"], entry["via"]) == ("slow_count", "cancelled", "langchain")


# --- dialogs ------------------------------------------------------------------------------------


def _answer_the_next_dialog(dialogs: NotebookDialogs, name: str) -> threading.Thread:
    """A thread that plays the user: fills the name into the dialog that opens, and accepts."""

    def answer() -> None:
        wait_for(lambda: dialogs.open_dialogs, WAIT, "a dialog to open")
        dialog = dialogs.open_dialogs[0]
        dialog.form.set_value({"name": name})  # type: ignore[attr-defined]
        dialog.accept_button.click()  # type: ignore[attr-defined]

    user = threading.Thread(target=answer, daemon=True)
    user.start()
    return user


@pytest.mark.parametrize(("place", "protocol"), [("stdio", "auto"), ("http", "auto"), ("http", "legacy")])
def test_a_dialog_during_an_agents_call_shows_under_the_cell_and_its_answer_reaches_the_server(
    place: str, protocol: str, http_demo: str, session_of: Any
) -> None:
    shown: list[Any] = []  # what goes under the running cell
    dialogs = NotebookDialogs("demo", output=shown.append)
    session = session_of(DEMO if place == "stdio" else http_demo, protocol, dialogs=dialogs)
    model = calls(("ask_user_name", {"greeting": "Welcome"}))
    user = _answer_the_next_dialog(dialogs, "Ada")

    create_agent(model, langchain_tools(session)).invoke(ask())

    user.join(WAIT)
    assert len(shown) == 1  # the dialog was drawn under the cell
    [seen] = model.tool_messages()
    assert seen.content == "Welcome, Ada! Nice to meet you."
    assert dialogs.open_dialogs == []


@pytest.mark.anyio
async def test_a_core_clients_elicitation_handler_answers_during_an_agents_call(http_demo: str) -> None:
    asked: list[str] = []

    async def elicitation(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return {"action": "accept", "content": {"name": "Grace"}}

    async with Client(http_demo, timeout=WAIT, elicitation=elicitation) as client:
        model = calls(("ask_user_name", {}))
        await create_agent(model, await alangchain_tools(client)).ainvoke(ask())
    assert asked == ["Hi! What is your name?"]
    assert model.tool_messages()[0].content == "Hello, Grace! Nice to meet you."


# --- tasks, groups, images, secrets -------------------------------------------------------------


@pytest.mark.parametrize("protocol", ERAS)
@pytest.mark.parametrize("place", PLACES)
def test_a_task_only_tool_is_followed_to_its_result(
    place: str, protocol: str, shared: dict[tuple[str, str], Session]
) -> None:
    session = shared[place, protocol]
    before = len(session.model.history)
    model = calls(("build_report", {"topic": "north", "sections": 2, "delay": 0.05}))

    create_agent(model, langchain_tools(session, tools=["build_report"])).invoke(ask())

    [seen] = model.tool_messages()
    assert seen.status == "success"
    assert seen.artifact["topic"] == "north"
    assert [section["number"] for section in seen.artifact["sections"]] == [1, 2]
    assert '"topic": "north"' in seen.content
    assert newest_entry(session, before)["via"] == "langchain"


def test_a_notebook_groups_tools_keep_their_prefixed_names(http_demo: str) -> None:
    group = Group({"sales": http_demo, "calc": http_demo}, show_progress=False, register=False)
    try:
        tools = langchain_tools(group, tools=["sales.sales_records", "calc.add"])
        assert sorted(tool.name for tool in tools) == ["calc_add", "sales_sales_records"]
        assert sorted(tool.metadata["mcp_name"] for tool in tools) == ["calc.add", "sales.sales_records"]
        model = calls(("calc_add", {"a": 1, "b": 2}), ("sales_sales_records", {"limit": 1}))

        create_agent(model, tools).invoke(ask())

        added, records = model.tool_messages()
        assert (added.name, added.content) == ("calc_add", "3.0")
        assert len(records.artifact["result"]) == 1
        calc = group.sessions["calc"].model.history[-1]
        assert (calc["name"], calc["via"]) == ("add", "langchain")
        assert group.sessions["sales"].model.history[-1]["name"] == "sales_records"
    finally:
        group.close()


@pytest.mark.anyio
async def test_a_client_groups_tools_keep_their_prefixed_names(http_demo: str) -> None:
    async with ClientGroup({"sales": http_demo, "calc": http_demo}, timeout=WAIT) as group:
        tools = await alangchain_tools(group, tools=lambda tool: tool.name.endswith(".add"))
        assert sorted(tool.name for tool in tools) == ["calc_add", "sales_add"]
        model = calls(("sales_add", {"a": 4, "b": 5}))
        await create_agent(model, tools).ainvoke(ask())
    assert model.tool_messages()[0].content == "9.0"


@pytest.mark.anyio
async def test_an_image_reaches_the_model_as_an_image_block() -> None:
    async with Client(python_server("pictures_server.py"), timeout=WAIT) as client:
        tools = await alangchain_tools(client, tools=["execute_cell"])
        model = calls(("execute_cell", {}))
        await create_agent(model, tools).ainvoke(ask())
        sent = await client.call_tool("execute_cell")
    [png] = [block for block in sent.content if block["type"] == "image"]
    [seen] = model.tool_messages()
    text, image = seen.content
    assert text["type"] == "text"
    assert "[image 2: image/png" in text["text"]  # the text names the image it leaves out
    assert (image["type"], image["mime_type"]) == ("image", "image/png")
    assert base64.b64decode(image["base64"]) == base64.b64decode(png["data"])
    assert seen.artifact == sent.structured_content


class Recorder(BaseCallbackHandler):
    """What a tracer is handed of each tool run: its output (a ToolMessage) or its error."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def on_tool_end(self, output: Any, **kwargs: Any) -> None:
        self.seen.append(f"{output.content!r} {json.dumps(output.artifact)} {output!r}")

    def on_tool_error(self, error: BaseException, **kwargs: Any) -> None:
        self.seen.append(f"{error!s} {error!r}")


def test_secrets_are_masked_in_what_langchains_callbacks_and_verbose_output_see(
    session_of: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    session = session_of(python_server("secret_echo_server.py"), "legacy", env=ENV)
    recorder = Recorder()
    model = calls(("leak", {}))
    config = {"callbacks": [recorder, StdOutCallbackHandler()]}

    create_agent(model, langchain_tools(session)).invoke(ask(), config)
    with raises_mcp("server"):  # a JSON-RPC error is not the model's to mend: the run stops
        create_agent(calls(("fail", {})), langchain_tools(session)).invoke(ask(), config)

    [leaked, failed] = recorder.seen
    assert_masked(leaked, what="on_tool_end's ToolMessage")
    assert_masked(failed, what="on_tool_error's error")
    assert_masked(str(model.tool_messages()[0]), what="what the model read")
    assert_masked(capsys.readouterr().out, what="verbose output (StdOutCallbackHandler)")


# --- the package ---------------------------------------------------------------------------------


def test_importing_the_agents_package_imports_no_langchain() -> None:
    code = (
        "import sys, mcp_notebook.agents\n"
        "frameworks = ('langchain_core', 'langchain', 'langgraph')\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in frameworks)\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=WAIT)


def test_a_source_that_is_no_session_is_refused() -> None:
    with pytest.raises(TypeError, match="not str"):
        langchain_tools("not a session")
