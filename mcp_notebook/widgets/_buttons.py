"""A button's enabled state as a person sees it (issue #29: disabled buttons looked enabled).

Why more than ``disabled``: the front end only dims a disabled button, so an orange Cancel or a
blue Call at rest still read as live. A disabled button here also loses its colour
(``button_style`` back to plain), carries the CSS class ``mcpnb-disabled``, and says why in its
tooltip. Only the button's own traits change (its layout and style may be shared with others).
"""

from __future__ import annotations

from typing import Any

__all__ = ["DISABLED_CLASS", "set_enabled"]

DISABLED_CLASS = "mcpnb-disabled"


def set_enabled(button: Any, enabled: bool, *, style: str = "", tip: str = "", why: str = "") -> None:
    """Enable ``button`` (with ``button_style`` ``style`` and tooltip ``tip``) or disable it (plain,
    ``mcpnb-disabled``, tooltip ``tip (why)``). Traits that already hold the value are left alone,
    so nothing is sent for them."""
    disabled = not enabled
    look = style if enabled else ""
    tooltip = tip if enabled or not why else f"{tip} ({why})" if tip else why
    if button.disabled != disabled:
        button.disabled = disabled
    if button.button_style != look:
        button.button_style = look
    if tooltip and button.tooltip != tooltip:
        button.tooltip = tooltip
    if disabled:
        button.add_class(DISABLED_CLASS)
    else:
        button.remove_class(DISABLED_CLASS)
