"""The panels' toolkit (mcp_notebook/widgets/_ui): ipywidgets' controls on virtual comms, one
anywidget per panel. What its view is sent and what a view may do, without a browser (the
browser's side is tests/test_browser_toolkit.py)."""

from __future__ import annotations

import gc
from typing import Any

import pytest

pytest.importorskip("anywidget")

import ipywidgets
from ipywidgets.widgets.widget import _instances

from mcp_notebook.widgets import _ui as W
from mcp_notebook.widgets._ui import Panel, open_controls

from .widget_helpers import drawn


class Page:
    """One view of a panel: what the kernel sent it, and what it sends."""

    def __init__(self, panel: Panel) -> None:
        self.panel = panel
        self.sent: list[dict[str, Any]] = []
        panel.send = lambda message, *_a, **_k: self.sent.append(message)

    def hello(self, have: list[str] | None = None) -> dict[str, Any]:
        self.panel._from_view(self.panel, {"t": "hello", "view": "v", "have": have or []}, [])
        return self.sent[-1]

    def do(self, **message: Any) -> None:
        self.panel._from_view(self.panel, message, [])

    def patches(self) -> list[dict[str, Any]]:
        return [m for m in self.sent if m["t"] == "patch"]


def _ids(*controls: Any) -> list[str]:
    return [c.comm.comm_id for c in controls]


def test_a_view_gets_the_whole_tree_and_the_renderer_once() -> None:
    button, text = W.Button(description="Go"), W.Text(value="a", placeholder="name")
    box = W.VBox([button, text])
    page = Page(box.as_panel())
    tree = page.hello()
    assert tree["t"] == "tree"
    assert tree["for"] == "v"
    assert tree["top"] == box.comm.comm_id
    models = tree["models"]
    assert models[box.comm.comm_id]["children"] == [f"IPY_MODEL_{i}" for i in _ids(button, text)]
    assert models[button.comm.comm_id]["_model_name"] == "ButtonModel"
    assert models[button.comm.comm_id]["description"] == "Go"
    assert models[text.comm.comm_id]["placeholder"] == "name"
    assert "disabled" not in models[button.comm.comm_id]  # ipywidgets' defaults are not sent
    assert "export" in tree["code"]["js"]
    assert "code" not in page.hello(have=[tree["version"]])  # a page that has it is not sent it again
    box.close()


def test_a_change_is_a_patch_of_what_changed_and_the_tree_follows_its_children() -> None:
    label = W.Label("one")
    box = W.VBox([label])
    page = Page(box.as_panel())
    page.hello()
    label.value = "two"
    assert page.sent[-1]["set"] == {label.comm.comm_id: {"value": "two"}}
    newcomer = W.HTML("<b>new</b>")
    box.children = [newcomer]
    patch = page.sent[-1]
    assert patch["set"][box.comm.comm_id] == {"children": [f"IPY_MODEL_{newcomer.comm.comm_id}"]}
    assert patch["add"][newcomer.comm.comm_id]["value"] == "<b>new</b>"
    assert label.comm.comm_id in patch["drop"]
    label.value = "three"  # no longer shown by this panel: nothing is sent for it
    assert page.sent[-1] is patch
    seqs = [m["seq"] for m in page.sent]
    assert seqs == sorted(set(seqs))
    box.close()


@pytest.mark.filterwarnings("ignore:on_submit is deprecated:DeprecationWarning")
def test_what_the_user_does_reaches_the_control_and_is_not_echoed() -> None:
    clicks: list[Any] = []
    button = W.Button(description="Go")
    button.on_click(clicks.append)
    text = W.Text()
    submitted: list[str] = []
    text.on_submit(lambda t: submitted.append(t.value))
    pick = W.Dropdown(options=[("north", 1), ("south", 2)])
    tabs = W.Tab([W.Label("a"), W.Label("b")])
    box = W.VBox([button, text, pick, tabs])
    page = Page(box.as_panel())
    page.hello()
    before = len(page.sent)
    page.do(t="set", id=text.comm.comm_id, state={"value": "Ada"})
    page.do(t="event", id=text.comm.comm_id, event="submit")
    page.do(t="event", id=button.comm.comm_id, event="click")
    page.do(t="set", id=pick.comm.comm_id, state={"index": 1})
    page.do(t="set", id=tabs.comm.comm_id, state={"selected_index": 1})
    assert text.value == "Ada"
    assert submitted == ["Ada"]
    assert clicks == [button]
    assert pick.value == 2
    assert tabs.selected_index == 1
    echoed = [m for m in page.sent[before:] if text.comm.comm_id in m.get("set", {})]
    assert echoed == []  # the view that typed it shows it already
    box.close()


def test_a_hostile_view_cannot_change_structure_names_or_unknown_controls() -> None:
    secret = W.Label("kept")
    box = W.VBox([secret])
    page = Page(box.as_panel())
    page.hello()
    for message in (
        {"t": "set", "id": box.comm.comm_id, "state": {"children": []}},
        {"t": "set", "id": secret.comm.comm_id, "state": {"_model_name": "HTMLModel", "value": "<img>"}},
        {"t": "set", "id": secret.comm.comm_id, "state": {"layout": "IPY_MODEL_x"}},
        {"t": "set", "id": "no-such-control", "state": {"value": "x"}},
        {"t": "event", "id": secret.comm.comm_id, "event": "close"},
        {"t": "event", "id": box.comm.comm_id},
        {"t": "set", "id": secret.comm.comm_id, "state": "value"},
        {"t": "bogus"},
        "not a dict",
    ):
        page.panel._from_view(page.panel, message, [])
    assert box.children == (secret,)
    assert secret.value == "kept"
    assert secret._model_name == "LabelModel"
    assert box.comm is not None
    box.close()


def test_controls_are_no_models_of_the_front_end_and_are_counted_until_closed() -> None:
    first = W.VBox()
    first.as_panel()  # every panel shares one layout model: made by the first
    gc.collect()  # an earlier test's unheld controls close now, not in the middle of the count
    models, controls = len(_instances), open_controls()
    box = W.VBox([W.Button(description=str(i)) for i in range(5)])
    panel = box.as_panel()
    assert len(_instances) == models + 1  # the panel: the one model a front end gets
    assert open_controls() == controls + 2 + 5 * 3  # the box and its layout; buttons, layouts, styles
    for button in box.children:
        button.close()
    box.layout.close()
    for button in box.children:
        button.layout.close()
        button.style.close()
    box.close()
    assert open_controls() == controls
    assert panel.comm is None  # its top closed: the panel goes with it
    first.close()


def test_a_control_brings_its_layout_and_style_when_made_not_when_first_shown() -> None:
    """A control made before it is shown (a log's chunk kept for later) counts its layout and
    style from the start, as ipywidgets' own controls do: showing it later opens no control, so a
    panel under load stays flat (issue #38's benchmark counted 34 born during a log trickle)."""
    box = W.VBox()
    page = Page(box.as_panel())
    page.hello()
    waiting = W.HTML("<b>later</b>")
    controls = open_controls()
    box.children = [waiting]
    assert open_controls() == controls
    added = page.sent[-1]["add"]
    assert set(added) == {waiting.comm.comm_id, waiting.layout.comm.comm_id, waiting.style.comm.comm_id}
    for control in (waiting, waiting.layout, waiting.style, box.layout, box):
        control.close()


def test_in_a_layout_of_the_users_a_panel_is_its_anywidget() -> None:
    box = W.VBox([W.Label("ours")])
    theirs = ipywidgets.HBox([ipywidgets.Label("theirs"), box])
    ref = theirs.get_state("children")["children"][1]
    model = _instances[ref.removeprefix("IPY_MODEL_")]
    assert isinstance(model, Panel)
    assert model.top is box
    tree = drawn(box)
    assert tree["top"] == box.comm.comm_id
    box.close()
    theirs.close()


def test_bytes_reach_the_view_as_base64() -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"\0" * 16
    image = W.Image(value=png, format="png")
    box = W.VBox([image])
    page = Page(box.as_panel())
    assert page.hello()["models"][image.comm.comm_id]["value"] == {"b64": "iVBORw0KGgoAAAAAAAAAAAAAAAAAAAAA"}
    image.value = b"GIF89a"
    assert page.sent[-1]["set"][image.comm.comm_id]["value"] == {"b64": "R0lGODlh"}
    box.close()


def test_an_edited_renderer_reaches_the_next_view(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer edits widgets/panel.js: the next view is sent the new module, no build step."""
    import os

    from mcp_notebook.widgets._ui import _root

    files = {name: tmp_path / name for name in ("panel.js", "panel.css")}
    files["panel.js"].write_text("export function mount() {} // one")
    files["panel.css"].write_text(".mcpnb-ui {}")
    monkeypatch.setattr(_root, "static_path", lambda name: files[name])
    box = W.VBox([W.Label("x")])
    page = Page(box.as_panel())
    first = page.hello()
    assert first["code"]["js"].endswith("// one")
    assert "code" not in page.hello(have=[first["version"]])
    files["panel.js"].write_text("export function mount() {} // two")
    os.utime(files["panel.js"], ns=(1, 10**18))  # a later edit, whatever the file system's clock
    second = page.hello(have=[first["version"]])
    assert second["version"] != first["version"]
    assert second["code"]["js"].endswith("// two")
    box.close()
