"""End-to-end: results drawn as people's servers answer them, in JupyterLab (issue #37; the
machinery is tests/browser/, see tests/test_browser.py).

A notebook calls tests/servers/pictures_server.py: a Markdown pipe table in a text block
(excel-mcp-polars), a plot behind structured data (jupyter-mcp-server: the PNG in an image block,
the structured value pointing at it, a printed DataFrame among its outputs) and a Markdown page with
a long table and fenced code (mcp-server-fetch). The DOM must hold a real table with the cells, a
visible image with a size, and a ``<pre>`` keeping the printed lines; screenshots in the light and
the dark theme are kept among the test's screenshots.
"""

from __future__ import annotations

import re
from contextlib import suppress
from typing import Any

from .browser.fixtures import (  # noqa: F401 (the fixtures: pytest finds them in the module)
    EXPECT_MS,
    OpenNotebook,
    browser_fixture,
    lab_fixture,
    notebook_fixture,
    playwright_fixture,
)
from .conftest import SERVERS
from .servers.pictures_server import PAGE_ROWS, PRINTED

with suppress(ImportError):  # without Playwright, the fixtures fail with the fix
    from playwright.sync_api import Locator, expect

SETUP = (
    "import sys\n"
    "import mcp_notebook\n"
    f"session = mcp_notebook.connect([sys.executable, {str(SERVERS / 'pictures_server.py')!r}])"
)
CELLS = [
    SETUP,
    "session.call_tool('polars_describe')",
    "session.call_tool('execute_cell')",
    "session.call_tool('fetch_page')",
]
# An element's drawn size and, for an image, whether it was decoded (its natural width).
SIZE_JS = "e => [e.getBoundingClientRect().width, e.getBoundingClientRect().height, e.naturalWidth || 0]"


def _exact(locator: Locator, text: str) -> Locator:
    return locator.filter(has_text=re.compile(rf"^\s*{re.escape(text)}\s*$"))


def _size(element: Locator) -> list[Any]:
    size: list[Any] = element.evaluate(SIZE_JS)
    return size


def test_tables_images_and_lines_are_drawn(notebook: OpenNotebook) -> None:
    page = notebook("pictures.ipynb", CELLS)
    page.run_all()

    markdown = page.output(1)
    expect(_exact(markdown.locator("table th"), "region")).to_be_visible(timeout=EXPECT_MS)
    expect(_exact(markdown.locator("table td"), "north")).to_be_visible(timeout=EXPECT_MS)
    expect(_exact(markdown.locator("table td"), "50")).to_be_visible(timeout=EXPECT_MS)
    expect(_exact(markdown.locator("table td"), "<script>alert(1)</script>")).to_be_visible(timeout=EXPECT_MS)
    assert "| north |" not in markdown.inner_text()

    cell = page.output(2)
    image = cell.locator(".mcpnb-images img").first
    expect(image).to_be_visible(timeout=EXPECT_MS)
    width, height, natural = _size(image)
    assert width > 0, (width, height)
    assert height > 0, (width, height)
    assert natural > 0, "the PNG was not decoded"
    table = cell.locator("table").first
    image_box, table_box = image.bounding_box(), table.bounding_box()
    assert image_box is not None
    assert table_box is not None
    assert image_box["y"] < table_box["y"]  # the plot above its data
    lines = cell.locator("pre.mcpnb-lines").first
    expect(lines).to_be_visible(timeout=EXPECT_MS)
    assert lines.inner_text().splitlines() == PRINTED.splitlines()
    _, pre_height, _ = _size(lines)
    font = float(lines.evaluate("e => parseFloat(getComputedStyle(e).fontSize)"))
    assert pre_height >= 3.5 * font, (pre_height, font)  # four lines tall (a line is at least its font)

    fetched = page.output(3)
    expect(fetched.locator("code.language-python")).to_be_visible(timeout=EXPECT_MS)
    expect(fetched).to_contain_text(f"{PAGE_ROWS - 20} more rows", timeout=EXPECT_MS)

    page.keep(markdown, "markdown-table.png", gallery=False)
    page.keep(cell, "plot-first.png", gallery=False)
    page.keep(fetched, "markdown-page.png", gallery=False)
    page.page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})"
    )
    expect(page.page.locator("body[data-jp-theme-light='false']")).to_have_count(1, timeout=EXPECT_MS)
    page.keep(markdown, "markdown-table-dark.png", gallery=False)
    page.keep(cell, "plot-first-dark.png", gallery=False)
