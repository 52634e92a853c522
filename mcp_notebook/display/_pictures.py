"""The one picture of a tool result or a resource's contents, as HTML and as text.

Reprs (``_repr_mimebundle_``), the explorer's result view, the magics and the static fallbacks all
draw results here, so they never disagree with each other or with ``to_dataframe()``: the shape is
decided by :mod:`mcp_notebook.display._shapes`, the same inference the DataFrame uses.

- A table (records, a ``{"result": [...]}`` wrapper, columns, JSON text, a Markdown table, CSV/TSV):
  the first rows (:data:`options` ``.html_rows``, 20, or ``.text_rows``, 10, as text), a caption that
  states the size (``2,000 rows × 5 columns``) and points to ``.to_dataframe()``; nested values shown
  as compact JSON. A single object is a key/value table. Text found around the data (the prose
  blocks beside a JSON block, a text's lines around its table) is drawn before and after it, as text.
- Anything else: the content blocks (text, images, audio, links, embedded resources), each cut; a
  text (a ``{"result": text}`` wrapper's too) as Markdown where it reads as Markdown (raw HTML off,
  no images, its line breaks kept, pipe tables drawn as tables), else as its lines.
- Images first: a table's image blocks are drawn above it, never only inside the collapsed content
  (jupyter-mcp-server answers a plot as structured data *and* a PNG block); a cell that points at
  one (``"[omitted: see image content block 1]"``) shows it small, or names it.
- Text inside structured values keeps its line breaks (a printed DataFrame in an ``outputs`` list),
  a tall one cut to its first lines with the rest counted.
- The raw JSON stays one click away in a collapsed ``<details>``.

Whatever the server sends (a 10 MB result, 100,000 rows, hostile keys), the output is bounded:
rows, columns, blocks and characters are all capped, and the full size is stated. Every server
string goes through :mod:`mcp_notebook.display._html`; no server string becomes markup.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
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
    "image_note",
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
#: lines of prose a text picture shows before its table (the rest after it, within MAX_TEXT_LINES)
_PROSE_LINES = 6
_TEXT_SOURCES = {"python": "Python-literal text", "markdown": "Markdown table"}
#: a multi-line text in a cell: lines drawn in HTML, lines (and their width) as text
_HTML_CELL_LINES = 12
_TEXT_CELL_LINES = 6
_TEXT_LINE_CELL = 60
#: strings of one list drawn each with its lines (a longer list: the rest counted)
_LIST_ITEMS = 10
#: base64 characters of an image a table cell draws small beside the pointer to it (about 225 KB);
#: a larger one is named. Each image at most once per picture: a list of 10,000 pointers to one
#: image costs one thumbnail
_MAX_THUMBNAIL = 300_000
#: a cell that points at an image block, as jupyter-mcp-server's ``"[omitted: see image content
#: block 1]"`` (the number counts the result's image blocks from 1)
_IMAGE_POINTER = re.compile(r"\bimage(?:\s+content)?\s+block\s*#?\s*(\d{1,4})\b", re.I)
_MAX_POINTER = 200


# --- shared -------------------------------------------------------------------------------------


def _size(preview: Preview) -> str:
    """``2,000 rows × 5 columns`` (a single object: ``1 row × 12 columns``)."""
    return f"{counted(preview.total_rows, 'row')} × {counted(len(preview.columns), 'column')}"


def _hidden_rows(preview: Preview) -> str:
    """``1,980 more rows`` (a single object: ``30 more keys``)."""
    return counted(preview.hidden, "more key" if preview.key_value else "more row")


def _more_tables(shape: Shape) -> list[str]:
    """``2 more tables in df.attrs["more_tables"]`` for a Markdown text with several tables."""
    return [f'{counted(len(shape.more), "more table")} in df.attrs["more_tables"]'] if shape.more else []


def _source(shape: Shape) -> str:
    if shape.rule == 5:
        return _TEXT_SOURCES.get(shape.text_format or "", "JSON text")
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


def _has_lines(text: str) -> bool:
    """Whether a text has a line break inside it (a trailing one, as ``print`` leaves, is not)."""
    return "\n" in text.strip("\n")


def _strings(value: Any) -> bool:
    """Whether ``value`` is a non-empty list of strings (jupyter-mcp-server's ``outputs``)."""
    return isinstance(value, list) and bool(value) and all(isinstance(item, str) for item in value)


def _image_blocks(content: Any) -> list[Mapping[str, Any]]:
    """The result's image blocks, in order (what a pointer's number counts)."""
    if not isinstance(content, Sequence) or isinstance(content, str):
        return []
    return [b for b in content if isinstance(b, Mapping) and b.get("type") == "image"]


def _image_label(number: int, block: Mapping[str, Any]) -> str:
    mime = block.get("mimeType")
    size = _html.base64_size(block.get("data"))
    return f"image {number}: {mime if isinstance(mime, str) else '?'}, about {size:,} bytes"


def image_note(number: int, block: Mapping[str, Any]) -> Markup:
    """Where an image block drawn first stood among the blocks: its name, not its bytes again."""
    return Markup('<div class="mcpnb-image-ref"><em>[{} (shown above)]</em></div>').format(
        _image_label(number, block)
    )


@dataclass
class _Images:
    """A result's image blocks, for the table cells that point at them; each is drawn small once."""

    blocks: list[Mapping[str, Any]]
    drawn: set[int] = field(default_factory=set)

    def number(self, value: Any) -> int | None:
        """The image block (numbered from 1) a short string points at, else ``None``."""
        if not self.blocks or not isinstance(value, str) or len(value) > _MAX_POINTER:
            return None
        match = _IMAGE_POINTER.search(value)
        number = int(match.group(1)) if match else 0
        return number if 1 <= number <= len(self.blocks) else None

    def cell(self, number: int, text: str) -> Markup:
        """The image ``number`` small (a thumbnail the first time, within its cap), else its name."""
        block = self.blocks[number - 1]
        data, mime = block.get("data"), block.get("mimeType")
        label = _image_label(number, block)
        src = None
        if (
            number not in self.drawn
            and isinstance(data, str)
            and len(data) <= _MAX_THUMBNAIL
            and _html.remote_image_host(data) is None  # a URL would be fetched: never in a cell
        ):
            src = _html.safe_image_src(data, mime if isinstance(mime, str) else "")
        if src is None:
            return Markup('<span class="mcpnb-image-ref">🖼 <em>[{}, shown above]</em></span>').format(label)
        self.drawn.add(number)
        return Markup(
            '<span class="mcpnb-image-ref"><img src="{}" alt="{}" title="{}" '
            'style="max-height:8em;max-width:16em;vertical-align:top"><br><small>{}</small></span>'
        ).format(src, label, text, label)


# --- HTML ---------------------------------------------------------------------------------------


def _lines_html(text: str) -> Markup:
    """A multi-line text in a cell: its lines kept (a printed DataFrame stays aligned), cut."""
    shown = _html.lines_cut(text, _HTML_CELL_LINES, _HTML_CELL * _HTML_CELL_LINES)
    return Markup(
        '<pre class="mcpnb-lines" style="white-space:pre-wrap;margin:0;font-size:0.95em">{}</pre>'
    ).format(shown)


def _cell_html(value: Any, images: _Images) -> Any:
    """One table cell: a pointer to an image block shows the image; text with line breaks (alone or
    as a list's strings) keeps them; anything else one cut line of compact JSON."""
    number = images.number(value)
    if number is not None:
        return images.cell(number, value)
    if isinstance(value, str) and _has_lines(value):
        return _lines_html(value)
    if _strings(value) and any(_has_lines(item) or images.number(item) is not None for item in value):
        items = [Markup("<div>{}</div>").format(_cell_html(item, images)) for item in value[:_LIST_ITEMS]]
        if len(value) > _LIST_ITEMS:
            items.append(Markup("<div><em>… {:,} more</em></div>").format(len(value) - _LIST_ITEMS))
        return Markup('<div class="mcpnb-list">{}</div>').format(Markup("").join(items))
    return _html.short(_compact(value), _HTML_CELL)


def _table(preview: Preview, shape: Shape, images: _Images | None = None) -> Markup:
    head = ["key", "value"] if preview.key_value else preview.columns[: max(options.html_columns, 1)]
    if images is None:
        images = _Images([])
    keys = 1 if preview.key_value else 0  # a key is a name: drawn as one, never as an image
    rows = [
        [_html.short(_compact(c), _HTML_CELL) for c in row[:keys]]
        + [_cell_html(c, images) for c in row[keys : len(head)]]
        for row in preview.rows
    ]
    table = _html.grid(head, rows, css_class="mcpnb-result-table")
    shown = f" · first {len(preview.rows):,} shown" if preview.hidden > 0 else ""
    caption = Markup(
        '<div class="mcpnb-caption" style="font-size:0.85em;opacity:0.8">{} ({}){} · '
        "<code>.to_dataframe()</code> for the DataFrame</div>"
    ).format(_size(preview), _source(shape), shown)
    notes = [_hidden_rows(preview)] if preview.hidden > 0 else []
    if not preview.key_value and len(preview.columns) > len(head):
        notes.append(counted(len(preview.columns) - len(head), "more column"))
    notes.extend(_more_tables(shape))
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


def _blocks_html(blocks: Sequence[Any], *, images_above: bool = False) -> Markup:
    """The blocks, cut; ``images_above``: the image blocks were drawn first, so here only named."""
    shown = []
    number = 0
    for block in blocks[: options.max_blocks]:
        if images_above and isinstance(block, Mapping) and block.get("type") == "image":
            number += 1
            shown.append(image_note(number, block))
        else:
            shown.append(_block_html(block))
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
    json_only = shape.text_format in (None, "json") and not shape.before and not shape.after
    summary = "raw JSON" if json_only else "raw text"
    images = _Images(_image_blocks(content))
    # rule 5's prose (the blocks around a data block, a text's lines around its table) as text
    prose_before, prose_after = _blocks_html(shape.before), _blocks_html(shape.after)
    return (
        prose_before
        + _table(table, shape, images)
        + prose_after
        + _details(summary, _html.code_block(raw), "mcpnb-raw")
    )


def _images_html(images: Sequence[Mapping[str, Any]]) -> Markup:
    """A table's image blocks, drawn above it (each through :func:`_block_html`, within the caps)."""
    if not images:
        return Markup("")
    shown = [_block_html(b) for b in images[: options.max_blocks]]
    if len(images) > options.max_blocks:
        more = counted(len(images) - options.max_blocks, "more image")
        shown.append(Markup("<div><em>… {}</em></div>").format(more))
    return Markup('<div class="mcpnb-images">{}</div>').format(Markup("").join(shown))


def result_html(
    structured_content: Any, content: Sequence[Mapping[str, Any]], is_error: bool = False
) -> Markup:
    """A tool result as HTML (``mcpnb-result-view``): a table when it holds one, else its blocks."""
    parts = [_error_banner(is_error)]
    shape = result_shape(structured_content, content)
    table = _result_table_html(shape, structured_content, content)
    if table is not None:
        images = _image_blocks(content)
        parts.append(_images_html(images))  # a plot is what the user asked for: first, never folded away
        parts.append(table)
        if structured_content is not None and content:
            # the text blocks usually repeat the structured data: one click away
            blocks = _blocks_html(content, images_above=bool(images))
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


def _cell_lines(value: Any) -> list[str]:
    """A cell as text lines: a text with line breaks (alone or as a list's strings) keeps them, cut
    to a few with the rest counted; anything else one line."""
    if _strings(value) and any(_has_lines(item) for item in value):
        value = "\n".join(item.rstrip("\n") for item in value)
    if not isinstance(value, str) or not _has_lines(value):
        return [_one_line(value, _TEXT_CELL)]
    shown = _html.lines_cut(value, _TEXT_CELL_LINES, _TEXT_LINE_CELL * _TEXT_CELL_LINES)
    return [_one_line(line, _TEXT_LINE_CELL) for line in shown.split("\n")]


def _text_table(preview: Preview, shape: Shape) -> list[str]:
    head = ["key", "value"] if preview.key_value else preview.columns
    cells = [[_cell_lines(c) for c in row] for row in preview.rows]
    widths: list[int] = []
    shown: list[int] = []
    used = 0
    for index, name in enumerate(head):
        width = max([len(_one_line(name, _TEXT_CELL))] + [len(line) for row in cells for line in row[index]])
        if shown and (used + width > _TEXT_WIDTH or len(shown) >= options.max_columns):
            break
        shown.append(index)
        widths.append(width)
        used += width + 2

    def line(values: list[str], continued: frozenset[int] = frozenset()) -> str:
        """One line across the columns; a cell whose text goes on below is marked `` +`` after it
        (as psql marks one), so a line of a tall cell never reads as a row of its own."""
        parts = (
            values[i].ljust(w) + (" +" if i in continued else "  ")
            for i, w in zip(shown, widths, strict=True)
        )
        return "".join(parts).rstrip()

    def row_lines(row: list[list[str]]) -> list[str]:
        """A row as tall as its tallest cell shown: each line of it across the columns."""
        height = max((len(row[i]) for i in shown), default=1)  # no columns: one empty line, as before
        return [
            line(
                [cell[n] if n < len(cell) else "" for cell in row],
                frozenset(i for i in shown if n < len(row[i]) - 1),
            )
            for n in range(height)
        ]

    lines = [f"{_size(preview)} ({_source(shape)}); .to_dataframe() for the DataFrame"]
    lines.append(line([_one_line(h, _TEXT_CELL) for h in head]))
    for row in cells:
        lines.extend(row_lines(row))
    hidden_columns = len(head) - len(shown)
    notes = []
    if preview.hidden > 0:
        notes.append(_hidden_rows(preview))
    if hidden_columns > 0:
        notes.append(counted(hidden_columns, "more column"))
    notes.extend(_more_tables(shape))
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
        images = _image_blocks(content)  # first, as in HTML: a plot is not hidden behind its data
        lines.extend(f"[{_one_line(_image_label(n, b), _TEXT_WIDTH)}]" for n, b in enumerate(images, 1))
        if shape.before:  # rule 5's prose, cut short so that the table shows
            lines.extend(_blocks_text(shape.before, _PROSE_LINES))
        lines.extend(_text_table(table, shape))
        if shape.after:
            lines.extend(_blocks_text(shape.after, MAX_TEXT_LINES - len(lines)))
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
