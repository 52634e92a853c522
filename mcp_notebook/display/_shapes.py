"""Which shape of data a tool result or a resource's contents holds: the one inference behind
``to_dataframe()`` and every picture of a result (reprs, the explorer, the magics, static fallbacks).

Pure Python, no pandas: a repr must not import it, and a DataFrame and the table drawn for the same
result must never disagree, so both ask :func:`result_shape` / :func:`contents_shape`. The rules
(numbered as in :mod:`mcp_notebook.display._dataframes`, which documents the why of each):

1. structuredContent is a list: records if every item is an object; a grid (every item a list)
   is rows, its first row the header when it names the columns, else positional columns 0..n-1;
   anything else one ``value`` column;
2. a dict of equal-length lists: columns; ``{"columns": [names], "rows": [[...], ...]}``: that table;
   a dict of two or more parallel lists beside nulls (Chroma's ``get``/``query``: ``ids``,
   ``documents``, ``metadatas``, ``distances``; ``"embeddings": null``): those lists as columns, the
   nulls dropped, a list naming the dict's own keys (Chroma's ``included``) kept as the envelope,
   and one list per query unwrapped when there is one query (``"ids": [["a", "b"]]``);
3. a dict holding exactly one list of objects (``{"result": [...]}``, ``{"items": [...], "total": 9}``)
   or one grid (``{"values": [[header...], [row...]]}``): those rows, the other keys kept as the
   envelope; failing that, and failing rule 2 (so two or more parallel lists are columns, one of
   them objects or not), the one list of objects nested inside (dbhub's
   ``data.statements[0].rows``) when there is exactly one. An empty list is records only when it
   is the dict's one field;
4. any other value: a dict is one object, a scalar one value.
   FastMCP's ``{"result": {...}}`` wrapper (a tool's object return) is looked through first: its
   object goes through rules 2-4 (columns ``name``, not ``result.name``);
5. text that holds data: the text of a ``{"result": "<text>"}`` wrapper (how the SDK and fastmcp
   return a ``str``), or, with no structuredContent, content that is all text (one array or object,
   or one object per block), read as JSON, else (one text, within :data:`MAX_LITERAL_CHARS`) as a
   Python literal (``ast.literal_eval``, never ``eval``: mcp-server-sqlite and -duckdb print
   ``[{'id': 1}]`` and ``[(1, 'x')]``): that value through rules 1-4; else as Markdown
   (:mod:`mcp_notebook.display._markdown_data`): the JSON set in it (a fenced ``json`` block, the
   body of a heading's section: Playwright's ``### Result``) through rules 1-4, else its first pipe
   table (its cells text, its further tables in :attr:`Shape.more`). One text that is a number or a
   boolean (a calculator's ``42``) is one object ``{"result": 42}``, as fastmcp wraps it. Several
   text blocks that are not all JSON objects are each read alone: the blocks that hold data are the
   data (ESLint's JSON report between two sentences; several JSON objects are records), the others
   prose, kept for the pictures in :attr:`Shape.before` / :attr:`Shape.after` (so is a text's own
   prose around its table or JSON);
6. otherwise the content blocks themselves (a wrapper's text that is not data is text: its blocks).

A resource's single text content is a table when it is CSV/TSV by its MIME type or, without one,
its URI's extension, with a header and no row longer than it, or when (a JSON, plain-text or no
MIME type) it holds data by rule 5's reading (rules 1-4); otherwise its contents are listed as
they are.

:func:`preview` then cuts any table shape to its first rows for a picture, with its full size,
flattening nested objects into dotted columns (``a.b``) exactly as ``to_dataframe()`` does.
"""

from __future__ import annotations

import ast
import csv
import dataclasses
import functools
import io
import itertools
import json
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..protocol._schema_walk import NodeBudget
from ._markdown_data import MarkdownTable, read_markdown, text_lines

__all__ = [
    "Preview",
    "Shape",
    "contents_shape",
    "flat_record",
    "is_markdown",
    "json_shape",
    "preview",
    "read_text",
    "result_shape",
    "text_shape",
    "unwrapped",
]

Kind = Literal["records", "columns", "rows", "values", "object", "csv", "blocks", "contents"]

_NOTHING: Any = object()
#: objects nested deeper than this stay whole in one cell, as JSON text
MAX_FLATTEN_DEPTH = 64
_CSV_TYPES = {"text/csv": ",", "application/csv": ",", "text/tab-separated-values": "\t"}
_CSV_SUFFIXES = {".csv": ",", ".tsv": "\t"}
#: Python-literal text longer than this is not parsed: ``ast`` builds a tree many times its size, at
#: about 1 s per 400 KB on a busy 2-core machine (JSON: 50 ms per MB)
MAX_LITERAL_CHARS = 256 * 1024
#: how deep, and through how many values, rule 3 looks for a nested list of objects
_MAX_NESTED_DEPTH = 16
_MAX_NESTED_NODES = 10_000
_TEXT_TYPES = {"", "text/plain", "application/json"}
#: content of more text blocks than this is not read block by block (each may be parsed as Markdown)
_MAX_PROSE_BLOCKS = 1_000


@dataclass(frozen=True, slots=True)
class Shape:
    """The data a result holds, and by which rule it was found.

    ``value`` is, by ``kind``: ``records`` a list of dicts; ``columns`` a dict of equal lists;
    ``rows`` a list of lists (``header`` names the columns); ``values`` a list of anything;
    ``object`` one dict; ``csv`` the text (``separator`` says which); ``blocks`` the content
    blocks; ``contents`` a resource's contents.
    """

    kind: Kind
    value: Any
    rule: int | str
    #: for a result whose text was JSON (rule 5): the rule (1-4) its parsed value met
    text_rule: int | None = None
    #: rule 3: the other keys of the wrapper (``{"items": [...], "total": 9}`` -> ``{"total": 9}``)
    envelope: dict[str, Any] = field(default_factory=dict)
    #: rule 3: the wrapper's key that holds the records (nested: its path, ``data.statements[0].rows``)
    key: str | None = None
    separator: str | None = None
    #: ``rows``: the column names (a header row's strings, ``columns``' names, or positions 0..n-1)
    header: tuple[Any, ...] = ()
    #: rule 5: how the text was read, ``"json"``, ``"python"`` (a Python literal) or ``"markdown"``
    #: (a pipe table, its cells text)
    text_format: str | None = None
    #: the wrapper the data was found in: ``result`` for FastMCP's ``{"result": {...}}`` (rule 4)
    inside: str | None = None
    #: rule 5: the prose shown before and after the data, as text blocks: the blocks around a data
    #: block, and a text's own lines around its table or JSON
    before: tuple[Mapping[str, Any], ...] = ()
    after: tuple[Mapping[str, Any], ...] = ()
    #: rule 5: a Markdown text's further tables, each a ``rows`` shape (the first is this one)
    more: tuple[Shape, ...] = ()

    @property
    def is_table(self) -> bool:
        """Whether this shape is a table of rows and columns (rather than blocks or contents)."""
        return self.kind not in ("blocks", "contents")


def json_shape(data: Any) -> Shape:
    """Rules 1-4 for one JSON value (structuredContent, or the parsed text of rule 5)."""
    if isinstance(data, list):
        if all(isinstance(item, dict) for item in data):
            return Shape("records", data, 1)
        return _grid(data, 1) or Shape("values", data, 1)
    if isinstance(data, dict):
        inner = data.get("result")
        if len(data) == 1 and isinstance(inner, dict):  # FastMCP's wrapper of an object return
            return dataclasses.replace(_dict_shape(inner), inside="result")
        return _dict_shape(data)
    return Shape("values", [data], 4)


def _dict_shape(data: dict[str, Any]) -> Shape:
    table = _columns_rows(data)
    if table is not None:
        return table
    list_keys = [key for key, value in data.items() if isinstance(value, list)]
    if len(list_keys) == 1:
        key = list_keys[0]
        items = data[key]
        envelope = {k: v for k, v in data.items() if k != key}
        if all(isinstance(item, dict) for item in items) and (items or not envelope):
            return Shape("records", items, 3, envelope=envelope, key=key)
        grid = _grid(items, 3)
        if grid is not None:
            return dataclasses.replace(grid, envelope=envelope, key=key)
    parallel = _parallel_columns(data)
    if parallel is not None:
        return parallel
    if data and len(list_keys) == len(data) and len({len(v) for v in data.values()}) == 1:
        return Shape("columns", data, 2)
    nested = _nested_records(data)
    if nested is not None:
        path, records = nested
        envelope = {k: v for k, v in data.items() if k != path[0]}
        return Shape("records", records, 3, envelope=envelope, key=_path_name(path))
    return Shape("object", data, 4)


def _grid(rows: list[Any], rule: int) -> Shape | None:
    """A list of lists as rows: the first row is the header when it is all distinct strings and
    some later row holds a value of another type in the same place (``[["name", "qty"], ["a", 1]]``);
    otherwise the columns are positions 0..n-1 (``[[1, "x"], [2, "y"]]``, or all strings)."""
    if not rows or not all(isinstance(row, list) for row in rows):
        return None
    width = max(len(row) for row in rows)
    if width == 0:
        return None
    first = rows[0]
    named = (
        len(rows) > 1
        and len(first) == width
        and all(isinstance(name, str) for name in first)
        and len(set(first)) == width
        and any(not isinstance(cell, str) and cell is not None for row in rows[1:] for cell in row)
    )
    if named:
        return Shape("rows", rows[1:], rule, header=tuple(first))
    return Shape("rows", rows, rule, header=tuple(range(width)))


def _parallel_columns(data: dict[str, Any]) -> Shape | None:
    """Rule 2 for column-oriented answers with gaps (Chroma's ``get`` and ``query``): two or more
    lists of one length, every other value null (a column not asked for: dropped) or a list of
    strings naming the dict's keys (Chroma's ``included``: kept as the envelope). When every list
    holds exactly one list (``query``'s one list per query text, and one query), those are the
    columns. Before rule 3's nested search: ``metadatas`` is a list of objects, but one column of
    the table, not the table."""
    naming = {
        key
        for key, value in data.items()
        if isinstance(value, list) and value and all(isinstance(n, str) and n in data for n in value)
    }
    columns = {key: value for key, value in data.items() if isinstance(value, list) and key not in naming}
    others = [value for key, value in data.items() if key not in columns and key not in naming]
    if len(columns) < 2 or any(value is not None for value in others):
        return None
    if all(len(value) == 1 and isinstance(value[0], list) for value in columns.values()):
        columns = {key: value[0] for key, value in columns.items()}
    if len({len(value) for value in columns.values()}) != 1:
        return None
    return Shape("columns", columns, 2, envelope={key: data[key] for key in naming})


def _column_name(column: Any) -> str | None:
    if isinstance(column, dict):
        column = column.get("name")
    return column if isinstance(column, str) else None


def _columns_rows(data: dict[str, Any]) -> Shape | None:
    """Rule 2's other form: ``{"columns": [names or {"name": ...}], "rows": [[...], ...]}``."""
    columns, rows = data.get("columns"), data.get("rows")
    if not isinstance(columns, list) or not columns or not isinstance(rows, list):
        return None
    names = [_column_name(column) for column in columns]
    if any(name is None for name in names) or len(set(names)) != len(names):
        return None
    if not all(isinstance(row, list) and len(row) <= len(names) for row in rows):
        return None
    envelope = {k: v for k, v in data.items() if k not in ("columns", "rows")}
    return Shape("rows", rows, 2, envelope=envelope, key="rows", header=tuple(names))


def _nested_records(data: dict[str, Any]) -> tuple[tuple[Any, ...], list[Any]] | None:
    """Rule 3's last resort: the one non-empty list of objects found by walking the dict's objects
    (and the one object of a one-item list), or ``None`` when there are none or several."""
    found: list[tuple[tuple[Any, ...], list[Any]]] = []
    budget = [_MAX_NESTED_NODES]

    def walk(node: Any, path: tuple[Any, ...]) -> None:
        budget[0] -= 1
        if budget[0] < 0 or len(found) > 1 or len(path) > _MAX_NESTED_DEPTH:
            return
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, (*path, key))
        elif isinstance(node, list) and node and all(isinstance(item, dict) for item in node):
            before = len(found)
            if len(node) == 1:  # one statement, one page: look inside it first
                walk(node[0], (*path, 0))
            if len(found) == before:
                found.append((path, node))

    walk(data, ())
    return found[0] if len(found) == 1 and budget[0] >= 0 else None


def _path_name(path: tuple[Any, ...]) -> str:
    """``("data", "statements", 0, "rows")`` -> ``data.statements[0].rows``."""
    name = ""
    for step in path:
        name += f"[{step}]" if isinstance(step, int) else f"{'.' if name else ''}{step}"
    return name


def unwrapped(data: Any) -> Any:
    """The value inside a ``{"result": value}`` wrapper (how the SDK and fastmcp return anything
    that is not an object), else ``data`` itself."""
    if isinstance(data, dict) and len(data) == 1 and "result" in data:
        return data["result"]
    return data


def read_text(text: str) -> tuple[Any, str] | None:
    """Rule 5's reading of one text: ``(value, "json")`` for a JSON array or object, else
    ``(value, "python")`` for a Python literal of a list, tuple or dict of plain values (tuples
    become lists), else ``None``."""
    value = _loads(text)
    if isinstance(value, list | dict):
        return value, "json"
    value = _literal(text)
    return None if value is _NOTHING else (value, "python")


def _literal(text: str) -> Any:
    """``ast.literal_eval`` (never ``eval``) of a list, tuple or dict, within a size cap; values
    JSON cannot hold (sets, bytes, complex, non-string keys) make it ``_NOTHING``."""
    text = text.strip()
    if not text or text[0] not in "[({" or len(text) > MAX_LITERAL_CHARS:
        return _NOTHING
    return _literal_value(text)


@functools.lru_cache(maxsize=4)
def _literal_value(text: str) -> Any:
    """The parse, remembered for the last few texts: a repr draws text and HTML, then the explorer
    and ``to_dataframe()`` ask again, and ``ast`` is slow (the value is only ever read)."""
    try:
        value = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOTHING
    if not isinstance(value, list | tuple | dict):
        return _NOTHING
    try:
        return _plain(value)
    except (TypeError, RecursionError):
        return _NOTHING


def _plain(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            raise TypeError("a key that is not a string")
        return {key: _plain(item) for key, item in value.items()}
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def json_text(content: Sequence[Mapping[str, Any]]) -> tuple[Any, str] | None:
    """Rule 5: the value the text content holds and how it was read, or ``None``."""
    if not content or any(b.get("type") != "text" or not isinstance(b.get("text"), str) for b in content):
        return None
    if len(content) == 1:
        return read_text(content[0]["text"])
    records = []
    for block in content:
        value = _loads(block["text"])
        if not isinstance(value, dict):
            return None
        records.append(value)
    return records, "json"


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return _NOTHING


def wrapped_text(structured_content: Any) -> str | None:
    """The text of a ``{"result": "<text>"}`` wrapper, else ``None``."""
    value = unwrapped(structured_content)
    return value if isinstance(value, str) and value is not structured_content else None


def result_shape(structured_content: Any, content: Sequence[Mapping[str, Any]]) -> Shape:
    """The shape of a tool result, from its ``structuredContent`` and ``content`` (rules 1-6)."""
    text = wrapped_text(structured_content)
    if text is not None:
        shape = text_shape(text)
        if shape is not None:
            return shape
        return Shape("blocks", list(content) or [{"type": "text", "text": text}], 6)
    if structured_content is not None:
        return json_shape(structured_content)
    shape = _text_content_shape(content)
    return shape if shape is not None else Shape("blocks", list(content), 6)


def text_shape(text: str) -> Shape | None:
    """Rule 5's reading of one text: JSON or a Python literal, else the JSON set in its Markdown,
    else its first Markdown table; ``None`` for a text that holds none."""
    read = read_text(text)
    if read is not None:
        return _parsed(json_shape(read[0]), 5, read[1])
    return _markdown_shape(text)


def _text_content_shape(content: Sequence[Mapping[str, Any]]) -> Shape | None:
    """Rule 5 for content without structuredContent: all text, holding data; else ``None``."""
    if not content or any(b.get("type") != "text" or not isinstance(b.get("text"), str) for b in content):
        return None
    if len(content) == 1:
        text = content[0]["text"]
        return text_shape(text) or _scalar_shape(text)
    parsed = json_text(content)
    if parsed is not None:
        return _parsed(json_shape(parsed[0]), 5, parsed[1])
    return _among_prose(content) if len(content) <= _MAX_PROSE_BLOCKS else None


def _scalar_shape(text: str) -> Shape | None:
    """One text that is a JSON number or boolean (a calculator's ``42``): the object fastmcp sends
    as the same tool's structuredContent, ``{"result": 42}``, so both read as one column ``result``."""
    value = _loads(text)
    if isinstance(value, bool) or (isinstance(value, int | float) and math.isfinite(value)):
        return Shape("object", {"result": value}, 5, text_rule=4, text_format="json")
    return None


def _among_prose(content: Sequence[Mapping[str, Any]]) -> Shape | None:
    """Several text blocks, each read alone (ESLint: a sentence, its JSON report, a sentence): the
    first block that holds data is the data (several JSON objects: one record each), the other
    blocks prose, shown around it by the pictures."""
    readings = [text_shape(block["text"]) for block in content]
    data = [index for index, reading in enumerate(readings) if reading is not None]
    if not data:
        return None
    first = data[0]
    objects = [_loads(content[index]["text"]) for index in data]
    shape: Shape | None = readings[first]
    used = {first}
    if len(data) > 1 and all(isinstance(value, dict) for value in objects):
        shape, used = _parsed(json_shape(objects), 5, "json"), set(data)
    assert shape is not None
    after = [block for index, block in enumerate(content) if index > first and index not in used]
    return dataclasses.replace(shape, before=(*content[:first], *shape.before), after=(*shape.after, *after))


def _markdown_shape(text: str) -> Shape | None:
    """Rule 5's Markdown reading: the JSON set in the text, else its first pipe table (the others in
    ``more``), with the text's lines before and after it as prose."""
    found = read_markdown(text)
    if found is None:
        return None
    if found.json is not None:
        value, span = found.json
        shape = _parsed(json_shape(value), 5, "json")
    else:
        first, *rest = found.tables
        shape = dataclasses.replace(_table_shape(first), more=tuple(_table_shape(t) for t in rest))
        span = first.lines
    lines = text_lines(text)
    return dataclasses.replace(shape, before=_prose(lines[: span[0]]), after=_prose(lines[span[1] :]))


def _table_shape(table: MarkdownTable) -> Shape:
    return Shape("rows", table.rows, 5, header=table.header, text_format="markdown")


def _prose(lines: Sequence[str]) -> tuple[Mapping[str, Any], ...]:
    """Lines of a text around its data, as one text block (none when they are blank)."""
    text = "\n".join(lines).strip("\n")
    return ({"type": "text", "text": text},) if text.strip() else ()


def _parsed(shape: Shape, rule: int | str, text_format: str) -> Shape:
    """A shape found in parsed text: the text's rule, the JSON rule it met kept as ``text_rule``."""
    return dataclasses.replace(shape, rule=rule, text_rule=int(shape.rule), text_format=text_format)


def _csv_separator(item: Mapping[str, Any]) -> str | None:
    mime = _mime(item)
    if mime in _CSV_TYPES:
        return _CSV_TYPES[mime]
    uri = item.get("uri")
    if not mime and isinstance(uri, str):
        return next((sep for suffix, sep in _CSV_SUFFIXES.items() if uri.lower().endswith(suffix)), None)
    return None


def _mime(item: Mapping[str, Any]) -> str:
    mime = item.get("mimeType")
    return mime.split(";")[0].strip().lower() if isinstance(mime, str) else ""


def contents_shape(contents: Sequence[Mapping[str, Any]]) -> Shape:
    """The shape of a resource's contents: its one text as a CSV/TSV table, or as the data rule 5
    reads in it (a JSON, plain-text or no MIME type), else the contents."""
    if len(contents) == 1 and isinstance(contents[0].get("text"), str):
        item = contents[0]
        separator = _csv_separator(item)
        if separator is not None and _csv_table(item["text"], separator):
            return Shape("csv", item["text"], "csv", separator=separator)
        if separator is not None:
            return Shape("contents", list(contents), "contents")
        mime = _mime(item)
        if mime in _TEXT_TYPES or mime.endswith("+json"):
            read = read_text(item["text"])
            if read is not None and (read[1] == "json" or "json" not in mime):
                return _parsed(json_shape(read[0]), "json", read[1])
    return Shape("contents", list(contents), "contents")


def flat_record(
    record: Mapping[str, Any],
    prefix: str = "",
    out: dict[str, Any] | None = None,
    depth: int = 0,
    budget: NodeBudget | None = None,
) -> dict[str, Any]:
    """``{"a": {"b": 1}, "c": 2}`` -> ``{"a.b": 1, "c": 2}``, in key order; empty objects kept.

    Each record opens at most ``MAX_SCHEMA_NODES`` (2,000) nested keys (one :class:`NodeBudget`), and
    no object deeper than :data:`MAX_FLATTEN_DEPTH`: an object not opened stays whole in its cell,
    as JSON text, so one record never becomes more columns than that, however it nests."""
    if out is None:
        out = {}
    if budget is None:
        budget = NodeBudget()
    for key, value in record.items():
        name = f"{prefix}{key}"
        if not isinstance(value, dict) or not value:
            out[name] = value
        elif depth < MAX_FLATTEN_DEPTH and budget.take(len(value)):
            flat_record(value, name + ".", out, depth + 1, budget)
        else:
            out[name] = _json_text(value)
    return out


def _json_text(value: dict[str, Any]) -> Any:
    """An object kept whole in one cell, as compact JSON text (the dict itself if it cannot be)."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return value


@dataclass(frozen=True, slots=True)
class Preview:
    """The first rows of a table shape, and the size of the whole."""

    #: the table's columns, all of them (for a single object: its keys)
    columns: list[str]
    #: the rows shown (for a single object: ``[key, value]`` pairs)
    rows: list[list[Any]]
    #: the number of rows of the whole table (the DataFrame's length)
    total_rows: int
    #: a single object, drawn as key/value rows; as a DataFrame it is one row, its keys the columns
    key_value: bool = False

    @property
    def hidden(self) -> int:
        """How many rows (for a single object: keys) the preview leaves out."""
        return (len(self.columns) if self.key_value else self.total_rows) - len(self.rows)


def _record_columns(records: Sequence[Any], flatten: bool) -> list[str]:
    columns: dict[str, None] = {}
    for record in records:
        if isinstance(record, dict):
            columns.update(dict.fromkeys(flat_record(record) if flatten else record))
    return list(columns)


def _csv_rows(text: str, separator: str) -> Iterator[list[str]]:
    """The CSV's rows as ``pandas.read_csv`` counts them: quoted newlines kept, blank lines skipped."""
    return (row for row in csv.reader(io.StringIO(text, newline=""), delimiter=separator) if row)


def _csv_table(text: str, separator: str) -> bool:
    """Whether a CSV/TSV text is a table: a header, and no row longer than it (``pandas.read_csv``
    fails on one; a shorter row is padded with empty cells). A field too long for the ``csv`` module
    (128 KiB) makes it contents too."""
    try:
        rows = _csv_rows(text, separator)
        width = len(next(rows, []))
        return width > 0 and all(len(row) <= width for row in rows)
    except csv.Error:
        return False


def preview(shape: Shape, max_rows: int, *, flatten: bool = True) -> Preview | None:
    """The first ``max_rows`` rows of a table shape (``None`` for blocks and contents).

    Every record is looked at once for its columns (a key that only a late record has is still a
    column, as in the DataFrame); only the rows shown are built.
    """
    value = shape.value
    if shape.kind == "records":
        columns = _record_columns(value, flatten)
        shown = [flat_record(r) if flatten else r for r in itertools.islice(value, max_rows)]
        return Preview(columns, [[r.get(c, "") for c in columns] for r in shown], len(value))
    if shape.kind == "columns":
        columns = list(value)
        total = len(next(iter(value.values()))) if value else 0
        if flatten and any(isinstance(cell, dict) for column in value.values() for cell in column):
            records = [dict(zip(columns, row, strict=True)) for row in zip(*value.values(), strict=True)]
            return preview(Shape("records", records, shape.rule), max_rows, flatten=flatten)
        top = itertools.islice(zip(*value.values(), strict=True), max_rows)
        return Preview(columns, [list(row) for row in top], total)
    if shape.kind == "rows":
        width = len(shape.header)
        padded = [list(row) + [""] * (width - len(row)) for row in itertools.islice(value, max_rows)]
        return Preview([str(name) for name in shape.header], padded, len(value))
    if shape.kind == "values":
        return Preview(["value"], [[v] for v in value[:max_rows]], len(value))
    if shape.kind == "object":
        flat = flat_record(value) if flatten else value
        pairs = [[k, v] for k, v in itertools.islice(flat.items(), max_rows)]
        return Preview(list(flat), pairs, 1, key_value=True)
    if shape.kind == "csv":
        assert shape.separator is not None
        reader = _csv_rows(value, shape.separator)
        header = next(reader, [])
        rows: list[list[Any]] = [
            row + [""] * (len(header) - len(row)) for row in itertools.islice(reader, max_rows)
        ]
        total = len(rows) + sum(1 for _ in reader)
        return Preview(header, rows, total)
    return None


_MARKDOWN = re.compile(
    r"^ {0,3}(#{1,6} |[-*+] |\d{1,9}[.)] |> |```|~~~|\|.*\|\s*$)|\*\*\S[^\n]*?\*\*|\[[^\]\n]+\]\([^)\n]+\)",
    re.MULTILINE,
)


def is_markdown(text: str) -> bool:
    """Whether a text reads as Markdown (a heading, a list, a quote, a fence, a table row, bold or
    a link in its first 20,000 characters): drawn as Markdown, else as lines of plain text."""
    return _MARKDOWN.search(text[:20_000]) is not None
