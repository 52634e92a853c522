"""Checking tool arguments against ``inputSchema`` before sending, and results against ``outputSchema``.

A refused call costs nothing and says exactly which argument is wrong; a result that breaks the
tool's declared ``outputSchema`` is an error on that call (the spec says clients SHOULD validate
``structuredContent``), not a silently wrong table downstream. The messages name the path and the
rule, never the value (arguments may be secret, results may be huge). Schemas default to JSON
Schema 2020-12 and are judged by :mod:`mcp_notebook.protocol._json_schema` (references only inside
the schema, never fetched; patterns by RE2, in linear time). A schema that is itself broken is not
ours to judge, so the value goes through unchecked; one whose reference cannot be resolved inside it
refuses the call (arguments: nothing is sent) naming the reference, since the value cannot be checked.
"""

from __future__ import annotations

import difflib
import logging
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..protocol._defaults import defaulted_required, fill
from ..protocol._errors import INVALID_PARAMS, MAX_NAME_CHARS, McpError, clip
from ..protocol._json_schema import UnresolvableRef, compile_pattern, schema_validator, validation_errors
from ..protocol._schema_words import branch_words, branches_words

__all__ = [
    "ArgumentValidator",
    "OutputValidator",
    "SchemaValidator",
    "suggest",
    "unknown_arguments",
    "unknown_tool",
]

logger = logging.getLogger("mcp_notebook.client")

#: What :func:`warnings.warn_explicit` has shown already (its once-per-message memory).
_WARNED: dict[Any, Any] = {}
#: ``structuredContent`` absent from a result (``None`` would be a value to validate).
MISSING: Any = object()


class SchemaValidator:
    """Compiled validators, one per tool schema, reused until the tool's schema object changes.

    jsonschema is imported and a validator built only when the quick check cannot say yes:
    importing it and building the first validator takes a few hundred milliseconds on a loaded
    machine (its format libraries, a grammar build among them, wait until a form checks a format:
    :mod:`..protocol._jsonschema_import`), which a call with plainly valid arguments (or a plainly
    valid result) should never wait for; hence the quick check takes pydantic's ``X | None`` too.

    Subclasses say what they check: ``subject`` names the value's root in messages, ``schema_name``
    the tool's field, and ``_refuse`` turns the violations into the error.
    """

    subject = "value"
    schema_name = "schema"

    def __init__(self) -> None:
        self._quick: dict[str, tuple[dict[str, Any], _Quick | None]] = {}
        self._compiled: dict[str, tuple[dict[str, Any], Any]] = {}

    def clear(self) -> None:
        self._quick.clear()
        self._compiled.clear()

    def check(self, tool_name: str, schema: dict[str, Any], instance: Any) -> None:
        """Raise McpError if ``instance`` breaks ``schema``; return quietly if valid or uncheckable."""
        if isinstance(instance, Mapping):
            quick = self._quick_for(tool_name, schema)
            if quick is not None and quick(instance):
                return
            if not isinstance(instance, dict):
                instance = dict(instance)
        try:
            errors = self._violations(tool_name, schema, instance)
        except UnresolvableRef as exc:
            raise self._unresolvable(tool_name, exc) from None
        self._judge(tool_name, schema, instance, errors)

    def _judge(self, tool_name: str, schema: dict[str, Any], instance: Any, errors: list[Any]) -> None:
        """Raise for ``errors`` (jsonschema's, most relevant first), if any."""
        if errors:
            raise self._refuse(tool_name, _details(errors, self.subject))

    def _violations(self, tool_name: str, schema: dict[str, Any], instance: Any) -> list[Any]:
        """jsonschema's errors for ``instance``, most relevant first; none when uncheckable.

        Raises :class:`UnresolvableRef` when the check needs a reference the schema does not hold.
        """
        validator = self._validator(tool_name, schema)
        if validator is None:
            return []
        import jsonschema.exceptions

        try:
            return sorted(validation_errors(validator, instance), key=jsonschema.exceptions.relevance)
        except UnresolvableRef:
            raise
        except Exception as exc:  # a keyword jsonschema itself fails on: the schema's problem
            logger.debug("could not validate %s of %r: %s", self.subject, tool_name, type(exc).__name__)
            return []

    def _refuse(self, tool_name: str, details: str) -> McpError:
        message = f"{self.subject} of tool {tool_name!r} break its {self.schema_name}: {details}"
        return McpError("invalid", message)

    def _unresolvable(self, tool_name: str, exc: UnresolvableRef) -> McpError:
        what = f"the {self.schema_name} of tool {tool_name!r} {exc}, so its {self.subject} cannot be checked"
        return McpError("invalid", what)

    def _quick_for(self, tool_name: str, schema: dict[str, Any]) -> _Quick | None:
        cached = self._quick.get(tool_name)
        if cached is not None and cached[0] is schema:
            return cached[1]
        quick = _quick_check(schema)
        self._quick[tool_name] = (schema, quick)
        return quick

    def _validator(self, tool_name: str, schema: dict[str, Any]) -> Any:
        cached = self._compiled.get(tool_name)
        if cached is not None and cached[0] is schema:
            return cached[1]
        validator = None
        try:
            validator = schema_validator(schema)
        except Exception:
            logger.debug("tool %r has an invalid %s; it is not checked", tool_name, self.schema_name)
        self._compiled[tool_name] = (schema, validator)
        return validator


class ArgumentValidator(SchemaValidator):
    """Arguments against ``inputSchema``: a mismatch is refused before anything is sent.

    A name the schema does not declare is named with the closest ones (:func:`unknown_arguments`,
    the same words as ``%mcp call``): refused with the rest where the schema forbids extra keys or
    something else is wrong, a :class:`UserWarning` where the schema lets it pass (a misspelt
    optional argument a server would silently ignore). Only a call whose quick check failed gets
    here, so a call with good names pays nothing for this.
    """

    subject = "arguments"
    schema_name = "inputSchema"

    def __init__(self) -> None:
        super().__init__()
        self._defaults: dict[str, tuple[dict[str, Any], tuple[tuple[str, Any], ...]]] = {}

    def clear(self) -> None:
        super().clear()
        self._defaults.clear()

    def fill_defaults(self, tool_name: str, schema: dict[str, Any], arguments: dict[str, Any]) -> None:
        """Fill into ``arguments`` the defaults of required properties it lacks
        (:mod:`..protocol._defaults`' rule), read from the schema once per tool: a call of a tool
        with none (most tools) pays one lookup."""
        cached = self._defaults.get(tool_name)
        if cached is None or cached[0] is not schema:
            cached = (schema, defaulted_required(schema))
            self._defaults[tool_name] = cached
        if cached[1]:
            arguments.update(fill(cached[1], arguments))

    def _judge(self, tool_name: str, schema: dict[str, Any], instance: Any, errors: list[Any]) -> None:
        declared = _declared(schema)
        unknown = [key for key in instance if key not in declared] if isinstance(instance, dict) else []
        if not unknown:
            super()._judge(tool_name, schema, instance, errors)
            return
        names = unknown_arguments(tool_name, unknown, list(declared))
        # "Additional properties are not allowed ('x' was unexpected)" says less than ``names``.
        errors = [e for e in errors if e.validator != "additionalProperties" or e.absolute_path]
        if errors or schema.get("additionalProperties") is False:
            rest = f"; {_details(errors, self.subject)}" if errors else ""
            raise McpError(
                "invalid",
                f"{names}{rest}; nothing was sent (pass validate=False to send anyway)",
                code=INVALID_PARAMS,
            )
        # Attributed to the package, not to a frame of ours (a call in a notebook runs on the
        # engine thread, where no frame is the user's); shown once per message, as warnings are.
        warnings.warn_explicit(
            f"{names}; sent anyway (the server may ignore it)",
            UserWarning,
            "mcp_notebook",
            0,
            module="mcp_notebook.client",
            registry=_WARNED,
        )

    def _refuse(self, tool_name: str, details: str) -> McpError:
        return McpError(
            "invalid",
            f"arguments for tool {tool_name!r} do not match its inputSchema: {details}; "
            "nothing was sent (pass validate=False to send anyway)",
            code=INVALID_PARAMS,
        )

    def _unresolvable(self, tool_name: str, exc: UnresolvableRef) -> McpError:
        return McpError(
            "invalid",
            f"the inputSchema of tool {tool_name!r} {exc}, so its arguments cannot be checked; "
            "nothing was sent (pass validate=False to send anyway)",
            code=INVALID_PARAMS,
        )


def _declared(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The argument names a schema declares, when a name outside them is a mistake: empty for a
    schema that names none, matches names by pattern, or types the extra ones on purpose."""
    properties = schema.get("properties")
    extra = schema.get("additionalProperties", True)
    if not isinstance(properties, dict) or "patternProperties" in schema:
        return {}
    if not isinstance(extra, bool) and extra != {}:
        return {}
    return properties


def _details(errors: list[Any], subject: str) -> str:
    details = "; ".join(_describe(e, subject) for e in errors[:5])
    return details + (f" (and {len(errors) - 5} more)" if len(errors) > 5 else "")


# --- names: one wording for the core, the magics, the explorer and groups -------------------------


def suggest(name: str, choices: Sequence[str], what: str, *, limit: int = 12, full: bool = False) -> str:
    """``"; did you mean 'x'? (<what>: a, b, c)"`` for an unknown ``name`` (listing at most ``limit``).

    Each name is shown cut to :data:`MAX_NAME_CHARS` (``full=True``: whole, for an error's
    ``full_message``): a server's 200,000-character tool names made a 2.4 MB error."""
    choices = list(dict.fromkeys(choices))
    if not choices:
        return f" (there are no {what})"
    show = _whole if full else _quoted
    hint = " or ".join(show(c) for c in _close_matches(name, choices))
    hint = f"; did you mean {hint}?" if hint else ""
    listed = sorted(choices)[:limit]
    shown = ", ".join(listed if full else map(clip, listed)) + (", …" if len(choices) > limit else "")
    return f"{hint} ({what}: {shown})"


def _close_matches(name: str, choices: list[str]) -> list[str]:
    """The (at most 3) choices closest to ``name``, judged by their first characters: difflib's cost
    grows with the names' lengths (seconds for a dozen 200,000-character names), and it is a
    name's head that a person reads and mistypes."""
    heads: dict[str, str] = {}
    for choice in choices:
        heads.setdefault(choice[:_COMPARED], choice)
    close = difflib.get_close_matches(name[:_COMPARED], list(heads), n=3, cutoff=0.6)
    return [heads[head] for head in close]


_COMPARED = 4 * MAX_NAME_CHARS


def _quoted(name: str) -> str:
    return repr(clip(name))


def _whole(name: str) -> str:
    return repr(name)


def unknown_arguments(tool: str, keys: Sequence[str], names: Sequence[str]) -> str:
    """``"tool 'add' has no argument 'x'; did you mean 'a'? (arguments: a, b)"``: what the core,
    ``%mcp call`` and the explorer say of argument names a tool does not declare."""
    owner = f"tool {_quoted(tool)}"
    if not names:
        return f"{owner} takes no arguments, got {', '.join(_quoted(k) for k in keys)}"
    if len(keys) == 1:
        return f"{owner} has no argument {_quoted(keys[0])}{suggest(keys[0], names, 'arguments')}"
    close = [
        f"{_quoted(match)} for {_quoted(key)}"
        for key in keys[:_MAX_KEYS]
        for match in _close_matches(key, list(names))[:1]
    ]
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    listed = suggest("", names, "arguments")
    more = ", …" if len(keys) > _MAX_KEYS else ""
    return f"{owner} has no arguments {', '.join(_quoted(k) for k in keys[:_MAX_KEYS])}{more}{hint}{listed}"


_MAX_KEYS = 12


def unknown_tool(name: str, known: Sequence[str], where: str = "", *, full: bool = False) -> str:
    """``"no tool 'sales_record' on 'demo'; did you mean 'sales_records'? (tools: ...)"``: what the
    core, the magics, the explorer and groups say of a tool name the server does not list (names
    cut as :func:`suggest` cuts them; ``full=True`` for the whole text)."""
    show = _whole if full else _quoted
    on = f" on {show(where)}" if where else ""
    return f"no tool {show(name)}{on}{suggest(name, known, 'tools', full=full)}"


class OutputValidator(SchemaValidator):
    """A successful result's ``structuredContent`` against the tool's ``outputSchema``.

    A tool that declares an ``outputSchema`` promises structured content that matches it; a result
    without it, or with content that does not match, fails the call as a ``protocol`` error.
    """

    subject = "structuredContent"
    schema_name = "outputSchema"

    def check(self, tool_name: str, schema: dict[str, Any], instance: Any) -> None:
        if instance is MISSING or instance is None:
            raise McpError(
                "protocol",
                f"tool {tool_name!r} declares an outputSchema but its result has no structuredContent "
                "(pass validate=False to accept it)",
            )
        super().check(tool_name, schema, instance)

    def _refuse(self, tool_name: str, details: str) -> McpError:
        return McpError(
            "protocol",
            f"tool {tool_name!r} returned structuredContent that does not match its outputSchema: "
            f"{details} (pass validate=False to accept it)",
        )

    def _unresolvable(self, tool_name: str, exc: UnresolvableRef) -> McpError:
        # The same path as a result that breaks the schema: a promise the client cannot verify.
        return McpError(
            "protocol",
            f"the outputSchema of tool {tool_name!r} {exc}, so its structuredContent cannot be "
            "checked (pass validate=False to accept it)",
        )


# --- a quick yes for the schemas most tools have --------------------------------------------------
#
# Why by hand: jsonschema walks a schema through its generic keyword machinery on every call, which
# measured as a quarter of a pipelined call's cost. Most tool schemas are a flat object of typed
# properties, so for those we compile a small predicate. It only ever says "certainly valid"; any
# doubt (a keyword it does not know, a float where an integer is expected, a failed check) falls
# through to jsonschema, which stays the judge and writes the error message.

_Quick = Callable[[Mapping[str, Any]], bool]
_ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "format",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$comment",
    }
)
_ROOT_KEYS = _ANNOTATIONS | {"type", "properties", "required", "additionalProperties", "$schema"}
_PROPERTY_KEYS = _ANNOTATIONS | {
    "anyOf",
    "type",
    "enum",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minLength",
    "maxLength",
    "pattern",
}
_TYPE_TESTS: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: type(v) is str,
    "integer": lambda v: type(v) is int,  # 2.0 counts as an integer in newer drafts: left to jsonschema
    "number": lambda v: type(v) in (int, float),
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
    "object": lambda v: type(v) is dict,
    "array": lambda v: type(v) is list,
}


def _quick_check(schema: dict[str, Any]) -> _Quick | None:
    if not set(schema) <= _ROOT_KEYS or schema.get("type", "object") != "object":
        return None
    properties = schema.get("properties", {})
    required = schema.get("required", [])
    extra = schema.get("additionalProperties", True)
    if not isinstance(properties, dict) or not isinstance(required, list) or not isinstance(extra, bool):
        return None
    tests: dict[str, Callable[[Any], bool]] = {}
    for name, spec in properties.items():
        test = _property_test(spec)
        if test is None:
            return None
        tests[name] = test
    required_names = tuple(required)
    # An unknown name falls through to the slow path even where the schema lets it pass, so it is
    # named (a warning) there; a schema that declares no properties takes any name, quietly.
    extra = extra and not tests

    def quick(arguments: Mapping[str, Any]) -> bool:
        for name in required_names:
            if name not in arguments:
                return False
        for name, value in arguments.items():
            test = tests.get(name)
            if test is None:
                if not extra:
                    return False
            elif not test(value):
                return False
        return True

    return quick


def _property_test(spec: Any, depth: int = 0) -> Callable[[Any], bool] | None:
    if spec is True or spec == {}:
        return lambda value: True
    if not isinstance(spec, dict) or not set(spec) <= _PROPERTY_KEYS:
        return None
    checks: list[Callable[[Any], bool]] = []
    if "anyOf" in spec:
        any_of = _any_of_test(spec["anyOf"], depth)
        if any_of is None:
            return None
        checks.append(any_of)
    kinds = spec.get("type")
    if kinds is not None:
        names = [kinds] if isinstance(kinds, str) else kinds
        if not isinstance(names, list) or not all(n in _TYPE_TESTS for n in names):
            return None
        type_tests = [_TYPE_TESTS[n] for n in names]
        checks.append(lambda v: any(t(v) for t in type_tests))
    if "enum" in spec:
        choices = spec["enum"]
        if not isinstance(choices, list) or not all(type(c) is str for c in choices):
            return None  # mixed-type enums compare with JSON semantics (1 vs True): jsonschema's job
        allowed = frozenset(choices)
        checks.append(lambda v: type(v) is str and v in allowed)
    bounds = _bound_checks(spec)
    if bounds is None:
        return None
    checks += bounds
    if "pattern" in spec:
        # The same RE2 match the full check makes (linear time, whatever the server's pattern), so
        # the verdict here is the same one; without it, a tool with a pattern paid jsonschema's
        # import (1-2 s in a Jupyter install, which compiles a URI grammar) on its first call.
        regex = compile_pattern(spec["pattern"])
        if regex is None:
            return None
        checks.append(lambda v: type(v) is not str or regex.finds(v))
    return lambda value: all(check(value) for check in checks)


def _bound_checks(spec: dict[str, Any]) -> list[Callable[[Any], bool]] | None:
    """The numeric and length bounds of ``spec`` as checks; ``None`` for a bound of the wrong type."""
    checks: list[Callable[[Any], bool]] = []
    for key, accept in (
        ("minimum", lambda v, b: v >= b),
        ("maximum", lambda v, b: v <= b),
        ("exclusiveMinimum", lambda v, b: v > b),
        ("exclusiveMaximum", lambda v, b: v < b),
    ):
        if key in spec:
            bound = spec[key]
            if type(bound) not in (int, float):
                return None
            checks.append(_numeric(accept, bound))
    for key, accept in (("minLength", lambda n, b: n >= b), ("maxLength", lambda n, b: n <= b)):
        if key in spec:
            bound = spec[key]
            if type(bound) is not int:
                return None
            checks.append(_length(accept, bound))
    return checks


#: How deep ``anyOf`` inside ``anyOf`` is compiled (deeper: left to jsonschema).
_MAX_QUICK_DEPTH = 4


def _any_of_test(branches: Any, depth: int) -> Callable[[Any], bool] | None:
    """pydantic's ``X | None`` (formats in it too): without this, the first call of such a tool
    imported jsonschema. A branch that says yes is enough; a branch this cannot judge is left out
    (so a "no" falls through to jsonschema, the judge, as always)."""
    if not isinstance(branches, list) or depth >= _MAX_QUICK_DEPTH:
        return None
    tests = [test for test in (_property_test(b, depth + 1) for b in branches) if test is not None]
    if not tests:
        return None
    return lambda v: any(test(v) for test in tests)


def _numeric(accept: Callable[[Any, Any], bool], bound: float) -> Callable[[Any], bool]:
    # Number keywords ignore non-numbers (the type keyword judges those).
    return lambda v: type(v) not in (int, float) or accept(v, bound)


def _length(accept: Callable[[int, int], bool], bound: int) -> Callable[[Any], bool]:
    return lambda v: type(v) is not str or accept(len(v), bound)


def _describe(error: Any, subject: str = "arguments", depth: int = 0) -> str:
    """One jsonschema ValidationError in words, naming the path and the rule, never the value."""
    where = subject + "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    rule = error.validator
    expected = error.validator_value
    if rule in ("anyOf", "oneOf"):
        return _describe_union(error, where, subject, depth)
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


#: How deep a refusal follows a union into the one branch that the value's type fits.
_MAX_UNION_DEPTH = 3
#: Rules that say a value is not of a branch's kind at all (the branch was not meant); ``None``
#: is a ``false`` branch's.
_KIND_RULES = frozenset({"type", "const", "enum", None})


def _describe_union(error: Any, where: str, subject: str, depth: int) -> str:
    """An ``anyOf``/``oneOf`` refusal as the branches that would have been accepted, in words
    (:mod:`..protocol._schema_words`), and, when the value is of the kind of exactly one branch,
    what is wrong inside it (``arguments.x.a must be of type 'integer'``)."""
    branches = error.validator_value
    said = f"{where} must be one of: {branches_words(branches)}"
    if error.validator == "oneOf" and not error.context:
        return f"{where} must match exactly one of: {branches_words(branches)}, but matches several"
    meant = _meant_branch(error)
    if meant is None or depth >= _MAX_UNION_DEPTH or not isinstance(branches, list):
        return said
    index, inner = meant
    if not inner.relative_path and inner.validator not in ("anyOf", "oneOf"):
        return said  # the branch's own words already say what it wants of the value itself
    return f"{said}; as {branch_words(branches[index])}, {_describe(inner, subject, depth + 1)}"


def _meant_branch(error: Any) -> tuple[int, Any] | None:
    """The one branch whose kind the value has, with its deepest error (a union's error last), if
    exactly one branch is of that kind."""
    by_branch: dict[int, list[Any]] = {}
    for sub in error.context or ():
        index = sub.relative_schema_path[0] if sub.relative_schema_path else None
        if isinstance(index, int):
            by_branch.setdefault(index, []).append(sub)
    meant = [
        (index, subs)
        for index, subs in by_branch.items()
        if not any(s.validator in _KIND_RULES and not s.relative_path for s in subs)
    ]
    if len(meant) != 1:
        return None
    index, subs = meant[0]
    return index, min(subs, key=lambda sub: (-len(sub.relative_path), sub.validator in ("anyOf", "oneOf")))
