"""End-to-end: two details of issue #29 item 10 that only a browser can show (the machinery is
tests/browser/, see tests/test_browser.py).

The tasks panel's rows line up: the task id, the status and the elapsed time of every row start at
the same x, whatever the tool's name. The explorer's disabled buttons look disabled: Cancel at rest
and Call with no tool selected lose their colour (no ``mod-warning`` / ``mod-primary``) and are dimmed.
"""

from __future__ import annotations

from contextlib import suppress

from .browser.fixtures import (  # noqa: F401 (the fixtures: pytest finds them in the module)
    CONNECT,
    EXPECT_MS,
    OpenNotebook,
    browser_fixture,
    lab_fixture,
    notebook_fixture,
    playwright_fixture,
)

with suppress(ImportError):  # without Playwright, the fixtures fail with the fix
    from playwright.sync_api import expect

TWO_TASKS = (
    "short = session.start_tool('sum_numbers', {'numbers': [1, 2]})\n"
    "long = session.start_tool('build_report', {'topic': 'tides', 'sections': 1, 'delay': 0})\n"
    "print(short.result().structured_content, long.result().structured_content is not None)"
)


def test_task_rows_line_up_and_disabled_buttons_look_disabled(notebook: OpenNotebook) -> None:
    cells = [CONNECT, "session.tasks_widget()", TWO_TASKS, "session.explorer()"]
    page = notebook("details.ipynb", cells)
    for index in range(4):
        page.run_cell(index)
    expect(page.output(2)).to_contain_text("True", timeout=EXPECT_MS)

    rows = page.output(1).locator(".mcpnb-task")
    expect(rows).to_have_count(2, timeout=EXPECT_MS)
    for index in range(2):
        expect(rows.nth(index).locator(".mcpnb-task-status")).to_have_text("completed", timeout=EXPECT_MS)
    for cell in (".mcpnb-task-id", ".mcpnb-task-state", ".mcpnb-task-elapsed"):
        lefts = set()
        for index in range(2):
            box = rows.nth(index).locator(cell).bounding_box()
            assert box is not None, cell
            lefts.add(round(box["x"]))
        assert len(lefts) == 1, (cell, lefts)  # the same column in both rows
    page.keep(page.output(1), "tasks-aligned.png", gallery=False)

    explorer = page.output(3).locator(".mcpnb-explorer")
    for css in (".mcpnb-cancel", ".mcpnb-call"):
        button = explorer.locator(f"button{css}")
        expect(button).to_be_disabled(timeout=EXPECT_MS)
        classes = button.get_attribute("class") or ""
        assert "mod-warning" not in classes, classes
        assert "mod-primary" not in classes, classes
        assert "mcpnb-disabled" in classes, classes
        opacity = float(button.evaluate("b => getComputedStyle(b).opacity"))
        assert opacity < 1.0, (css, opacity)
    page.keep(explorer, "explorer-disabled.png", gallery=False)
