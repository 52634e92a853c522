"""How results are drawn, against a server that answers as the ones people use do (issue #37).

``tests/servers/pictures_server.py`` answers as excel-mcp-polars and mcp-server-fetch (Markdown
pipe tables in a text block) and jupyter-mcp-server (a cell's structured result whose ``images``
points at the PNG sent beside it, and a printed DataFrame among its ``outputs``) do. Each answer is
read where a user reads it: the result's HTML and text reprs, the explorer (its live view and the
snapshot a saved notebook keeps) and ``session.live_frame("tools")``.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

import mcp_notebook
from tests.conftest import python_server
from tests.servers.pictures_server import PAGE_ROWS

pytest.importorskip("ipywidgets")

from mcp_notebook.widgets import explorer

from .widget_helpers import markup

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

SERVER = python_server("pictures_server.py")
ESCAPED_SCRIPT = "&lt;script&gt;alert(1)&lt;/script&gt;"


@pytest.fixture
def session() -> Any:
    with mcp_notebook.connect(SERVER, show_progress=False) as opened:
        yield opened


def _html(result: Any) -> str:
    html: str = result._repr_mimebundle_()["text/html"]
    return html


def _text(result: Any) -> str:
    text: str = result._repr_mimebundle_()["text/plain"]
    return text


def _cell(tag: str, text: str) -> re.Pattern[str]:
    """A table cell holding exactly ``text`` (whatever its attributes)."""
    return re.compile(rf"<{tag}\b[^>]*>{re.escape(text)}</{tag}>")


def _called(ex: Any, name: str) -> Any:
    ex.select(name)
    assert ex.call() is not None, ex.validation.value
    return ex.wait(30)


# --- 1. Markdown: GitHub's pipe tables, fenced code --------------------------------------------------


def _assert_polars_table(html: str) -> None:
    assert _cell("th", "region").search(html), html
    assert _cell("td", "north").search(html), html
    assert _cell("td", "50").search(html), html
    assert "| north |" not in html  # not lines of pipes
    assert ESCAPED_SCRIPT in html  # a server's tag in a cell is text
    assert "<script" not in html


def test_markdown_tables_are_drawn_as_tables_in_the_repr_and_the_explorer(session: Any) -> None:
    polars = session.call_tool("polars_describe")
    _assert_polars_table(_html(polars))
    assert "| north | 50 |" in _text(polars)  # the text form reads as the server wrote it

    page = _html(session.call_tool("fetch_page"))
    assert "<h1>Sales report</h1>" in page
    assert f"regions by units sold. a tag in prose stays text: {ESCAPED_SCRIPT}" in page.lower()
    assert "<script" not in page
    assert '<code class="language-python">' in page  # fenced code
    # a long table is cut as big results are: its first rows and the rest counted
    shown = mcp_notebook.display_options.html_rows
    assert _cell("td", f"region {shown - 1}").search(page)
    assert not _cell("td", f"region {shown}").search(page)
    assert f"… {PAGE_ROWS - shown} more rows" in page
    assert _cell("td", str((shown - 1) * 10)).search(page)

    ex = explorer(session)
    try:
        _called(ex, "polars_describe")
        _assert_polars_table(markup(ex.result_box))
        _assert_polars_table(ex.snapshot_html())  # what a saved notebook shows without widgets
    finally:
        ex.close()
