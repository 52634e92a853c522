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
from tests.servers.pictures_server import HELP_LINES, NOISE, PAGE_ROWS, PLOT, PRINTED

pytest.importorskip("ipywidgets")

import ipywidgets as W

from mcp_notebook.widgets import explorer

from .widget_helpers import markup, walk

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
    # not lines of pipes (the server's text stays one click away, in the raw section)
    assert "| north |" not in html.split('class="mcpnb-raw"')[0]
    assert ESCAPED_SCRIPT in html  # a server's tag in a cell is text
    assert "<script" not in html


def test_markdown_tables_are_drawn_as_tables_in_the_repr_and_the_explorer(session: Any) -> None:
    polars = session.call_tool("polars_describe")
    _assert_polars_table(_html(polars))
    assert re.search(r"^north +50$", _text(polars), re.M)  # the text form: the table, as data

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


# --- 2. images first ---------------------------------------------------------------------------------


def test_a_plot_beside_structured_data_is_shown_first_and_its_pointer_shows_it(session: Any) -> None:
    result = session.call_tool("execute_cell")
    html = _html(result)
    image = html.index(f'<img src="data:image/png;base64,{PLOT}"')
    assert image < html.index("<table") < html.index("<details")  # above the data, never folded away
    # the structured value that points at the image block shows it small, named
    pointer = html.index("image 1: image/png, about")
    assert html.index("<img", image + 1) < pointer < html.index("<details")
    assert html.count(PLOT) == 2  # the picture and the thumbnail; the folded blocks only name it
    assert "(shown above)" in html[html.index('<details class="mcpnb-content"') :]
    assert _text(result).splitlines()[0].startswith("[image 1: image/png, about ")

    ex = explorer(session)
    try:
        _called(ex, "execute_cell")
        view = ex.result_box.children[0]
        first = view.children[0]
        assert isinstance(first, W.Image), view.children  # first, not inside the folded content
        assert bytes(first.value).startswith(b"\x89PNG")
        folded = [w for w in walk(view) if isinstance(w, W.Accordion)]
        assert folded
        assert not any(isinstance(w, W.Image) for f in folded for w in walk(f))
        # the snapshot a saved notebook keeps: a thumbnail, never nothing
        # (the image itself: the table's thumbnail is in it whatever happens to the image widget)
        assert f'<img class="mcpnb-static-image" src="data:image/png;base64,{PLOT}"' in ex.snapshot_html()
    finally:
        ex.close()


def test_a_large_plot_is_named_where_it_is_not_copied(session: Any) -> None:
    html = _html(session.call_tool("execute_noisy_cell"))
    assert html.count(NOISE) == 1  # drawn once, above the table; the pointer names it
    assert re.search(r"image 1: image/png, about [\d,]+ bytes, shown above", html)

    ex = explorer(session)
    try:
        _called(ex, "execute_noisy_cell")
        snapshot = ex.snapshot_html()
        assert NOISE not in snapshot
        assert re.search(r"\[image image/png, [\d,]+ bytes\]", snapshot), snapshot[:2000]
    finally:
        ex.close()


# --- 3. line breaks in structured values --------------------------------------------------------------


def test_line_breaks_in_structured_strings_are_kept_in_html_and_text(session: Any) -> None:
    result = session.call_tool("execute_cell")
    html = _html(result)
    # "result" (a string) and "outputs" (a list of strings) keep the printed DataFrame's lines
    kept = re.findall(r'<pre class="mcpnb-lines"[^>]*>([^<]*)</pre>', html)
    assert kept.count(PRINTED) == 2, kept
    table = html[: html.index("<details")]  # the raw JSON, one click away, is JSON
    assert "\\n0   north" not in table  # no JSON escapes in place of line breaks

    lines = _text(result).splitlines()
    for printed in PRINTED.splitlines():
        shown = [line.removesuffix(" +").rstrip() for line in lines]  # " +": the cell goes on below
        assert any(line.endswith(printed.rstrip()) for line in shown), (printed, lines)


def test_a_live_frame_keeps_description_lines_and_cuts_tall_ones(session: Any) -> None:
    frame = session.live_frame("tools")
    try:
        html = frame._repr_html_()
    finally:
        frame.stop()
    assert "\n".join(HELP_LINES[:6]) in html
    assert "\\n" not in html  # pandas' literal \n
    assert HELP_LINES[6] not in html
    assert f"… ({len(HELP_LINES) - 6} more lines)" in html
