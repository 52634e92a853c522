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

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from ._source import AgentTool, ToolFilter, ToolSource

if TYPE_CHECKING:
    from ._pydantic_ai import McpToolset

__all__ = ["AgentTool", "ToolSource", "pydantic_ai_toolset"]


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
