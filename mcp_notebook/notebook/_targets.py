"""Connect targets as people type them: one parser for ``connect("demo")``, ``%mcp connect`` and
the registry's descriptions.

What it owns: splitting a line into words (shell style), telling a URL from a command line from a
name, and describing a target with nothing secret in it. The notebook layer and the magics both
read targets through here, so the three used to disagree no more.

What it must never do: import IPython or the magics (the notebook layer sits below them), connect,
or show a secret (tokens, header values, environment values) in a description or an error.
"""

from __future__ import annotations

import os
import shlex

__all__ = ["TargetError", "split_line"]


class TargetError(ValueError):
    """A mistake in a target someone typed; its message is one line, meant to be shown as is.
    (The magics' ``MagicArgError`` derives from it, so a magic shows it as its own.)"""


def split_line(line: str) -> list[str]:
    """The line's words, shell style (quotes group words and are removed).

    On Windows a backslash is a path separator, not an escape, so ``C:\\Python\\python.exe`` stays.
    """
    lexer = shlex.shlex(line, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    if os.name == "nt":
        lexer.escape = ""
    try:
        return list(lexer)
    except ValueError as exc:  # "No closing quotation", "No escaped character"
        raise TargetError(f"cannot split the line into words: {str(exc).lower()}") from None
