"""LangChain: each MCP tool a ``BaseTool`` that calls through this client.

Why a ``BaseTool`` subclass and not ``StructuredTool.from_function``: a tool's input schema is the
server's JSON Schema, which ``BaseTool`` takes as it is (``args_schema`` as a dict) and hands to the
model unchanged, where a function's signature would have to be made up from it; and the result is
ours to shape (``response_format="content_and_artifact"``).

What a call gives LangChain, as a ``ToolMessage`` when invoked with a tool call (as its agents do):

- the content: the result's text as the model reads it (:func:`model_text`, secrets masked), and
  each image of the result as a standard image block beside it;
- the artifact: the structured value (secrets masked), for the program, not the model;
- a tool's own failure (``isError``) and a refused argument (``McpError`` kind ``invalid``, found
  before anything is sent): ``status="error"`` with the reason as the content, through LangChain's
  ``ToolException`` and ``handle_tool_error``, so the model can react (fix the arguments, try
  another way) and the run goes on. LangGraph's ``ToolNode`` would re-raise any other exception.

Every other ``McpError`` (the call's deadline, a lost server, a closed session) is raised: the model
cannot mend it, and the run stops with the error the notebook shows for a call of its own.
Cancelling the run (``task.cancel()``, a timeout around ``await agent.ainvoke(...)``) cancels the
call on the server, and so does interrupting a blocking ``tool.invoke(...)`` made in the cell's
own thread. LangGraph's blocking ``agent.invoke(...)`` runs each tool in a worker thread, which a
cell's interrupt does not reach: the cell waits for the running call to end, which then ends as
the server ends it.

Progress: a notebook session shows its progress bar under the running cell; a core Client's
progress becomes LangChain custom events named ``mcp_progress`` (``astream_events`` and every
callback handler's ``on_custom_event`` see them), as a Client has no bar to draw.

LangChain's callbacks see the model's arguments (``on_tool_start``) and the ``ToolMessage`` above
(``on_tool_end``): both the content and the artifact are masked, so a tracer or ``verbose=True``
shows no secret of the connection.
"""

from __future__ import annotations

import base64
from typing import Any, Literal

from langchain_core.callbacks.manager import adispatch_custom_event
from langchain_core.messages.content import create_image_block, create_text_block
from langchain_core.runnables.config import (
    RunnableConfig,
    ensure_config,
    get_async_callback_manager_for_config,
)
from langchain_core.tools import BaseTool, ToolException
from pydantic import PrivateAttr

from ..client._results import ToolResult
from ..protocol._errors import McpError
from ._results import images, model_text, structured
from ._source import AgentTool, ToolFilter, ToolSource

__all__ = ["McpTool", "alangchain_tools", "langchain_tools"]

FRAMEWORK = "langchain"
#: The custom event a core Client's progress becomes (a notebook session shows its progress bar).
PROGRESS_EVENT = "mcp_progress"

#: The McpError kinds the model is told about (a ToolMessage with status="error"): it can mend them.
_TOLD_TO_THE_MODEL = frozenset({"invalid"})


class McpTool(BaseTool):
    """One MCP tool, called through a :class:`ToolSource` (so through this client).

    ``metadata`` (handed to LangChain's callbacks with every call) carries ``mcp_name``, the tool's
    ``mcp_title`` and its ``mcp_annotations`` (``readOnlyHint``, ``destructiveHint``...): LangChain
    has no field of its own for them.
    """

    response_format: Literal["content", "content_and_artifact"] = "content_and_artifact"
    handle_tool_error: Any = True

    _source: ToolSource = PrivateAttr()
    _options: dict[str, Any] = PrivateAttr(default_factory=dict)

    @classmethod
    def of(cls, source: ToolSource, tool: AgentTool, options: dict[str, Any]) -> McpTool:
        made = cls(
            name=tool.name,
            description=tool.description,
            args_schema=tool.parameters,
            metadata={
                "mcp_name": tool.mcp_name,
                "mcp_title": tool.title,
                "mcp_annotations": dict(tool.annotations),
            },
        )
        made._source = source
        made._options = dict(options)
        return made

    def _run(self, *args: Any, **arguments: Any) -> tuple[str | list[Any], Any]:
        """Blocking: a notebook Session or Group only (ToolSource.call raises a TypeError naming
        the async way for a core Client, at once)."""
        try:
            result = self._source.call(self.name, arguments, **self._options)
        except McpError as exc:
            if exc.kind in _TOLD_TO_THE_MODEL:
                raise ToolException(str(exc)) from exc
            raise
        return _output(result)

    async def _arun(self, *args: Any, **arguments: Any) -> tuple[str | list[Any], Any]:
        options = dict(self._options)
        if not self._source.notebook:  # a session shows its progress bar; a Client has no place
            options["progress"] = _ProgressEvents(self.name, ensure_config())
        try:
            result = await self._source.acall(self.name, arguments, **options)
        except McpError as exc:
            if exc.kind in _TOLD_TO_THE_MODEL:
                raise ToolException(str(exc)) from exc
            raise
        return _output(result)


class _ProgressEvents:
    """A core Client's progress for a call, as LangChain custom events named ``mcp_progress``
    (``astream_events`` and every callback handler's ``on_custom_event`` see them), data
    ``{"tool", "progress", "total", "message"}`` (the message masked, as the client masks it).

    The config is the tool run's, taken when the call starts: progress arrives on the
    connection's task, where LangChain's context variable does not name the run.
    """

    def __init__(self, tool: str, config: RunnableConfig) -> None:
        self._tool = tool
        self._config = config

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        if get_async_callback_manager_for_config(self._config).parent_run_id is None:
            return  # called outside a LangChain run: nobody to tell
        data = {"tool": self._tool, "progress": progress, "total": total, "message": message}
        await adispatch_custom_event(PROGRESS_EVENT, data, config=self._config)


def _output(result: ToolResult) -> tuple[str | list[Any], Any]:
    """``(content, artifact)``: raises ToolException for a tool's own failure (isError)."""
    text = model_text(result)
    if result.is_error:
        raise ToolException(text or "the tool failed and said nothing")
    pictures = images(result)
    if not pictures:
        return text, structured(result)
    blocks: list[Any] = [create_text_block(text)] if text else []
    blocks += [
        create_image_block(base64=base64.b64encode(p.data).decode("ascii"), mime_type=p.mime_type)
        for p in pictures
    ]
    return blocks, structured(result)


def _tools(source: ToolSource, listed: list[AgentTool], timeout: float | None) -> list[BaseTool]:
    options = {} if timeout is None else {"timeout": timeout}
    return [McpTool.of(source, tool, options) for tool in listed]


def langchain_tools(source: Any, *, tools: ToolFilter = None, timeout: float | None = None) -> list[BaseTool]:
    """The tools of a notebook Session or Group, listed now (blocking)."""
    src = ToolSource(source, framework=FRAMEWORK, tools=tools)
    if not src.notebook:
        raise TypeError(
            f"langchain_tools() lists the tools without await, and a {type(source).__name__} is async "
            "only: use `tools = await alangchain_tools(client)`"
        )
    return _tools(src, src.list(), timeout)


async def alangchain_tools(
    source: Any, *, tools: ToolFilter = None, timeout: float | None = None
) -> list[BaseTool]:
    """The tools of any source (a core Client or ClientGroup too), listed on the caller's loop."""
    src = ToolSource(source, framework=FRAMEWORK, tools=tools)
    return _tools(src, await src.alist(), timeout)
