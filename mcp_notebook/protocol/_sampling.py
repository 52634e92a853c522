"""A server's ``sampling/createMessage`` request read for a model, and the answer built from it.

Why here: a model object given as ``sampling=`` (pydantic-ai, LangChain: ``connection/_model_sampling``)
answers the request, and each framework's adapter needs the same reading of it (which messages, which
blocks, which limits) and the same shape of answer. Reading it once, without I/O, keeps both adapters
to the framework's own types and keeps the rules testable by table.

What is read: ``messages`` (each a ``user`` or ``assistant`` turn of text, image and audio blocks, one
block or a list as 2025-11-25 allows), ``systemPrompt``, ``maxTokens``, ``temperature``,
``stopSequences``. ``modelPreferences`` is not read: the model given is the model, whatever the
server hints. ``includeContext`` is not read either: a model object has no other server's context to
include (the spec lets a client ignore it). What is refused (:class:`McpError` kind "invalid", code
-32602, which a legacy server receives as its request's error): the 2025-11-25 sampling ``tools`` and
``toolChoice`` and ``tool_use``/``tool_result`` blocks (this client does not declare
``sampling.tools``, so a server that sends them broke the protocol), and any shape that is not the
spec's.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from typing import Any, Literal

from ._errors import INVALID_PARAMS, McpError

__all__ = [
    "Media",
    "SamplingMessage",
    "SamplingRequest",
    "read_sampling_request",
    "sampling_answer",
    "stop_reason",
]


@dataclass(frozen=True)
class Media:
    """An image or audio block: its decoded bytes and MIME type."""

    kind: Literal["image", "audio"]
    data: bytes
    mime_type: str

    def base64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")


#: One block of a message: its text, or a picture or sound.
Block = str | Media


@dataclass(frozen=True)
class SamplingMessage:
    role: Literal["user", "assistant"]
    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class SamplingRequest:
    """What a model is asked: the turns, the system prompt and the limits the server set."""

    messages: tuple[SamplingMessage, ...]
    system_prompt: str | None
    max_tokens: int | None
    temperature: float | None
    stop_sequences: tuple[str, ...]


def _refuse(message: str) -> McpError:
    return McpError("invalid", f"sampling/createMessage: {message}", code=INVALID_PARAMS)


def read_sampling_request(params: dict[str, Any]) -> SamplingRequest:
    """``params`` of a ``sampling/createMessage`` request, read; McpError "invalid" as the module says."""
    if params.get("tools") or params.get("toolChoice") is not None:
        raise _refuse(
            "this client's model takes no tools in a sampling request (it does not declare "
            "sampling.tools); ask without 'tools' and 'toolChoice'"
        )
    raw_messages = params.get("messages")
    if not isinstance(raw_messages, list) or not raw_messages:
        raise _refuse("'messages' must be a non-empty list")
    messages = tuple(_message(i, m) for i, m in enumerate(raw_messages))
    system = params.get("systemPrompt")
    if system is not None and not isinstance(system, str):
        raise _refuse("'systemPrompt' must be a string")
    max_tokens = params.get("maxTokens")
    if max_tokens is not None and (not isinstance(max_tokens, int) or isinstance(max_tokens, bool)):
        raise _refuse("'maxTokens' must be an integer")
    temperature = params.get("temperature")
    if temperature is not None and (
        not isinstance(temperature, int | float) or isinstance(temperature, bool)
    ):
        raise _refuse("'temperature' must be a number")
    stops = params.get("stopSequences")
    if stops is not None and (not isinstance(stops, list) or not all(isinstance(s, str) for s in stops)):
        raise _refuse("'stopSequences' must be a list of strings")
    return SamplingRequest(
        messages=messages,
        system_prompt=system or None,
        max_tokens=max_tokens,
        temperature=None if temperature is None else float(temperature),
        stop_sequences=tuple(stops or ()),
    )


def _message(index: int, raw: Any) -> SamplingMessage:
    if not isinstance(raw, dict) or raw.get("role") not in ("user", "assistant"):
        raise _refuse(f"messages[{index}] must have the role 'user' or 'assistant'")
    content = raw.get("content")
    items = content if isinstance(content, list) else [content]
    if not items:
        raise _refuse(f"messages[{index}] has no content")
    return SamplingMessage(raw["role"], tuple(_block(index, item) for item in items))


def _block(index: int, raw: Any) -> Block:
    kind = raw.get("type") if isinstance(raw, dict) else None
    if kind == "text" and isinstance(raw.get("text"), str):
        return str(raw["text"])
    if kind in ("image", "audio") and isinstance(raw.get("mimeType"), str):
        try:
            data = base64.b64decode(raw.get("data") or "", validate=True)
        except (binascii.Error, ValueError, TypeError):
            raise _refuse(f"messages[{index}] has an {kind} whose data is not base64") from None
        return Media(kind, data, raw["mimeType"])
    if kind in ("tool_use", "tool_result"):
        raise _refuse(f"messages[{index}] holds a {kind} block; this client's model takes no tools")
    raise _refuse(f"messages[{index}] holds a block of type {kind!r}, which is not text, image or audio")


#: A model's own word for why it stopped, to the spec's ``stopReason`` (OpenAI's, Anthropic's,
#: pydantic-ai's ``finish_reason``, Gemini's); a word not here is passed on as it is (the spec's
#: field is an open string).
_STOP_REASONS = {
    "stop": "endTurn",
    "end_turn": "endTurn",
    "STOP": "endTurn",
    "length": "maxTokens",
    "max_tokens": "maxTokens",
    "MAX_TOKENS": "maxTokens",
    "stop_sequence": "stopSequence",
    "tool_call": "toolUse",
    "tool_calls": "toolUse",
    "tool_use": "toolUse",
}


def stop_reason(native: Any) -> str | None:
    """The spec's ``stopReason`` for a model's own ``finish_reason`` (None: not known)."""
    if not isinstance(native, str) or not native:
        return None
    return _STOP_REASONS.get(native, native)


def sampling_answer(text: str, model: str, stop: str | None = "endTurn") -> dict[str, Any]:
    """The ``sampling/createMessage`` result: one assistant text block from ``model``."""
    answer: dict[str, Any] = {
        "role": "assistant",
        "content": {"type": "text", "text": text},
        "model": model,
    }
    if stop is not None:
        answer["stopReason"] = stop
    return answer
