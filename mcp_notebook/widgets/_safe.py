"""Turning untrusted server data into markup for widgets: the one place to audit.

Everything an MCP server sends (tool names, descriptions, results, URLs, error text) may be hostile.
Widgets show it through ipywidgets text controls where possible (those never interpret markup);
where an ``HTML`` widget is needed, its value is built only by the functions here, which escape every
server string. Images are accepted only as raster ``data:`` URIs with base64 that checks out or as
``https:`` URLs (SVG can carry script, so it is never inlined); URLs are shown in full, with the host
in bold and in its ASCII (punycode) form, so a look-alike domain or a ``user@host`` trick is visible.
"""

from __future__ import annotations

import base64
import binascii
import html
import inspect
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "RASTER_IMAGE_TYPES",
    "display_url",
    "escape",
    "html_table",
    "markdown_html",
    "safe_image_src",
    "short",
]

#: Image types a browser decodes without running anything (SVG is a document and can hold script).
RASTER_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp"})
_MAX_CELL = 500
_DATA_URI = re.compile(r"^data:([a-z0-9.+/-]+)((?:;[a-z0-9=.+-]+)*);base64,([A-Za-z0-9+/=\s]*)$", re.I)
# Characters that may hide what a URL really is: controls, spaces, bidi overrides, zero-width ones.
_HIDDEN = re.compile(r"[\x00-\x20\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def escape(text: Any) -> str:
    """Any value as HTML text, safe in element content and in quoted attributes. ``None`` is ``""``."""
    return "" if text is None else html.escape(str(text), quote=True)


_LINK_SCHEMES = ("http://", "https://", "mailto:")


def _markdown() -> Any:
    """CommonMark with raw HTML off (a tag is shown as text), no images (a remote image would
    tell the server who reads the notebook), and links only to http(s) and mailto."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.disable("image")
    md.validateLink = lambda url: url.strip().lower().startswith(_LINK_SCHEMES)

    def link_open(renderer: Any, tokens: Any, index: int, options: Any, env: Any) -> str:
        token = tokens[index]
        token.attrSet("target", "_blank")
        token.attrSet("rel", "noopener noreferrer nofollow")
        return str(renderer.renderToken(tokens, index, options, env))

    md.add_render_rule("link_open", link_open)
    return md


_MD: Any = None


def markdown_html(text: Any, limit: int = 5000) -> str:
    """Untrusted Markdown (a tool's description) as HTML: never raw HTML, never script, no images,
    links only to http(s) and mailto. Without markdown-it-py, the escaped text, its lines kept."""
    global _MD
    text = inspect.cleandoc(short(text, limit))  # a docstring's indented lines are not code blocks
    try:
        if _MD is None:
            _MD = _markdown()
        return str(_MD.render(text))
    except ImportError:
        return f'<div style="white-space:pre-wrap">{escape(text)}</div>'


def short(text: Any, limit: int = _MAX_CELL) -> str:
    """``text`` as a string of at most ``limit`` characters (an ellipsis marks a cut)."""
    text = "" if text is None else str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _valid_base64(data: str) -> bool:
    try:
        base64.b64decode("".join(data.split()), validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def safe_image_src(uri_or_data: Any, mime: str | None = None) -> str | None:
    """A value fit for ``<img src=...>`` (still to be attribute-escaped), or ``None`` if unsafe.

    Accepts a ``data:`` URI of a raster image, an ``https:`` URL (of anything but SVG), or bare
    base64 ``data`` with its ``mime`` type (as in an MCP image content block). Refuses SVG,
    ``javascript:``, ``http:``, malformed base64 and everything else.
    """
    if not isinstance(uri_or_data, str) or not uri_or_data:
        return None
    mime = mime.strip().lower() if isinstance(mime, str) else None
    value = uri_or_data.strip()
    if value[:5].lower() == "data:":
        match = _DATA_URI.match(value)
        if not match or match.group(1).lower() not in RASTER_IMAGE_TYPES or not _valid_base64(match.group(3)):
            return None
        return f"data:{match.group(1).lower()};base64,{''.join(match.group(3).split())}"
    if value[:6].lower() == "https:":
        if mime is not None and mime not in RASTER_IMAGE_TYPES:
            return None
        if _HIDDEN.search(value) or any(c in value for c in "\"'<>\\`"):
            return None
        parts = urlsplit(value)
        if parts.scheme.lower() != "https" or not parts.hostname or parts.path.lower().endswith(".svg"):
            return None
        return value
    if mime in RASTER_IMAGE_TYPES and _valid_base64(value):
        return f"data:{mime};base64,{''.join(value.split())}"
    return None


def _visible(text: str) -> str:
    """Hidden characters as %XX, so what is shown is what the browser would request."""
    return _HIDDEN.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), text)


def _ascii_host(host: str) -> str:
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return _visible(host.encode("ascii", "backslashreplace").decode("ascii"))


def display_url(url: Any) -> str:
    """The full URL as HTML, host emphasised: ``scheme://[user@]<b>host</b>[:port]/rest``.

    Nothing is shortened or hidden; the host is shown in ASCII (an internationalised name as
    punycode, with a note) and any user-info before ``@`` is set apart, so a link cannot pose as
    another site. The result is never a clickable link: the caller decides whether to open it.
    """
    text = "" if url is None else str(url)
    try:
        parts = urlsplit(text)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return f'<code class="mcpnb-url mcpnb-url-invalid">{escape(_visible(text))}</code> (not a valid URL)'
    if not parts.scheme or not host:
        return f'<code class="mcpnb-url">{escape(_visible(text))}</code>'
    netloc = parts.netloc
    userinfo = netloc.rpartition("@")[0] if "@" in netloc else ""
    ascii_host = _ascii_host(host)
    after = text.split("//", 1)[1] if "//" in text else ""
    if not after.startswith(netloc):  # characters the parser dropped (tabs, newlines): show it all
        site = f'<b class="mcpnb-url-host">{escape(_ascii_host(host))}</b>'
        return (
            f'<code class="mcpnb-url" style="word-break:break-all">{escape(_visible(text))}</code>'
            f' <small class="mcpnb-url-note">(site: {site})</small>'
        )
    rest = after[len(netloc) :]
    pieces = [f"{escape(_visible(parts.scheme))}://"]
    if userinfo:
        pieces.append(
            f'<span class="mcpnb-url-userinfo" style="color:#b00020">{escape(_visible(userinfo))}@</span>'
        )
    pieces.append(f'<b class="mcpnb-url-host" style="font-size:1.1em">{escape(ascii_host)}</b>')
    if port is not None:
        pieces.append(f":{port}")
    pieces.append(escape(_visible(rest)))
    note = ""
    if ascii_host != host.lower():
        note = ' <small class="mcpnb-url-note">(an internationalised domain name, shown in ASCII)</small>'
    if userinfo:
        note += (
            ' <small class="mcpnb-url-note">(the text before "@" is a user name, not the site: '
            f"the site is {escape(ascii_host)})</small>"
        )
    return f'<code class="mcpnb-url" style="word-break:break-all">{"".join(pieces)}</code>{note}'


def _cell(value: Any) -> str:
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError, RecursionError):
            text = repr(type(value))
    return escape(short(text))


def html_table(
    records: Any, *, css_class: str = "mcpnb-table", max_rows: int = 200, columns: Iterable[str] | None = None
) -> str:
    """Records (a list of dicts), one dict (key/value rows) or a list of values as an HTML table.

    Every header and cell is escaped; nested values are shown as JSON text; long cells are cut.
    """
    head: list[str]
    rows: list[list[Any]]
    if isinstance(records, Mapping):
        head = ["key", "value"]
        rows = [[k, v] for k, v in records.items()]
    elif isinstance(records, list | tuple) and records and all(isinstance(r, Mapping) for r in records):
        head = list(columns) if columns is not None else []
        if columns is None:
            for record in records:
                head.extend(k for k in record if k not in head)
        rows = [[r.get(k, "") for k in head] for r in records]
    elif isinstance(records, list | tuple):
        head = ["value"]
        rows = [[r] for r in records]
    else:
        head = ["value"]
        rows = [[records]]
    more = len(rows) - max_rows
    header = "".join(f'<th style="text-align:left">{_cell(h)}</th>' for h in head)
    body = "".join(
        "<tr>" + "".join(f'<td style="text-align:left">{_cell(c)}</td>' for c in row) + "</tr>"
        for row in rows[:max_rows]
    )
    footer = f'<tr><td colspan="{len(head)}">… {more} more rows</td></tr>' if more > 0 else ""
    return (
        f'<table class="{escape(css_class)}"><thead><tr>{header}</tr></thead>'
        f"<tbody>{body}{footer}</tbody></table>"
    )
