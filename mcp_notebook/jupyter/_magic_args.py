"""Parsing for the ``%mcp`` magics: the line's words and options, ``key=value`` arguments coerced by
the tool's ``inputSchema``, and ``%%mcp`` cell bodies (JSON, or YAML when PyYAML is installed).

Pure functions of strings and schemas (no IPython, no session), so the rules are tested directly.
Error messages name arguments and rules, never the values (arguments may be secret).

How ``key=value`` becomes a JSON value
======================================

The property's schema is found in ``properties`` (a local ``$ref`` is followed); its types are
``type`` (a string or a list) plus those of ``anyOf``/``oneOf`` branches, or, without any, the
types of its ``enum``/``const`` values. The text is then tried against the types in this order,
and the first that fits wins:

``null``      the text ``null``
``boolean``   ``true``/``false``, ``yes``/``no``, ``on``/``off``, ``1``/``0`` (any case)
``integer``   a whole number (``42``, ``-3``; ``3.0`` too)
``number``    an integer or a finite decimal (``1.5``, ``2e3``)
``array``     a JSON array (``'["a", "b"]'``), or a comma-separated list (``a,b``) whose items are
              coerced by ``items`` (empty text: an empty list)
``object``    a JSON object (``'{"k": 1}'``)
``string``    the text as it is (shell-style quotes are already removed)

A property with no type at all keeps the text as a string. ``key:=<json>`` skips all this and
parses the text as JSON (``n:=null``, ``label:='"007"'``). A key that is not among the
``properties`` is refused, listing the valid ones, unless the schema sets ``additionalProperties``
(true or a schema, which then types the value); a missing ``required`` one is refused too.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..client._arguments import suggest, unknown_arguments
from ..notebook._targets import TargetError, split_line
from ..protocol._defaults import required_defaults
from ..protocol._printable import printable
from ..protocol._schema_walk import NodeBudget, local_target

__all__ = [
    "MagicArgError",
    "Options",
    "body_arguments",
    "coerce",
    "one_line",
    "parse_options",
    "prompt_arguments",
    "split_line",
    "tool_arguments",
]

_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0"})
_MAX_REF_HOPS = 32
_MAX_DEPTH = 16


class MagicArgError(TargetError):
    """A mistake in what the user typed; its message is one line, meant to be shown as is."""


_BREAKS = re.compile(r"[\t\n\r\v\f\x1c-\x1e\x85\u2028\u2029]+")  # what splitlines() breaks at, and tabs
_MAX_MESSAGE = 600


def one_line(text: str) -> str:
    """Server text made safe for one terminal line: line breaks as spaces, every other control or
    bidi character made visible (:func:`~mcp_notebook.protocol.printable`), bounded."""
    line = printable(_BREAKS.sub(" ", text)).strip()
    return line if len(line) <= _MAX_MESSAGE else line[: _MAX_MESSAGE - 1] + "…"


# --------------------------------------------------------------------------- options


#: option word -> (field, takes a value)
OPTIONS: dict[str, tuple[str, bool]] = {
    "-o": ("out", True),
    "--out": ("out", True),
    "-s": ("server", True),
    "--server": ("server", True),
    "--timeout": ("timeout", True),
    "--frame": ("frame", False),
    "--task": ("task", False),
    "--all": ("all", False),
    "--token-env": ("token_env", True),
    "--header": ("headers", True),
    "--header-env": ("header_env", True),
    "--protocol": ("protocol", True),
    "--only": ("only", True),
    "--as": ("group", True),
}
_REPEATABLE = frozenset({"headers", "header_env"})


@dataclass
class Options:
    """What ``parse_options`` found: the positional words, the options, and the words after ``--``."""

    words: list[str] = field(default_factory=list)
    out: str | None = None
    server: str | None = None
    timeout: float | None = None
    frame: bool = False
    task: bool = False
    all: bool = False
    token_env: str | None = None
    headers: list[str] = field(default_factory=list)
    header_env: list[str] = field(default_factory=list)
    protocol: str | None = None
    only: list[str] = field(default_factory=list)  # server names; --only a,b --only c
    group: str | None = None  # --as NAME
    command: list[str] | None = None


def parse_options(tokens: Sequence[str], allowed: Sequence[str], subcommand: str) -> Options:
    """Options anywhere before ``--`` (``-o VAR``, ``--timeout=5``); the rest are positional words.

    ``allowed`` names the option fields the subcommand takes; any other option is a mistake.
    Everything after the first ``--`` is kept, untouched, in ``command``.
    """
    parsed = Options()
    words = list(tokens)
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word == "--":
            parsed.command = words[index:]
            break
        if not word.startswith("-") or word == "-" or _is_number(word):
            parsed.words.append(word)
            continue
        name, has_inline, inline = word.partition("=")
        spec = OPTIONS.get(name)
        if spec is None and not word.startswith("--") and len(word) > 2:
            # One dash and longer than a short option: a word that happens to start with a dash
            # (a task id such as "-T-0GLg...": servers draw them from the base64url alphabet).
            parsed.words.append(word)
            continue
        if spec is None or spec[0] not in allowed:
            usable = sorted({o for o, (f, _) in OPTIONS.items() if f in allowed and o.startswith("--")})
            hint = f" (options: {', '.join(usable)})" if usable else " (it takes no options)"
            raise MagicArgError(f"unknown option {name!r} for %mcp {subcommand}{hint}")
        attr, takes_value = spec
        if not takes_value:
            if has_inline:
                raise MagicArgError(f"option {name} takes no value")
            setattr(parsed, attr, True)
            continue
        if has_inline:
            value = inline
        elif index < len(words):
            value = words[index]
            index += 1
        else:
            raise MagicArgError(f"option {name} needs a value")
        _set_option(parsed, attr, name, value)
    return parsed


def _set_option(parsed: Options, attr: str, name: str, value: str) -> None:
    if attr == "out":
        if not value.isidentifier():
            raise MagicArgError(f"{name} needs a Python variable name, not {value[:40]!r}")
        parsed.out = value
    elif attr == "timeout":
        try:
            seconds = float(value)
        except ValueError:
            seconds = math.nan
        if not (math.isfinite(seconds) and seconds > 0):
            raise MagicArgError(f"{name} needs a positive number of seconds")
        parsed.timeout = seconds
    elif attr in _REPEATABLE:
        getattr(parsed, attr).append(value)
    elif attr == "only":
        names = [part.strip() for part in value.split(",") if part.strip()]
        if not names:
            raise MagicArgError(f"{name} needs server names (a,b)")
        parsed.only.extend(names)
    else:
        setattr(parsed, attr, value)


def _is_number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True


# --------------------------------------------------------------------------- key=value arguments


def _pairs(tokens: Sequence[str], owner: str) -> list[tuple[str, str, bool]]:
    """``(key, text, is_json)`` per ``key=value`` / ``key:=json`` word."""
    pairs: list[tuple[str, str, bool]] = []
    seen: set[str] = set()
    for token in tokens:
        key, sep, text = token.partition("=")
        if not sep:
            raise MagicArgError(f"{owner}: expected key=value, got {token[:40]!r}")
        is_json = key.endswith(":")
        if is_json:
            key = key[:-1]
        if not key:
            raise MagicArgError(f"{owner}: an argument has no name before '='")
        if key in seen:
            raise MagicArgError(f"{owner}: argument {key!r} is given twice")
        seen.add(key)
        pairs.append((key, text, is_json))
    return pairs


def _json(text: str, key: str, owner: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise MagicArgError(f"{owner}: the value of {key!r} is not valid JSON") from None


def tool_arguments(
    tokens: Sequence[str],
    schema: Mapping[str, Any] | None,
    tool: str,
    *,
    base: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The arguments ``key=value`` words give, coerced by ``schema`` (the tool's ``inputSchema``).

    ``base`` (a cell body) comes first; the words override its keys. Checks names and ``required``
    (a required argument left out that has a default gets it); the values themselves are checked
    by the client against the full schema before sending.
    """
    owner = f"tool {tool!r}"
    root = dict(schema) if isinstance(schema, Mapping) else {}
    properties = root.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    extra = root.get("additionalProperties")
    open_schema = extra is True or isinstance(extra, dict)
    arguments = dict(base or {})
    for key, text, is_json in _pairs(tokens, owner):
        if key in properties:
            prop = properties[key]
        elif open_schema:
            prop = extra if isinstance(extra, dict) else {}
        else:
            raise MagicArgError(unknown_arguments(tool, [key], list(properties)))
        arguments[key] = _json(text, key, owner) if is_json else coerce(text, prop, root, key, owner)
    # A required argument left out whose schema gives a default is filled with it, as the
    # client's check fills it (one rule: protocol/_defaults.py), so it is not "missing".
    arguments.update(required_defaults(root, arguments))
    required = root.get("required")
    if isinstance(required, list):
        missing = [r for r in required if isinstance(r, str) and r not in arguments]
        if missing:
            raise MagicArgError(f"{owner}: missing {_required(missing)} (arguments: {', '.join(properties)})")
    return arguments


def prompt_arguments(
    tokens: Sequence[str],
    declared: Sequence[Mapping[str, Any]],
    prompt: str,
    *,
    base: Mapping[str, Any] | None = None,
) -> dict[str, str]:
    """A prompt's arguments: every value is a string; names and ``required`` as the prompt declares."""
    owner = f"prompt {prompt!r}"
    names = [str(a.get("name")) for a in declared if isinstance(a, Mapping) and a.get("name")]
    arguments: dict[str, str] = {}
    for key, value in (base or {}).items():
        arguments[str(key)] = value if isinstance(value, str) else json.dumps(value)
    for key, text, is_json in _pairs(tokens, owner):
        if key not in names:
            if not names:
                raise MagicArgError(f"{owner} takes no arguments, got {key!r}")
            raise MagicArgError(f"{owner} has no argument {key!r}{suggest(key, names, 'arguments')}")
        if is_json:
            value = _json(text, key, owner)
            text = value if isinstance(value, str) else json.dumps(value)
        arguments[key] = text
    unknown = [k for k in arguments if k not in names]
    if unknown:
        raise MagicArgError(
            f"{owner} has no argument {unknown[0]!r}{suggest(unknown[0], names, 'arguments')}"
        )
    missing = [str(a.get("name")) for a in declared if isinstance(a, Mapping) and a.get("required")]
    missing = [name for name in missing if name not in arguments]
    if missing:
        raise MagicArgError(f"{owner}: missing {_required(missing)} (arguments: {', '.join(names)})")
    return arguments


def _required(missing: Sequence[str]) -> str:
    names = ", ".join(repr(m) for m in missing)
    return f"the required argument {names}" if len(missing) == 1 else f"the required arguments {names}"


# --------------------------------------------------------------------------- coercion by schema


def _resolve(schema: Any, root: Mapping[str, Any], budget: NodeBudget | None = None) -> dict[str, Any]:
    """``schema`` with local ``$ref`` (``#/...``) followed, each a node of ``budget``; anything
    unresolvable (or past the budget) gives ``{}``."""
    for _ in range(_MAX_REF_HOPS):
        if not isinstance(schema, dict):
            return {}
        ref = schema.get("$ref")
        if not isinstance(ref, str):
            return schema
        if budget is not None and not budget.take():
            return {}
        schema = local_target(root, ref)  # another document or a URL: never fetched
    return {}


def schema_types(
    schema: Any, root: Mapping[str, Any], depth: int = 0, budget: NodeBudget | None = None
) -> list[str]:
    """The JSON types a (sub)schema allows, in the order found (see the module docstring).

    Branches (``anyOf``/``oneOf``/``allOf``) and references are nodes of one :class:`NodeBudget`:
    definitions whose branches refer to the next ones several times would otherwise be expanded
    exponentially."""
    budget = budget if budget is not None else NodeBudget()
    schema = _resolve(schema, root, budget)
    if depth > _MAX_DEPTH:
        return []
    found: list[str] = []
    declared = schema.get("type")
    if isinstance(declared, str):
        found.append(declared)
    elif isinstance(declared, list):
        found.extend(t for t in declared if isinstance(t, str))
    for key in ("anyOf", "oneOf", "allOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and budget.take(len(branches)):
            for branch in branches:
                found.extend(schema_types(branch, root, depth + 1, budget))
    if not found:
        values = schema.get("enum") if isinstance(schema.get("enum"), list) else None
        if values is None and "const" in schema:
            values = [schema["const"]]
        for value in values or ():
            found.append(_json_type(value))
    return list(dict.fromkeys(found))


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "string"


def _items_schema(
    schema: Any, root: Mapping[str, Any], depth: int = 0, budget: NodeBudget | None = None
) -> Any:
    budget = budget if budget is not None else NodeBudget()
    schema = _resolve(schema, root, budget)
    if isinstance(schema.get("items"), dict):
        return schema["items"]
    if depth < _MAX_DEPTH:
        for key in ("anyOf", "oneOf", "allOf"):
            branches = schema.get(key)
            if not isinstance(branches, list) or not budget.take(len(branches)):
                continue
            for branch in branches:
                items = _items_schema(branch, root, depth + 1, budget)
                if items:
                    return items
    return {}


_EXPECTED = {
    "null": "null",
    "boolean": "true or false",
    "integer": "an integer",
    "number": "a number",
    "array": "a JSON array or a comma-separated list",
    "object": "a JSON object",
}


def coerce(text: str, schema: Any, root: Mapping[str, Any], key: str, owner: str) -> Any:
    """``text`` as the JSON value ``schema`` asks for (the rules are in the module docstring)."""
    types = schema_types(schema, root)
    if not types:
        return text
    for kind in ("null", "boolean", "integer", "number", "array", "object"):
        if kind not in types:
            continue
        value = _as(kind, text, schema, root, key, owner)
        if value is not _NO:
            return value
    if "string" in types:
        return text
    expected = " or ".join(_EXPECTED.get(t, t) for t in types)
    raise MagicArgError(f"{owner}: argument {key!r} must be {expected}")


_NO = object()


def _as(kind: str, text: str, schema: Any, root: Mapping[str, Any], key: str, owner: str) -> Any:
    stripped = text.strip()
    lowered = stripped.lower()
    if kind == "null":
        return None if stripped == "null" else _NO
    if kind == "boolean":
        return True if lowered in _TRUE else False if lowered in _FALSE else _NO
    if kind == "integer":
        try:
            return int(stripped, 10)
        except ValueError:
            number = _finite(stripped)
            return int(number) if number is not None and number.is_integer() else _NO
    if kind == "number":
        try:
            return int(stripped, 10)
        except ValueError:
            number = _finite(stripped)
            return _NO if number is None else number
    if kind == "array":
        if stripped.startswith("["):
            value = _json(stripped, key, owner)
            if not isinstance(value, list):
                raise MagicArgError(f"{owner}: argument {key!r} must be a JSON array")
            return value
        if not stripped:
            return []
        items = _items_schema(schema, root)
        if set(schema_types(items, root)) & {"array", "object"}:
            return _NO  # nested structures only as JSON
        return [coerce(part.strip(), items, root, key, owner) for part in text.split(",")]
    if kind == "object":
        if not stripped.startswith("{"):
            return _NO
        value = _json(stripped, key, owner)
        if not isinstance(value, dict):
            raise MagicArgError(f"{owner}: argument {key!r} must be a JSON object")
        return value
    return _NO


def _finite(text: str) -> float | None:
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


# --------------------------------------------------------------------------- cell bodies


def body_arguments(cell: str | None) -> dict[str, Any]:
    """A ``%%mcp`` cell body as arguments: a JSON object, or YAML (``key: value`` lines) if PyYAML is
    installed. An empty body is ``{}``."""
    if cell is None or not cell.strip():
        return {}
    try:
        value = json.loads(cell)
    except (ValueError, RecursionError) as json_error:
        try:
            import yaml
        except ImportError:
            raise MagicArgError(
                f"the cell body is not a JSON object ({json_error}); YAML bodies need PyYAML "
                "(pip install pyyaml)"
            ) from None
        try:
            value = yaml.safe_load(cell)
        except yaml.YAMLError as yaml_error:
            problem = getattr(yaml_error, "problem", None) or str(yaml_error).splitlines()[0]
            mark = getattr(yaml_error, "problem_mark", None)
            where = f" at line {mark.line + 1}" if mark is not None else ""
            raise MagicArgError(f"the cell body is neither JSON nor YAML: {problem}{where}") from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise MagicArgError(
            f"the cell body must be an object of arguments (key: value), not {_json_type(value)}"
        )
    return {str(k): v for k, v in value.items()}
