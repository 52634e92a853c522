"""Every notebook in notebooks/ runs top to bottom, without edits, on the bundled demo server.

Each notebook runs in a fresh kernel (the python3 kernel of this interpreter) with nbclient, as a
reader would run it: no frontend, so widgets display but nobody clicks; the notebooks drive them
from code. A failing cell fails its test with that cell's source and error. Every notebook must
also be committed clean: no outputs, no execution counts, no saved widget state.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOKS_DIR.glob("*.ipynb"))

CELL_TIMEOUT = 60  # seconds one cell may run
NOTEBOOK_BUDGET = 60  # seconds a whole notebook may take (each takes well under 20 s here)
STARTUP_TIMEOUT = 60  # seconds for the kernel to start

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _plain(text: str) -> str:
    return _ANSI.sub("", text)


def _describe_error(path: Path, notebook: Any) -> str | None:
    """The first cell that raised: its index, source and error, without terminal colours."""
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                trace = _plain("\n".join(output.get("traceback", [])))
                return (
                    f"{path.name}, cell {index} failed:\n{cell.source}\n\n"
                    f"{output.get('ename')}: {_plain(str(output.get('evalue')))}\n\n{trace[-4000:]}"
                )
    return None


def test_there_are_notebooks() -> None:
    names = [p.name for p in NOTEBOOKS]
    assert "01-quickstart.ipynb" in names
    assert len(names) >= 6, names


@pytest.mark.usefixtures("no_leaked_processes")
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs_top_to_bottom(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT,
        startup_timeout=STARTUP_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    started = time.monotonic()
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as exc:
        pytest.fail(_describe_error(path, notebook) or _plain(str(exc)), pytrace=False)
    except nbclient.exceptions.CellTimeoutError as exc:
        message = f"{path.name}: a cell ran longer than {CELL_TIMEOUT} s: {_plain(str(exc))}"
        pytest.fail(message, pytrace=False)
    elapsed = time.monotonic() - started

    problem = _describe_error(path, notebook)
    assert problem is None, problem
    # An exception logged on a background thread (a handler, an observer) is a bug too.
    for index, cell in enumerate(notebook.cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and output.get("name") == "stderr":
                text = _plain(output.get("text", ""))
                assert "Traceback" not in text, f"{path.name}, cell {index} logged a traceback:\n{text}"
    assert elapsed < NOTEBOOK_BUDGET, f"{path.name} took {elapsed:.1f} s (budget {NOTEBOOK_BUDGET} s)"


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
