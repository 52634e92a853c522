"""The terminal tour reads as prose: no raw dict or dataclass reprs, whole numbers as integers.

``python -m mcp_notebook.demo.tour`` is the first thing the README runs (tests/test_front_door.py
runs it from a fresh clone); this runs it from the checkout and reads its output.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from .conftest import PYTHON

ROOT = Path(__file__).resolve().parents[1]
HANG_GUARD = 300  # only stops a hang; the tour takes about 25 s


def test_the_tour_prints_no_raw_reprs() -> None:
    done = subprocess.run(
        [PYTHON, "-m", "mcp_notebook.demo.tour"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=HANG_GUARD,
        check=False,
    )
    out = done.stdout
    assert done.returncode == 0, done.stderr[-3000:]
    assert "era=modern" in out
    assert "era=legacy" in out
    assert "{'" not in out, out
    assert "ConnectionStats(" not in out, out
    assert "server=mcp-notebook-demo 0.1.0 ('MCP Notebook demo server')" in out, out
    assert "connection stats:" in out
    assert "4/4 step 4/4" in out, out  # the progress total as an integer, not 4.0
    assert "resources: demo://readme, " in out, out
