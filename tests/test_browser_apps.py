"""End-to-end: MCP Apps drawn in JupyterLab in headless Chromium (issue #18).

Three notebooks, each worth its kernel: the three published example apps render and draw (their
Views are the official SDK's ``App``, so this is our host against an independent peer); our demo
app calls its app-only tool and the model context it sets is read back in Python by a later cell; a
hostile View tries what the sandbox must forbid and gets nowhere. What a test checks inside a View
goes through Playwright's ``frame_locator``, as a user would see it; what it checks of the host goes
through a later cell, as a notebook user would read it.

``page.keep(element, name)`` crops a screenshot; with ``MCPNB_GALLERY=docs/gallery``
(scripts/gallery.sh) the crops become the README's gallery.
"""

from __future__ import annotations

import json
import re
from contextlib import suppress

import pytest

from .browser.fixtures import (  # noqa: F401 (the fixtures: pytest finds them in the module)
    DEMO_SETUP,
    EXPECT_MS,
    OpenNotebook,
    browser_fixture,
    lab_fixture,
    notebook_fixture,
    playwright_fixture,
)
from .browser.notebook import NotebookPage

with suppress(ImportError):  # without Playwright, the fixtures fail with the fix
    from playwright.sync_api import FrameLocator, expect

pytest.importorskip("anywidget")

FRAME = "iframe.mcpnb-app-frame"


def view_frame(page: NotebookPage, index: int) -> FrameLocator:
    """The View inside the app widget shown by cell ``index``."""
    return page.output(index).frame_locator(FRAME)


def printed(page: NotebookPage, index: int) -> str:
    """What cell ``index`` printed (its output's text)."""
    return page.output(index).inner_text(timeout=EXPECT_MS)


def check_sandbox(page: NotebookPage, index: int) -> None:
    """The iframe the widget drew: scripts only, and the CSP meta first in its document."""
    frame = page.output(index).locator(FRAME)
    expect(frame).to_have_attribute("sandbox", "allow-scripts", timeout=EXPECT_MS)
    srcdoc = frame.get_attribute("srcdoc") or ""
    assert re.match(r'(?is)^(<!doctype[^>]*>)?<meta http-equiv="Content-Security-Policy" content="', srcdoc)


# ---------------------------------------------------------------------------------------------
# The three published example servers.


def test_the_three_example_apps_render_and_draw(notebook: OpenNotebook) -> None:
    from . import apps_peers

    missing = apps_peers.missing()
    if missing:
        pytest.skip(f"the example app servers are not installed: {missing}")
    commands = {name: apps_peers.command(name) for name in ("basic", "budget", "segments")}
    cells = [
        "import json\nimport mcp_notebook\ncommands = " + json.dumps(commands),
        "basic = mcp_notebook.connect(commands['basic'], name='basic')\nbasic.app('get-time')",
        "budget = mcp_notebook.connect(commands['budget'], name='budget')\nbudget.app('get-budget-data')",
        "segments = mcp_notebook.connect(commands['segments'], name='segments')\n"
        "segments.app('get-customer-data')",
        "views = [_2, _3, _4]\nfor view in views:\n"
        "    print(view.tool, view.status, view.initialized, view.error)",
    ]
    page = notebook("example_apps.ipynb", cells)
    for index in range(4):
        page.run_cell(index)

    basic = view_frame(page, 1)
    iso_time = re.compile(r"\d{4}-\d\d-\d\dT\d\d:")
    expect(basic.locator("#server-time")).to_have_text(iso_time, timeout=EXPECT_MS)
    budget = view_frame(page, 2)
    expect(budget.locator("#budget-chart")).to_be_visible(timeout=EXPECT_MS)
    expect(budget.locator("#sliders-container input").first).to_be_visible(timeout=EXPECT_MS)
    expect(budget.locator("#status-bar")).not_to_contain_text("$0 / $0", timeout=EXPECT_MS)
    segments = view_frame(page, 3)
    expect(segments.locator("#scatter-chart")).to_be_visible(timeout=EXPECT_MS)
    expect(segments.locator("#legend > *").first).to_be_visible(timeout=EXPECT_MS)
    for index in (1, 2, 3):
        check_sandbox(page, index)
        expect(page.output(index).locator(".mcpnb-app-status")).to_have_text("ready", timeout=EXPECT_MS)

    page.run_cell(4)
    lines = printed(page, 4).splitlines()
    assert lines == [
        "get-time ready True None",
        "get-budget-data ready True None",
        "get-customer-data ready True None",
    ], lines
    page.keep(page.output(1), "app-basic.png")
    page.keep(page.output(2), "app-budget.png")
    page.keep(page.output(3), "app-segments.png")


# ---------------------------------------------------------------------------------------------
# Our demo app: its View calls an app-only tool and updates the model context.

DEMO_APP = (
    DEMO_SETUP.replace("'mcp_notebook.demo'", "'mcp_notebook.demo.apps'")
    + "session = mcp_notebook.connect(demo, env=checkout)"
)


def test_demo_app_calls_its_app_only_tool_and_python_reads_the_model_context(notebook: OpenNotebook) -> None:
    cells = [
        DEMO_APP,
        "board = session.app('sales_board')\nboard",
        "selected = board.model_context['structuredContent']['selected']\n"
        "print(board.status, board.initialized, selected['region'])",
        "print([entry['data'] for entry in session.model.log if entry['logger'] == 'sales-board'])",
    ]
    page = notebook("demo_app.ipynb", cells)
    page.run_cell(0)
    page.run_cell(1)
    board = view_frame(page, 1)
    # The largest region is chosen first: the View called region_detail for it.
    expect(board.locator("#detail")).to_contain_text("south: $", timeout=EXPECT_MS)
    check_sandbox(page, 1)
    shown = page.execution_count(1)
    board.locator("button[data-region=west]").click()
    expect(board.locator("#detail")).to_contain_text("west: $", timeout=EXPECT_MS)
    page.keep(page.output(1), "app-demo.png")

    page.run_cell(2)
    expect(page.output(2)).to_contain_text("ready True west", timeout=EXPECT_MS)
    page.run_cell(3)
    expect(page.output(3)).to_contain_text("showing west", timeout=EXPECT_MS)
    assert page.execution_count(1) == shown, "the app's cell ran again"


# ---------------------------------------------------------------------------------------------
# A hostile View: everything it tries fails, and the notebook does not notice.

PROBE = (
    "import os\nimport sys\nfrom pathlib import Path\nimport mcp_notebook\n"
    "server = Path(os.environ['PYTHONPATH'].split(os.pathsep)[0]) / 'tests' / 'servers' / 'apps_server.py'\n"
    "checkout = {'PYTHONPATH': os.environ['PYTHONPATH']}\n"
    "session = mcp_notebook.connect([sys.executable, str(server)], env=checkout)"
)
MARKS_JS = (
    "() => { localStorage.setItem('mcpnb-probe', 'kept'); document.cookie = 'mcpnb_probe=kept; path=/';"
    " return [document.cookie, JSON.stringify(Object.entries(localStorage).sort())]; }"
)
READ_MARKS_JS = "() => [document.cookie, JSON.stringify(Object.entries(localStorage).sort())]"


def test_hostile_app_gets_nowhere(notebook: OpenNotebook) -> None:
    cells = [
        PROBE,
        "hostile = session.app('hostile_app')\nhostile",
        "import json\nattempts = (hostile.model_context or {}).get('structuredContent', {}).get('attempts')\n"
        "print(json.dumps(attempts, sort_keys=True))",
        "counts = session.call_tool('call_counts').structured_content['counts']\n"
        "print('model_secret' in counts, hostile.status)",
        "print('still here')",
    ]
    page = notebook("hostile_app.ipynb", cells)
    page.run_cell(0)
    before = page.page.evaluate(MARKS_JS)
    page.run_cell(1)
    expect(view_frame(page, 1).locator("#out")).to_contain_text("done", timeout=EXPECT_MS)
    check_sandbox(page, 1)

    page.run_cell(2)
    report = json.loads(printed(page, 2))
    assert isinstance(report, dict), report
    assert report, "the hostile View reported no attempts"
    succeeded = {name: outcome for name, outcome in report.items() if outcome != "blocked"}
    assert not succeeded, f"the hostile View got through: {succeeded}"
    assert page.page.evaluate(READ_MARKS_JS) == before, "the View touched the notebook's cookies or storage"
    page.run_cell(3)
    expect(page.output(3)).to_have_text("False ready", timeout=EXPECT_MS)
    page.run_cell(4)
    expect(page.output(4)).to_have_text("still here", timeout=EXPECT_MS)
