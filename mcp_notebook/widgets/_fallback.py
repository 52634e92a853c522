"""What a panel shows where no widget can run: a line of text and a static HTML snapshot.

A saved notebook read on GitHub or nbviewer (which render ``text/html`` but not widget views), in
nbconvert's output without widget state, or in a terminal IPython, would otherwise show ipywidgets'
own repr (``StatusWidget(children=(HTML(value='<span ...``). :class:`Fallback`, mixed in before the
ipywidgets class, puts two more keys beside the widget view in the display bundle: ``text/plain``
(:meth:`Fallback.summary`, a line or a few: server, status, era, counts) and ``text/html``
(:meth:`Fallback.snapshot_html`, the panel's state when it was displayed). A front end that runs
widgets still shows the live view, which it ranks above HTML.

The snapshot is built from the panel's own widgets by :func:`static_html`: an ``HTML`` widget's
value is markup our panels already built with every server string escaped (:mod:`display._html`); text
controls, labels, choices and titles are escaped here. Nothing is executed and no script is added.
Buttons are left out (nothing can be clicked in a snapshot), and so is what the panel hides. An
image (a plot a tool answered) is kept small, or named (its type and size) when it is large: a
saved notebook shows that there was one, never nothing.
"""

from __future__ import annotations

import base64
import logging
from typing import Any

import ipywidgets as W

from ..display._html import RASTER_IMAGE_TYPES, escape, safe_image_src, short

__all__ = ["Fallback", "plural", "static_html", "status_line"]

logger = logging.getLogger("mcp_notebook.widgets")

_DEPTH = 40  # nesting deeper than this is not drawn (a panel is nowhere near it)
_SKIPPED = (W.Button, W.ToggleButton, W.FloatProgress, W.IntProgress, W.FloatSlider, W.IntSlider, W.Image)
#: bytes of one image a snapshot keeps inline (a thumbnail); a larger one is named, not copied
_SNAPSHOT_IMAGE = 200_000
_NOTE = '<div class="mcpnb-static-note" style="color:#6a737d;font-size:0.8em">{}</div>'


def _hidden(widget: Any) -> bool:
    layout = getattr(widget, "layout", None)
    return layout is not None and (layout.display == "none" or layout.visibility == "hidden")


def _labelled(description: Any, value: Any) -> str:
    label = f"<b>{escape(short(description, 80))}</b> " if description else ""
    return f'<div class="mcpnb-static-field">{label}{escape(short(value, 2000))}</div>'


def _image_html(image: W.Image) -> str:
    """An image as a thumbnail (a raster type within :data:`_SNAPSHOT_IMAGE`), else its name."""
    value = image.value  # ipywidgets keeps it as a memoryview
    data = bytes(value) if isinstance(value, bytes | bytearray | memoryview) else b""
    mime = f"image/{str(image.format).lower()}"
    if mime in RASTER_IMAGE_TYPES and 0 < len(data) <= _SNAPSHOT_IMAGE:
        src = safe_image_src(base64.b64encode(data).decode("ascii"), mime)
        if src is not None:
            style = "max-width:100%;max-height:20em"
            return f'<img class="mcpnb-static-image" src="{escape(src)}" style="{style}">'
    return f'<div class="mcpnb-static-image"><em>[image {escape(mime)}, {len(data):,} bytes]</em></div>'


def _output_html(output: W.Output) -> str:
    parts = []
    for item in output.outputs:
        if not isinstance(item, dict):
            continue
        data = item.get("data") or {}
        if item.get("output_type") == "stream":
            parts.append(f"<pre>{escape(short(item.get('text', ''), 20_000))}</pre>")
        elif "text/html" in data:  # what our panels put there: pandas' tables, our reprs (escaped)
            parts.append(str(data["text/html"]))
        elif "text/plain" in data:
            parts.append(f"<pre>{escape(short(data['text/plain'], 20_000))}</pre>")
    return "".join(parts)


def static_html(widget: Any, depth: int = 0) -> str:
    """``widget`` and what it holds as static HTML (see the module's docstring)."""
    if depth > _DEPTH or widget is None or _hidden(widget):
        return ""
    if depth and isinstance(widget, Fallback):  # a panel inside another draws itself
        return widget.snapshot_html()
    if isinstance(widget, W.HTML | W.HTMLMath):
        return f"<div>{widget.value}</div>" if widget.value else ""
    if isinstance(widget, W.Label):
        return f"<div>{escape(widget.value)}</div>" if widget.value else ""
    if isinstance(widget, _SKIPPED):
        # buttons, sliders and progress bars are left out (their label says the state); images kept
        return _image_html(widget) if isinstance(widget, W.Image) else ""
    if isinstance(widget, W.Checkbox):
        return _labelled(None, f"{'☑' if widget.value else '☐'} {widget.description}")
    if isinstance(widget, W.Text | W.Textarea | W.Password | W.Combobox):
        if isinstance(widget, W.Password) or not widget.value:
            return ""
        return _labelled(widget.description, widget.value)
    if isinstance(widget, W.Dropdown | W.Select | W.RadioButtons | W.ToggleButtons):
        return _labelled(widget.description, widget.label if widget.label is not None else "")
    if isinstance(widget, W.SelectMultiple):
        return _labelled(widget.description, ", ".join(str(v) for v in widget.label))
    if isinstance(widget, W.Output):
        return _output_html(widget)
    if isinstance(widget, W.Tab | W.Accordion):
        sections = []
        for index, child in enumerate(widget.children):
            title = widget.get_title(index) or ""
            body = static_html(child, depth + 1)
            sections.append(f"<h4>{escape(title)}</h4>{body}")
        return "<div>" + "".join(sections) + "</div>"
    if isinstance(widget, W.Box):
        inner = [static_html(child, depth + 1) for child in widget.children]
        style = ' style="display:flex;flex-wrap:wrap;gap:0.5em"' if isinstance(widget, W.HBox) else ""
        return f"<div{style}>" + "".join(part for part in inner if part) + "</div>"
    return ""


def plural(count: int, word: str) -> str:
    """``1 tool``, ``2 tools``."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def status_line(session: Any) -> str:
    """``demo ready, modern 2026-07-28, 14 tools, 0 in flight`` (and the last error, on its own line)."""
    model = session.model
    protocol = f"{model.era or '?'} {model.protocol_version or ''}".strip()
    line = (
        f"{short(getattr(session, 'name', ''), 80)} {model.status}, {protocol}, "
        f"{plural(len(model.tools), 'tool')}, {int(model.in_flight)} in flight"
    )
    if model.last_error:
        line += f"\n  last error: {short(model.last_error, 200)}"
    return line


class Fallback:
    """Mixed in before an ipywidgets class: ``text/plain`` and ``text/html`` beside the widget view.

    A panel overrides :meth:`summary` (and :meth:`snapshot_html` where the generic snapshot of its
    widgets is not the best reading); ``repr()`` is the summary too.
    """

    #: What the snapshot's note says.
    snapshot_note = "A snapshot of the live panel, taken when it was shown; run the cell for the live one."

    def summary(self) -> str:
        """One line (or a few) for a terminal or a notebook read without widgets."""
        return f"<{type(self).__name__}>"

    def snapshot_html(self) -> str:
        """The panel's state as static HTML (every server string escaped)."""
        return static_html(self)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)  # type: ignore[misc]
        if isinstance(bundle, tuple):  # anywidget answers (data, metadata): keep its metadata
            return self._with_fallbacks(bundle[0]), bundle[1]
        return self._with_fallbacks(bundle)

    def _with_fallbacks(self, bundle: Any) -> dict[str, Any]:
        data: dict[str, Any] = dict(bundle or {})
        data["text/plain"] = repr(self)
        try:
            snapshot = self.snapshot_html()
        except Exception:  # a snapshot must never stop the live widget from showing
            logger.warning("could not draw %s as static HTML", type(self).__name__, exc_info=True)
            return data
        note = _NOTE.format(escape(self.snapshot_note))
        data["text/html"] = f'<div class="mcpnb-static">{snapshot}{note}</div>'
        return data

    def __repr__(self) -> str:
        try:
            return self.summary()
        except Exception:  # half-built or closed: still a repr
            logger.debug("could not sum up %s", type(self).__name__, exc_info=True)
            return f"<{type(self).__name__}>"
