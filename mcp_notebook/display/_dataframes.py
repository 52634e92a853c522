"""pandas DataFrames from tool results and resource contents: what ``result.to_dataframe()`` does.

This module imports pandas inside its functions only, and is itself imported on demand, by
``to_dataframe()``, so ``import mcp_notebook`` (and a script that never asks for a DataFrame) never
loads pandas. It sits in the core's display layer, below the result types whose method it
serves: the notebook layer's :mod:`mcp_notebook.notebook._frames` (the server's lists, the history)
builds on it, never the other way. Which rule applies is decided by
:mod:`mcp_notebook.display._shapes`, the same pure inference every picture of a result uses,
so a table on screen and its DataFrame always agree.

How a tool result becomes a table
=================================

:func:`result_to_dataframe` picks the first rule that matches, in this order:

1. **structuredContent is a list.** A list whose items are all objects is a list of records: one row
   per record (an empty list gives an empty frame, with the columns the schema names). A list holding
   anything else (numbers, strings, lists, a mix) gives one column, ``value``, one row per item.
   *Why:* a list of objects is the most common table shape a tool returns, and the one
   ``pandas.DataFrame(records)`` already understands; scalars have no names, so they get one.
   A list whose items are all lists is a grid: one row per list (short ones padded with missing
   values). Its first row is the header when it is all distinct strings and a later row holds a
   value of another type (``[["name", "qty"], ["a", 1]]``: columns ``name``, ``qty``); otherwise
   the columns are the positions ``0..n-1`` (``[(1, "x"), (2, "y")]`` as DuckDB prints it).
   *Why:* spreadsheet ranges and SQL rows come as lists of lists, with or without a header.
2. **structuredContent is a dict of columns:** every value is a list and all the lists have the same
   length; each key becomes a column. The one exception is a dict holding exactly one list whose items
   are objects, which is rule 3. *Why:* column-oriented JSON (``{"x": [...], "y": [...]}``) is what
   ``DataFrame.to_dict("list")`` and many numeric APIs emit. The exception matters because
   ``{"result": [{...}, ...]}`` is also a "dict of one column"; read as columns it would be a single
   column of dicts, which is never what anyone wants.
   ``{"columns": [names], "rows": [[...], ...]}`` (names may be ``{"name": ...}`` objects; other keys
   go to ``df.attrs["envelope"]``) is that table. *Why:* database servers (MotherDuck) answer so.
   Two or more lists of one length beside nulls are columns too, the nulls dropped: Chroma's ``get``
   answers ``{"ids": [...], "documents": [...], "metadatas": [{...}, ...], "embeddings": null}``,
   one table of documents (``metadatas`` flattened to ``metadatas.source``...). A list of strings
   that name the dict's own keys (Chroma's ``"included": ["metadatas", "documents"]``) says which
   columns there are: it goes to ``df.attrs["envelope"]``, even when it is as long as the columns.
   When every list holds exactly one list (Chroma's ``query``: one list per query text), the one
   query's lists are the columns; several queries stay one row each. This comes before rule 3's
   nested search (two lists side by side are columns, even when one of them holds objects) and
   after its one list (``{"items": [...], "next": null}`` is the items). *Why:* a vector store's
   answer is one row per document; read by rule 3 only the metadata was a table.
3. **structuredContent is a dict holding exactly one list, and that list holds objects** (other keys
   may hold non-list values): that list's records, as in rule 1. The other keys are not lost: they are
   kept in ``df.attrs["envelope"]``. *Why:* the official Python SDK wraps a tool's list return as
   ``{"result": [...]}`` (before 2026-07-28 ``structuredContent`` had to be an object), and paginated
   APIs wrap rows as ``{"items": [...], "total": 123, "next": "..."}``; in both cases the rows are
   the table.
   The same for a dict holding exactly one grid (an Excel range, ``{"values": [[...], ...]}``).
   Failing both, the one non-empty list of objects nested inside (looking through objects and
   one-item lists: dbhub's ``data.statements[0].rows``) when there is exactly one; the top-level
   keys beside its path are the envelope. An empty list is the records only when it is the dict's
   one field: ``{"thought": "...", "branches": [], ...}`` (sequential-thinking) is one object.
   Rule 2's parallel lists come before this nested search (see rule 2).
4. **Any other structuredContent:** a dict is one row; a bare scalar (allowed since 2026-07-28) is one
   row with one column ``value``. *Why:* a single object is a single record; turning its keys into
   rows would change the meaning of the columns. FastMCP's and the SDK's wrapper of an object
   return, ``{"result": {...}}`` (an optional or union return type), is looked through first: the
   object goes through rules 2-4 (columns ``name``, not ``result.name``; typed by the schema of the
   wrapper's ``result``). ``{"result": 42}`` stays one row with one column ``result``.
5. **Text that holds data:** the text of a ``{"result": "<text>"}`` wrapper (how the SDK and
   fastmcp send a tool's ``str`` return) or, with no structuredContent, content that is all text
   blocks: one block that parses as a JSON array or object, or several that each parse as a JSON
   object; failing JSON, one text that is a Python literal of a list, tuple or dict of plain values
   (``ast.literal_eval``, never ``eval``, texts up to 256 KiB; tuples become lists:
   mcp-server-sqlite and mcp-server-duckdb print their rows so). The parsed value (for several
   blocks: the list of objects, one row per block) goes through rules 1-4.
   ``df.attrs["text_rule"]`` says which, ``df.attrs["text_format"]`` ``"json"`` or ``"python"``.
   A text that is neither is read as Markdown (markdown-it-py's parser, with the notebook extra;
   texts up to 128 KiB): the JSON set in it, a fenced ``json`` block or the body of a heading's
   section (Playwright MCP's ``### Result``), goes through rules 1-4; else its first GitHub-style
   pipe table is the frame (``df.attrs["text_format"]`` ``"markdown"``): the header row names the
   columns, each cell is its text (``\\|`` a pipe, an empty cell missing), and a column whose every
   cell ``pd.to_numeric`` reads is numbers (integers exact, ``Int64`` with gaps); the text's further
   tables are ``df.attrs["more_tables"]``, a tuple of DataFrames read the same way. One text that is
   a JSON number or boolean (a calculator's ``42``) is one row with one column ``result``, as the
   same tool's ``{"result": 42}`` from fastmcp. Several text blocks that are not all JSON objects
   are each read alone: the first that holds data is the frame (several JSON objects: one row
   each), and the others are prose, which the pictures show around the table (ESLint's MCP server
   sends a sentence, its JSON report, a sentence; its ``messages`` are the rows, by rule 3).
   A wrapper whose text is not data is text: rule 6, as if the server had sent the text alone.
   *Why:* servers written before ``structuredContent`` existed (and many since) send their data
   as JSON text, and the Python SDK sends a list return as one JSON text block per item; servers
   that answer for a model (excel-mcp-polars, mcp-server-fetch) write Markdown tables. Blocks
   of other kinds (an image next to the JSON) would be lost by this rule, so it does not apply.
6. **Otherwise:** one row per content block, with the columns ``type``, ``text``, ``mime_type``,
   ``uri``, ``name`` and ``data_size`` (decoded bytes of base64 ``data`` or ``blob``, computed from the
   length; the base64 itself is never put in the frame). For an embedded ``resource`` block the
   columns come from the resource. *Why:* every result has content blocks, so this always works, and
   it shows what the tool returned without dumping megabytes of base64 into a notebook.

Nested objects are flattened into dotted column names (``{"a": {"b": 1}}`` gives column ``a.b``),
like ``pandas.json_normalize(records, sep=".")`` but keeping the record's key order (json_normalize
moves every nested column after the flat ones) and keeping empty objects as values (json_normalize
drops them). Pass ``flatten=False`` to keep dicts in cells. Lists in cells are never exploded.

Columns come in the order of the first record's keys, then any further keys in the order they first
appear. ``df.attrs["rule"]`` is the rule that applied (1-6) and ``df.attrs["is_error"]`` is the
result's ``isError``: an error result still converts (its text is often the most useful thing in it).

dtypes from ``outputSchema``
----------------------------

When the tool's ``outputSchema`` is passed, each column's schema is found along the same path as the
data (the array's ``items``, the wrapped list's ``items``, a column list's ``items``, or the object's
``properties``; nested properties for dotted columns) and mapped: ``integer`` -> ``Int64``, ``number``
-> ``Float64``, ``boolean`` -> ``boolean``, ``string`` -> ``string``, and ``string`` with ``format``
``date-time`` or ``date`` -> ``datetime64`` (unparseable values become ``NaT``; mixed UTC offsets are
converted to UTC). Nullable types (``["integer", "null"]`` or ``anyOf`` with ``{"type": "null"}``) map
the same way, since all these dtypes hold missing values. Local ``$ref`` (``#/$defs/...``) are
resolved; anything else (other documents, URLs) is never fetched and the column keeps pandas' own
dtype, as does any column whose schema states no single type, or whose data does not fit the stated
type (the schema is a hint for display, not a validator). Walking the schema for columns is bounded
by ``MAX_SCHEMA_NODES`` (:mod:`mcp_notebook.protocol._schema_walk`): past it, deeper properties are
not typed, and flattening a record past it keeps the rest of its objects as JSON text in their cells.

Integers stay exact, with or without a schema (issue #35): pandas alone reads a column of integers
with a gap as float64, rounding every integer past 2**53 (9007199254740993 -> 9007199254740992.0)
while the table drawn for the same result shows the exact value. Such a column is ``Int64``, or,
past int64, an object column of Python ints; integers mixed with floats stay float64 only when none
of them rounds (else the values are kept as they are, in an object column), and a ``number`` schema
never turns integers a float cannot hold into ``Float64``. ``map_tool``'s ``result`` column follows
the same rule (:func:`exact_values`).

Strings from the server are kept as data, never interpreted. Escaping them is the renderer's job:
``DataFrame.to_html()`` and the notebook's HTML repr escape cell text by default (``escape=True``);
``DataFrame.style`` (Styler) does not, so render server data through it only with escaping turned on.
Control characters are kept too, because they are data (a value compared, joined or written to a
file must be what the server sent): pandas' text repr escapes ``\n``, ``\t`` and ``\r`` only, so
``print(df)`` in a terminal writes a cell's ``\x1b`` as it is. Every picture this package draws of a
result (its repr, the explorer, the magics, a live view's text) makes them visible; for a frame of
untrusted text you print yourself, ``df.map(mcp_notebook.protocol.printable)`` shows them the same way.
(The frames of the server's *lists*, :mod:`mcp_notebook.notebook._frames`, are for reading and are
made readable when built.)
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..protocol._schema_walk import NodeBudget, local_target
from ._html import base64_size
from ._shapes import Shape, contents_shape, flat_record, result_shape

if TYPE_CHECKING:
    # pandas loads inside the functions only: importing this module costs nothing until a
    # DataFrame is asked for.
    import pandas as pd

__all__ = ["BLOCK_COLUMNS", "CONTENTS_COLUMNS", "resource_to_dataframe", "result_to_dataframe"]

#: snake_case like every frame's columns (issue #29): the block's ``mimeType`` is ``mime_type``
BLOCK_COLUMNS = ["type", "text", "mime_type", "uri", "name", "data_size"]

_MAX_REF_HOPS = 64
_MAX_SCHEMA_DEPTH = 16
#: a nullable ``anyOf`` is a few branches; a long one is not looked through (it is read per column)
_MAX_BRANCHES = 8
# infer_dtype answers for which a column cannot hold a dict (no Python scan needed)
_SCALAR_KINDS = frozenset(
    {"string", "bytes", "integer", "floating", "mixed-integer-float", "boolean", "empty", "decimal"}
)
_NUMBER_KINDS = frozenset({"integer", "floating", "mixed-integer-float", "empty"})
_JSON_TYPE_DTYPES = {"integer": "Int64", "number": "Float64", "boolean": "boolean", "string": "string"}


# --------------------------------------------------------------------------- tool results


def result_to_dataframe(
    structured_content: Any,
    content: Sequence[Mapping[str, Any]],
    *,
    is_error: bool = False,
    output_schema: Mapping[str, Any] | None = None,
    flatten: bool = True,
) -> pd.DataFrame:
    """A tool result, given by its parts, as a DataFrame, by the rules in this module's docstring.

    Plain parts, not a ``ToolResult``: the result types (in ``client/``) sit above this layer and
    call it; :func:`mcp_notebook.notebook._frames.result_to_dataframe` takes a result or a raw dict.

    Args:
        structured_content: the result's ``structuredContent`` (None when it has none).
        content: its content blocks.
        is_error: its ``isError``, kept in ``df.attrs["is_error"]``.
        output_schema: the tool's ``outputSchema``; when given, column dtypes follow it.
        flatten: flatten nested objects into dotted columns (``a.b``); ``False`` keeps dicts in cells.
    """
    schema = dict(output_schema) if isinstance(output_schema, Mapping) else {}
    shape = result_shape(structured_content, content)
    df = _blocks_frame(shape.value) if shape.kind == "blocks" else _json_frame(shape, schema, flatten)
    _missing_as_na(df)
    df.attrs["rule"] = shape.rule
    if shape.text_rule is not None:
        df.attrs["text_rule"] = shape.text_rule
    if shape.text_format is not None:
        df.attrs["text_format"] = shape.text_format
    if shape.more:
        more_tables = (_missing_as_na(_json_frame(more, {}, flatten)) for more in shape.more)
        df.attrs["more_tables"] = _Frames(more_tables)
    df.attrs["is_error"] = is_error
    return df


class _Frames(tuple[Any, ...]):
    """A text's further tables (``df.attrs["more_tables"]``), a tuple of DataFrames equal only to
    itself: pandas compares two frames' attrs to concatenate them, and comparing DataFrames by
    content raises (a DataFrame has no truth value), so ``pd.concat`` of two such frames failed."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other

    def __hash__(self) -> int:
        return id(self)


def _json_frame(shape: Shape, schema: dict[str, Any], flatten: bool) -> pd.DataFrame:
    """Rules 1-4: the frame of a JSON shape (from structuredContent or parsed text), typed by
    ``schema`` found along the same path as the data."""
    root = schema
    if shape.inside is not None:  # FastMCP's {"result": {...}}: the object's schema is the wrapper's
        schema = _resolve(_properties(schema, root).get(shape.inside), root)
    data = shape.value
    if shape.kind == "rows" and shape.text_format == "markdown":
        return _markdown_frame(data, shape.header)
    if shape.kind == "rows":  # a grid, or columns + rows: typed by pandas, not by a schema
        df = _rows_frame(data, shape.header)
        if shape.envelope:
            df.attrs["envelope"] = shape.envelope
        return df
    if shape.kind == "records" and shape.key is not None:  # rule 3
        items = _list_items(_properties(schema, root).get(shape.key), root)
        df = _records_frame(data, _properties(items, root), root, flatten)
        if shape.envelope:
            df.attrs["envelope"] = shape.envelope
        return df
    if shape.kind == "records":
        return _records_frame(data, _properties(_list_items(schema, root), root), root, flatten)
    if shape.kind == "columns":
        props = _properties(schema, root)
        column_schemas = {key: _list_items(props.get(key), root) for key in data}
        df = _columns_frame(data, column_schemas, root, flatten)
        if shape.envelope:  # Chroma's "included"
            df.attrs["envelope"] = shape.envelope
        return df
    if shape.kind == "object":
        return _records_frame([data], _properties(schema, root), root, flatten)
    # values: a list's items (rule 1), or one scalar (rule 4)
    json_rule = shape.text_rule if shape.text_rule is not None else shape.rule
    return _values_frame(data, _list_items(schema, root) if json_rule == 1 else schema, root)


def _records_frame(
    records: list[dict[str, Any]], props: dict[str, Any], root: dict[str, Any], flatten: bool
) -> pd.DataFrame:
    import pandas as pd

    columns = _schema_columns(props, root, flatten)
    if not records:
        return _empty_frame(columns, root)
    # The fast path: pandas builds a flat frame in C. A nested object can only sit in an object-dtype
    # column, so only those are checked (cheaply by infer_dtype, by a scan only when it says "mixed").
    df = pd.DataFrame(records)
    if flatten and _has_dicts(df):
        records = [flat_record(record) for record in records]
        df = pd.DataFrame(records)
    _exact_integers(df, lambda _, name: [r.get(name) if isinstance(r, dict) else None for r in records])
    _apply_schema(df, columns, root, lambda path: [_dig(record, path, flatten) for record in records])
    return df


def _columns_frame(
    data: dict[str, list[Any]], column_schemas: dict[str, Any], root: dict[str, Any], flatten: bool
) -> pd.DataFrame:
    import pandas as pd

    df = pd.DataFrame(data)
    if flatten and _has_dicts(df):
        keys = list(data)
        records = [dict(zip(keys, row, strict=True)) for row in zip(*data.values(), strict=True)]
        props = {key: schema for key, schema in column_schemas.items() if schema}
        return _records_frame(records, props, root, flatten)
    columns = _schema_columns({k: v for k, v in column_schemas.items() if v}, root, False)
    _exact_integers(df, lambda _, name: data[name])
    _apply_schema(df, columns, root, lambda path: list(data[path[0]]))
    return df


def _rows_frame(rows: list[list[Any]], header: tuple[Any, ...]) -> pd.DataFrame:
    """One row per list, short rows padded with ``None``; the columns are ``header``."""
    import pandas as pd

    width = len(header)
    padded = [row if len(row) == width else [*row, *([None] * (width - len(row)))] for row in rows]
    if not padded:
        return pd.DataFrame({name: pd.Series([], dtype=object) for name in header}, columns=list(header))
    df = pd.DataFrame(padded, columns=list(header))
    _exact_integers(df, lambda position, _: [row[position] for row in padded])
    return df


def _markdown_frame(rows: list[list[str]], header: tuple[Any, ...]) -> pd.DataFrame:
    """A Markdown table: its cells are text, an empty one missing; a column whose every non-empty cell
    pandas reads as a number (``pd.to_numeric``) is numbers, its integers exact."""
    import pandas as pd

    cells: list[list[str | None]] = [[cell if cell != "" else None for cell in row] for row in rows]
    df = _rows_frame(cells, header)
    for position in range(df.shape[1]):
        column = df.iloc[:, position]
        if column.isna().all():
            continue
        try:
            df.isetitem(position, pd.to_numeric(column))
        except (ValueError, TypeError):
            continue  # a cell that is not a number: the column stays text
    numbers = [[None if cell is None else _csv_number(cell) for cell in row] for row in cells]
    _exact_integers(df, lambda position, _: [row[position] for row in numbers])
    return df


def _values_frame(values: list[Any], schema: dict[str, Any] | None, root: dict[str, Any]) -> pd.DataFrame:
    import pandas as pd

    df = pd.DataFrame({"value": pd.Series(values, dtype=object)}) if values else pd.DataFrame({"value": []})
    if values and not any(isinstance(v, (dict, list)) for v in values):
        df = df.infer_objects()
        _exact_integers(df, lambda _, __: values)
    if schema:
        _apply_schema(df, [("value", ("value",), schema, True)], root, lambda path: list(values))
    return df


def _empty_frame(columns: list[tuple[str, tuple[str, ...], Any, bool]], root: dict[str, Any]) -> pd.DataFrame:
    import pandas as pd

    leaves = [column for column in columns if column[3]]
    df = pd.DataFrame({name: pd.Series([], dtype=object) for name, _, _, _ in leaves})
    _apply_schema(df, leaves, root, lambda path: [])
    return df


def _has_dicts(df: pd.DataFrame) -> bool:
    from pandas.api.types import infer_dtype

    for _, column in df.items():
        if column.dtype != object:
            continue
        if infer_dtype(column, skipna=True) in _SCALAR_KINDS:
            continue
        if any(isinstance(value, dict) for value in column):
            return True
    return False


def _dig(record: Any, path: tuple[str, ...], flattened: bool) -> Any:
    if flattened and isinstance(record, dict):
        return record.get(".".join(path))
    for key in path:
        if not isinstance(record, dict):
            return None
        record = record.get(key)
    return record


# --------------------------------------------------------------------------- exact integers

#: every integer up to this magnitude is exactly a float64 (2**53); past it, floats round
_FLOAT_EXACT = 2**53
_INT64 = (-(2**63), 2**63 - 1)


def _exact_integers(df: pd.DataFrame, values_of: Callable[[int, Any], Sequence[Any]]) -> None:
    """Give back the JSON integers pandas read into float64, exactly (issue #35).

    pandas reads a column of integers with a gap (``[9007199254740993, None]``), or integers mixed
    with floats, as float64, which rounds every integer past 2**53: the frame would silently
    disagree with the table drawn for the same result. ``values_of(position, name)`` gives the
    column's values as parsed. A column of integers (and gaps) becomes ``Int64``, or, past int64,
    an object column of Python ints; integers and floats together stay float64 only when no integer
    rounds, else the values are kept as they are (object). Other columns are left alone.
    """
    import pandas as pd

    if not df.columns.is_unique:
        return
    for position, name in enumerate(df.columns):
        column = df[name]
        if str(column.dtype) != "float64":
            continue
        if not column.hasnans and not (column.abs() >= _FLOAT_EXACT).any():
            continue  # no gap and nothing past 2**53: the floats hold the values exactly
        exact = exact_values(values_of(position, name))
        if exact is not None:
            df[name] = pd.Series(exact, index=df.index)


def exact_values(values: Sequence[Any]) -> Any:
    """``values`` (JSON scalars, ``None`` for missing) as a pandas array that keeps every integer
    exact, or ``None`` when float64 already does (no integers, or none that rounds and no gaps to
    make nullable). Used wherever a frame column is built from server values (frames, map_tool)."""
    import pandas as pd

    integers = floats = False
    widest = 0
    for value in values:
        if value is None or value is pd.NA:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None  # not a numeric column: pandas' own reading stands
        if isinstance(value, int):
            integers = True
            widest = max(widest, abs(value))
        else:
            floats = True
    if not integers:
        return None
    if not floats:
        if _INT64[0] <= -widest and widest <= _INT64[1]:
            return pd.array([None if v is pd.NA else v for v in values], dtype="Int64")
    elif widest <= _FLOAT_EXACT:
        return None
    return pd.array([pd.NA if v is None else v for v in values], dtype=object)


# --------------------------------------------------------------------------- schema -> dtypes


def _apply_schema(
    df: pd.DataFrame,
    columns: list[tuple[str, tuple[str, ...], Any, bool]],
    root: dict[str, Any],
    values_at: Callable[[tuple[str, ...]], list[Any]],
) -> None:
    if not columns or not df.columns.is_unique:
        return
    for name, path, schema, _leaf in columns:
        if name not in df.columns:
            continue
        dtype = _schema_dtype(schema, root)
        if dtype is None:
            continue
        try:
            converted = _convert(df[name], dtype, functools.partial(values_at, path))
        except (TypeError, ValueError, OverflowError):
            continue  # the data does not fit the stated type: keep what pandas inferred
        if converted is not None:
            df[name] = converted


def _convert(series: pd.Series, dtype: str, original: Callable[[], list[Any]]) -> pd.Series | None:
    import pandas as pd
    from pandas.api.types import infer_dtype, is_bool_dtype, is_float_dtype

    kind = infer_dtype(series, skipna=True)
    if dtype in ("Int64", "Float64"):
        if is_bool_dtype(series.dtype) or kind not in _NUMBER_KINDS:
            return None
        if dtype == "Float64" and not is_float_dtype(series.dtype) and series.abs().max() > _FLOAT_EXACT:
            return None  # integers a float cannot hold: "number" is a hint, not a reason to round them
        if dtype == "Int64" and is_float_dtype(series.dtype) and series.abs().max() >= 2**53:
            # pandas read integers with nulls as float64: rebuild from the JSON values to stay exact
            return pd.Series(pd.array(original(), dtype="Int64"), index=series.index)
        return series.astype(dtype)
    if dtype == "boolean":
        return series.astype("boolean") if kind in {"boolean", "empty"} else None
    if dtype == "string":
        return series.astype("string") if kind in {"string", "empty"} else None
    if dtype == "datetime":
        if kind not in {"string", "empty", "datetime", "datetime64", "date"}:
            return None
        return _to_datetime(series)
    return None


def _to_datetime(series: pd.Series) -> pd.Series:
    """ISO 8601 text (or datetime objects) to datetime64; mixed UTC offsets are converted to UTC."""
    import pandas as pd

    try:
        return pd.to_datetime(series, errors="coerce", format="ISO8601")
    except (ValueError, TypeError):
        return pd.to_datetime(series, errors="coerce", format="ISO8601", utc=True)


def _schema_dtype(schema: Any, root: dict[str, Any]) -> str | None:
    resolved = _non_null(schema, root)
    kind = resolved.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else None
    if kind is None and resolved.get("format") in ("date-time", "date"):
        kind = "string"
    if kind == "string" and resolved.get("format") in ("date-time", "date"):
        return "datetime"
    return _JSON_TYPE_DTYPES.get(kind) if isinstance(kind, str) else None


def _schema_columns(
    props: dict[str, Any],
    root: dict[str, Any],
    flatten: bool,
    prefix: tuple[str, ...] = (),
    depth: int = 0,
    budget: NodeBudget | None = None,
) -> list[tuple[str, tuple[str, ...], Any, bool]]:
    """(column name, path, schema, is_leaf) for each property; nested ones too when flattening.

    Every property is a node of one :class:`NodeBudget` (definitions that refer to each other
    several times expand exponentially): past it, an object's properties are not typed further."""
    if budget is None:
        budget = NodeBudget()
        if not budget.take(len(props)):
            return []
    columns: list[tuple[str, tuple[str, ...], Any, bool]] = []
    for key, schema in props.items():
        path = (*prefix, key)
        nested = _properties(schema, root) if flatten and depth < _MAX_SCHEMA_DEPTH else {}
        if nested and not budget.take(len(nested)):
            nested = {}
        columns.append((".".join(path), path, schema, not nested))
        if nested:
            columns.extend(_schema_columns(nested, root, flatten, path, depth + 1, budget))
    return columns


def _properties(schema: Any, root: dict[str, Any]) -> dict[str, Any]:
    props = _non_null(schema, root).get("properties")
    return props if isinstance(props, dict) else {}


def _list_items(schema: Any, root: dict[str, Any]) -> dict[str, Any]:
    """The ``items`` schema of an array schema; for an object schema with exactly one array property
    (the SDK's ``{"result": [...]}`` wrapper, met by rule 5's text), that property's ``items``."""
    resolved = _non_null(schema, root)
    items = resolved.get("items")
    if isinstance(items, dict):
        return _resolve(items, root)
    props = _properties(resolved, root)
    arrays = [p for p in props.values() if isinstance(_non_null(p, root).get("items"), dict)]
    if len(arrays) == 1 and resolved.get("type") != "array":
        return _resolve(_non_null(arrays[0], root)["items"], root)
    return {}


def _non_null(schema: Any, root: dict[str, Any]) -> dict[str, Any]:
    """The schema with ``$ref`` resolved and a nullable ``anyOf``/``oneOf`` reduced to its one branch."""
    resolved = _resolve(schema, root)
    for _ in range(_MAX_REF_HOPS):
        branches = resolved.get("anyOf") or resolved.get("oneOf")
        if not isinstance(branches, list) or len(branches) > _MAX_BRANCHES:
            return resolved
        non_null = [b for b in (_resolve(b, root) for b in branches) if b.get("type") != "null"]
        if len(non_null) != 1:
            return resolved
        resolved = non_null[0]
    return resolved


def _resolve(schema: Any, root: dict[str, Any]) -> dict[str, Any]:
    """Follow local ``$ref`` (``#/...``) and single-entry ``allOf``; anything else resolves to ``{}``."""
    for _ in range(_MAX_REF_HOPS):
        if not isinstance(schema, dict):
            return {}
        ref = schema.get("$ref")
        if isinstance(ref, str):
            schema = local_target(root, ref)  # another document or a URL: never fetched
            continue
        all_of = schema.get("allOf")
        if (
            isinstance(all_of, list)
            and len(all_of) == 1
            and "type" not in schema
            and "properties" not in schema
        ):
            schema = all_of[0]
            continue
        return schema
    return {}


# --------------------------------------------------------------------------- missing values


def _missing_as_na(df: pd.DataFrame) -> pd.DataFrame:
    """One missing value, ``pd.NA``, in every column that misses one (issue #29): pandas alone
    gives ``None`` in an object column, ``NaN`` in a float or default-text column. A column with
    a gap becomes nullable (``Float64``, ``string``; an object column holds ``pd.NA``); a complete
    column keeps its dtype, and datetimes keep ``NaT``. Values are never changed."""
    import pandas as pd

    if not df.columns.is_unique:
        return df
    for name in df.columns:
        column = df[name]
        if not column.hasnans:
            continue
        dtype = column.dtype
        if isinstance(dtype, pd.StringDtype) and dtype.na_value is not pd.NA:
            df[name] = column.astype("string")
        elif str(dtype) == "float64":
            df[name] = column.astype("Float64")
        elif str(dtype) == "object":
            df[name] = column.where(column.notna(), pd.NA)
    return df


# --------------------------------------------------------------------------- resource contents

CONTENTS_COLUMNS = ["uri", "mime_type", "text", "data_size"]


def resource_to_dataframe(contents: Sequence[Mapping[str, Any]], *, flatten: bool = True) -> pd.DataFrame:
    """A resource's contents (the ``contents`` list of a ``resources/read`` result) as a DataFrame.

    One text content that is a table becomes that table: data (a ``json`` MIME type, ``text/plain``
    or none, and text that rule 5 reads as JSON or a Python literal) through rules 1-4 of
    :func:`result_to_dataframe`; CSV or TSV (``text/csv``, ``text/tab-separated-values``, or no
    MIME type and a URI ending ``.csv``/``.tsv``, with a header and no row longer than it) through
    ``pandas.read_csv``, every column as it parses. Anything else (plain text, blobs, several
    contents) is one row per content: ``uri``, ``mime_type``, ``text`` and ``data_size`` (decoded
    bytes of a blob, never the blob itself).
    ``df.attrs["rule"]`` says which: ``"json"``, ``"csv"`` or ``"contents"``.
    """
    import pandas as pd

    items = contents
    shape = contents_shape(items)
    if shape.kind == "csv":
        try:
            df = pd.read_csv(io.StringIO(shape.value), sep=shape.separator)
        except (ValueError, pd.errors.ParserError):
            df = None  # _shapes rules out rows longer than the header; pandas refusing anyway: contents
        if df is not None:
            text, separator = shape.value, shape.separator
            _exact_integers(df, lambda position, _: _csv_numbers(text, separator, position))
            df.attrs["rule"] = "csv"
            return _missing_as_na(df)
    elif shape.kind != "contents":
        df = _missing_as_na(_json_frame(shape, {}, flatten))
        df.attrs["rule"] = "json"
        return df
    rows = []
    for item in items:
        blob = item.get("blob")
        rows.append(
            {
                "uri": _str(item.get("uri")),
                "mime_type": _str(item.get("mimeType")),
                "text": _str(item.get("text")),
                "data_size": base64_size(blob) if isinstance(blob, str) else None,
            }
        )
    df = pd.DataFrame(rows, columns=CONTENTS_COLUMNS)
    df = df.astype({c: "string" for c in CONTENTS_COLUMNS[:-1]} | {"data_size": "Int64"})
    df.attrs["rule"] = "contents"
    return df


def _csv_numbers(text: str, separator: str | None, position: int) -> list[Any]:
    """One numeric CSV column read again as its text, each cell as the JSON number it spells
    (an integer exactly), missing cells ``None``: for :func:`_exact_integers`."""
    import pandas as pd

    cells = pd.read_csv(io.StringIO(text), sep=separator, usecols=[position], dtype=str).iloc[:, 0]
    return [_csv_number(cell) if isinstance(cell, str) else None for cell in cells]


def _csv_number(cell: str) -> Any:
    try:
        return int(cell)
    except ValueError:
        try:
            return float(cell)
        except ValueError:
            return cell  # not a number after all: the column is left as pandas read it


# --------------------------------------------------------------------------- content blocks (rule 6)


def _blocks_frame(content: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    import pandas as pd

    rows = []
    for block in content:
        inner = block.get("resource") if block.get("type") == "resource" else None
        inner = inner if isinstance(inner, dict) else {}
        data = block.get("data") if isinstance(block.get("data"), str) else inner.get("blob")
        row: dict[str, Any] = {"type": _str(block.get("type"))}
        for key, column in (("text", "text"), ("mimeType", "mime_type"), ("uri", "uri"), ("name", "name")):
            row[column] = _first_str(block.get(key), inner.get(key))
        row["data_size"] = base64_size(data) if isinstance(data, str) else None  # never the data itself
        rows.append(row)
    df = pd.DataFrame(rows, columns=BLOCK_COLUMNS)
    return df.astype({c: "string" for c in BLOCK_COLUMNS[:-1]} | {"data_size": "Int64"})


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _first_str(*values: Any) -> str | None:
    return next((value for value in values if isinstance(value, str)), None)
