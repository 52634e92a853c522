"""What ships: the wheel holds the package's tracked files and its static front end, and nothing stray.

A merge leftover (``_http.py.orig``) once sat committed inside the package and went into every wheel:
hatchling ships whatever lies in the package folder and git does not ignore.
"""

from __future__ import annotations

import re
import subprocess
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: Built from the top-level widgets/ folder into the package (pyproject's force-include).
STATIC = {
    "mcp_notebook/widgets/static/mcp_app.js",  # the App view
    "mcp_notebook/widgets/static/panel.js",  # every other panel's renderer and its stylesheet
    "mcp_notebook/widgets/static/panel.css",
}
#: Merge and editor leftovers, backups, bytecode, tests: never in a wheel.
STRAY = re.compile(
    r"\.(orig|rej|bak|swp|pyc|pyo)$|~$|(^|/)(#[^/]*#|\.#[^/]*)$|(^|/)(__pycache__|tests?|conftest\.py)(/|$)"
)


def _tracked_package_files() -> set[str]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "mcp_notebook"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return {name for name in listed.stdout.split("\0") if name}


def _shipped(wheel: Path) -> set[str]:
    """The wheel's files less its metadata (the .dist-info folder)."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    return {name for name in names if not name.split("/", 1)[0].endswith(".dist-info")}


def test_the_wheel_ships_no_stray_files(package_wheel: Path) -> None:
    stray = sorted(name for name in _shipped(package_wheel) if STRAY.search(name))
    assert not stray, f"{package_wheel.name} ships files no user needs: {stray}"


def test_the_wheel_ships_every_tracked_package_file_and_the_static_front_end(package_wheel: Path) -> None:
    shipped, tracked = _shipped(package_wheel), _tracked_package_files()
    assert tracked, "git lists no files under mcp_notebook/"
    assert any(name.endswith(".py") for name in tracked)
    missing = sorted((tracked | STATIC) - shipped)
    untracked = sorted(shipped - tracked - STATIC)
    assert not missing, f"{package_wheel.name} lacks {missing}"
    assert not untracked, f"{package_wheel.name} ships files git does not track: {untracked}"


def test_the_stray_pattern_knows_a_leftover_from_a_module() -> None:
    leftovers = ("a/_http.py.orig", "a/b.py.rej", "a/b.py~", "a/b.bak", "a/__pycache__/b.pyc", "a/#b.py#")
    for leftover in leftovers:
        assert STRAY.search(leftover), leftover
    for module in ("mcp_notebook/transports/_http.py", "mcp_notebook/widgets/static/mcp_app.js"):
        assert not STRAY.search(module), module
