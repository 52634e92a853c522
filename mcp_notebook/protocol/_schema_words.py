"""What a schema's ``anyOf``/``oneOf`` branches expect, said in a few words.

Why: a refused value whose schema is a union (``Optional[...]`` in pydantic is ``anyOf`` with
``null``; zod and TypeScript unions are ``anyOf``/``oneOf``) was reported with the raw branches,
``violates anyOf=[{'type': 'string', 'format': ...``, cut mid-way. A person wants the branches as a
list of what would have been accepted: "a string (uri); an integer ≥ 0; null". Each branch is said
by its ``const``, ``enum``, ``type`` (with the bounds and format that narrow it) and ``title``, or by
the name its local ``$ref`` ends with; references are never followed (no walk, so no budget). The
words are bounded (:data:`MAX_BRANCHES` branches of :data:`MAX_BRANCH_CHARS` characters, at most
:data:`MAX_WORDS_CHARS` in all, the rest counted), so a union of a thousand branches still gives one
short line. Schema text only, never the value.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_BRANCHES", "MAX_BRANCH_CHARS", "MAX_WORDS_CHARS", "branch_words", "branches_words"]

#: Branches said by name; the rest are counted.
MAX_BRANCHES = 8
#: Characters of one branch's words (a title or a const from the server can be long).
MAX_BRANCH_CHARS = 60
#: Characters of all the branches' words (past them, the rest are counted).
MAX_WORDS_CHARS = 300
#: Values of an ``enum`` listed in a branch's words.
_MAX_ENUM = 5

_ARTICLES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "object": "an object",
    "array": "an array",
    "null": "null",
}
_PLURALS = {
    "string": "strings",
    "integer": "integers",
    "number": "numbers",
    "boolean": "booleans",
    "object": "objects",
    "array": "arrays",
    "null": "nulls",
}
_BOUNDS = (("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤"), ("exclusiveMaximum", "<"))


def branches_words(branches: Any) -> str:
    """``"a string; an integer ≥ 0; null"``: the branches of an ``anyOf``/``oneOf``, in order,
    each said once, at most :data:`MAX_BRANCHES` of them (then how many more)."""
    if not isinstance(branches, list) or not branches:
        return "a value the schema describes"
    said: list[str] = []
    for branch in branches:
        words = branch_words(branch)
        if words not in said:
            said.append(words)
    shown: list[str] = []
    length = 0
    for words in said[:MAX_BRANCHES]:
        length += len(words) + 2
        if shown and length > MAX_WORDS_CHARS:
            break
        shown.append(words)
    more = len(said) - len(shown)
    return "; ".join(shown) + (f"; or one of {more} more" if more else "")


def branch_words(branch: Any) -> str:
    """One branch in words: ``"'css'"``, ``"one of 'png', 'jpeg'"``, ``"an integer ≥ 0"``,
    ``"Point (an object with x, y)"``; at most :data:`MAX_BRANCH_CHARS` characters."""
    if branch is True:
        return "anything"
    if branch is False or not isinstance(branch, Mapping):
        return "nothing" if branch is False else "a value the schema describes"
    words = _kind_words(branch)
    title = branch.get("title")
    if isinstance(title, str) and title.strip():
        words = f"{title.strip()} ({words})"
    return _cut(words, MAX_BRANCH_CHARS)


def _kind_words(branch: Mapping[str, Any]) -> str:
    if "const" in branch:
        return _value(branch["const"])
    choices = branch.get("enum")
    if isinstance(choices, list) and choices:
        listed = ", ".join(_value(c) for c in choices[:_MAX_ENUM])
        return f"one of {listed}{', …' if len(choices) > _MAX_ENUM else ''}"
    kinds = branch.get("type")
    names = [kinds] if isinstance(kinds, str) else kinds if isinstance(kinds, list) else []
    names = [n for n in names if n in _ARTICLES]
    if names:
        return " or ".join(_typed(n, branch) for n in names)
    ref = branch.get("$ref")
    if isinstance(ref, str) and ref:
        return f"a {ref.rstrip('/').rsplit('/', 1)[-1] or ref}"
    if isinstance(branch.get("properties"), Mapping):
        return _typed("object", branch)
    if any(isinstance(branch.get(k), list) for k in ("anyOf", "oneOf")):
        return "one of several shapes"
    return "a value the schema describes"


def _typed(kind: str, branch: Mapping[str, Any]) -> str:
    """``kind``'s words, narrowed by the keywords of ``branch`` that apply to it."""
    words = _ARTICLES[kind]
    if kind in ("integer", "number"):
        bounds = [f"{sign} {_value(branch[k])}" for k, sign in _BOUNDS if _is_number(branch.get(k))]
        return " ".join([words, " and ".join(bounds)]) if bounds else words
    if kind == "string":
        low, high = branch.get("minLength"), branch.get("maxLength")
        fmt = branch.get("format")
        if isinstance(fmt, str) and fmt:
            words += f" ({fmt})"
        if _is_count(low) and _is_count(high):
            return f"{words} of {low} to {high} characters"
        if _is_count(high):
            return f"{words} of at most {high} characters"
        if _is_count(low) and low:
            return f"{words} of at least {low} characters"
        return words
    if kind == "array":
        items = branch.get("items")
        item_kind = items.get("type") if isinstance(items, Mapping) else None
        return f"an array of {_PLURALS[item_kind]}" if item_kind in _PLURALS else words
    if kind == "object":
        required = branch.get("required")
        names = [n for n in required if isinstance(n, str)] if isinstance(required, list) else []
        if names:
            return f"{words} with {', '.join(names[:3])}{', …' if len(names) > 3 else ''}"
    return words


def _value(value: Any) -> str:
    """A JSON value from the schema (a ``const``, an ``enum`` entry, a bound), as JSON, short."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return _cut(text, 30)


def _is_number(value: Any) -> bool:
    return type(value) in (int, float)


def _is_count(value: Any) -> bool:
    return type(value) is int and value >= 0


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
