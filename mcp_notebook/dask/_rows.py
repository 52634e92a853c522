"""Rows to tool calls, ``concurrency`` at a time: the one bounded map loop.

Both maps use it: ``Session.map_tool`` (notebook/_map.py, one kernel) and each partition of
:func:`mcp_notebook.dask.map_tool` (one worker). It lives here, in the dask layer, because that
layer sits between client/ and notebook/ (pyproject.toml's layers contract): notebook/ may import it,
and a partition running on a worker needs it without the notebook layer (traitlets, widgets).
Nothing here imports dask, pandas or distributed at module level.

``concurrency`` slots pull rows from one shared iterator, so memory is bounded by concurrency,
not by rows (issue #28); each outcome is written at its row's position.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

import anyio

from ..display._shapes import unwrapped
from ..protocol._errors import McpError

if TYPE_CHECKING:
    from ..client._results import ToolResult

__all__ = ["Outcome", "call_rows", "outcome_of", "plain"]

#: One row's answer: (result, is_error, error text or None), the three output columns.
Outcome = tuple[Any, bool, str | None]


async def call_rows(
    call: Callable[[int, tuple[Any, ...]], Awaitable[Outcome]],
    rows: Iterable[tuple[int, tuple[Any, ...]]],
    count: int,
    concurrency: int,
) -> list[Outcome]:
    """``call(position, values)`` for every row, at most ``concurrency`` at once; outcomes in order."""
    outcomes: list[Outcome] = [(None, False, None)] * count
    iterator = iter(rows)

    async def slot() -> None:
        # The slots share one iterator; next() runs between awaits, so each row goes to one slot.
        for index, values in iterator:
            outcomes[index] = await call(index, values)

    async with anyio.create_task_group() as tg:
        for _ in range(min(concurrency, count)):
            tg.start_soon(slot)
    return outcomes


async def outcome_of(call: Awaitable[ToolResult]) -> Outcome:
    """A call's outcome; an McpError (timeout, lost connection, invalid arguments) is an error row."""
    try:
        result = await call
    except McpError as exc:
        return (None, True, str(exc))
    # the same reading of the wrapper as every picture of a result
    return (unwrapped(result.data), result.is_error, result.text if result.is_error else None)


def plain(value: Any) -> Any:
    """numpy scalars and pandas NA as plain JSON values."""
    item = getattr(value, "item", None)
    if callable(item):
        with contextlib.suppress(ValueError, TypeError):
            value = item()
    try:
        import pandas as pd

        if value is pd.NA or (isinstance(value, float) and value != value):
            return None
    except ImportError:
        pass
    return value


def arguments_maker(
    columns: Iterable[str], renames: dict[str, str], parameters: set[str] | None
) -> Callable[[tuple[Any, ...]], dict[str, Any]]:
    """A row's values as the tool's arguments: columns renamed, those the tool does not take dropped
    (all kept when the tool's parameters are unknown)."""
    keys = [renames.get(k, k) for k in columns]

    def arguments_of(values: tuple[Any, ...]) -> dict[str, Any]:
        arguments = {k: plain(v) for k, v in zip(keys, values, strict=True)}
        if parameters is not None:
            arguments = {k: v for k, v in arguments.items() if k in parameters}
        return arguments

    return arguments_of
