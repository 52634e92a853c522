"""A model the notebook already uses answers a server's sampling request (issue #39, item 4).

``sampling=`` takes a pydantic-ai model or a LangChain chat model besides a handler function. The
models here are the frameworks' own offline doubles: pydantic-ai's ``FunctionModel`` and LangChain's
``GenericFakeChatModel``, each recording what it was asked. They answer the demo server's
``summarize`` tool (which asks the client for a ``sampling/createMessage``) over stdio and HTTP, in
both eras, through the core ``Client``, a ``ClientGroup`` and the notebook ``Session``, whose
sampling dialog asks for approval before the model is asked; and an in-process server of ours that
sends a richer request (images, an assistant turn, limits, model hints) reads back what it got, or
the refusal of a request with sampling ``tools``.

A server process costs a second to start, a connection to a running one milliseconds: the module
starts one demo over HTTP (the SDK's dual-era server: ``protocol="legacy"`` opens a legacy session on
it) and each test connects afresh with its own model. The stdio/HTTP x era matrix runs on each
framework's model answering ``summarize``; the sessions' approval dialogs connect over the module's
HTTP demo, in both eras.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")
pytest.importorskip("langchain_core")

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from mcp import types
from mcp.server.mcpserver import Context, MCPServer
from pydantic_ai.messages import (
    BinaryContent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

import mcp_notebook
from mcp_notebook import Client, ClientGroup
from tests.http_peers import sdk_http
from tests.raises import raises_mcp

from .conftest import demo_server
from .widget_helpers import wait_for

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

DEMO = demo_server()
TEXT = "The quick brown fox jumps over the lazy dog, again and again, all afternoon."
PNG = b"\x89PNG\r\n\x1a\n-not-really-a-picture"


# --- the models ---------------------------------------------------------------------------------


class PydanticAiModel:
    """A pydantic-ai ``FunctionModel`` that records each request (its messages and settings)."""

    def __init__(self, answer: str = "A fox jumps, repeatedly.", **response: Any) -> None:
        self.asked: list[tuple[list[ModelMessage], dict[str, Any]]] = []

        def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            self.asked.append((messages, dict(info.model_settings or {})))
            return ModelResponse(parts=[TextPart(answer)], **response)

        self.model = FunctionModel(reply, model_name="recording-function-model")


class RecordingFakeChatModel(GenericFakeChatModel):
    """LangChain's fake chat model, recording what it is asked; its ``max_tokens`` and
    ``temperature`` are the standard parameters a real chat model has."""

    asked: list[dict[str, Any]]
    max_tokens: int | None = None
    temperature: float | None = None

    def _generate(
        self, messages: list[BaseMessage], stop: list[str] | None = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        self.asked.append(
            {
                "messages": messages,
                "stop": stop,
                "max_tokens": self.max_tokens,
                "temperature": self.temperature,
            }
        )
        return super()._generate(messages, stop, run_manager, **kw)


def _langchain_model(answer: str = "A fox, jumping.", **metadata: Any) -> RecordingFakeChatModel:
    return RecordingFakeChatModel(
        messages=iter([AIMessage(answer, response_metadata=metadata)] * 10), asked=[]
    )


# --- transports ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def http_demo() -> Iterator[str]:
    """One demo server over HTTP for the module, serving both eras. A module fixture is set up before
    ``no_leaked_processes`` looks, so it is no leak."""
    with sdk_http("modern") as peer:
        yield peer.url


def _demo_target(transport: str, http_demo: str) -> tuple[Any, str]:
    """The demo server as (target, protocol): over stdio, or the module's over HTTP in that era."""
    if transport.startswith("stdio"):
        return DEMO, transport.removeprefix("stdio-")
    return http_demo, transport.removeprefix("http-")


TRANSPORTS = ["stdio-auto", "stdio-legacy", "http-modern", "http-legacy"]


# --- the core Client ----------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_pydantic_ai_model_answers_summarize(transport: str, http_demo: str) -> None:
    recorder = PydanticAiModel()
    target, protocol = _demo_target(transport, http_demo)
    async with Client(target, protocol=protocol, sampling=recorder.model) as client:
        result = await client.call_tool("summarize", {"text": TEXT, "max_words": 20})
    assert not result.is_error, result.text
    assert result.text == "A fox jumps, repeatedly."
    [(messages, settings)] = recorder.asked
    [request] = messages
    assert isinstance(request, ModelRequest)
    system, user = request.parts
    assert isinstance(system, SystemPromptPart)
    assert system.content == "You are a concise assistant. Reply with the summary only."
    assert isinstance(user, UserPromptPart)
    assert user.content == f"Summarize the following text in at most 20 words:\n\n{TEXT}"
    assert settings == {"max_tokens": 80}  # the demo asks for max(64, 4 * max_words)


@pytest.mark.anyio
@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_langchain_chat_model_answers_summarize(transport: str, http_demo: str) -> None:
    model = _langchain_model()
    target, protocol = _demo_target(transport, http_demo)
    async with Client(target, protocol=protocol, sampling=model) as client:
        result = await client.call_tool("summarize", {"text": TEXT, "max_words": 20})
    assert not result.is_error, result.text
    assert result.text == "A fox, jumping."
    [asked] = model.asked
    system, user = asked["messages"]
    assert (system.type, system.content) == (
        "system",
        "You are a concise assistant. Reply with the summary only.",
    )
    assert (user.type, user.content) == (
        "human",
        f"Summarize the following text in at most 20 words:\n\n{TEXT}",
    )
    assert asked["max_tokens"] == 80  # set on a copy, for this request only
    assert model.max_tokens is None


@pytest.mark.anyio
async def test_a_client_group_gives_each_member_the_model(http_demo: str) -> None:
    recorder = PydanticAiModel("grouped")
    async with ClientGroup({"one": http_demo, "two": http_demo}, sampling=recorder.model) as group:
        first = await group.call_tool("one.summarize", {"text": TEXT})
        second = await group.call_tool("two.summarize", {"text": TEXT})
    assert (first.text, second.text) == ("grouped", "grouped")
    assert len(recorder.asked) == 2


# --- everything a request holds, and what the server gets back ----------------------------------


def _asking_server() -> MCPServer:
    """A server whose ``ask`` sends a sampling request with every field (``tools`` when asked) and
    returns the CreateMessageResult it got as JSON, or the error it got."""
    server = MCPServer("asker")

    @server.tool()
    async def ask(ctx: Context, tools: bool = False) -> str:
        picture = types.ImageContent(type="image", data=base64.b64encode(PNG).decode(), mime_type="image/png")
        params = types.CreateMessageRequestParams(
            messages=[
                types.SamplingMessage(
                    role="user", content=[types.TextContent(type="text", text="Look:"), picture]
                ),
                types.SamplingMessage(
                    role="assistant", content=types.TextContent(type="text", text="A picture.")
                ),
                types.SamplingMessage(role="user", content=types.TextContent(type="text", text="Of what?")),
            ],
            system_prompt="Be brief.",
            max_tokens=33,
            temperature=0.25,
            stop_sequences=["END"],
            model_preferences=types.ModelPreferences(hints=[types.ModelHint(name="some-other-model")]),
            tools=[types.Tool(name="lookup", input_schema={"type": "object"})] if tools else None,
        )
        request = types.CreateMessageRequest(params=params)
        try:
            answer = await ctx.session.send_request(request, types.CreateMessageResult)
        except Exception as error:
            return f"refused: {error}"
        return json.dumps(answer.model_dump(mode="json", by_alias=True, exclude_none=True))

    return server


@pytest.mark.anyio
async def test_a_pydantic_ai_model_gets_the_whole_request() -> None:
    recorder = PydanticAiModel("A chart.", finish_reason="length")
    async with Client(_asking_server(), protocol="legacy", sampling=recorder.model) as client:
        got = json.loads((await client.call_tool("ask")).text)
    # the model given is the model, whatever the server hinted
    assert got == {
        "role": "assistant",
        "content": {"type": "text", "text": "A chart."},
        "model": "recording-function-model",
        "stopReason": "maxTokens",
    }
    [(messages, settings)] = recorder.asked
    first, answered, second = messages
    assert isinstance(first, ModelRequest)
    assert isinstance(answered, ModelResponse)
    assert isinstance(second, ModelRequest)
    system, look = first.parts
    assert isinstance(system, SystemPromptPart)
    assert system.content == "Be brief."
    assert isinstance(look, UserPromptPart)
    assert look.content == ["Look:", BinaryContent(data=PNG, media_type="image/png")]
    assert [part.content for part in answered.parts] == ["A picture."]  # type: ignore[union-attr]
    assert [part.content for part in second.parts] == ["Of what?"]  # type: ignore[union-attr]
    assert settings == {"max_tokens": 33, "temperature": 0.25, "stop_sequences": ["END"]}


@pytest.mark.anyio
async def test_a_langchain_chat_model_gets_the_whole_request() -> None:
    model = _langchain_model("A chart.", finish_reason="stop", model_name="fake-chat-1")
    async with Client(_asking_server(), protocol="legacy", sampling=model) as client:
        got = json.loads((await client.call_tool("ask")).text)
    assert got == {
        "role": "assistant",
        "content": {"type": "text", "text": "A chart."},
        "model": "fake-chat-1",
        "stopReason": "endTurn",
    }
    [asked] = model.asked
    system, look, answered, second = asked["messages"]
    assert (system.type, system.content) == ("system", "Be brief.")
    assert look.type == "human"
    text, image = look.content
    assert text == {"type": "text", "text": "Look:"}
    assert (image["type"], image["mime_type"], base64.b64decode(image["base64"])) == (
        "image",
        "image/png",
        PNG,
    )
    assert (answered.type, answered.content) == ("ai", "A picture.")
    assert (second.type, second.content) == ("human", "Of what?")
    assert (asked["stop"], asked["max_tokens"], asked["temperature"]) == (["END"], 33, 0.25)


@pytest.mark.anyio
@pytest.mark.parametrize("framework", ["pydantic-ai", "langchain"])
async def test_a_request_with_sampling_tools_is_refused_to_the_server(framework: str) -> None:
    recorder = PydanticAiModel()
    langchain = _langchain_model()
    model = recorder.model if framework == "pydantic-ai" else langchain
    async with Client(_asking_server(), protocol="legacy", sampling=model) as client:
        text = (await client.call_tool("ask", {"tools": True})).text
    assert text.startswith("refused: ")
    assert "takes no tools" in text
    assert recorder.asked == []
    assert langchain.asked == []


def test_something_else_is_still_refused_at_once() -> None:
    with pytest.raises(TypeError, match="pydantic-ai or LangChain chat model"):
        Client(DEMO, sampling=object())


# --- the notebook Session: the approval dialog --------------------------------------------------


class Approver:
    """A thread that answers the next sampling dialog of ``dialogs`` with ``act(dialog)``."""

    def __init__(self, dialogs: Any, act: Callable[[Any], None]) -> None:
        self.dialogs = dialogs
        self.act = act
        self.seen: list[Any] = []
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            wait_for(lambda: self.dialogs.open_dialogs, 15, "a dialog to open")
            dialog = self.dialogs.open_dialogs[0]
            self.seen.append(dialog)
            self.act(dialog)
        except BaseException as exc:
            self.error = exc

    def done(self) -> Any:
        self._thread.join(15)
        if self.error is not None:
            raise self.error
        assert self.seen, "no dialog was answered"
        return self.seen[0]


def _dialogs() -> Any:
    from mcp_notebook.widgets._dialogs import NotebookDialogs

    return NotebookDialogs("demo", output=lambda widget: None)


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
@pytest.mark.parametrize("framework", ["pydantic-ai", "langchain"])
def test_the_session_asks_the_model_only_once_approved(protocol: str, framework: str, http_demo: str) -> None:
    pytest.importorskip("ipywidgets")
    recorder = PydanticAiModel("Approved summary.")
    langchain = _langchain_model("Approved summary.")
    model = recorder.model if framework == "pydantic-ai" else langchain
    dialogs = _dialogs()
    asked_before_approval: list[int] = []

    def approve(dialog: Any) -> None:
        asked_before_approval.append(len(recorder.asked) + len(langchain.asked))
        dialog.send_button.click()

    with mcp_notebook.connect(
        http_demo, protocol=protocol, show_progress=False, dialogs=dialogs, sampling=model
    ) as session:
        approver = Approver(dialogs, approve)
        result = session.call_tool("summarize", {"text": TEXT, "max_words": 5})
        dialog = approver.done()
    assert result.text == "Approved summary."
    assert asked_before_approval == [0]  # the dialog came first
    assert len(recorder.asked) + len(langchain.asked) == 1
    assert dialog.kind == "sampling"
    assert "mcpnb-sampling-send" in dialog.send_button._dom_classes
    name = "recording-function-model" if framework == "pydantic-ai" else "RecordingFakeChatModel"
    assert dialog.send_button.description == f"Ask {name}"
    assert not hasattr(dialog, "reply")  # nothing to write: the model answers
    assert "Summarize the following text in at most 5 words" in dialog.text()


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_rejecting_the_dialog_refuses_the_server_and_never_asks_the_model(
    protocol: str, http_demo: str
) -> None:
    pytest.importorskip("ipywidgets")
    recorder = PydanticAiModel()
    dialogs = _dialogs()
    with mcp_notebook.connect(
        http_demo, protocol=protocol, show_progress=False, dialogs=dialogs, sampling=recorder.model
    ) as session:
        approver = Approver(dialogs, lambda dialog: dialog.reject_button.click())
        # Legacy: the server got the JSON-RPC error (code -1) and failed the call with it. Modern
        # input_required has no error channel back to the server: the caller gets the error.
        with raises_mcp("server" if protocol == "legacy" else "cancelled", match="rejected"):
            session.call_tool("summarize", {"text": TEXT})
        dialog = approver.done()
    assert dialog.error is not None
    assert dialog.error.code == -1
    assert recorder.asked == []


def test_a_groups_member_asks_for_approval_too(http_demo: str) -> None:
    pytest.importorskip("ipywidgets")
    model = _langchain_model("Grouped and approved.")
    dialogs = _dialogs()
    group = mcp_notebook.connect_all(
        {"sales": http_demo}, show_progress=False, register=False, dialogs=dialogs, sampling=model
    )
    try:
        approver = Approver(dialogs, lambda dialog: dialog.send_button.click())
        result = group.call_tool("sales.summarize", {"text": TEXT})
        approver.done()
    finally:
        group.close()
    assert result.text == "Grouped and approved."
    assert len(model.asked) == 1


def test_sampling_approval_false_lets_the_model_answer_alone(http_demo: str) -> None:
    recorder = PydanticAiModel("Unasked.")
    dialogs = _dialogs()
    with mcp_notebook.connect(
        http_demo, show_progress=False, dialogs=dialogs, sampling=recorder.model, sampling_approval=False
    ) as session:
        assert session.call_tool("summarize", {"text": TEXT}).text == "Unasked."
    assert dialogs.history == []
    assert len(recorder.asked) == 1


def test_a_session_with_nowhere_to_ask_says_so_at_once() -> None:
    # No kernel here, and no dialogs given: nobody could approve, so the session is refused.
    with pytest.raises(ValueError, match="sampling_approval=False"):
        mcp_notebook.connect(DEMO, show_progress=False, sampling=PydanticAiModel().model)


# --- imports ------------------------------------------------------------------------------------


def test_no_framework_is_imported_unless_its_model_is_given() -> None:
    code = (
        "import sys, mcp_notebook, mcp_notebook.notebook\n"
        "from mcp_notebook import Client\n"
        f"Client({DEMO!r}, sampling=lambda params: 'a reply')\n"
        "print(','.join(sorted({'pydantic_ai', 'langchain_core'} & set(sys.modules))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "", f"loaded {out.stdout.strip()}"


# --- the request as read for a model (protocol/_sampling.py: no I/O) ----------------------------


def _request(**changes: Any) -> dict[str, Any]:
    return {
        "messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
        "maxTokens": 9,
        **changes,
    }


@pytest.mark.parametrize(
    ("params", "match"),
    [
        (_request(tools=[{"name": "t", "inputSchema": {"type": "object"}}]), "takes no tools"),
        (_request(toolChoice={"mode": "none"}), "takes no tools"),
        (
            _request(
                messages=[{"role": "assistant", "content": [{"type": "tool_use", "id": "1", "name": "t"}]}]
            ),
            r"messages\[0\] holds a tool_use block",
        ),
        (
            _request(messages=[{"role": "user", "content": {"type": "tool_result", "toolUseId": "1"}}]),
            "tool_result block",
        ),
        (_request(messages=[{"role": "system", "content": {"type": "text", "text": "x"}}]), "role"),
        (_request(messages=[]), "non-empty"),
        (
            _request(
                messages=[
                    {"role": "user", "content": {"type": "image", "data": "%%", "mimeType": "image/png"}}
                ]
            ),
            "not base64",
        ),
        (_request(messages=[{"role": "user", "content": {"type": "resource_link"}}]), "'resource_link'"),
        (_request(maxTokens="many"), "maxTokens"),
        (_request(temperature=True), "temperature"),
        (_request(stopSequences="END"), "stopSequences"),
    ],
)
def test_what_a_model_cannot_be_asked_is_refused_as_invalid_params(
    params: dict[str, Any], match: str
) -> None:
    from mcp_notebook.protocol._sampling import read_sampling_request

    with raises_mcp("invalid", match=match) as caught:
        read_sampling_request(params)
    assert caught.value.code == -32602


def test_stop_reasons_in_the_specs_words() -> None:
    from mcp_notebook.protocol._sampling import stop_reason

    words = [
        "stop",
        "end_turn",
        "length",
        "max_tokens",
        "stop_sequence",
        "tool_calls",
        "content_filter",
        None,
        "",
    ]
    assert [stop_reason(word) for word in words] == [
        "endTurn",
        "endTurn",
        "maxTokens",
        "maxTokens",
        "stopSequence",
        "toolUse",
        "content_filter",
        None,
        None,
    ]
