"""Saved notebooks, converted to HTML with nbconvert and opened offline, show the panels' snapshots.

Notebooks 02 (the explorer) and 07 (the tasks panel) are executed with nbclient (once, shared with
tests/test_notebooks.py), converted with nbconvert's HTML exporter and opened in headless Chromium
(Debian's, through Playwright) with every request that is not a ``file://`` aborted: no CDN, no
network. Each panel's ``text/html`` snapshot must be visible there, in two forms of the notebook:

- as JupyterLab saves it (by default no widget state): nbconvert renders each output's HTML;
- as nbclient and ``jupyter nbconvert --execute`` write it, with the widget state stored, converted
  the way the README says (``--ClearMetadataPreprocessor.enabled=True``). Converted as it is, such a
  notebook shows nbconvert's widget views instead, whose scripts come from a CDN: offline they stay
  blank (nbconvert prefers a widget view whose model is in the stored state over any other output),
  which the README says.

The stored state itself stays small: every widget model a notebook ever opened is kept in it, so
a panel must be one model (issue #38: each panel is one anywidget whose controls are virtual,
mcp_notebook/widgets/_ui; executed 02 stores the explorer's anywidget and the shared Layout).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest

from .browser.fixtures import browser_fixture, playwright_fixture  # noqa: F401 (the fixtures)
from .notebook_runs import NOTEBOOKS, executed

nbformat = pytest.importorskip("nbformat")
nbconvert = pytest.importorskip("nbconvert")

with suppress(ImportError):  # without Playwright, the fixtures fail with the fix
    from playwright.sync_api import Browser, Page, Route, expect

STATE = "application/vnd.jupyter.widget-state+json"
EXPECT_MS = 15_000

#: Per notebook: texts that must be visible offline (a tool in the tools table, a result's value,
#: a task row), each inside an output area.
VISIBLE: dict[str, list[str]] = {
    "02-tool-explorer.ipynb": ["MCP tools", "Sales records", "slow_count", "gadget", "Counted to 4"],
    "07-tasks.ipynb": ["Tasks · mcp-notebook-demo", "build_report", "working", "A snapshot of the live"],
}

#: Executed notebook 02's stored widget state, at most (issue #38's target). Measured with
#: ``python -m benchmarks.saved_state``: 163 KB in 224 models before #38 (issue #29: 759 KB in 671
#: before that); 3.2 KB in 2 models with the panels as one anywidget each.
MAX_STATE_BYTES = 30_000


def _path(name: str) -> Path:
    return next(p for p in NOTEBOOKS if p.name == name)


def _run(name: str) -> Any:
    run = executed(_path(name))
    if run.failure is not None:
        pytest.fail(run.failure, pytrace=False)
    return run.notebook


def _html(notebook: Any, *, clear_metadata: bool) -> str:
    exporter = nbconvert.HTMLExporter()
    if clear_metadata:  # the README's command: --ClearMetadataPreprocessor.enabled=True
        clear = nbconvert.preprocessors.ClearMetadataPreprocessor(enabled=True)
        exporter.register_preprocessor(clear, enabled=True)
    body, _ = exporter.from_notebook_node(copy.deepcopy(notebook))
    return str(body)


@pytest.fixture(name="offline")
def offline_fixture(browser: Browser) -> Iterator[Page]:
    """A page that may load ``file://`` only: every other request is aborted."""
    context = browser.new_context()
    blocked: list[str] = []

    def guard(route: Route) -> None:
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    context.route("**/*", guard)
    try:
        yield context.new_page()
    finally:
        context.close()


def _open(page: Page, html: str, where: Path) -> Page:
    where.write_text(html, encoding="utf-8")
    page.goto(where.as_uri())
    return page


def _check(page: Page, name: str, shots: Path) -> None:
    outputs = page.locator(".jp-OutputArea-output")
    try:
        for text in VISIBLE[name]:
            expect(outputs.filter(has_text=text).first).to_be_visible(timeout=EXPECT_MS)
    finally:
        page.screenshot(path=str(shots / f"{name}.png"), full_page=True)


@pytest.mark.parametrize("name", sorted(VISIBLE))
def test_snapshots_show_offline_as_jupyterlab_saves(name: str, offline: Page, tmp_path: Path) -> None:
    notebook = copy.deepcopy(_run(name))
    notebook.metadata.pop("widgets", None)  # JupyterLab's default: no widget state saved
    page = _open(offline, _html(notebook, clear_metadata=False), tmp_path / "saved.html")
    _check(page, name, tmp_path)


@pytest.mark.parametrize("name", sorted(VISIBLE))
def test_snapshots_show_offline_with_stored_state(name: str, offline: Page, tmp_path: Path) -> None:
    notebook = _run(name)
    assert STATE in notebook.metadata.get("widgets", {}), "nbclient stored no widget state"
    page = _open(offline, _html(notebook, clear_metadata=True), tmp_path / "executed.html")
    _check(page, name, tmp_path)


def test_stored_widget_state_stays_small() -> None:
    notebook = _run("02-tool-explorer.ipynb")
    stored = notebook.metadata["widgets"][STATE]["state"]
    size = len(json.dumps(notebook.metadata["widgets"]))
    assert size <= MAX_STATE_BYTES, f"executed 02 stores {size} bytes of widget state ({len(stored)} models)"
