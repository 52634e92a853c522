"""Which program a stdio server's command starts, and what to say when there is none.

Why a bare ``python`` is special: the commands people copy (READMEs, config files, ``%mcp connect
demo -- python -m ...``) say ``python``, but Debian and Ubuntu have no ``python`` on PATH and a
virtualenv that was created but never activated puts none there either, so the command failed
with "'python' was not found" while the Python running this very code stood ready. A bare
``python``/``python3`` that PATH does not have means the running interpreter; one PATH has is
used as it is, since the user's PATH is the user's choice.

A program that is missing otherwise cannot be guessed: the error says so, and how to name it.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping

from ..protocol._errors import McpError

__all__ = ["BARE_PYTHONS", "missing_program", "stand_in_interpreter"]

#: Commands that mean "a Python": the running one, when PATH has none of that name.
BARE_PYTHONS: frozenset[str] = frozenset({"python", "python3"})


def stand_in_interpreter(program: str, env: Mapping[str, str]) -> str | None:
    """The running interpreter, for a bare ``python``/``python3`` that the server's PATH (in
    ``env``, as the process is started with it) does not have; None: start ``program`` as it is."""
    if program not in BARE_PYTHONS or not sys.executable:
        return None
    path = next((value for name, value in env.items() if name.upper() == "PATH"), os.defpath)
    if shutil.which(program, path=path) is not None:
        return None
    return sys.executable


def missing_program(program: str, cwd: str | None) -> McpError:
    """The error for a program that could not be found: nothing started, so nothing to retry.

    The message says how to name the program; the advice (a notebook's "what to do") adds that
    there is nothing to retry, which holds where the error is raised: a group, whose board shows
    the message, tries its servers again in the background.
    """
    where = "" if os.path.dirname(program) else " on PATH"
    if cwd:
        where += f" (the working directory was {cwd!r})"
    bin_dir = "Scripts" if sys.platform == "win32" else "bin"
    name = os.path.basename(program)
    how = (
        f"give the program's full path, e.g. the one in the virtualenv it is installed in "
        f"(/path/to/.venv/{bin_dir}/{name}), or add that folder to PATH"
    )
    error = McpError("transport", f"could not start the server: {program!r} was not found{where}; {how}")
    error.advice = f"nothing was started, so there is nothing to retry: {how}, then connect again"
    return error
