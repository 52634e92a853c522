"""A DOM snapshot of every panel, kept in the repository (tests/snapshots/panels/) and compared (#38).

Why: a panel's look is its tree (``panel.tree()``) drawn by ``widgets/panel.js`` with
``widgets/panel.css``; a change to a panel's Python, to the toolkit or to the renderer that alters
what a user sees shows here as a readable diff, without opening JupyterLab. Each panel is built
against the real demo server in a fixed state, its tree drawn in headless Chromium
(tests/browser/render.py), and the drawn DOM, with what changes from run to run (control ids,
durations, clock times, task ids, temporary paths) replaced by a fixed word, compared with its file.

A mismatch fails with a unified diff. After a change meant to alter a panel, rewrite the files with
``MCPNB_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/test_panel_snapshots.py`` and commit
them with the change (never in CI: with ``CI=true`` updating is refused). Each panel must also draw
no control the renderer does not know, send nothing when drawn, and turn no hostile string
(:data:`HOSTILE`, written to the server's log) into an element.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ipywidgets")

from mcp_notebook.agents._source import ToolSource
from mcp_notebook.jupyter import Group, Session, connect
from mcp_notebook.notebook._coalesce import Coalescer
from mcp_notebook.widgets._dialogs import NotebookDialogs

from .browser.fixtures import playwright_fixture  # noqa: F401 (fixtures: pytest finds them here)
from .browser.render import Drawn, PanelPage, panel_page_fixture  # noqa: F401
from .conftest import demo_server
from .widget_helpers import HOSTILE, wait_for

# A module's first test starts Chromium and two demo servers and plays the history (seconds, more
# on a loaded machine): over the unit tests' 60 s default there, with room to spare.
pytestmark = [pytest.mark.usefixtures("no_leaked_processes"), pytest.mark.timeout(180)]

SNAPSHOTS = Path(__file__).parent / "snapshots" / "panels"
UPDATE = "MCPNB_UPDATE_SNAPSHOTS"
WAIT = 30.0  # seconds a wait may last before the test fails; never a measurement

# What changes from run to run, each replaced by a fixed word: (pattern, replacement).
NORMALISE: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), "{uuid}"),  # task ids
    (re.compile(r"(?<![0-9a-zA-Z])[0-9a-f]{32}(?![0-9a-zA-Z])"), "{id}"),  # control (comm) ids
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?"), "{datetime}"),
    (re.compile(r"(?<!\d)\d{1,2}:\d{2}:\d{2}(?:\.\d+)?(?!\d)"), "{time}"),  # 09:46:28
    # 0.4 ms, 7 ms, 1.2 s, 2 min 05 s, 1 h 02 min (display/_durations.py's short_duration)
    (re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?(?:ms|s|min|h)(?:\s\d+\s?(?:s|min))?(?!\w)"), "{duration}"),
    (re.compile(r"\bpid[ =:]*\d+"), "pid {pid}"),
]


def normalise(text: str) -> str:
    """``text`` with what changes from run to run replaced (the checkout, the interpreter, the
    temporary folder, then :data:`NORMALISE`)."""
    for path, word in (
        (sys.executable, "{python}"),
        (str(Path(__file__).parents[1]), "{checkout}"),
        (tempfile.gettempdir(), "{tmp}"),
    ):
        text = text.replace(path, word)
    for pattern, word in NORMALISE:
        text = pattern.sub(word, text)
    return text


def compare(name: str, drawn: str, folder: Path = SNAPSHOTS) -> None:
    """Fails with a unified diff when ``drawn`` differs from ``name``'s stored snapshot; with
    ``MCPNB_UPDATE_SNAPSHOTS=1`` (not in CI) writes it instead."""
    path = folder / f"{name}.html"
    stored = path.read_text(encoding="utf-8") if path.exists() else None
    if stored == drawn:
        return
    if os.environ.get(UPDATE) == "1":
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"{UPDATE}=1 in CI: snapshots are updated by a developer and committed, never in CI")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(drawn, encoding="utf-8")
        return
    how = (
        f"if the change is meant, rewrite the snapshots with `{UPDATE}=1 .venv/bin/python -m pytest "
        f"tests/test_panel_snapshots.py` and commit them"
    )
    if stored is None:
        pytest.fail(f"no snapshot {path}: {how}", pytrace=False)
    diff = difflib.unified_diff(
        stored.splitlines(keepends=True),
        drawn.splitlines(keepends=True),
        f"{path} (stored)",
        f"{name} (drawn now)",
    )
    pytest.fail(
        f"panel {name!r} is drawn differently from its snapshot ({how}):\n{''.join(diff)}", pytrace=False
    )


# --- the panels in a fixed state ------------------------------------------------------------------


@dataclass
class World:
    """The servers, and what was done to them, once for the module (in this order, so every panel
    sees the same history): a warning logged with a hostile text, a task run to its end, an
    elicitation dialog answered, ``add`` called from the explorer, ``echo`` called by an agent."""

    session: Session
    group: Group
    explorer: Any
    dialog_tree: dict[str, Any]
    made: list[Any] = field(default_factory=list)  # widgets to close at the end


def _log_has(model: Any, text: str) -> bool:
    return any(text in json.dumps(entry, default=str) for entry in list(model.log))


def _answer_the_dialog(
    dialogs: NotebookDialogs, trees: list[dict[str, Any]], errors: list[BaseException]
) -> None:
    """The user: waits for the dialog, keeps its tree as drawn while it asks, then answers it."""
    try:
        wait_for(lambda: dialogs.open_dialogs, WAIT, "the elicitation dialog to open")
        dialog = dialogs.open_dialogs[0]
        tree = dialog.widget.as_panel().tree()
        assert tree is not None
        trees.append(tree)
        dialog.form.set_value({"name": "Ada"})
        dialog.accept_button.click()
    except BaseException as exc:  # handed to the test's thread
        errors.append(exc)


@pytest.fixture(scope="module")
def world() -> Iterator[World]:
    dialogs = NotebookDialogs("demo", output=lambda _widget: None)
    session = connect(demo_server(), show_progress=False, dialogs=dialogs)
    group = Group({"demo": demo_server()}, show_progress=False, dialogs=False)
    made: list[Any] = []
    try:
        session.call_tool("write_log", {"message": HOSTILE, "level": "warning"})
        wait_for(lambda: _log_has(session.model, "alert(2)"), WAIT, "the log message")
        task = session.start_tool("sum_numbers", {"numbers": [1, 2, 3]})
        assert "6" in task.result(timeout=WAIT).text
        trees: list[dict[str, Any]] = []
        errors: list[BaseException] = []
        user = threading.Thread(target=_answer_the_dialog, args=(dialogs, trees, errors), daemon=True)
        user.start()
        assert "Ada" in session.call_tool("ask_user_name", {"greeting": "Hi"}).text
        user.join(WAIT)
        if errors:
            raise errors[0]
        wait_for(lambda: len(session.model.history) == 3, WAIT, "three calls in the history")
        explorer = session.explorer()  # (its history's pick is on the newest call when it is made)
        made.append(explorer)
        explorer.select("add")
        assert explorer.form is not None
        explorer.form.set_value({"a": 2, "b": 3})
        explorer.call()
        assert "5" in str(explorer.wait(WAIT))
        # wait() returns before the explorer's buttons are idle again: Call enabled is the last step
        wait_for(lambda: not explorer.call_button.disabled, WAIT, "the explorer to be idle")
        # an agent's call (issue #39): its history row marked "via pydantic-ai", its line in the log
        ToolSource(session, framework="pydantic-ai").call("echo", {"text": "from an agent"})
        wait_for(lambda: _log_has(session.model, "pydantic-ai called echo"), WAIT, "the agent's log line")
        group.call_tool("demo.write_log", {"message": HOSTILE, "level": "error"})
        wait_for(lambda: _log_has(group.model, "alert(2)"), WAIT, "the group's log message")
        # in_flight is published at most ten times a second: the last call's end, before a panel shows it
        wait_for(
            lambda: session.model.in_flight == group["demo"].model.in_flight == 0, WAIT, "no call in flight"
        )
        yield World(session, group, explorer, trees[0], made)
    finally:
        for widget in made:
            widget.close()
        group.close()
        session.close()


def _live_tools(world: World) -> Any:
    view = world.session.live_frame("tools")
    view.wait_ready(WAIT)
    return view.widget


# name -> (what builds the panel's top control, texts its tree must hold before it is drawn)
PANELS: dict[str, tuple[Callable[[World], Any], tuple[str, ...]]] = {
    "status": (lambda w: w.session.status_widget(), ("ready",)),
    "explorer": (
        lambda w: w.explorer,
        ("mcpnb-tool-selected", "add(a=2, b=3)", "done in", "via pydantic-ai"),
    ),
    "log": (lambda w: w.session.log_widget(), ("alert(2)", "pydantic-ai called echo")),
    "dashboard": (
        lambda w: w.session.dashboard(),
        ("alert(2)", "add(a=2, b=3)", "completed", "via pydantic-ai", "pydantic-ai called echo"),
    ),
    "tasks": (lambda w: w.session.tasks_widget(), ("sum_numbers", "completed")),
    "resources": (lambda w: w.session.resources_widget(), ("readme",)),
    "prompts": (lambda w: w.session.prompts_widget(), ("greeting",)),
    "roots": (lambda w: w.session.roots_widget(), ("No roots",)),
    "group_status": (lambda w: w.group.status_widget(), ("ready",)),
    "group_explorer": (lambda w: w.group.explorer(), ("add", "demo.write_log(")),
    "group_log": (lambda w: w.group.log_widget(), ("alert(2)",)),
    "live_frame_tools": (_live_tools, ("sum_numbers",)),
}


def _settle(widget: Any) -> None:
    """Waits for the redraws a panel has due (its coalescers: a log's new rows, a history's), so the
    tree read next is the panel's final state, not a redraw behind."""
    seen: set[int] = set()
    todo = [widget]
    while todo:
        item = todo.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, Coalescer):
            assert item.settle(WAIT), f"a redraw of {widget!r} did not end"
        elif type(item).__module__.startswith("mcp_notebook.widgets"):  # our panels and parts
            todo.extend(getattr(item, "__dict__", {}).values())
            todo.extend(getattr(item, "children", ()) or ())
        elif isinstance(item, list | tuple):
            todo.extend(item)


def _tree_of(world: World, name: str) -> dict[str, Any]:
    build, wanted = PANELS[name]
    widget = build(world)
    if widget is not world.explorer:
        world.made.append(widget)
    panel = widget.as_panel()

    def shown() -> bool:
        return all(text in json.dumps(panel.tree()) for text in wanted)

    wait_for(shown, WAIT, f"the {name} panel to show {wanted!r}")
    _settle(widget)
    tree: dict[str, Any] | None = panel.tree()
    assert tree is not None
    return tree


def _check(panel_page: PanelPage, name: str, tree: dict[str, Any]) -> Drawn:
    drawn = panel_page.render(tree)
    assert not drawn.errors, f"the renderer failed on {name}: {drawn.errors}"
    assert drawn.lines, f"{name}: nothing drawn"
    assert drawn.unsupported == 0, f"{name}: controls the renderer does not draw:\n{drawn.text}"
    assert not drawn.foreign, f"{name}: a server's string became an element: {drawn.foreign}"
    assert drawn.sent == [], f"{name}: drawing sent messages to the kernel: {drawn.sent}"
    compare(name, normalise(drawn.text))
    return drawn


@pytest.mark.parametrize("name", list(PANELS))
def test_a_panel_is_drawn_as_its_snapshot(panel_page: PanelPage, world: World, name: str) -> None:
    _check(panel_page, name, _tree_of(world, name))


def test_the_elicitation_dialog_is_drawn_as_its_snapshot(panel_page: PanelPage, world: World) -> None:
    drawn = _check(panel_page, "elicitation_dialog", world.dialog_tree)
    assert "What is your name?" in drawn.text


# --- the checks themselves can fail ---------------------------------------------------------------


def _drawn_box(panel_page: PanelPage, *children: Any) -> Drawn:
    from mcp_notebook.widgets import _ui as W

    box = W.VBox(list(children))
    try:
        return panel_page.render(box.as_panel().tree() or {})
    finally:
        box.close()


def test_a_changed_panel_fails_with_a_diff_and_updating_rewrites_it_but_never_in_ci(
    panel_page: PanelPage, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp_notebook.widgets import _ui as W

    monkeypatch.delenv(UPDATE, raising=False)
    monkeypatch.delenv("CI", raising=False)
    before = normalise(_drawn_box(panel_page, W.Label("reconnects")).text)
    after = normalise(_drawn_box(panel_page, W.Label("reconnections")).text)
    (tmp_path / "box.html").write_text(before, encoding="utf-8")
    compare("box", before, tmp_path)
    with pytest.raises(pytest.fail.Exception) as failed:
        compare("box", after, tmp_path)
    assert re.search(r"^-\s+<div [^>]*>reconnects</div>$", str(failed.value), re.M)
    assert re.search(r"^\+\s+<div [^>]*>reconnections</div>$", str(failed.value), re.M)
    assert f"{UPDATE}=1" in str(failed.value)
    with pytest.raises(pytest.fail.Exception, match="no snapshot"):
        compare("missing", after, tmp_path)
    monkeypatch.setenv(UPDATE, "1")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="never in CI"):
        compare("box", after, tmp_path)
    assert (tmp_path / "box.html").read_text(encoding="utf-8") == before
    monkeypatch.delenv("CI")
    compare("box", after, tmp_path)
    assert (tmp_path / "box.html").read_text(encoding="utf-8") == after


def test_markup_that_became_elements_and_controls_not_drawn_are_seen(panel_page: PanelPage) -> None:
    from mcp_notebook.widgets import _ui as W

    # a panel's mistake planted: a server's string put into its markup unescaped (no alert() in
    # it: the page's teardown fails on any alert)
    hostile = '<img src=x onerror="window.mcpnbPwned = 1"><script>window.mcpnbPwned = 2</script>'
    drawn = _drawn_box(panel_page, W.HTML(f"<pre>{hostile}</pre>"), W.Label(hostile))
    assert len(drawn.foreign) == 2, drawn.foreign  # the img and the script; the label stayed text
    models = {
        "a": {"_model_name": "VBoxModel", "children": ["IPY_MODEL_b"]},
        "b": {"_model_name": "DatePickerModel"},
    }
    tree = {"top": "a", "models": models}
    assert panel_page.render(tree).unsupported == 1


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("done in 4 ms", "done in {duration}"),
        ("0.4 ms, 1.2 s, 2 min 05 s, 1 h 02 min", "{duration}, {duration}, {duration}, {duration}"),
        ("09:46:28  add(a=2)", "{time}  add(a=2)"),
        ("2026-12-05T09:46:28.123+00:00", "{datetime}"),
        ('list="mcpnb-snapshot-0123456789abcdef0123456789abcdef"', 'list="mcpnb-snapshot-{id}"'),
        ("3f2b8c1e-9a4d-4e6f-8b2a-1c3d5e7f9a0b", "{uuid}"),
        ("4 sections, 2 servers, v1.2", "4 sections, 2 servers, v1.2"),  # words stay
        ("pid 12345", "pid {pid}"),
    ],
)
def test_what_changes_run_to_run_is_replaced_and_nothing_else(raw: str, normal: str) -> None:
    assert normalise(raw) == normal
