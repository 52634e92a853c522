"""Running the notebooks in notebooks/ once per test session, for every test that reads them.

Each notebook runs in a fresh kernel (the python3 kernel of this interpreter) with nbclient, as a
reader would run it: no frontend, so widgets display but nobody clicks. :func:`executed` runs a
notebook the first time it is asked for and hands later callers the same run (tests/test_notebooks.py
checks that it ran cleanly; tests/test_fallbacks.py reads its outputs), so CI runs each once.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbclient
import nbformat

NOTEBOOKS_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))

CELL_TIMEOUT = 60  # seconds one cell may run
STARTUP_TIMEOUT = 60  # seconds for the kernel to start

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def plain(text: str) -> str:
    """``text`` without terminal colours."""
    return _ANSI.sub("", text)


def describe_error(path: Path, notebook: Any) -> str | None:
    """The first cell that raised: its index, source and error, without terminal colours."""
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                trace = plain("\n".join(output.get("traceback", [])))
                return (
                    f"{path.name}, cell {index} failed:\n{cell.source}\n\n"
                    f"{output.get('ename')}: {plain(str(output.get('evalue')))}\n\n{trace[-4000:]}"
                )
    return None


@dataclass
class Run:
    """One notebook's run: the executed notebook, how long it took, and why it failed (or None)."""

    path: Path
    notebook: Any
    elapsed: float
    failure: str | None
    closed_models: frozenset[str] = frozenset()  # widgets closed during the run (comm_close)
    #: our panels as a browser would draw them after the run (panel id -> control id -> state),
    #: and each panel's top control (read by a probe run after the last cell)
    panels: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    tops: dict[str, str] = field(default_factory=dict)


class _Client(nbclient.NotebookClient):
    """nbclient's client, also noting which widgets the kernel closed (it keeps their state)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.closed_models: set[str] = set()

    def handle_comm_msg(self, outs: Any, msg: dict[str, Any], cell_index: int) -> None:
        if msg["msg_type"] == "comm_close":
            self.closed_models.add(msg["content"]["comm_id"])
        super().handle_comm_msg(outs, msg, cell_index)


#: Run after a notebook's last cell (and taken out of it again): every open panel's tree, what a
#: browser's view of it would be drawn from after Run All (nbclient hears no view's messages).
_PANELS_PROBE = """
import json as _json
from ipywidgets.widgets.widget import _instances as _models
from mcp_notebook.widgets._ui import Panel as _Panel
_trees = {key: model.tree() for key, model in list(_models.items()) if isinstance(model, _Panel)}
print(_PANELS_MARK + _json.dumps({key: tree for key, tree in _trees.items() if tree}, default=str))
""".replace("_PANELS_MARK", repr("MCPNB-PANELS "))


def _panels_of(probe: Any) -> dict[str, Any]:
    for output in probe.get("outputs", []):
        text = output.get("text", "")
        if output.get("output_type") == "stream" and "MCPNB-PANELS " in text:
            return dict(json.loads(text.split("MCPNB-PANELS ", 1)[1]))
    return {}


_RUNS: dict[Path, Run] = {}


def executed(path: Path) -> Run:
    """``path`` run top to bottom (the first call runs it; later calls get the same run)."""
    run = _RUNS.get(path)
    if run is not None:
        return run
    notebook = nbformat.read(path, as_version=4)
    client = _Client(
        notebook,
        timeout=CELL_TIMEOUT,
        startup_timeout=STARTUP_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    probe = nbformat.v4.new_code_cell(_PANELS_PROBE)
    notebook.cells.append(probe)
    started = time.monotonic()
    failure: str | None = None
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as exc:
        failure = describe_error(path, notebook) or plain(str(exc))
    except nbclient.exceptions.CellTimeoutError as exc:
        failure = f"{path.name}: a cell ran longer than {CELL_TIMEOUT} s: {plain(str(exc))}"
    elapsed = time.monotonic() - started
    notebook.cells.remove(probe)  # no cell of the notebook
    trees = _panels_of(probe)
    run = _RUNS[path] = Run(
        path,
        notebook,
        elapsed,
        failure,
        frozenset(client.closed_models),
        {key: tree["models"] for key, tree in trees.items()},
        {key: tree["top"] for key, tree in trees.items()},
    )
    return run
