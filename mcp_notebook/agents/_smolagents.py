"""MCP tools as smolagents ``Tool`` objects (smolagents 1.26).

smolagents describes a tool by ``inputs`` (``{argument: {"type", "description", "nullable"}}``, the
types from its own list), checks every call against them (``validate_tool_arguments``: an
argument missing from ``inputs`` is refused, one not marked nullable is required, a value's type
must be one of the listed ones) and sends the model each input entry as that argument's JSON
Schema (``get_tool_json_schema`` copies the entry). So each entry here is the argument's own
schema, references inlined, with ``type`` the list of JSON types it accepts (a union's types
together; ``number`` brings ``integer``; no type at all means every type, never smolagents'
``any``, which it sends to the model as ``string``) and ``nullable`` for an optional argument; an
``anyOf`` is kept inside ``allOf`` where smolagents' own reading of it (one type per branch) does
not flatten it. What ``inputs`` cannot carry (a reference that leads nowhere or loops, top-level
combinators, extra arguments a schema allows) is kept by appending the whole input schema to the
description. ``ToolCollection.from_mcp`` (mcpadapt) does none of that: it keeps top-level types
only, turns unions and untyped arguments into ``string`` and drops ``$ref`` targets.

What the model sees of a result: the structured value (a dict, secrets masked) when the tool
declares an output schema (``output_type="object"`` with its ``output_schema``, as CodeAgent's
prompt shows it); otherwise the text (secrets masked; images named in it), or an ``AgentImage``
when the result is one image and nothing else (smolagents keeps it in the agent's state).

Errors: a tool's own failure (``isError``) is raised as :class:`McpToolError` with its text, and an
``McpError`` (a refused argument, a deadline, a lost server) is raised as it is: smolagents' agents
turn a tool's exception into the step's error, which the model reads in its next step and can
react to, and the run goes on. An interrupted cell (``KeyboardInterrupt``) cancels the call on the
server and ends the run. Not so when the model asked for several tools in one step: smolagents
runs those on a thread pool of its own and, interrupted, waits for them to finish; the interrupt
reaches only the main thread, so those calls end at their result or their deadline, not at once.
"""

from __future__ import annotations

import copy
import json
import keyword
from typing import Any

from smolagents import Tool
from smolagents.agent_types import AgentImage

from ..protocol._schema_walk import NOWHERE, NodeBudget, local_target
from ._results import images, model_text, structured
from ._source import AgentTool, ToolSource

__all__ = ["McpToolError", "tools_for"]

#: every JSON type, smolagents' spelling: what an argument with no type constraint accepts
_EVERY_TYPE = ["string", "number", "integer", "boolean", "array", "object", "null"]
_JSON_TYPES = frozenset(_EVERY_TYPE)
#: top-level input-schema keys ``inputs`` carries (the rest goes into the description)
_CARRIED = frozenset(
    {"type", "properties", "required", "title", "description", "$defs", "definitions", "$schema"}
)
#: how deep references are followed inside one argument before the rest is left as "any type"
_MAX_REF_DEPTH = 16


class McpToolError(Exception):
    """An MCP tool's own failure (``isError``): its text is what the model reads."""


class _Inliner:
    """One argument's schema with its references (``$ref``) replaced by their targets in the input schema."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.budget = NodeBudget()
        self.lost = False

    def inline(self, node: Any, depth: int = 0) -> Any:
        if isinstance(node, list):
            return [self.inline(item, depth) for item in node]
        if not isinstance(node, dict):
            return node
        if not self.budget.take():
            self.lost = True
            return {}
        ref = node.get("$ref")
        if isinstance(ref, str):
            target = local_target(self.root, ref)
            rest = {key: value for key, value in node.items() if key != "$ref"}
            if target is NOWHERE or not isinstance(target, dict) or depth >= _MAX_REF_DEPTH:
                self.lost = True
                return self.inline(rest, depth)
            return self.inline({**target, **rest}, depth + 1)
        return {key: self.inline(value, depth) for key, value in node.items()}


def _types(schema: Any) -> set[str] | None:
    """The JSON types ``schema`` (references inlined) accepts; None for any."""
    if not isinstance(schema, dict):
        return None if schema is not False else set()
    declared = schema.get("type")
    if isinstance(declared, str):
        found: set[str] | None = {declared}
    elif isinstance(declared, list):
        found = {t for t in declared if isinstance(t, str)}
    elif "const" in schema:
        found = {_value_type(schema["const"])}
    elif isinstance(schema.get("enum"), list):
        found = {_value_type(value) for value in schema["enum"]}
    else:
        found = None
    for union in ("anyOf", "oneOf"):
        branches = schema.get(union)
        if isinstance(branches, list) and branches:
            either: set[str] = set()
            for branch in branches:
                some = _types(branch)
                if some is None:
                    either = set(_EVERY_TYPE)
                    break
                either |= some
            found = either if found is None else found & either
    for branch in schema.get("allOf") or []:
        some = _types(branch)
        if some is not None:
            found = some if found is None else found & some
    return found


def _value_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _input(schema: dict[str, Any], required: bool) -> dict[str, Any]:
    """smolagents' input entry for one argument's (inlined) schema."""
    entry = copy.deepcopy(schema)
    found = _types(schema)
    kinds = sorted(found & _JSON_TYPES, key=_EVERY_TYPE.index) if found is not None else list(_EVERY_TYPE)
    if "number" in kinds and "integer" not in kinds:
        kinds.insert(kinds.index("number") + 1, "integer")  # smolagents refuses an int for ["number"]
    if not kinds:
        kinds = list(_EVERY_TYPE)
    entry["type"] = kinds[0] if len(kinds) == 1 else kinds
    entry["description"] = str(schema.get("description") or schema.get("title") or "")
    if "anyOf" in entry:  # smolagents would flatten it to one type per branch
        entry["allOf"] = [*entry.get("allOf", []), {"anyOf": entry.pop("anyOf")}]
    if not required:  # smolagents reads nullable as "may be left out"; a null value needs "null" in type
        entry["nullable"] = True
    return entry


def _inputs(parameters: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], bool]:
    """``inputs`` for an input schema, and whether it lost something ``inputs`` cannot say."""
    inliner = _Inliner(parameters)
    required = set(parameters.get("required") or [])
    inputs = {}
    for name, schema in (parameters.get("properties") or {}).items():
        inlined = inliner.inline(schema if isinstance(schema, dict) else {})
        inputs[str(name)] = _input(inlined, name in required)
    extra = parameters.get("additionalProperties") not in (None, False)
    lost = inliner.lost or extra or bool(set(parameters) - _CARRIED)
    return inputs, lost


def _python_name(name: str) -> str:
    """``name`` as smolagents accepts a tool name: a Python identifier, not a keyword."""
    safe = name.replace("-", "_")
    if not safe.isidentifier() or safe[0].isdigit():
        safe = f"_{safe}"
    return f"{safe}_" if keyword.iskeyword(safe) else safe


class McpTool(Tool):
    """A smolagents ``Tool`` that calls one MCP tool through this client, blocking."""

    skip_forward_signature_validation = True

    def __init__(self, source: ToolSource, tool: AgentTool) -> None:
        self._source = source
        self._tool = tool
        self.name = _python_name(tool.name)
        self.inputs, lost = _inputs(tool.parameters)
        description = tool.description
        if lost:
            schema = json.dumps(tool.parameters, ensure_ascii=False, default=str)
            description = f"{description}\n\nArguments (JSON Schema): {schema}"
        self.description = description
        if tool.output_schema is not None:
            self.output_type = "object"
            self.output_schema = tool.output_schema
        else:
            self.output_type = "any"
        self._nullable = {name for name, entry in self.inputs.items() if "null" in _listed(entry["type"])}
        super().__init__()

    @property
    def agent_tool(self) -> AgentTool:
        """The MCP tool this calls (its MCP name, schemas and annotations)."""
        return self._tool

    def __repr__(self) -> str:
        return f"McpTool({self.name!r}, mcp_name={self._tool.mcp_name!r})"

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        if args:
            raise TypeError(f"the MCP tool {self.name!r} takes keyword arguments only")
        # An optional argument the model set to null means "not given" unless its schema takes null.
        arguments = {k: v for k, v in kwargs.items() if v is not None or k in self._nullable}
        result = self._source.call(self._tool.name, arguments)
        if result.is_error:
            raise McpToolError(model_text(result))
        value = structured(result)
        if value is not None and self._tool.output_schema is not None:
            return value
        pictures = images(result)
        if len(pictures) == 1 and len(result.content) == 1:
            return AgentImage(pictures[0].data)
        return model_text(result)


def _listed(kinds: Any) -> list[Any]:
    return kinds if isinstance(kinds, list) else [kinds]


def tools_for(source: ToolSource, listed: list[AgentTool]) -> list[Tool]:
    """One ``Tool`` per listed tool, each calling through ``source``; two tools whose names read
    the same as Python identifiers are refused, naming both."""
    made: dict[str, McpTool] = {}
    for agent_tool in listed:
        tool = McpTool(source, agent_tool)
        other = made.get(tool.name)
        if other is not None:
            raise ValueError(
                f"the tools {other.agent_tool.mcp_name!r} and {agent_tool.mcp_name!r} would both be "
                f"named {tool.name!r} in smolagents; keep one with tools=[...]"
            )
        made[tool.name] = tool
    return list(made.values())
