"""End-to-end in marimo (issue #38's "done when"): the quickstart's panels are live, not snapshots.

notebooks/marimo_quickstart.py opened with ``marimo run`` (a reader) and ``marimo edit`` (an author),
headless Chromium: the explorer lists the demo server's tools; a call made by clicking (select
``add``, fill its form, press Call) shows its result; an elicitation the explorer's call raises is
answered in the explorer and reaches the server; the dashboard's tabs switch; its log shows a
message the server sent. Then a call's progress bar shows under its cell; a running call is
cancelled from the explorer, the log filtered by level, a group's server retried from its board.
No "not supported" banner and no static snapshot where a panel belongs (each panel is one
anywidget: mcp_notebook/widgets/_ui). The harness is tests/browser/marimo.py.
"""

from __future__ import annotations

import shutil
from contextlib import suppress
from pathlib import Path

import pytest

from .browser.fixtures import (  # noqa: F401 (fixtures)
    EXPECT_MS,
    browser_fixture,
    field,
    playwright_fixture,
    tool_entry,
)
from .browser.marimo import NOT_SUPPORTED, Mode, marimo_page
from .test_browser_marimo import DRAW_FAILED, QUICKSTART, screenshots_fixture  # noqa: F401 (a fixture)

with suppress(ImportError):  # without Playwright, the fixtures fail with the fix
    from playwright.sync_api import Browser, Locator, expect

pytest.importorskip("marimo")

RAN = "add gave 3.5; 5 sales rows; 1 session(s) open"


def _call(explorer: Locator, tool: str, **arguments: str) -> None:
    """Select ``tool``, fill its form, press Call: as a user does."""
    tool_entry(explorer, tool).click()
    form = explorer.locator(".mcpnb-form")
    expect(form).to_contain_text(next(iter(arguments), ""), timeout=EXPECT_MS)
    for name, value in arguments.items():
        field(form, name).fill(value)
    explorer.locator("button.mcpnb-call").click()


@pytest.mark.parametrize("mode", ["run", "edit"])
def test_the_quickstarts_panels_are_live_in_marimo(
    mode: Mode, browser: Browser, tmp_path: Path, screenshots: Path
) -> None:
    notebook = tmp_path / "notebook" / QUICKSTART.name
    notebook.parent.mkdir()
    shutil.copyfile(QUICKSTART, notebook)
    with marimo_page(mode, notebook, browser, tmp_path, screenshots) as page:
        page.wait_ran(RAN)
        explorer = page.page.locator(".mcpnb-explorer").first
        expect(tool_entry(explorer, "add")).to_be_visible(timeout=EXPECT_MS)
        expect(tool_entry(explorer, "ask_user_name")).to_be_visible()
        expect(page.page.get_by_text(NOT_SUPPORTED)).to_have_count(0)
        expect(page.page.locator(".mcpnb-static")).to_have_count(0)  # no frozen snapshot drawn
        expect(page.page.locator(".output-area").filter(has_text="Traceback")).to_have_count(0)
        expect(page.page.get_by_text(DRAW_FAILED)).to_have_count(0)
        expect(page.output_of("north")).to_be_visible()  # the DataFrame's rows
        page.shot("panels")

        _call(explorer, "add", a="2", b="3")  # a call made by clicking
        result = explorer.locator(".mcpnb-result")
        expect(result).to_contain_text("5", timeout=EXPECT_MS)
        expect(explorer.locator(".mcpnb-history")).to_contain_text("add", timeout=EXPECT_MS)
        page.shot("called")

        _call(explorer, "ask_user_name", greeting="Welcome")  # the server asks back: a dialog
        dialog = explorer.locator(".mcpnb-elicitation")
        expect(dialog).to_be_visible(timeout=EXPECT_MS)
        expect(dialog).to_contain_text("What is your name?")
        field(dialog, "name").fill("Ada")
        dialog.locator(".mcpnb-accept").click()
        expect(result).to_contain_text("Welcome, Ada!", timeout=EXPECT_MS)  # the answer reached it
        page.shot("answered")

        _call(explorer, "write_log", message="hello from marimo")  # the server logs a message
        expect(result).to_contain_text("Logged one info message", timeout=EXPECT_MS)
        board = page.page.locator(".mcpnb-dashboard").first
        board.get_by_role("tab", name="Log").click()
        log = board.locator(".mcpnb-log")
        expect(log).to_be_visible(timeout=EXPECT_MS)
        expect(log.locator(".mcpnb-log-entry").filter(has_text="hello from marimo")).to_have_count(
            1, timeout=EXPECT_MS
        )
        board.get_by_role("tab", name="Tools").click()  # and back: the tabs switch both ways
        expect(log).to_be_hidden(timeout=EXPECT_MS)
        page.shot("dashboard-log")


def test_a_bar_under_its_cell_cancel_filter_the_log_and_retry_a_server_in_marimo(
    browser: Browser, tmp_path: Path, screenshots: Path
) -> None:
    """The rest of what a user does with the panels, in marimo: a blocking call's progress bar is
    one of our panels under the cell that made the call (tqdm's notebook bar is ipywidgets
    controls, which marimo drew only as text in its terminal); cancel a running call from the
    explorer, filter the log by level, and retry a server of a group from its board."""
    from .test_browser_marimo import SETUP, _opened

    demo = "[sys.executable, '-m', 'mcp_notebook.demo']"
    cells = [
        SETUP,
        f"demo = mcp_notebook.connect({demo}, env=checkout)",
        ("explorer", "demo.explorer()"),
        (
            "log",
            "demo.call_tool('write_log', {'message': 'quiet detail', 'level': 'info'})\n"
            "demo.call_tool('write_log', {'message': 'loud warning', 'level': 'warning'})\n"
            "demo.log_widget()",
        ),
        (
            "board",
            f"group = mcp_notebook.Group({{'one': {demo}}}, env=checkout)\n"
            "group['one'].close()\ngroup.status_widget()",
        ),
        ("slow", "counted = demo.call_tool('slow_count', {'steps': 40, 'delay': 0.25}).text\ncounted"),
    ]
    with _opened("edit", cells, browser, tmp_path, screenshots) as page:
        bar = page.cell("slow").locator(".mcpnb-progress")
        expect(bar).to_be_visible(timeout=EXPECT_MS)  # while the call runs
        expect(bar.locator(".mcpnb-progress-text")).to_contain_text("/40", timeout=EXPECT_MS)
        page.shot("progress")
        expect(page.cell("slow")).to_contain_text("Counted to 40", timeout=EXPECT_MS)

        explorer = page.cell("explorer").locator(".mcpnb-explorer")
        _call(explorer, "slow_count", steps="400", delay="0.05")
        cancel = explorer.locator("button.mcpnb-cancel")
        expect(cancel).to_be_enabled(timeout=EXPECT_MS)
        cancel.click()
        expect(explorer.locator(".mcpnb-result")).to_contain_text("cancelled", timeout=EXPECT_MS)

        log = page.cell("log").locator(".mcpnb-log")
        expect(log.locator(".mcpnb-log-entry").filter(has_text="quiet detail")).to_have_count(
            1, timeout=EXPECT_MS
        )
        log.locator(".mcpnb-log-level select").select_option("warning")
        expect(log.locator(".mcpnb-log-entry").filter(has_text="quiet detail")).to_have_count(
            0, timeout=EXPECT_MS
        )
        expect(log.locator(".mcpnb-log-entry").filter(has_text="loud warning")).to_have_count(1)

        board = page.cell("board").locator(".mcpnb-group-status")
        row = board.locator(".mcpnb-group-row").filter(has_text="one")
        expect(row).to_contain_text("closed", timeout=EXPECT_MS)
        row.locator(".mcpnb-group-retry").click()
        expect(row).to_contain_text("ready", timeout=EXPECT_MS)
        page.shot("cancel-filter-retry")


def test_every_other_panel_is_drawn_live_in_marimo(
    browser: Browser, tmp_path: Path, screenshots: Path
) -> None:
    """The panels the tests above do not use, drawn live in marimo and used once each: the tasks
    panel follows a task to its end, the resources panel reads a resource, the prompts panel gets
    a prompt, the roots panel lists the roots, a live frame shows the tools, and a group's explorer
    and log show their server."""
    from .test_browser_marimo import SETUP, _opened

    demo = "[sys.executable, '-m', 'mcp_notebook.demo']"
    cells = [
        SETUP,
        f"demo = mcp_notebook.connect({demo}, env=checkout, roots=['file:///data/sales'])",
        ("tasks", "task = demo.start_tool('sum_numbers', {'numbers': [1, 2]})\ndemo.tasks_widget()"),
        ("resources", "demo.resources_widget()"),
        ("prompts", "demo.prompts_widget()"),
        ("roots", "demo.roots_widget()"),
        ("frame", "demo.live_frame('tools')"),
        ("group", f"group = mcp_notebook.Group({{'one': {demo}}}, env=checkout)\ngroup.explorer()"),
        ("group_log", "group.log_widget()"),
    ]
    with _opened("edit", cells, browser, tmp_path, screenshots) as page:
        task = page.cell("tasks").locator(".mcpnb-task")
        expect(task.locator(".mcpnb-task-status")).to_have_text("completed", timeout=EXPECT_MS)

        resources = page.cell("resources").locator(".mcpnb-resources")
        expect(resources).to_contain_text("demo://readme", timeout=EXPECT_MS)
        resources.locator(".mcpnb-resource-list select").select_option(
            label="About this server — demo://readme"
        )
        resources.locator("button.mcpnb-read").first.click()
        expect(resources.locator(".mcpnb-resource-view")).to_contain_text("Prompts", timeout=EXPECT_MS)

        prompts = page.cell("prompts").locator(".mcpnb-prompts")
        expect(prompts).to_contain_text("analyze_region", timeout=EXPECT_MS)
        prompts.locator(".mcpnb-prompt-list select").select_option(label="Analyze a region (analyze_region)")
        prompts.locator(".mcpnb-prompt-arguments .mcpnb-input input").fill("south")
        prompts.locator("button.mcpnb-get-prompt").click()
        expect(prompts.locator(".mcpnb-prompt-messages")).to_contain_text("south", timeout=EXPECT_MS)

        expect(page.cell("roots").locator(".mcpnb-roots")).to_contain_text("file:///data/sales")
        expect(page.cell("frame").locator(".mcpnb-live-body")).to_contain_text("sales_records")
        group_explorer = page.cell("group").locator(".mcpnb-group-explorer")
        expect(group_explorer.locator(".mcpnb-tool").first).to_be_visible(timeout=EXPECT_MS)
        expect(group_explorer).to_contain_text("sales_records")
        expect(page.cell("group_log").locator(".mcpnb-log")).to_be_visible(timeout=EXPECT_MS)
        expect(page.page.get_by_text(NOT_SUPPORTED)).to_have_count(0)
        expect(page.page.locator(".mcpnb-static")).to_have_count(0)
        page.shot("every-panel")
