"""A LangChain chat model (``BaseChatModel``) answering ``sampling/createMessage``.

Imported only when such a model is given as ``sampling=`` (:mod:`._model_sampling`). The request is
read once (:func:`~mcp_notebook.protocol._sampling.read_sampling_request`) and asked with
``ainvoke``: the system prompt as a ``SystemMessage``, user turns as ``HumanMessage`` and assistant
turns as ``AIMessage``, their images and audio as LangChain's standard content blocks (the model
takes them or says it cannot); ``stopSequences`` as ``stop=``. ``maxTokens`` and ``temperature``
are LangChain's standard parameters, set on the model's own field of that name (on a copy, for this
request only) when its class has one, and left to the model when it has none (a fake model). The
answer is the message's text, ``model`` the name in its metadata (else the model's ``model_name`` or
``model``, else its class's name), ``stopReason`` its ``finish_reason``/``stop_reason`` in the spec's
words.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.messages.content import create_audio_block, create_image_block

from ..protocol._errors import INTERNAL_ERROR, McpError
from ..protocol._sampling import Block, SamplingRequest, read_sampling_request, sampling_answer, stop_reason

__all__ = ["name_of", "sampler"]


def name_of(model: BaseChatModel) -> str:
    for attribute in ("model_name", "model"):
        name = getattr(model, attribute, None)
        if isinstance(name, str) and name:
            return name
    return type(model).__name__


def sampler(model: BaseChatModel) -> Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]:
    """The ``sampling=`` handler that asks ``model``."""

    async def ask_langchain_model(params: dict[str, Any]) -> dict[str, Any]:
        request = read_sampling_request(params)
        stop = list(request.stop_sequences) or None
        answer = await _limited(model, request).ainvoke(_messages(request), stop=stop)
        text = answer.text
        if not text and getattr(answer, "tool_calls", None):
            raise McpError(
                "invalid",
                f"the model {name_of(model)!r} asked to call a tool, and the server offered none",
                code=INTERNAL_ERROR,
            )
        metadata = answer.response_metadata or {}
        named = metadata.get("model_name") or metadata.get("model")
        native = metadata.get("finish_reason") or metadata.get("stop_reason")
        return sampling_answer(
            str(text), named if isinstance(named, str) and named else name_of(model), stop_reason(native)
        )

    return ask_langchain_model


def _limited(model: BaseChatModel, request: SamplingRequest) -> BaseChatModel:
    """``model``, or a copy with the request's ``max_tokens``/``temperature`` on its own fields."""
    wanted = {"max_tokens": request.max_tokens, "temperature": request.temperature}
    update: dict[str, Any] = {}
    for name, field in type(model).model_fields.items():
        for standard, value in wanted.items():
            if value is not None and standard in (name, field.alias):
                update[name] = value
    return model.model_copy(update=update) if update else model


def _messages(request: SamplingRequest) -> list[BaseMessage]:
    messages: list[BaseMessage] = []
    if request.system_prompt:
        messages.append(SystemMessage(content=request.system_prompt))
    for message in request.messages:
        blocks = message.blocks
        # one text block as a plain string: what every chat model takes, older ones included
        content: Any = (
            blocks[0] if len(blocks) == 1 and isinstance(blocks[0], str) else list(map(_block, blocks))
        )
        messages.append(
            HumanMessage(content=content) if message.role == "user" else AIMessage(content=content)
        )
    return messages


def _block(block: Block) -> dict[str, Any]:
    if isinstance(block, str):
        return {"type": "text", "text": block}
    make = create_image_block if block.kind == "image" else create_audio_block
    return dict(make(base64=block.base64(), mime_type=block.mime_type))
