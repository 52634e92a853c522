"""The host seam (mcp_notebook/notebook/_host.py) outside any notebook, and the run identity it
gives marimo's cells (issue #38). In marimo itself: tests/test_browser_marimo.py."""

from __future__ import annotations

import gc
import subprocess
import sys

from mcp_notebook.notebook import _host


class _ExecutionContext:
    """Stands for marimo's ExecutionContext: an object made anew for every run of a cell."""


def test_a_run_equals_only_itself_and_only_while_it_lasts() -> None:
    first = _ExecutionContext()
    run = _host._Run(first)
    assert run == _host._Run(first)  # two connect() calls of one run
    assert run != _host._Run(_ExecutionContext())  # another run of the cell
    earlier = _host._Run(first)
    del first
    gc.collect()
    assert run != earlier  # an ended run is no run: a re-run cell's first connect() is ordinal 0


def test_a_script_is_no_notebook_and_never_loads_marimo() -> None:
    code = (
        "import sys\n"
        "from mcp_notebook.notebook import _host\n"
        "assert _host.front_end() is None and not _host.in_notebook()\n"
        "assert _host.cell_run() is None and _host.cell_writer() is None\n"
        "assert _host.user_namespace() == {}\n"
        "assert _host.on_kernel_end(lambda: None) is False\n"
        "assert 'marimo' not in sys.modules\n"
    )
    argv = [sys.executable, "-c", code]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
