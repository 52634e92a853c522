"""smolagents' ToolCallingAgent calling the demo server's tools through this client (issue #39).

The agent really runs its loop offline: a scripted ``smolagents.models.Model`` whose ``generate``
answers with a tool call of its choosing, then with a ``final_answer`` call carrying what it read
in its second request. Each test asserts what the model was sent (the tools' JSON Schema, the
observation or error it read next), what smolagents printed to its console and what the notebook
recorded, against the demo server as a real process over stdio and over HTTP, in both eras.
smolagents is synchronous: a notebook Session's blocking calls serve it; a core Client is refused.

A server process costs a second to start, a session over a running one milliseconds: the module
starts one demo over HTTP and keeps a session open per route (place and era) for the tests that only
list and call tools that change nothing (they read the newest history entries, never the whole
history). A test that interrupts, times out or answers a dialog opens its own session, over the
module's HTTP demo unless it is about stdio. The full route matrix runs on the main call and the
task-only tool; the others run in one place.
"""

from __future__ import annotations

import base64
import io
import signal
import threading
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("smolagents")

from rich.console import Console
from smolagents import ToolCallingAgent
from smolagents.agent_types import AgentImage
from smolagents.models import (
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
    Model,
    get_tool_json_schema,
)
from smolagents.monitoring import AgentLogger, LogLevel
from smolagents.tools import Tool, validate_tool_arguments

import mcp_notebook
from mcp_notebook import Client, ToolResult
from mcp_notebook.agents import AgentTool, ToolSource, smolagents_tools
from mcp_notebook.agents._smolagents import McpTool
from mcp_notebook.notebook import Group, Session

from .conftest import demo_server, python_server
from .http_peers import sdk_http
from .widget_helpers import wait_for

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

HANG_GUARD = 30  # seconds: only stops a hang, never a measurement


def _text(message: ChatMessage) -> str:
    content = message.content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


class ScriptedModel(Model):  # type: ignore[misc]
    """Calls ``tool`` with ``arguments``, then answers (final_answer) with its last message's text."""

    def __init__(
        self, tool: str, arguments: dict[str, Any], *, also: tuple[tuple[str, dict[str, Any]], ...] = ()
    ) -> None:
        super().__init__(model_id="scripted")
        self.calls = [(tool, arguments), *also]  # more than one: smolagents runs them on threads
        self.requests: list[list[ChatMessage]] = []
        self.tools_offered: list[list[Tool]] = []

    def generate(self, messages: list[Any], stop_sequences: Any = None, response_format: Any = None,
                 tools_to_call_from: Any = None, **kwargs: Any) -> ChatMessage:  # fmt: skip
        self.requests.append(list(messages))
        self.tools_offered.append(list(tools_to_call_from or []))
        calls = self.calls if len(self.requests) == 1 else [("final_answer", {"answer": _text(messages[-1])})]
        tool_calls = [
            ChatMessageToolCall(
                id=f"call-{len(self.requests)}-{index}",
                type="function",
                function=ChatMessageToolCallFunction(name=name, arguments=arguments),
            )
            for index, (name, arguments) in enumerate(calls)
        ]
        return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=tool_calls)

    @property
    def read_next(self) -> str:
        """What the model read of the tool's answer: its second request's last message."""
        assert len(self.requests) == 2, f"the model was asked {len(self.requests)} times"
        return _text(self.requests[1][-1])


def run_agent(tools: list[Tool], model: ScriptedModel) -> tuple[str, str]:
    """Run a ToolCallingAgent to its end: its answer and what it printed to its console."""
    console = io.StringIO()
    logger = AgentLogger(LogLevel.DEBUG, console=Console(file=console, width=200, force_terminal=False))
    agent = ToolCallingAgent(tools=tools, model=model, max_steps=3, logger=logger)
    answer = agent.run("go")
    return str(answer), console.getvalue()


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
    in the session (no interrupt, no close, no dialog) and read only the newest history entries."""
    opened: dict[str, Session] = {}
    try:
        for route in ROUTES:
            transport, era = route.split("-")
            target = demo_server() if transport == "stdio" else http_demo
            opened[route] = mcp_notebook.connect(
                target, show_progress=False, protocol="legacy" if era == "legacy" else "auto"
            )
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
def demo(shared: dict[str, Session]) -> Session:
    """The shared session over stdio in the default era: the one place of the tests that need no matrix."""
    return shared["stdio-modern"]


@pytest.fixture
def fresh(http_demo: str) -> Iterator[Session]:
    """A session of the test's own (its counters and history start empty), over the module's HTTP demo."""
    session = mcp_notebook.connect(http_demo, show_progress=False)
    try:
        yield session
    finally:
        session.close()


def only(tools: list[Tool], name: str) -> Tool:
    [tool] = [t for t in tools if t.name == name]
    return tool


def newest_entry(session: Session, before: int) -> dict[str, Any]:
    """The newest history entry of a shared session, which must be one the test's own call added
    (``before``: the history's length when the test began)."""
    added = session.model.history[before:]
    assert added, "the test's call is not in the session's history"
    return dict(added[-1])


# --- the agent's calls ---------------------------------------------------------------------------


def test_the_agent_calls_a_tool_with_the_models_arguments_and_the_model_reads_the_result(
    session: Session,
) -> None:
    before = len(session.model.history)
    tools = smolagents_tools(session, tools=["add", "sales_records"])
    model = ScriptedModel("add", {"a": 2, "b": 3.5})
    answer, _ = run_agent(tools, model)

    offered = {
        tool.name: get_tool_json_schema(tool)["function"]["parameters"] for tool in model.tools_offered[0]
    }
    [records] = [t.input_schema for t in session.list_tools() if t.name == "sales_records"]
    region = offered["sales_records"]["properties"]["region"]
    assert region["enum"] == records["properties"]["region"]["enum"]  # the argument's schema, kept
    assert region["description"] == records["properties"]["region"]["description"]
    assert offered["sales_records"]["required"] == []  # both optional
    assert offered["add"]["required"] == ["a", "b"]

    assert "Observation:" in model.read_next
    assert "{'result': 5.5}" in model.read_next  # the structured value (add declares an output)
    assert "5.5" in answer
    entry = newest_entry(session, before)
    assert (entry["name"], entry["arguments"], entry["via"]) == ("add", {"a": 2, "b": 3.5}, "smolagents")


def test_tools_the_model_calls_together_run_on_smolagents_threads_through_the_session(demo: Session) -> None:
    before = len(demo.model.history)
    model = ScriptedModel("add", {"a": 1, "b": 2}, also=(("echo", {"text": "side by side"}),))
    run_agent(smolagents_tools(demo, tools=["add", "echo"]), model)
    assert "{'result': 3.0}" in model.read_next
    assert "side by side" in model.read_next
    calls = demo.model.history[before:]
    assert sorted(entry["name"] for entry in calls) == ["add", "echo"]
    assert {entry["via"] for entry in calls} == {"smolagents"}


@pytest.mark.parametrize("route", ["stdio-modern", "stdio-legacy"])
def test_a_tool_error_reaches_the_model_as_the_steps_error_and_the_run_goes_on(
    route: str, shared: dict[str, Session]
) -> None:
    session = shared[route]
    before = len(session.model.history)
    model = ScriptedModel("fail", {"message": "the warehouse is closed"})
    answer, printed = run_agent(smolagents_tools(session, tools=["fail"]), model)
    assert "Error:" in model.read_next
    assert "McpToolError" in model.read_next
    assert "the warehouse is closed" in model.read_next
    assert "the warehouse is closed" in answer  # the run went on to its final answer
    assert "the warehouse is closed" in printed
    assert newest_entry(session, before)["outcome"] == "tool_error"


def test_an_argument_this_client_refuses_is_told_to_the_model_and_nothing_is_sent(demo: Session) -> None:
    # smolagents checks types only; the enum is this client's check, before sending
    before = len(demo.model.history)
    model = ScriptedModel("sales_records", {"region": "atlantis"})
    answer, _ = run_agent(smolagents_tools(demo, tools=["sales_records"]), model)
    assert "Error:" in model.read_next
    assert "nothing was sent" in model.read_next
    assert "nothing was sent" in answer
    assert newest_entry(demo, before)["outcome"] == "invalid"


def test_a_calls_deadline_is_kept_and_the_model_is_told_the_call_timed_out(http_demo: str) -> None:
    session = mcp_notebook.connect(http_demo, show_progress=False, timeout=0.5)
    try:
        model = ScriptedModel("slow_count", {"steps": 600, "delay": 0.1})
        answer, _ = run_agent(smolagents_tools(session, tools=["slow_count"]), model)
        assert session.model.history[-1]["outcome"] == "timeout"
    finally:
        session.close()
    assert "Error:" in model.read_next
    assert "McpTimeout" in model.read_next
    assert "McpTimeout" in answer  # the run went on


def test_an_optional_argument_the_model_sets_to_null_is_left_out(demo: Session) -> None:
    before = len(demo.model.history)
    model = ScriptedModel("sales_records", {"region": None, "limit": 2})
    answer, _ = run_agent(smolagents_tools(demo, tools=["sales_records"]), model)
    assert newest_entry(demo, before)["arguments"] == {"limit": 2}
    assert answer.count("'date'") == 2


def test_a_task_only_tool_is_followed_to_its_result(session: Session) -> None:
    model = ScriptedModel("build_report", {"topic": "regions", "sections": 2, "delay": 0})
    answer, _ = run_agent(smolagents_tools(session, tools=["build_report"]), model)
    assert "Observation:" in model.read_next
    assert "'topic': 'regions'" in model.read_next
    assert "'number': 2" in answer


# --- dialogs and interrupts -----------------------------------------------------------------------


@pytest.mark.parametrize("route", ["stdio-modern", "http-modern", "http-legacy"])
def test_an_elicitation_during_the_agents_call_shows_its_dialog_and_the_answer_reaches_the_server(
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
        answer, _ = run_agent(smolagents_tools(session, tools=["ask_user_name"]), model)
    finally:
        answering.join(HANG_GUARD)
        session.close()
    assert "Welcome, Ada! Nice to meet you." in answer
    assert len(shown) == 1  # under the running cell
    assert dialogs.history[-1].answered


@pytest.mark.usefixtures("default_sigint")
def test_an_interrupted_cell_cancels_the_agents_call_on_the_server(fresh: Session) -> None:
    demo = fresh
    if not hasattr(signal, "pthread_kill"):
        pytest.skip("needs signal.pthread_kill")
    main = threading.main_thread().ident
    assert main == threading.get_ident()
    client = demo.client  # its stats are a snapshot each time they are read

    def interrupt() -> None:  # what a kernel interrupt does, once the call is on the wire
        wait_for(lambda: client.stats.in_flight == 1, HANG_GUARD, "the agent's call")
        signal.pthread_kill(main, signal.SIGINT)  # type: ignore[arg-type]

    model = ScriptedModel("slow_count", {"steps": 600, "delay": 0.1})
    interrupter = threading.Thread(target=interrupt)
    interrupter.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run_agent(smolagents_tools(demo, tools=["slow_count"]), model)
    finally:
        interrupter.join(HANG_GUARD)
    wait_for(lambda: client.stats.in_flight == 0, HANG_GUARD, "the call to end")
    assert client.stats.cancellations == 1
    entry = demo.model.history[-1]
    assert (entry["name"], entry["outcome"], entry["via"]) == ("slow_count", "cancelled", "smolagents")
    assert len(model.requests) == 1  # the run ended with the interrupt
    assert demo.call_tool("echo", {"text": "still here"}).text == "still here"


# --- groups, sources, secrets, results ------------------------------------------------------------


def test_a_groups_tools_keep_their_prefixed_names_and_reach_their_server(http_demo: str) -> None:
    group = Group({"sales": http_demo, "ops": http_demo}, show_progress=False)
    try:
        tools = smolagents_tools(group, tools=["sales.add", "ops.add"])
        assert sorted(t.name for t in tools) == ["ops_add", "sales_add"]
        answer, _ = run_agent(tools, ScriptedModel("sales_add", {"a": 1, "b": 1}))
        assert "{'result': 2.0}" in answer
        entry = group["sales"].model.history[-1]
        assert (entry["name"], entry["via"]) == ("add", "smolagents")
        assert group["ops"].model.history == []
    finally:
        group.close()


def test_a_core_client_is_refused_when_the_tools_are_made_not_at_the_first_call() -> None:
    client = Client(demo_server())
    with pytest.raises(TypeError, match="async only"):
        smolagents_tools(client)


def test_a_secret_the_server_echoes_is_masked_in_what_smolagents_prints_and_the_model_reads() -> None:
    from .test_secret_echo import ENV, SERVER, assert_masked

    session = mcp_notebook.connect(SERVER, env=ENV, show_progress=False)
    try:
        tools = smolagents_tools(session)
        for name in ("leak", "fail"):  # a result, then a server's error
            model = ScriptedModel(name, {})
            answer, printed = run_agent(tools, model)
            assert_masked(printed, what=f"smolagents' console ({name})")
            assert_masked(model.read_next, what=f"what the model read ({name})")
            assert_masked(answer, what=f"the answer ({name})")
    finally:
        session.close()


# --- the schema as smolagents takes it ------------------------------------------------------------

RICH_SCHEMA = {
    "type": "object",
    "properties": {
        "when": {
            "anyOf": [{"type": "string", "format": "date"}, {"type": "integer"}],
            "description": "a day",
        },
        "where": {"$ref": "#/$defs/Place"},
        "note": {"type": ["string", "null"]},
        "anything": {},
        "ratio": {"type": "number", "minimum": 0},
    },
    "required": ["when", "where", "anything", "ratio"],
    "$defs": {"Place": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
}


def test_a_schemas_unions_references_and_optional_arguments_reach_smolagents_faithfully(
    demo: Session,
) -> None:
    tool = McpTool(ToolSource(demo, framework="smolagents"), AgentTool("rich", "rich", "Rich.", RICH_SCHEMA))
    sent = get_tool_json_schema(tool)["function"]["parameters"]
    assert sent["required"] == ["when", "where", "anything", "ratio"]
    assert sent["properties"]["when"]["type"] == ["string", "integer"]
    assert sent["properties"]["when"]["allOf"] == [{"anyOf": RICH_SCHEMA["properties"]["when"]["anyOf"]}]
    assert sent["properties"]["where"]["properties"] == {"city": {"type": "string"}}  # inlined
    assert sent["properties"]["where"]["type"] == "object"
    assert sent["properties"]["note"]["type"] == ["string", "null"]
    assert sent["properties"]["anything"]["type"] == [
        "string",
        "number",
        "integer",
        "boolean",
        "array",
        "object",
        "null",
    ]
    assert tool.description == "Rich."  # nothing lost, nothing appended
    # smolagents' own check of a call accepts what the schema accepts
    validate_tool_arguments(tool, {"when": 3, "where": {"city": "Oslo"}, "anything": [1], "ratio": 1})
    validate_tool_arguments(
        tool, {"when": "2026-01-01", "where": {}, "anything": None, "ratio": 0.5, "note": None}
    )
    with pytest.raises(ValueError, match="ratio is required"):
        validate_tool_arguments(tool, {"when": 3, "where": {}, "anything": 1})


def test_what_smolagents_cannot_say_is_kept_in_the_description(demo: Session) -> None:
    looping = {
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/Node"}},
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
            }
        },
        "additionalProperties": True,
    }
    tool = McpTool(ToolSource(demo, framework="smolagents"), AgentTool("tree", "tree", "A tree.", looping))
    assert tool.description.startswith("A tree.\n\nArguments (JSON Schema): ")
    assert '"additionalProperties": true' in tool.description
    assert tool.inputs["tree"]["type"] == "object"


class _OneImage:
    """A notebook-like source whose one tool answers with one PNG: smolagents' image output."""

    PNG = base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
    )

    def call_tool(self, name: str, arguments: Any, **options: Any) -> ToolResult:
        block = {"type": "image", "mimeType": "image/png", "data": base64.b64encode(self.PNG).decode()}
        return ToolResult(content=[block])

    async def acall_tool(self, name: str, arguments: Any, **options: Any) -> ToolResult:
        return self.call_tool(name, arguments)


def test_a_result_that_is_one_image_is_an_agent_image() -> None:
    source = ToolSource(_OneImage(), framework="smolagents")
    tool = McpTool(source, AgentTool("plot", "plot", "Draw.", {"type": "object", "properties": {}}))
    output = tool(sanitize_inputs_outputs=True)
    assert isinstance(output, AgentImage)
    assert output.to_raw().size == (1, 1)


def test_a_result_with_text_and_an_image_reads_as_text_naming_the_image() -> None:
    session = mcp_notebook.connect(python_server("pictures_server.py"), show_progress=False)
    try:
        tool = only(smolagents_tools(session, tools=["execute_cell"]), "execute_cell")
        output = tool(sanitize_inputs_outputs=True)
    finally:
        session.close()
    assert "[image 2: image/png" in str(output)
