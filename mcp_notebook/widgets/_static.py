"""Where the widgets' front-end sources are: ``widgets/`` in the repository, ``static/`` when installed.

The App view's ES module and the panels' renderer and stylesheet live in the repository's
top-level ``widgets/`` folder (DESIGN.md) and ship inside the package (hatch copies them into
``mcp_notebook/widgets/static/``, pyproject's force-include), so a notebook needs no Node and no
network. Its own module because both the App view and the panels' toolkit read them, and neither
may import the other.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["static_path"]


def static_path(name: str) -> Path:
    """The file ``name`` of the front end: inside the package when installed from a wheel or an
    sdist, else the repository's ``widgets/`` folder (an editable install, a checkout on
    ``PYTHONPATH``)."""
    packaged = Path(__file__).with_name("static") / name
    if packaged.is_file():
        return packaged
    checkout = Path(__file__).resolve().parents[2] / "widgets" / name
    if checkout.is_file():
        return checkout
    raise FileNotFoundError(f"the front end's {name} is missing from the package: reinstall mcp-notebook")
