"""The one picture of a tool result or a resource's contents, as HTML and as text.

Reprs (``_repr_mimebundle_``), the explorer's result view, the magics and the static fallbacks all
draw results here, so they never disagree with each other or with ``to_dataframe()``: the shape is
decided by :mod:`mcp_notebook.display._shapes`, the same inference the DataFrame uses.

- A table (records, a ``{"result": [...]}`` wrapper, columns, JSON text, CSV/TSV): the first rows
  (:data:`options` ``.html_rows``, 20, or ``.text_rows``, 10, as text), a caption that states the
  size (``2,000 rows × 5 columns``) and points to ``.to_dataframe()``; nested values shown as compact
  JSON. A single object is a key/value table.
- Anything else: the content blocks (text, images, audio, links, embedded resources), each cut; a
  text (a ``{"result": text}`` wrapper's too) as Markdown where it reads as Markdown (raw HTML off,
  no images, its line breaks kept, pipe tables drawn as tables), else as its lines.
- The raw JSON stays one click away in a collapsed ``<details>``.

Whatever the server sends (a 10 MB result, 100,000 rows, hostile keys), the output is bounded:
rows, columns, blocks and characters are all capped, and the full size is stated. Every server
string goes through :mod:`mcp_notebook.display._html`; no server string becomes markup.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..protocol._printable import printable
from . import _html
from ._html import Markup, counted
from ._shapes import Preview, Shape, contents_shape, is_markdown, preview, result_shape, wrapped_text

__all__ = [
    "DisplayOptions",
    "contents_html",
    "contents_table_html",
    "contents_text",
    "options",
    "result_html",
    "result_table_html",
    "result_text",
    "text_html",
]


@dataclass
class DisplayOptions:
    """How much of a result a picture shows; change ``mcp_notebook.display_options`` to adjust.

    ``html_rows``: table rows in HTML; ``text_rows``: in text; ``max_columns``: columns in text;
    ``html_columns``: in HTML (which scrolls sideways); ``max_blocks``: content blocks shown;
    ``max_chars``: characters of one text block or of the raw JSON.

    ``remote_images``: load an image block whose data is an ``https:`` URL (off by default). The
    browser fetches such an image every time the output is drawn, so a server can use it as a
    tracking pixel that reports when, where and by whom a notebook is opened (saved outputs too);
    off, a placeholder names the host. ``data:`` and base64 images are drawn either way.
    """

    html_rows: int = 20
    text_rows: int = 10
    max_columns: int = 12
    html_columns: int = 50
    max_blocks: int = 20
    max_chars: int = 20_000
    remote_images: bool = False


Blocks = Sequence[Mapping[str, Any]]

#: The options every picture uses (``mcp_notebook.display_options``).
options = DisplayOptions()

#: text/plain never runs longer than this, whatever the result
MAX_TEXT_LINES = 40
_TEXT_CELL = 30
_TEXT_WIDTH = 120
_HTML_CELL = 200


# --- shared -------------------------------------------------------------------------------------


def _size(preview: Preview) -> str:
    """``2,000 rows × 5 columns`` (a single object: ``1 row × 12 columns``)."""
    return f"{counted(preview.total_rows, 'row')} × {counted(len(preview.columns), 'column')}"


def _hidden_rows(preview: Preview) -> str:
    """``1,980 more rows`` (a single object: ``30 more keys``)."""
    return counted(preview.hidden, "more key" if preview.key_value else "more row")


def _source(shape: Shape) -> str:
    if shape.rule == 5:
        return "Python-literal text" if shape.text_format == "python" else "JSON text"
    if shape.rule == "csv":
        return "CSV" if shape.separator == "," else "TSV"
    if shape.rule == "json":
        return "Python literal" if shape.text_format == "python" else "JSON"
    return "structured content"


def _raw_json(value: Any, limit: int) -> str:
    try:
        text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        text = repr(type(value))
    return _cut(text, limit)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… ({len(text) - limit:,} more characters, {len(text):,} in all)"


def _compact(value: Any) -> str:
    """A cell as one line of text: strings as they are, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError, RecursionError):
        return repr(type(value))


# --- HTML ---------------------------------------------------------------------------------------


def _table(preview: Preview, shape: Shape) -> Markup:
    head = ["key", "value"] if preview.key_value else preview.columns[: max(options.html_columns, 1)]
    rows = [[_html.short(_compact(c), _HTML_CELL) for c in row[: len(head)]] for row in preview.rows]
    table = _html.grid(head, rows, css_class="mcpnb-result-table")
    shown = f" · first {len(preview.rows):,} shown" if preview.hidden > 0 else ""
    caption = Markup(
        '<div class="mcpnb-caption" style="font-size:0.85em;opacity:0.8">{} ({}){} · '
        "<code>.to_dataframe()</code> for the DataFrame</div>"
    ).format(_size(preview), _source(shape), shown)
    notes = [_hidden_rows(preview)] if preview.hidden > 0 else []
    if not preview.key_value and len(preview.columns) > len(head):
        notes.append(counted(len(preview.columns) - len(head), "more column"))
    if notes:
        more = Markup('<div class="mcpnb-more" style="font-size:0.85em">… {}</div>')
        table += more.format(", ".join(notes))
    if shape.envelope:
        envelope = ", ".join(f"{k}={_html.short(_compact(v), 80)}" for k, v in shape.envelope.items())
        caption += Markup('<div class="mcpnb-envelope" style="font-size:0.85em">also: {}</div>').format(
            _html.short(envelope, 500)
        )
    return Markup('<div class="mcpnb-table-view" style="max-width:100%;overflow-x:auto">{}</div>{}').format(
        table, caption
    )


def _details(summary: str, body: Markup, css: str) -> Markup:
    return Markup('<details class="{}"><summary>{}</summary>{}</details>').format(css, summary, body)


def text_html(text: str) -> Markup:
    """A text block: Markdown (raw HTML off, no images) where it reads as Markdown, its single line
    breaks kept, each table its first :data:`options` ``.html_rows`` rows; otherwise its lines as
    they are. Cut at :data:`options` ``.max_chars``."""
    if is_markdown(text):
        return Markup('<div class="mcpnb-markdown">{}</div>').format(
            _html.markdown_html(text, options.max_chars, breaks=True, max_rows=options.html_rows)
        )
    return _html.code_block(text, options.max_chars)


def _block_html(block: Any) -> Markup:
    """A text block through :func:`text_html`, an embedded Markdown resource's text too."""
    if isinstance(block, Mapping) and block.get("type") == "text" and isinstance(block.get("text"), str):
        return text_html(block["text"])
    inner = block.get("resource") if isinstance(block, Mapping) and block.get("type") == "resource" else None
    if isinstance(inner, Mapping) and isinstance(inner.get("text"), str):
        mime = inner.get("mimeType")
        if isinstance(mime, str) and mime.split(";")[0].strip().lower() == "text/markdown":
            uri = inner.get("uri", "")
            return Markup("<div><code>{}</code>{}</div>").format(uri, text_html(inner["text"]))
    return _html.content_block_html(block, remote_images=options.remote_images)


def _blocks_html(blocks: Sequence[Any]) -> Markup:
    shown = [_block_html(b) for b in blocks[: options.max_blocks]]
    if len(blocks) > options.max_blocks:
        more = len(blocks) - options.max_blocks
        shown.append(
            Markup("<div><em>… {} ({:,} in all)</em></div>").format(counted(more, "more block"), len(blocks))
        )
    return Markup("").join(shown)


def _error_banner(is_error: bool) -> Markup:
    if not is_error:
        return Markup("")
    return Markup(
        '<div class="mcpnb-error" style="color:#b00020;font-weight:bold">The tool reported an error</div>'
    )


def result_table_html(structured_content: Any, content: Sequence[Mapping[str, Any]]) -> Markup | None:
    """The table of a result that holds one (first rows, caption with the size, the raw JSON one
    click away), else ``None``: the part the repr and the explorer's result view share."""
    return _result_table_html(result_shape(structured_content, content), structured_content, content)


def _result_table_html(shape: Shape, structured_content: Any, content: Blocks) -> Markup | None:
    table = preview(shape, options.html_rows) if shape.is_table else None
    if table is None:
        return None
    wrapped = wrapped_text(structured_content)
    if wrapped is not None:  # rule 5 in a {"result": text} wrapper: the text as the server sent it
        raw = _cut(wrapped, options.max_chars)
    elif structured_content is not None:
        raw = _raw_json(structured_content, options.max_chars)
    else:  # rule 5: the text as the server sent it
        raw = _cut("\n".join(str(b.get("text", "")) for b in content), options.max_chars)
    summary = "raw JSON" if shape.text_format != "python" else "raw text"
    return _table(table, shape) + _details(summary, _html.code_block(raw), "mcpnb-raw")


def result_html(
    structured_content: Any, content: Sequence[Mapping[str, Any]], is_error: bool = False
) -> Markup:
    """A tool result as HTML (``mcpnb-result-view``): a table when it holds one, else its blocks."""
    parts = [_error_banner(is_error)]
    shape = result_shape(structured_content, content)
    table = _result_table_html(shape, structured_content, content)
    if table is not None:
        parts.append(table)
        if structured_content is not None and content:
            # the text blocks usually repeat the structured data: one click away
            blocks = _blocks_html(content)
            parts.append(_details(f"content ({counted(len(content), 'block')})", blocks, "mcpnb-content"))
    elif shape.value:  # no table: the blocks (a {"result": text} wrapper's text as one)
        parts.append(_blocks_html(shape.value))
    else:
        parts.append(Markup('<div class="mcpnb-empty"><em>(empty result)</em></div>'))
    return Markup('<div class="mcpnb-result-view">{}</div>').format(Markup("").join(parts))


def contents_table_html(contents: Sequence[Mapping[str, Any]]) -> Markup | None:
    """The table a resource's one JSON, CSV or TSV text holds (first rows, caption, the raw text one
    click away), else ``None``: the part the repr and the resources panel share."""
    shape = contents_shape(contents)
    table = preview(shape, options.html_rows) if shape.is_table else None
    if table is None:
        return None
    raw = _html.code_block(_cut(str(contents[0].get("text", "")), options.max_chars))
    return _table(table, shape) + _details("raw text", raw, "mcpnb-raw")


def contents_html(contents: Sequence[Mapping[str, Any]]) -> Markup:
    """A resource's contents as HTML: its table (JSON, CSV, TSV) or each content as it is."""
    table = contents_table_html(contents)
    if table is not None:
        uri = contents[0].get("uri", "")
        body = Markup('<div class="mcpnb-contents-uri"><code>{}</code></div>').format(uri) + table
    else:
        body = _blocks_html([{"type": "resource", "resource": c} for c in contents])
    return Markup('<div class="mcpnb-contents-view">{}</div>').format(body)


# --- text ---------------------------------------------------------------------------------------


def _one_line(value: Any, limit: int) -> str:
    """A cell as one printable line: control characters (a terminal's escape codes) made visible."""
    return _html.short(printable(_compact(value).replace("\r\n", "\n").replace("\t", " ")), limit)


def _text_table(preview: Preview, shape: Shape) -> list[str]:
    head = ["key", "value"] if preview.key_value else preview.columns
    cells = [[_one_line(c, _TEXT_CELL) for c in row] for row in preview.rows]
    widths: list[int] = []
    shown: list[int] = []
    used = 0
    for index, name in enumerate(head):
        width = max([len(_one_line(name, _TEXT_CELL))] + [len(row[index]) for row in cells])
        if shown and (used + width > _TEXT_WIDTH or len(shown) >= options.max_columns):
            break
        shown.append(index)
        widths.append(width)
        used += width + 2

    def line(values: list[str]) -> str:
        return "  ".join(values[i].ljust(w) for i, w in zip(shown, widths, strict=True)).rstrip()

    lines = [f"{_size(preview)} ({_source(shape)}); .to_dataframe() for the DataFrame"]
    lines.append(line([_one_line(h, _TEXT_CELL) for h in head]))
    lines.extend(line(row) for row in cells)
    hidden_columns = len(head) - len(shown)
    notes = []
    if preview.hidden > 0:
        notes.append(_hidden_rows(preview))
    if hidden_columns > 0:
        notes.append(counted(hidden_columns, "more column"))
    if notes:
        lines.append("… " + ", ".join(notes))
    if shape.envelope:
        envelope = ", ".join(f"{_one_line(k, 40)}={_one_line(v, 40)}" for k, v in shape.envelope.items())
        lines.append("also: " + _html.short(envelope, _TEXT_WIDTH))
    return lines


def _block_text(block: Any, budget: int) -> list[str]:
    if not isinstance(block, Mapping):
        return [_one_line(block, _TEXT_WIDTH)]
    kind = block.get("type")
    if kind == "text":
        text = str(block.get("text", ""))
        lines = text.splitlines() or [""]
        kept = [_html.short(printable(t, multiline=True), _TEXT_WIDTH) for t in lines[: max(budget, 1)]]
        shown = sum(len(t) for t in kept)
        if len(lines) > len(kept) or shown < len(text) - len(lines):  # lines left out, or cut
            more = f"{counted(len(lines) - len(kept), 'more line')}, " if len(lines) > len(kept) else ""
            kept.append(f"… ({more}{len(text):,} characters in all)")
        return kept
    if kind == "image" and (host := _html.remote_image_host(block.get("data") or block.get("uri"))):
        return [f"[image {_one_line(block.get('mimeType'), 40)} from {host}, a remote URL]"]
    if kind in ("image", "audio"):
        data = block.get("data")
        size = _html.base64_size(data)
        return [f"[{kind} {_one_line(block.get('mimeType'), 40)}, about {size:,} bytes]"]
    if kind == "resource_link":
        return [f"[link] {_one_line(block.get('name') or '', 60)} {_one_line(block.get('uri'), 100)}"]
    if kind == "resource":
        inner = block.get("resource")
        resource: Mapping[str, Any] = inner if isinstance(inner, Mapping) else {}
        head = f"[resource] {_one_line(resource.get('uri'), 100)}"
        if isinstance(resource.get("text"), str):
            return [head, *_block_text({"type": "text", "text": resource["text"]}, budget - 1)]
        blob = resource.get("blob")
        return [f"{head} ({_html.base64_size(blob):,} bytes)"]
    return [_one_line(block, _TEXT_WIDTH)]


def _blocks_text(blocks: Sequence[Any], budget: int) -> list[str]:
    lines: list[str] = []
    for index, block in enumerate(blocks):
        left = budget - len(lines)
        if left <= 1:
            lines.append(f"… {counted(len(blocks) - index, 'more block')} ({len(blocks):,} in all)")
            break
        lines.extend(_block_text(block, left - 1))
    return lines


def _bounded(lines: list[str]) -> str:
    if len(lines) > MAX_TEXT_LINES:
        lines = [*lines[: MAX_TEXT_LINES - 1], f"… {counted(len(lines) - MAX_TEXT_LINES + 1, 'more line')}"]
    return "\n".join(lines)


def result_text(structured_content: Any, content: Blocks, is_error: bool = False) -> str:
    """A tool result as text (at most :data:`MAX_TEXT_LINES` lines): a compact table, or its blocks."""
    shape = result_shape(structured_content, content)
    lines = ["[tool error]"] if is_error else []
    table = preview(shape, options.text_rows) if shape.is_table else None
    if table is not None:
        lines.extend(_text_table(table, shape))
    elif shape.value:  # no table: the blocks (a {"result": text} wrapper's text as one)
        lines.extend(_blocks_text(shape.value, MAX_TEXT_LINES - len(lines)))
    else:
        lines.append("(empty result)")
    return _bounded(lines)


def contents_text(contents: Sequence[Mapping[str, Any]]) -> str:
    """A resource's contents as text: its table (JSON, CSV, TSV) or each content, cut."""
    shape = contents_shape(contents)
    table = preview(shape, options.text_rows) if shape.is_table else None
    if table is not None:
        return _bounded([f"{_one_line(contents[0].get('uri'), 100)}", *_text_table(table, shape)])
    blocks = [{"type": "resource", "resource": c} for c in contents]
    return _bounded(_blocks_text(blocks, MAX_TEXT_LINES) or ["(no contents)"])
