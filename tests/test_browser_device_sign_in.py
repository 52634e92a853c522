"""End-to-end in JupyterLab: a device sign-in's panel (widgets/_sign_in.py) shows the code and the
link, its copy button puts the code on the page's clipboard (widgets/panel.js; nothing goes through
the kernel), and the panel follows the sign-in to its end. The sign-in itself (the device grant
against an authorization server) is tests/test_auth_device.py's and tests/test_kernel_device_sign_in.py's;
here the cell makes the :class:`DeviceSignIn` the core would hand the panel, and ends it."""

from __future__ import annotations

from contextlib import suppress

from .browser.fixtures import (  # noqa: F401 (the fixtures: pytest finds them in the module)
    EXPECT_MS,
    OpenNotebook,
    browser_fixture,
    lab_fixture,
    notebook_fixture,
    playwright_fixture,
)

with suppress(ImportError):  # without Playwright, the fixtures fail with the fix
    from playwright.sync_api import expect

SHOW = """
import time
from mcp_notebook.auth import DeviceSignIn
from mcp_notebook.widgets._sign_in import DeviceSignInPanel
sign_in = DeviceSignIn(
    server_url="https://mcp.example/mcp", issuer="https://as.example",
    user_code="WDJB-MJHT", verification_uri="https://as.example/device",
    verification_uri_complete="https://as.example/device?user_code=WDJB-MJHT",
    expires_at=time.time() + 600,
)
DeviceSignInPanel(sign_in).widget
"""
END = "sign_in._finish('signed in')"


def test_the_panel_shows_the_code_copies_it_and_says_when_signed_in(notebook: OpenNotebook) -> None:
    page = notebook("device.ipynb", [SHOW, END])
    page.run_cell(0)
    out = page.output(0)
    panel = out.locator(".mcpnb-device-sign-in")
    expect(panel.locator(".mcpnb-device-code")).to_have_text("WDJB-MJHT", timeout=EXPECT_MS)
    link = panel.locator("a.mcpnb-device-link").last
    expect(link).to_have_attribute("href", "https://as.example/device?user_code=WDJB-MJHT")
    expect(link).to_have_attribute("rel", "noopener noreferrer")
    expect(panel.locator(".mcpnb-sign-in-status")).to_contain_text("Waiting for you to sign in")
    # What the page's clipboard is handed (the real one needs a permission a test browser lacks).
    page.page.evaluate(
        "() => { window.__copied = [];"
        " navigator.clipboard.writeText = (t) => { window.__copied.push(t); return Promise.resolve(); }; }"
    )
    panel.locator(".mcpnb-copy-code").click()
    page.page.wait_for_function("() => window.__copied.length === 1", timeout=EXPECT_MS)
    assert page.page.evaluate("() => window.__copied") == ["WDJB-MJHT"]
    page.keep(panel, "device-sign-in.png", gallery=False)

    page.run_cell(1)  # the sign-in ends: the panel says so and the copy button is done
    expect(panel.locator(".mcpnb-sign-in-status")).to_have_text("Signed in.", timeout=EXPECT_MS)
    expect(panel.locator(".mcpnb-copy-code")).to_be_disabled(timeout=EXPECT_MS)
