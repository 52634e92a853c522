"""Server text in every widget shows its control and bidi characters as escapes (issue #35).

A tool result or argument holding U+202E reversed the rest of the explorer's history row ("ok 12
ms" read "sm 21 ko") and the result view, although the text forms already showed such characters
as ``\\u202e`` (:func:`mcp_notebook.protocol.printable`, the one rule). A real stdio server of ours
(``tests/servers/many_server.py --hostile``) puts a right-to-left override, a right-to-left mark,
NUL and a terminal escape in a tool's name and description, a resource's, a prompt's, and in
everything it returns (a call's text, a read, a prompt's messages, a log message). Every text a
panel shows (HTML values, labels, button captions, tooltips, choices) must hold them escaped.
"""

from __future__ import annotations

import html
import re
import threading
from typing import Any

import pytest

pytest.importorskip("ipywidgets")

import ipywidgets as W

import mcp_notebook
from mcp_notebook import ToolResult
from mcp_notebook.widgets._dialogs import NotebookDialogs

from .conftest import python_server
from .widget_helpers import find, history_rows, wait_for, walk

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

HOSTILE = "\u202eevil\u200f\x00\x1b[2J"  # what many_server puts everywhere with --hostile
SHOWN = "\\u202eevil\\u200f\\x00\\x1b[2J"
#: a raw control or bidi character other than a line break or a tab
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
TOOL = f"tool_000000{HOSTILE}"


def _texts(widget: Any) -> list[str]:
    """Every text a person sees in ``widget``'s tree: HTML and labels, captions, tooltips and
    choices (not what the user types into a field: that is the user's own text)."""
    texts: list[str] = []
    for w in walk(widget):
        if isinstance(w, W.HTML | W.HTMLMath | W.Label):
            texts.append(html.unescape(w.value))
        for trait in ("description", "tooltip", "placeholder"):
            value = getattr(w, trait, None)
            if isinstance(value, str):
                texts.append(value)
        labels = getattr(w, "_options_labels", None)
        if labels:
            texts.extend(labels)
        if isinstance(w, W.Combobox):
            texts.extend(w.options)
    return texts


def assert_escaped(widget: Any, *, where: str) -> None:
    """No raw control or bidi character anywhere in ``widget``, and the hostile text shown escaped."""
    texts = _texts(widget)
    raw = [t for t in texts if RAW.search(t)]
    assert not raw, f"{where}: raw control or bidi characters in {raw[:3]!r}"
    assert any(SHOWN in t for t in texts), f"{where}: the escaped text is not shown"


@pytest.fixture(scope="module")
def session() -> Any:
    argv = python_server("many_server.py", "3", "3", "3", "--hostile")
    with mcp_notebook.connect(argv, show_progress=False, dialogs=False) as s:
        model = s.model
        wait_for(
            lambda: len(model.tools) == 4 and len(model.resources) == 3 and len(model.prompts) == 3,
            30,
            "lists",
        )
        yield s


def test_the_explorer_shows_a_hostile_tool_its_result_and_its_history_escaped(session: Any) -> None:
    ex = session.explorer()
    try:
        (button,) = [b for b in find(ex, "mcpnb-tool") if b.description.startswith("tool_000000")]
        assert button.description == f"tool_000000{SHOWN}"
        assert SHOWN in button.tooltip
        button.click()
        assert ex.selected is not None
        assert ex.selected.name == TOOL
        assert SHOWN in html.unescape(ex.title.value)
        assert SHOWN in html.unescape(ex.description.value)

        ex.form.set_value({"text": f"left{HOSTILE}right"})  # an argument holding them too
        ex.call()
        result = ex.wait(15)
        assert isinstance(result, ToolResult), result
        assert result.text.startswith(f"called {TOOL}{HOSTILE}")  # the result itself stays the server's
        wait_for(lambda: history_rows(ex), 10, "the history row")
        (row,) = history_rows(ex)
        # the arguments are JSON (which escapes NUL and ESC itself), the bidi ones made visible
        arguments = "left\\u202eevil\\u200f\\u0000\\u001b[2Jright"
        assert f'tool_000000{SHOWN}(text="{arguments}")  ok  ' in row.text
        assert not RAW.search(row.text)
        assert "left\\u202eevil\\u200f" in ex._history.pick.label
        assert not RAW.search(repr(ex))
        assert SHOWN in repr(ex)
        assert_escaped(ex.result_box, where="the result view")
        assert_escaped(ex, where="the explorer")
        assert not RAW.search(ex.snapshot_html())
    finally:
        ex.close()


def test_the_resource_browser_shows_a_hostile_resource_and_its_contents_escaped(session: Any) -> None:
    panel = session.resources_widget()
    try:
        assert SHOWN in html.unescape(panel.table.value)
        assert any(SHOWN in label for label in panel.resource_list._options_labels)
        uri = f"mem://r/0{HOSTILE}"
        panel.select(uri)
        contents = panel.read(uri)
        assert contents is not None
        assert contents.text == f"read {uri}{HOSTILE}"
        assert_escaped(panel.view, where="the read view")
        assert_escaped(panel, where="the resource browser")
    finally:
        panel.close()


def test_the_prompt_panel_shows_a_hostile_prompt_and_its_messages_escaped(session: Any) -> None:
    panel = session.prompts_widget()
    try:
        panel.select(f"prompt_000000{HOSTILE}")
        assert SHOWN in html.unescape(panel.description.value)
        assert panel.prompt_list.label == f"prompt_000000{SHOWN}"
        result = panel.get()
        assert result is not None
        assert_escaped(panel.messages, where="the prompt's messages")
        assert_escaped(panel, where="the prompt panel")
    finally:
        panel.close()


def test_the_log_panel_shows_a_hostile_log_message_escaped(session: Any) -> None:
    log = session.log_widget()
    try:
        session.call_tool("tool_000001", {})  # the server logs a hostile message during each call
        wait_for(lambda: "said" in log.table.value, 10, "the log row")
        assert_escaped(log, where="the log panel")
    finally:
        log.close()


def test_an_elicitation_dialog_shows_the_servers_question_escaped() -> None:
    dialogs = NotebookDialogs("many", output=lambda _widget: None)
    seen: list[Any] = []

    def answer() -> None:
        wait_for(lambda: dialogs.open_dialogs, 15, "the dialog")
        dialog = dialogs.open_dialogs[0]
        try:
            assert_escaped(dialog.widget, where="the dialog")  # before it is answered
            seen.append(dialog)
        finally:
            dialog.accept_button.click()

    argv = python_server("many_server.py", "1", "--hostile")
    with mcp_notebook.connect(argv, show_progress=False, dialogs=dialogs) as s:
        user = threading.Thread(target=answer, daemon=True)
        user.start()
        result = s.call_tool("ask", {}, timeout=30)
        user.join(15)
    assert seen, "the dialog did not show the question escaped (see the warning above)"
    assert '"name": "Lin"' in result.text  # the form was sent as filled in
    labels = [label for w in walk(seen[0].widget) for label in getattr(w, "_options_labels", ())]
    assert f"pick{SHOWN}" in labels
