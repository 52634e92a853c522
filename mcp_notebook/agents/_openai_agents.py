"""The OpenAI Agents SDK's ``MCPServer`` over a :class:`~._source.ToolSource`.

The SDK takes MCP tools from an ``agents.mcp.MCPServer``: it lists them (official-SDK ``mcp.types``
objects), turns each into a ``FunctionTool``, and calls ``call_tool`` when the model asks, turning
the ``CallToolResult`` into the tool output the model reads. This server answers those calls from
this client instead of the SDK's own MCP session, so every call keeps this client's argument
check, deadline, progress, tasks, dialogs, masked secrets and history entry (``via="openai-agents"``).

What the model is shown, and what ends a run (openai-agents 0.24, read in ``agents/mcp/util.py``
and ``agents/tool.py``):

- A tool's own failure (``isError``) is an ordinary result to the SDK: its content blocks are the
  tool output, so the model reads the server's error text and the run goes on. ``isError`` stays
  on the ``CallToolResult`` (a ``custom_data_extractor`` sees it).
- Arguments this client refuses before sending (``McpError`` kind ``"invalid"``) come back as an
  ``isError`` result saying which argument is wrong, so the model can correct it and retry.
- Any other exception from ``call_tool`` goes to the SDK's ``failure_error_function``. Unless you
  pass your own, this server's one tells the model the ``McpError``'s message (a deadline, the
  server's own JSON-RPC error, an overloaded client, a server that broke the protocol) and the run
  goes on; a closed session, a lost server, refused credentials or no common protocol version end
  the run with the error instead (no retry by the model could succeed); other exceptions get the
  agent's failure function (the SDK's default: a fixed message). ``failure_error_function=None``
  ends the run on every exception, as in the SDK.
- A cancelled run cancels the SDK's call task, which cancels our call: the client tells the server
  (``notifications/cancelled``, or the end of the call's stream on a modern HTTP server).

Everything handed to the SDK is masked first (the connection's secrets as ``***``): the SDK logs
results at DEBUG and puts the tool output in its traces.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from typing import Any, Literal, cast

import mcp.types as mcp_types
from agents.exceptions import UserError
from agents.mcp import MCPServer, ToolFilterCallable, ToolFilterContext, ToolFilterStatic
from agents.run_context import RunContextWrapper
from agents.tool import ToolErrorFunction
from pydantic import TypeAdapter, ValidationError

from ..client._results import Prompt, PromptResult, ToolResult
from ..protocol._errors import McpError
from ._source import AgentTool, ToolFilter, ToolSource

__all__ = ["NotebookMCPServer"]

FRAMEWORK = "openai-agents"

#: Failures no retry by the model could mend: the run ends with the error.
_ENDS_THE_RUN = frozenset({"closed", "transport", "auth", "version", "cancelled"})

_CONTENT_BLOCK: TypeAdapter[mcp_types.ContentBlock] = TypeAdapter(mcp_types.ContentBlock)


class NotebookMCPServer(MCPServer):
    """An ``agents.mcp.MCPServer`` whose tools and prompts are those of a ``Client``, ``Session``,
    ``ClientGroup`` or ``Group`` (a group's prompts are not served: it has no prompt table).

    ``connect()`` and ``cleanup()`` open and close nothing: the session is the caller's, and stays
    open after the agent's run (``async with server:`` and the SDK's ``MCPServerManager`` are safe).
    """

    def __init__(
        self,
        source: Any,
        *,
        tools: ToolFilter = None,
        name: str | None = None,
        use_structured_content: bool = False,
        require_approval: Any = None,
        failure_error_function: Any = None,
        own_failure_function: bool = False,
        call_options: Mapping[str, Any] | None = None,
        tool_filter: ToolFilterStatic | ToolFilterCallable | None = None,
    ) -> None:
        if own_failure_function:
            super().__init__(
                use_structured_content=use_structured_content,
                require_approval=require_approval,
                failure_error_function=failure_error_function,
            )
        else:
            super().__init__(use_structured_content=use_structured_content, require_approval=require_approval)
        self._own_failure_function = own_failure_function
        self._source = ToolSource(source, framework=FRAMEWORK, tools=tools)
        self._name = name or _source_name(source)
        self._call_options = dict(call_options or {})
        self._listed: list[mcp_types.Tool] | None = None
        self.tool_filter = tool_filter

    def __repr__(self) -> str:
        return f"<NotebookMCPServer {self._name!r} over {type(self._source.source).__name__}>"

    @property
    def name(self) -> str:
        return self._name

    async def connect(self) -> None:
        """Check the source answers (lists its tools); opens nothing: the session is the caller's."""
        await self._source.alist()

    async def cleanup(self) -> None:
        """Nothing to close: the session belongs to the caller and outlives the agent."""

    async def __aenter__(self) -> NotebookMCPServer:
        await self.connect()
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.cleanup()

    # --- tools ----------------------------------------------------------------------------------

    async def list_tools(
        self, run_context: RunContextWrapper[Any] | None = None, agent: Any = None
    ) -> list[mcp_types.Tool]:
        """The tools under provider-safe names (a group's ``sales.add`` is ``sales_add``), kept by
        the SDK's ``tool_filter`` where one was given (it sees those names)."""
        listed = [_mcp_tool(tool) for tool in await self._source.alist()]
        self._listed = listed
        kept = await self._filtered(listed, run_context, agent)
        return [tool.model_copy(deep=True) for tool in kept]

    async def _filtered(
        self, tools: list[mcp_types.Tool], run_context: RunContextWrapper[Any] | None, agent: Any
    ) -> list[mcp_types.Tool]:
        """The SDK's ``tool_filter``, as its own servers apply it: an allow/block list of names, or
        a predicate on ``(ToolFilterContext, tool)`` that may depend on the agent asking."""
        chosen = self.tool_filter
        if chosen is None:
            return tools
        if isinstance(chosen, dict):
            allowed = chosen.get("allowed_tool_names")
            blocked = set(chosen.get("blocked_tool_names") or ())
            return [t for t in tools if (allowed is None or t.name in allowed) and t.name not in blocked]
        if run_context is None or agent is None:
            raise UserError("run_context and agent are required for dynamic tool filtering")
        context = ToolFilterContext(run_context=run_context, agent=agent, server_name=self.name)
        kept = []
        for tool in tools:
            verdict = chosen(context, tool.model_copy(deep=True))
            if inspect.isawaitable(verdict):
                verdict = await verdict
            if verdict:
                kept.append(tool)
        return kept

    @property
    def cached_tools(self) -> list[mcp_types.Tool] | None:
        return None if self._listed is None else [tool.model_copy(deep=True) for tool in self._listed]

    async def call_tool(
        self, tool_name: str, arguments: dict[str, Any] | None, meta: dict[str, Any] | None = None
    ) -> mcp_types.CallToolResult:
        """Call the tool through this client. ``meta`` (the SDK sends a tool's own ``_meta`` and a
        ``tool_meta_resolver``'s) is not sent: the client writes each request's ``_meta`` itself
        (its progress token, its task)."""
        try:
            result = await self._source.acall(tool_name, arguments, **self._call_options)
        except McpError as error:
            if error.kind != "invalid":
                raise
            return mcp_types.CallToolResult(
                content=[mcp_types.TextContent(type="text", text=str(error))], is_error=True
            )
        return _call_result(result)

    def _get_failure_error_function(
        self, agent_failure_error_function: ToolErrorFunction | None
    ) -> ToolErrorFunction | None:
        # The SDK asks this when it builds each FunctionTool (agents/mcp/util.py, to_function_tool).
        chosen = super()._get_failure_error_function(agent_failure_error_function)
        if self._own_failure_function or chosen is None:
            return chosen
        return cast(ToolErrorFunction, _McpFailureMessage(chosen))

    # --- prompts --------------------------------------------------------------------------------

    async def list_prompts(self) -> mcp_types.ListPromptsResult:
        """The source's prompts (none for a group, which keeps no prompt table)."""
        source = self._source.source
        if self._source.notebook and callable(getattr(source, "alist_prompts", None)):
            prompts: list[Prompt] = await source.alist_prompts()
        elif not self._source.notebook and callable(getattr(source, "list_prompts", None)):
            prompts = await source.list_prompts()
        else:
            prompts = []
        return mcp_types.ListPromptsResult(prompts=[_mcp_prompt(prompt) for prompt in prompts])

    async def get_prompt(
        self, name: str, arguments: dict[str, Any] | None = None
    ) -> mcp_types.GetPromptResult:
        """The prompt's messages, secrets masked (recorded in a notebook session's history)."""
        source = self._source.source
        if self._source.notebook and callable(getattr(source, "aget_prompt", None)):
            result: PromptResult = await source.aget_prompt(name, arguments)
        elif not self._source.notebook and callable(getattr(source, "get_prompt", None)):
            result = await source.get_prompt(name, arguments)
        else:
            raise UserError(
                f"{type(source).__name__} serves no prompts: hand the agent one member's session instead"
            )
        return _prompt_result(result)


class _McpFailureMessage:
    """A ``failure_error_function`` that tells the model what an ``McpError`` says, ends the run
    on the failures no retry could mend (returning None makes the SDK raise), and leaves every
    other exception to ``fallback`` (the agent's, or the SDK's default)."""

    def __init__(self, fallback: ToolErrorFunction) -> None:
        self._fallback = fallback

    def __call__(self, context: RunContextWrapper[Any], error: Exception) -> Any:
        mcp_error = _mcp_error_in(error)
        if mcp_error is None:
            return self._fallback(context, error)
        if mcp_error.kind in _ENDS_THE_RUN:
            return None
        return f"The tool call failed ({mcp_error.kind}): {mcp_error}"


def _mcp_error_in(error: BaseException) -> McpError | None:
    """The McpError the SDK wrapped (it raises ``AgentsException(...) from`` a tool's exception)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, McpError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _source_name(source: Any) -> str:
    name = getattr(source, "name", None)
    if isinstance(name, str) and name:
        return name
    info = getattr(source, "server_info", None)
    if isinstance(info, dict) and isinstance(info.get("name"), str) and info["name"]:
        return str(info["name"])
    return type(source).__name__


# --- our objects as the official SDK's ------------------------------------------------------------


def _mcp_tool(tool: AgentTool) -> mcp_types.Tool:
    """The tool as ``mcp.types.Tool``, named as the model may call it, with the server's other
    fields (title, annotations, outputSchema, execution, ``_meta``) kept where they are valid."""
    raw = dict(tool.tool.raw) if tool.tool is not None else {}
    fields = {**raw, "name": tool.name, "description": tool.description, "inputSchema": tool.parameters}
    try:
        return mcp_types.Tool.model_validate(fields)
    except ValidationError:
        # A server's odd extra field (an icon, an annotation of the wrong type) must not hide the tool.
        return mcp_types.Tool(
            name=tool.name,
            title=tool.title,
            description=tool.description,
            input_schema=tool.parameters,
            output_schema=tool.output_schema,
        )


def _call_result(result: ToolResult) -> mcp_types.CallToolResult:
    """The result as ``CallToolResult``, secrets masked: text, image, audio and resource blocks as
    the official SDK's, ``structuredContent``, ``isError`` and ``_meta`` kept. A result with
    structured content and no text gets its JSON as a text block, as the spec asks servers to do,
    so the model reads it whether or not ``use_structured_content`` is set."""
    shown = result._masked()
    blocks = [_content_block(block) for block in shown.content]
    has_text = any(block.get("type") == "text" for block in shown.content)
    if shown.structured_content is not None and not has_text:
        text = json.dumps(shown.structured_content, ensure_ascii=False, default=str)
        blocks.insert(0, mcp_types.TextContent(type="text", text=text))
    fields: dict[str, Any] = {"content": blocks, "isError": result.is_error}
    if isinstance(shown.structured_content, dict):
        fields["structuredContent"] = shown.structured_content
    if result.meta is not None:
        fields["_meta"] = result._secrets.mask_value(result.meta)
    return mcp_types.CallToolResult.model_validate(fields)


def _content_block(block: dict[str, Any]) -> mcp_types.ContentBlock:
    try:
        return _CONTENT_BLOCK.validate_python(block)
    except ValidationError:
        # A block the official SDK cannot type (a newer or broken one): the model reads it as JSON.
        return mcp_types.TextContent(type="text", text=json.dumps(block, ensure_ascii=False, default=str))


def _mcp_prompt(prompt: Prompt) -> mcp_types.Prompt:
    try:
        return mcp_types.Prompt.model_validate(prompt.raw or {"name": prompt.name})
    except ValidationError:
        arguments = [
            mcp_types.PromptArgument(
                name=str(argument.get("name")),
                description=_text_or_none(argument.get("description")),
                required=argument.get("required") is True,
            )
            for argument in prompt.arguments
        ]
        return mcp_types.Prompt(
            name=prompt.name, title=prompt.title, description=prompt.description, arguments=arguments
        )


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _prompt_result(result: PromptResult) -> mcp_types.GetPromptResult:
    shown = result._masked()
    messages = []
    for message in shown.messages:
        role: Literal["user", "assistant"] = "assistant" if message.get("role") == "assistant" else "user"
        content = message.get("content")
        block = _content_block(content) if isinstance(content, dict) else _content_block({"value": content})
        messages.append(mcp_types.PromptMessage(role=role, content=block))
    return mcp_types.GetPromptResult(description=shown.description, messages=messages)
