"""A pydantic-ai ``Model`` (``TestModel`` and ``FunctionModel`` too) answering ``sampling/createMessage``.

Imported only when such a model is given as ``sampling=`` (:mod:`._model_sampling`). The request is
read once (:func:`~mcp_notebook.protocol._sampling.read_sampling_request`) and asked through
pydantic-ai's direct API (``pydantic_ai.direct.model_request``, which prepares the request as an
agent's run would): the system prompt as a ``SystemPromptPart``, each user turn as a
``ModelRequest`` (text, and images and audio as ``BinaryContent``: the model takes them or says it
cannot), each assistant turn as a ``ModelResponse``; ``maxTokens``, ``temperature`` and
``stopSequences`` as ``ModelSettings``. The answer is the response's text, ``model`` its
``model_name`` (else the model's), ``stopReason`` its ``finish_reason`` in the spec's words.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic_ai.direct import model_request
from pydantic_ai.messages import (
    BinaryContent,
    FilePart,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelResponsePart,
    SystemPromptPart,
    TextPart,
    UserContent,
    UserPromptPart,
)
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings

from ..protocol._errors import INTERNAL_ERROR, McpError
from ..protocol._sampling import (
    Block,
    SamplingRequest,
    read_sampling_request,
    sampling_answer,
    stop_reason,
)

__all__ = ["name_of", "sampler"]


def name_of(model: Model) -> str:
    return str(model.model_name)


def sampler(model: Model) -> Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]:
    """The ``sampling=`` handler that asks ``model``."""

    async def ask_pydantic_ai_model(params: dict[str, Any]) -> dict[str, Any]:
        request = read_sampling_request(params)
        response = await model_request(model, _messages(request), model_settings=_settings(request))
        text = response.text
        if text is None and response.tool_calls:
            raise McpError(
                "invalid",
                f"the model {name_of(model)!r} asked to call a tool, and the server offered none",
                code=INTERNAL_ERROR,
            )
        return sampling_answer(
            text or "", response.model_name or name_of(model), stop_reason(response.finish_reason)
        )

    return ask_pydantic_ai_model


def _settings(request: SamplingRequest) -> ModelSettings:
    settings = ModelSettings()
    if request.max_tokens is not None:
        settings["max_tokens"] = request.max_tokens
    if request.temperature is not None:
        settings["temperature"] = request.temperature
    if request.stop_sequences:
        settings["stop_sequences"] = list(request.stop_sequences)
    return settings


def _messages(request: SamplingRequest) -> list[ModelMessage]:
    """The turns as pydantic-ai's history: consecutive user turns share one ``ModelRequest``,
    consecutive assistant turns one ``ModelResponse``; the system prompt opens the first request."""
    messages: list[ModelMessage] = []
    asked: list[ModelRequestPart] = []
    if request.system_prompt:
        asked.append(SystemPromptPart(content=request.system_prompt))
    answered: list[ModelResponsePart] = []
    for message in request.messages:
        if message.role == "user":
            if answered:
                messages.append(ModelResponse(parts=answered))
                answered = []
            first, blocks = message.blocks[0], message.blocks
            plain = len(blocks) == 1 and isinstance(first, str)
            asked.append(
                UserPromptPart(
                    content=first if isinstance(first, str) and plain else [_user_content(b) for b in blocks]
                )
            )
        else:
            if asked:
                messages.append(ModelRequest(parts=asked))
                asked = []
            answered.extend(_response_part(block) for block in message.blocks)
    if answered:
        messages.append(ModelResponse(parts=answered))
    if asked:
        messages.append(ModelRequest(parts=asked))
    return messages


def _user_content(block: Block) -> UserContent:
    if isinstance(block, str):
        return block
    return BinaryContent(data=block.data, media_type=block.mime_type)


def _response_part(block: Block) -> ModelResponsePart:
    if isinstance(block, str):
        return TextPart(content=block)
    return FilePart(content=BinaryContent(data=block.data, media_type=block.mime_type))
