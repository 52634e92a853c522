"""How far any walk of a server's JSON Schema (or of a value shaped by one) may go: one node budget.

Why: a schema is a graph, not a tree. A 1 KB schema whose definitions each refer to the next one
four times expands to 4**n nodes: without a bound, the explorer's form built 393,000 widgets for
one (92 s, 1 GB) and ``to_dataframe()`` grew x3 per level. Every walk that expands a schema or
flattens a value (the form's fields, the frames' typed and flattened columns, the magics' type
lookup) takes one :class:`NodeBudget` and stops expanding when it is spent: the form shows a JSON
editor for that part, a frame keeps that value as JSON text in its cell, the magics stop looking.
Validation is not a walk of this kind: it visits the value, not the schema's expansion, and has
its own module with the same no-fetch rule (:mod:`._json_schema`).

References resolve only inside the document (:func:`local_target`); a reference anywhere else is
never fetched, it simply leads nowhere. Pure: no I/O.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

__all__ = ["MAX_SCHEMA_NODES", "NOWHERE", "NodeBudget", "local_target"]

#: The one limit of every schema walk, in nodes: references expanded, properties, enum entries and
#: array items visited. Large real tool schemas (cloud APIs' nested request bodies, with their
#: definitions expanded) come to a few hundred nodes, and a form stops drawing choices past 500 per
#: drop-down already; 2,000 leaves room for four times the largest while a form stays under about
#: 10,000 widget models and a frame under 2,000 columns from one record.
MAX_SCHEMA_NODES = 2_000

#: what :func:`local_target` returns for a reference that leads nowhere in the document
NOWHERE: Any = type("_Nowhere", (), {"__repr__": lambda self: "<nowhere>"})()


class NodeBudget:
    """Nodes a walk may still visit. :meth:`take` spends them or refuses, all or nothing.

    A refusal spends nothing (a small part after a large one may still fit) and is counted in
    :attr:`refused`, so the walk can say that something was cut.
    """

    __slots__ = ("limit", "refused", "used")

    def __init__(self, limit: int = MAX_SCHEMA_NODES) -> None:
        self.limit = limit
        self.used = 0
        self.refused = 0

    @property
    def exceeded(self) -> bool:
        """Whether some part of the walk was refused (and so cut)."""
        return self.refused > 0

    @property
    def remaining(self) -> int:
        return self.limit - self.used

    def take(self, count: int = 1) -> bool:
        """Spend ``count`` nodes; ``False`` (spending none) when fewer than that are left."""
        if count > self.limit - self.used:
            self.refused += 1
            return False
        self.used += count
        return True

    def __repr__(self) -> str:
        return f"NodeBudget({self.used}/{self.limit}{', exceeded' if self.exceeded else ''})"


def local_target(root: Any, ref: str) -> Any:
    """The node ``ref`` (``#`` or ``#/a/b``, a JSON Pointer as a URI fragment, RFC 6901) points at
    inside ``root``, or :data:`NOWHERE`: another document, a URL, a named anchor or a path that is
    not there. Never any I/O."""
    if not ref.startswith("#"):
        return NOWHERE  # another document or a URL: never fetched
    pointer = unquote(ref[1:])
    if pointer == "":
        return root
    if not pointer.startswith("/"):
        return NOWHERE  # a named anchor ("#foo")
    node = root
    for token in pointer[1:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return NOWHERE
    return node
