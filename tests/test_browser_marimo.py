"""End-to-end in marimo (issue #38): our objects in ``marimo edit`` and ``marimo run``, headless Chromium.

The MCP App view (an anywidget of its own) is live: the ``sales_board`` View draws, and its own
first ``region_detail`` call comes back through our host into ``#detail`` (what
tests/test_browser_runall.py's ``_check_apps`` checks in JupyterLab). A re-run connect cell gets its
session back, a dialog shows under the cell whose call asked, and ``marimo run``'s viewers each get
a session that closes with their page. The panels themselves are tests/test_browser_marimo_panels.py.

Each test writes its notebook (marimo's ``.py`` format), serves it with :mod:`.browser.marimo`,
opens it in a page and waits until its cells ran; stopping the server must take the kernels and
the MCP servers they started with it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import psutil
import pytest

from .browser.fixtures import EXPECT_MS, browser_fixture, playwright_fixture  # noqa: F401 (fixtures)
from .browser.lab import PROCESS_GRACE
from .browser.marimo import NOT_SUPPORTED, MarimoPage, Mode, marimo_notebook, marimo_page
from .conftest import wait_gone

with suppress(ImportError):  # without Playwright, the fixtures fail with the fix
    from playwright.sync_api import Browser, expect

pytest.importorskip("anywidget")

# The notebook's first cell: the stdio servers it starts import this checkout (the server marimo
# runs has it on PYTHONPATH; a stdio server inherits no PYTHONPATH unless handed it).
SETUP = "import os\nimport sys\nimport mcp_notebook\ncheckout = {'PYTHONPATH': os.environ['PYTHONPATH']}"
RAN = "every cell ran"
#: What marimo's page shows where it could not draw an output (an HTML repr that was not a str).
DRAW_FAILED = "Something went wrong"
QUICKSTART = Path(__file__).resolve().parent.parent / "notebooks" / "marimo_quickstart.py"
Cell = str | tuple[str, str]  # a cell's source, or (its name, its source)


@pytest.fixture(name="screenshots")
def screenshots_fixture(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    keep = os.environ.get("MCPNB_TEST_OUTPUT")
    folder = Path(keep) / "browser" / request.node.name if keep else tmp_path / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    print(f"screenshots: {folder}")
    return folder


@contextmanager
def _opened(
    mode: Mode,
    cells: list[str | tuple[str, str]],
    browser: Browser,
    tmp_path: Path,
    screenshots: Path,
    *options: str,
) -> Iterator[MarimoPage]:
    """The notebook of ``cells`` served by ``marimo MODE [options]`` and open in a page."""
    notebook = tmp_path / "notebook" / "mcp_test.py"
    notebook.parent.mkdir()
    notebook.write_text(marimo_notebook(*cells))
    with marimo_page(mode, notebook, browser, tmp_path, screenshots, *options) as page:
        yield page


@pytest.mark.parametrize("mode", ["run", "edit"])
def test_the_app_view_is_live_in_marimo(
    mode: Mode, browser: Browser, tmp_path: Path, screenshots: Path
) -> None:
    cells: list[Cell] = [
        SETUP,
        "apps = mcp_notebook.connect([sys.executable, '-m', 'mcp_notebook.demo.apps'], env=checkout)",
        "board = apps.app('sales_board')\nboard",
        f"import marimo as mo\nmo.md('{RAN}: ' + board.tool)",
    ]
    with _opened(mode, cells, browser, tmp_path, screenshots) as page:
        page.wait_ran(RAN)
        view = page.page.frame_locator("iframe.mcpnb-app-frame").first
        expect(view.locator("#detail")).to_contain_text(" sales (", timeout=EXPECT_MS)
        expect(view.get_by_text("Could not load")).to_have_count(0)
        expect(page.page.get_by_text(NOT_SUPPORTED)).to_have_count(0)
        expect(page.page.get_by_text(DRAW_FAILED)).to_have_count(0)
        page.shot("app-view")


def _demo_servers(page: MarimoPage) -> list[psutil.Process]:
    """The demo MCP servers the notebook's kernel started."""
    return [p for p in page.server.descendants() if "mcp_notebook.demo" in " ".join(_cmdline(p))]


def _cmdline(process: psutil.Process) -> list[str]:
    try:
        return list(process.cmdline())
    except psutil.Error:
        return []


def test_a_connect_cell_marimo_runs_again_gets_its_session_back(
    browser: Browser, tmp_path: Path, screenshots: Path
) -> None:
    """A UI element the connect cell reads re-runs it reactively: the same session comes back (its
    name has no ``-2``, one session is open) and no second server process is started."""
    cells: list[Cell] = [
        SETUP + "\nimport marimo as mo",
        ("again", "again = mo.ui.button(value=0, on_click=lambda n: n + 1, label='connect again')\nagain"),
        (
            "connects",
            "runs = again.value\n"
            "demo = mcp_notebook.connect([sys.executable, '-m', 'mcp_notebook.demo'], env=checkout)",
        ),
        "mo.md(f'" + RAN + ": run {runs}, session {demo.name}, {len(mcp_notebook.servers())} open')",
    ]
    with _opened("edit", cells, browser, tmp_path, screenshots) as page:
        page.wait_ran(RAN)
        outputs = page.page.locator(".output-area")
        expect(outputs.get_by_text(f"{RAN}: run 0, session mcp-notebook-demo, 1 open")).to_be_visible()
        assert len(_demo_servers(page)) == 1, [_cmdline(p) for p in _demo_servers(page)]
        page.page.get_by_role("button", name="connect again").click()
        shown = outputs.get_by_text(f"{RAN}: run 1, ")
        expect(shown).to_be_visible(timeout=EXPECT_MS)
        expect(shown).to_have_text(f"{RAN}: run 1, session mcp-notebook-demo, 1 open")
        assert len(_demo_servers(page)) == 1, [_cmdline(p) for p in _demo_servers(page)]


def test_a_dialog_shows_under_the_cell_whose_call_asked(
    browser: Browser, tmp_path: Path, screenshots: Path
) -> None:
    """``ask_user_name`` elicits while its cell blocks in ``call_tool``: the question shows under that
    cell (marimo handles widget messages only between cells, so nobody can answer it: the handler's
    timeout ends the call, and the cell goes on)."""
    cells: list[Cell] = [
        SETUP,
        "demo = mcp_notebook.connect([sys.executable, '-m', 'mcp_notebook.demo'], env=checkout, "
        "handler_timeout=15)",
        (
            "asks",
            "try:\n"
            "    asked = demo.call_tool('ask_user_name').text\n"
            "except mcp_notebook.McpError as error:\n"
            "    asked = f'no answer: {error.kind}'\n"
            "asked",
        ),
        "import marimo as mo\nmo.md(f'" + RAN + ": {asked}')",
    ]
    with _opened("edit", cells, browser, tmp_path, screenshots) as page:
        expect(page.cell("asks")).to_contain_text("What is your name?", timeout=EXPECT_MS)
        page.shot("dialog")
        page.wait_ran(RAN)
        expect(page.page.locator(".output-area").get_by_text(f"{RAN}: no answer")).to_be_visible()


def test_marimo_run_closes_a_browser_sessions_servers_when_its_kernel_ends(
    browser: Browser, tmp_path: Path, screenshots: Path
) -> None:
    """``marimo run`` serves each browser session from a kernel thread of its one process, which
    outlives it: when the page goes and marimo ends that session (after ``--session-ttl``), the MCP
    server its notebook started stops, while marimo runs on."""
    cells: list[Cell] = [
        SETUP,
        "demo = mcp_notebook.connect([sys.executable, '-m', 'mcp_notebook.demo'], env=checkout)",
        "import marimo as mo\nmo.md(f'" + RAN + ": {demo.name}')",
    ]
    with _opened("run", cells, browser, tmp_path, screenshots, "--session-ttl", "1") as page:
        page.wait_ran(RAN)
        servers = _demo_servers(page)
        assert len(servers) == 1, [_cmdline(p) for p in servers]
        page.close()
        left = wait_gone(servers, PROCESS_GRACE)
        assert not left, f"the closed browser session's MCP server still runs: {[_cmdline(p) for p in left]}"
        assert page.server.process.poll() is None  # marimo itself runs on


def test_two_viewers_of_a_marimo_run_app_get_a_session_each(
    browser: Browser, tmp_path: Path, screenshots: Path
) -> None:
    """``marimo run`` serves each browser session from its own kernel, in one process, with the same
    cell ids: the second viewer's connect cell opens a session of its own (its name gets the
    ``-2``), not the first viewer's session, and each viewer's session has its own server."""
    cells: list[Cell] = [
        SETUP,
        "demo = mcp_notebook.connect([sys.executable, '-m', 'mcp_notebook.demo'], env=checkout)",
        "import marimo as mo\nmo.md(f'" + RAN + ": session {demo.name}')",
    ]
    with _opened("run", cells, browser, tmp_path, screenshots) as first:
        first.wait_ran(f"{RAN}: session mcp-notebook-demo")
        second = MarimoPage(first.server, browser, screenshots).open()
        try:
            second.wait_ran(f"{RAN}: session mcp-notebook-demo-2")
            assert len(_demo_servers(first)) == 2, [_cmdline(p) for p in _demo_servers(first)]
        finally:
            second.close()
