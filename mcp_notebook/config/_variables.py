"""Variables in config values: every syntax the editors' and assistants' formats document.

One pure function, :func:`expand`, over one string; it does no I/O and reads nothing global (the
environment, folders and input answers come in a :class:`Context`), so it is tested by tables.

Syntaxes, all accepted in every format (the formats are compatible supersets of each other):

- ``${env:NAME}`` (VS Code, Cursor, ours): the environment variable; unset is an error.
- ``${NAME}`` and ``${NAME:-default}`` (Claude Code): the environment variable; unset is an error
  for the first, the default for the second (also when it is empty, as in the shell).
- ``${workspaceFolder}``, ``${workspaceFolderBasename}``, ``${userHome}``, ``${pathSeparator}`` and
  its short form ``${/}`` (VS Code, Cursor).
- ``${input:ID}`` (VS Code): the answer to the input, asked through the context (it may prompt).

Anything else in ``${...}`` is an unknown variable, which is an error: sending a server the literal
text would fail later and further from the cause. A value put in is never expanded again, so a
secret that happens to contain ``${`` stays as it is. Errors name the variable, never a value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Context", "Expanded", "VariableError", "expand"]

_PLACEHOLDER = re.compile(r"\$\{([^{}]*)\}")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_WITH_DEFAULT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*):-(.*)", re.DOTALL)

#: VS Code variables that mean something only inside the editor (the open file, the selection...):
#: named as unknown rather than looked up as environment variables of the same name.
_EDITOR_ONLY = frozenset(
    {
        "cwd",
        "defaultBuildTask",
        "execPath",
        "file",
        "fileBasename",
        "fileBasenameNoExtension",
        "fileDirname",
        "fileDirnameBasename",
        "fileExtname",
        "fileWorkspaceFolder",
        "lineNumber",
        "relativeFile",
        "relativeFileDirname",
        "selectedText",
        "workspaceRoot",
        "workspaceRootFolderName",
    }
)


class VariableError(Exception):
    """A variable that cannot be expanded; the message names it and never holds a value."""


@dataclass(frozen=True)
class Context:
    """What variables expand to. ``answer(id)`` returns an input's answer or raises VariableError."""

    environ: Mapping[str, str]
    workspace: Path
    home: Path
    separator: str
    answer: Callable[[str], str]


@dataclass(frozen=True)
class Expanded:
    """The expanded text, and whether a secret went into it (a value from the environment or an
    input), so a display can show the template instead of the value."""

    value: str
    secret: bool


def expand(text: str, context: Context) -> Expanded:
    """``text`` with every ``${...}`` replaced; raises VariableError for the first bad one."""
    secret = False

    def one(match: re.Match[str]) -> str:
        nonlocal secret
        value, is_secret = _variable(match.group(1), context)
        secret = secret or is_secret
        return value

    return Expanded(_PLACEHOLDER.sub(one, text), secret)


def _variable(body: str, context: Context) -> tuple[str, bool]:
    if body.startswith("env:"):
        return _environment(body[4:], context), True
    if body.startswith("input:") and body[6:]:
        return context.answer(body[6:]), True
    if body == "workspaceFolder":
        return str(context.workspace), False
    if body == "workspaceFolderBasename":
        return context.workspace.name, False
    if body == "userHome":
        return str(context.home), False
    if body in ("pathSeparator", "/"):
        return context.separator, False
    with_default = _WITH_DEFAULT.fullmatch(body)
    if with_default:
        found = context.environ.get(with_default.group(1))
        return (found, True) if found else (with_default.group(2), False)
    if _NAME.fullmatch(body) and body not in _EDITOR_ONLY:
        return _environment(body, context), True
    shown = body if len(body) <= 60 else body[:57] + "..."
    raise VariableError(f"unknown variable ${{{shown}}}")


def _environment(name: str, context: Context) -> str:
    if not name:
        raise VariableError("${env:} names no environment variable")
    found = context.environ.get(name)
    if found is None:
        raise VariableError(f"needs the environment variable {name} (not set)")
    return found
