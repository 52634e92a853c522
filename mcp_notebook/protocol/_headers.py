"""The HTTP headers a modern request carries besides its body (PROTOCOL.md §3.5).

A modern Streamable HTTP request repeats parts of its body in headers so that gateways can route it
without parsing JSON: ``Mcp-Method``, ``Mcp-Name`` (the tool, prompt or resource) and one
``Mcp-Param-<Name>`` per tool argument the tool's ``inputSchema`` marks with ``x-mcp-header``. The
server rejects a request whose headers disagree with its body (``-32020``), so these rules live in
one place: which tools may declare header parameters at all, how a value is written into a header,
and which headers one request gets.

Pure functions only; the HTTP transport applies them.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "HeaderParam",
    "InvalidToolHeaders",
    "ToolHeaderTable",
    "encode_header_value",
    "header_params",
    "mcp_name",
    "request_headers",
    "split_by_header_rules",
]

_SENTINEL = re.compile(r"^=\?base64\?.*\?=$", re.DOTALL)
_PLAIN = re.compile(r"^[\x20-\x7e]*$")
# RFC 9110 token: one or more tchar.
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_MAX_SAFE_INTEGER = 2**53 - 1
_HEADER_TYPES = frozenset({"string", "integer", "boolean"})
_NAME_OF = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


class InvalidToolHeaders(ValueError):
    """A tool's ``inputSchema`` declares ``x-mcp-header`` in a way the spec forbids."""


@dataclass(frozen=True, slots=True)
class HeaderParam:
    """One argument mirrored into ``Mcp-Param-<header>``: found at ``path`` in the arguments."""

    header: str
    path: tuple[str, ...]


def encode_header_value(value: Any) -> str | None:
    """A value as it goes into ``Mcp-Name`` / ``Mcp-Param-*``; ``None`` means "omit the header".

    Strings go as they are when they are plain visible ASCII without surrounding whitespace;
    anything else (and a string that already looks like the sentinel, so it cannot be misread) is
    sent as ``=?base64?<utf-8 bytes in base64>?=``.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and value.is_integer() and abs(value) <= _MAX_SAFE_INTEGER:
        return str(int(value))
    if not isinstance(value, str):
        return None
    if _PLAIN.match(value) and value == value.strip() and not _SENTINEL.match(value):
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def mcp_name(method: str, params: Mapping[str, Any] | None) -> str | None:
    """The ``Mcp-Name`` value of a request, or ``None`` when the method has none."""
    if params is None:
        return None
    key = "taskId" if method.startswith("tasks/") else _NAME_OF.get(method, "")
    value = params.get(key) if key else None
    return encode_header_value(value) if isinstance(value, str) else None


def header_params(input_schema: Any) -> tuple[HeaderParam, ...]:
    """The header parameters a tool declares; raises :class:`InvalidToolHeaders` if it breaks a rule.

    Rules (PROTOCOL.md §3.5): the name is a non-empty RFC 9110 token, unique ignoring case; only
    ``string``, ``integer`` and ``boolean`` properties; reachable from the root through
    ``properties`` alone (not under ``items``, ``anyOf``, ``$ref`` and the like).
    """
    if not isinstance(input_schema, Mapping):
        return ()
    found: list[HeaderParam] = []
    try:
        _walk_properties(input_schema, (), found)
    except RecursionError:
        raise InvalidToolHeaders("the inputSchema is nested too deeply to check x-mcp-header") from None
    seen: set[str] = set()
    for param in found:
        folded = param.header.lower()
        if folded in seen:
            raise InvalidToolHeaders(f"x-mcp-header {param.header!r} is declared twice (names ignore case)")
        seen.add(folded)
    return tuple(found)


def _walk_properties(schema: Mapping[str, Any], path: tuple[str, ...], found: list[HeaderParam]) -> None:
    for key, sub in schema.items():
        if key == "properties" and isinstance(sub, Mapping):
            for name, prop in sub.items():
                if isinstance(prop, Mapping):
                    _property(prop, (*path, str(name)), found)
        elif key != "x-mcp-header":
            _refuse_nested(sub)


def _property(prop: Mapping[str, Any], path: tuple[str, ...], found: list[HeaderParam]) -> None:
    if "x-mcp-header" in prop:
        name = prop["x-mcp-header"]
        where = ".".join(path)
        if not isinstance(name, str) or not _TOKEN.match(name):
            raise InvalidToolHeaders(f"x-mcp-header of {where!r} is not a valid header name: {name!r}")
        kind = prop.get("type")
        if not isinstance(kind, str) or kind not in _HEADER_TYPES:  # ["string", "null"] is a list
            raise InvalidToolHeaders(
                f"x-mcp-header {name!r} is on {where!r} of type {kind!r}; "
                "only string, integer and boolean properties may be headers"
            )
        found.append(HeaderParam(name, path))
    _walk_properties(prop, path, found)


def _refuse_nested(value: Any) -> None:
    """An ``x-mcp-header`` anywhere below a non-``properties`` keyword is a violation."""
    if isinstance(value, Mapping):
        if "x-mcp-header" in value:
            raise InvalidToolHeaders(
                "x-mcp-header is declared under items/anyOf/oneOf/allOf/not/if/$ref or similar, "
                "where it is not allowed"
            )
        for sub in value.values():
            _refuse_nested(sub)
    elif isinstance(value, list):
        for sub in value:
            _refuse_nested(sub)


def request_headers(
    method: str,
    params: Mapping[str, Any] | None,
    version: str,
    tool_params: tuple[HeaderParam, ...] = (),
) -> dict[str, str]:
    """Every MCP header a modern request gets: version, method, name and the tool's parameters."""
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": method}
    name = mcp_name(method, params)
    if name is not None:
        headers["Mcp-Name"] = name
    if tool_params and params is not None:
        arguments = params.get("arguments")
        if isinstance(arguments, Mapping):
            for param in tool_params:
                value = _lookup(arguments, param.path)
                encoded = encode_header_value(value)
                if encoded is not None:
                    headers[f"Mcp-Param-{param.header}"] = encoded
    return headers


def _lookup(arguments: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = arguments
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def split_by_header_rules(tools: list[Any]) -> tuple[list[Any], list[tuple[str, str]]]:
    """The tools an HTTP client may offer, and ``(name, why)`` for each it must leave out.

    A tool whose ``x-mcp-header`` declarations break the rules cannot be called correctly over
    HTTP, so the spec has the client drop it from its ``tools/list`` (and warn); one bad tool never
    costs the others. Entries that are not objects are left for the caller's own checks.
    """
    kept: list[Any] = []
    dropped: list[tuple[str, str]] = []
    for tool in tools:
        if isinstance(tool, Mapping):
            try:
                header_params(tool.get("inputSchema"))
            except InvalidToolHeaders as exc:
                dropped.append((str(tool.get("name"))[:200], str(exc)))
                continue
        kept.append(tool)
    return kept, dropped


class ToolHeaderTable:
    """Each tool's header parameters, learnt from ``tools/list`` answers as they pass by.

    The HTTP transport keeps one to write ``Mcp-Param-*`` headers for ``tools/call``; it reads the
    answers, never rewrites them (leaving invalid tools out is the client's job, with
    :func:`split_by_header_rules`).
    """

    __slots__ = ("_params",)

    def __init__(self) -> None:
        self._params: dict[str, tuple[HeaderParam, ...]] = {}

    def learn(self, result: Mapping[str, Any]) -> None:
        tools = result.get("tools")
        if not isinstance(tools, list):
            return
        for tool in tools:
            if not isinstance(tool, Mapping) or not isinstance(tool.get("name"), str):
                continue
            try:
                self._params[tool["name"]] = header_params(tool.get("inputSchema"))
            except InvalidToolHeaders:
                self._params.pop(tool["name"], None)

    def params_for(self, method: str, params: Mapping[str, Any] | None) -> tuple[HeaderParam, ...]:
        """The header parameters of the tool a ``tools/call`` names (none for other requests)."""
        if method != "tools/call" or params is None:
            return ()
        name = params.get("name")
        return self._params.get(name, ()) if isinstance(name, str) else ()
