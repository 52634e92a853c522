"""``session.map_tool(name, frame)``: one tool call per DataFrame row, a few at once, with a bar.

Also the progress bar every blocking call shows (:class:`ProgressBar`, tqdm.auto, made on the
first progress report). Written over :class:`MapSession`, what it needs of a session, so this
module never imports the session's (issue #27).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import anyio

from ..protocol._errors import McpError
from ..protocol._printable import printable

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
    rows: list[dict[str, Any]] = []
    for record in frame.to_dict(orient="records"):
        arguments = {renames.get(k, k): _plain(v) for k, v in record.items()}
        if parameters is not None:
            arguments = {k: v for k, v in arguments.items() if k in parameters}
        rows.append(arguments)
    bar = ProgressBar(f"{session.name}: {name} × {len(rows)}", total=len(rows)) if progress else None
    outcomes: list[tuple[Any, bool, str | None]] = [(None, False, None)] * len(rows)

    async def run_all() -> None:
        limiter = anyio.CapacityLimiter(concurrency)

        async def one(index: int, arguments: dict[str, Any]) -> None:
            async with limiter:
                try:
                    result = await session._call_tool(
                        name, arguments, {"timeout": timeout, "progress": _ignore}
                    )
                    error = result.text if result.is_error else None
                    outcomes[index] = (_unwrapped(result), result.is_error, error)
                except McpError as exc:
                    outcomes[index] = (None, True, str(exc))
                if bar is not None:
                    bar.advance()

        async with anyio.create_task_group() as tg:
            for index, arguments in enumerate(rows):
                tg.start_soon(one, index, arguments)

    try:
        session._run(run_all)
    finally:
        if bar is not None:
            bar.close()
    return pd.DataFrame(
        {
            "result": [o[0] for o in outcomes],
            "is_error": [o[1] for o in outcomes],
            "error": [o[2] for o in outcomes],
        },
        index=frame.index,
    )


class ProgressBar:
    """A tqdm.auto bar created on the first progress report (no bar for calls without progress)."""

    def __init__(self, description: str, total: int | None = None) -> None:
        self._description = description
        self._bar: Any = None
        self._total = total
        if total is not None:
            self._open(total)

    def _open(self, total: float | None) -> None:
        try:
            from tqdm.auto import tqdm
        except ImportError:
            return
        self._bar = tqdm(total=total, desc=self._description, leave=False)

    def update(self, progress: float, total: float | None, message: str | None) -> None:
        if self._bar is None:
            self._open(total)
            if self._bar is None:
                return
        if total is not None and self._bar.total != total:
            self._bar.total = total
        self._bar.n = progress
        if message:
            self._bar.set_postfix_str(printable(message[:60]), refresh=False)  # tqdm may draw on a terminal
        self._bar.refresh()

    def advance(self) -> None:
        if self._bar is not None:
            self._bar.update(1)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _unwrapped(result: ToolResult) -> Any:
    """The result's data; a ``{"result": value}`` wrapper (how SDK servers return non-objects) is opened."""
    data = result.data
    if isinstance(data, dict) and len(data) == 1 and "result" in data:
        return data["result"]
    return data


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
