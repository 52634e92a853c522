"""MCP tools as LlamaIndex ``FunctionTool`` objects (llama-index-core 0.14).

LlamaIndex's agents (``FunctionAgent``, ``ReActAgent``, ``CodeActAgent``) call a tool with
``await tool.acall(**arguments)`` and feed the returned ``ToolOutput``'s ``blocks`` back to the model
as the tool message; a plain script calls ``tool.call(...)``. Each tool here is a ``FunctionTool``
whose ``call``/``acall`` go through :class:`~._source.ToolSource` (argument check, deadline,
progress, tasks, dialogs, history entry ``via="llama-index"``) and build the ``ToolOutput`` from the
MCP result: the model's text (secrets masked) and one ``ImageBlock`` per image as ``blocks``, the
structured value as ``raw_output``, ``is_error`` from the result's ``isError``.

Why the schema is handed over as it is: the model reads a tool's arguments from
``ToolMetadata.get_parameters_dict()`` (OpenAI, Anthropic and the mock LLMs) or from
``fn_schema.model_json_schema()``. Rebuilding a pydantic model field by field from the JSON
Schema, as llama-index-tools-mcp does, loses what pydantic cannot say back the same way (unions,
``$ref``, formats, ``additionalProperties``, patterns); and the stock ``get_parameters_dict`` keeps
only five top-level keys. So ``fn_schema`` is a model class whose ``model_json_schema()`` is the
MCP schema itself (fields none; extra arguments allowed: the schema is checked by this client
before sending, not by pydantic), and the metadata's ``get_parameters_dict()`` returns the whole
schema.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from llama_index.core.base.llms.types import ContentBlock, ImageBlock, TextBlock
from llama_index.core.tools import FunctionTool, ToolMetadata, ToolOutput
from pydantic import BaseModel, ConfigDict

from ..client._results import ToolResult
from ..protocol._errors import McpError
from ._results import images, model_text, structured
from ._source import AgentTool, ToolSource

__all__ = ["McpFunctionTool", "tools_for"]


class _McpArguments(BaseModel):
    """Base of each tool's ``fn_schema``: its JSON Schema is the MCP tool's, unchanged."""

    model_config = ConfigDict(extra="allow")
    mcp_schema: ClassVar[dict[str, Any]] = {}

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return copy.deepcopy(cls.mcp_schema)


@dataclasses.dataclass
class _McpToolMetadata(ToolMetadata):
    """Tool metadata whose parameters are the MCP input schema, every key of it."""

    parameters: dict[str, Any] = dataclasses.field(default_factory=dict)

    def get_parameters_dict(self) -> dict[str, Any]:
        return copy.deepcopy(self.parameters)


def _arguments_model(tool: AgentTool) -> type[BaseModel]:
    name = "".join(part.capitalize() for part in tool.name.replace("-", "_").split("_")) or "Tool"
    model: type[BaseModel] = type(
        f"{name}Arguments", (_McpArguments,), {"mcp_schema": tool.parameters, "__module__": __name__}
    )
    return model


class McpFunctionTool(FunctionTool):
    """A LlamaIndex ``FunctionTool`` that calls one MCP tool through this client.

    What the model is told on failure: a tool's own error (``isError``) and an argument this
    client refused before sending (``McpError`` kind ``"invalid"``) come back as a ``ToolOutput``
    with ``is_error=True`` and the text saying what went wrong, so the model can retry. Any other
    ``McpError`` (a deadline, a lost server, a refused dialog) is raised: LlamaIndex's agents turn
    it into an error output with its text (and go on), a direct ``call``/``acall`` sees it raised.
    """

    def __init__(self, source: ToolSource, tool: AgentTool) -> None:
        self._source = source
        self._tool = tool
        metadata = _McpToolMetadata(
            description=tool.description,
            name=tool.name,
            fn_schema=_arguments_model(tool),
            parameters=tool.parameters,
        )
        super().__init__(fn=self._text, async_fn=self._atext, metadata=metadata)

    @property
    def agent_tool(self) -> AgentTool:
        """The MCP tool this calls (its MCP name, schemas and annotations)."""
        return self._tool

    def __repr__(self) -> str:
        return f"McpFunctionTool({self._tool.name!r}, mcp_name={self._tool.mcp_name!r})"

    # FunctionTool's own fn/async_fn (used by to_langchain_tool): the text the model would read.
    def _text(self, **arguments: Any) -> str:
        return str(self.call(**arguments).content)

    async def _atext(self, **arguments: Any) -> str:
        return str((await self.acall(**arguments)).content)

    def call(self, *args: Any, **kwargs: Any) -> ToolOutput:
        """Call the tool, blocking (a notebook Session or Group; a core Client is async only)."""
        arguments = self._arguments(args, kwargs)
        return self._settled(arguments, lambda: self._source.call(self._tool.name, arguments))

    async def acall(self, *args: Any, **kwargs: Any) -> ToolOutput:
        """Call the tool on the caller's loop (any source); cancelling it cancels the call."""
        arguments = self._arguments(args, kwargs)
        try:
            result = await self._source.acall(self._tool.name, arguments)
        except McpError as exc:
            return self._refused(arguments, exc)
        return self._output(arguments, result)

    def _arguments(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        if args:
            raise TypeError(f"the MCP tool {self._tool.name!r} takes keyword arguments only")
        return {**self.partial_params, **kwargs}

    def _settled(self, arguments: dict[str, Any], call: Callable[[], ToolResult]) -> ToolOutput:
        try:
            result = call()
        except McpError as exc:
            return self._refused(arguments, exc)
        return self._output(arguments, result)

    def _refused(self, arguments: dict[str, Any], exc: McpError) -> ToolOutput:
        if exc.kind != "invalid":
            raise exc
        return ToolOutput(
            tool_name=self._tool.name,
            content=str(exc),
            raw_input={"args": (), "kwargs": arguments},
            raw_output=str(exc),
            is_error=True,
            exception=exc,
        )

    def _output(self, arguments: dict[str, Any], result: ToolResult) -> ToolOutput:
        text = model_text(result)
        blocks: list[ContentBlock] = [TextBlock(text=text)]
        blocks += [ImageBlock(image=image.data, image_mimetype=image.mime_type) for image in images(result)]
        value = structured(result)
        return ToolOutput(
            tool_name=self._tool.name,
            blocks=blocks,
            raw_input={"args": (), "kwargs": arguments},
            raw_output=text if value is None else value,
            is_error=result.is_error,
        )


def tools_for(source: ToolSource, listed: list[AgentTool]) -> list[FunctionTool]:
    """One ``FunctionTool`` per listed tool, each calling through ``source``."""
    return [McpFunctionTool(source, tool) for tool in listed]
