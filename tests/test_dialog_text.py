"""A dialog's text form says what was asked and what was answered (issue #37, item 2a).

In a terminal, or a notebook read where widgets cannot run, a dialog used to be ipywidgets' raw
``VBox(children=(HTML(...), ...))``. Its ``text/plain`` is now the question and the answer, with
the server's strings printable and a password the user typed never shown; the dialog a cell's
call opens updates its output once answered, so a saved notebook keeps the answer.
"""

from __future__ import annotations

import contextlib
import time
from queue import Empty

import pytest

pytest.importorskip("ipywidgets")

from mcp_notebook.widgets._dialogs import Dialog, NotebookDialogs

from .conftest import demo_server
from .panel_comms import PanelsOverComms
from .raises import raises_mcp
from .test_kernel import Kernel
from .test_kernel import kernel as kernel  # the real-kernel fixture
from .test_widgets_dialogs import User, _run_handler
from .widget_helpers import HOSTILE
from .widget_helpers import assert_escaped as _assert_escaped

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

TERMINAL = "\x1b]0;pwned\x07\u202e"  # retitles a terminal, then reverses the text after it
PASSWORD = "hunter2-very-secret"


def _text_plain(dialog: Dialog) -> str:
    data = dialog.widget._repr_mimebundle_()
    data = data[0] if isinstance(data, tuple) else data
    text = data["text/plain"]
    assert text == repr(dialog.widget)
    assert "VBox(" not in text, text
    assert "children=" not in text, text
    assert "\x1b" not in text, text
    assert "\u202e" not in text, text
    _assert_escaped(data.get("text/html", ""))
    return str(text)


def test_an_answered_forms_text_says_what_was_asked_and_answered() -> None:
    dialogs = NotebookDialogs(f"demo {TERMINAL}", output=lambda widget: None)
    schema = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "pin": {"type": "string", "format": "password"}},
    }
    params = {"message": f"Who are you? {TERMINAL} {HOSTILE}", "requestedSchema": schema}
    pending: list[str] = []

    def act(dialog: Dialog) -> None:
        pending.append(repr(dialog.widget))  # checked below: a failure here would hang the call
        dialog.form.set_value({"name": "Ada", "pin": PASSWORD})
        dialog.accept_button.click()

    user = User(dialogs, act)
    result = _run_handler(dialogs.elicit, params)
    dialog = user.done()
    assert result == {"action": "accept", "content": {"name": "Ada", "pin": PASSWORD}}

    asked = "MCP demo \\x1b]0;pwned\\x07\\u202e asks for input: Who are you? \\x1b]0;pwned\\x07\\u202e"
    assert pending[0].startswith(asked), pending
    assert pending[0].endswith("(waiting for an answer)"), pending
    text = _text_plain(dialog)
    assert text.startswith(asked), text
    assert 'Accepted; sent {"name": "Ada", "pin": "***"}' in text, text
    assert PASSWORD not in text
    assert PASSWORD not in dialog.answer.value, "the dialog shows a typed password"


def test_url_and_sampling_dialogs_have_text_forms_too() -> None:
    dialogs = NotebookDialogs("demo", output=lambda widget: None)
    url = "https://login.example.org/start?id=42"
    user = User(dialogs, lambda dialog: dialog.open_button.click())
    _run_handler(dialogs.elicit, {"mode": "url", "message": "Please sign in", "url": url})
    text = _text_plain(user.done())
    assert text.startswith(f"MCP demo asks you to open a web page: Please sign in (the page: {url})"), text
    assert f"You agreed to open the page: {url}" in text, text

    messages = [{"role": "user", "content": {"type": "text", "text": f"Sum up {TERMINAL}"}}]
    user = User(dialogs, lambda dialog: dialog.reject_button.click())
    with raises_mcp("cancelled", match="rejected"):
        _run_handler(dialogs.sample, {"messages": messages, "maxTokens": 10})
    text = _text_plain(user.done())
    assert "asks for a model reply (sampling): 1 message, the last: Sum up \\x1b]0;pwned" in text, text
    assert text.endswith("Rejected."), text


def test_a_cells_dialog_keeps_its_answer_in_the_cells_output(kernel: Kernel) -> None:
    """``%mcp call`` asks through a dialog under the cell; once answered, the cell's output (what
    a saved notebook keeps) says what was asked and answered."""
    kernel.run_ok(f"%load_ext mcp_notebook\n%mcp connect demo -- {' '.join(demo_server())}\n")
    client = kernel.client
    asking = client.execute("%mcp call ask_user_name\n")
    page = PanelsOverComms(client)
    asked = "asks for input: Hi! What is your name?"
    shown: list[str] = []  # the dialog's text/plain as displayed, then as updated
    updated: list[str] = []
    deadline = time.monotonic() + 60  # a hang guard only
    accept = field = None
    while time.monotonic() < deadline and not (accept and field and shown):
        with contextlib.suppress(Empty):
            message = client.get_iopub_msg(timeout=1)
            page.saw(message)
            text = message["content"].get("data", {}).get("text/plain", "")
            if message["msg_type"] == "display_data" and asked in text:
                assert message["parent_header"].get("msg_id") == asking, "shown under another cell"
                shown.append(text)
        accept = page.find("ButtonModel", "mcpnb-accept")
        field = page.find("TextModel", "mcpnb-input")
    assert accept, "no Accept button was displayed"
    assert field, "no name field was displayed"
    assert shown, "the dialog's text was not displayed in the running cell"
    assert shown[0].endswith("(waiting for an answer)"), shown
    page.set(field, value="Ada")
    page.click(accept)
    finished = False
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not finished:
        with contextlib.suppress(Empty):
            message = client.get_iopub_msg(timeout=1)
            text = message["content"].get("data", {}).get("text/plain", "")
            if message["msg_type"] == "update_display_data" and asked in text:
                updated.append(text)
            finished = (
                message["msg_type"] == "status"
                and message["content"]["execution_state"] == "idle"
                and message["parent_header"].get("msg_id") == asking
            )
    assert finished, "the call did not end"
    assert updated, "the answered dialog did not update the cell's output"
    assert 'Accepted; sent {"name": "Ada"}' in updated[-1], updated
    kernel.run_ok("%mcp disconnect --all\n")
