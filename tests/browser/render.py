"""Drawing a panel's tree with the real renderer in headless Chromium, without JupyterLab.

Why: a JupyterLab page takes many seconds to open and a kernel to feed it; what a panel looks like
is a function of its tree alone (``panel.tree()``: what its view is sent) and of ``widgets/panel.js``
and ``widgets/panel.css``. So one blank page (``page.set_content``) holds the stylesheet and loads
the renderer as the panel's loader does (``_root.py``'s ``_BOOT``: an ES module from a blob URL of
its text; a ``file://`` module import is blocked), mounts it on a stub model that records what the
view sends, and feeds it the tree as a ``"tree"`` message. A panel is drawn in milliseconds, so a
test can draw every panel against one browser.

:func:`render` returns the drawn panel as text: one element per line, indented, its attributes
sorted and the state a property holds but an attribute does not (a text box's value, a ticked
box, a chosen option) written as ``.value``, ``.checked``, ``.selected``; text escaped, so markup
that came through as text reads ``&lt;img`` and an element made from it reads ``<img``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

from mcp_notebook.widgets._static import static_path

from .notebook import ACTION_TIMEOUT, CHROMIUM_ARGS, VIEWPORT, chromium

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Dialog, Page, Playwright

__all__ = ["Drawn", "PanelPage", "panel_page_fixture"]

VIEW = "snapshot"  # the view id the tree is addressed to

# The page: the stylesheet, a host, and a module script that loads the renderer the way the
# panel's loader does and offers window.mcpnbDraw(tree) (a stub model records what is sent).
PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><style>{css}</style></head>
<body><div id="host"></div>
<script type="module">
window.mcpnbLoad = async (js) => {{
  const url = URL.createObjectURL(new Blob([js], {{ type: "text/javascript" }}));
  try {{ window.mcpnbRenderer = await import(url); }} finally {{ URL.revokeObjectURL(url); }}
  return typeof window.mcpnbRenderer.mount;
}};
window.mcpnbDraw = (view, tree) => {{
  if (window.mcpnbMounted) window.mcpnbMounted.dispose();
  const host = document.getElementById("host");
  host.replaceChildren();
  host.className = "mcpnb-panel";  // what the loader puts on the anywidget's element
  const sent = (window.mcpnbSent = []);
  const handlers = new Set();
  const model = {{
    on: (name, handler) => {{ if (name === "msg:custom") handlers.add(handler); }},
    off: (name, handler) => {{ handlers.delete(handler); }},
    send: (message) => {{ sent.push(JSON.parse(JSON.stringify(message))); }},
    get: () => undefined,
  }};
  window.mcpnbMounted = window.mcpnbRenderer.mount({{ model, el: host, view }});
  window.mcpnbMounted.receive({{ t: "tree", for: view, seq: 1, ...tree }});
}};
window.mcpnbReady = true;
</script></body></html>
"""

# The drawn panel as lines: an element per line, indented two spaces a level.
SERIALISE = """
() => {
  const escape = (s) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const quote = (s) => escape(s).replace(/"/g, "&quot;");
  const lines = [];
  const VOID = new Set(["input", "img", "br", "hr", "col", "wbr", "source", "track"]);
  function open(node) {
    const parts = [node.localName];
    const names = node.getAttributeNames().sort();
    for (const name of names) parts.push(`${name}="${quote(node.getAttribute(name))}"`);
    const tag = node.localName;
    if ((tag === "input" && node.type !== "checkbox" && node.type !== "radio") || tag === "textarea") {
      if (node.value) parts.push(`.value="${quote(node.value)}"`);
    }
    if (tag === "input" && node.checked) parts.push(".checked");
    if (tag === "option" && node.selected) parts.push(".selected");
    return `<${parts.join(" ")}>`;
  }
  function walk(node, depth) {
    const pad = "  ".repeat(depth);
    const kids = [...node.childNodes].filter(
      (k) => k.nodeType === Node.ELEMENT_NODE || (k.nodeType === Node.TEXT_NODE && k.data.trim())
    );
    const tag = node.localName;
    const empty = VOID.has(tag) ? "" : `</${tag}>`;
    if (kids.length === 0) { lines.push(`${pad}${open(node)}${empty}`); return; }
    if (kids.length === 1 && kids[0].nodeType === Node.TEXT_NODE) {
      lines.push(`${pad}${open(node)}${escape(kids[0].data.trim())}</${tag}>`);
      return;
    }
    lines.push(pad + open(node));
    for (const kid of kids) {
      if (kid.nodeType === Node.TEXT_NODE) lines.push(`${pad}  ${escape(kid.data.trim())}`);
      else walk(kid, depth + 1);
    }
    lines.push(`${pad}</${tag}>`);
  }
  const root = document.querySelector("#host > .mcpnb-ui");
  if (root) walk(root, 0);
  return {
    lines,
    unsupported: document.querySelectorAll("#host .mcpnb-ui-unsupported").length,
    sent: window.mcpnbSent,
  };
}
"""

# Elements that only markup a server smuggled in could have made: none of our panels writes them.
FOREIGN = "script, iframe, object, embed, img[src='x'], [onerror], [onload], [onclick]"


@dataclass
class Drawn:
    """One panel as the renderer drew it."""

    lines: list[str]
    unsupported: int  # elements of a control kind the renderer does not draw
    foreign: list[str]  # outer HTML of elements that only a server's string could have made
    sent: list[Any] = field(default_factory=list)  # what the view sent to the kernel
    errors: list[str] = field(default_factory=list)  # uncaught errors, console errors, alerts

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


class PanelPage:
    """One page with the renderer loaded; :meth:`render` draws a tree in it (the last is replaced)."""

    def __init__(self, browser: Browser) -> None:
        renderer = static_path("panel.js").read_text(encoding="utf-8")
        css = static_path("panel.css").read_text(encoding="utf-8")
        self.context = browser.new_context(viewport=VIEWPORT)
        self.context.set_default_timeout(ACTION_TIMEOUT * 1000)
        self.page: Page = self.context.new_page()
        self.console: list[str] = []
        self.page.on("pageerror", lambda error: self.console.append(f"pageerror: {error}"))
        self.page.on(
            "console",
            lambda message: (
                self.console.append(f"console: {message.text}") if message.type == "error" else None
            ),
        )
        self.page.on("dialog", self._dialog)
        self.page.set_content(PAGE.format(css=css.replace("</", "<\\/")))
        self.page.wait_for_function("() => window.mcpnbReady === true")
        loaded = self.page.evaluate("(js) => window.mcpnbLoad(js)", renderer)
        assert loaded == "function", f"widgets/panel.js exports no mount(): {loaded}"

    def _dialog(self, dialog: Dialog) -> None:
        """An alert() is script a server's string ran: recorded as an error, then dismissed."""
        self.console.append(f"dialog: {dialog.type} {dialog.message!r}")
        dialog.dismiss()

    def render(self, tree: dict[str, Any]) -> Drawn:
        """Draws ``tree`` (``panel.tree()``: ``top`` and ``models``) and reads what was drawn."""
        start = len(self.console)
        self.page.evaluate("([view, tree]) => window.mcpnbDraw(view, tree)", [VIEW, tree])
        got = self.page.evaluate(SERIALISE)
        foreign = self.page.eval_on_selector_all(
            f"#host :is({FOREIGN})", "(nodes) => nodes.map((n) => n.outerHTML)"
        )
        return Drawn(
            lines=[str(line) for line in got["lines"]],
            unsupported=int(got["unsupported"]),
            foreign=[str(item) for item in foreign],
            sent=list(got["sent"] or []),
            errors=self.console[start:],
        )

    def close(self) -> None:
        self.context.close()


@pytest.fixture(scope="module", name="panel_page")
def panel_page_fixture(playwright: Playwright) -> Iterator[PanelPage]:
    """One Chromium and one page for the module (each panel is drawn in the same page, replacing
    the last): fixtures.py's ``browser`` is a fresh Chromium per test, seconds each."""
    browser = playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS, headless=True)
    try:
        page = PanelPage(browser)
        yield page
        page.close()
        late = [line for line in page.console if line.startswith(("dialog:", "pageerror:"))]
        assert not late, f"script ran in the panels' page (a server's string?): {late}"
    finally:
        browser.close()
