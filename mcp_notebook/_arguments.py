"""Checking tool arguments against the tool's ``inputSchema`` before anything is sent.

A refused call costs nothing and says exactly which argument is wrong. The messages name the path
and the rule, never the value (arguments may be secret). Schemas default to JSON Schema 2020-12;
references are resolved only inside the schema itself (never over the network, as the spec
requires); a schema that is itself broken or unresolvable is not our business to judge, so the
call goes through and the server decides.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from .protocol.errors import INVALID_PARAMS, McpError

__all__ = ["ArgumentValidator"]

logger = logging.getLogger("mcp_notebook.client")


class ArgumentValidator:
    """Compiled validators, one per tool schema, reused until the tool list changes."""

    def __init__(self) -> None:
        self._compiled: dict[str, tuple[dict[str, Any], Any]] = {}

    def clear(self) -> None:
        self._compiled.clear()

    def check(self, tool_name: str, schema: dict[str, Any], arguments: Mapping[str, Any]) -> None:
        validator = self._validator(tool_name, schema)
        if validator is None:
            return
        import jsonschema.exceptions  # imported on first use: it costs ~50 ms at startup

        try:
            errors = sorted(validator.iter_errors(dict(arguments)), key=jsonschema.exceptions.relevance)
        except jsonschema.exceptions.SchemaError:
            return
        except Exception as exc:  # unresolvable $ref and the like: the schema's problem, not the caller's
            logger.debug("could not validate arguments of %r: %s", tool_name, type(exc).__name__)
            return
        if errors:
            details = "; ".join(_describe(e) for e in errors[:5])
            more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
            raise McpError(
                "invalid",
                f"arguments for tool {tool_name!r} do not match its inputSchema: {details}{more}; "
                "nothing was sent (pass validate=False to send anyway)",
                code=INVALID_PARAMS,
            )

    def _validator(self, tool_name: str, schema: dict[str, Any]) -> Any:
        cached = self._compiled.get(tool_name)
        if cached is not None and cached[0] is schema:
            return cached[1]
        validator = None
        import jsonschema.validators

        try:
            default = jsonschema.validators.Draft202012Validator
            cls = jsonschema.validators.validator_for(schema, default=default)
            cls.check_schema(schema)
            validator = cls(schema, format_checker=None)
        except Exception:
            logger.debug("tool %r has an invalid inputSchema; arguments are not checked", tool_name)
        self._compiled[tool_name] = (schema, validator)
        return validator


def _describe(error: Any) -> str:
    """One jsonschema ValidationError in words, naming the path and the rule, never the value."""
    where = "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path) or "arguments"
    if where != "arguments":
        where = "arguments" + where
    rule = error.validator
    expected = error.validator_value
    if rule in ("required", "additionalProperties", "dependentRequired", "unevaluatedProperties"):
        # These messages name properties (keys from the schema or the caller), never values.
        return f"{where}: {error.message}"
    if rule == "type":
        return f"{where} must be of type {_brief(expected)}"
    if rule in ("enum", "const"):
        return f"{where} must be {'one of ' if rule == 'enum' else ''}{_brief(expected)}"
    return f"{where} violates {rule}={_brief(expected)}"


def _brief(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
