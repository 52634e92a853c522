"""``import mcp_notebook`` stays cheap: the core never pulls in the notebook libraries or the SDK."""

from __future__ import annotations

import subprocess
import sys

HEAVY = {"traitlets", "ipywidgets", "pandas", "IPython", "mcp", "pydantic"}


def test_core_import_does_not_load_notebook_libraries_or_the_sdk() -> None:
    code = (
        "import mcp_notebook, sys; "
        f"loaded = sorted(set({sorted(HEAVY)!r}) & set(sys.modules)); "
        "print(','.join(loaded))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"import mcp_notebook loaded {out.stdout.strip()}"


def test_issue_check_command_passes() -> None:
    """The exact check named in the issue."""
    code = (
        "import mcp_notebook, sys; "
        "assert not {'traitlets','ipywidgets','pandas','IPython'} & set(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_demo_package_import_is_lazy() -> None:
    code = "import mcp_notebook.demo, sys; print('mcp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_dask_loads_only_when_a_cluster_map_runs() -> None:
    """The dask extra is optional: the package, its dask face and the notebook layer import without it."""
    code = (
        "import mcp_notebook, mcp_notebook.dask, mcp_notebook.notebook, sys; "
        "print(','.join(sorted({'dask', 'distributed'} & set(sys.modules))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"importing loaded {out.stdout.strip()}"
