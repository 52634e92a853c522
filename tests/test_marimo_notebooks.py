"""The marimo notebooks in notebooks/ run top to bottom in marimo's own runtime, headless (issue #38).

``marimo export html`` runs every cell in a marimo kernel (the runtime ``marimo edit`` and ``marimo
run`` use, not the plain-script one), writes what each cell showed, and exits non-zero when a cell
raised; so a notebook that fails fails here, with marimo's report. The page it writes must hold
what the notebook shows a reader (a call's result, a DataFrame's rows, the closing summary) and no
traceback. The MCP server the notebook started must be gone once marimo exits.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .browser.lab import ROOT

pytest.importorskip("marimo")

NOTEBOOKS = sorted((ROOT / "notebooks").glob("marimo_*.py"))
#: A hang guard (nbclient's per-cell timeout plays this part for the Jupyter notebooks), not a measure.
HANG_GUARD = 240.0


def test_there_is_a_marimo_quickstart() -> None:
    assert [p.name for p in NOTEBOOKS] == ["marimo_quickstart.py"]


@pytest.mark.timeout(300)
@pytest.mark.usefixtures("no_leaked_processes")
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_marimo_notebook_runs_top_to_bottom(path: Path, tmp_path: Path) -> None:
    # A copy: marimo writes its session cache (__marimo__/) beside the notebook it runs.
    copy = tmp_path / path.name
    shutil.copyfile(path, copy)
    page = _exported(copy, tmp_path)
    # the last cell's output (the code's own text has the f-string's braces)
    assert "add gave 3.5; 5 sales rows; 1 session(s) open" in page, "the summary cell's output is missing"
    assert "Traceback" not in page


@pytest.mark.usefixtures("no_leaked_processes")
def test_what_marimo_is_given_to_draw_is_plain_text() -> None:
    """marimo sends a cell's output through msgspec, which cannot encode a ``str`` subclass: an HTML
    repr that was markupsafe's ``Markup`` reached the page as an object ("Something went wrong:
    Expected string data for mime=text/html"). What marimo's formatter makes of each object a
    notebook shows must be a plain ``str``."""
    from marimo._output.formatting import try_format

    import mcp_notebook

    from .conftest import demo_server

    with mcp_notebook.connect(demo_server(), register=False, show_progress=False) as demo:
        shown = {
            "session": demo,
            "tool result": demo.call_tool("add", {"a": 1, "b": 2}),
            "table result": demo.call_tool("sales_records", {"region": "north", "limit": 3}),
            "resource": demo.read_resource("demo://data/sales.csv"),
            "template": demo.model.resource_templates[0],
            "prompt result": demo.get_prompt("greeting", {"name": "Ada"}),
            "tool": demo.model.tools[0],
        }
        for what, value in shown.items():
            formatted = try_format(value)
            # a mime bundle (an object with _repr_mimebundle_) is a dict of its types
            html = formatted.data["text/html"] if isinstance(formatted.data, dict) else formatted.data
            assert "text/html" in formatted.mimetype or "mimebundle" in formatted.mimetype, what
            assert type(html) is str, f"{what}: {type(html).__name__}"


GROUP_NOTEBOOK = """import marimo

app = marimo.App()


@app.cell
def _():
    import sys

    import mcp_notebook

    demo = [sys.executable, "-m", "mcp_notebook.demo"]
    group = mcp_notebook.connect_all({"north": demo, "south": demo})
    group
    return


@app.cell
def _():
    total = group.call_tool("south.add", {"a": 2, "b": 3})
    board = mcp_notebook.servers()
    f"group gave {total.data['result']}; servers: {', '.join(sorted(board['name']))}"
    return
"""


@pytest.mark.timeout(300)
@pytest.mark.usefixtures("no_leaked_processes")
def test_a_group_runs_in_marimo(tmp_path: Path) -> None:
    """``connect_all`` in a marimo kernel: both servers come up, a call reaches one by its prefix,
    and the group's servers are named sessions (what ``%mcp servers`` lists)."""
    notebook = tmp_path / "group.py"
    notebook.write_text(GROUP_NOTEBOOK)
    page = _exported(notebook, tmp_path)
    assert "group gave 5.0; servers: north, south" in page


def _exported(notebook: Path, tmp_path: Path) -> str:
    """``marimo export html`` of ``notebook``: every cell run in a marimo kernel; the page it wrote
    (the test fails with marimo's report when a cell raised)."""
    out = tmp_path / f"{notebook.stem}.html"
    env = {key: value for key, value in os.environ.items() if not key.startswith("MARIMO")}
    env.update(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_CACHE_HOME=str(tmp_path))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    argv = [sys.executable, "-m", "marimo", "--yes", "export", "html", str(notebook), "-o", str(out)]
    argv.append("--no-sandbox")
    done = subprocess.run(
        argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=HANG_GUARD, check=False
    )
    report = f"marimo export exited with {done.returncode}:\n{done.stdout}\n{done.stderr}"
    assert done.returncode == 0, report
    assert "Traceback" not in done.stderr, report
    return out.read_text()
