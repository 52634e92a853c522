"""A source's MCP tools as a pydantic-ai toolset, every call made through this client.

pydantic-ai's own ``MCPToolset`` opens a fastmcp client of its own: a second connection, with none
of this client's deadlines, dialogs, panels or masking. :class:`McpToolset` instead lists and calls
through :class:`~mcp_notebook.agents._source.ToolSource`, so an agent's call is the notebook's call:
checked against the tool's schema before it is sent, bounded by the call's deadline, its progress
shown, a task-only tool followed to its end, a dialog under the running cell, and (with a notebook
session) an entry in the session's history marked ``via="pydantic-ai"``.

What the model is told when a call does not succeed (pydantic-ai's three answers: a return, a
*retry prompt* that counts against the tool's ``max_retries``, a *failed* return that does not):

- the tool's own failure (``isError``): a failed return carrying the tool's message, so the model
  can react and the run goes on (``tool_errors="retry"`` makes it a retry prompt instead: the
  model is asked to fix its call, and a tool that fails more than ``max_retries`` times in a row
  ends the run, as pydantic-ai does for its own tools);
- arguments the client refused before sending (``McpError`` kind ``"invalid"``) or the server
  refused (kind ``"server"``: a JSON-RPC error such as unknown arguments): a retry prompt naming
  what was wrong, as pydantic-ai does for arguments that fail its own validation;
- the call's deadline (kind ``"timeout"``; the server was told to cancel): a failed return saying so;
- anything else (a lost or closed connection, refused credentials, an overloaded client): raised,
  ending the run with the client's own error and its advice, since no model can repair those.

Cancelling the run (a cell interrupted, a task cancelled) cancels the call, which tells the server.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal

import pydantic_core
from pydantic_ai import BinaryContent, ModelRetry, RunContext, ToolFailed
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
from pydantic_core import core_schema

from ..client._results import ToolResult
from ..connection._progress import ProgressCallback
from ..protocol import McpError
from ._results import images, model_text, structured
from ._source import AgentTool, ToolFilter, ToolSource

__all__ = ["McpToolset", "toolset"]

FRAMEWORK = "pydantic-ai"
ToolErrors = Literal["failed", "retry"]

#: The arguments pass through as the model wrote them: the client checks them against the tool's
#: own schema (with its defaults filled in) before sending, and its refusal reaches the model as a
#: retry prompt. A second, different check here would refuse what the server accepts.
_ANY_ARGUMENTS = pydantic_core.SchemaValidator(
    core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema())
)
#: The kinds of McpError the model can fix by calling differently: told as a retry prompt.
_RETRY_KINDS = frozenset({"invalid", "server"})


class McpToolset(AbstractToolset[Any]):
    """The tools of a ``Client``, ``Session``, ``ClientGroup`` or ``Group`` for a pydantic-ai agent.

    Entering and leaving the toolset (each agent run does) neither opens nor closes anything: the
    connection is the notebook's, open before the run and after it.
    """

    def __init__(
        self,
        source: ToolSource,
        *,
        id: str | None = None,
        max_retries: int | None = None,
        tool_errors: ToolErrors = "failed",
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
    ) -> None:
        if tool_errors not in ("failed", "retry"):
            raise ValueError(f"tool_errors is 'failed' or 'retry', not {tool_errors!r}")
        self.source = source
        self.max_retries = max_retries
        self.tool_errors: ToolErrors = tool_errors
        self._id = id
        self._options: dict[str, Any] = {}
        if timeout is not None:
            self._options["timeout"] = timeout
        if progress is not None:
            self._options["progress"] = progress

    @property
    def id(self) -> str | None:
        """The ``id`` given, else the session's or group's name (a core Client has none)."""
        if self._id is not None:
            return self._id
        name = getattr(self.source.source, "name", None)
        return name if isinstance(name, str) and name else None

    @property
    def _explicit_id(self) -> str | None:
        return self._id

    @property
    def label(self) -> str:
        kind = type(self.source.source).__name__
        return f"MCP tools of {kind} {self.id!r}" if self.id else f"MCP tools of a {kind}"

    @property
    def tool_name_conflict_hint(self) -> str:
        return "Keep one of the tools with tools=[...], or wrap the toolset with .prefixed('...')."

    def __repr__(self) -> str:
        return f"McpToolset({self.source!r}, id={self.id!r})"

    # --- listing ------------------------------------------------------------------------------

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        listed = await self.source.alist()
        return {tool.name: self._tool(_definition(tool), ctx) for tool in listed}

    async def get_tool_for_tool_def(self, tool_def: ToolDefinition, ctx: RunContext[Any]) -> ToolsetTool[Any]:
        # The definition says all a call needs: no listing round trip (durable execution replays).
        return self._tool(tool_def, ctx)

    def _tool(self, tool_def: ToolDefinition, ctx: RunContext[Any]) -> ToolsetTool[Any]:
        return ToolsetTool(
            toolset=self,
            tool_def=tool_def,
            max_retries=self.max_retries if self.max_retries is not None else ctx.max_retries,
            args_validator=_ANY_ARGUMENTS,
        )

    # --- calling ------------------------------------------------------------------------------

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        # The MCP name the definition carries: a definition rebuilt without listing (durable
        # execution) still reaches a group's member tool.
        mcp_name = (tool.tool_def.metadata or {}).get("mcp_name") or name
        try:
            result = await self.source.acall(mcp_name, tool_args, **self._options)
        except McpError as exc:
            raise _told_to_model(exc) from exc
        if result.is_error:
            message = model_text(result) or f"the tool {name!r} failed without saying why"
            if self.tool_errors == "retry":
                raise ModelRetry(message)
            raise ToolFailed(message)
        return _returned(result)


def toolset(
    source: Any,
    *,
    tools: ToolFilter = None,
    id: str | None = None,
    max_retries: int | None = None,
    tool_errors: ToolErrors = "failed",
    timeout: float | None = None,
    progress: ProgressCallback | None = None,
) -> McpToolset:
    """What :func:`mcp_notebook.agents.pydantic_ai_toolset` returns (its docstring says it all)."""
    return McpToolset(
        ToolSource(source, framework=FRAMEWORK, tools=tools),
        id=id,
        max_retries=max_retries,
        tool_errors=tool_errors,
        timeout=timeout,
        progress=progress,
    )


def _definition(tool: AgentTool) -> ToolDefinition:
    """The model's view of ``tool``: its provider-safe name, description and schemas.

    A tool that may change the world (no ``readOnlyHint``) is ``sequential``: pydantic-ai runs it
    alone, after the calls the model asked for before it and before those it asked for after, so
    two writes in one response happen in the model's order, while reads still run side by side.
    The MCP name, title and annotations ride in ``metadata`` (never sent to the model) for
    ``.filtered(...)`` and ``prepare_tools`` hooks.
    """
    read_only = tool.annotations.get("readOnlyHint") is True
    return ToolDefinition(
        name=tool.name,
        description=tool.description,
        parameters_json_schema=tool.parameters,
        return_schema=tool.output_schema or None,
        sequential=not read_only,
        metadata={
            "mcp_name": tool.mcp_name,
            "title": tool.title,
            "annotations": dict(tool.annotations),
            "task_support": _task_support(tool),
        },
    )


def _task_support(tool: AgentTool) -> str | None:
    """``execution.taskSupport``: a "required" tool is followed to its end by the client."""
    execution = tool.tool.raw.get("execution") if tool.tool is not None else None
    support = execution.get("taskSupport") if isinstance(execution, Mapping) else None
    return support if isinstance(support, str) else None


def _returned(result: ToolResult) -> Any:
    """What the model gets back: the structured value (masked) when the tool sent one, which is
    what its output schema describes; else the text. Images go beside it as pydantic-ai
    ``BinaryContent``, which pydantic-ai sends natively in the tool result to models that take
    images there."""
    value: Any = structured(result)
    if value is None:
        value = model_text(result)
    pictures = [BinaryContent(data=image.data, media_type=image.mime_type) for image in images(result)]
    if not pictures:
        return value
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return [text, *pictures]


def _told_to_model(exc: McpError) -> Exception:
    """The exception pydantic-ai turns into what the model reads; ``exc`` itself when no model
    can do anything about it (it ends the run)."""
    told: Exception = exc
    if exc.kind in _RETRY_KINDS:
        told = ModelRetry(f"The call was refused: {exc}")
    elif exc.kind == "timeout":
        told = ToolFailed(f"The call ran out of time and was cancelled: {exc}")
    return told
