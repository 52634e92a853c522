"""Hypothesis strategies drawn FROM a tool schema: arguments it accepts, and near-misses it refuses.

Why our own and not hypothesis-jsonschema: the argument checker's quick path only understands a
small subset (a flat object of typed properties: ``type``, ``required``, ``properties``,
``additionalProperties``, ``enum``, numeric bounds, string lengths, ``pattern``; plus arrays with
typed ``items`` for the jsonschema path), and a near-miss (one rule broken, everything else valid)
is what finds a checker that is too lenient; hypothesis-jsonschema only generates valid instances.

``valid_arguments(schema)`` yields instances the schema accepts with the plain Python types the
quick check expects (never ``2.0`` for an integer, which newer drafts accept but the quick check
leaves to jsonschema). ``near_miss(schema)`` yields ``(rule, instance)``: a valid instance with
exactly one rule broken, ``rule`` naming which (for ``hypothesis.event`` counts and messages).
"""

from __future__ import annotations

import re
from typing import Any

from hypothesis import strategies as st

from mcp_notebook.protocol._json_schema import compile_pattern

#: A representative of each JSON type; a wrong-type near-miss draws among those the schema refuses.
#: ``1`` vs ``True`` and ``1.5`` vs ``1`` are the confusions a Python checker is prone to.
_SAMPLES: dict[str, list[Any]] = {
    "string": ["", "1", "true"],
    "integer": [0, 1, -7],
    "number": [1.5, -0.25],
    "boolean": [True, False],
    "null": [None],
    "object": [{}, {"k": 1}],
    "array": [[], [1]],
}


#: Per type, the wrong values a Python checker most easily lets through (bool is an int subclass,
#: 1 == True, 1.5 passes a numbers.Number test).
_CONFUSABLE: dict[str, list[Any]] = {
    "boolean": [0, 1],
    "integer": [True, False, 1.5],
    "number": [True, False, "1"],
    "string": [1, None],
    "null": [False, 0, ""],
}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if type(value) is bool:
        return "boolean"
    if type(value) is int:
        return "integer"
    if type(value) is float:
        return "integer" if value.is_integer() else "number"
    if type(value) is str:
        return "string"
    return "array" if type(value) is list else "object"


def _types(spec: dict[str, Any]) -> list[str] | None:
    kinds = spec.get("type")
    return None if kinds is None else [kinds] if isinstance(kinds, str) else list(kinds)


def _type_accepts(kinds: list[str] | None, value: Any) -> bool:
    if kinds is None:
        return True
    found = _json_type(value)
    return found in kinds or (found == "integer" and "number" in kinds)


any_json: st.SearchStrategy[Any] = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-20, 20)
    | st.floats(-20, 20, allow_nan=False)
    | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=4,
)


def valid_value(spec: Any) -> st.SearchStrategy[Any]:
    """A value one property schema accepts."""
    if spec is True or spec == {}:
        return any_json
    assert isinstance(spec, dict)
    if "enum" in spec:
        return st.sampled_from(spec["enum"])
    kinds = _types(spec) or ["string", "integer", "number", "boolean", "null"]
    return st.one_of([_valid_of_type(kind, spec) for kind in kinds])


def _valid_of_type(kind: str, spec: dict[str, Any]) -> st.SearchStrategy[Any]:
    if kind == "string":
        low, high = spec.get("minLength", 0), spec.get("maxLength", 8)
        if "pattern" in spec:
            # hypothesis draws from Python's dialect; the package matches by RE2 (ECMA's ``$``
            # refuses a final newline that Python's accepts), so keep what the package's rule finds.
            regex = re.compile(spec["pattern"])
            found = compile_pattern(spec["pattern"])
            return st.from_regex(regex).filter(lambda s: low <= len(s) <= high and found.finds(s))
        return st.text(min_size=low, max_size=high)
    if kind in ("integer", "number"):
        low = spec.get("minimum", spec.get("exclusiveMinimum", -1000))
        high = spec.get("maximum", spec.get("exclusiveMaximum", 1000))
        if kind == "integer":
            ints = st.integers(int(low), int(high))
        else:
            ints = st.integers(int(low) - 1, int(high) + 1) | st.floats(low, high, allow_nan=False)
        return ints.filter(lambda v: _in_bounds(spec, v))
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        return st.lists(valid_value(spec.get("items", {})), max_size=3)
    return st.dictionaries(st.text(max_size=3), any_json, max_size=2)


def _in_bounds(spec: dict[str, Any], v: Any) -> bool:
    return (
        v >= spec.get("minimum", v)
        and v <= spec.get("maximum", v)
        and ("exclusiveMinimum" not in spec or v > spec["exclusiveMinimum"])
        and ("exclusiveMaximum" not in spec or v < spec["exclusiveMaximum"])
    )


@st.composite
def valid_arguments(draw: st.DrawFn, schema: dict[str, Any]) -> dict[str, Any]:
    """An object ``schema`` accepts: every required property, some optional ones, and, where extra
    properties are allowed, some unknown names (prefixed so that they never clash)."""
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", []))
    names = [n for n in properties if n in required or draw(st.booleans())]
    out = {name: draw(valid_value(properties[name])) for name in names}
    if schema.get("additionalProperties", True) is not False:
        extra = draw(st.dictionaries(st.text(max_size=3).map(lambda s: "extra_" + s), any_json, max_size=2))
        out.update(extra)
    return out


def _misses_of(spec: Any) -> list[tuple[str, st.SearchStrategy[Any]]]:
    """For one property schema, the ways to break it: (rule, strategy of refused values)."""
    if not isinstance(spec, dict):
        return []
    misses: list[tuple[str, st.SearchStrategy[Any]]] = []
    kinds = _types(spec)
    wrong = [v for samples in _SAMPLES.values() for v in samples if not _type_accepts(kinds, v)]
    if "enum" in spec:
        choices = spec["enum"]
        outside = [v for samples in _SAMPLES.values() for v in samples if v not in choices] + [
            "zz-not-listed"
        ]
        misses.append(("enum", st.sampled_from(outside)))
    elif wrong:
        # Half the time a value a Python checker is likely to confuse with the right type.
        confusable = [v for kind in kinds or [] for v in _CONFUSABLE.get(kind, []) if v in wrong]
        misses.append(("type", st.sampled_from(wrong) | st.sampled_from(confusable or wrong)))
    number = [k for k in ("integer", "number") if kinds is None or k in kinds]
    if number:
        if "minimum" in spec:
            misses.append(("minimum", st.just(spec["minimum"] - 1)))
        if "exclusiveMinimum" in spec:
            misses.append(
                (
                    "exclusiveMinimum",
                    st.sampled_from([spec["exclusiveMinimum"], spec["exclusiveMinimum"] - 1]),
                )
            )
        if "maximum" in spec:
            misses.append(("maximum", st.just(spec["maximum"] + 1)))
        if "exclusiveMaximum" in spec:
            misses.append(
                (
                    "exclusiveMaximum",
                    st.sampled_from([spec["exclusiveMaximum"], spec["exclusiveMaximum"] + 1]),
                )
            )
    if kinds is None or "string" in kinds:
        if spec.get("minLength", 0) > 0:
            misses.append(("minLength", st.text(max_size=spec["minLength"] - 1)))
        if "maxLength" in spec:
            misses.append(
                ("maxLength", st.text(min_size=spec["maxLength"] + 1, max_size=spec["maxLength"] + 3))
            )
        if "pattern" in spec:
            regex = compile_pattern(spec["pattern"])
            misses.append(
                (
                    "pattern",
                    st.text(max_size=spec.get("maxLength", 6)).filter(
                        lambda s: not regex.finds(s) and len(s) >= spec.get("minLength", 0)
                    ),
                )
            )
    if "items" in spec and (kinds is None or "array" in kinds):
        inner = _misses_of(spec["items"])
        for rule, bad in inner:
            misses.append((f"items.{rule}", st.lists(bad, min_size=1, max_size=2)))
    return misses


@st.composite
def near_miss(draw: st.DrawFn, schema: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """A valid instance with exactly one rule broken: a required property dropped, an unknown one
    added where none are allowed, or one property's value replaced by a refused one.

    Returns ``(rule, where, instance)``: ``where`` is the words the refusal must contain to name
    the culprit (the property's path or name, never its value)."""
    base = draw(valid_arguments(schema))
    properties: dict[str, Any] = schema.get("properties", {})
    options: list[tuple[str, Any]] = []
    for name in schema.get("required", []):
        options.append((f"required {name}", ("drop", name)))
    if schema.get("additionalProperties", True) is False:
        options.append(("additionalProperties", ("add", None)))
    for name, spec in properties.items():
        for rule, bad in _misses_of(spec):
            options.append((f"{name}: {rule}", ("set", (name, bad))))
    assert options, f"no near-miss can be made for {schema!r}"
    label, (how, what) = draw(st.sampled_from(options))
    if how == "drop":
        base.pop(what, None)
        return label, f"{what!r} is a required property", base
    if how == "add":
        name = draw(st.sampled_from(["zz", "unknown", "n_"]).filter(lambda n: n not in properties))
        base[name] = draw(any_json)
        return label, f"{name!r} was unexpected", base
    name, bad = what
    base[name] = draw(bad)
    return label, f"arguments.{name}", base
