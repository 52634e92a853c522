"""Naming servers: ``connect("demo")`` finds "demo" in a config file on the search path.

Thin on purpose: the formats (Claude Desktop, VS Code, Cursor, Claude Code, ``mcp.json``), the
variables, the inputs and the search order are :mod:`mcp_notebook.config`'s (core, so scripts read
the same files). This module only turns a name into ``(target, options, label)`` for a Session:
the first file on the search path that names the server wins. A target that is not a plain name
(it has spaces or a slash, is a list, or is an object) is used as is.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from ..config import ConfigError, ServerEntry, config_search_path, load_config

__all__ = ["config_files", "find_entry", "resolve_target", "server_names"]


def config_files() -> list[Path]:
    """The config files on the search path that exist, in search order."""
    return [path for path in config_search_path() if path.is_file()]


def server_names() -> list[str]:
    """Every server name the config files declare, first file first (unreadable files skipped)."""
    names: list[str] = []
    for path in config_files():
        try:
            names += load_config(path, only=()).declared
        except ConfigError:
            continue
    return list(dict.fromkeys(names))


def find_entry(name: str) -> ServerEntry | None:
    """The entry of the first file that names ``name``, resolved (this may ask for VS Code inputs);
    None if no file names it. A bad entry, or an unreadable file before it, raises ConfigError."""
    for path in config_files():
        if name in load_config(path, only=()).declared:
            config = load_config(path, only=[name])
            if name in config.errors:
                raise config.errors[name]
            return config.servers[name]
    return None


def is_name(target: Any) -> bool:
    return isinstance(target, str) and not any(c.isspace() for c in target) and "/" not in target


def resolve_target(target: Any) -> tuple[Any, dict[str, Any], str | None]:
    """``(target for the Client, options from the config, a label)``."""
    if not is_name(target):
        return target, {}, None
    entry = find_entry(target)
    if entry is not None:
        resolved, options = entry.client_args()
        return resolved, options, target
    if shutil.which(target) is None:
        known = server_names()
        hint = f" (servers in config files: {', '.join(known)})" if known else " (no MCP config file found)"
        raise ValueError(f"{target!r} is neither a server named in mcp.json nor a command on PATH{hint}")
    return target, {}, None
