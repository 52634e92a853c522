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
    from .apps_peers import example_command

    names = ("basic-vanillajs", "budget-allocator", "customer-segmentation")
    commands = {name: example_command(name) for name in names}
    cells = [
        "import json\nimport mcp_notebook\ncommands = " + json.dumps(commands),
        "basic = mcp_notebook.connect(commands['basic-vanillajs'], name='basic')\nbasic.app('get-time')",
        "budget = mcp_notebook.connect(commands['budget-allocator'], name='budget')\n"
        "budget.app('get-budget-data')",
        "segments = mcp_notebook.connect(commands['customer-segmentation'], name='segments')\n"
        "segments.app('get-customer-data')",
        "views = [_2, _3, _4]\nfor view in views:\n"
        "    print(view.tool, view.status, view.initialized, view.error, view.opened_links)",
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

    check_open_link_asks_first(page)

    page.run_cell(4)
    lines = printed(page, 4).splitlines()
    assert lines == [
        "get-time ready True None ['https://modelcontextprotocol.io/']",
        "get-budget-data ready True None []",
        "get-customer-data ready True None []",
    ], lines
    page.keep(page.output(1), "app-basic.png")
    page.keep(page.output(2), "app-budget.png")
    page.keep(page.output(3), "app-segments.png")


def check_open_link_asks_first(page: NotebookPage) -> None:
    """The basic View's "Open Link" asks in the widget, the link's host in bold; only the click on
    Open opens it (in a new page, which is not let onto the network here)."""
    link = page.output(1).locator(".mcpnb-app-link")
    expect(link).to_be_hidden()
    context = page.page.context
    context.route("https://modelcontextprotocol.io/**", lambda route: route.abort())
    view_frame(page, 1).locator("#open-link-btn").click()
    expect(link.locator(".mcpnb-app-link-host")).to_have_text("modelcontextprotocol.io", timeout=EXPECT_MS)
    assert len(context.pages) == 1, "a page was opened before the click"
    with context.expect_page(timeout=EXPECT_MS) as opened:
        link.locator(".mcpnb-app-link-open").click()
    opened.value.close()
    expect(link).to_be_hidden(timeout=EXPECT_MS)


# ---------------------------------------------------------------------------------------------
# Our demo app: its View calls an app-only tool and updates the model context.

# A cell that waits for a View's model context: an awaiting cell lets the kernel handle the front
# end's messages meanwhile (a sleeping one would not, and the context could never arrive).
WAIT_CONTEXT = (
    "import asyncio\n"
    "for _ in range(200):\n"
    "    if {view}.model_context is not None:\n"
    "        break\n"
    "    await asyncio.sleep(0.05)\n"
)

DEMO_APP = (
    DEMO_SETUP.replace("'mcp_notebook.demo'", "'mcp_notebook.demo.apps'")
    + "session = mcp_notebook.connect(demo, env=checkout)"
)


def test_demo_app_calls_its_app_only_tool_and_python_reads_the_model_context(notebook: OpenNotebook) -> None:
    cells = [
        DEMO_APP,
        "board = session.app('sales_board')\nboard",
        WAIT_CONTEXT.format(view="board")
        + "selected = board.model_context['structuredContent']['selected']\n"
        + "print(board.status, board.initialized, selected['region'])",
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
    check_leaving_the_page_stops_the_view(page, 1)


def check_leaving_the_page_stops_the_view(page: NotebookPage, index: int) -> None:
    """A View that navigates its own frame away is stopped: the page it went to never gets to talk
    to the host (and is not let onto the network here)."""
    page.page.context.route("https://mcp-notebook.invalid/**", lambda route: route.abort())
    frame = page.output(index).locator(FRAME)
    handle = frame.element_handle(timeout=EXPECT_MS)
    content = handle.content_frame() if handle is not None else None
    assert content is not None
    content.evaluate("location.assign('https://mcp-notebook.invalid/elsewhere')")
    expect(frame).to_have_count(0, timeout=EXPECT_MS)
    expect(page.output(index).locator(".mcpnb-app-error")).to_contain_text("left its page")


# ---------------------------------------------------------------------------------------------
# A hostile View: everything it tries fails, and the notebook does not notice.

PROBE = (
    "import os\nimport sys\nimport mcp_notebook\n"
    "checkout = {{'PYTHONPATH': os.environ['PYTHONPATH']}}\n"
    "session = mcp_notebook.connect([sys.executable, {server!r}], env=checkout)"
)
MARKS_JS = (
    "() => { localStorage.setItem('mcpnb-probe', 'kept'); document.cookie = 'mcpnb_probe=kept; path=/';"
    " return [document.cookie, JSON.stringify(Object.entries(localStorage).sort())]; }"
)
READ_MARKS_JS = "() => [document.cookie, JSON.stringify(Object.entries(localStorage).sort())]"
#: What the hostile View (tests/servers/apps/hostile.html) must fail at, and what it may do.
FORBIDDEN_ATTEMPTS = (
    "parent_document",
    "top_location",
    "cookie",
    "local_storage",
    "fetch",
    "call_model_only_tool",
    "open_javascript_link",
    "open_http_link",
)
ALLOWED_ATTEMPTS = {"initialize": "allowed", "call_app_tool": "allowed", "tool_result_seen": True}


def test_hostile_app_gets_nowhere(notebook: OpenNotebook) -> None:
    """Everything the sandbox, the CSP and the host must refuse is refused; the notebook's own
    cookies and storage are untouched, no error escapes into the page, the kernel goes on."""
    from .apps_peers import PROBE_SERVER

    cells = [
        PROBE.format(server=str(PROBE_SERVER)),
        "hostile = session.app('hostile_app')\nhostile",
        WAIT_CONTEXT.format(view="hostile") + "import json\n"
        "print(json.dumps(hostile.model_context['structuredContent']['attempts'], sort_keys=True))",
        "counts = session.call_tool('call_counts').structured_content['counts']\n"
        "print(counts.get('model_secret', 0), counts.get('app_refresh', 0), hostile.status)",
        "print('still here')",
    ]
    page = notebook("hostile_app.ipynb", cells)
    page.run_cell(0)
    before = page.page.evaluate(MARKS_JS)
    page.run_cell(1)
    expect(view_frame(page, 1).locator("#out")).to_contain_text("open_http_link", timeout=EXPECT_MS)
    check_sandbox(page, 1)
    page.keep(page.output(1), "app-hostile.png", gallery=False)

    page.run_cell(2)
    report = json.loads(printed(page, 2))
    got_through = {
        name: report.get(name)
        for name in FORBIDDEN_ATTEMPTS
        if not str(report.get(name)).startswith(("blocked", "refused"))
    }
    assert not got_through, f"the hostile View got through: {got_through} (report {report})"
    assert {name: report.get(name) for name in ALLOWED_ATTEMPTS} == ALLOWED_ATTEMPTS, report
    assert page.page.evaluate(READ_MARKS_JS) == before, "the View touched the notebook's cookies or storage"
    page.run_cell(3)
    expect(page.output(3)).to_have_text("0 1 ready", timeout=EXPECT_MS)  # the refused call never got there
    page.run_cell(4)
    expect(page.output(4)).to_have_text("still here", timeout=EXPECT_MS)
