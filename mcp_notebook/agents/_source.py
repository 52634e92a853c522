"""One way to list and call tools, whatever an agent framework was handed.

The five framework adapters differ only in the interface they build; what they call through is
this: :class:`ToolSource` takes a core ``Client`` or ``ClientGroup`` (async only, on the caller's
loop) or a notebook ``Session`` or ``Group`` (async and blocking, on the session's engine, with its
dialogs under the running cell, its progress bar and its history entry), applies the ``tools=``
filter, and gives every tool a name every model provider accepts.

Why names are rewritten: a group names its tools ``SERVER.TOOL``, and servers use dots, slashes
and long names too, while OpenAI, Anthropic and Gemini accept only ``[A-Za-z0-9_-]``, 64 at most.
Each tool keeps its MCP name for the call (:attr:`AgentTool.mcp_name`); the name a framework sees
is that name with every other character turned to ``_`` (a group's ``sales.top`` is ``sales_top``,
which the group resolves as fastmcp's spelling too). Two tools that would share a name are
refused when listed, naming both, instead of one silently shadowing the other.

The source is duck-typed on purpose: this module sits above the notebook layer, but a ``Client``
user must not import pandas and traitlets to hand tools to an agent.
"""

from __future__ import annotations

import builtins
import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..client._results import Tool, ToolResult

__all__ = ["AgentTool", "ToolFilter", "ToolSource", "provider_name"]

#: ``tools=``: the MCP names to hand over (a group's as ``SERVER.TOOL``), or a predicate on each Tool.
ToolFilter = Iterable[str] | Callable[[Tool], bool] | None

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_MAX_NAME = 64


def provider_name(mcp_name: str) -> str:
    """``mcp_name`` as every model provider accepts a tool name: ``[A-Za-z0-9_-]``, at most 64."""
    safe = _UNSAFE.sub("_", mcp_name) or "_"
    return safe[:_MAX_NAME]


@dataclass(frozen=True)
class AgentTool:
    """One MCP tool as an agent framework needs it.

    ``name`` is the provider-safe name the framework and its model see, ``mcp_name`` the name the
    call is made with; ``parameters`` is the tool's input JSON Schema (an object schema always).
    """

    name: str
    mcp_name: str
    description: str
    parameters: dict[str, Any]
    output_schema: dict[str, Any] | None = None
    title: str | None = None
    annotations: dict[str, Any] = field(default_factory=dict)
    tool: Tool | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_tool(cls, tool: Tool) -> AgentTool:
        schema = dict(tool.input_schema or {})
        if schema.get("type") != "object":
            schema = {**schema, "type": "object"}
        schema.setdefault("properties", {})
        return cls(
            name=provider_name(tool.name),
            mcp_name=tool.name,
            description=tool.description or tool.title or tool.name,
            parameters=schema,
            output_schema=tool.output_schema,
            title=tool.title,
            annotations=dict(tool.annotations or {}),
            tool=tool,
        )


class ToolSource:
    """The tools of a ``Client``, ``ClientGroup``, ``Session`` or ``Group``, listed and called for
    ``framework`` (its name goes on each call's history entry, as ``via``).

    ``tools`` keeps only the named tools (MCP names) or those a predicate accepts.
    """

    def __init__(self, source: Any, *, framework: str, tools: ToolFilter = None) -> None:
        if not callable(getattr(source, "call_tool", None)):
            raise TypeError(
                "an agent's tools come from a Client, ClientGroup, notebook Session or Group, "
                f"not {type(source).__name__}"
            )
        self.source = source
        self.framework = framework
        #: A notebook Session or Group: blocking and async calls, recorded in its history.
        self.notebook = callable(getattr(source, "acall_tool", None))
        self._keep = _filter(tools)
        self._by_name: dict[str, AgentTool] = {}

    def __repr__(self) -> str:
        return f"ToolSource({type(self.source).__name__}, framework={self.framework!r})"

    # --- listing ------------------------------------------------------------------------------

    async def alist(self) -> builtins.list[AgentTool]:
        """The tools, fetched (from the cache where the client keeps one fresh)."""
        if self.notebook:
            tools = await self.source.alist_tools()
        else:
            tools = await self.source.list_tools()
        return self._named(tools)

    def list(self) -> builtins.list[AgentTool]:
        """The tools, blocking (a notebook Session or Group only)."""
        self._need_blocking("list the tools")
        return self._named(self.source.list_tools())

    def _named(self, tools: builtins.list[Tool]) -> builtins.list[AgentTool]:
        chosen = [AgentTool.from_tool(t) for t in tools if self._keep(t)]
        by_name: dict[str, AgentTool] = {}
        for tool in chosen:
            other = by_name.get(tool.name)
            if other is not None:
                raise ValueError(
                    f"the tools {other.mcp_name!r} and {tool.mcp_name!r} would both be named "
                    f"{tool.name!r} for the model; keep one with tools=[...]"
                )
            by_name[tool.name] = tool
        self._by_name = by_name
        return chosen

    def mcp_name(self, name: str) -> str:
        """The MCP name of the tool the framework calls ``name`` (itself when never listed)."""
        known = self._by_name.get(name)
        return known.mcp_name if known is not None else name

    # --- calling ------------------------------------------------------------------------------

    async def acall(self, name: str, arguments: Mapping[str, Any] | None, **options: Any) -> ToolResult:
        """Call the tool the framework names ``name`` (options as ``Client.call_tool``).

        A tool's own failure is a result with ``is_error`` (the adapter hands it to the model);
        a refused argument, a deadline or a lost server raise ``McpError``.
        """
        mcp_name = self.mcp_name(name)
        if self.notebook:
            result: ToolResult = await self.source.acall_tool(
                mcp_name, dict(arguments or {}), _via=self.framework, **options
            )
        else:
            result = await self.source.call_tool(mcp_name, dict(arguments or {}), **options)
        return result

    def call(self, name: str, arguments: Mapping[str, Any] | None, **options: Any) -> ToolResult:
        """Call the tool, blocking (a notebook Session or Group only): for frameworks whose tools
        are called synchronously. The cell's dialogs and progress bar work as for ``call_tool``."""
        self._need_blocking("call a tool without await")
        result: ToolResult = self.source.call_tool(
            self.mcp_name(name), dict(arguments or {}), _via=self.framework, **options
        )
        return result

    def _need_blocking(self, what: str) -> None:
        if not self.notebook:
            raise TypeError(
                f"{self.framework} asked to {what}, and a {type(self.source).__name__} is async only: "
                "hand the framework a notebook session (mcp_notebook.connect(...)), which can block, "
                "or use the framework's async API"
            )


def _filter(tools: ToolFilter) -> Callable[[Tool], bool]:
    if tools is None:
        return lambda _tool: True
    if callable(tools) and not isinstance(tools, str | bytes):
        keep = tools
        if inspect.iscoroutinefunction(keep):
            raise TypeError("tools= takes names or a plain predicate, not an async function")
        return lambda tool: bool(keep(tool))
    if isinstance(tools, str):
        raise TypeError("tools= takes a list of names (or a predicate), not one string")
    wanted = set(tools)
    return lambda tool: tool.name in wanted
