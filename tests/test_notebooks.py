"""Every notebook in notebooks/ runs top to bottom, without edits, on the bundled demo server.

Each notebook runs in a fresh kernel with nbclient (tests/notebook_runs.py, shared with the
fallback test, so each runs once), as a reader would run it: no frontend, so widgets display but
nobody clicks; the notebooks drive them from code. A failing cell fails its test with that cell's
source and error. Every notebook must also be committed clean: no outputs, no execution counts, no
saved widget state.
"""

from __future__ import annotations

from pathlib import Path

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
