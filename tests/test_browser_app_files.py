"""End-to-end in JupyterLab (headless Chromium): the App view's last two messages of the Apps spec.

The probe server's export View (tests/servers/apps/export.html, plain JavaScript speaking the
protocol) is opened with ``defer_call=True``: a later cell streams a partial input and calls the tool,
and the View shows both and the result. Its Export button asks the host to save a CSV file
(``ui/download-file``): the view shows the file's name, type and size; "Save" is the browser's own
download (caught with Playwright's ``expect_download``), "Refuse" answers the View, which says so;
Python reads both offers back.
"""

from __future__ import annotations

from contextlib import suppress
from pathlib import Path

import pytest

from .browser.fixtures import (  # noqa: F401 (the fixtures: pytest finds them in the module)
    EXPECT_MS,
    OpenNotebook,
    browser_fixture,
    lab_fixture,
    notebook_fixture,
    playwright_fixture,
)
from .test_browser_apps import PROBE, view_frame

with suppress(ImportError):  # without Playwright, the fixtures fail with the fix
    from playwright.sync_api import expect

pytest.importorskip("anywidget")

CSV = "region,revenue\nnorth,12.5\n"

# An awaiting cell lets the kernel handle the front end's messages while it waits for the View.
STREAM = (
    "import asyncio\n"
    "for _ in range(400):\n"
    "    if export.initialized:\n"
    "        break\n"
    "    await asyncio.sleep(0.05)\n"
    "export.send_partial_input({'title': 'Q'})\n"
    "export.call({'title': 'Q4'})\n"
    "print(export.wait(60).structured_content)"
)


def test_export_view_streams_its_input_and_saves_a_file_only_when_the_user_says_so(
    notebook: OpenNotebook,
) -> None:
    from .apps_peers import PROBE_SERVER

    cells = [
        PROBE.format(server=str(PROBE_SERVER)),
        "export = session.app('export_app', defer_call=True)\nexport",
        STREAM,
        "print([(d['name'], d['accepted']) for d in export.downloads])",
    ]
    page = notebook("export_app.ipynb", cells)
    page.run_cell(0)
    page.run_cell(1)
    frame = view_frame(page, 1)
    expect(frame.locator("#capability")).to_have_text("offered", timeout=EXPECT_MS)

    page.run_cell(2)
    expect(page.output(2)).to_contain_text("{'title': 'Q4', 'rows': 2}", timeout=EXPECT_MS)
    expect(frame.locator("#partials")).to_have_text('partial {"title":"Q"}', timeout=EXPECT_MS)
    expect(frame.locator("#input")).to_have_text('{"title":"Q4"}', timeout=EXPECT_MS)
    expect(frame.locator("#result")).to_have_text('{"title":"Q4","rows":2}', timeout=EXPECT_MS)

    bar = page.output(1).locator(".mcpnb-app-download")
    expect(bar).to_be_hidden()
    downloads: list[str] = []
    page.page.on("download", lambda download: downloads.append(download.suggested_filename))
    frame.locator("#export").click()
    expect(bar.locator(".mcpnb-app-download-name")).to_have_text("q4-report.csv", timeout=EXPECT_MS)
    expect(bar.locator(".mcpnb-app-download-type")).to_contain_text("text/csv")
    expect(bar.locator(".mcpnb-app-download-size")).to_have_text("26 B")
    assert downloads == [], "a file was saved before the click"
    page.keep(page.output(1), "app-download.png", gallery=False)
    with page.page.expect_download(timeout=EXPECT_MS) as saving:
        bar.locator(".mcpnb-app-download-save").click()
    saved = saving.value
    assert saved.suggested_filename == "q4-report.csv"
    assert Path(saved.path()).read_text() == CSV
    expect(frame.locator("#saved")).to_have_text("saved", timeout=EXPECT_MS)
    expect(bar).to_be_hidden(timeout=EXPECT_MS)

    frame.locator("#export").click()
    expect(bar.locator(".mcpnb-app-download-refuse")).to_be_visible(timeout=EXPECT_MS)
    bar.locator(".mcpnb-app-download-refuse").click()
    expect(frame.locator("#saved")).to_have_text("refused by the host", timeout=EXPECT_MS)
    expect(bar).to_be_hidden(timeout=EXPECT_MS)
    assert downloads == ["q4-report.csv"], downloads

    page.run_cell(3)
    offered = [("q4-report.csv", True), ("q4-report.csv", False)]
    expect(page.output(3)).to_have_text(str(offered), timeout=EXPECT_MS)  # Python reads the answers
