"""End-to-end: the widgets in a real browser.

A private JupyterLab (tests/browser/lab.py) serves notebooks that each test writes; headless
Chromium (Debian's ``chromium``, driven by Playwright) opens one, runs all its cells and clicks
through the widgets as a user would. Screenshots of each step go to the test's ``tmp_path``
(``.../<test name>0/screenshots/``), or to ``$MCPNB_TEST_OUTPUT/browser/<test name>/`` when that
variable is set; the folder is printed, and named in every failure message.

Nothing is skipped: without chromium or Playwright the tests fail and say to run scripts/setup.sh.
"""

from __future__ import annotations

from contextlib import suppress
from pathlib import Path

from .browser.fixtures import (  # noqa: F401 (the fixtures: pytest finds them in the module)
    CONNECT,
    EXPECT_MS,
    OpenNotebook,
    browser_fixture,
    field,
    lab_fixture,
    notebook_fixture,
    playwright_fixture,
    tool_entry,
)

with suppress(ImportError):  # without Playwright, the fixtures fail with the fix
    from playwright.sync_api import Locator, expect


# ---------------------------------------------------------------------------------------------
# The machinery itself: plain ipywidgets render in JupyterLab and talk to the kernel.


def test_plain_ipywidgets_render_and_respond(notebook: OpenNotebook) -> None:
    page = notebook(
        "plain_widgets.ipynb",
        [
            "import ipywidgets as widgets\n"
            "button = widgets.Button(description='Say hello')\n"
            "button.add_class('probe-button')\n"
            "out = widgets.Output()\n"
            "out.add_class('probe-output')\n"
            "def clicked(_):\n"
            "    with out:\n"
            "        print('hello from the kernel')\n"
            "button.on_click(clicked)\n"
            "widgets.VBox([button, out])",
        ],
    )
    page.run_all()
    button = page.output(0).locator(".probe-button")
    expect(button).to_be_visible(timeout=EXPECT_MS)
    button.click()
    expect(page.output(0).locator(".probe-output")).to_contain_text(
        "hello from the kernel", timeout=EXPECT_MS
    )
    page.screenshot("clicked")


# ---------------------------------------------------------------------------------------------
# The widgets on the bundled demo server. DOM hooks: the CSS classes the widgets add (add_class).

EXPLORER = "session.explorer()"
DEMO_TOOLS = [
    "add",
    "echo",
    "slow_count",
    "sales_records",
    "ask_user_name",
    "add_tool",
    "list_roots",
    "write_log",
]


def test_explorer_lists_the_demo_tools(notebook: OpenNotebook) -> None:
    page = notebook("explorer.ipynb", [CONNECT, EXPLORER])
    page.run_all()
    explorer = page.output(1).locator(".mcpnb-explorer")
    expect(explorer).to_be_visible(timeout=EXPECT_MS)
    for name in DEMO_TOOLS:
        expect(tool_entry(explorer, name)).to_have_count(1, timeout=EXPECT_MS)
    page.screenshot("tools-listed")

    explorer.locator(".mcpnb-tool-search input").fill("sales_rec")
    expect(explorer.locator(".mcpnb-tool")).to_have_count(1, timeout=EXPECT_MS)
    expect(tool_entry(explorer, "sales_records")).to_be_visible()
    page.screenshot("searched")


def test_filling_the_form_and_calling_shows_the_result_table(notebook: OpenNotebook) -> None:
    page = notebook("call.ipynb", [CONNECT, EXPLORER])
    page.run_all()
    explorer = page.output(1).locator(".mcpnb-explorer")
    tool_entry(explorer, "sales_records").click()
    form = explorer.locator(".mcpnb-form")
    expect(form).to_be_visible(timeout=EXPECT_MS)
    field(form, "limit").fill("3")
    page.screenshot("form-filled")
    explorer.locator(".mcpnb-call").click()

    table = explorer.locator(".mcpnb-result table.mcpnb-result-table")
    expect(table).to_be_visible(timeout=EXPECT_MS)
    expect(table.locator("tbody tr")).to_have_count(3, timeout=EXPECT_MS)
    for column in ("date", "region", "product", "units", "price"):
        expect(table.locator("thead")).to_contain_text(column)
    expect(explorer.locator(".mcpnb-error")).to_have_count(0)
    expect(explorer.locator(".mcpnb-history")).to_contain_text("sales_records", timeout=EXPECT_MS)
    page.screenshot("result-table")
    page.keep(explorer, "explorer.png")  # the README's first picture (scripts/gallery.sh)


def test_an_elicitation_dialog_answered_by_clicking_completes_the_call(notebook: OpenNotebook) -> None:
    ask = "answer = session.call_tool('ask_user_name', {'greeting': 'Welcome'})\nprint(answer.text)"
    page = notebook("elicitation.ipynb", [CONNECT, ask])
    page.run_all(until=0)  # cell 1 now waits in call_tool for the user's answer
    dialog = page.output(1).locator(".mcpnb-elicitation")
    expect(dialog).to_be_visible(timeout=EXPECT_MS)
    expect(dialog).to_contain_text("What is your name?")
    field(dialog, "name").fill("Ada")
    page.screenshot("dialog-filled")
    dialog.locator(".mcpnb-accept").click()

    page.wait_executed()
    expect(page.output(1)).to_contain_text("Welcome, Ada! Nice to meet you.", timeout=EXPECT_MS)
    page.screenshot("answered")


def test_a_server_side_tool_list_change_appears_without_rerunning_a_cell(notebook: OpenNotebook) -> None:
    change = "print(session.call_tool('add_tool', {'name': 'brand_new_tool'}).text)"
    page = notebook("list_changed.ipynb", [CONNECT, EXPLORER, change])
    page.run_cell(0)
    page.run_cell(1)
    explorer = page.output(1).locator(".mcpnb-explorer")
    expect(tool_entry(explorer, "add_tool")).to_have_count(1, timeout=EXPECT_MS)
    expect(tool_entry(explorer, "brand_new_tool")).to_have_count(0)
    shown = page.execution_count(1)
    page.screenshot("before-change")

    page.run_cell(2)  # the server adds a tool and sends notifications/tools/list_changed
    expect(page.output(2)).to_contain_text("Added the tool 'brand_new_tool'", timeout=EXPECT_MS)
    entry = tool_entry(explorer, "brand_new_tool")
    expect(entry).to_have_count(1, timeout=EXPECT_MS)
    assert page.execution_count(1) == shown, "the explorer's cell ran again"
    page.screenshot("after-change")

    # The new tool works from the explorer like any other.
    entry.click()
    field(explorer.locator(".mcpnb-form"), "text").fill("fresh from the server")
    explorer.locator(".mcpnb-call").click()
    expect(explorer.locator(".mcpnb-result")).to_contain_text("fresh from the server", timeout=EXPECT_MS)
    page.screenshot("new-tool-called")


# ---------------------------------------------------------------------------------------------
# Tasks: the panel follows tasks started in later cells, and its Cancel button stops one.

TASKS_SERVER = Path(__file__).resolve().parent / "servers" / "tasks_server.py"
CONNECT_TASKS = (
    "import sys\n"
    "import mcp_notebook\n"
    f"session = mcp_notebook.connect([sys.executable, {str(TASKS_SERVER)!r}])"
)


def task_row(panel: Locator, task_id: str) -> Locator:
    """The panel's row of ``task_id`` (its whole id is in the row's text)."""
    return panel.locator(".mcpnb-task").filter(has_text=task_id)


def test_tasks_panel_follows_tasks_and_cancels_one_then_the_dashboard_shows_them(
    notebook: OpenNotebook,
) -> None:
    cells = [
        CONNECT_TASKS,
        "session.tasks_widget()",
        "quick = session.start_tool('crunch', {'steps': 4, 'delay': 0.25})\nprint(quick.task_id)",
        "slow = session.start_tool('crunch', {'steps': 100000, 'delay': 0.25})\nprint(slow.task_id)",
        "print('the server says', slow.refresh().status)",
        "session.dashboard()",
    ]
    page = notebook("tasks.ipynb", cells)
    page.run_cell(0)
    page.run_cell(1)
    panel = page.output(1).locator(".mcpnb-tasks")
    expect(panel).to_be_visible(timeout=EXPECT_MS)
    expect(panel).to_contain_text("No tasks yet", timeout=EXPECT_MS)
    shown = page.execution_count(1)

    # A task started in a later cell appears in the panel and runs to its end there.
    page.run_cell(2)
    quick = page.output(2).inner_text().strip()
    assert quick, "the cell printed no task id"
    row = task_row(panel, quick)
    expect(row).to_have_count(1, timeout=EXPECT_MS)
    expect(row.locator(".mcpnb-task-tool")).to_have_text("crunch")
    expect(row.locator(".mcpnb-task-status")).to_have_text("completed", timeout=EXPECT_MS)
    expect(row.locator(".mcpnb-task-cancel")).to_be_hidden()
    row.locator(".mcpnb-task-result").click()
    expect(row.locator(".mcpnb-result")).to_contain_text("steps", timeout=EXPECT_MS)
    assert page.execution_count(1) == shown, "the panel's cell ran again"
    page.screenshot("completed")

    # A task that would run for hours: its Cancel button stops it, and the server agrees.
    page.run_cell(3)
    slow = page.output(3).inner_text().strip()
    assert slow, "the cell printed no task id"
    assert slow != quick
    row = task_row(panel, slow)
    expect(row).to_have_count(1, timeout=EXPECT_MS)
    expect(row.locator(".mcpnb-task-status")).to_have_text("working", timeout=EXPECT_MS)
    expect(row.locator(".mcpnb-task-message")).to_contain_text("of 100000", timeout=EXPECT_MS)
    page.screenshot("working")
    row.locator(".mcpnb-task-cancel").click()
    expect(row.locator(".mcpnb-task-status")).to_have_text("cancelled", timeout=EXPECT_MS)
    expect(row.locator(".mcpnb-task-cancel")).to_be_hidden()
    expect(row.locator(".mcpnb-task-error")).to_contain_text("Cancelled")
    assert page.execution_count(1) == shown, "the panel's cell ran again"
    page.screenshot("cancelled")

    page.run_cell(4)
    expect(page.output(4)).to_contain_text("the server says cancelled", timeout=EXPECT_MS)

    # The dashboard: status on top, the same tasks behind its Tasks tab.
    page.run_cell(5)
    board = page.output(5).locator(".mcpnb-dashboard")
    expect(board.locator(".mcpnb-status")).to_contain_text("ready", timeout=EXPECT_MS)
    expect(board.locator(".mcpnb-explorer")).to_be_visible(timeout=EXPECT_MS)
    board.get_by_role("tab", name="Tasks").click()
    tasks = board.locator(".mcpnb-tasks")
    expect(tasks).to_be_visible(timeout=EXPECT_MS)
    expect(task_row(tasks, quick).locator(".mcpnb-task-status")).to_have_text("completed")
    expect(task_row(tasks, slow).locator(".mcpnb-task-status")).to_have_text("cancelled")
    tasks.scroll_into_view_if_needed()
    page.screenshot("dashboard")


# ---------------------------------------------------------------------------------------------
# Many servers: the group's board and explorer.

CONNECT_GROUP = (
    "import sys\n"
    "from mcp_notebook import Group\n"
    "demo = [sys.executable, '-m', 'mcp_notebook.demo']\n"
    "servers = {'modern': demo, 'legacy': [*demo, '--legacy-only'], 'broken': ['/nonexistent/mcp-server']}\n"
    "group = Group(servers, max_reconnect_attempts=0)"
)


def board_row(board: Locator, server: str) -> Locator:
    return board.locator(".mcpnb-group-row").filter(
        has=board.page.locator(".mcpnb-group-cell-server", has_text=server)
    )


def test_group_board_follows_its_servers_and_the_explorer_lists_every_servers_tools(
    notebook: OpenNotebook,
) -> None:
    cells = [CONNECT_GROUP, "group.status_widget()", "group.explorer()", "group['legacy'].close()"]
    page = notebook("group.ipynb", cells)
    for index in range(3):
        page.run_cell(index)
    board = page.output(1).locator(".mcpnb-group-status")
    expect(board).to_be_visible(timeout=EXPECT_MS)
    expect(board.locator(".mcpnb-group-row")).to_have_count(3, timeout=EXPECT_MS)
    expect(board_row(board, "modern")).to_contain_text("ready", timeout=EXPECT_MS)
    expect(board_row(board, "modern")).to_contain_text("modern 2026-07-28")
    expect(board_row(board, "legacy")).to_contain_text("legacy 2025-11-25")
    broken = board_row(board, "broken")
    expect(broken).to_contain_text("gave up", timeout=EXPECT_MS)
    expect(broken).to_contain_text("was not found")
    expect(broken.locator(".mcpnb-group-retry")).to_be_visible()
    expect(board_row(board, "modern").locator(".mcpnb-group-retry")).to_be_hidden()
    page.screenshot("board")

    explorer = page.output(2).locator(".mcpnb-group-explorer")
    expect(explorer).to_be_visible(timeout=EXPECT_MS)
    for name in ("modern.add", "legacy.add", "modern.sales_records"):
        expect(tool_entry(explorer, name)).to_have_count(1, timeout=EXPECT_MS)
    explorer.locator(".mcpnb-group-server select").select_option("legacy")
    expect(tool_entry(explorer, "add")).to_have_count(1, timeout=EXPECT_MS)
    expect(tool_entry(explorer, "modern.add")).to_have_count(0)
    page.screenshot("explorer-one-server")

    # Closing one server in a later cell shows on the board without running its cell again.
    shown = page.execution_count(1)
    page.run_cell(3)
    expect(board_row(board, "legacy")).to_contain_text("closed", timeout=EXPECT_MS)
    expect(board_row(board, "legacy").locator(".mcpnb-group-retry")).to_be_visible()
    assert page.execution_count(1) == shown, "the board's cell ran again"
    page.screenshot("one-closed")
