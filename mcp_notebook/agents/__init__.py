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

from ._source import AgentTool, ToolSource

__all__ = ["AgentTool", "ToolSource"]
