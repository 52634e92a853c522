"""A tool result (or the error that replaced it) as a widget.

Why widgets rather than the result's own HTML repr: images and audio go through ``ipywidgets.Image``
and ``Audio`` (bytes, not markup), and the view can sit inside the explorer and be replaced in place.
Every server string is escaped (:mod:`display._html`); only raster images and known audio types are
decoded; SVG is shown as escaped source text; links are shown as full URLs and never opened or
made clickable, so the user sees where they lead first. A result with a table shows its images
first, above it (a plot beside its structured data is what the user asked for); the table is the
repr's own (a cell that points at an image draws it small, as a checked raster ``data:`` URI).
"""

from __future__ import annotations

import json
from typing import Any

from ..client._results import ToolResult
from ..display._html import (
    RASTER_IMAGE_TYPES,
    base64_size,
    content_block_html,
    decode_base64,
    display_url,
    escape,
    short,
)
from ..display._html import remote_image_host as _remote_image_host
from ..display._pictures import image_note, result_table_html, text_html
from ..display._pictures import options as _options
from ..display._shapes import result_shape
from ..protocol._errors import McpError
from . import _ui as W
from ._lean import lean
from ._shown import HTML

__all__ = ["error_widget", "html_widget", "result_widget"]

_AUDIO_TYPES = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/mpeg": "mp3",
    "audio/mp3": "mp3",
    "audio/ogg": "ogg",
    "audio/webm": "webm",
    "audio/flac": "flac",
}
_MAX_TEXT = 50_000


def html_widget(value: str, *classes: str, **kwargs: Any) -> HTML:
    """An HTML widget with CSS classes; ``value`` must already be escaped (see :mod:`display._html`)."""
    # A shared layout and style unless the caller sets its own (widgets/_lean.py: saved state stays small)
    # _shown.HTML: control and bidi characters in any value set are made visible (issue #35)
    widget = HTML(value=value, **kwargs) if "layout" in kwargs else lean(HTML, value=value, **kwargs)
    for css in classes:
        widget.add_class(css)
    return widget


_html = html_widget


def _pre(text: Any, *classes: str) -> W.HTML:
    text = str(text)
    if len(text) > _MAX_TEXT:
        text = text[:_MAX_TEXT] + f"\n… ({len(text) - _MAX_TEXT} more characters)"
    return _html(f'<pre style="white-space:pre-wrap;margin:0.2em 0">{escape(text)}</pre>', *classes)


def _summary(kind: str, mime: Any, data: Any, why: str = "not shown") -> W.HTML:
    size = base64_size(data)
    return _html(
        f"<em>[{escape(kind)} {escape(mime or '?')}, about {size} bytes, {escape(why)}]</em>", "mcpnb-blob"
    )


def _image(block: dict[str, Any]) -> W.Widget:
    if _remote_image_host(block.get("data") or block.get("uri")) is not None:
        # a URL, not bytes: the same placeholder (or, opted in, <img>) as every other picture
        remote = content_block_html(block, remote_images=_options.remote_images)
        return _html(str(remote), "mcpnb-remote-image")
    mime = str(block.get("mimeType") or "").lower()
    raw = decode_base64(block.get("data"))
    if mime in RASTER_IMAGE_TYPES and raw is not None:
        image = W.Image(value=raw, format=mime.split("/")[1], layout=W.Layout(max_width="100%"))
        image.add_class("mcpnb-image")
        return image
    if mime == "image/svg+xml" and raw is not None:
        # SVG is a document that can carry script: its source, as text, is all we show.
        source = raw[:4000].decode("utf-8", "replace")
        return W.VBox(
            [
                _summary("image", mime, block.get("data"), "SVG shown as source text"),
                _pre(source, "mcpnb-svg-source"),
            ]
        )
    return _summary("image", mime, block.get("data"))


def _audio(block: dict[str, Any]) -> W.Widget:
    mime = str(block.get("mimeType") or "").lower()
    raw = decode_base64(block.get("data"))
    if mime in _AUDIO_TYPES and raw is not None:
        audio = W.Audio(value=raw, format=_AUDIO_TYPES[mime], autoplay=False, controls=True)
        audio.add_class("mcpnb-audio")
        return audio
    return _summary("audio", mime, block.get("data"))


def _resource_link(block: dict[str, Any]) -> W.Widget:
    name = block.get("title") or block.get("name") or ""
    parts = [f"🔗 <b>{escape(short(name, 200))}</b> " if name else "🔗 ", display_url(block.get("uri", ""))]
    if block.get("mimeType"):
        parts.append(f" <small>{escape(block['mimeType'])}</small>")
    if block.get("description"):
        parts.append(f'<div style="font-size:0.9em">{escape(short(block["description"], 1000))}</div>')
    return _html(f"<div>{''.join(parts)}</div>", "mcpnb-resource-link")


def _embedded(block: dict[str, Any]) -> W.Widget:
    resource: dict[str, Any] = block["resource"] if isinstance(block.get("resource"), dict) else {}
    head = _html(f"<div>📄 {display_url(resource.get('uri', ''))}</div>")
    if "text" in resource:
        body: W.Widget = _pre(resource.get("text"), "mcpnb-text")
    else:
        body = _summary("blob", resource.get("mimeType"), resource.get("blob"), "not shown")
    box = W.VBox([head, body])
    box.add_class("mcpnb-resource")
    return box


def block_widget(block: Any) -> W.Widget:
    """One MCP content block as a widget."""
    if not isinstance(block, dict):
        return _pre(json.dumps(block, default=str), "mcpnb-text")
    kind = block.get("type")
    if kind == "text" and isinstance(block.get("text"), str):
        # the same picture as the repr's: Markdown where the text reads as Markdown, lines kept
        return _html(str(text_html(block["text"])), "mcpnb-text")
    if kind == "text":
        return _pre(block.get("text", ""), "mcpnb-text")
    if kind == "image":
        return _image(block)
    if kind == "audio":
        return _audio(block)
    if kind == "resource_link":
        return _resource_link(block)
    if kind == "resource":
        return _embedded(block)
    return _pre(json.dumps(block, indent=2, default=str), "mcpnb-text")


_ERROR_STYLE = "border:1px solid #b00020;background:#fdecea;color:#b00020;padding:4px 8px;border-radius:3px"


def _frame_button(result: ToolResult, code: str = "result") -> W.Widget:
    """A "to DataFrame" button (pandas only imported on click) and the hint for doing it in code
    (``code``: what gives the result in a new cell)."""
    button = lean(W.Button, description="to DataFrame", icon="table", tooltip="show result.to_dataframe()")
    button.add_class("mcpnb-to-dataframe")
    output = lean(W.Output)
    output.add_class("mcpnb-dataframe-output")

    def show(_: Any) -> None:
        output.clear_output()
        try:
            frame = result.to_dataframe()
        except Exception as exc:  # pandas missing, or data no table can hold
            output.append_stdout(f"no DataFrame: {type(exc).__name__}: {exc}\n")
            return
        try:
            output.append_display_data(frame)
        except Exception:  # no IPython shell (a plain script): the text form still shows
            output.append_stdout(frame.to_string() + "\n")

    button.on_click(show)
    hint = _html(f"<small>in code: <code>{escape(code)}.to_dataframe()</code></small>", "mcpnb-hint")
    box = lean(W.VBox, children=[lean(W.HBox, {"align_items": "center"}, children=[button, hint]), output])
    box.add_class("mcpnb-dataframe")
    return box


def _error_box(title: str, text: str, *classes: str) -> W.HTML:
    body = ""
    if text:
        text = escape(short(text, _MAX_TEXT))
        body = f'<pre style="white-space:pre-wrap;margin:0.2em 0;color:inherit">{text}</pre>'
    return _html(f'<div style="{_ERROR_STYLE}"><b>{escape(title)}</b>{body}</div>', "mcpnb-error", *classes)


def error_widget(error: BaseException) -> W.Widget:
    """An McpError (kind, code, message) or any other exception as an error box."""
    if isinstance(error, McpError):
        code = f", code {error.code}" if error.code is not None else ""
        if error.kind == "cancelled":
            return _error_box(f"Cancelled{code}", error.message, "mcpnb-cancelled")
        return _error_box(f"McpError [{error.kind}{code}]", error.message)
    return _error_box(type(error).__name__, str(error))


def result_widget(result: ToolResult | BaseException, *, code: str = "result") -> W.Widget:
    """The result view (CSS class ``mcpnb-result``): content blocks, a table, or the error;
    ``code`` is what its hint calls the result (code that gives it in a new cell)."""
    if isinstance(result, BaseException):
        children: list[W.Widget] = [error_widget(result)]
    elif isinstance(result, ToolResult):
        children = _result_children(result._masked(), code)  # secrets the server echoed: ***
    else:
        children = [_pre(repr(result), "mcpnb-text")]
    box = lean(W.VBox, {"width": "100%"}, children=children)
    box.add_class("mcpnb-result")
    return box


def _folded(blocks: list[Any]) -> list[W.Widget]:
    """The blocks under a table, folded away; an image (drawn above the table) only named there."""
    folded: list[W.Widget] = []
    number = 0
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "image":
            number += 1
            folded.append(_html(str(image_note(number, block)), "mcpnb-image-ref"))
        else:
            folded.append(block_widget(block))
    return folded


def _result_children(result: ToolResult, code: str = "result") -> list[W.Widget]:
    children: list[W.Widget] = []
    if result.is_error:
        children.append(_error_box("The tool reported an error", result.text))
        blocks = [b for b in result.content if b.get("type") != "text"]
    else:
        # the inference's blocks: the content, or a {"result": text} wrapper's text when it has none
        shape = result_shape(result.structured_content, result.content)
        blocks = list(shape.value) if shape.kind == "blocks" else list(result.content)
    # The same table as the result's repr (one renderer): its first rows, its size, the raw JSON.
    table = result_table_html(result.structured_content, result.content)
    if table is not None:
        # Images first, as in the repr: a plot beside its structured data is shown, not folded away;
        # among the folded blocks it is only named.
        images = [b for b in blocks if isinstance(b, dict) and b.get("type") == "image"]
        children.extend(block_widget(b) for b in images[: _options.max_blocks])
        children.append(_html(table, "mcpnb-result-table"))
        children.append(_frame_button(result, code))
        if blocks and result.structured_content is not None:
            # The text blocks usually repeat the structured data; they stay one click away.
            content = _folded(blocks)
            more = W.Accordion(children=[W.VBox(content)], selected_index=None)
            more.set_title(0, f"content ({len(content)} block{'s' if len(content) != 1 else ''})")
            more.add_class("mcpnb-content")
            children.append(more)
    else:
        children.extend(block_widget(b) for b in blocks)
    if not children:
        children.append(_html("<em>(empty result)</em>", "mcpnb-empty"))
    return children
