"""What to say when a stdio server's program cannot be found.

A program that is missing cannot be guessed: the error says so, and how to name it.
"""

from __future__ import annotations

import os
import sys

from ..protocol._errors import McpError

__all__ = ["missing_program"]


def missing_program(program: str, cwd: str | None) -> McpError:
    """The error for a program that could not be found: nothing started, so nothing to retry."""
    where = "" if os.path.dirname(program) else " on PATH"
    if cwd:
        where += f" (the working directory was {cwd!r})"
    bin_dir = "Scripts" if sys.platform == "win32" else "bin"
    name = os.path.basename(program)
    advice = (
        f"nothing was started, so nothing will retry: give the program's full path, e.g. the one in "
        f"the virtualenv it is installed in (/path/to/.venv/{bin_dir}/{name}), or add that folder to PATH"
    )
    error = McpError("transport", f"could not start the server: {program!r} was not found{where}; {advice}")
    error.advice = advice
    return error
