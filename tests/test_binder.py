"""The Binder environment (binder/, built by repo2docker) installs, imports and runs the notebooks.

repo2docker itself needs Docker, which these machines lack, so the build is replayed by hand in a
fresh virtualenv: first what repo2docker's base environment provides (JupyterLab 4 with ipykernel,
ipywidgets 8 with JupyterLab's widget manager), then the same commands repo2docker runs, from the
repository's root: ``pip install -r binder/requirements.txt``, then ``binder/postBuild``. The
environment then has to import the package and the notebook dependencies, serve the demo server,
and run every notebook top to bottom. pip installs from a wheelhouse resolved from the package index
once per run (tests/wheels.py), with the index turned off, so the commands run as written without
downloading the same wheels again; the repository itself is built from source as repo2docker does.

The interpreter is the one ``binder/runtime.txt`` names when it is on PATH, else this one.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from . import wheels

ROOT = Path(__file__).resolve().parent.parent
BINDER = ROOT / "binder"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

#: What repo2docker's base environment gives every Python repository (its frozen conda environment
#: pins jupyterlab 4.* and ipywidgets 8.*; ipykernel and jupyter_server come with JupyterLab).
BASE_ENVIRONMENT = ["jupyterlab>=4,<5", "ipywidgets>=8,<9"]
INSTALL_TIMEOUT = 420  # seconds for the two pip installs on a busy machine
STEP_TIMEOUT = 180  # seconds for postBuild, the import check, and running the notebooks


def _runtime_version() -> tuple[int, int]:
    runtime = (BINDER / "runtime.txt").read_text().strip()
    match = re.fullmatch(r"python-(\d+)\.(\d+)", runtime)
    assert match, f"binder/runtime.txt should read python-X.Y, not {runtime!r}"
    return int(match.group(1)), int(match.group(2))


# --- the files ------------------------------------------------------------------------------------


def test_runtime_satisfies_requires_python() -> None:
    major, minor = _runtime_version()
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    floor = re.fullmatch(r">=\s*(\d+)\.(\d+)", requires)
    assert floor, requires
    assert (major, minor) >= (int(floor.group(1)), int(floor.group(2)))
    # repo2docker's default is older than this package allows, so the file must stay.
    assert (major, minor) >= (3, 11)


def test_requirements_install_the_repository_with_its_extras() -> None:
    lines = [line.split("#", 1)[0].strip() for line in (BINDER / "requirements.txt").read_text().splitlines()]
    lines = [line for line in lines if line]
    local = [line for line in lines if line.removeprefix("-e").strip().startswith(".")]
    assert len(local) == 1, lines
    extras = set(re.search(r"\[(.*)\]", local[0]).group(1).split(","))  # type: ignore[union-attr]
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert {"notebook", "demo"} <= extras
    assert extras <= set(declared), f"unknown extras {extras - set(declared)}"


def test_post_build_is_an_executable_strict_bash_script() -> None:
    script = BINDER / "postBuild"
    assert script.stat().st_mode & stat.S_IXUSR, "binder/postBuild must be executable (git keeps the bit)"
    text = script.read_text()
    assert text.startswith("#!/usr/bin/env bash\n")
    assert "set -euo pipefail" in text


def test_binder_files_name_no_hosts() -> None:
    for path in BINDER.iterdir():
        assert "://" not in path.read_text(), f"{path.name}: use package names, not URLs"


# --- the environment ------------------------------------------------------------------------------


def _python_for_binder() -> str:
    """An interpreter of the version binder/runtime.txt names, if this machine has one; else ours."""
    major, minor = _runtime_version()
    name = f"python{major}.{minor}"
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    candidates = [shutil.which(name), *sorted(map(str, pyenv.glob(f"{major}.{minor}.*/bin/{name}")))]
    for candidate in filter(None, candidates):
        try:
            found = subprocess.run(
                [candidate, "-c", "import sys, venv; print(*sys.version_info[:2])"],
                capture_output=True,
                text=True,
                timeout=30,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if found.returncode == 0 and found.stdout.split() == [str(major), str(minor)]:
            return candidate
    return sys.executable


def _run(argv: list[str], *, timeout: float, env: dict[str, str] | None = None) -> str:
    """Run ``argv`` from the repository's root (where repo2docker runs its steps); fail with its output."""
    try:
        done = subprocess.run(
            argv,
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as exc:
        output = exc.output if isinstance(exc.output, str) else ""
        pytest.fail(f"{argv[:4]} took longer than {timeout} s:\n{output[-4000:]}", pytrace=False)
    if done.returncode != 0:
        pytest.fail(f"{argv[:4]} exited {done.returncode}:\n{done.stdout[-6000:]}", pytrace=False)
    return done.stdout


CHECK = r"""
import importlib
import sys

for name in [
    "mcp_notebook", "mcp_notebook.notebook", "mcp_notebook.widgets", "mcp_notebook.demo._server",
    "ipykernel", "ipywidgets", "jupyterlab", "pandas", "tqdm", "traitlets", "IPython",
]:
    module = importlib.import_module(name)
    assert module.__file__, name

import mcp_notebook

assert mcp_notebook.__file__.startswith(sys.argv[1]), mcp_notebook.__file__  # the repository's own
with mcp_notebook.connect([sys.executable, "-m", "mcp_notebook.demo"], show_progress=False) as demo:
    assert demo.call_tool("add", {"a": 2, "b": 3}).data == {"result": 5.0}
    assert len(demo.call_tool("sales_records", {"limit": 4}).to_dataframe()) == 4
    assert type(demo.explorer()).__name__ == "Explorer"
print("the Binder environment works")
"""

RUN_NOTEBOOKS = r"""
import sys
import time
from pathlib import Path

import nbclient
import nbformat

for name in sys.argv[1:]:
    path = Path(name)
    notebook = nbformat.read(path, as_version=4)
    started = time.monotonic()
    nbclient.NotebookClient(
        notebook, timeout=60, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    print(f"{path.name}: {time.monotonic() - started:.1f} s", flush=True)
"""


@pytest.mark.usefixtures("no_leaked_processes")
def test_binder_environment_builds_and_runs_the_notebooks(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    base_python = _python_for_binder()
    wheelhouse = wheels.wheelhouse(
        wheels.run_folder(tmp_path_factory), base_python, [*BASE_ENVIRONMENT, "-r", "binder/requirements.txt"]
    )
    started = time.monotonic()
    venv = tmp_path / "binder-env"
    _run([base_python, "-m", "venv", str(venv)], timeout=STEP_TIMEOUT)
    bin_dir = venv / "bin"
    python = str(bin_dir / "python")
    # The image's PATH puts the environment first; repo2docker runs every step as a login user.
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")},
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "VIRTUAL_ENV": str(venv),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        **wheels.offline(wheelhouse),
    }
    pip = [python, "-m", "pip", "install", "--quiet"]

    _run([*pip, *BASE_ENVIRONMENT], timeout=INSTALL_TIMEOUT, env=env)  # repo2docker's base environment
    _run([*pip, "-r", "binder/requirements.txt"], timeout=INSTALL_TIMEOUT, env=env)  # as repo2docker does
    installed = time.monotonic()
    post_build = _run(["./binder/postBuild"], timeout=STEP_TIMEOUT, env=env)
    assert "widget manager is installed" in post_build, post_build

    assert "works" in _run([python, "-c", CHECK, str(ROOT)], timeout=STEP_TIMEOUT, env=env)
    ran = _run([python, "-c", RUN_NOTEBOOKS, *map(str, NOTEBOOKS)], timeout=STEP_TIMEOUT, env=env)
    assert all(f"{path.name}:" in ran for path in NOTEBOOKS), ran
    version = _run([python, "--version"], timeout=30, env=env).strip()
    finished = time.monotonic()
    print(f"{version}: installed in {installed - started:.0f} s, checked in {finished - installed:.0f} s")
    print(ran)
