"""The name code shown in a panel calls a session by: the user's own variable (issue #29).

Why: "copy as Python" wrote ``session.call_tool(...)`` and the tasks panel's hint a ``result``
that no cell defined, so the code did not run as written in a new cell when the session was
``demo``. The name is looked up in the notebook's namespace (IPython's ``user_ns``, marimo's
globals: :func:`~mcp_notebook.notebook._host.user_namespace`) when the code is shown, so it
follows a rename.
"""

from __future__ import annotations

import keyword
from typing import Any

from ..notebook._host import user_namespace

__all__ = ["session_variable"]


def _identifier(name: Any) -> bool:
    return isinstance(name, str) and name.isidentifier() and not keyword.iskeyword(name)


def session_variable(session: Any, default: str = "session") -> str:
    """The user's variable whose value is ``session`` (the first public one), else the session's
    name when it is an identifier, else ``default``."""
    for name, value in list(user_namespace().items()):
        if value is session and _identifier(name) and not name.startswith("_"):
            return name
    registered = getattr(session, "name", None)
    return registered if isinstance(registered, str) and _identifier(registered) else default
