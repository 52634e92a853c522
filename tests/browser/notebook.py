"""Writing a notebook, opening it in JupyterLab in headless Chromium, running it, screenshots.

The browser is Debian's ``chromium`` driven by Playwright's sync API with ``executable_path``:
``playwright install`` (which downloads a browser build) is never needed. JupyterLab runs with
``expose_app_in_browser``, so the helper runs JupyterLab commands (``notebook:run-all-cells``) and
reads the notebook's state (kernel status, execution counts, errors) from ``window.jupyterapp``;
everything a test checks about the widgets goes through the DOM, as a user would see it.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import nbformat
import pytest

from .lab import FORBIDDEN, KERNEL_NAME, Lab

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator, Page

# Flags for Chromium as root in a container: no sandbox (it refuses to start as root with one), and
# shared memory in /tmp rather than a possibly small /dev/shm. Playwright adds its headless flags.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run"]
VIEWPORT: Any = {"width": 1400, "height": 1000}
TOOLBARS = 250  # pixels of JupyterLab's menu, tab bar, notebook toolbar and status bar, with room to spare
ACTION_TIMEOUT = 30.0  # seconds, for one click, fill or expect: generous for a loaded 2-core machine
KERNEL_TIMEOUT = 90.0  # seconds for the notebook's kernel to start and go idle
RUN_TIMEOUT = 120.0  # seconds for the cells to run
SETUP_HINT = "run scripts/setup.sh (as root it installs Debian's chromium; `apt-get install chromium`)"
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
#: The folder (relative to the working directory) where :meth:`NotebookPage.keep` also saves its
#: element screenshots: scripts/gallery.sh sets it to docs/gallery for the README's gallery.
GALLERY = "MCPNB_GALLERY"

# Reads the open notebook's state in the page: kernel status, each code cell's execution count, the
# errors in its outputs and its stderr. null until JupyterLab has the notebook open.
STATE_JS = """
(path) => {
  const app = window.jupyterapp;
  if (!app || !app.shell) return null;
  let panel = null;
  for (const widget of app.shell.widgets('main')) {
    if (widget.context && widget.context.path === path && widget.content && widget.content.model) {
      panel = widget;
    }
  }
  if (!panel) return null;
  const session = panel.sessionContext && panel.sessionContext.session;
  const kernel = session ? session.kernel : null;
  const cells = [];
  const model = panel.content.model;
  for (let i = 0; i < model.cells.length; i++) {
    const cell = model.cells.get(i);
    if (cell.type !== 'code') continue;
    const errors = [];
    let stderr = '';
    for (let j = 0; j < cell.outputs.length; j++) {
      const output = cell.outputs.get(j).toJSON();
      if (output.output_type === 'error') {
        errors.push({ename: output.ename, evalue: output.evalue, traceback: output.traceback});
      } else if (output.output_type === 'stream' && output.name === 'stderr') {
        stderr += Array.isArray(output.text) ? output.text.join('') : output.text;
      }
    }
    cells.push({index: i, count: cell.executionCount, errors: errors, stderr: stderr});
  }
  return {
    id: panel.id,
    kernel: kernel ? kernel.status : null,
    connection: kernel ? kernel.connectionStatus : null,
    cells: cells,
  };
}
"""

# Runs a JupyterLab command on the notebook: all cells, or the one at ``index`` (without moving on).
# The command is not awaited: a cell may be waiting for a click.
RUN_JS = """
([id, command, index]) => {
  const app = window.jupyterapp;
  const panel = Array.from(app.shell.widgets('main')).find((widget) => widget.id === id);
  app.shell.activateById(id);
  if (index !== null) panel.content.activeCellIndex = index;
  app.commands.execute(command);
  return true;
}
"""


def chromium() -> str:
    """The path of Debian's chromium; fails (never skips) with the fix when it or Playwright is missing."""
    try:
        import playwright  # noqa: F401
    except ImportError:
        pytest.fail(
            "the playwright package is not installed: run scripts/setup.sh (it installs the dev extra)"
        )
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.fail(f"chromium is not installed: {SETUP_HINT}")
    return path


def write_notebook(directory: Path, name: str, cells: list[str]) -> Path:
    """Writes a notebook of code cells, bound to the test kernelspec, without outputs."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": KERNEL_NAME, "display_name": KERNEL_NAME, "language": "python"}
    notebook.metadata["language_info"] = {"name": "python"}
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    path = directory / name
    nbformat.write(notebook, path)
    return path


class NotebookPage:
    """One notebook open in one browser page."""

    def __init__(self, lab: Lab, browser: Browser, name: str, output_dir: Path) -> None:
        self.lab = lab
        self.name = name
        self.output_dir = output_dir
        self.console: list[str] = []
        self._shots = 0
        self.context = browser.new_context(viewport=VIEWPORT)
        self.context.set_default_timeout(ACTION_TIMEOUT * 1000)
        self.page: Page = self.context.new_page()
        self.page.on("console", lambda message: self.console.append(f"{message.type}: {message.text}"))
        self.page.on("pageerror", lambda error: self.console.append(f"pageerror: {error}"))

    # -- opening and running ------------------------------------------------------------------
    def open(self) -> None:
        """Opens the notebook and waits until its kernel is idle."""
        self.page.goto(self.lab.page_url(self.name), wait_until="domcontentloaded")
        self.wait_for(
            lambda s: s["kernel"] == "idle" and s["connection"] == "connected", KERNEL_TIMEOUT, "idle"
        )
        self.screenshot("opened")

    def state(self) -> dict[str, Any] | None:
        state: dict[str, Any] | None = self.page.evaluate(STATE_JS, self.name)
        return state

    def wait_for(self, done: Any, timeout: float, what: str) -> dict[str, Any]:
        """Polls the notebook's state until ``done(state)``; fails at once on an error output."""
        deadline = time.monotonic() + timeout
        state = None
        while True:
            state = self.state()
            if state is not None:
                self._raise_on_error(state)
                if done(state):
                    return state
            if time.monotonic() > deadline:
                self.screenshot(f"timeout-{what}")
                self.fail(f"the notebook was not {what} within {timeout:.0f} s; state: {state}")
            self.page.wait_for_timeout(200)

    def run_all(self, until: int | None = None, timeout: float = RUN_TIMEOUT) -> None:
        """Runs all cells (JupyterLab's ``notebook:run-all-cells``); waits until every code cell has
        run and the kernel is idle, or with ``until`` only until the cells up to that index have run
        (the next one may be waiting for a click)."""
        self._run("notebook:run-all-cells", None)
        if until is None:
            self.wait_executed(timeout=timeout)
        else:
            self.wait_executed(until, idle=False, timeout=timeout)

    def start_cell(self, index: int) -> None:
        """Runs the cell at ``index`` without waiting for it: it may wait for a click in a dialog."""
        self._run("notebook:run-cell", index)

    def run_cell(self, index: int, timeout: float = RUN_TIMEOUT) -> None:
        """Runs the cell at ``index`` (``notebook:run-cell``); waits until it ran and the kernel is idle."""
        self._run("notebook:run-cell", index)
        self.wait_executed(index, timeout=timeout)

    def _run(self, command: str, index: int | None) -> None:
        state = self.wait_for(lambda s: s["kernel"] == "idle", KERNEL_TIMEOUT, "idle")
        self.page.evaluate(RUN_JS, [state["id"], command, index])

    def wait_executed(
        self, until: int | None = None, *, idle: bool = True, timeout: float = RUN_TIMEOUT
    ) -> None:
        """Waits until the code cells up to index ``until`` (all by default) have an execution
        count and, with ``idle``, the kernel is idle."""

        def done(state: dict[str, Any]) -> bool:
            cells = [c for c in state["cells"] if until is None or c["index"] <= until]
            finished = all(isinstance(c["count"], int) for c in cells)
            return finished and (not idle or state["kernel"] == "idle")

        what = "run" if until is None else f"run up to cell {until}"
        self.wait_for(done, timeout, what)
        self.screenshot(what)

    def execution_count(self, index: int) -> int | None:
        state = self.state()
        assert state is not None
        return next((c["count"] for c in state["cells"] if c["index"] == index), None)

    # -- finding things -----------------------------------------------------------------------
    def cell(self, index: int) -> Locator:
        return self.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell").nth(index)

    def output(self, index: int) -> Locator:
        """The output area of the cell at ``index`` (0-based, counting markdown cells too)."""
        return self.cell(index).locator(".jp-OutputArea")

    # -- evidence -----------------------------------------------------------------------------
    def screenshot(self, label: str) -> Path:
        self._shots += 1
        path = self.output_dir / f"{self._shots:02d}-{re.sub(r'[^A-Za-z0-9_.-]+', '-', label)}.png"
        self.page.screenshot(path=str(path))
        return path

    def keep(self, element: Locator, name: str, *, gallery: bool = True) -> Path:
        """A screenshot cropped to ``element``, saved as ``name`` among the test's screenshots and,
        with ``gallery`` when ``$MCPNB_GALLERY`` names a folder, there too: so the README's gallery
        is drawn by the tests that check what it shows, and ``scripts/gallery.sh`` redraws it."""
        self._shots += 1
        path = self.output_dir / f"{self._shots:02d}-{name}"
        with self._room_for(element):
            element.scroll_into_view_if_needed()
            element.screenshot(path=str(path), animations="disabled")
        folder = os.environ.get(GALLERY)
        if gallery and folder:
            Path(folder).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, Path(folder) / name)
        return path

    @contextmanager
    def _room_for(self, element: Locator) -> Iterator[None]:
        """A viewport tall enough for ``element`` while inside: JupyterLab scrolls the notebook in a
        panel of fixed height, so a taller element would be cut, with the toolbar drawn over it."""
        box = element.bounding_box()
        needed = int(box["height"]) + TOOLBARS if box else 0
        if needed <= VIEWPORT["height"]:
            yield
            return
        self.page.set_viewport_size({"width": VIEWPORT["width"], "height": needed})
        try:
            yield
        finally:
            self.page.set_viewport_size(VIEWPORT)

    def fail(self, message: str) -> NoReturn:
        pytest.fail(f"{message}\nscreenshots: {self.output_dir}\n{self.diagnostics()}", pytrace=False)

    def diagnostics(self) -> str:
        console = "\n".join(self.console[-30:])
        return f"browser console (last 30):\n{console}\nJupyterLab log (last 40 lines):\n{self.lab.log(40)}"

    def _raise_on_error(self, state: dict[str, Any]) -> None:
        for cell in state["cells"]:
            for error in cell["errors"]:
                traceback = ANSI.sub("", "\n".join(error.get("traceback") or []))
                self.screenshot(f"error-in-cell-{cell['index']}")
                self.fail(f"cell {cell['index']} raised {error['ename']}: {error['evalue']}\n{traceback}")
            stderr = ANSI.sub("", cell.get("stderr") or "")
            if any(bad in stderr for bad in FORBIDDEN):
                self.screenshot(f"stderr-in-cell-{cell['index']}")
                self.fail(f"cell {cell['index']} wrote an error to stderr:\n{stderr}")

    def close(self) -> None:
        with suppress(Exception):  # the last state, whatever happened (the page may be gone)
            self.screenshot("end")
        (self.output_dir / "browser-console.txt").write_text("\n".join(self.console) + "\n")
        self.context.close()
