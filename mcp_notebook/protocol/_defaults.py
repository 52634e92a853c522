"""The one rule for a required property that was left out but whose schema gives it a ``default``.

Why: servers publish schemas that both require a property and give it a default (zod's
``.default()`` does; @playwright/mcp's ``browser_take_screenshot`` lists ``scale`` in ``required`` with
``"default": "css"``). Their own validation fills the default in, so the call in Playwright's README,
``{"type": "png"}``, is answered when sent; a client that refused it for the missing ``scale`` was
stricter than the server, and disagreed with its own explorer, whose form shows the default. So the
default is filled in before the check, and the filled value is what is sent: the server sees what
was judged. ``call_tool`` (and so the magics and groups), the explorer's form and ``%mcp call``'s
own check of required names all use this function; ``validate=False`` skips it with the check.

Only the top level is filled, from the root's own ``properties`` and ``required`` (no ``$ref``,
``allOf`` or nested objects are followed): that is where servers put such defaults, and what a
caller left out is plain to see there. A default is copied, so the caller's arguments never share
objects with the server's schema.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

__all__ = ["defaulted_required", "required_defaults"]


def defaulted_required(schema: Any) -> tuple[tuple[str, Any], ...]:
    """``(name, default)`` of each property ``schema`` requires that has a ``default``, in the
    order of ``required``; ``()`` for none, or for no object schema. What depends on the schema
    alone, so a caller can keep it per tool (``call_tool`` does: its hot path pays a lookup)."""
    if not isinstance(schema, Mapping):
        return ()
    required = schema.get("required")
    properties = schema.get("properties")
    if not isinstance(required, list) or not isinstance(properties, Mapping):
        return ()
    found: dict[str, Any] = {}
    for name in required:
        spec = properties.get(name) if isinstance(name, str) else None
        if isinstance(spec, Mapping) and "default" in spec and name not in found:
            found[name] = spec["default"]
    return tuple(found.items())


def fill(defaults: tuple[tuple[str, Any], ...], given: Mapping[str, Any]) -> dict[str, Any]:
    """Copies of the ``defaults`` (from :func:`defaulted_required`) whose names ``given`` lacks."""
    return {name: copy.deepcopy(default) for name, default in defaults if name not in given}


def required_defaults(schema: Any, given: Mapping[str, Any]) -> dict[str, Any]:
    """The defaults of the properties ``schema`` requires that ``given`` lacks (only those that
    have a ``default``), by name; ``{}`` when none is missing or the schema is no object schema."""
    return fill(defaulted_required(schema), given)
