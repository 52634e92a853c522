"""The limits that keep the package's structure (issue #27), checked on the source tree.

import-linter holds the layers and forbids cycles (scripts/test.sh runs it) and ruff holds each
function to complexity 15; these are the rest: module size, a small public face, one exception tree.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import mcp_notebook

PACKAGE = Path(mcp_notebook.__file__).resolve().parent
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_no_module_outside_demo_is_over_800_lines() -> None:
    assert len(MODULES) > 100
    sizes = {
        str(p.relative_to(PACKAGE)): len(p.read_text(encoding="utf-8").splitlines())
        for p in MODULES
        if "demo" not in p.relative_to(PACKAGE).parts
    }
    assert {name: n for name, n in sizes.items() if n > 800} == {}


def test_at_most_two_public_leaf_modules() -> None:
    # Everything is reached through a package face; the two left are the demos run with `python -m`.
    public = sorted(
        str(p.relative_to(PACKAGE))
        for p in MODULES
        if p.name != "__init__.py" and p.name != "__main__.py" and not p.name.startswith("_")
    )
    assert public == ["demo/apps.py", "demo/tour.py"]


def test_every_exception_the_face_exports_is_an_mcp_error() -> None:
    exported = [getattr(mcp_notebook, name) for name in mcp_notebook.__all__]
    errors = [obj for obj in exported if inspect.isclass(obj) and issubclass(obj, BaseException)]
    assert len(errors) >= 10
    assert [e.__name__ for e in errors if not issubclass(e, mcp_notebook.McpError)] == []
