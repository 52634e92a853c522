"""pandas DataFrames of the server's lists (tools, resources, templates, prompts), the history and tasks.

Tool results and resource contents become DataFrames in :mod:`mcp_notebook.display._dataframes`
(their ``to_dataframe()`` lives in the core); its two functions are offered here, taking a result
or a raw dict, where notebook code has always found them. This module imports pandas at import
time and is only imported on demand.

Server text in these frames is made readable, not kept raw. pandas' text repr (``print(df)``, a
terminal, ``text/plain``) writes string cells as they are, escaping only ``\n``, ``\t`` and ``\r``, so
a tool described as ``"\x1b]0;pwned\x07..."`` would retitle the terminal. The frames of the server's
lists (tools, resources, templates, prompts) and of tasks are for reading what a server offers, so
every string cell (and each string in a list cell: parameters, required) has its control and bidi
characters made visible (:func:`mcp_notebook.protocol.printable`; descriptions and status messages
keep their line breaks, which pandas shows as ``\n``). A normal name or description is unchanged; a
hostile one reads ``\x1b]0;...``. The raw values stay on the objects (``session.tools``,
``Tool.name``, ``Tool.raw``). Tool *results* are different: ``result.to_dataframe()`` is the server's
data and is kept exactly as sent (see :mod:`mcp_notebook.display._dataframes`).

One look for every frame built here (issue #29): column names are snake_case; a missing value is
``pd.NA`` in nullable columns (``string``, ``Int64``, ``Float64``, ``boolean``; an object column of
lists or dicts holds ``pd.NA`` too, never ``None`` or ``NaN``), and ``NaT`` in a datetime column;
times are time-zone-aware, in the notebook's local zone, to the millisecond; durations are float
seconds (``Float64``), never ``Timedelta`` (pictures show them short: ``7 ms``, ``1.2 s``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping
from contextlib import suppress
from datetime import tzinfo
from typing import Any

import pandas as pd
from pandas.api.types import (
    infer_dtype,
    is_bool_dtype,
    is_datetime64_dtype,
    is_numeric_dtype,
)

from ..client._results import Prompt, Resource, ResourceContents, ResourceTemplate, Tool, ToolResult
from ..display._dataframes import (
    BLOCK_COLUMNS,
    CONTENTS_COLUMNS,
    _str,
    _to_datetime,
)
from ..display._dataframes import resource_to_dataframe as _resource_frame
from ..display._dataframes import result_to_dataframe as _result_frame
from ..protocol._printable import printable

__all__ = [
    "BLOCK_COLUMNS",
    "CONTENTS_COLUMNS",
    "HISTORY_COLUMNS",
    "TASK_COLUMNS",
    "history_frame",
    "prompts_frame",
    "resource_templates_frame",
    "resource_to_dataframe",
    "resources_frame",
    "result_to_dataframe",
    "tasks_frame",
    "tools_frame",
]

HISTORY_COLUMNS = ["time", "method", "name", "arguments", "duration", "outcome", "result_size", "via"]


# --------------------------------------------------------------------------- the server's lists


#: columns whose text may span lines (pandas shows a line break as ``\n``)
_MULTILINE = frozenset({"description", "status_message", "data", "last_error"})


def _readable(row: dict[str, Any]) -> dict[str, Any]:
    """A row of server metadata with control and bidi characters made visible (see the module's
    docstring): a string cell, and each string in a list cell; anything else as it is."""
    shown: dict[str, Any] = {}
    for name, value in row.items():
        if isinstance(value, str):
            value = printable(value, multiline=name in _MULTILINE)
        elif isinstance(value, list):
            value = [printable(v) if isinstance(v, str) else v for v in value]
        shown[name] = value
    return shown


def _typed(cls: Any, item: Any) -> Any:
    """A result object from either the object itself or the server's raw dict."""
    return item if isinstance(item, cls) else cls.from_dict(dict(item))


def result_to_dataframe(
    result: ToolResult | Mapping[str, Any],
    *,
    output_schema: Mapping[str, Any] | None = None,
    flatten: bool = True,
) -> pd.DataFrame:
    """A tool result (a :class:`~mcp_notebook.ToolResult` or a raw ``CallToolResult`` dict) as a
    DataFrame: ``result.to_dataframe()``'s rules (:mod:`mcp_notebook.display._dataframes`)."""
    typed: ToolResult = _typed(ToolResult, result)
    return _result_frame(
        typed.structured_content,
        typed.content,
        is_error=typed.is_error,
        output_schema=output_schema,
        flatten=flatten,
    )


def resource_to_dataframe(
    contents: ResourceContents | Mapping[str, Any], *, flatten: bool = True
) -> pd.DataFrame:
    """A resource's contents (or a raw ``resources/read`` result) as a DataFrame."""
    return _resource_frame(_typed(ResourceContents, contents).contents, flatten=flatten)


def tools_frame(tools: Iterable[Tool | Mapping[str, Any]]) -> pd.DataFrame:
    """One row per tool: name, title, description, parameters, required, the four annotation hints
    (``read_only``, ``destructive``, ``idempotent``, ``open_world``; NA when the server does not say)
    and ``ui``, the ``ui://`` resource of the tool's MCP App View (NA for a tool without one).
    The hints are the server's claims, not guarantees."""
    rows = []
    for tool in tools:
        tool = _typed(Tool, tool)
        annotations = tool.annotations
        required = tool.input_schema.get("required")
        rows.append(
            _readable(
                {
                    "name": tool.name,
                    "title": tool.title or _str(annotations.get("title")),
                    "description": tool.description,
                    "parameters": tool.parameters,
                    "required": [r for r in required if isinstance(r, str)]
                    if isinstance(required, list)
                    else [],
                    "read_only": _bool(annotations.get("readOnlyHint")),
                    "destructive": _bool(annotations.get("destructiveHint")),
                    "idempotent": _bool(annotations.get("idempotentHint")),
                    "open_world": _bool(annotations.get("openWorldHint")),
                    "ui": tool.ui_resource_uri,
                }
            )
        )
    columns = ["name", "title", "description", "parameters", "required"]
    hints = ["read_only", "destructive", "idempotent", "open_world"]
    df = pd.DataFrame(rows, columns=[*columns, *hints, "ui"])
    return df.astype({c: "string" for c in [*columns[:3], "ui"]} | {c: "boolean" for c in hints})


def resources_frame(resources: Iterable[Resource | Mapping[str, Any]]) -> pd.DataFrame:
    """One row per resource: uri, name, title, description, mime_type, size (bytes, NA if unknown)."""
    rows = []
    for resource in resources:
        resource = _typed(Resource, resource)
        rows.append(
            _readable(
                {
                    "uri": resource.uri,
                    "name": resource.name,
                    "title": resource.title,
                    "description": resource.description,
                    "mime_type": resource.mime_type,
                    "size": resource.size,
                }
            )
        )
    strings = ["uri", "name", "title", "description", "mime_type"]
    df = pd.DataFrame(rows, columns=[*strings, "size"])
    return df.astype({c: "string" for c in strings} | {"size": "Int64"})


_TEMPLATE_EXPRESSION = re.compile(r"\{([^{}]*)\}")


def resource_templates_frame(templates: Iterable[ResourceTemplate | Mapping[str, Any]]) -> pd.DataFrame:
    """One row per resource template: uri_template, name, title, description, mime_type, and the
    template's variable names (RFC 6570, operators and modifiers removed)."""
    rows = []
    for template in templates:
        template = _typed(ResourceTemplate, template)
        rows.append(
            _readable(
                {
                    "uri_template": template.uri_template,
                    "name": template.name,
                    "title": template.title,
                    "description": template.description,
                    "mime_type": template.mime_type,
                    "variables": _template_variables(template.uri_template),
                }
            )
        )
    strings = ["uri_template", "name", "title", "description", "mime_type"]
    df = pd.DataFrame(rows, columns=[*strings, "variables"])
    return df.astype({c: "string" for c in strings})


def _template_variables(template: str) -> list[str]:
    names: list[str] = []
    for expression in _TEMPLATE_EXPRESSION.findall(template):
        for spec in expression.lstrip("+#./;?&=,!@|").split(","):
            name = spec.split(":", 1)[0].rstrip("*").strip()
            if name and name not in names:
                names.append(name)
    return names


def prompts_frame(prompts: Iterable[Prompt | Mapping[str, Any]]) -> pd.DataFrame:
    """One row per prompt: name, title, description, arguments (names), required (names)."""
    rows = []
    for prompt in prompts:
        prompt = _typed(Prompt, prompt)
        rows.append(
            _readable(
                {
                    "name": prompt.name,
                    "title": prompt.title,
                    "description": prompt.description,
                    "arguments": prompt.argument_names,
                    "required": [str(a.get("name")) for a in prompt.arguments if a.get("required") is True],
                }
            )
        )
    strings = ["name", "title", "description"]
    df = pd.DataFrame(rows, columns=[*strings, "arguments", "required"])
    return df.astype({c: "string" for c in strings})


def _missing_as_na(df: pd.DataFrame) -> pd.DataFrame:
    """Every ``None`` or ``NaN`` in an object column as ``pd.NA``, and pandas' default text dtype
    (``str``, whose missing value is ``NaN``) as ``string``: one missing value in every frame."""
    for name in df.columns:
        column = df[name]
        if isinstance(column.dtype, pd.StringDtype) and column.dtype.na_value is not pd.NA:
            df[name] = column.astype("string")
            continue
        if column.dtype != object:
            continue
        missing = column.isna()
        if missing.any():
            df[name] = column.astype(object).where(~missing, pd.NA)
    return df


def _local_times(seconds: pd.Series) -> pd.Series:
    """Epoch seconds as aware datetimes in the local zone, to the millisecond (a float's last
    digits are noise, and nanoseconds only make the column wide); ``NaT`` where there is none."""
    numbers = pd.to_numeric(seconds, errors="coerce").astype("float64")
    utc = pd.to_datetime(numbers, unit="s", utc=True).dt.round("ms")
    return utc.dt.tz_convert(_local_zone()).astype(pd.DatetimeTZDtype("ns", _local_zone()))


def _seconds(values: list[Any]) -> pd.Series:
    """Durations (float seconds, ``timedelta`` or ``Timedelta``) as ``Float64`` seconds."""
    numbers: list[float | None] = []
    for value in values:
        total = getattr(value, "total_seconds", None)
        if callable(total):
            value = total()
        if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
            numbers.append(None)
        else:
            numbers.append(float(value))
    return pd.Series(pd.array(numbers, dtype="Float64"))


def history_frame(history: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per history entry (a dict). Known columns come first, in this order: time, method,
    name, arguments, duration, outcome, result_size. Any other keys follow, as they are.

    - ``time``: when the call started (to the millisecond), as a time-zone-aware ``datetime64`` in
      the notebook's local time zone (the kernel machine's, daylight saving included:
      ``dateutil.tz.tzlocal()``, the zone of ``datetime.now().astimezone()``), so it reads as the
      clock on the wall. Taken from epoch
      seconds (what a session records), an aware datetime or an ISO 8601 string with an offset
      (converted), or a naive datetime or ISO string without one (read as local time).
      ``frame["time"].dt.tz_convert("UTC")`` gives UTC.
    - ``duration``: float seconds (``Float64``; ``pd.NA`` where there is none), from float seconds
      (what a session records) or a ``timedelta``.
    - ``result_size``: ``Int64``; method, name and outcome: ``string``; a missing ``arguments`` (or
      any other missing value) is ``pd.NA``.

    Values that do not fit (a time that is not one) are kept as they are."""
    entries = [dict(entry) for entry in history]
    extra: dict[str, None] = {}
    for entry in entries:
        for key in entry:
            if key not in HISTORY_COLUMNS:
                extra.setdefault(key, None)
    df = pd.DataFrame(entries, columns=[*HISTORY_COLUMNS, *extra])
    df["time"] = _history_time(df["time"])
    df["duration"] = _seconds([entry.get("duration") for entry in entries]).set_axis(df.index)
    with suppress(TypeError, ValueError, OverflowError):  # not numbers: keep them as they are
        sizes = [entry.get("result_size") for entry in entries]
        df["result_size"] = pd.Series(pd.array(sizes, dtype="Int64"), index=df.index)
    for name in ("method", "name", "outcome", "via"):
        if infer_dtype(df[name], skipna=True) in {"string", "empty"}:
            df[name] = df[name].astype("string")
    return _missing_as_na(df)


def _local_zone() -> tzinfo:
    """The notebook's local time zone, daylight saving included (the frames' times are shown in it)."""
    from dateutil.tz import tzlocal  # pandas depends on python-dateutil

    zone: tzinfo = tzlocal()
    return zone


def _history_time(series: pd.Series) -> pd.Series:
    zone = _local_zone()
    if series.isna().all():
        return pd.Series(pd.NaT, index=series.index, dtype=pd.DatetimeTZDtype("ns", zone))
    if is_numeric_dtype(series.dtype) and not is_bool_dtype(series.dtype):
        return _local_times(series)
    try:
        times = _to_datetime(series)
    except (ValueError, TypeError):
        return series
    if not isinstance(times.dtype, pd.DatetimeTZDtype):
        if not is_datetime64_dtype(times.dtype):
            return series
        return times.dt.tz_localize(zone, ambiguous="NaT", nonexistent="NaT")
    return times.dt.tz_convert(zone)


def _bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


TASK_COLUMNS = ("task_id", "tool", "status", "status_message", "started", "ended", "elapsed")


def tasks_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per task: task_id, tool, status, status_message (strings), started and ended
    (aware datetimes in local time, to the millisecond, as in the history; ended is NaT while the
    task runs), elapsed (``Float64`` seconds, up to now for a task that runs)."""
    now = time.time()
    entries = [_readable({name: row.get(name) for name in TASK_COLUMNS}) for row in rows]
    for entry in entries:
        started, ended = entry["started"], entry["ended"]
        if isinstance(started, int | float) and not isinstance(started, bool):
            entry["elapsed"] = (ended if isinstance(ended, int | float) else now) - started
    df = pd.DataFrame(entries, columns=list(TASK_COLUMNS))
    for name in ("started", "ended"):
        df[name] = _local_times(df[name])
    df["elapsed"] = _seconds(list(df["elapsed"])).set_axis(df.index)
    for name in ("task_id", "tool", "status", "status_message"):
        df[name] = df[name].astype("string")
    return df
