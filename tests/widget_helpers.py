"""What the widget tests share: walking a widget tree, reading its markup, waiting, hostile text."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

#: Markup a hostile server might send: rendered, it would run script.
HOSTILE = '<img src=x onerror="alert(1)"><script>alert(2)</script>'


def walk(widget: Any) -> Iterator[Any]:
    """The widget and everything below it."""
    yield widget
    for child in getattr(widget, "children", ()) or ():
        yield from walk(child)


def find(widget: Any, css: str) -> list[Any]:
    """The widgets under ``widget`` carrying the CSS class ``css``."""
    return [w for w in walk(widget) if css in w._dom_classes]


def markup(widget: Any) -> str:
    """Every HTML widget's value under ``widget``: what a browser renders as markup."""
    return "\n".join(
        w.value for w in walk(widget) if type(w).__name__ in ("HTML", "HTMLMath") and isinstance(w.value, str)
    )


def assert_escaped(text: str) -> None:
    """No live script or image from :data:`HOSTILE` (escaped text is fine)."""
    lowered = text.lower()
    assert "<script" not in lowered
    assert "<img src=x" not in lowered
    assert 'onerror="' not in lowered  # an attribute needs a raw quote or a tag: both are escaped


def wait_for(predicate: Callable[[], Any], timeout: float, what: str) -> None:
    """Poll ``predicate`` (widget state changes on another thread) until true, or fail naming ``what``."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(0.01)


class HistoryRow:
    """One row of the explorer's history table: its call line and its tooltip, entities decoded."""

    def __init__(self, raw: str) -> None:
        import html
        import re

        self.raw = raw
        title = re.search(r'title="([^"]*)"', raw)
        self.tooltip = html.unescape(title.group(1)) if title else ""
        self.text = html.unescape(re.findall(r"<td[^>]*>([^<]*)</td>", raw)[-1])


def history_rows(explorer: Any) -> list[HistoryRow]:
    """The explorer's history rows, newest first."""
    import re

    table = explorer._history.table.value
    return [HistoryRow(row) for row in re.findall(r'<tr class="mcpnb-history-entry".*?</tr>', table, re.S)]


def history_click(explorer: Any, index: int, css: str) -> None:
    """Pick the ``index``-th history row (0 is the newest) and click its ``css`` button."""
    explorer._history.choose(index)
    find(explorer.history, css)[0].click()


def drawn(widget: Any) -> dict[str, Any]:
    """The tree a browser's view of ``widget``'s panel is sent when it says hello (every control of
    the panel by its id, ``top`` the widget's), as mcp_notebook/widgets/_ui/_root.py sends it."""
    panel = widget.as_panel()
    got: list[dict[str, Any]] = []
    view = f"test-{id(got)}"
    real = panel.send
    panel.send = lambda message, *_a, **_k: (
        got.append(message) if message.get("for") == view else real(message)
    )
    try:
        panel._from_view(panel, {"t": "hello", "view": view, "have": []}, [])
    finally:
        del panel.send
    assert got, "the panel answered no hello"
    return got[0]


def widget_models() -> int:
    """Every widget model alive: ipywidgets' own (each a model in the front end) and the panels'
    virtual controls (mcp_notebook/widgets/_ui), so a test of "no model made" still sees a leak."""
    from ipywidgets.widgets.widget import _instances

    from mcp_notebook.widgets._ui import open_controls

    return len(_instances) + open_controls()
