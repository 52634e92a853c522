"""A session's MCP tools handed to the agent frameworks people prototype with in notebooks.

Each framework takes tools through a small interface of its own (pydantic-ai's ``AbstractToolset``,
the OpenAI Agents SDK's ``MCPServer``, LangChain's ``BaseTool``, LlamaIndex's ``FunctionTool``,
smolagents' ``Tool``); the functions here build that interface over a :class:`~mcp_notebook.Client`,
a notebook :class:`~mcp_notebook.notebook.Session`, a :class:`~mcp_notebook.ClientGroup` or a notebook
``Group``, so every call an agent makes goes through this client, with its argument check, deadline,
progress, tasks, dialogs and masked secrets, and shows in the notebook's panels marked with the
framework that made it.

Importing this package imports no framework: each is an optional extra (``mcp-notebook[agents]``
installs them all) imported by the function that needs it.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from ._source import AgentTool, ToolFilter, ToolSource

if TYPE_CHECKING:
    from agents.mcp import MCPServer
    from langchain_core.tools import BaseTool
    from llama_index.core.tools import FunctionTool
    from smolagents import Tool as SmolagentsTool

    from ._pydantic_ai import McpToolset

__all__ = [
    "AgentTool",
    "ToolSource",
    "alangchain_tools",
    "allama_index_tools",
    "langchain_tools",
    "llama_index_tools",
    "openai_agents_server",
    "pydantic_ai_toolset",
    "smolagents_tools",
]


def llama_index_tools(source: Any, *, tools: ToolFilter = None) -> list[FunctionTool]:
    """The tools of a notebook ``Session`` or ``Group`` as LlamaIndex ``FunctionTool`` objects, listed now.

    Each tool's ``acall`` (what LlamaIndex's agents call) and ``call`` go through this client: the
    argument check, the deadline, progress, tasks followed, dialogs under the running cell, the
    history entry marked ``via="llama-index"``; the model gets the MCP input schema unchanged, the
    result's text (secrets masked) and images as blocks, the structured value as ``raw_output``,
    and a tool error or a refused argument as an output with ``is_error``. A core ``Client`` or
    ``ClientGroup`` is async only: use :func:`allama_index_tools`. ``tools=`` keeps only the named
    tools (MCP names) or those a predicate accepts. Needs ``llama-index-core``.
    """
    from ._llama_index import tools_for

    src = ToolSource(source, framework="llama-index", tools=tools)
    return tools_for(src, src.list())


async def allama_index_tools(source: Any, *, tools: ToolFilter = None) -> list[FunctionTool]:
    """:func:`llama_index_tools` for any source, a core ``Client`` or ``ClientGroup`` too, listed on
    the caller's loop (their tools are then called with ``await tool.acall(...)``, as agents do)."""
    from ._llama_index import tools_for

    src = ToolSource(source, framework="llama-index", tools=tools)
    return tools_for(src, await src.alist())


def smolagents_tools(source: Any, *, tools: ToolFilter = None) -> list[SmolagentsTool]:
    """The tools of a notebook ``Session`` or ``Group`` as smolagents ``Tool`` objects, listed now.

    smolagents calls tools synchronously: each call blocks on the session's engine, with its
    argument check, deadline, progress bar, tasks followed, dialogs under the running cell and an
    interrupt that cancels the call on the server; the history entry is marked
    ``via="smolagents"``. Inputs map the JSON Schema onto smolagents' types (unions, optional
    arguments as nullable, references inlined); a tool error or an argument this client refused is
    raised, which smolagents' agents show the model as the step's error to react to. A core
    ``Client`` (async only) is refused here with a ``TypeError``. Needs ``smolagents``.
    """
    from ._smolagents import tools_for

    src = ToolSource(source, framework="smolagents", tools=tools)
    return tools_for(src, src.list())


def langchain_tools(source: Any, *, tools: ToolFilter = None, timeout: float | None = None) -> list[BaseTool]:
    """A notebook ``Session``'s or ``Group``'s tools as LangChain tools: ``tools = langchain_tools(s)``.

    Each is a ``BaseTool`` (a group's named ``server_tool``) whose calls, sync (``invoke``) and async
    (``ainvoke``), go through the session: the argument check before sending, the deadline
    (``timeout=`` per call, else the session's), progress, tasks followed, dialogs under the running
    cell, cancellation reaching the server, and a history entry with ``via="langchain"``. Invoked
    with a tool call, a tool gives a ``ToolMessage``: the result's text (images as image blocks) with
    the structured value as its ``artifact``, all secrets masked; a tool's error or a refused
    argument comes back as ``status="error"`` for the model to react to; other errors (a deadline,
    a lost server) are raised. ``tools=`` keeps the named tools (MCP names) or those a predicate
    accepts. A core ``Client`` is async only: use :func:`alangchain_tools`.
    """
    from ._langchain import langchain_tools as build

    return build(source, tools=tools, timeout=timeout)


async def alangchain_tools(
    source: Any, *, tools: ToolFilter = None, timeout: float | None = None
) -> list[BaseTool]:
    """:func:`langchain_tools` for any source, listed on the caller's loop: a core ``Client`` or
    ``ClientGroup`` too (``tools = await alangchain_tools(client)``), whose tools are called with
    ``ainvoke`` only (their ``invoke`` raises a TypeError at once, saying so).
    """
    from ._langchain import alangchain_tools as build

    return await build(source, tools=tools, timeout=timeout)


class _Unset(enum.Enum):
    UNSET = "unset"


def openai_agents_server(
    source: Any,
    *,
    tools: ToolFilter = None,
    name: str | None = None,
    use_structured_content: bool = False,
    require_approval: Any = None,
    failure_error_function: Callable[[Any, Exception], Any] | _Unset | None = _Unset.UNSET,
    call_options: Mapping[str, Any] | None = None,
    tool_filter: Any = None,
) -> MCPServer:
    """An OpenAI Agents SDK ``MCPServer`` (``Agent(mcp_servers=[...])``) serving the tools and
    prompts of a ``Client``, ``Session``, ``ClientGroup`` or ``Group`` through this client.

    Each call the agent makes keeps the argument check, the deadline (``call_options={"timeout":
    ...}``; any ``Client.call_tool`` option goes there), progress, tasks followed to their result,
    dialogs under the running cell, masked secrets, and a history entry marked
    ``via="openai-agents"``; a cancelled run cancels the call on the server. Tool names are
    provider-safe (a group's ``sales.add`` is ``sales_add``: OpenAI refuses dots); ``tools=``
    keeps the named tools (MCP names) or those a predicate accepts.

    A tool's error (``isError``) and a refused argument reach the model as the tool's output, and
    the run goes on. Other failures go to ``failure_error_function``: by default the model is told
    what went wrong (a deadline, the server's error), while a closed session or a lost server ends
    the run; pass your own function, or None to end the run on every failure, as in the SDK.
    ``use_structured_content``, ``require_approval`` and ``tool_filter`` (which sees the
    provider-safe names, and may depend on the agent) are the SDK's. ``connect()``/``cleanup()``
    never close the session: it is yours. Needs ``openai-agents`` (``mcp-notebook[agents]``).
    """
    from ._openai_agents import NotebookMCPServer

    own = not isinstance(failure_error_function, _Unset)
    return NotebookMCPServer(
        source,
        tools=tools,
        name=name,
        use_structured_content=use_structured_content,
        require_approval=require_approval,
        failure_error_function=None if isinstance(failure_error_function, _Unset) else failure_error_function,
        own_failure_function=own,
        call_options=call_options,
        tool_filter=tool_filter,
    )


def pydantic_ai_toolset(
    source: Any,
    *,
    tools: ToolFilter = None,
    id: str | None = None,
    max_retries: int | None = None,
    tool_errors: Literal["failed", "retry"] = "failed",
    timeout: float | None = None,
    progress: Callable[[float, float | None, str | None], Any] | None = None,
) -> McpToolset:
    """The tools of ``source`` (a ``Client``, ``Session``, ``ClientGroup`` or ``Group``) as a
    pydantic-ai toolset: ``Agent(model, toolsets=[pydantic_ai_toolset(session)])``.

    Every call the agent makes goes through this client: arguments checked against the tool's
    schema before sending, ``timeout`` (else the client's default) as the call's deadline, progress
    (a notebook session's bar, or ``progress``), task-only tools followed to their end, the
    server's dialogs under the running cell, secrets masked in what the model reads, and with a
    notebook session an entry in its history, dashboard and log marked ``via="pydantic-ai"``.
    Cancelling the run (an interrupted cell) cancels the call on the server.

    A tool's failure reaches the model as a failed tool result it can react to, and the run goes
    on (``tool_errors="retry"``: a retry prompt, which counts against ``max_retries``, the
    toolset's, else the agent's); arguments refused by the client's check or the server are a
    retry prompt; a call that runs out of time a failed result; a lost connection ends the run.
    A structured result is handed back as data (what the tool's output schema, also given to
    pydantic-ai, describes), images as ``BinaryContent``. ``tools=`` keeps only the named tools
    (MCP names; a group's as ``SERVER.TOOL``, which the model sees as ``SERVER_TOOL``) or those a
    predicate accepts. ``id`` names the toolset (default: the session's name).

    With a notebook session both ``await agent.run(...)`` and ``agent.run_sync(...)`` work; a core
    ``Client`` is async only: ``await agent.run(...)`` in the loop the client was opened in.
    """
    from ._pydantic_ai import toolset

    return toolset(
        source,
        tools=tools,
        id=id,
        max_retries=max_retries,
        tool_errors=tool_errors,
        timeout=timeout,
        progress=progress,
    )
