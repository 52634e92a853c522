"""End-to-end: the layout defects of issue #38 item 4, each looked for where a user sees it (the
machinery is tests/browser/, see tests/test_browser.py; the measuring style is
tests/test_browser_details.py's).

Each test measures the page, not the markup: text boxes that do not run into each other, a row on
one line (its text's line boxes share one top), a badge in one piece (one client rect), a tab that
shows its panel after a click, the picker's chosen call, a count after the calls.
"""

from __future__ import annotations

import re
from contextlib import suppress
from typing import Any

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
    from playwright.sync_api import Locator, expect

# The lines an element's text takes on screen: its text's boxes grouped by the vertical span they
# share (a smaller badge beside a title is on the title's line, though its top is lower).
LINES_JS = """
(node) => {
  const range = document.createRange();
  range.selectNodeContents(node);
  const rects = [...range.getClientRects()].filter((r) => r.width > 0).sort((a, b) => a.top - b.top);
  let lines = 0, bottom = -Infinity;
  for (const rect of rects) {
    if (rect.top >= bottom - 1) { lines += 1; bottom = rect.bottom; }
    else bottom = Math.max(bottom, rect.bottom);
  }
  return lines;
}
"""
# The character before each line break in a cell's text (a word broken in its middle ends a line
# with a letter), read from each character's box.
BREAKS_JS = """
(cell) => {
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  const tops = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let i = 0; i < node.data.length; i++) {
      range.setStart(node, i);
      range.setEnd(node, i + 1);
      const rect = range.getClientRects()[0];
      if (rect && rect.width > 0) tops.push([node.data[i], rect.top, rect.bottom]);
    }
  }
  const breaks = [];
  for (let i = 1; i < tops.length; i++) if (tops[i][1] >= tops[i - 1][2] - 1) breaks.push(tops[i - 1][0]);
  return breaks;
}
"""
# The boxes of a log row's source text and data cell, and of the source's own cell.
LOG_ROW_JS = """
(row) => {
  const cells = row.querySelectorAll(":scope > td");
  const source = cells[cells.length - 2], data = cells[cells.length - 1];
  const range = document.createRange();
  range.selectNodeContents(source);
  const text = range.getBoundingClientRect(), cell = source.getBoundingClientRect();
  return {text: text.right, cell: cell.right, data: data.getBoundingClientRect().left,
          words: source.textContent};
}
"""


def lines(element: Locator) -> int:
    count: int = element.evaluate(LINES_JS)
    return count


def test_a_notification_rows_source_stays_in_its_column(notebook: OpenNotebook) -> None:
    """Defect 1: a notification's method (``notifications/tools/list_changed``, one long word) ran
    past its column into the data column; kept in its column, it was broken mid-word, and so were
    the time and the kind ("notificatio" / "n")."""
    calls = (
        "session.call_tool('add_tool', {'name': 'shout'})\n"
        "session.call_tool('write_log', {'message': 'hello', 'level': 'warning'})"
    )
    page = notebook("layout_log.ipynb", [CONNECT, "session.log_widget()", calls])
    for index in range(3):
        page.run_cell(index)
    log = page.output(1).locator(".mcpnb-log")
    notice = log.locator(".mcpnb-log-entry").filter(has_text="notifications/tools/list_changed")
    expect(notice.first).to_be_visible(timeout=EXPECT_MS)
    expect(log.locator(".mcpnb-log-entry").filter(has_text="hello")).to_be_visible(timeout=EXPECT_MS)
    rows = log.locator(".mcpnb-log-entry")
    for index in range(rows.count()):
        row = rows.nth(index)
        box: dict[str, Any] = row.evaluate(LOG_ROW_JS)
        assert box["text"] <= box["cell"] + 0.5, box  # the source's text inside its own cell
        assert box["cell"] <= box["data"] + 0.5, box  # and its cell before the data's
        time, level, source = (row.locator(":scope > td").nth(n) for n in range(3))
        for cell in (time, level):  # "10:00:12.39|9", "notificatio|n": no more
            assert cell.evaluate(BREAKS_JS) == [], cell.text_content()
        breaks = source.evaluate(BREAKS_JS)  # a long name breaks after a "/" or a ".", never mid-word
        assert all(char in "/." for char in breaks), (source.text_content(), breaks)
    page.keep(log, "layout-log.png", gallery=False)


def test_mcp_servers_rows_are_one_line_each(notebook: OpenNotebook) -> None:
    """Defect 2: ``%mcp servers`` rows were 4-5 lines tall (long cells wrapped in narrow columns)."""
    cells = [CONNECT, "%load_ext mcp_notebook\n%mcp servers"]
    page = notebook("layout_servers.ipynb", cells)
    for index in range(2):
        page.run_cell(index)
    table = page.output(1).locator("table").first
    expect(table).to_be_visible(timeout=EXPECT_MS)
    expect(table).to_contain_text("mcp_notebook.demo")
    cells_shown = table.locator("tbody td, tbody th")
    assert cells_shown.count() >= 10
    for index in range(cells_shown.count()):
        cell = cells_shown.nth(index)
        assert lines(cell) <= 1, (index, cell.text_content())
    row = table.locator("tbody tr").first.bounding_box()
    line = float(table.locator("tbody td").first.evaluate("c => parseFloat(getComputedStyle(c).fontSize)"))
    assert row is not None
    assert row["height"] <= 1.6 * 1.5 * line + 8, (row, line)  # ~1.6 lines, with the cells' padding
    page.keep(page.output(1), "layout-servers.png", gallery=False)


CONNECT_GROUP = (
    "import sys\n"
    "from mcp_notebook import Group\n"
    "demo = [sys.executable, '-m', 'mcp_notebook.demo']\n"
    "group = Group({'ok': demo, 'broken': ['/nonexistent/mcp-server']}, max_reconnect_attempts=0)\n"
    "group"
)


def test_the_gave_up_badge_stays_on_one_line(notebook: OpenNotebook) -> None:
    """Defect 3: the red "gave up" badge broke over two lines, in the group's card and its board."""
    page = notebook("layout_badge.ipynb", [CONNECT_GROUP, "group.status_widget()"])
    for index in range(2):
        page.run_cell(index)
    board = page.output(1).locator(".mcpnb-group-status")
    expect(board.locator(".mcpnb-badge", has_text="gave up")).to_be_visible(timeout=EXPECT_MS)
    for where in (page.output(0), board):
        badges = where.locator(".mcpnb-badge")
        assert badges.count() >= 2
        for index in range(badges.count()):
            badge = badges.nth(index)
            rects = badge.evaluate("b => b.getClientRects().length")
            assert rects == 1, (badge.text_content(), rects)  # one box: not broken over two lines
    page.keep(board, "layout-badge.png", gallery=False)


def test_the_explorers_tool_rows_line_up_on_one_line_each(notebook: OpenNotebook) -> None:
    """Defect 4: the tool list wrapped unevenly (a button, then its title and badges wherever
    they fitted, on a second line for some tools)."""
    page = notebook("layout_tools.ipynb", [CONNECT, "session.explorer()"])
    for index in range(2):
        page.run_cell(index)
    explorer = page.output(1).locator(".mcpnb-explorer")
    rows = explorer.locator(".mcpnb-tool-entry")
    expect(rows.first).to_be_visible(timeout=EXPECT_MS)
    assert rows.count() >= 5
    lefts = set()
    for index in range(rows.count()):
        row = rows.nth(index)
        button = row.locator(".mcpnb-tool").bounding_box()
        badges = row.locator(".mcpnb-badges")
        box = row.bounding_box()
        assert button is not None
        assert box is not None
        assert box["height"] <= 1.6 * button["height"], (row.text_content(), box, button)
        if (badges.text_content() or "").strip():
            assert lines(badges) == 1, row.text_content()
            placed = badges.bounding_box()
            assert placed is not None
            assert placed["x"] >= button["x"] + button["width"], row.text_content()
            lefts.add(round(placed["x"]))
    assert len(lefts) == 1, lefts  # every title and its badges in one column
    page.keep(explorer.locator(".mcpnb-tool-list"), "layout-tools.png", gallery=False)


MAP = (
    "import pandas as pd\n"
    "regions = pd.DataFrame({'region': ['north', 'nowhere'], 'limit': [3, 3]})\n"
    "session.map_tool('sales_records', regions, progress=False)"
)


def test_map_tools_error_column_shows_why(notebook: OpenNotebook) -> None:
    """Defect 5: map_tool's error column was cut before the useful part (which argument, why)."""
    page = notebook("layout_map.ipynb", [CONNECT, MAP])
    for index in range(2):
        page.run_cell(index)
    table = page.output(1).locator("table").first
    expect(table).to_be_visible(timeout=EXPECT_MS)
    why = table.locator("td", has_text="must be one of")
    expect(why).to_be_visible(timeout=EXPECT_MS)
    expect(why).to_contain_text("nothing was sent")
    box = why.bounding_box()
    output = page.output(1).bounding_box()
    assert box is not None
    assert output is not None
    assert box["x"] + box["width"] <= output["x"] + output["width"], (box, output)  # readable in place
    page.keep(page.output(1), "layout-map.png", gallery=False)


DASHBOARD_ON_LOG = "board = session.dashboard()\nboard.tab.selected_index = 3\nboard"


def test_the_dashboard_switches_tabs_from_its_log_tab(notebook: OpenNotebook) -> None:
    """Defect 6: a dashboard opened on its Log tab would not switch to another tab."""
    calls = "for n in range(3):\n    session.call_tool('write_log', {'message': f'line {n}'})"
    page = notebook("layout_tabs.ipynb", [CONNECT, DASHBOARD_ON_LOG, calls, "board"])
    for index in range(3):
        page.run_cell(index)
    board = page.output(1).locator(".mcpnb-dashboard")
    log, explorer = board.locator(".mcpnb-log"), board.locator(".mcpnb-explorer")
    expect(log).to_be_visible(timeout=EXPECT_MS)
    expect(log.locator(".mcpnb-log-entry", has_text="line 2")).to_be_visible(timeout=EXPECT_MS)
    board.get_by_role("tab", name="Tools").click()
    expect(explorer).to_be_visible(timeout=EXPECT_MS)
    expect(log).to_be_hidden()
    expect(board.get_by_role("tab", name="Tools")).to_have_attribute("aria-selected", "true")
    board.get_by_role("tab", name="Resources").click()
    expect(board.locator(".mcpnb-resources")).to_be_visible(timeout=EXPECT_MS)
    expect(explorer).to_be_hidden()
    board.get_by_role("tab", name="Log").click()
    expect(log).to_be_visible(timeout=EXPECT_MS)
    board.get_by_role("tab", name="Tools").click()
    expect(explorer).to_be_visible(timeout=EXPECT_MS)
    page.keep(board, "layout-tabs.png", gallery=False)

    page.run_cell(3)  # the same dashboard shown again: a second view, which switches too
    again = page.output(3).locator(".mcpnb-dashboard")
    expect(again.locator(".mcpnb-explorer")).to_be_visible(timeout=EXPECT_MS)
    again.get_by_role("tab", name="Log").click()
    expect(again.locator(".mcpnb-log")).to_be_visible(timeout=EXPECT_MS)
    again.get_by_role("tab", name="Tools").click()
    expect(again.locator(".mcpnb-explorer")).to_be_visible(timeout=EXPECT_MS)


THREE_CALLS = "for a in range(3):\n    session.call_tool('add', {'a': a, 'b': 100})\nprint(len(ex.calls()))"
ONE_MORE = "session.call_tool('add', {'a': 3, 'b': 100})\nprint(ex.calls()[3]['arguments'])"


def expect_picked(picker: Locator, call: str) -> None:
    """Waits until the history's picker shows the call ``call`` as its choice."""
    chosen = "([el, call]) => (el.options[el.selectedIndex] || {textContent: ''}).textContent.includes(call)"
    picker.page.wait_for_function(chosen, arg=[picker.element_handle(), call], timeout=EXPECT_MS)


def test_the_history_is_numbered_as_the_api_counts_and_picks_the_newest(notebook: OpenNotebook) -> None:
    """Defect 7: the history was numbered newest-first (the API counts oldest-first: ``ex.calls()``,
    ``ex.rerun(n)``) and its picker stayed on the oldest call."""
    cells = [CONNECT, "ex = session.explorer()\nex", THREE_CALLS, ONE_MORE]
    page = notebook("layout_history.ipynb", cells)
    for index in range(3):
        page.run_cell(index)
    expect(page.output(2)).to_contain_text("3", timeout=EXPECT_MS)
    history = page.output(1).locator(".mcpnb-history")
    rows = history.locator(".mcpnb-history-entry")
    expect(rows).to_have_count(3, timeout=EXPECT_MS)
    for a in range(3):  # the call ex.calls()[a] is the row numbered a
        row = rows.filter(has_text=re.compile(rf"a={a}, b=100"))
        expect(row.locator("td").first).to_have_text(str(a), timeout=EXPECT_MS)
    picker = history.locator(".mcpnb-history-pick select")
    expect_picked(picker, "a=2, b=100")

    page.run_cell(3)
    expect(page.output(3)).to_contain_text("'a': 3", timeout=EXPECT_MS)
    expect(rows).to_have_count(4, timeout=EXPECT_MS)
    expect(rows.filter(has_text="a=3, b=100").locator("td").first).to_have_text("3", timeout=EXPECT_MS)
    expect_picked(picker, "a=3, b=100")
    page.keep(history, "layout-history.png", gallery=False)


CALLS = (
    "for a in range(2):\n    session.call_tool('add', {'a': a, 'b': 1})\nprint(len(session.model.history))\n"
)


def test_the_session_card_counts_the_calls_made_after_it(notebook: OpenNotebook) -> None:
    """Defect 8: the session's card (``demo`` as a cell's value) still said "calls 0" after the
    notebook's calls: it was a picture taken when shown."""
    page = notebook("layout_card.ipynb", [CONNECT + "\nsession", CALLS])
    page.run_cell(0)
    card = page.output(0)
    heading = page.page.locator("th", has_text=re.compile(r"^\s*calls\s*$"))
    count = card.locator("tr", has=heading).locator("td")
    expect(count).to_have_text("0", timeout=EXPECT_MS)
    page.run_cell(1)
    expect(page.output(1)).to_contain_text("2", timeout=EXPECT_MS)
    expect(count).to_have_text("2", timeout=EXPECT_MS)
    headings = card.locator("th")
    for index in range(headings.count()):  # and its headings read whole ("resourc / es" was seen)
        assert headings.nth(index).evaluate(BREAKS_JS) == [], headings.nth(index).text_content()
    page.keep(card, "layout-card.png", gallery=False)
