"""The environment a stdio server starts with: an allow-list of the kernel's, plus ``env=``.

Why an allow-list: a notebook kernel's environment routinely holds API keys and cloud credentials
(``OPENAI_API_KEY``, ``AWS_SECRET_ACCESS_KEY``, ...), and a server started from a one-line command
is often third-party code fetched by ``npx`` or ``uvx``. By default it gets only what a program
needs to find its tools, its home and its locale; anything else the caller passes explicitly with
``env=``, or passes everything with ``inherit_env=True``. The official MCP SDKs do the same.

Pure: no I/O; the caller hands in the environment and the platform.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["INHERITED_POSIX", "INHERITED_WINDOWS", "child_env"]

#: Variables a POSIX server inherits by default (plus every ``LC_*`` locale variable).
INHERITED_POSIX: frozenset[str] = frozenset(
    {"HOME", "LANG", "LANGUAGE", "LOGNAME", "PATH", "SHELL", "TERM", "TMPDIR", "TZ", "USER"}
)
#: Variables a Windows server inherits by default (names compared case-insensitively).
INHERITED_WINDOWS: frozenset[str] = frozenset(
    {
        "APPDATA",
        "COMSPEC",
        "HOMEDRIVE",
        "HOMEPATH",
        "LOCALAPPDATA",
        "PATH",
        "PATHEXT",
        "PROCESSOR_ARCHITECTURE",
        "PROGRAMDATA",
        "PROGRAMFILES",
        "SYSTEMDRIVE",
        "SYSTEMROOT",
        "TEMP",
        "TMP",
        "USERNAME",
        "USERPROFILE",
        "WINDIR",
    }
)


def child_env(
    environ: Mapping[str, str], extra: Mapping[str, str], *, inherit_all: bool, windows: bool
) -> dict[str, str]:
    """The server's environment: ``environ`` (all of it, or the allow-list) updated with ``extra``.

    Values that start with ``()`` are never inherited by the allow-list: they are exported shell
    functions, a way to smuggle code into a child's shell.
    """
    if inherit_all:
        base = dict(environ)
    else:
        base = {
            name: value
            for name, value in environ.items()
            if _inherited(name, windows) and not value.startswith("()")
        }
    base.update(extra)
    return base


def _inherited(name: str, windows: bool) -> bool:
    if windows:
        return name.upper() in INHERITED_WINDOWS
    return name in INHERITED_POSIX or name.startswith("LC_")
