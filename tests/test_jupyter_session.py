"""The top layer's Session and Group (issue #27): what users reach opens widgets, the notebook
layer's classes do not, and the notebook layer's connect()/connect_all() hand out the top classes
once mcp_notebook.jupyter is imported (the face and %load_ext import it)."""

from __future__ import annotations

import subprocess
import sys

import mcp_notebook
from mcp_notebook import jupyter, notebook
from tests.conftest import demo_server

WIDGET_METHODS = (
    "explorer", "status_widget", "resources_widget", "prompts_widget", "log_widget",
    "tasks_widget", "dashboard", "app", "aapp", "roots_widget",
)  # fmt: skip


def test_the_face_hands_out_the_top_classes() -> None:
    assert mcp_notebook.Session is jupyter.Session
    assert mcp_notebook.Group is jupyter.Group
    assert issubclass(jupyter.Session, notebook.Session)
    assert issubclass(jupyter.Group, notebook.Group)
    assert jupyter.Group.session_class is jupyter.Session
    for method in WIDGET_METHODS:
        assert callable(getattr(jupyter.Session, method))
        assert not hasattr(notebook.Session, method)  # the notebook layer opens no widgets
    for method in ("explorer", "status_widget", "log_widget"):
        assert callable(getattr(jupyter.Group, method))
        assert not hasattr(notebook.Group, method)


def test_notebook_connect_and_connect_all_give_sessions_that_open_widgets(no_leaked_processes) -> None:
    # The magics call the notebook layer's connect()/connect_all(): they must give the top classes.
    from mcp_notebook import connect, connect_all

    with connect(demo_server(), show_progress=False, dialogs=False, register=False) as session:
        assert type(session) is jupyter.Session
    with connect_all({"mcpServers": {"demo": {"command": demo_server()[0], "args": demo_server()[1:]}}},
                     show_progress=False, dialogs=False, register=False) as group:  # fmt: skip
        assert type(group) is jupyter.Group
        assert type(group["demo"]) is jupyter.Session


def test_the_notebook_layer_alone_imports_no_widgets_and_hands_out_its_own_classes() -> None:
    code = (
        "import sys\n"
        "from mcp_notebook.notebook import Group, Session, connect, connect_all\n"
        "from mcp_notebook.notebook import _group, _session\n"
        "assert _session.session_class() is Session and _group.group_class() is Group\n"
        "assert not [m for m in sys.modules if m.startswith(('mcp_notebook.widgets', 'mcp_notebook.jupyter'))]\n"  # noqa: E501
        "import mcp_notebook.jupyter as top\n"
        "assert _session.session_class() is top.Session and _group.group_class() is top.Group\n"
        "assert not [m for m in sys.modules if m.startswith('mcp_notebook.widgets')]\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_live_view_draws_with_the_factory_the_top_session_hands_in(no_leaked_processes) -> None:
    widget_view = "application/vnd.jupyter.widget-view+json"
    # the notebook layer's own Session: no widget factory, so the HTML picture only
    with notebook.Session(demo_server(), show_progress=False, dialogs=False, register=False) as plain:
        bundle = plain.live_frame("tools")._repr_mimebundle_()
        assert widget_view not in bundle
        assert "<table" in bundle["text/html"]
    with jupyter.Session(demo_server(), show_progress=False, dialogs=False, register=False) as top:
        view = top.live_frame("tools")
        assert widget_view in view._repr_mimebundle_()
        assert type(view.widget).__name__ == "LiveViewWidget"


def test_a_sessions_card_is_live_and_counts_the_calls_made_after_it_is_shown(no_leaked_processes) -> None:
    # issue #38: the card was a picture taken when shown, "calls 0" after the notebook's calls
    import re

    from tests.widget_helpers import wait_for

    def calls(value: str) -> str | None:
        found = re.search(r">calls</th>\s*<td[^>]*>(\d+)</td>", value)
        return found.group(1) if found else None

    widget_view = "application/vnd.jupyter.widget-view+json"
    with jupyter.Session(demo_server(), show_progress=False, dialogs=False, register=False) as top:
        bundle = top._repr_mimebundle_()
        assert widget_view in bundle  # the live card, with the picture and the text beside it
        assert "MCP session" in bundle["text/html"]
        assert bundle["text/plain"] == repr(top)
        card = top._live_card()
        assert top._live_card() is card  # one card a session, however often it is shown
        assert calls(card.card.value) == "0"
        top.call_tool("add", {"a": 1, "b": 2})
        wait_for(lambda: calls(card.card.value) == "1", 10, "the card counting the call")
    with notebook.Session(demo_server(), show_progress=False, dialogs=False, register=False) as plain:
        assert not hasattr(plain, "_live_card")  # the notebook layer's own: its picture only


def test_no_widget_reaches_into_the_engine_or_writes_the_model() -> None:
    # Widgets start work with the public session.spawn()/group.spawn() and leave the model to the
    # notebook layer (AppRun writes an app's log); issue #27 removed the 13 `._engine` reaches.
    from pathlib import Path

    widgets = Path(mcp_notebook.__file__).parent / "widgets"
    for source in sorted(widgets.glob("*.py")):
        text = source.read_text()
        assert "._engine" not in text, source.name
        assert "model.append(" not in text, source.name
        assert "model.update(" not in text, source.name
