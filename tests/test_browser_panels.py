"""End-to-end: every panel and dialog of a session, seen in a real browser (issue #17).

Each test is one notebook on the bundled demo server that walks through several panels, because
each notebook costs a kernel and a server start: the status panel riding out a killed server, the
log and its level filter and the dashboard; the resource browser (a template filled and read, a
live subscription), the prompt panel with completions and a live frame; the roots editor and the
sampling dialog; a record set and a CSV resource drawn as tables. What the server changes later must
show in a panel without its cell running again. The machinery is tests/browser/ (see tests/test_browser.py).

``page.keep(element, name)`` crops a screenshot to a panel; with ``MCPNB_GALLERY=docs/gallery``
(scripts/gallery.sh) those crops become the README's gallery.
"""

from __future__ import annotations

import re
from contextlib import suppress

from .browser.fixtures import (  # noqa: F401 (the fixtures: pytest finds them in the module)
    CONNECT,
    DEMO_SETUP,
    EXPECT_MS,
    OpenNotebook,
    browser_fixture,
    lab_fixture,
    notebook_fixture,
    playwright_fixture,
    tool_entry,
)
from .browser.notebook import NotebookPage

with suppress(ImportError):  # without Playwright, the fixtures fail with the fix
    from playwright.sync_api import Locator, expect


def state(name: str) -> re.Pattern[str]:
    """The status badge's class for the connection state ``name`` (the widget's CSS hook)."""
    return re.compile(rf"\bmcpnb-state-{name}\b")


def log_row(log: Locator, text: str) -> Locator:
    return log.locator(".mcpnb-log-entry").filter(has_text=text)


def suggestions(field: Locator) -> Locator:
    """A Combobox's suggestions: the options of the datalist the browser offers under the field."""
    return field.locator("xpath=..").locator("datalist option")


# ---------------------------------------------------------------------------------------------
# Status through a reconnect, the log and its level filter, the dashboard.

# A long first backoff keeps "reconnecting" on show for 3-6 s (jittered), long enough to be seen.
CONNECT_LOGGED = (
    DEMO_SETUP + "session = mcp_notebook.connect(demo, env=checkout, log_level='debug', backoff_initial=6.0)"
)
LOG_LINES = [
    ("debug", "cache warmed in 12 ms"),
    ("info", "loaded 240 sales records"),
    ("warning", "no sales in the west region on 2025-02-14"),
    ("error", "the billing service did not answer"),
]
WRITE_LOG = (
    f"for level, text in {LOG_LINES!r}:\n"
    "    session.call_tool('write_log', {'message': text, 'level': level})"
)
KILL_SERVER = (
    "import psutil\n"
    "servers = [p for p in psutil.Process().children() if 'mcp_notebook.demo' in p.cmdline()]\n"
    "for server in servers:\n"
    "    server.kill()\n"
    "print('killed', len(servers), 'server process')"
)


def test_status_rides_out_a_killed_server_the_log_filters_by_level_and_the_dashboard_shows_all(
    notebook: OpenNotebook,
) -> None:
    cells = [
        CONNECT_LOGGED,
        "session.status_widget()",
        "session.log_widget()",
        WRITE_LOG,
        KILL_SERVER,
        "session.dashboard()",
    ]
    page = notebook("status_log.ipynb", cells)
    for index in range(3):
        page.run_cell(index)
    status = page.output(1).locator(".mcpnb-status")
    badge = status.locator(".mcpnb-status-badge")
    expect(badge).to_have_class(state("ready"), timeout=EXPECT_MS)
    expect(status.locator(".mcpnb-reconnects")).to_have_text("0")
    expect(status).to_contain_text("mcp-notebook-demo")

    check_log_levels(page)
    check_reconnect(page, status)
    check_dashboard(page)


def check_log_levels(page: NotebookPage) -> None:
    """The server's log messages arrive in the log panel, coloured by level; the level filter hides
    those below the chosen level."""
    log = page.output(2).locator(".mcpnb-log")
    expect(log).to_contain_text("Nothing yet.", timeout=EXPECT_MS)
    shown = page.execution_count(2)
    page.run_cell(3)
    for level, text in LOG_LINES:
        expect(log_row(log, text)).to_contain_text(level, timeout=EXPECT_MS)
    assert page.execution_count(2) == shown, "the log's cell ran again"
    page.keep(log, "log.png")

    log.locator(".mcpnb-log-level select").select_option("warning")
    for level, text in LOG_LINES:
        expect(log_row(log, text)).to_have_count(1 if level in ("warning", "error") else 0)
    page.keep(log, "log-filtered.png", gallery=False)
    log.locator(".mcpnb-log-level select").select_option("debug")
    expect(log.locator(".mcpnb-log-entry")).to_have_count(len(LOG_LINES))


def check_reconnect(page: NotebookPage, status: Locator) -> None:
    """The server process dies: the badge goes to reconnecting, then back to ready on a new server,
    and the reconnect is counted, without the status cell running again."""
    badge = status.locator(".mcpnb-status-badge")
    shown = page.execution_count(1)
    page.run_cell(4)
    expect(page.output(4)).to_contain_text("killed 1 server process", timeout=EXPECT_MS)
    expect(badge).to_have_class(state("reconnecting"), timeout=EXPECT_MS)
    page.keep(status, "status-reconnecting.png")  # first: the state moves on after the backoff
    expect(status.locator(".mcpnb-reconnects")).to_have_text("1", timeout=EXPECT_MS)
    expect(status.locator(".mcpnb-last-error")).to_contain_text("killed", timeout=EXPECT_MS)
    expect(badge).to_have_class(state("ready"), timeout=EXPECT_MS)
    expect(badge).to_contain_text("ready")
    expect(status.locator(".mcpnb-reconnects")).to_have_text("1")
    assert page.execution_count(1) == shown, "the status cell ran again"
    page.keep(status, "status-ready.png", gallery=False)


def check_dashboard(page: NotebookPage) -> None:
    """The dashboard of the reconnected session: status, tools, log and resources behind tabs."""
    page.run_cell(5)
    board = page.output(5).locator(".mcpnb-dashboard")
    expect(board.locator(".mcpnb-status-badge")).to_have_class(state("ready"), timeout=EXPECT_MS)
    expect(board.locator(".mcpnb-reconnects")).to_have_text("1")
    explorer = board.locator(".mcpnb-explorer")
    expect(tool_entry(explorer, "sales_records")).to_have_count(1, timeout=EXPECT_MS)
    expect(tool_entry(explorer, "write_log")).to_have_count(1)
    page.keep(board, "dashboard.png")

    board.get_by_role("tab", name="Log").click()
    log = board.locator(".mcpnb-log")
    expect(log).to_be_visible(timeout=EXPECT_MS)
    for _level, text in LOG_LINES:
        expect(log_row(log, text)).to_have_count(1)
    board.get_by_role("tab", name="Resources").click()
    resources = board.locator(".mcpnb-resources")
    expect(resources).to_be_visible(timeout=EXPECT_MS)
    for uri in ("demo://readme", "demo://data/sales.csv", "demo://note"):
        expect(resources.locator("table.mcpnb-resource-table")).to_contain_text(uri, timeout=EXPECT_MS)
    page.keep(board, "dashboard-resources.png", gallery=False)


# ---------------------------------------------------------------------------------------------
# The resource browser (template, live subscription), the prompt panel, a live frame.

NOTE = "Restock gizmos in the north before Friday"


def test_resources_prompts_and_a_live_frame_follow_the_server(notebook: OpenNotebook) -> None:
    cells = [
        CONNECT,
        "session.resources_widget()",
        "session.prompts_widget()",
        "session.live_frame('tools')",
        f"print(session.call_tool('set_note', {{'text': {NOTE!r}}}).text)",
        "print(session.call_tool('add_tool', {'name': 'forecast_sales'}).text)",
    ]
    page = notebook("resources_prompts.ipynb", cells)
    for index in range(4):
        page.run_cell(index)
    check_template(page)
    check_subscription(page)
    check_prompt(page)
    check_live_frame(page)


def check_template(page: NotebookPage) -> None:
    """The region template: the server completes the typed name, the URI follows, Read shows it."""
    resources = page.output(1).locator(".mcpnb-resources")
    name = resources.locator(".mcpnb-template-field input")
    expect(name).to_be_visible(timeout=EXPECT_MS)
    name.fill("no")
    expect(suggestions(name)).to_have_count(1, timeout=EXPECT_MS)
    expect(suggestions(name).first).to_have_attribute("value", "north")
    name.fill("north")
    expect(resources.locator(".mcpnb-template-uri input")).to_have_value(
        "demo://region/north", timeout=EXPECT_MS
    )
    resources.locator(".mcpnb-template-read").click()
    view = resources.locator(".mcpnb-resource-view")
    # a JSON object: drawn as a key/value table, as its repr and its DataFrame see it
    table = view.locator("table.mcpnb-result-table")
    expect(table).to_be_visible(timeout=EXPECT_MS)
    expect(table.locator("tbody tr").filter(has_text="region")).to_contain_text("north")
    expect(table).to_contain_text("total_revenue")


def check_subscription(page: NotebookPage) -> None:
    """Subscribed to the note, the browser shows each update the server announces, live."""
    resources = page.output(1).locator(".mcpnb-resources")
    resources.locator(".mcpnb-resource-list select").select_option(
        label="A note (subscribable) — demo://note"
    )
    resources.locator(".mcpnb-subscribe").click()
    expect(resources.locator(".mcpnb-subscribe")).to_contain_text("Subscribed", timeout=EXPECT_MS)
    view = resources.locator(".mcpnb-resource-view")
    header = resources.locator(".mcpnb-resource-view-header")
    expect(header).to_contain_text("subscribed; 0 updates", timeout=EXPECT_MS)
    expect(view).to_contain_text("empty")
    shown = page.execution_count(1)

    page.run_cell(4)  # the server changes the note and sends notifications/resources/updated
    expect(page.output(4)).to_contain_text(f"The note is now {len(NOTE)} characters long.")
    expect(view).to_contain_text(NOTE, timeout=EXPECT_MS)
    expect(header).to_contain_text("subscribed; 1 update,")
    assert page.execution_count(1) == shown, "the resource browser's cell ran again"
    page.keep(resources, "resources.png")


def check_prompt(page: NotebookPage) -> None:
    """The region prompt: the argument is completed by the server, Get shows the messages."""
    prompts = page.output(2).locator(".mcpnb-prompts")
    prompts.locator(".mcpnb-prompt-list select").select_option(label="Analyze a region (analyze_region)")
    region = prompts.locator(".mcpnb-prompt-arguments .mcpnb-input input")
    expect(region).to_be_visible(timeout=EXPECT_MS)
    region.fill("s")
    expect(suggestions(region)).to_have_count(1, timeout=EXPECT_MS)
    expect(suggestions(region).first).to_have_attribute("value", "south")
    region.fill("")
    expect(suggestions(region)).to_have_count(4, timeout=EXPECT_MS)
    region.fill("south")
    prompts.locator(".mcpnb-get-prompt").click()
    messages = prompts.locator(".mcpnb-prompt-messages")
    expect(messages).to_contain_text("Analyze the sales of the south region", timeout=EXPECT_MS)
    expect(messages.locator(".mcpnb-message")).to_have_count(1)
    page.keep(prompts, "prompts.png")


def check_live_frame(page: NotebookPage) -> None:
    """A tool added by the server appears in the live frame of tools without its cell running again."""
    frame = page.output(3).locator(".mcpnb-live")
    body = frame.locator(".mcpnb-live-body")
    expect(body).to_contain_text("sales_records", timeout=EXPECT_MS)
    expect(body).not_to_contain_text("forecast_sales")
    shown = page.execution_count(3)
    page.run_cell(5)
    expect(page.output(5)).to_contain_text("Added the tool 'forecast_sales'")
    expect(body).to_contain_text("forecast_sales", timeout=EXPECT_MS)
    assert page.execution_count(3) == shown, "the live frame's cell ran again"
    # For the picture only: the frame's body (which scrolls) is cut short and scrolled to the new row.
    body.evaluate("(e) => { e.style.maxHeight = '22em'; e.scrollTop = e.scrollHeight; }")
    page.keep(frame, "live-frame.png")


# ---------------------------------------------------------------------------------------------
# Roots edited in the browser reach the server; the sampling dialog answered by clicking.

CONNECT_ROOTS = (
    DEMO_SETUP + "from mcp_notebook.widgets import RootsList\n"
    "roots = RootsList(['/data/sales'])\n"
    "session = mcp_notebook.connect(demo, env=checkout, roots=roots)"
)
LIST_ROOTS = "print(session.call_tool('list_roots').text)"
TEXT = "Sales rose in all four regions in March; gizmos sold best in the north, widgets in the south."
REPLY = "March sales rose everywhere, led by gizmos (north) and widgets (south)."
SUMMARIZE = (
    f"answer = session.call_tool('summarize', {{'text': {TEXT!r}, 'max_words': 12}})\nprint(answer.text)"
)


def test_roots_edited_in_the_browser_reach_the_server_and_a_sampling_dialog_answers_it(
    notebook: OpenNotebook,
) -> None:
    page = notebook(
        "roots_sampling.ipynb", [CONNECT_ROOTS, "session.roots_widget()", LIST_ROOTS, LIST_ROOTS, SUMMARIZE]
    )
    for index in range(3):
        page.run_cell(index)
    expect(page.output(2)).to_contain_text("file:///data/sales (sales)", timeout=EXPECT_MS)
    check_roots(page)
    check_sampling(page)


def check_roots(page: NotebookPage) -> None:
    """Adding and removing roots in the widget: the server's next roots/list sees the new list."""
    roots = page.output(1).locator(".mcpnb-roots")
    listing = roots.locator(".mcpnb-roots-list")
    expect(listing).to_contain_text("file:///data/sales", timeout=EXPECT_MS)
    roots.locator(".mcpnb-root-uri input").fill("/data/forecasts")
    roots.locator(".mcpnb-root-add").click()
    expect(listing).to_contain_text("file:///data/forecasts", timeout=EXPECT_MS)
    expect(listing.locator("li")).to_have_count(2)
    page.keep(roots, "roots.png")
    roots.locator(".mcpnb-root-remove-choice select").select_option("file:///data/sales")
    roots.locator(".mcpnb-root-remove").click()
    expect(listing).not_to_contain_text("file:///data/sales", timeout=EXPECT_MS)
    expect(listing.locator("li")).to_have_count(1)

    page.run_cell(3)
    expect(page.output(3)).to_contain_text("file:///data/forecasts (forecasts)", timeout=EXPECT_MS)
    expect(page.output(3)).not_to_contain_text("/data/sales")


def check_sampling(page: NotebookPage) -> None:
    """The server asks for a model reply: the dialog shows its request, the reply typed and sent
    completes the call with it."""
    page.start_cell(4)
    dialog = page.output(4).locator(".mcpnb-sampling")
    expect(dialog).to_be_visible(timeout=EXPECT_MS)
    expect(dialog).to_contain_text("Summarize the following text in at most 12 words")
    expect(dialog).to_contain_text("You are a concise assistant")
    expect(dialog).to_contain_text("maxTokens 64")
    dialog.locator(".mcpnb-sampling-reply textarea").fill(REPLY)
    page.keep(dialog, "sampling.png")
    dialog.locator(".mcpnb-sampling-send").click()
    page.wait_executed()
    expect(page.output(4)).to_contain_text(REPLY, timeout=EXPECT_MS)
    expect(dialog.locator(".mcpnb-dialog-answer")).to_contain_text("Sent the reply")


# ---------------------------------------------------------------------------------------------
# Results that read as data: a record set and a CSV resource drawn as tables (issue #20).

SALES_COLUMNS = ["date", "region", "product", "units", "price"]


def test_a_record_set_and_a_csv_resource_show_as_tables(notebook: OpenNotebook) -> None:
    """A cell whose value is a tool's records, and one whose value is a CSV resource: each is a
    table of its first 20 rows, the columns as headers, with a caption stating the whole size."""
    cells = [
        CONNECT,
        "session.call_tool('sales_records', {'region': 'all', 'limit': 40})",
        "session.read_resource('demo://data/sales.csv')",
    ]
    page = notebook("result_tables.ipynb", cells)
    for index in range(3):
        page.run_cell(index)
    records = page.output(1).locator(".mcpnb-result-view")
    check_table(records, "40 rows × 5 columns (structured content)", "… 20 more rows")
    expect(records.locator("tbody tr").first).to_contain_text("2025-01-01")
    page.keep(records, "result-table.png")
    sales = page.output(2).locator(".mcpnb-contents-view")
    expect(sales.locator(".mcpnb-contents-uri")).to_have_text("demo://data/sales.csv")
    check_table(sales, "240 rows × 5 columns (CSV)", "… 220 more rows")


def check_table(view: Locator, size: str, more: str) -> None:
    table = view.locator("table.mcpnb-result-table")
    expect(table).to_be_visible(timeout=EXPECT_MS)
    expect(table.locator("thead th")).to_have_text(SALES_COLUMNS)
    expect(table.locator("tbody tr")).to_have_count(20)
    caption = view.locator(".mcpnb-caption")
    expect(caption).to_be_visible()
    expect(caption).to_contain_text(f"{size} · first 20 shown")
    expect(caption).to_contain_text("rows ×")
    expect(view.locator(".mcpnb-more")).to_have_text(more)
    expect(view.locator("details.mcpnb-raw")).not_to_have_attribute("open", re.compile(".*"))  # folded


# ---------------------------------------------------------------------------------------------
# A chatty server (issue #28): the panels keep up with a flood and the log keeps its rows bounded.

#: The benchmark's paced server: its ``log_flood`` tool sends ``count`` log messages over ``seconds``
#: ("message 0" ... "message COUNT-1"), session-wide, so they reach every log view.
FLOOD_COUNT, FLOOD_SECONDS = 5000, 2.0
CONNECT_FLOOD = (
    DEMO_SETUP + "flood_server = [sys.executable, '-m', 'benchmarks.notebook_server']\n"
    "session = mcp_notebook.connect(flood_server, env=checkout, show_progress=False)"
)
#: A log view's row limit (``LogWidget``'s ``max_entries``), which the page must never exceed.
LOG_ROW_LIMIT = 200


def test_a_log_flood_ends_on_screen_with_the_log_rows_bounded(notebook: OpenNotebook) -> None:
    """5,000 log messages in 2 s with the log panel, status panel and dashboard (log tab) shown: the
    last message appears in both log views without any cell running again, and neither view ever
    holds more rows than its limit. The wait is the flood's own length plus the usual action
    timeout: a view that stopped redrawing before the end never shows the last message."""
    cells = [
        CONNECT_FLOOD,
        "session.log_widget()",
        "session.status_widget()",
        "session.dashboard()",
        f"print(session.call_tool('log_flood', {{'count': {FLOOD_COUNT}, 'seconds': {FLOOD_SECONDS}}}).text)",
    ]
    page = notebook("log_flood.ipynb", cells)
    for index in range(4):
        page.run_cell(index)
    panel = page.output(1).locator(".mcpnb-log")
    expect(panel).to_contain_text("Nothing yet.", timeout=EXPECT_MS)
    expect(page.output(2).locator(".mcpnb-status-badge")).to_have_class(state("ready"), timeout=EXPECT_MS)
    board = page.output(3).locator(".mcpnb-dashboard")
    board.get_by_role("tab", name="Log").click()
    tab = board.locator(".mcpnb-log")
    expect(tab).to_be_visible(timeout=EXPECT_MS)
    shown = [page.execution_count(index) for index in range(1, 4)]

    page.start_cell(4)
    last = f"message {FLOOD_COUNT - 1}"
    most = 0
    deadline_ms = FLOOD_SECONDS * 1000 + EXPECT_MS
    waited = 0.0
    while log_row(panel, last).count() == 0 and waited < deadline_ms:
        most = max(most, panel.locator(".mcpnb-log-entry").count(), tab.locator(".mcpnb-log-entry").count())
        page.page.wait_for_timeout(100)  # sampling the row count meanwhile (this bounds nothing)
        waited += 100
    expect(log_row(panel, last)).to_have_count(1, timeout=EXPECT_MS)
    expect(log_row(tab, last)).to_have_count(1, timeout=EXPECT_MS)
    page.wait_executed(4)
    expect(page.output(4)).to_contain_text(str(FLOOD_COUNT), timeout=EXPECT_MS)
    for view in (panel, tab):
        rows = view.locator(".mcpnb-log-entry").count()
        most = max(most, rows)
        assert LOG_ROW_LIMIT // 2 <= rows <= LOG_ROW_LIMIT, rows
    assert most <= LOG_ROW_LIMIT, f"{most} log rows in one view, over its limit of {LOG_ROW_LIMIT}"
    assert [page.execution_count(index) for index in range(1, 4)] == shown, "a panel's cell ran again"
    page.keep(panel, "log-flood.png", gallery=False)
