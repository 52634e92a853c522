"""Safe HTML for rich reprs: everything a server sent is escaped, nothing it sent is executed.

Only the functions here turn server data into markup, so there is one place to audit. Images are
inlined only as raster ``data:`` URIs of an allow-listed MIME type with base64 that checks out (SVG
can carry script, so it is shown as text); links get an ``href`` only for http(s) URLs.
"""

from __future__ import annotations

import base64
import binascii
import html
import json
from typing import Any

__all__ = ["code_block", "content_block_html", "esc", "link", "table"]

_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp"})
_AUDIO_TYPES = frozenset({"audio/wav", "audio/x-wav", "audio/mpeg", "audio/ogg", "audio/webm", "audio/flac"})
_MAX_INLINE_TEXT = 20_000


#: The colour of each connection state (a session's, a group member's); anything else is grey.
STATE_COLOURS = {
    "ready": "#1b873f",
    "connecting": "#b08800",
    "negotiating": "#b08800",
    "reconnecting": "#d9480f",
    "closed": "#6a737d",
}
_OTHER_STATE = "#6a737d"


def state_badge(state: Any) -> str:
    """A connection state as a coloured badge (``mcpnb-badge``), the same in every rich repr and
    widget; the state's text is escaped."""
    state = str(state)
    colour = STATE_COLOURS.get(state, _OTHER_STATE)
    return (
        f'<span class="mcpnb-badge" style="background:{colour};color:white;border-radius:0.8em;'
        f'padding:0.1em 0.7em;font-weight:bold">{esc(state)}</span>'
    )


def esc(value: Any) -> str:
    """Escape any value for HTML text and attribute context."""
    return html.escape(str(value), quote=True)


def code_block(text: str) -> str:
    if len(text) > _MAX_INLINE_TEXT:
        text = text[:_MAX_INLINE_TEXT] + f"\n… ({len(text) - _MAX_INLINE_TEXT} more characters)"
    return f'<pre style="white-space:pre-wrap;margin:0.2em 0">{esc(text)}</pre>'


def link(uri: str, label: str | None = None) -> str:
    text = esc(label if label is not None else uri)
    if isinstance(uri, str) and uri.lower().startswith(("http://", "https://")):
        return f'<a href="{esc(uri)}" target="_blank" rel="noopener noreferrer nofollow">{text}</a>'
    return f"<code>{text}</code>"


def table(rows: list[tuple[str, str]]) -> str:
    """A two-column table; the cells must already be HTML (escaped)."""
    body = "".join(
        f'<tr><th style="text-align:left;vertical-align:top;padding-right:1em">{k}</th>'
        f'<td style="text-align:left">{v}</td></tr>'
        for k, v in rows
    )
    return f"<table>{body}</table>"


def _valid_base64(data: Any) -> bool:
    if not isinstance(data, str):
        return False
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _media(kind: str, mime: Any, data: Any) -> str:
    if not isinstance(mime, str):  # a server may send anything here, even a list (unhashable)
        mime = None
    if kind == "image" and mime in _IMAGE_TYPES and _valid_base64(data):
        return f'<img src="data:{mime};base64,{data}" style="max-width:100%">'
    if kind == "audio" and mime in _AUDIO_TYPES and _valid_base64(data):
        return f'<audio controls src="data:{mime};base64,{data}"></audio>'
    size = len(data) * 3 // 4 if isinstance(data, str) else 0
    return f"<em>[{esc(kind)} {esc(mime)}, about {size} bytes, not shown]</em>"


def content_block_html(block: Any) -> str:
    """One MCP content block as HTML."""
    if not isinstance(block, dict):
        return code_block(json.dumps(block, default=str))
    kind = block.get("type")
    if kind == "text":
        return code_block(str(block.get("text", "")))
    if kind in ("image", "audio"):
        return _media(str(kind), block.get("mimeType"), block.get("data"))
    if kind == "resource_link":
        name = block.get("title") or block.get("name") or block.get("uri")
        return f"<div>🔗 {link(str(block.get('uri', '')), str(name))}</div>"
    if kind == "resource":
        resource = block.get("resource")
        if not isinstance(resource, dict):
            resource = {}
        uri = esc(resource.get("uri", ""))
        if "text" in resource:
            return f"<div><code>{uri}</code>{code_block(str(resource['text']))}</div>"
        return (
            f"<div><code>{uri}</code> {_media('blob', resource.get('mimeType'), resource.get('blob'))}</div>"
        )
    return code_block(json.dumps(block, indent=2, default=str))
