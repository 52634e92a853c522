"""``session.map_tool(name, frame)``: one tool call per DataFrame row, a few at once, with a bar.

The row loop is :func:`mcp_notebook.dask._rows.call_rows`, shared with the cluster map (the dask
layer sits below this one): ``concurrency`` slots pull rows from one iterator, so memory is bounded
by concurrency, not by rows (issue #28). With ``cluster=`` (a ``distributed.Client``) or a dask
DataFrame, the rows run on a Dask cluster instead, through :func:`mcp_notebook.dask.map_tool`,
against this session's own server definition (imported only then: dask stays an optional extra).
:class:`ProgressBar` (the bar every blocking call shows) lives in ``_progress`` and is re-exported
here for old imports. Written over :class:`MapSession`, what it needs of a session, so this module
never imports the session's (issue #27).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ..dask._rows import Outcome, arguments_maker, call_rows, outcome_of
from ..display._dataframes import exact_values
from ..protocol._errors import McpError
from ._frame_views import readable_frame
from ._progress import ProgressBar

if TYPE_CHECKING:
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
    frame: Any,
    *,
    concurrency: int = 8,
    columns: Mapping[str, str] | None = None,
    progress: bool = True,
    timeout: float | None = None,
    cluster: Any = None,
) -> Any:
    """:meth:`Session.map_tool <mcp_notebook.notebook.Session.map_tool>` over ``session``."""
    import pandas as pd

    if concurrency < 1:
        raise ValueError("concurrency must be >= 1")
    session._check_open()
    if cluster is not None or type(frame).__module__.startswith("dask."):
        return _on_cluster(session, name, frame, concurrency, columns, progress, timeout, cluster)
    tool = next((t for t in session.list_tools() if t.name == name), None)
    arguments_of = arguments_maker(
        frame.columns, dict(columns or {}), set(tool.parameters) if tool is not None else None
    )
    count = len(frame)
    bar = ProgressBar(f"{session.name}: {name} × {count}", total=count) if progress else None

    async def one(index: int, values: tuple[Any, ...]) -> Outcome:
        options = {"timeout": timeout, "progress": _ignore}
        outcome = await outcome_of(session._call_tool(name, arguments_of(values), options))
        if bar is not None:
            bar.advance()
        return outcome

    async def run_all() -> list[Outcome]:
        # Rows are read lazily, one per free slot: memory grows with concurrency, not with rows.
        return await call_rows(one, enumerate(frame.itertuples(index=False, name=None)), count, concurrency)

    try:
        outcomes = session._run(run_all)
    finally:
        if bar is not None:
            bar.close()
    # Nullable dtypes and pd.NA for what is missing, as in every frame (issue #29); integers stay
    # exact, never a float64 that rounds past 2**53, by the frames' own rule (issue #35).
    results = [o[0] for o in outcomes]
    exact = exact_values(results)
    # drawn with each error whole: pandas cut it at 50 characters, before the reason (issue #38)
    calls = pd.DataFrame(
        {
            "result": exact if exact is not None else [pd.NA if r is None else r for r in results],
            "is_error": pd.array([o[1] for o in outcomes], dtype="boolean"),
            "error": pd.array([o[2] for o in outcomes], dtype="string"),
        },
        index=frame.index,
    )
    return readable_frame(calls, whole=("error",))


def _on_cluster(
    session: MapSession,
    name: str,
    frame: Any,
    concurrency: int,
    columns: Mapping[str, str] | None,
    progress: bool,
    timeout: float | None,
    cluster: Any,
) -> Any:
    """The rows on a Dask cluster, against the session's server definition: a dask DataFrame in
    gives a dask DataFrame out (persisted on the workers), a pandas one a pandas one."""
    from ..dask._map import map_tool as map_on_cluster
    from ..dask._progress import run_with_progress

    definition = getattr(session, "_definition", None)
    if definition is None:
        raise McpError("invalid", f"{session.name}: this session has no server definition for a cluster")
    if cluster is None:
        import distributed

        cluster = distributed.default_client()
    target, options = definition
    lazy = map_on_cluster(
        target,
        name,
        frame,
        columns=columns,
        concurrency=concurrency,
        timeout=timeout,
        client=cluster,
        **options,
    )
    total = None if type(frame).__module__.startswith("dask.") else len(frame)
    bar = ProgressBar(f"{session.name}: {name} on the cluster", total=total) if progress else None

    def rows_done(done: int) -> None:
        if bar is not None:
            bar.update(done, total, None)

    try:
        return run_with_progress(lazy, cluster, rows_done, keep_on_cluster=total is None)
    finally:
        if bar is not None:
            bar.close()


def _ignore(progress: float, total: float | None, message: str | None) -> None:
    return None
