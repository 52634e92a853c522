"""Shared layouts and styles, so that a panel is a handful of widget models, not hundreds.

Every ipywidgets control makes a ``Layout`` model and a style model of its own, and a notebook that
stores its widget state (``jupyter nbconvert --execute``, nbclient, papermill, JupyterLab's "save
widget state") writes every model ever opened, each in full: a ``Layout`` is about 1 KB of ``None``.
An explorer over 15 tools stored 200 of them (issue #29: executed notebook 02 held 671 models,
759 KB). A widget whose layout and style never change after it is built shares one ``Layout`` per
distinct setting and one style per style class, through :func:`lean`.

A shared layout or style also opens with only the settings that differ from the defaults
(:class:`_Sparse`): the front end fills in the rest from the same defaults (ipywidgets' own
``embed`` stores state that way), so a stored ``Layout`` is a few dozen bytes, not 1 KB.

Never for a widget whose ``layout`` or ``style`` is changed later (hidden, resized, recoloured):
the change would reach every widget sharing it. Replacing ``widget.layout`` with a new object is fine.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any, TypeVar

import ipywidgets as W

__all__ = ["close_tree", "lean", "shared_layout"]

_T = TypeVar("_T", bound=W.DOMWidget)
_lock = threading.Lock()
_layouts: dict[tuple[tuple[str, str], ...], W.Layout] = {}
_styles: dict[type, W.Widget] = {}


class _Sparse:
    """Opens (and stores) only its non-default traits; a later change still sends its value."""

    def get_state(self, key: Any = None, drop_defaults: bool = False) -> dict[str, Any]:
        full: dict[str, Any] = super().get_state(key, drop_defaults)  # type: ignore[misc]
        if key is not None:
            return full
        # the model's names (``_model_name``...) always: a front end and nbclient look the model up by them
        sparse: dict[str, Any] = super().get_state(None, True)  # type: ignore[misc]
        return {k: v for k, v in full.items() if k.startswith("_") or k in sparse}


class _SparseLayout(_Sparse, W.Layout):
    pass


_sparse_styles: dict[type, type] = {}


def _alive(widget: W.Widget | None) -> bool:
    return widget is not None and getattr(widget, "comm", None) is not None


def shared_layout(**settings: str) -> W.Layout:
    """One ``Layout`` per distinct ``settings`` (a closed one is replaced)."""
    key = tuple(sorted(settings.items()))
    with _lock:
        found = _layouts.get(key)
        if not _alive(found):
            found = _layouts[key] = _SparseLayout(**settings)
        return found


def _shared_style(cls: type) -> Any:
    with _lock:
        found = _styles.get(cls)
        if not _alive(found):
            sparse = _sparse_styles.setdefault(cls, type(f"_Sparse{cls.__name__}", (_Sparse, cls), {}))
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
                if isinstance(part, W.Widget) and not isinstance(part, _Sparse):
                    part.close()
