"""Where config files are looked for, in order: the project's files first, then the user's.

The order (documented in the README; the first file naming a server wins):

1. ``./mcp.json`` (ours), ``./.mcp.json`` (Claude Code), ``./.vscode/mcp.json`` (VS Code),
   ``./.cursor/mcp.json`` (Cursor): the project, in the current directory.
2. ``~/.cursor/mcp.json``: Cursor's global file.
3. Claude Desktop's file: ``~/Library/Application Support/Claude/`` on macOS,
   ``%APPDATA%\\Claude\\`` on Windows, ``$XDG_CONFIG_HOME/Claude/`` (``~/.config/Claude/``) elsewhere.
4. ``$XDG_CONFIG_HOME/mcp/mcp.json`` (``~/.config/mcp/mcp.json``): ours, per user.

Everything it depends on (directory, home, platform, environment) can be passed in, so the order
is tested without touching the real home.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = ["config_search_path", "find_config", "home_folder"]

CLAUDE_DESKTOP_FILE = "claude_desktop_config.json"


def home_folder(environ: Mapping[str, str] | None = None) -> Path:
    """The user's home: ``HOME`` (or ``USERPROFILE``) of ``environ`` when given, else the real one."""
    if environ is not None:
        found = environ.get("HOME") or environ.get("USERPROFILE")
        if found:
            return Path(found)
    return Path.home()


def config_search_path(
    *,
    cwd: Path | None = None,
    home: Path | None = None,
    platform: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[Path]:
    """The candidate files in search order, existing or not (see the module's docstring)."""
    environ = os.environ if environ is None else environ
    here = Path.cwd() if cwd is None else Path(cwd)
    home = home_folder(environ) if home is None else Path(home)
    platform = sys.platform if platform is None else platform
    xdg = Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
    if platform == "darwin":
        claude_desktop = home / "Library" / "Application Support" / "Claude"
    elif platform.startswith("win"):
        claude_desktop = Path(environ.get("APPDATA") or home / "AppData" / "Roaming") / "Claude"
    else:
        claude_desktop = xdg / "Claude"
    candidates = [
        here / "mcp.json",
        here / ".mcp.json",
        here / ".vscode" / "mcp.json",
        here / ".cursor" / "mcp.json",
        home / ".cursor" / "mcp.json",
        claude_desktop / CLAUDE_DESKTOP_FILE,
        xdg / "mcp" / "mcp.json",
    ]
    return list(dict.fromkeys(candidates))  # the project may be the home folder


def find_config(
    *,
    cwd: Path | None = None,
    home: Path | None = None,
    platform: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> Path | None:
    """The first file of :func:`config_search_path` that exists, or None."""
    for path in config_search_path(cwd=cwd, home=home, platform=platform, environ=environ):
        if path.is_file():
            return path
    return None
