"""Paste-back sign-in in a notebook: the dialog under the running cell (issue #40).

In process, the dialog is answered by a thread that plays the person (opens the link, approves at
our authorization server, pastes the address the browser landed on, clicks Sign in). In a real
kernel (jupyter_client, no browser) a cell blocked in ``connect()`` gets the pasted address
through comm messages, as a page sends them (:mod:`tests.panel_comms`), and then calls a
protected tool; the pasted address is then nowhere a saved notebook or the history keeps.
"""

from __future__ import annotations

import contextlib
import json
import sys
import threading
import time
from collections.abc import Iterator
from queue import Empty
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

pytest.importorskip("ipywidgets")
pytest.importorskip("mcp")

from mcp_notebook import Client
from mcp_notebook.auth import MemoryTokenStore, OAuth
from mcp_notebook.notebook._dialogs import offer_sign_in
from mcp_notebook.widgets._dialogs import Dialog, NotebookDialogs

from .http_peers import HttpPeer, _python_peer
from .panel_comms import PanelsOverComms
from .raises import raises_mcp
from .test_auth_paste import OAUTH_SERVER, approve
from .test_kernel import Kernel
from .test_kernel import kernel as kernel  # the real-kernel fixture

pytestmark = pytest.mark.usefixtures("no_leaked_processes")


@pytest.fixture(scope="module")
def server() -> Iterator[HttpPeer]:
    with _python_peer("oauth", [sys.executable, str(OAUTH_SERVER)]) as peer:
        yield peer


def _code(landed: str) -> str:
    return parse_qs(urlsplit(landed).query)["code"][0]


class Person:
    """Answers each sign-in dialog from a thread of its own, as a person at the notebook would."""

    def __init__(self, dialogs: NotebookDialogs, *, cancel: bool = False) -> None:
        self.landed: list[str] = []
        self.dialogs: list[Dialog] = []
        self.cancel = cancel
        dialogs.on_open(lambda dialog: threading.Thread(target=self._answer, args=(dialog,)).start())

    def _answer(self, dialog: Dialog) -> None:
        self.dialogs.append(dialog)
        if self.cancel:
            dialog.cancel_button.click()
            return
        landed = approve(dialog.url)
        self.landed.append(landed)
        dialog.paste.value = landed
        dialog.sign_in_button.click()


@pytest.mark.anyio
async def test_the_dialog_takes_the_pasted_address_and_keeps_no_copy(server: HttpPeer) -> None:
    shown: list[Any] = []
    dialogs = NotebookDialogs("oauth demo", output=shown.append)
    store = MemoryTokenStore()
    auth = OAuth(flow="paste", store=store)
    unhook = offer_sign_in(auth, dialogs)
    person = Person(dialogs)
    async with Client(server.url, auth=auth) as client:
        result = await client.call_tool("add", {"a": 2, "b": 3})
    unhook()
    assert "5" in str(result)
    assert await store.get_tokens(server.url) is not None
    [dialog] = person.dialogs
    assert shown == [dialog.widget]
    assert "mcpnb-sign-in" in dialog.widget._dom_classes
    message = dialog.body.children[0].value
    assert 'class="mcpnb-sign-in-link"' in message
    assert 'rel="noopener noreferrer"' in message
    code = _code(person.landed[0])
    assert dialog.paste.value == ""  # cleared as it was read
    assert dialog.paste.disabled
    assert dialog.result == {}  # the handler took the text out
    for seen in (
        dialog.text(),
        repr(dialog.widget),
        dialog.answer.value,
        json.dumps(dialog.paste.get_state()),
    ):
        assert code not in seen
    assert "Pasted the address" in dialog.text()


@pytest.mark.anyio
async def test_cancel_ends_the_sign_in_with_a_clear_error_and_no_token(server: HttpPeer) -> None:
    dialogs = NotebookDialogs("oauth demo", output=lambda widget: None)
    store = MemoryTokenStore()
    auth = OAuth(flow="paste", store=store)
    offer_sign_in(auth, dialogs)
    Person(dialogs, cancel=True)
    with raises_mcp("auth", match="cancelled"):
        async with Client(server.url, auth=auth):
            pass
    assert await store.get_tokens(server.url) is None


def test_without_dialogs_or_oauth_nothing_is_offered() -> None:
    offer_sign_in("a-bearer-token", NotebookDialogs())()
    offer_sign_in(OAuth(), None)()


# --- a real kernel ------------------------------------------------------------------------------


def test_a_kernel_signs_in_by_paste_back_and_calls_a_protected_tool(kernel: Kernel, server: HttpPeer) -> None:
    """The loopback listener is out of the browser's reach (a JupyterHub, by its environment): the
    cell blocked in ``connect()`` shows the sign-in dialog; the "page" pastes the address the
    browser landed on and clicks Sign in over comms; the session calls a protected tool."""
    kernel.run_ok(
        "import os, json\n"
        "import mcp_notebook\n"
        "from mcp_notebook.auth import OAuth, MemoryTokenStore\n"
        "from mcp_notebook.auth._where import in_jupyter_kernel\n"
        "assert in_jupyter_kernel()  # the auto rule sees the kernel it runs in\n"
        "os.environ['JUPYTERHUB_USER'] = 'ada'\n"
        "store = MemoryTokenStore()\n"
    )
    client = kernel.client
    cell = client.execute(
        f"session = mcp_notebook.connect({server.url!r}, auth=OAuth(store=store), show_progress=False)\n"
        "print(json.dumps({'sum': session.call_tool('add', {'a': 2, 'b': 3}).text}))\n"
    )
    page = PanelsOverComms(client)
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + 60
    paste = submit = None
    while time.monotonic() < deadline:
        try:
            message = client.get_iopub_msg(timeout=1)
        except Empty:
            continue
        seen.append(message)
        page.saw(message)
        paste = page.find("PasswordModel", "mcpnb-sign-in-paste")
        submit = page.find("ButtonModel", "mcpnb-sign-in-submit")
        if paste and submit and page.displayed:
            break
    else:
        shown = [(m["msg_type"], str(m["content"])[:300]) for m in seen if m["msg_type"] != "comm_msg"]
        raise AssertionError(f"the sign-in dialog was not displayed in the running cell: {shown}")
    assert paste is not None
    assert submit is not None
    assert page.panel_of("VBoxModel", "mcpnb-sign-in") in page.displayed
    link = next(
        state["value"]
        for state in page.panels[paste[0]].values()
        if "mcpnb-sign-in-message" in state.get("_dom_classes", ())
    )
    href = link.split('href="', 1)[1].split('"', 1)[0].replace("&amp;", "&")
    landed = approve(href)
    page.set(paste, value=landed)
    page.click(submit)

    reply = None
    deadline = time.monotonic() + 60
    while reply is None and time.monotonic() < deadline:
        with contextlib.suppress(Empty):
            reply = client.get_shell_msg(timeout=1)
    assert reply is not None
    assert reply["parent_header"]["msg_id"] == cell
    assert reply["content"]["status"] == "ok", reply["content"]
    deadline = time.monotonic() + 10
    printed = ""
    while '"sum"' not in printed and time.monotonic() < deadline:
        with contextlib.suppress(Empty):
            message = client.get_iopub_msg(timeout=1)
            seen.append(message)
            page.saw(message)
            if message["msg_type"] == "stream" and message["parent_header"].get("msg_id") == cell:
                printed += message["content"]["text"]
    assert json.loads(printed.strip().splitlines()[-1]) == {"sum": "5.0"}

    code = _code(landed)
    # What the page has now, and every output a saved notebook keeps, hold no trace of the code.
    assert page.panels[paste[0]][paste[1]].get("value", "") == ""
    outputs = [m for m in seen if m["msg_type"] in ("display_data", "update_display_data", "stream")]
    assert outputs
    assert code not in json.dumps([m["content"] for m in outputs])
    assert code not in json.dumps([m["content"] for m in seen])  # the kernel never sent it back
    after = kernel.run_ok(
        "history = [line for _, _, line in get_ipython().history_manager.get_range()]\n"
        "print(json.dumps({'history': history, 'out': repr(Out)}))\n"
    )
    assert code not in after.stdout
    assert landed not in after.stdout
    kernel.run_ok("session.close()\n")
    stderr = kernel.kernel_stderr()
    assert "Traceback" not in stderr, stderr
    assert code not in stderr
