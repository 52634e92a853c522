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
from typing import TYPE_CHECKING, Any

from ._source import AgentTool, ToolFilter, ToolSource

if TYPE_CHECKING:
    from agents.mcp import MCPServer

__all__ = ["AgentTool", "ToolSource", "openai_agents_server"]


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
