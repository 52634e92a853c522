"""End-to-end: the panels' renderer (widgets/panel.js) draws every kind of control a panel uses,
sends what the user does in order, follows the kernel's changes, and shows a hostile string as
text (the machinery is tests/browser/, see tests/test_browser.py; the kernel's side of the
protocol is tests/test_panel_toolkit.py)."""

from __future__ import annotations

import re
from contextlib import suppress
from typing import Any

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

HOSTILE = '<img src=x onerror="window.__pwned = 1">'

BUILD = f"""
from mcp_notebook.widgets import _ui as W
HOSTILE = {HOSTILE!r}
seen = []
text = W.Text(placeholder="name")
text.add_class("t-text")
button = W.Button(description="Go " + HOSTILE, icon="play", button_style="primary")
button.add_class("t-button")
button.on_click(lambda _b: seen.append(text.value))
pick = W.Dropdown(options=[HOSTILE, "b"], description="pick")
pick.add_class("t-pick")
tick = W.Checkbox(description="tick " + HOSTILE)
tick.add_class("t-tick")
slider = W.IntSlider(min=0, max=10, value=3)
slider.add_class("t-slider")
bar = W.IntProgress(value=5, max=10)
bar.add_class("t-bar")
full = W.FloatProgress(value=10.0)  # ipywidgets' default max (10.0) is not sent: the page knows it
full.add_class("t-full")
tabs = W.Tab([W.Label(HOSTILE), W.HTML("<b class='t-bold'>bold</b>")], titles=("one", "two"))
tabs.add_class("t-tabs")
W.VBox([text, button, pick, tick, slider, bar, full, tabs])
"""
READ = "print(seen, repr(pick.value), tick.value, tabs.selected_index)"
CHANGE = "text.value = 'Grace'\nbar.value = 9\nbutton.disabled = True\nbutton.layout.display = 'none'"


def test_every_control_is_drawn_used_and_followed_and_hostile_text_stays_text(notebook: OpenNotebook) -> None:
    page = notebook("toolkit.ipynb", [BUILD, READ, CHANGE])
    page.run_cell(0)
    out = page.output(0)
    expect(out.locator(".t-text input")).to_be_visible(timeout=EXPECT_MS)
    for css in (".t-button", ".t-pick select", ".t-tick input", ".t-slider input", ".t-bar progress"):
        expect(out.locator(css)).to_have_count(1)
    expect(out.locator(".mcpnb-ui-unsupported")).to_have_count(0)
    full = out.locator(".t-full progress")
    assert full.evaluate("p => p.value === p.max && p.max === 10"), "a full bar is drawn full"
    expect(out.locator(".t-button")).to_contain_text(HOSTILE)  # as text, not markup
    expect(out.locator(".t-tick")).to_contain_text(HOSTILE)
    expect(out.locator(".t-pick option").first).to_have_text(HOSTILE)
    expect(out.locator(".t-tabs [role=tab]")).to_have_count(2)
    expect(out.locator(".mcpnb-ui-label", has_text=HOSTILE)).to_be_visible()  # the first tab's label
    expect(out.locator("img")).to_have_count(0)

    out.locator(".t-text input").fill("Ada")  # typed, then clicked at once: the value goes first
    out.locator(".t-button").click()
    out.locator(".t-pick select").select_option("b")
    out.locator(".t-tick input").check()
    out.locator(".t-tabs [role=tab]", has_text="two").click()
    expect(out.locator(".t-bold")).to_be_visible(timeout=EXPECT_MS)
    page.run_cell(1)
    expect(page.output(1)).to_contain_text("['Ada'] 'b' True 1", timeout=EXPECT_MS)

    page.run_cell(2)  # the kernel changes them: the page follows
    expect(out.locator(".t-text input")).to_have_value("Grace", timeout=EXPECT_MS)
    expect(out.locator(".t-bar progress")).to_have_attribute("value", "9", timeout=EXPECT_MS)
    expect(out.locator(".t-button")).to_be_hidden(timeout=EXPECT_MS)
    assert page.page.evaluate("() => window.__pwned") is None
    page.keep(out, "toolkit.png", gallery=False)

    # The host's theme is the panel's: JupyterLab's dark theme gives light text on a dark field.
    field = out.locator(".t-text input")
    assert _luminance(field, "color") < _luminance(field, "background-color")  # light theme first
    page.page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})"
    )
    expect(page.page.locator("body[data-jp-theme-light='false']")).to_have_count(1, timeout=EXPECT_MS)
    page.page.wait_for_function(
        "e => { const c = getComputedStyle(e).color.match(/\\d+/g).map(Number);"
        " return c[0] + c[1] + c[2] > 382; }",
        arg=field.element_handle(),
        timeout=EXPECT_MS,
    )
    assert _luminance(field, "color") > _luminance(field, "background-color")
    page.keep(out, "toolkit-dark.png", gallery=False)


def _luminance(element: Any, prop: str) -> float:
    """The sum of an element's computed colour's red, green and blue (0 black to 765 white)."""
    rgb = element.evaluate(f"e => getComputedStyle(e).getPropertyValue('{prop}')")
    return float(sum(int(part) for part in re.findall(r"\d+", rgb)[:3]))
