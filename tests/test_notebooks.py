"""Every notebook in notebooks/ runs top to bottom, without edits, on the bundled demo server.

Each notebook runs in a fresh kernel with nbclient (tests/notebook_runs.py, shared with the
fallback test, so each runs once), as a reader would run it: no frontend, so widgets display but
nobody clicks; the notebooks drive them from code. A failing cell fails its test with that cell's
source and error. Every notebook must also be committed clean: no outputs, no execution counts, no
saved widget state.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

from .notebook_runs import NOTEBOOKS, describe_error, executed, plain  # noqa: E402

# No time budget here: how long a notebook takes is a benchmark's question, and a machine's load
# answers it as much as the code does. A notebook that hangs is stopped by nbclient's per-cell
# timeout (tests/notebook_runs.py, CELL_TIMEOUT: a generous guard against hangs, not a measure).


def test_there_are_notebooks() -> None:
    names = [p.name for p in NOTEBOOKS]
    assert "01-quickstart.ipynb" in names
    assert len(names) >= 6, names


@pytest.mark.usefixtures("no_leaked_processes")
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs_top_to_bottom(path: Path) -> None:
    run = executed(path)  # shared with tests/test_fallbacks.py: each notebook runs once
    if run.failure is not None:
        pytest.fail(run.failure, pytrace=False)
    notebook = run.notebook

    problem = describe_error(path, notebook)
    assert problem is None, problem
    # An exception logged on a background thread (a handler, an observer) is a bug too.
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and output.get("name") == "stderr":
                text = plain(output.get("text", ""))
                assert "Traceback" not in text, f"{path.name}, cell {index} logged a traceback:\n{text}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_committed_without_outputs(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    assert "widgets" not in notebook.metadata, f"{path.name} has saved widget state: clear it"
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        assert not cell.get("outputs"), f"{path.name}, cell {index} has outputs in git: strip them"
        assert cell.get("execution_count") is None, f"{path.name}, cell {index} has an execution count"
        assert "execution" not in cell.metadata, f"{path.name}, cell {index} has execution timings"


#: Per notebook: how its headline widget's ``text/plain`` starts, and how many of its servers may
#: show a "closed" badge after Run All (08 lists one whose command does not exist, on purpose).
HEADLINE = {
    "02-tool-explorer.ipynb": ("<MCP explorer: ", 0),
    "04-live-notifications.ipynb": ("<MCP ", 0),
    "08-many-servers.ipynb": ("<MCP servers: ", 1),
    "09-mcp-apps.ipynb": ("<MCP App sales_board", 0),
}
VIEW = "application/vnd.jupyter.widget-view+json"
STATE = "application/vnd.jupyter.widget-state+json"
_SHOWN = ("value", "description", "placeholder", "status")  # the keys whose text a browser shows


def _model_text(states: dict[str, Any], model_id: str, seen: set[str]) -> str:
    """Every string in ``model_id``'s stored state and in the models it refers to."""
    if model_id in seen or model_id not in states:
        return ""
    seen.add(model_id)
    parts: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str) and value.startswith("IPY_MODEL_"):
            parts.append(_model_text(states, value.removeprefix("IPY_MODEL_"), seen))
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)

    state = states[model_id].get("state", {})
    parts.extend(str(state[key]) for key in _SHOWN if isinstance(state.get(key), str))
    walk(state)
    return "\n".join(parts)


@pytest.mark.parametrize("name", sorted(HEADLINE))
def test_headline_widget_is_live_after_run_all(name: str) -> None:
    """The headline widget's final state (as a browser would show it after Run All: a panel's
    tree, which nbclient's view of it followed; an App view's stored state) is drawn and not
    closed: no last cell closes the sessions (issue #29)."""
    path = next(p for p in NOTEBOOKS if p.name == name)
    run = executed(path)
    if run.failure is not None:
        pytest.fail(run.failure, pytrace=False)
    prefix, may_close = HEADLINE[name]
    states = run.notebook.metadata.get("widgets", {}).get(STATE, {}).get("state", {})
    heads = [
        output["data"][VIEW]["model_id"]
        for cell in run.notebook.cells
        for output in cell.get("outputs", [])
        if VIEW in output.get("data", {}) and output["data"].get("text/plain", "").startswith(prefix)
    ]
    assert heads, f"{name}: no widget output whose text starts with {prefix!r}"
    assert heads[0] not in run.closed_models, f"{name}: a later cell closed the headline widget"
    if heads[0] in run.panels:  # one of our panels: its tree as the browser holds it after the run
        drawn = {key: {"state": state} for key, state in run.panels[heads[0]].items()}
        text = _model_text(drawn, run.tops[heads[0]], set())
    else:  # a widget of its own (the App view): its stored state
        text = _model_text(states, heads[0], set())
    assert text.strip(), f"{name}: the headline widget's state is empty"
    closed = len(re.findall(r">\s*closed\s*<|\bclosed\b(?![^<]*>)", text, flags=re.IGNORECASE))
    assert closed <= may_close, f"{name}: the headline widget ends closed ({closed}):\n{text[-3000:]}"
