"""The browser tests' pytest fixtures and DOM helpers, shared by every ``tests/test_browser*.py``.

A test module imports the fixtures (``from .browser.fixtures import notebook_fixture, ...``): pytest
finds fixtures in the module's namespace under their registered names (``notebook``, ``lab``...), and
an explicit import keeps them out of the root conftest, which every other test would load too. ``lab`` and
``playwright`` are module-scoped, so each module starts one JupyterLab and one Playwright driver.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Iterator
from contextlib import suppress
from pathlib import Path

import pytest

from .lab import PROCESS_GRACE, Lab, kill_leftovers, running_lab
from .notebook import ACTION_TIMEOUT, CHROMIUM_ARGS, NotebookPage, chromium, write_notebook

with suppress(ImportError):  # without Playwright, chromium() fails with the fix
    from playwright.sync_api import Browser, Locator, Playwright, sync_playwright

__all__ = [
    "CONNECT",
    "DEMO_SETUP",
    "EXPECT_MS",
    "OpenNotebook",
    "browser_fixture",
    "field",
    "lab_fixture",
    "notebook_fixture",
    "playwright_fixture",
    "tool_entry",
]

EXPECT_MS = ACTION_TIMEOUT * 1000

# A cell's first lines for a session on the demo server. The kernel imports the checkout under test
# (the kernelspec puts it on PYTHONPATH), but a stdio server inherits no PYTHONPATH by default and
# would import whatever mcp_notebook is installed: handed it, the server runs the same checkout.
DEMO_SETUP = (
    "import os\n"
    "import sys\n"
    "import mcp_notebook\n"
    "demo = [sys.executable, '-m', 'mcp_notebook.demo']\n"
    "checkout = {'PYTHONPATH': os.environ['PYTHONPATH']}\n"
)
CONNECT = DEMO_SETUP + "session = mcp_notebook.connect(demo, env=checkout)"

OpenNotebook = Callable[[str, list[str]], NotebookPage]


@pytest.fixture(scope="module", name="playwright")
def playwright_fixture() -> Iterator[Playwright]:
    chromium()
    with sync_playwright() as started:
        yield started


@pytest.fixture(scope="module", name="lab")
def lab_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    with running_lab(tmp_path_factory.mktemp("jupyterlab")) as running:
        yield running


@pytest.fixture(name="browser")
def browser_fixture(playwright: Playwright, no_leaked_processes: None) -> Iterator[Browser]:
    """A fresh Chromium for each test (its processes are all gone when the test ends)."""
    launched = playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS, headless=True)
    try:
        yield launched
    finally:
        launched.close()


@pytest.fixture(name="notebook")
def notebook_fixture(
    lab: Lab, browser: Browser, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[OpenNotebook]:
    """``notebook(name, cells)`` writes the notebook, opens it and waits for its kernel.

    Afterwards the page is closed, and the kernels are shut down and must take their processes (the
    MCP servers they started) with them.
    """
    keep = os.environ.get("MCPNB_TEST_OUTPUT")
    screenshots = Path(keep) / "browser" / request.node.name if keep else tmp_path / "screenshots"
    shutil.rmtree(screenshots, ignore_errors=True)
    screenshots.mkdir(parents=True)
    print(f"screenshots: {screenshots}")
    before = {p.pid for p in lab.descendants()}
    log_start = lab.log_size()
    opened: list[NotebookPage] = []

    def open_notebook(name: str, cells: list[str]) -> NotebookPage:
        write_notebook(lab.root_dir, name, cells)
        page = NotebookPage(lab, browser, name, screenshots)
        opened.append(page)
        page.open()
        return page

    try:
        yield open_notebook
    finally:
        started = [p for p in lab.descendants() if p.pid not in before]
        try:
            for page in opened:
                page.close()
            lab.stop_kernels()
        finally:
            kill_leftovers(started, "the test's kernels or their MCP servers", PROCESS_GRACE)
    uncaught = [line for page in opened for line in page.console if line.startswith("pageerror:")]
    assert not uncaught, f"uncaught errors in the page (see {screenshots}/browser-console.txt): {uncaught}"
    errors = lab.our_errors(log_start)
    assert not errors, "errors in the kernel's log:\n" + "\n".join(errors)


def field(form: Locator, name: str) -> Locator:
    """The text box (an input, or a textarea for long text) of the form's property ``name``."""
    return form.locator(f".mcpnb-field-{name}").locator("input, textarea").first


def tool_entry(explorer: Locator, name: str) -> Locator:
    """The explorer's entry (a button whose text is the tool name) for ``name``."""
    return explorer.locator(".mcpnb-tool").filter(has_text=re.compile(rf"^\s*{re.escape(name)}\s*$"))
