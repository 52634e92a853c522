"""The async client room: :class:`Client`, its typed results, task handles, live lists, groups, the App host.

This is the face of ``mcp_notebook.client``; the modules behind it are private (issue #27 gathered
the loose top-level modules here: ``client``, ``results``, ``_arguments``, ``cache``, ``live``,
``tasks``, ``group``, ``_owned`` and ``apps.host``). It sits above ``config`` and below the notebook
layer, and never imports traitlets, ipywidgets, pandas or IPython at module level.
"""

from ._apps_host import AppError, AppHost, AppResource
from ._cache import Freshness
from ._client import Client
from ._client_group import ClientGroup, GroupMember, MemberStatus
from ._live import Event, LiveState
from ._results import (
    Completion,
    Prompt,
    PromptResult,
    Resource,
    ResourceContents,
    ResourceTemplate,
    Tool,
    ToolResult,
)
from ._task_handles import TaskHandle

__all__ = [
    "AppError",
    "AppHost",
    "AppResource",
    "Client",
    "ClientGroup",
    "Completion",
    "Event",
    "Freshness",
    "GroupMember",
    "LiveState",
    "MemberStatus",
    "Prompt",
    "PromptResult",
    "Resource",
    "ResourceContents",
    "ResourceTemplate",
    "TaskHandle",
    "Tool",
    "ToolResult",
]
