"""How a frame of ours reads in a notebook: rows on one line, or a column shown whole.

Why: pandas draws every frame the same way, each cell cut at ``display.max_colwidth`` (50
characters) and free to wrap in a column as narrow as the page allows. For two of our frames
that hid what the user came for (issue #38): ``%mcp servers`` rows wrapped into 4-5 lines (a
server's command in a narrow column), and ``map_tool``'s ``error`` column was cut before the
reason ("arguments for tool 'sales_records' do not matc..."). :func:`readable_frame` returns the
same data as a DataFrame whose notebook HTML says so: ``one_line`` keeps every cell on one line
(the table scrolls sideways instead), ``whole`` shows those columns' text whole (up to
:data:`WHOLE_CHARACTERS`), wrapping in their cell. Everything else is pandas' own: the values,
the dtypes, the escaping (``to_html`` escapes every cell), the row and column limits; anything
derived from it (a slice, a join) is a plain DataFrame.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["WHOLE_CHARACTERS", "readable_frame"]

#: The most of a ``whole`` column's text a cell shows (pandas' own limit for the others).
WHOLE_CHARACTERS = 2000
_ids = itertools.count(1)


def _cut(limit: int | None) -> Any:
    def cut(value: Any) -> str:
        text = str(value)
        return text if limit is None or len(text) <= limit else text[: max(limit - 3, 0)] + "..."

    return cut


@functools.cache
def _frame_class() -> type[pd.DataFrame]:
    """The DataFrame subclass, made on first use (this module does not import pandas)."""
    import pandas as pd

    class ReadableFrame(pd.DataFrame):  # type: ignore[misc]  # pandas is untyped here
        _metadata: ClassVar[list[str]] = ["_mcpnb_one_line", "_mcpnb_whole"]
        _mcpnb_one_line = False
        _mcpnb_whole: tuple[str, ...] = ()

        @property
        def _constructor(self) -> Any:
            return pd.DataFrame  # what is derived from it reads as any frame

        def __reduce__(self) -> Any:
            # pickled (to_pickle, multiprocessing, a cluster) as the plain frame it holds: this
            # class, made inside a function, cannot be found by name where it is unpickled
            return (pd.DataFrame, (pd.DataFrame(self),))

        def _repr_html_(self) -> str | None:
            plain = pd.DataFrame(self)
            whole = [name for name in self._mcpnb_whole if name in plain.columns]
            if not whole and not self._mcpnb_one_line:
                return str(plain._repr_html_())
            limit = pd.get_option("display.max_colwidth")
            text_columns = [
                name for name in plain.columns if str(plain[name].dtype) in ("object", "string", "str")
            ]
            formatters = {name: _cut(WHOLE_CHARACTERS if name in whole else limit) for name in text_columns}
            with pd.option_context("display.max_colwidth", None):
                html = plain.to_html(
                    notebook=True,
                    formatters=formatters,
                    max_rows=pd.get_option("display.max_rows"),
                    max_cols=pd.get_option("display.max_columns"),
                    show_dimensions=pd.get_option("display.show_dimensions"),
                )
            if not self._mcpnb_one_line:
                return str(html)
            scope = f"mcpnb-one-line-{next(_ids)}"
            style = f"<style>.{scope} td, .{scope} th {{ white-space: nowrap; }}</style>"
            return f'<div class="{scope}" style="overflow-x:auto">{style}{html}</div>'

    return ReadableFrame


def readable_frame(frame: pd.DataFrame, *, one_line: bool = False, whole: Iterable[str] = ()) -> pd.DataFrame:
    """``frame``'s data, drawn in a notebook with every row on one line (``one_line``) and the
    ``whole`` columns' text shown whole."""
    shown = _frame_class()(frame)
    shown._mcpnb_one_line = one_line
    shown._mcpnb_whole = tuple(whole)
    return shown
