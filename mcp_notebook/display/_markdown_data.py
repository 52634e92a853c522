"""The data a Markdown text holds: its GitHub-style pipe tables, and JSON set in it.

Servers that answer for a model write Markdown: excel-mcp-polars and mcp-server-fetch answer pipe
tables with prose around them, Playwright MCP answers ``### Result`` with the JSON under the
heading, others a fenced ```` ```json ```` block. This module finds that data; what it becomes (a
table, records) is :mod:`mcp_notebook.display._shapes`' decision.

Read with markdown-it-py's own parser (CommonMark with its GFM table rule), not with regexes: it
already knows what a table is (a header, an alignment row ``|:---|---:|``, escaped pipes ``\\|``, a
table ending at a blank line or another block), what a fence is and on which lines each block
sits (``token.map``), so a table drawn inside a code fence is never read as one. markdown-it-py
comes with the notebook extra: without it nothing is read (the text stays text). Pure Python.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["MAX_MARKDOWN_CHARS", "MarkdownData", "MarkdownTable", "read_markdown", "text_lines"]

#: Markdown longer than this is not searched for data (it stays text): markdown-it-py's block
#: parser reads about 400 KB a second on a busy 2-core machine, and a repr must not take seconds
MAX_MARKDOWN_CHARS = 128 * 1024
#: what a text must hold for a table (a pipe), a fence or a heading to be worth parsing
_HINTS = ("|", "```", "~~~", "#")
#: a fence holds JSON when it says so, or says nothing and parses
_JSON_FENCES = frozenset({"", "json", "json5", "jsonc"})
#: markdown-it's own line breaks (its ``token.map`` counts lines so)
_NEWLINES = re.compile(r"\r\n?|\n")
#: the inline tokens whose text is a cell's text (emphasis marks and link syntax are not)
_TEXT_TOKENS = frozenset({"text", "text_special", "code_inline", "html_inline"})
#: the characters that make a cell's inline syntax differ from its text (escapes, entities, code,
#: emphasis, links, autolinks): a cell without any is its own text, not parsed again
_INLINE_SYNTAX = frozenset("\\&`*_[]<!")


@dataclass(frozen=True, slots=True)
class MarkdownTable:
    """One pipe table: its header cells and its rows, each cell the text a reader sees
    (``\\|`` a pipe, ``**x**`` x, ``&amp;`` &); a row has as many cells as the header."""

    header: tuple[str, ...]
    rows: list[list[str]]
    #: the lines of the text it spans, ``[start, end)``
    lines: tuple[int, int]


@dataclass(frozen=True, slots=True)
class MarkdownData:
    """What one Markdown text holds: the first JSON array or object set in it (``json``, with the
    lines it spans), and every pipe table in order."""

    json: tuple[Any, tuple[int, int]] | None
    tables: tuple[MarkdownTable, ...]


def read_markdown(text: str) -> MarkdownData | None:
    """The JSON and the tables a Markdown text holds, or ``None`` when it holds neither (or is
    longer than :data:`MAX_MARKDOWN_CHARS`, or markdown-it-py is not installed).

    JSON is the content of a fence marked ``json`` (or unmarked) that parses as an array or an
    object, else the body of a heading's section (the lines up to the next heading) that does.
    """
    if len(text) > MAX_MARKDOWN_CHARS or not any(hint in text for hint in _HINTS):
        return None
    return _read(text)


@functools.lru_cache(maxsize=4)
def _read(text: str) -> MarkdownData | None:
    """The parse, remembered for the last few texts: a repr draws text and HTML, then the explorer
    and ``to_dataframe()`` ask again (the value is only ever read)."""
    parsers = _parsers()
    if parsers is None:
        return None
    blocks, cells = parsers
    tokens = blocks.parse(text)
    lines = text_lines(text)
    tables: list[MarkdownTable] = []
    fenced: tuple[Any, tuple[int, int]] | None = None
    headings: list[tuple[int, int]] = []  # (first line of a heading, first line after it)
    for index, token in enumerate(tokens):
        if token.type == "table_open" and token.map is not None:
            tables.append(_table(tokens, index, token.map, cells))
        elif token.type == "fence" and fenced is None and token.map is not None:
            if token.info.strip().lower() in _JSON_FENCES:
                value = _json_value(token.content)
                if value is not None:
                    fenced = (value, (token.map[0], token.map[1]))
        elif token.type == "heading_open" and token.level == 0 and token.map is not None:
            headings.append((token.map[0], token.map[1]))
    found = fenced if fenced is not None else _section_json(lines, headings)
    if found is None and not tables:
        return None
    return MarkdownData(found, tuple(tables))


def text_lines(text: str) -> list[str]:
    """A text's lines as markdown-it counts them (the spans above index this list)."""
    return _NEWLINES.split(text)


_PARSERS: list[tuple[Any, Any] | None] = []


def _parsers() -> tuple[Any, Any] | None:
    """CommonMark with GFM tables, raw HTML off (a tag in a cell is text, not markup): one that
    finds the blocks only (inline parsing of every paragraph was half the time, and prose is not
    data) and one for the inline syntax of a cell that has some; ``None`` without markdown-it-py."""
    if not _PARSERS:
        try:
            from markdown_it import MarkdownIt
        except ImportError:
            _PARSERS.append(None)
        else:
            blocks = MarkdownIt("commonmark", {"html": False}).enable("table")
            blocks.core.ruler.disable(["inline", "text_join"])
            _PARSERS.append((blocks, MarkdownIt("commonmark", {"html": False})))
    return _PARSERS[0]


def _table(tokens: list[Any], start: int, lines: list[int], cells: Any) -> MarkdownTable:
    """The cells of the table whose ``table_open`` is ``tokens[start]``, each one's inline syntax
    read by the ``cells`` parser."""
    header: list[str] = []
    rows: list[list[str]] = []
    row: list[str] = []
    for token in tokens[start + 1 :]:
        if token.type == "table_close":
            break
        if token.type == "tr_open":
            row = []
        elif token.type == "inline":
            row.append(_cell_text(token.content, cells))
        elif token.type == "tr_close":
            if header:
                rows.append(row)
            else:
                header = row
    return MarkdownTable(tuple(header), rows, (lines[0], lines[1]))


def _cell_text(source: str, cells: Any) -> str:
    """A cell's text as a reader sees it: its source (the table rule has already made ``\\|`` a
    pipe) when it holds no inline syntax, else the text of its inline tokens."""
    if _INLINE_SYNTAX.isdisjoint(source):
        return source.strip()
    inline = cells.parseInline(source)[0]
    return "".join(child.content for child in inline.children or () if child.type in _TEXT_TOKENS).strip()


def _json_value(text: str) -> Any:
    """``text`` parsed as a JSON array or object, else ``None``."""
    text = text.strip()
    if not text or text[0] not in "[{":
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, list | dict) else None


def _section_json(lines: list[str], headings: list[tuple[int, int]]) -> tuple[Any, tuple[int, int]] | None:
    """The first heading section whose body (its lines up to the next heading) is JSON."""
    for position, (_, body_start) in enumerate(headings):
        body_end = headings[position + 1][0] if position + 1 < len(headings) else len(lines)
        value = _json_value("\n".join(lines[body_start:body_end]))
        if value is not None:
            return value, (body_start, body_end)
    return None
