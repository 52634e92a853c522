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

from typing import TYPE_CHECKING, Any

from ._source import AgentTool, ToolFilter, ToolSource

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

__all__ = ["AgentTool", "ToolSource", "alangchain_tools", "langchain_tools"]


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
