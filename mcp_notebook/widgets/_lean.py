"""Shared layouts and styles, so that a panel's tree holds a handful of them, not hundreds.

Every ipywidgets control makes a ``Layout`` and a style of its own. The panels' controls are virtual
(:mod:`._ui`: no model of the front end each), but each layout and style is still a control of the
panel's tree, sent to its view when it says hello. An explorer over 15 tools would send 200 of them.
A widget whose layout and style never change after it is built shares one ``Layout`` per distinct
setting and one style per style class, through :func:`lean`; a shared one is sent with only the
settings that differ from the defaults (:class:`Sparse`).

Never for a widget whose ``layout`` or ``style`` is changed later (hidden, resized, recoloured):
the change would reach every widget sharing it. Replacing ``widget.layout`` with a new object is fine.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any, TypeVar

from . import _ui as W
from ._ui._sparse import Sparse

__all__ = ["close_tree", "lean", "shared_layout"]

_T = TypeVar("_T", bound=W.DOMWidget)
_lock = threading.Lock()
_layouts: dict[tuple[tuple[str, str], ...], W.Layout] = {}
_styles: dict[type, W.Widget] = {}


class _SparseLayout(Sparse, W.Layout):
    pass


_sparse_styles: dict[type, type] = {}


def _alive(widget: W.Widget | None) -> bool:
    return widget is not None and getattr(widget, "comm", None) is not None


def shared_layout(**settings: str) -> W.Layout:
    """One ``Layout`` per distinct ``settings`` (a closed one is replaced)."""
    key = tuple(sorted(settings.items()))
    with _lock:
        found = _layouts.get(key)
        if found is None or not _alive(found):
            found = _layouts[key] = _SparseLayout(**settings)
        return found


def _shared_style(cls: type) -> Any:
    with _lock:
        found = _styles.get(cls)
        if not _alive(found):
            sparse = _sparse_styles.setdefault(cls, type(f"_Sparse{cls.__name__}", (Sparse, cls), {}))
            found = _styles[cls] = sparse()
        return found


def lean(cls: type[_T], layout: dict[str, str] | None = None, **kwargs: Any) -> _T:
    """``cls(**kwargs)`` with a shared layout (``layout``'s settings) and, unless given, style."""
    trait = cls.class_traits().get("style")
    if trait is not None and "style" not in kwargs and isinstance(getattr(trait, "klass", None), type):
        kwargs["style"] = _shared_style(trait.klass)
    widget: _T = cls(layout=shared_layout(**(layout or {})), **kwargs)
    return widget


def _tree(widget: W.Widget) -> Iterator[W.Widget]:
    yield widget
    for child in getattr(widget, "children", ()) or ():
        yield from _tree(child)


def close_tree(*roots: W.Widget) -> None:
    """Close ``roots`` and every widget below them, leaves first, with their own layouts and styles;
    never a shared one (:func:`lean`), which other widgets still show. A view that replaces a part
    closes the old one this way, so the number of live widget models stays flat (DESIGN.md)."""
    for root in roots:
        for widget in reversed(list(_tree(root))):
            widget.close()
            # A layout or style of its own (not a shared, sparse one) is a model too, and would
            # outlive the widget: two models left by each form replaced, before.
            for part in (getattr(widget, "layout", None), getattr(widget, "style", None)):
                if isinstance(part, W.Widget) and not isinstance(part, Sparse):
                    part.close()
