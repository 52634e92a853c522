"""A widget that opens (and is stored) with only its non-default traits.

A ``Layout`` or style opened in full is about 1 KB of ``None``: in every saved notebook for a real
model (the panels' shared layout), in every tree a view is sent for a virtual one (the layouts and
styles panels share, :mod:`.._lean`). The front end fills in the rest from the same defaults
(ipywidgets' own ``embed`` stores state that way).
"""

from __future__ import annotations

from typing import Any

__all__ = ["Sparse"]


class Sparse:
    """Opens (and stores) only its non-default traits; a later change still sends its value."""

    def get_state(self, key: Any = None, drop_defaults: bool = False) -> dict[str, Any]:
        full: dict[str, Any] = super().get_state(key, drop_defaults)  # type: ignore[misc]
        if key is not None:
            return full
        # the model's names (``_model_name``...) always: a front end and nbclient look the model up by them
        sparse: dict[str, Any] = super().get_state(None, True)  # type: ignore[misc]
        return {k: v for k, v in full.items() if k.startswith("_") or k in sparse}
