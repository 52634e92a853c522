"""End-to-end (issue #40): a notebook signs in by paste-back, then calls a protected tool.

JupyterLab in headless Chromium (tests/browser/), and our authorization server on loopback in front
of the demo server (tests/servers/oauth_server.py). The kernel's environment says JupyterHub, so
``OAuth()`` picks paste-back and nothing listens for the redirect: the sign-in dialog shows under
the running cell; the person opens its link in a second page, signs in, and the browser lands on
the redirect address, which cannot load. They copy that address (from the failed navigation, as
from the address bar), paste it into the dialog's password field and press Sign in; the cell ends
connected and the next one calls a protected tool. The saved notebook does not hold the code.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import suppress
from urllib.parse import parse_qs, urlsplit

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
from .http_peers import HttpPeer, _python_peer
from .test_auth_paste import OAUTH_SERVER

with suppress(ImportError):  # without Playwright, the fixtures fail with the fix
    from playwright.sync_api import expect


@pytest.fixture(scope="module")
def server() -> Iterator[HttpPeer]:
    with _python_peer("oauth", [sys.executable, str(OAUTH_SERVER)]) as peer:
        yield peer


def test_a_notebook_signs_in_by_paste_back_and_calls_a_protected_tool(
    notebook: OpenNotebook, server: HttpPeer
) -> None:
    connect = (
        DEMO_SETUP + "from mcp_notebook.auth import OAuth\n"
        "os.environ['JUPYTERHUB_USER'] = 'ada'  # the browser is not on the kernel's machine\n"
        f"session = mcp_notebook.connect({server.url!r}, auth=OAuth(), show_progress=False)"
    )
    page = notebook("sign_in.ipynb", [connect, "session.call_tool('add', {'a': 2, 'b': 3})"])
    page.start_cell(0)
    dialog = page.output(0).locator(".mcpnb-sign-in")
    expect(dialog).to_be_visible(timeout=EXPECT_MS)
    link = dialog.locator("a.mcpnb-sign-in-link")
    expect(link).to_be_visible(timeout=EXPECT_MS)
    page.screenshot("sign-in-dialog")
    href = link.get_attribute("href")
    assert href is not None
    assert href.startswith(f"{server.origin}/authorize?")

    # A second page: the person's browser tab for the sign-in.
    tab = page.context.new_page()
    tab.goto(href)
    with tab.expect_event("requestfailed", predicate=lambda r: "/callback?" in r.url) as failed:
        tab.locator("#approve").click()
    landed = failed.value.url
    assert failed.value.failure is not None  # the redirect cannot load: nothing listens there
    assert landed.startswith("http://127.0.0.1:")
    code = parse_qs(urlsplit(landed).query)["code"][0]
    tab.close()

    field = dialog.locator(".mcpnb-sign-in-paste input")
    assert field.get_attribute("type") == "password"
    field.fill(landed)
    dialog.locator(".mcpnb-sign-in-submit").click()
    page.wait_executed(0)
    expect(dialog).to_contain_text("Pasted the address", timeout=EXPECT_MS)
    expect(field).to_have_value("")
    page.screenshot("signed-in")

    page.run_cell(1)
    expect(page.output(1)).to_contain_text("5", timeout=EXPECT_MS)
    page.screenshot("protected-tool-called")

    page._run("docmanager:save", None)
    saved = page.lab.root_dir / "sign_in.ipynb"
    text = saved.read_text()
    for _ in range(150):  # until the save lands (a hang guard: the file gets the outputs once saved)
        if "asks you to sign in" in text:
            break
        page.page.wait_for_timeout(200)
        text = saved.read_text()
    assert "asks you to sign in" in text  # the dialog's output was saved
    assert code not in text
