"""The one way this package judges a value against a JSON Schema that a server sent.

Every validator the package builds (arguments before a call, ``structuredContent`` after it, the
explorer's form) comes from :func:`schema_validator` and runs through :func:`validation_errors`, which
hold two rules:

**A schema never fetches.** ``$ref``, ``$dynamicRef`` and references made relative to an ``$id``
resolve only inside the document the server sent (and the JSON Schema metaschemas that jsonschema
ships). Anything else (``http(s)://``, ``file://``, ``urn:``, a pointer to nowhere) is never
retrieved: the registry's ``retrieve`` refuses at once, without I/O, and :func:`validation_errors`
raises :class:`UnresolvableRef` naming the reference. jsonschema's default resolver would fetch it
with urllib, with no timeout and no size cap, on the event loop: a schema could make the client
call any address, or hang it on one that never answers.

**A pattern runs in linear time.** ``pattern``, ``patternProperties`` (and ``additionalProperties``
beside it) are matched by RE2 (google-re2), whose time is linear in the text whatever the pattern;
Python's backtracking ``re`` lets a server's ``^(a+)+$`` hold the GIL, and so the client, past any
deadline. RE2 is closer than ``re`` to ECMA-262, the dialect JSON Schema names: ``\\d`` and ``\\w``
are ASCII and ``$`` matches only at the very end; ECMA's ``\\uXXXX`` escapes are translated.

Fallback: a pattern RE2 cannot compile (lookaround, backreferences, a repetition beyond 1000, a
program beyond RE2's memory budget) is **not enforced** client-side; the server judges, and a log
record at INFO names the pattern once. Running it with ``re`` under a deadline is no option: a match
holds the GIL and cannot be interrupted. For the same reason ``unevaluatedProperties`` is not
enforced in a schema that also uses ``patternProperties`` (jsonschema evaluates those with ``re``
deep inside). ``format: "regex"`` (asserted only where formats are, the form) is judged by
compiling, never by matching: valid if RE2 or ``re`` can compile it (compiling is linear).

Walks of a schema's expansion (forms, frames, the magics' types) are bounded and resolve references
by the same rule in :mod:`._schema_walk`.

jsonschema and referencing are imported on first use: ``import mcp_notebook`` stays cheap; and
jsonschema's format libraries (a grammar build among them) only when a format check runs
(:mod:`._jsonschema_import`).
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Iterator, Mapping
from typing import Any

from ._jsonschema_import import import_jsonschema

__all__ = ["Pattern", "UnresolvableRef", "compile_pattern", "schema_validator", "validation_errors"]

logger = logging.getLogger(__name__)

#: How many compiled patterns are kept (a server's schemas hold a few dozen at most).
_PATTERN_CACHE = 512
#: ECMA-262's ``\uXXXX`` (RE2 writes ``\x{XXXX}``); an escaped backslash is skipped whole. Fixed and
#: linear: the only ``re`` this module runs on server text.
_ECMA_ESCAPE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|.)", re.DOTALL)


class UnresolvableRef(Exception):
    """A reference the schema makes that cannot be resolved inside it (never fetched)."""

    def __init__(self, ref: str, *, outside: bool) -> None:
        self.ref = ref
        self.outside = outside
        shown = ref if len(ref) <= 200 else ref[:197] + "..."  # the whole one is .ref
        if outside:
            text = f"refers outside itself, to {shown!r}, which is never fetched"
        else:
            text = f"refers to {shown!r}, which it does not contain"
        super().__init__(text)


class _Outside(Exception):
    """Raised by the registry's ``retrieve``: the URI is another document."""

    def __init__(self, uri: str) -> None:
        super().__init__(uri)
        self.uri = uri


def _refuse_retrieval(uri: str) -> Any:
    raise _Outside(uri)


@functools.cache
def _registry() -> Any:
    import referencing

    # jsonschema adds the metaschemas it ships to any registry it is given, so "$schema" and refs
    # to them still resolve, offline.
    return referencing.Registry(retrieve=_refuse_retrieval)  # type: ignore[call-arg]  # an attrs alias


# --- patterns ----------------------------------------------------------------------------------


class Pattern:
    """A server's pattern compiled by RE2: :meth:`finds` takes time linear in the text."""

    __slots__ = ("_regex",)

    def __init__(self, regex: Any) -> None:
        self._regex = regex

    def finds(self, text: str) -> bool:
        """Whether the pattern matches somewhere in ``text`` (JSON Schema's unanchored search)."""
        try:
            return self._regex.search(text) is not None
        except UnicodeEncodeError:  # a lone surrogate, which UTF-8 cannot hold: seen as U+FFFD
            text = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
            return self._regex.search(text) is not None


def compile_pattern(pattern: object) -> Pattern | None:
    """``pattern`` compiled by RE2, or ``None`` where RE2 cannot run it (or it is no string)."""
    return _compile(pattern) if isinstance(pattern, str) else None


@functools.lru_cache(maxsize=_PATTERN_CACHE)
def _compile(pattern: str) -> Pattern | None:
    import re2

    options = re2.Options()
    options.log_errors = False  # RE2 would write its parse errors to the process's stderr
    try:
        return Pattern(re2.compile(_ECMA_ESCAPE.sub(_ecma_escape, pattern), options=options))
    except Exception:
        shown = pattern if len(pattern) <= 80 else pattern[:77] + "..."
        logger.info("schema pattern %r is not enforced here (RE2 cannot run it); the server judges", shown)
        return None


def _ecma_escape(match: re.Match[str]) -> str:
    code = match.group(1)
    return f"\\x{{{code}}}" if code else match.group(0)


def _matches(pattern: Any, text: str) -> bool:
    """Whether ``pattern`` finds ``text``; a pattern RE2 cannot run matches everything."""
    regex = compile_pattern(pattern)
    return regex is None or regex.finds(text)


def _pattern(validator: Any, pattern: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not _matches(pattern, instance):
        yield ValidationError(f"does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object") or not isinstance(patterns, Mapping):
        return
    for pattern, subschema in patterns.items():
        regex = compile_pattern(pattern)
        if regex is None:
            continue
        for key, value in instance.items():
            if regex.finds(key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(original: Any) -> Any:
    """jsonschema's ``additionalProperties``, with the keys ``patternProperties`` claims found by RE2."""

    def additional_properties(validator: Any, extra: Any, instance: Any, schema: Any) -> Iterator[Any]:
        patterns = schema.get("patternProperties")
        if not patterns or not isinstance(patterns, Mapping):
            yield from original(validator, extra, instance, schema)
            return
        if not validator.is_type(instance, "object"):
            return
        from jsonschema.exceptions import ValidationError

        properties = schema.get("properties", {})
        extras = [
            key
            for key in instance
            if key not in properties and not any(_matches(pattern, key) for pattern in patterns)
        ]
        if validator.is_type(extra, "object"):
            for key in extras:
                yield from validator.descend(instance[key], extra, path=key)
        elif extra is False and extras:
            names = ", ".join(repr(key) for key in sorted(extras))
            yield ValidationError(f"Additional properties are not allowed ({names} unexpected)")

    return additional_properties


def _skipped(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """A keyword not enforced here (see the module docstring)."""
    return iter(())


def _has_pattern_properties(node: Any, depth: int) -> bool:
    if depth > 64:
        return True  # too deep to tell: assume it does (the keyword is then not enforced)
    if isinstance(node, dict):
        if node.get("patternProperties"):
            return True
        return any(_has_pattern_properties(v, depth + 1) for v in node.values())
    if isinstance(node, list):
        return any(_has_pattern_properties(v, depth + 1) for v in node)
    return False


def _is_regex(instance: object) -> bool:
    if not isinstance(instance, str) or compile_pattern(instance) is not None:
        return True
    try:
        re.compile(instance)  # syntax RE2 lacks: compiled (linear), never run
    except (re.error, RecursionError, OverflowError, ValueError):
        return False
    return True


# --- validators --------------------------------------------------------------------------------


@functools.cache
def _safe_class(base: Any, pattern_properties: bool) -> Any:
    """``base`` (a jsonschema validator class) with the pattern keywords run by RE2; for a document
    that uses ``patternProperties``, without ``unevaluatedProperties``."""
    import jsonschema.validators

    keywords = base.VALIDATORS
    replaced: dict[str, Any] = {}
    if "pattern" in keywords:
        replaced["pattern"] = _pattern
    if "patternProperties" in keywords:
        replaced["patternProperties"] = _pattern_properties
    if "additionalProperties" in keywords:
        replaced["additionalProperties"] = _additional_properties(keywords["additionalProperties"])
    if "unevaluatedProperties" in keywords and pattern_properties:
        replaced["unevaluatedProperties"] = _skipped
    return jsonschema.validators.extend(base, validators=replaced)


@functools.cache
def _format_checker(base: Any) -> Any:
    import jsonschema

    checker = jsonschema.FormatChecker(())
    checker.checkers = dict(base.FORMAT_CHECKER.checkers)
    checker.checkers["regex"] = (_is_regex, ())
    return checker


def schema_validator(schema: Mapping[str, Any] | bool, *, formats: bool = False) -> Any:
    """A jsonschema validator for a server's ``schema`` (2020-12 unless ``$schema`` says otherwise).

    Raises ``jsonschema.SchemaError`` for a schema that is itself broken. ``formats`` asserts
    ``format`` (off by default: an annotation in 2020-12).
    """
    import_jsonschema()  # the first time, with its format libraries left until a format needs one
    import jsonschema.validators

    base = jsonschema.validators.validator_for(schema, default=jsonschema.validators.Draft202012Validator)
    cls = _safe_class(base, _has_pattern_properties(schema, 0))
    cls.check_schema(schema)
    checker = _format_checker(base) if formats else None
    return cls(schema, registry=_registry(), format_checker=checker)


def validation_errors(validator: Any, instance: Any) -> list[Any]:
    """Every ``ValidationError`` of ``instance``; :class:`UnresolvableRef` for a reference the
    validation needed and the document does not hold."""
    import referencing.exceptions

    try:
        return list(validator.iter_errors(instance))
    except referencing.exceptions.Unresolvable as exc:
        raise _unresolvable(exc) from None


def _unresolvable(exc: BaseException) -> UnresolvableRef:
    """The reference behind jsonschema's wrapped referencing error: outside the document (our
    ``retrieve`` refused it) or inside it but leading nowhere."""
    from referencing.exceptions import PointerToNowhere

    ref: str | None = None
    seen: BaseException | None = exc
    for _ in range(16):  # the chain is 3 or 4 long; never follow a loop
        if seen is None:
            break
        if isinstance(seen, _Outside):
            return UnresolvableRef(seen.uri, outside=True)
        if isinstance(seen, PointerToNowhere):
            ref = "#" + seen.ref
        elif ref is None and isinstance(getattr(seen, "ref", None), str):
            ref = seen.ref  # type: ignore[attr-defined]
        seen = seen.__cause__ or seen.__context__
    return UnresolvableRef(ref if ref is not None else "?", outside=False)
