"""End-to-end (issue #29, item 1): a dialog appears inside the widget whose call asked for it.

JupyterLab in headless Chromium, set up as in tests/test_browser.py. The explorer calls the demo's
``ask_user_name``: its elicitation dialog must show inside the explorer (a click's output has no
cell, so ``display`` from the call showed it nowhere before), the name typed there must reach the
server, and the greeting with that name must be on screen in the explorer's result.
"""

from __future__ import annotations

from contextlib import suppress

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
    from playwright.sync_api import expect


def test_an_explorer_call_asks_inside_the_explorer_and_shows_the_answer(notebook: OpenNotebook) -> None:
    page = notebook("explorer_dialog.ipynb", [CONNECT, "session.explorer()"])
    page.run_all()
    explorer = page.output(1).locator(".mcpnb-explorer")
    expect(explorer).to_be_visible(timeout=EXPECT_MS)
    tool_entry(explorer, "ask_user_name").click()
    form = explorer.locator(".mcpnb-form")
    expect(form).to_be_visible(timeout=EXPECT_MS)
    field(form, "greeting").fill("Welcome")
    explorer.locator(".mcpnb-call").click()

    dialog = explorer.locator(".mcpnb-dialog-area .mcpnb-elicitation")
    expect(dialog).to_be_visible(timeout=EXPECT_MS)
    expect(dialog).to_contain_text("What is your name?")
    expect(explorer.locator(".mcpnb-call-status")).to_contain_text("answer below", timeout=EXPECT_MS)
    page.screenshot("dialog-in-explorer")
    field(dialog, "name").fill("Ada")
    dialog.locator(".mcpnb-accept").click()

    result = explorer.locator(".mcpnb-result-area")
    expect(result).to_contain_text("Welcome, Ada! Nice to meet you.", timeout=EXPECT_MS)
    expect(explorer.locator(".mcpnb-dialog-area .mcpnb-dialog")).to_have_count(0, timeout=EXPECT_MS)
    expect(explorer.locator(".mcpnb-call-status")).to_contain_text("done", timeout=EXPECT_MS)
    page.screenshot("answered")
