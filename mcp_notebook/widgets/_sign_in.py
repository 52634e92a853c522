"""A device sign-in (RFC 8628) shown under the running cell: the code, the link, a copy button.

Why a panel: in Colab, JupyterHub or a kernel over SSH the person's browser is not on the kernel's
machine, so OAuth signs in with the device grant (``OAuth(flow="device")``): the person opens a
page on any device and types a short code. Printed on stderr that code scrolls away among other
output; here it stands in a box of its own (class ``mcpnb-device-sign-in``) with the page as a
link (the one that fills the code in, ``verification_uri_complete``, when the server gives it), the
code (``mcpnb-device-code``) with a button that copies it in the browser (``mcpnb-copy-code``: the
copy is the page's own, nothing goes through the kernel), and a line (``mcpnb-sign-in-status``)
that says "waiting", then "Signed in." or why not. The notebook layer shows one for each sign-in
(:mod:`mcp_notebook.notebook._sign_in`); the OAuth object never imports this.

Nothing secret is here: the device code stays in the core. The user code, the links and the
server's name are server text, escaped; a link is drawn only for an https (or loopback http) URL,
which the core has already checked.
"""

from __future__ import annotations

import logging
import time
from typing import Any
from urllib.parse import urlsplit

import traitlets

from ..auth._device import DeviceSignIn
from ..auth._discovery import is_loopback_host
from ..display._html import display_url, escape, short
from ..protocol._printable import printable
from . import _ui as W
from ._fallback import Fallback
from ._result_view import html_widget as _html

__all__ = ["DeviceSignInPanel", "show_device_sign_in"]

logger = logging.getLogger("mcp_notebook.widgets")


class _CopyButton(W.Button):
    """A button whose click also copies ``copy_text`` in the browser (widgets/panel.js)."""

    copy_text = traitlets.Unicode("").tag(sync=True)


class _SignInBox(Fallback, W.VBox):
    """The panel's widget: its text form (a terminal, a saved notebook) is the sign-in in words."""

    snapshot_note = "A snapshot of the sign-in, taken when it was shown or ended."

    def __init__(self, panel: DeviceSignInPanel, children: list[W.Widget], **kwargs: Any) -> None:
        super().__init__(children, **kwargs)
        self._panel = panel
        #: The IPython display of it under a cell (None: shown elsewhere, or not yet).
        self.display_handle: Any = None

    def summary(self) -> str:
        return self._panel.text()


def _link(url: str | None, words: str) -> str:
    """An ``<a>`` to ``url`` for an https (or loopback http) URL, else the URL as text."""
    if not url:
        return ""
    parts = urlsplit(url)
    if parts.scheme != "https" and not (parts.scheme == "http" and is_loopback_host(parts.hostname)):
        return str(display_url(url))
    return (
        f'<a href="{escape(url)}" target="_blank" rel="noopener noreferrer" '
        f'class="mcpnb-device-link">{words}</a>'
    )


class DeviceSignInPanel:
    """One device sign-in on show: ``widget`` (what is displayed), ``code`` (the user code's
    HTML), ``copy_button``, ``link``, ``status``; it follows ``sign_in`` to its outcome."""

    def __init__(self, sign_in: DeviceSignIn) -> None:
        self.sign_in = sign_in
        uri, complete = sign_in.verification_uri, sign_in.verification_uri_complete
        code = escape(short(sign_in.user_code, 64))
        expires = time.strftime("%H:%M", time.localtime(sign_in.expires_at))
        self.title = _html(
            f"<b>Sign in</b> for {escape(short(sign_in.server_url, 200))}", "mcpnb-dialog-title"
        )
        opener = _link(complete, "open this link") if complete else ""
        self.link = _html(
            f"<div>Open {_link(uri, str(display_url(uri)))} on any device and enter the code below"
            + (f", or {opener}, which fills the code in" if opener else "")
            + ".</div>",
            "mcpnb-device-uri",
        )
        self.code = _html(
            f'<code style="font-size:1.4em;letter-spacing:0.1em;user-select:all">{code}</code>',
            "mcpnb-device-code",
        )
        self.copy_button = _CopyButton(description="Copy code", tooltip="copy the code to the clipboard")
        self.copy_button.copy_text = sign_in.user_code
        self.copy_button.add_class("mcpnb-copy-code")
        self.status = _html("", "mcpnb-sign-in-status")
        row = W.HBox([self.code, self.copy_button], layout=W.Layout(align_items="center"))
        self.widget = _SignInBox(
            self,
            [self.title, self.link, row, self.status],
            layout=W.Layout(width="100%", border="1px solid #888", padding="4px 8px"),
        )
        self.widget.add_class("mcpnb-device-sign-in")
        self._draw_status(
            f"Waiting for you to sign in at {escape(short(sign_in.issuer, 200))} "
            f"(the code expires at {expires})."
        )
        sign_in.on_change(self._ended)
        if sign_in.outcome != "waiting":  # it ended before this panel followed it
            self._ended(sign_in)

    def text(self) -> str:
        """The sign-in in words (printable, cut short); never the device code, which is not here."""
        line = self.sign_in.instruction
        if self.sign_in.verification_uri_complete:
            line += f" (or open {printable(short(self.sign_in.verification_uri_complete, 300))})"
        outcome = self.sign_in.outcome
        said = {"waiting": "waiting for the sign-in", "signed in": "signed in"}.get(
            outcome, f"not signed in: {printable(short(self.sign_in.message, 300))}"
        )
        return f"{line}\n  {said}"

    def _draw_status(self, html: str) -> None:
        self.status.value = f"<div><i>{html}</i></div>"

    def _ended(self, sign_in: DeviceSignIn) -> None:
        if sign_in.outcome == "signed in":
            self._draw_status("Signed in.")
        else:
            self._draw_status(f"Not signed in: {escape(short(sign_in.message, 500))}")
        self.copy_button.disabled = True
        handle = self.widget.display_handle
        if handle is not None:  # a saved notebook keeps what the display sent: the waiting panel
            try:
                handle.update(self.widget)
            except Exception:
                logger.debug("could not update the sign-in's display", exc_info=True)


def show_device_sign_in(sign_in: DeviceSignIn, write: Any = None) -> DeviceSignInPanel:
    """Show ``sign_in`` in a panel: through ``write`` (a marimo cell's writer), else under the
    running cell (``IPython.display``, which finds the cell from the engine thread too)."""
    panel = DeviceSignInPanel(sign_in)
    if write is not None:
        write(panel.widget)
    else:
        from IPython.display import display

        panel.widget.display_handle = display(panel.widget, display_id=True)
    return panel
