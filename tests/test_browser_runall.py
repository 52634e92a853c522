"""Run All of each notebook in JupyterLab leaves its widgets drawn and live (issue #29).

Each notebook in notebooks/ is copied into a private JupyterLab (tests/browser/lab.py), opened in
headless Chromium and run with *Run All*, as a reader would. Afterwards every widget output is
drawn (no "Error displaying widget", no empty widget view), no panel shows a "closed" badge (but
for notebook 08's one server whose command does not exist, on purpose), and each headline widget
is there: 02's explorer with its tools, 04's status card, 07's tasks panel, 08's board, 09's App,
10's dashboard following the agent's calls.
Screenshots of each run go where tests/test_browser.py puts them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest

from .browser.fixtures import (  # noqa: F401 (the fixtures: pytest finds them in the module)
    EXPECT_MS,
    browser_fixture,
    lab_fixture,
    playwright_fixture,
)
from .browser.lab import KERNEL_NAME, PROCESS_GRACE, Lab, kill_leftovers
from .browser.notebook import NotebookPage
from .notebook_runs import NOTEBOOKS

nbformat = pytest.importorskip("nbformat")

with suppress(ImportError):
    from playwright.sync_api import Browser, expect

#: Per notebook: the headline widget's CSS class and how many of its "closed" badges are expected.
HEADLINE: dict[str, tuple[str | None, int]] = {
    "01-quickstart.ipynb": (None, 0),
    "02-tool-explorer.ipynb": ("mcpnb-explorer", 0),
    "03-dataframes.ipynb": (None, 0),
    "04-live-notifications.ipynb": ("mcpnb-status", 0),
    "05-human-in-the-loop.ipynb": (None, 0),
    "06-remote-http.ipynb": (None, 0),
    "07-tasks.ipynb": ("mcpnb-tasks", 0),
    # the server whose command does not exist: its row in the group's card and in the board
    "08-many-servers.ipynb": ("mcpnb-group-status", 2),
    "09-mcp-apps.ipynb": ("mcpnb-app-view", 0),
    "10-agents.ipynb": ("mcpnb-dashboard", 0),
}


class _Pages(list[NotebookPage]):
    """The pages a test opened, and where its screenshots go."""

    shots = ""


@pytest.fixture(name="opened")
def opened_fixture(lab: Lab, browser: Browser, tmp_path: Path) -> Iterator[_Pages]:
    keep = os.environ.get("MCPNB_TEST_OUTPUT")
    shots = Path(keep) / "browser" / f"runall-{tmp_path.name}" if keep else tmp_path / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    print(f"screenshots: {shots}")
    before = {p.pid for p in lab.descendants()}
    pages = _Pages()
    pages.shots = str(shots)
    try:
        yield pages
    finally:
        started = [p for p in lab.descendants() if p.pid not in before]
        try:
            for page in pages:
                page.close()
            lab.stop_kernels()
        finally:
            kill_leftovers(started, "the notebook's kernel or its servers", PROCESS_GRACE)


def _copy(lab: Lab, path: Path) -> str:
    notebook = nbformat.read(path, as_version=4)
    notebook.metadata["kernelspec"] = {"name": KERNEL_NAME, "display_name": KERNEL_NAME, "language": "python"}
    nbformat.write(notebook, lab.root_dir / path.name)
    return path.name


@pytest.mark.parametrize("name", sorted(HEADLINE))
def test_run_all_leaves_the_widgets_drawn_and_live(
    name: str, lab: Lab, browser: Browser, opened: _Pages
) -> None:
    path = next(p for p in NOTEBOOKS if p.name == name)
    shots = Path(opened.shots)
    page = NotebookPage(lab, browser, _copy(lab, path), shots)
    opened.append(page)
    page.open()
    page.run_all(timeout=240)
    notebook = page.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook")
    headline, may_close = HEADLINE[name]
    try:
        if headline is not None:
            widget = notebook.locator(f".{headline}").first
            expect(widget).to_be_visible(timeout=EXPECT_MS)
            page.keep(widget, f"{path.stem}-headline.png", gallery=False)
        expect(notebook.get_by_text("Error displaying widget")).to_have_count(0)
        closed = notebook.locator(".mcpnb-badge", has_text="closed")
        assert closed.count() <= may_close, f"{name}: {closed.count()} 'closed' badges after Run All"
        if name == "02-tool-explorer.ipynb":
            expect(notebook.locator(".mcpnb-explorer .mcpnb-tool").first).to_be_visible(timeout=EXPECT_MS)
            assert notebook.locator(".mcpnb-explorer .mcpnb-tool").count() >= 14
        if name == "08-many-servers.ipynb":
            assert notebook.locator(".mcpnb-group-status .mcpnb-badge", has_text="ready").count() >= 3
        if name == "09-mcp-apps.ipynb":
            _check_apps(notebook)
        if name == "10-agents.ipynb":  # the dashboard followed the agent's three calls
            history = notebook.locator(".mcpnb-dashboard .mcpnb-history-entry")
            expect(history).to_have_count(3, timeout=EXPECT_MS)
            expect(history.filter(has_text="sales_records")).to_have_count(1)
    finally:
        page.page.screenshot(path=str(shots / f"{path.stem}-after-run-all.png"), full_page=True)


def _check_apps(notebook: Any) -> None:
    """09: both sales boards (``session.app`` and ``%mcp app``, the notebook's first two App views;
    the published examples follow) drew and their own first ``region_detail`` call came back with
    data. A Python stand-in's answers once reached the View under the View's own request ids."""
    frames = notebook.locator(".mcpnb-app-view iframe")
    expect(frames.nth(1)).to_be_visible(timeout=EXPECT_MS)
    for index in range(2):
        view = notebook.frame_locator(".mcpnb-app-view iframe").nth(index)
        expect(view.locator("#detail")).to_contain_text(" sales (", timeout=EXPECT_MS)
        expect(view.get_by_text("Could not load")).to_have_count(0)
