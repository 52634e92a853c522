"""Every panel is a widget: it goes inside any ipywidgets layout, and its state serialises.

Against the real demo server (and a group of two): the explorer sits in an ``HBox`` beside the log,
the dashboard holds status, explorer, tasks, resources and log, a group's explorer sits beside its
board. "Renders" here means what a front end receives: for an ipywidgets layout of the user's, its
embed state, where each of our panels is one anywidget model; for one of our panels, the whole tree
its view is sent when it says hello (mcp_notebook/widgets/_ui).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest

W = pytest.importorskip("ipywidgets")

from ipywidgets.widgets.widget import _instances  # noqa: E402

import mcp_notebook  # noqa: E402
from mcp_notebook import Group, Session  # noqa: E402
from mcp_notebook.widgets._explorer import Explorer  # noqa: E402
from mcp_notebook.widgets._group_panels import GroupExplorer  # noqa: E402
from mcp_notebook.widgets._ui import Virtual  # noqa: E402

from .conftest import demo_server  # noqa: E402
from .fakes import wait_until  # noqa: E402
from .test_notebook_group import RUN_DEMO  # noqa: E402
from .widget_helpers import drawn, find, walk  # noqa: E402

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

VIEW = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    opened = mcp_notebook.connect(demo_server(), show_progress=False, dialogs=False)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture(scope="module")
def group() -> Iterator[Group]:
    # Two spellings of the demo: a group of two servers with the very same command does not come
    # up (both end "closed": the era remembered for one command is shared between them).
    two = [sys.executable, "-c", "import runpy\n" + RUN_DEMO]
    opened = Group({"one": demo_server(), "two": two}, show_progress=False, dialogs=False)
    try:
        wait_until(lambda: all(r["tools"] for r in opened.model.servers), timeout=30)
        yield opened
    finally:
        opened.close()


def _outer(widget: Any) -> Iterator[Any]:
    """``widget`` and what it holds, down to our panels (each one model: its tree is its own)."""
    yield widget
    if not isinstance(widget, Virtual):
        for child in getattr(widget, "children", ()) or ():
            yield from _outer(child)


def _rendered(view: Any) -> dict[str, Any]:
    """What a front end gets for ``view``; every widget below it is in it."""
    if isinstance(view, Virtual):  # one of our panels: its view's tree
        tree = drawn(view)
        json.dumps(tree)
        assert tree["top"] == view.comm.comm_id
        models: dict[str, Any] = tree["models"]
        lost = [w for w in walk(view) if isinstance(w, Virtual) and w.comm.comm_id not in models]
        assert not lost, f"controls not drawn: {lost[:3]}"
        return models
    # a layout of the user's: each child it names is a live model a front end has (each of our
    # panels one anywidget), and each panel draws its own tree
    state = view.get_state()
    json.dumps(state)  # what is sent must be plain JSON
    models: dict[str, Any] = {view.model_id: {"model_name": view._model_name}}
    for ref in state.get("children", []):
        model = _instances[ref.removeprefix("IPY_MODEL_")]
        assert not isinstance(model, Virtual), "a real layout names a model no front end has"
        models[model.model_id] = {"model_name": model._model_name}
        inner = getattr(model, "top", model)  # a panel: the tree it draws
        models.update(_rendered(inner) if inner is not model else _rendered(model))
    return models


def test_the_explorer_goes_in_an_hbox_beside_the_log(session: Session) -> None:
    explorer = session.explorer()
    log = session.log_widget()
    try:
        assert isinstance(explorer, W.DOMWidget)
        assert explorer.widget is explorer  # old code that showed ``.widget`` still works
        box = W.HBox([explorer, log])
        state = _rendered(box)
        assert state[explorer.model_id]["model_name"] == "AnyModel"  # the explorer's panel
        assert _rendered(explorer)[explorer.comm.comm_id]["_model_name"] == "VBoxModel"
        assert "mcpnb-explorer" in explorer._dom_classes
        assert "add" in explorer.tool_names
        explorer.select("add")
        assert explorer.selected is not None
        assert explorer.selected.name == "add"
        assert find(box, "mcpnb-tool-selected")
        assert VIEW in explorer._repr_mimebundle_()
    finally:
        explorer.close()
        log.close()
    assert explorer.comm is None


def test_the_dashboard_holds_status_explorer_log_resources_and_tasks(session: Session) -> None:
    board = session.dashboard()
    try:
        assert isinstance(board.explorer, Explorer)
        parts = [board.status, board.explorer, board.log_view, board.resources, board.tasks]
        inside = {id(w) for w in walk(board)}
        assert all(id(part) in inside for part in parts)
        _rendered(board)
        # The dashboard itself goes in a layout too.
        _rendered(W.VBox([W.HTML("<b>mine</b>"), board]))
    finally:
        board.close()
    assert board.explorer.comm is None
    assert board.comm is None


def test_a_groups_explorer_goes_beside_its_board(group: Group) -> None:
    explorer = group.explorer()
    board = group.status_widget()
    try:
        assert isinstance(explorer, GroupExplorer)
        assert isinstance(explorer, W.DOMWidget)
        box = W.HBox([board, explorer])
        _rendered(box)
        assert "one.add" in explorer.explorer.tool_names
        one = explorer.show("one")
        assert isinstance(one, Explorer)
        assert explorer.box.children == (one,)
        _rendered(box)
    finally:
        explorer.close()
        board.close()
    assert explorer.comm is None


# --- readable without a kernel ------------------------------------------------------------------


def _fallback(widget: Any) -> tuple[str, str]:
    """The ``text/plain`` and ``text/html`` a notebook saves beside the widget view."""
    bundle = widget._repr_mimebundle_()
    assert VIEW in bundle  # a live front end still gets the widget
    return bundle["text/plain"], bundle["text/html"]


def test_every_panel_has_a_readable_line_and_a_static_snapshot(session: Session) -> None:
    panels = {
        "status": session.status_widget(),
        "explorer": session.explorer(),
        "log": session.log_widget(),
        "resources": session.resources_widget(),
        "prompts": session.prompts_widget(),
        "tasks": session.tasks_widget(),
        "roots": session.roots_widget(),
        "dashboard": session.dashboard(),
    }
    try:
        texts = {name: _fallback(panel) for name, panel in panels.items()}
        tools = len(session.model.tools)
        plain, html = texts["status"]
        assert plain.startswith(f"<MCP status: {session.name} ready, modern ")
        assert f"{tools} tools, 0 in flight>" in plain
        assert "ready" in html
        assert "mcpnb-static" in html
        plain, html = texts["explorer"]
        assert plain.startswith(f"<MCP explorer: {session.name}, {tools} tools")
        assert "<code>add</code>" in html
        assert "<code>sales_records</code>" in html
        assert texts["resources"][0].startswith(f"<MCP resources: {session.name}, ")
        assert texts["prompts"][0].startswith(f"<MCP prompts: {session.name}, ")
        assert texts["tasks"][0] == f"<MCP tasks: {session.name}, 0 tasks>"
        assert texts["roots"][0].startswith("<MCP roots: ")
        plain, html = texts["dashboard"]
        assert plain.splitlines()[0] == texts["status"][0]
        assert "<MCP explorer:" in plain
        assert "<code>add</code>" in html
        assert "<h4>Log</h4>" in html
        for name, (plain, html) in texts.items():
            assert "children=" not in plain, name
            assert repr(panels[name]) == plain
            assert "<script" not in html.lower(), name
            assert "mcpnb-static" in html, name
    finally:
        for panel in panels.values():
            panel.close()


def test_the_snapshot_shows_the_last_call_and_the_log(session: Session) -> None:
    explorer = session.explorer()
    log = session.log_widget()
    try:
        explorer.select("add")
        assert explorer.form is not None
        explorer.form.set_value({"a": 20, "b": 22})
        explorer.call()
        explorer.wait()
        plain, html = _fallback(explorer)
        assert "selected add (done in" in plain
        assert "42" in html
        assert "History" in html
        session.call_tool("add", {"a": 1, "b": 2})
        plain, _ = _fallback(log)
        assert plain.startswith(f"<MCP log: {session.name}, ")
    finally:
        explorer.close()
        log.close()
    assert explorer._repr_mimebundle_ is None  # closed: ipywidgets' own rule; repr() still reads
    assert repr(explorer).startswith("<MCP explorer:")


def test_a_groups_panels_read_without_a_kernel(group: Group) -> None:
    board = group.status_widget()
    explorer = group.explorer()
    log = group.log_widget()
    try:
        plain, html = _fallback(board)
        assert plain.splitlines()[0].startswith("<MCP servers: 2: 2 ready; ")
        assert "  one ready, modern" in plain
        assert "<b>one</b>" in html
        plain, html = _fallback(explorer)
        assert plain.startswith("<MCP group explorer: 2 servers up, showing All servers>")
        assert "<code>two.add</code>" in html
        assert _fallback(log)[0].startswith("<MCP log: ")
    finally:
        for panel in (board, explorer, log):
            panel.close()


# --- tool descriptions as safe Markdown -----------------------------------------------------------

HOSTILE_MARKDOWN = [
    # (a description, what its HTML must hold, what it must never hold)
    ("**bold** and `code`", ["<strong>bold</strong>", "<code>code</code>"], []),
    ("<script>alert(1)</script>", ["&lt;script&gt;"], ["<script"]),
    ('<img src=x onerror="alert(1)">', ["&lt;img"], ["<img"]),
    ("![pixel](https://tracker.example/p.png)", [], ["<img"]),
    ("[x](javascript:alert(1)) [y](JaVaScRiPt:alert(1))", [], ["href"]),
    ("<javascript:alert(1)> [d](data:text/html,hi) [v](vbscript:x)", [], ["href"]),
    ('<a href="javascript:alert(1)">a</a>', ["&lt;a href"], ["<a "]),
    ("[site](https://example.org)", ['href="https://example.org"', 'rel="noopener noreferrer nofollow"'], []),
    ("[mail](mailto:someone@example.org)", ['href="mailto:someone@example.org"'], []),
]


@pytest.mark.parametrize(("text", "present", "absent"), HOSTILE_MARKDOWN)
def test_a_description_renders_as_markdown_never_as_raw_html(
    text: str, present: list[str], absent: list[str]
) -> None:
    from mcp_notebook.display._html import markdown_html

    out = markdown_html(text)
    for piece in present:
        assert piece in out
    for piece in absent:
        assert piece not in out.lower()


def test_the_explorer_shows_the_demos_description_as_markdown(session: Session) -> None:
    explorer = session.explorer()
    try:
        explorer.select("sales_records")
        shown = explorer.description.value
        assert "<strong>deterministic</strong>" in shown
        assert "<code>region</code>" in shown
        assert "mcpnb-markdown" in shown
    finally:
        explorer.close()
