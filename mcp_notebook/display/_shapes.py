"""Which shape of data a tool result or a resource's contents holds: the one inference behind
``to_dataframe()`` and every picture of a result (reprs, the explorer, the magics, static fallbacks).

Pure Python, no pandas: a repr must not import it, and a DataFrame and the table drawn for the same
result must never disagree, so both ask :func:`result_shape` / :func:`contents_shape`. The rules
(numbered as in :mod:`mcp_notebook.display._dataframes`, which documents the why of each):

1. structuredContent is a list: records if every item is an object, else one ``value`` column;
2. a dict of equal-length lists: columns;
3. a dict holding exactly one list of objects (``{"result": [...]}``, ``{"items": [...], "total": 9}``):
   those records, the other keys kept as the envelope;
4. any other value: a dict is one object, a scalar one value;
5. no structuredContent, and all content is text that parses as JSON (one array or object, or one
   object per block): that value through rules 1-4;
6. otherwise the content blocks themselves.

A resource's single text content is a table when it is JSON (rules 1-4) or CSV/TSV by its MIME
type or, without one, its URI's extension, with a header and no row longer than it; otherwise its
contents are listed as they are.

:func:`preview` then cuts any table shape to its first rows for a picture, with its full size,
flattening nested objects into dotted columns (``a.b``) exactly as ``to_dataframe()`` does.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import itertools
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Preview", "Shape", "contents_shape", "flat_record", "json_shape", "preview", "result_shape"]

Kind = Literal["records", "columns", "values", "object", "csv", "blocks", "contents"]

_NOTHING: Any = object()
#: objects nested deeper than this stay whole in one cell
MAX_FLATTEN_DEPTH = 64
_CSV_TYPES = {"text/csv": ",", "application/csv": ",", "text/tab-separated-values": "\t"}
_CSV_SUFFIXES = {".csv": ",", ".tsv": "\t"}


@dataclass(frozen=True, slots=True)
class Shape:
    """The data a result holds, and by which rule it was found.

    ``value`` is, by ``kind``: ``records`` a list of dicts; ``columns`` a dict of equal lists;
    ``values`` a list of anything; ``object`` one dict; ``csv`` the text (``separator`` says which);
    ``blocks`` the content blocks; ``contents`` a resource's contents.
    """

    kind: Kind
    value: Any
    rule: int | str
    #: for a result whose text was JSON (rule 5): the rule (1-4) its parsed value met
    text_rule: int | None = None
    #: rule 3: the other keys of the wrapper (``{"items": [...], "total": 9}`` -> ``{"total": 9}``)
    envelope: dict[str, Any] = field(default_factory=dict)
    #: rule 3: the wrapper's key that holds the records
    key: str | None = None
    separator: str | None = None

    @property
    def is_table(self) -> bool:
        """Whether this shape is a table of rows and columns (rather than blocks or contents)."""
        return self.kind not in ("blocks", "contents")


def json_shape(data: Any) -> Shape:
    """Rules 1-4 for one JSON value (structuredContent, or the parsed text of rule 5)."""
    if isinstance(data, list):
        if all(isinstance(item, dict) for item in data):
            return Shape("records", data, 1)
        return Shape("values", data, 1)
    if isinstance(data, dict):
        list_keys = [key for key, value in data.items() if isinstance(value, list)]
        wrapped = len(list_keys) == 1 and all(isinstance(item, dict) for item in data[list_keys[0]])
        if data and not wrapped and len(list_keys) == len(data) and len({len(v) for v in data.values()}) == 1:
            return Shape("columns", data, 2)
        if wrapped:
            key = list_keys[0]
            envelope = {k: v for k, v in data.items() if k != key}
            return Shape("records", data[key], 3, envelope=envelope, key=key)
        return Shape("object", data, 4)
    return Shape("values", [data], 4)


def json_text(content: Sequence[Mapping[str, Any]]) -> Any:
    """Rule 5: the JSON value the text content holds, or ``_NOTHING``."""
    if not content or any(b.get("type") != "text" or not isinstance(b.get("text"), str) for b in content):
        return _NOTHING
    if len(content) == 1:
        value = _loads(content[0]["text"])
        return value if isinstance(value, list | dict) else _NOTHING
    records = []
    for block in content:
        value = _loads(block["text"])
        if not isinstance(value, dict):
            return _NOTHING
        records.append(value)
    return records


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return _NOTHING


def result_shape(structured_content: Any, content: Sequence[Mapping[str, Any]]) -> Shape:
    """The shape of a tool result, from its ``structuredContent`` and ``content`` (rules 1-6)."""
    if structured_content is not None:
        return json_shape(structured_content)
    parsed = json_text(content)
    if parsed is not _NOTHING:
        return _parsed(json_shape(parsed), 5)
    return Shape("blocks", list(content), 6)


def _parsed(shape: Shape, rule: int | str) -> Shape:
    """A shape found in parsed text: the text's rule, the JSON rule it met kept as ``text_rule``."""
    return dataclasses.replace(shape, rule=rule, text_rule=int(shape.rule))


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
    """The shape of a resource's contents: its one text as a JSON or CSV/TSV table, else the contents."""
    if len(contents) == 1 and isinstance(contents[0].get("text"), str):
        item = contents[0]
        separator = _csv_separator(item)
        if separator is not None and _csv_table(item["text"], separator):
            return Shape("csv", item["text"], "csv", separator=separator)
        if separator is not None:
            return Shape("contents", list(contents), "contents")
        mime = _mime(item)
        if mime == "application/json" or mime.endswith("+json") or not mime:
            value = _loads(item["text"])
            if isinstance(value, list | dict):
                shape = json_shape(value)
                return Shape(
                    shape.kind,
                    shape.value,
                    "json",
                    text_rule=int(shape.rule),
                    envelope=shape.envelope,
                    key=shape.key,
                )
    return Shape("contents", list(contents), "contents")


def flat_record(
    record: Mapping[str, Any], prefix: str = "", out: dict[str, Any] | None = None, depth: int = 0
) -> dict[str, Any]:
    """``{"a": {"b": 1}, "c": 2}`` -> ``{"a.b": 1, "c": 2}``, in key order; empty objects kept, and
    objects nested deeper than :data:`MAX_FLATTEN_DEPTH` kept as dicts."""
    if out is None:
        out = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value and depth < MAX_FLATTEN_DEPTH:
            flat_record(value, name + ".", out, depth + 1)
        else:
            out[name] = value
    return out


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
