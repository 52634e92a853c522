"""Untrusted server data as HTML: the one module that turns it into markup, for reprs and widgets.

Everything an MCP server sends (tool names, descriptions, results, URLs, error text) may be hostile.
Rich reprs and widgets alike build their HTML here, with markupsafe: :func:`escape` returns a
:class:`~markupsafe.Markup`, so "already escaped" is a type, not a convention. A ``Markup`` passes
through :func:`escape` unchanged and a plain ``str`` is always escaped, so a builder that takes cells
(:func:`table`, ``Markup(...).format(...)``) cannot escape twice or forget to escape once.

Images and audio are inlined only as ``data:`` URIs of an allow-listed MIME type whose base64 checks
out (whitespace, as MIME line-wraps it, is accepted and dropped); SVG can carry script, so it is
never inlined. An image whose data is a URL is a placeholder naming its host: the browser would fetch
it on every render, telling the server when and where the notebook is opened (a tracking pixel). The
caller may allow ``https:`` ones (``remote_images=True``, from ``display_options.remote_images``).
Links get an ``href`` only for http(s) URLs. URLs shown for consent are written out in full, host
emphasised in its ASCII form (:func:`display_url`).
"""

from __future__ import annotations

import base64
import binascii
import inspect
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from markupsafe import Markup
from markupsafe import escape as _markupsafe_escape

from ..protocol._http_binding import is_http_url
from ..protocol._printable import printable

__all__ = [
    "RASTER_IMAGE_TYPES",
    "STATE_COLOURS",
    "Markup",
    "code_block",
    "content_block_html",
    "counted",
    "decode_base64",
    "display_url",
    "escape",
    "grid",
    "html_table",
    "lines_cut",
    "link",
    "markdown_html",
    "remote_image_host",
    "safe_audio_src",
    "safe_image_src",
    "short",
    "state_badge",
    "table",
]

#: Image types a browser decodes without running anything (SVG is a document and can hold script).
RASTER_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp"})
_AUDIO_TYPES = frozenset({"audio/wav", "audio/x-wav", "audio/mpeg", "audio/ogg", "audio/webm", "audio/flac"})
_MAX_CELL = 500
_MAX_INLINE_TEXT = 20_000
#: base64 characters of one image or audio clip inlined in HTML at most (about 1.5 MB of data): a
#: repr stays small whatever the server sends; the widgets show larger ones as ipywidgets media
MAX_INLINE_MEDIA = 2_000_000
_DATA_URI = re.compile(r"^data:([a-z0-9.+/-]+)((?:;[a-z0-9=.+-]+)*);base64,([A-Za-z0-9+/=\s]*)$", re.I)
# Characters that may hide what a URL really is: controls, spaces, bidi overrides, zero-width ones.
_HIDDEN = re.compile(r"[\x00-\x20\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
_LINK_SCHEMES = ("http://", "https://", "mailto:")
_SCHEME = re.compile(r"\s*([a-z][a-z0-9+.-]*):", re.I)  # base64 never holds ":", a URL always does

#: The colour of each connection state (a session's, a group member's); anything else is grey.
STATE_COLOURS = {
    "ready": "#1b873f",
    "connecting": "#b08800",
    "negotiating": "#b08800",
    "reconnecting": "#d9480f",
    "failed": "#b00020",  # a group's server whose attempt failed (another is due)
    "gave up": "#b00020",  # ... and no attempt is left
    "closing": "#6a737d",
    "closed": "#6a737d",
}
_OTHER_STATE = "#6a737d"


def counted(number: int, noun: str) -> str:
    """``2,000 rows``, ``1 row``: every picture counts things the same way."""
    return f"{number:,} {noun}{'s' if number != 1 else ''}"


def escape(value: Any) -> Markup:
    """Any value as HTML text, safe in element content and in quoted attributes.

    ``None`` is ``""``; a :class:`Markup` is returned as it is (it is escaped already).
    """
    return (
        Markup("") if value is None else _markupsafe_escape(value if isinstance(value, str) else str(value))
    )


def short(text: Any, limit: int = _MAX_CELL) -> str:
    """``text`` as a string of at most ``limit`` characters (an ellipsis marks a cut)."""
    value = "" if text is None else str(text)
    return value if len(value) <= limit else value[: limit - 1] + "…"


def state_badge(state: Any) -> Markup:
    """A connection state as a coloured badge (``mcpnb-badge``), the same in every repr and widget.

    Never broken over two lines (``white-space:nowrap``): "gave up" in a narrow column was two
    half-pills (issue #38); a column too narrow for it grows or scrolls instead."""
    state = str(state)
    colour = STATE_COLOURS.get(state, _OTHER_STATE)
    return Markup(
        '<span class="mcpnb-badge" style="background:{};color:white;border-radius:0.8em;'
        'padding:0.1em 0.7em;font-weight:bold;white-space:nowrap">{}</span>'
    ).format(colour, state)


def code_block(text: Any, limit: int = _MAX_INLINE_TEXT) -> Markup:
    """Text as a wrapped ``<pre>``, cut at ``limit`` characters with the rest counted."""
    text = "" if text is None else str(text)
    if len(text) > limit:
        text = text[:limit] + f"\n… ({len(text) - limit:,} more characters)"
    return Markup('<pre style="white-space:pre-wrap;margin:0.2em 0">{}</pre>').format(text)


def lines_cut(text: str, max_lines: int, max_chars: int = _MAX_INLINE_TEXT) -> str:
    """``text`` with its line breaks, at most ``max_lines`` lines and ``max_chars`` characters; a
    last line counts what was left out (``… (12 more lines)``). A printed DataFrame or a tool's
    long description keeps its shape, and a tall one cannot make a picture screens tall."""
    lines = text.replace("\r\n", "\n").rstrip("\n").split("\n")
    shown = "\n".join(lines[: max(max_lines, 1)])
    hidden = len(lines) - max(max_lines, 1)
    notes = [counted(hidden, "more line")] if hidden > 0 else []
    if len(shown) > max_chars:
        shown = shown[:max_chars]
        notes.append(f"{len(text):,} characters in all")
    return f"{shown}\n… ({', '.join(notes)})" if notes else shown


def link(uri: Any, label: Any = None) -> Markup:
    """A link for an http(s) URL (opened in a new tab, no referrer); anything else as code text."""
    text = label if label is not None else uri
    if isinstance(uri, str) and is_http_url(uri):
        return Markup('<a href="{}" target="_blank" rel="noopener noreferrer nofollow">{}</a>').format(
            uri, text
        )
    return Markup("<code>{}</code>").format(text)


def table(rows: Iterable[tuple[Any, Any]]) -> Markup:
    """A two-column (name, value) table; plain strings are escaped, :class:`Markup` kept."""
    row = Markup(
        '<tr><th style="text-align:left;vertical-align:top;padding-right:1em">{}</th>'
        '<td style="text-align:left">{}</td></tr>'
    )
    return Markup("<table>{}</table>").format(Markup("").join(row.format(k, v) for k, v in rows))


# --- Markdown -----------------------------------------------------------------------------------

#: Markdown tables drawn in the theme's own colours (JupyterLab's variables, a neutral grey where
#: there are none), so they read in light and dark alike; cells left-aligned unless the table says
_MD_TABLE_STYLE = "border-collapse:collapse;margin:0.4em 0"
_MD_CELL_STYLE = (
    "border:1px solid var(--jp-border-color2, rgba(127,127,127,0.35));padding:0.2em 0.6em;"
    "vertical-align:top;text-align:left"
)
_MD_HEAD_STYLE = _MD_CELL_STYLE + ";background:var(--jp-layout-color2, rgba(127,127,127,0.12))"
#: rows of one Markdown table drawn when the caller does not say (a tool's description)
MARKDOWN_TABLE_ROWS = 50


def _cut_table_rows(state: Any) -> None:
    """Core rule: each table keeps its first ``env["max_rows"]`` body rows; its ``table_close``
    token counts the others (``meta["hidden"]``), which its renderer states. A server's page of
    100,000 rows is drawn as the first few, as any other big result is."""
    limit = state.env.get("max_rows")
    if not isinstance(limit, int):
        limit = MARKDOWN_TABLE_ROWS
    kept: list[Any] = []
    in_body = skipping = False
    rows = hidden = 0
    for token in state.tokens:
        kind = token.type
        if kind == "tbody_open":
            in_body, rows = True, 0
        elif kind == "tbody_close":
            in_body = False
        elif in_body and kind == "tr_open":
            rows += 1
            skipping = rows > limit
            if skipping:
                hidden += 1
        elif kind == "table_close":
            token.meta = {**(token.meta or {}), "hidden": hidden}
            hidden = 0
        if not skipping:
            kept.append(token)
        if kind == "tr_close":
            skipping = False
    state.tokens = kept


def _markdown(breaks: bool = False) -> Any:
    """CommonMark and GitHub's pipe tables, with raw HTML off (a tag is shown as text), no images
    (a remote image would tell the server who reads the notebook), and links only to http(s) and
    mailto. Tables because servers answer with them (excel-mcp-polars, mcp-server-fetch): without
    the rule they read as lines of pipes."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False, "breaks": breaks})
    md.enable("table")
    md.disable("image")
    md.validateLink = lambda url: url.strip().lower().startswith(_LINK_SCHEMES)  # type: ignore[method-assign]
    md.core.ruler.push("mcpnb_table_rows", _cut_table_rows)

    def link_open(renderer: Any, tokens: Any, index: int, options: Any, env: Any) -> str:
        token = tokens[index]
        token.attrSet("target", "_blank")
        token.attrSet("rel", "noopener noreferrer nofollow")
        return str(renderer.renderToken(tokens, index, options, env))

    def table_open(renderer: Any, tokens: Any, index: int, options: Any, env: Any) -> str:
        tokens[index].attrSet("class", "mcpnb-table mcpnb-markdown-table")
        tokens[index].attrSet("style", _MD_TABLE_STYLE)
        # a wide table scrolls sideways inside its own box, as the result tables do
        opened = renderer.renderToken(tokens, index, options, env)
        return f'<div class="mcpnb-table-view" style="max-width:100%;overflow-x:auto">{opened}'

    def table_close(renderer: Any, tokens: Any, index: int, options: Any, env: Any) -> str:
        closed = renderer.renderToken(tokens, index, options, env)
        hidden = (tokens[index].meta or {}).get("hidden", 0)
        more = Markup('<div class="mcpnb-more" style="font-size:0.85em">… {}</div>').format(
            counted(hidden, "more row")
        )
        return f"{closed}</div>{more if hidden else ''}"

    def cell_open(style: str) -> Any:
        def render(renderer: Any, tokens: Any, index: int, options: Any, env: Any) -> str:
            token = tokens[index]
            align = token.attrGet("style")  # the table's own alignment (``|---:|``) comes last, and wins
            token.attrSet("style", f"{style};{align}" if align else style)
            return str(renderer.renderToken(tokens, index, options, env))

        return render

    md.add_render_rule("link_open", link_open)
    md.add_render_rule("table_open", table_open)
    md.add_render_rule("table_close", table_close)
    md.add_render_rule("th_open", cell_open(_MD_HEAD_STYLE))
    md.add_render_rule("td_open", cell_open(_MD_CELL_STYLE))
    return md


_MD: dict[bool, Any] = {}


def markdown_html(
    text: Any, limit: int = 5000, *, breaks: bool = False, max_rows: int = MARKDOWN_TABLE_ROWS
) -> Markup:
    """Untrusted Markdown (a tool's description, a text result) as HTML: never raw HTML, never
    script, no images, links only to http(s) and mailto, pipe tables drawn (each cut to its first
    ``max_rows`` rows, the rest counted); ``breaks``: a single line break stays one (a tool's text).
    Without markdown-it-py, the escaped text, its lines kept."""
    text = inspect.cleandoc(short(text, limit))  # a docstring's indented lines are not code blocks
    try:
        if breaks not in _MD:
            _MD[breaks] = _markdown(breaks)
        # markdown-it escapes all text and, with html off, every tag: its output is markup.
        return Markup(str(_MD[breaks].render(text, {"max_rows": max(max_rows, 1)})))
    except ImportError:
        return Markup('<div style="white-space:pre-wrap">{}</div>').format(text)


# --- media --------------------------------------------------------------------------------------


def decode_base64(data: Any) -> bytes | None:
    """The bytes of base64 ``data`` (whitespace, as MIME line-wraps it, ignored), or ``None``."""
    if not isinstance(data, str):
        return None
    try:
        return base64.b64decode("".join(data.split()), validate=True)
    except (binascii.Error, ValueError):
        return None


def _base64(data: str) -> str | None:
    """``data`` without whitespace if it is valid base64, else ``None``."""
    return None if decode_base64(data) is None else "".join(data.split())


def _data_uri(data: Any, mime: Any, allowed: frozenset[str]) -> str | None:
    mime = mime.strip().lower() if isinstance(mime, str) else None
    if mime not in allowed or not isinstance(data, str):
        return None
    compact = _base64(data)
    return None if compact is None else f"data:{mime};base64,{compact}"


def safe_image_src(uri_or_data: Any, mime: str | None = None) -> str | None:
    """A value fit for ``<img src=...>`` (still to be attribute-escaped), or ``None`` if unsafe.

    Accepts a ``data:`` URI of a raster image, an ``https:`` URL (of anything but SVG), or bare
    base64 ``data`` with its ``mime`` type (as in an MCP image content block). Refuses SVG,
    ``javascript:``, ``http:``, malformed base64 and everything else.
    """
    if not isinstance(uri_or_data, str) or not uri_or_data:
        return None
    value = uri_or_data.strip()
    if value[:5].lower() == "data:":
        match = _DATA_URI.match(value)
        if not match:
            return None
        return _data_uri(match.group(3), match.group(1), RASTER_IMAGE_TYPES)
    if value[:6].lower() == "https:":
        mime = mime.strip().lower() if isinstance(mime, str) else None
        if mime is not None and mime not in RASTER_IMAGE_TYPES:
            return None
        if _HIDDEN.search(value) or any(c in value for c in "\"'<>\\`"):
            return None
        parts = urlsplit(value)
        if parts.scheme.lower() != "https" or not parts.hostname or parts.path.lower().endswith(".svg"):
            return None
        return value
    return _data_uri(value, mime, RASTER_IMAGE_TYPES)


def safe_audio_src(data: Any, mime: Any) -> str | None:
    """Base64 audio of an allow-listed type as a ``data:`` URI, or ``None``."""
    return _data_uri(data, mime, _AUDIO_TYPES)


def remote_image_host(data: Any) -> str | None:
    """Where an image block's ``data`` points when it is a URL, not bytes: its host in ASCII (the
    scheme, ``javascript:``, when there is no host); ``None`` for base64 and ``data:`` URIs."""
    match = _SCHEME.match(data) if isinstance(data, str) else None
    if match is None or match.group(1).lower() == "data":
        return None
    try:
        host = urlsplit(data.strip()).hostname
    except ValueError:
        host = None
    # the host in ASCII, and printable: the idna codec passes an ASCII label's controls through
    return printable(_ascii_host(host)) if host else _visible(f"{match.group(1).lower()}:")


def _remote_image(data: str, mime: Any, host: str, remote_images: bool) -> Markup:
    if remote_images and (src := safe_image_src(data, mime if isinstance(mime, str) else "")):
        return Markup('<img src="{}" style="max-width:100%">').format(src)
    why = "only https: images are loaded" if remote_images else "remote images are off"
    return Markup(
        '<em class="mcpnb-remote-image">[image from <b>{}</b>, not loaded: {} '
        "(<code>mcp_notebook.display_options.remote_images</code>)]</em>"
    ).format(host, why)


def base64_size(data: object) -> int:
    """Decoded size in bytes of base64 text, from its length alone (no decoding), 0 if not text.

    The one formula every picture uses: a server's ``data`` or ``blob`` may be megabytes, and a
    size label must not cost a decode. Padding (at most two ``=``) is not data.
    """
    if not isinstance(data, str):
        return 0
    data = data.strip()
    padding = min(len(data) - len(data.rstrip("=")), 2)
    return max(len(data) * 3 // 4 - padding, 0)


def _media(kind: str, mime: Any, data: Any, remote_images: bool = False) -> Markup:
    if kind == "image" and (host := remote_image_host(data)) is not None:
        return _remote_image(data, mime, host, remote_images)
    if isinstance(data, str) and len(data) > MAX_INLINE_MEDIA:
        size = base64_size(data)
        return Markup("<em>[{} {}, about {:,} bytes: too large to show inline]</em>").format(
            kind, mime if isinstance(mime, str) else None, size
        )
    if kind == "image" and (src := safe_image_src(data, mime if isinstance(mime, str) else "")):
        return Markup('<img src="{}" style="max-width:100%">').format(src)
    if kind == "audio" and (src := safe_audio_src(data, mime)):
        return Markup('<audio controls src="{}"></audio>').format(src)
    size = base64_size(data)
    shown_mime = mime if isinstance(mime, str) else None  # a server may send anything here, even a list
    return Markup("<em>[{} {}, about {:,} bytes, not shown]</em>").format(kind, shown_mime, size)


def content_block_html(block: Any, *, remote_images: bool = False) -> Markup:
    """One MCP content block as HTML; an image whose data is an ``https:`` URL is loaded only when
    ``remote_images`` (else a placeholder names its host)."""
    if not isinstance(block, dict):
        return code_block(json.dumps(block, default=str))
    kind = block.get("type")
    if kind == "text":
        return code_block(str(block.get("text", "")))
    if kind in ("image", "audio"):
        data = block.get("data")
        if not data and kind == "image":  # no bytes: a URL in "uri" is still named, never fetched
            data = block.get("uri")
        return _media(str(kind), block.get("mimeType"), data, remote_images)
    if kind == "resource_link":
        name = block.get("title") or block.get("name") or block.get("uri")
        return Markup("<div>🔗 {}</div>").format(link(str(block.get("uri", "")), str(name)))
    if kind == "resource":
        resource = block.get("resource")
        if not isinstance(resource, dict):
            resource = {}
        uri = resource.get("uri", "")
        if "text" in resource:
            return Markup("<div><code>{}</code>{}</div>").format(uri, code_block(str(resource["text"])))
        blob = _media("blob", resource.get("mimeType"), resource.get("blob"))
        return Markup("<div><code>{}</code> {}</div>").format(uri, blob)
    return code_block(json.dumps(block, indent=2, default=str))


# --- URLs ---------------------------------------------------------------------------------------


def _visible(text: str) -> str:
    """Hidden characters as %XX, so what is shown is what the browser would request."""
    return _HIDDEN.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), text)


def _ascii_host(host: str) -> str:
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return _visible(host.encode("ascii", "backslashreplace").decode("ascii"))


def display_url(url: Any) -> Markup:
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
        return Markup('<code class="mcpnb-url mcpnb-url-invalid">{}</code> (not a valid URL)').format(
            _visible(text)
        )
    if not parts.scheme or not host:
        return Markup('<code class="mcpnb-url">{}</code>').format(_visible(text))
    netloc = parts.netloc
    userinfo = netloc.rpartition("@")[0] if "@" in netloc else ""
    ascii_host = _ascii_host(host)
    after = text.split("//", 1)[1] if "//" in text else ""
    if not after.startswith(netloc):  # characters the parser dropped (tabs, newlines): show it all
        return Markup(
            '<code class="mcpnb-url" style="word-break:break-all">{}</code>'
            ' <small class="mcpnb-url-note">(site: <b class="mcpnb-url-host">{}</b>)</small>'
        ).format(_visible(text), ascii_host)
    rest = after[len(netloc) :]
    pieces = [escape(f"{_visible(parts.scheme)}://")]
    if userinfo:
        pieces.append(
            Markup('<span class="mcpnb-url-userinfo" style="color:#b00020">{}@</span>').format(
                _visible(userinfo)
            )
        )
    pieces.append(Markup('<b class="mcpnb-url-host" style="font-size:1.1em">{}</b>').format(ascii_host))
    if port is not None:
        pieces.append(escape(f":{port}"))
    pieces.append(escape(_visible(rest)))
    note = Markup("")
    if ascii_host != host.lower():
        note = Markup(
            ' <small class="mcpnb-url-note">(an internationalised domain name, shown in ASCII)</small>'
        )
    if userinfo:
        note += Markup(
            ' <small class="mcpnb-url-note">(the text before "@" is a user name, not the site: '
            "the site is {})</small>"
        ).format(ascii_host)
    return Markup('<code class="mcpnb-url" style="word-break:break-all">{}</code>{}').format(
        Markup("").join(pieces), note
    )


# --- tables -------------------------------------------------------------------------------------


def _cell(value: Any) -> Markup:
    if isinstance(value, Markup):  # built by this module: kept whole (cutting could break a tag)
        return value
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError, RecursionError):
            text = repr(type(value))
    return escape(short(text))


def grid(head: Sequence[Any], rows: Iterable[Sequence[Any]], *, css_class: str = "mcpnb-table") -> Markup:
    """A table of a header row and rows of cells, each cell escaped (a :class:`Markup` cell kept)."""
    th = Markup('<th style="text-align:left">{}</th>')
    td = Markup('<td style="text-align:left;vertical-align:top">{}</td>')
    header = Markup("").join(th.format(_cell(h)) for h in head)
    body = Markup("").join(
        Markup("<tr>{}</tr>").format(Markup("").join(td.format(_cell(c)) for c in row)) for row in rows
    )
    return Markup('<table class="{}"><thead><tr>{}</tr></thead><tbody>{}</tbody></table>').format(
        css_class, header, body
    )


def html_table(
    records: Any,
    *,
    css_class: str = "mcpnb-table",
    max_rows: int = 200,
    columns: Sequence[str] | None = None,
) -> Markup:
    """Records (a list of dicts), one dict (key/value rows) or a list of values as an HTML table.

    Every header and cell is escaped; nested values are shown as JSON text; long cells are cut.
    """
    head: list[Any]
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
    table = grid(head, rows[:max_rows], css_class=css_class)
    more = len(rows) - max_rows
    if more > 0:  # inside the table, after the body
        tail = Markup('<tr><td colspan="{}">… {}</td></tr></tbody></table>').format(
            len(head), counted(more, "more row")
        )
        table = Markup(table.removesuffix("</tbody></table>")) + tail
    return table
