"""Wheels built once per test run and shared by every pytest-xdist worker.

- :func:`package_wheel`: the package's own wheel, as ``pip wheel .`` builds it (tests/test_wheel.py
  checks what ships in it).
- :func:`wheelhouse`: every wheel a fresh virtualenv needs for some requirements, for one interpreter.
  tests/test_binder.py and tests/test_front_door.py used to resolve and download some 130 wheels from
  the package index on every run (60-240 s); they now install from a wheelhouse with the index turned
  off (``PIP_NO_INDEX``, ``PIP_FIND_LINKS``) and keep what they prove: a fresh virtualenv, the same
  commands, the repository built from source by its own build backend. The wheelhouse is resolved
  from the index once per run, so a new release of a dependency still reaches them.

Under xdist the first worker to ask builds a folder under the run's shared temporary folder while
holding a file lock; the others wait on the lock and reuse it.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUILD_TIMEOUT = 600  # seconds for one `pip wheel`: a cold cache on a busy machine
#: hatchling asks for this when it builds an editable install (binder/requirements.txt's ``-e .``).
EDITABLE_BACKEND = "editables~=0.3"


def run_folder(factory: pytest.TempPathFactory) -> Path:
    """A folder of this run that every worker sees: an xdist worker's base folder lies inside it."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # released when the file closes
        yield


def once(folder: Path, build: Callable[[Path], None]) -> Path:
    """``folder``, filled by ``build(folder)`` the first time any worker of this run asks for it."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with _locked(folder.parent / f"{folder.name}.lock"):
        if not (folder / ".built").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            (folder / ".built").touch()
    return folder


def _pip_wheel(python: str, folder: Path, *args: str) -> None:
    done = subprocess.run(
        [python, "-m", "pip", "wheel", "--quiet", "--wheel-dir", str(folder), *args],
        cwd=ROOT,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT,
    )
    if done.returncode != 0:
        command = " ".join(args)
        pytest.fail(f"pip wheel {command} exited {done.returncode}:\n{done.stderr[-4000:]}", pytrace=False)


def package_wheel(run: Path) -> Path:
    """The package's wheel, built from the working tree once per run."""

    def build(folder: Path) -> None:
        _pip_wheel(sys.executable, folder, "--no-deps", str(ROOT))

    folder = once(run / "package-wheel", build)
    (wheel,) = folder.glob("mcp_notebook-*.whl")
    return wheel


def build_requirements() -> list[str]:
    """What the build backend needs (pyproject's [build-system]), for building the repository offline."""
    build_system = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]
    return [*build_system["requires"], EDITABLE_BACKEND]


def _pip_for(python: str, scratch: Path) -> str:
    """An interpreter of the same version as ``python`` that has pip: ``python`` itself, or a venv of it."""
    if subprocess.run([python, "-m", "pip", "--version"], capture_output=True, timeout=60).returncode == 0:
        return python
    subprocess.run([python, "-m", "venv", str(scratch)], check=True, capture_output=True, timeout=120)
    return str(scratch / "bin" / "python")


def wheelhouse(run: Path, python: str, requirements: list[str]) -> Path:
    """Every wheel ``python`` needs to install ``requirements`` and build the repository, once per run.

    The repository's own wheel is left out: the commands under test build it from source.
    """
    key = hashlib.sha256("\n".join([python, *requirements]).encode()).hexdigest()[:12]

    def build(folder: Path) -> None:
        pip = _pip_for(python, folder.parent / f"{folder.name}-pip")
        _pip_wheel(pip, folder, *requirements, *build_requirements())
        for own in folder.glob("mcp_notebook-*.whl"):
            own.unlink()

    return once(run / f"wheelhouse-{key}", build)


def offline(wheels: Path) -> dict[str, str]:
    """The environment that makes pip install from ``wheels`` alone, never from an index."""
    return {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels)}
