"""Saved notebooks read well without a kernel: GitHub, nbviewer, nbconvert, a terminal.

Every notebook in notebooks/ is executed (once, shared with tests/test_notebooks.py), its widget
state dropped (what a reader without the widget manager has), then converted with nbconvert to HTML
(which then renders each output's ``text/html``, as GitHub and nbviewer do) and read as plain text
(each output's ``text/plain``, what a terminal IPython prints). Neither may show an ipywidgets repr
(``StatusWidget(children=(HTML(value=...``), and each shows what the notebook is about: the
server's name and state, the tools, the results' values.
"""

from __future__ import annotations

import copy
import html
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

nbformat = pytest.importorskip("nbformat")
nbconvert = pytest.importorskip("nbconvert")

from .notebook_runs import NOTEBOOKS, executed  # noqa: E402

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

#: What an ipywidgets repr looks like: ``VBox(children=(...``, ``HTML(value='...``, ``Label(value=``.
WIDGET_REPR = re.compile(r"\b[A-Z][A-Za-z]*\((?:children|value|layout|description)=")
VIEW = "application/vnd.jupyter.widget-view+json"

#: Per notebook: what its HTML and its text must show (beyond "no widget repr").
EXPECTED: dict[str, list[str]] = {
    "01-quickstart.ipynb": ["mcp-notebook-demo", "ready", "sales_records", "north"],
    "02-tool-explorer.ipynb": ["<MCP explorer: mcp-notebook-demo, 14 tools", "sales_records", "slow_count"],
    "04-live-notifications.ipynb": ["<MCP "],
    "07-tasks.ipynb": ["<MCP tasks: "],
    "08-many-servers.ipynb": ["<MCP servers: "],
    "09-mcp-apps.ipynb": ["<MCP App sales_board: ready", "ui://sales-board/board.html"],
    "10-agents.ipynb": ["<MCP status: mcp-notebook-demo", "pydantic-ai", "36 units"],
}


def _without_widget_state(notebook: Any) -> Any:
    stripped = copy.deepcopy(notebook)
    stripped.metadata.pop("widgets", None)
    return stripped


def _plain_text(notebook: Any) -> str:
    """What a terminal shows: each output's text/plain, or a stream's text."""
    parts = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                parts.append(output.get("text", ""))
            elif "data" in output:
                parts.append(output["data"].get("text/plain", ""))
    return "\n".join(parts)


class _OutputText(HTMLParser):
    """The text inside nbconvert's output areas (``jp-OutputArea-output``), tags dropped."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.depth = 0  # > 0 inside an output area (counting the divs opened in it)
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "div":
            return
        if self.depth:
            self.depth += 1
        elif "jp-OutputArea-output" in (dict(attrs).get("class") or "").split():
            self.depth = 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "div" and self.depth:
            self.depth -= 1

    def handle_data(self, data: str) -> None:
        if self.depth:
            self.parts.append(data)


def _html_text(page: str) -> str:
    """The visible text of nbconvert's page, outputs only."""
    parser = _OutputText()
    parser.feed(page)
    return " ".join(parser.parts)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_reads_without_widgets(path: Path) -> None:
    run = executed(path)
    if run.failure is not None:
        pytest.skip("the notebook did not run (tests/test_notebooks.py says why)")
    notebook = _without_widget_state(run.notebook)
    widgets_shown = sum(
        VIEW in output.get("data", {}) for cell in notebook.cells for output in cell.get("outputs", [])
    )
    for cell in notebook.cells:  # each of our panels carries a static snapshot (tqdm's bars: text)
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if VIEW in data and data.get("text/plain", "").startswith("<MCP "):
                assert "text/html" in data, data.get("text/plain")

    page, _ = nbconvert.HTMLExporter().from_notebook_node(notebook)
    shown = _html_text(page)
    text = _plain_text(notebook)
    for where, content in (("HTML", shown), ("text", text)):
        found = WIDGET_REPR.search(content)
        assert found is None, f"{path.name}: a widget repr in the {where}: {content[found.start() :][:200]}"
    assert "Error displaying widget" not in page
    assert "<script>alert" not in page
    for expected in EXPECTED.get(path.name, []):
        in_text = expected in text
        in_html = expected in shown or html.escape(expected) in page
        assert in_text or in_html, f"{path.name}: {expected!r} is in neither the HTML nor the text"
    if widgets_shown and "<MCP " in text:
        assert "mcpnb-static" in page, f"{path.name}: its widgets left no static snapshot in the HTML"


def test_status_card_and_explorer_read_in_the_html() -> None:
    """The quickstart's card says ready and names the server; the explorer lists its tools."""
    first = executed(NOTEBOOKS[0])
    explorer_run = executed(next(p for p in NOTEBOOKS if p.name.startswith("02-")))
    if first.failure or explorer_run.failure:
        pytest.skip("a notebook did not run (tests/test_notebooks.py says why)")
    page, _ = nbconvert.HTMLExporter().from_notebook_node(_without_widget_state(first.notebook))
    shown = _html_text(page)
    assert "mcp-notebook-demo" in shown
    assert "ready" in shown
    page, _ = nbconvert.HTMLExporter().from_notebook_node(_without_widget_state(explorer_run.notebook))
    shown = _html_text(page)
    for tool in ("add", "sales_records", "slow_count"):
        assert tool in shown
    assert "5" in shown  # add(2, 3)'s result
