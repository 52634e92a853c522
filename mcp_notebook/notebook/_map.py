"""``session.map_tool(name, frame)``: one tool call per DataFrame row, a few at once, with a bar.

``concurrency`` workers pull rows from one iterator, so memory is bounded by concurrency, not by
rows (issue #28). :class:`ProgressBar` (the bar every blocking call shows) lives in ``_progress``
and is re-exported here for old imports. Written over :class:`MapSession`, what it needs of a session, so this
module never imports the session's (issue #27).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import anyio

from ..display._shapes import unwrapped
from ..protocol._errors import McpError
from ._progress import ProgressBar

if TYPE_CHECKING:
    import pandas

    from ..client._results import Tool, ToolResult

__all__ = ["MapSession", "ProgressBar", "map_tool"]

_T = TypeVar("_T")


class MapSession(Protocol):
    """What :func:`map_tool` needs of a session."""

    name: str

    def _check_open(self) -> None: ...

    def list_tools(self, *, refresh: bool = False, include_app_only: bool = False) -> list[Tool]: ...

    def _run(self, fn: Callable[..., Awaitable[_T]], *args: Any) -> _T: ...

    async def _call_tool(
        self, name: str, arguments: Mapping[str, Any] | None, options: dict[str, Any]
    ) -> ToolResult: ...


def map_tool(
    session: MapSession,
    name: str,
    frame: pandas.DataFrame,
    *,
    concurrency: int = 8,
    columns: Mapping[str, str] | None = None,
    progress: bool = True,
    timeout: float | None = None,
) -> pandas.DataFrame:
    """:meth:`Session.map_tool <mcp_notebook.notebook.Session.map_tool>` over ``session``."""
    import pandas as pd

    if concurrency < 1:
        raise ValueError("concurrency must be >= 1")
    session._check_open()
    tool = next((t for t in session.list_tools() if t.name == name), None)
    parameters = set(tool.parameters) if tool is not None else None
    renames = dict(columns or {})
    keys = [renames.get(k, k) for k in frame.columns]
    count = len(frame)

    def arguments_of(values: tuple[Any, ...]) -> dict[str, Any]:
        arguments = {k: _plain(v) for k, v in zip(keys, values, strict=True)}
        if parameters is not None:
            arguments = {k: v for k, v in arguments.items() if k in parameters}
        return arguments

    # Rows are read lazily, one per free worker: memory grows with concurrency, not with rows.
    rows = enumerate(frame.itertuples(index=False, name=None))
    bar = ProgressBar(f"{session.name}: {name} × {count}", total=count) if progress else None
    outcomes: list[tuple[Any, bool, str | None]] = [(None, False, None)] * count

    async def worker() -> None:
        # The workers share one iterator; next() runs between awaits, so each row goes to one worker.
        for index, values in rows:
            try:
                result = await session._call_tool(
                    name, arguments_of(values), {"timeout": timeout, "progress": _ignore}
                )
                error = result.text if result.is_error else None
                outcomes[index] = (_unwrapped(result), result.is_error, error)
            except McpError as exc:
                outcomes[index] = (None, True, str(exc))
            if bar is not None:
                bar.advance()

    async def run_all() -> None:
        async with anyio.create_task_group() as tg:
            for _ in range(min(concurrency, count)):
                tg.start_soon(worker)

    try:
        session._run(run_all)
    finally:
        if bar is not None:
            bar.close()
    # Nullable dtypes and pd.NA for what is missing, as in every frame (issue #29).
    return pd.DataFrame(
        {
            "result": [pd.NA if o[0] is None else o[0] for o in outcomes],
            "is_error": pd.array([o[1] for o in outcomes], dtype="boolean"),
            "error": pd.array([o[2] for o in outcomes], dtype="string"),
        },
        index=frame.index,
    )


def _unwrapped(result: ToolResult) -> Any:
    """The result's data; a ``{"result": value}`` wrapper (how SDK servers return non-objects) is opened."""
    return unwrapped(result.data)  # the same reading of the wrapper as every picture of a result


def _ignore(progress: float, total: float | None, message: str | None) -> None:
    return None


def _plain(value: Any) -> Any:
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
