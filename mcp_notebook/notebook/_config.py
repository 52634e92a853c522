"""Naming servers: ``connect("demo")`` finds "demo" in an ``mcp.json`` file.

The ``mcpServers`` format is the one Claude Desktop, Cursor and fastmcp read (VS Code's
``.vscode/mcp.json`` calls the same map ``servers``)::

    {"mcpServers": {"demo": {"command": "python", "args": ["-m", "mcp_notebook.demo"],
                             "env": {"TOKEN": "..."}, "cwd": "."},
                    "remote": {"url": "https://example.com/mcp",
                               "headers": {"Authorization": "Bearer ${env:REMOTE_TOKEN}"}}}}

An entry with a ``url`` is an HTTP server; its ``headers`` go on every request (their values are
secrets, never shown), and ``${env:NAME}`` in a header value is read from the environment, so the
file itself need not hold the token.

Files are searched in order: ``./mcp.json``, ``./.mcp.json``, ``./.vscode/mcp.json``, then
``$XDG_CONFIG_HOME/mcp/mcp.json`` (``~/.config/mcp/mcp.json``). The first file naming the server
wins. A target that is not a plain name (it has spaces, is a list, or is an object) is used as is.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

__all__ = ["config_files", "resolve_target"]


def config_files() -> list[Path]:
    here = Path.cwd()
    home_config = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    candidates = [
        here / "mcp.json",
        here / ".mcp.json",
        here / ".vscode" / "mcp.json",
        home_config / "mcp" / "mcp.json",
    ]
    return [path for path in candidates if path.is_file()]


def _servers(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path} is not a readable JSON file: {exc}") from None
    if not isinstance(data, dict):
        return {}
    servers = data.get("mcpServers", data.get("servers"))
    return servers if isinstance(servers, dict) else {}


def resolve_target(target: Any) -> tuple[Any, dict[str, Any], str | None]:
    """``(target for the Client, options from the config, a label)``."""
    if not isinstance(target, str) or any(c.isspace() for c in target) or "/" in target:
        return target, {}, None
    for path in config_files():
        entry = _servers(path).get(target)
        if entry is None:
            continue
        if not isinstance(entry, dict):
            raise ValueError(f"server {target!r} in {path} is not an object")
        if "url" in entry and "command" not in entry:
            return _http_entry(target, entry, path)
        command = entry.get("command")
        if not isinstance(command, str):
            raise ValueError(f"server {target!r} in {path} has no 'command'")
        args = entry.get("args") or []
        options: dict[str, Any] = {}
        if isinstance(entry.get("env"), dict):
            options["env"] = {str(k): str(v) for k, v in entry["env"].items()}
        if isinstance(entry.get("cwd"), str):
            options["cwd"] = str((path.parent / entry["cwd"]).resolve())
        return [command, *[str(a) for a in args]], options, target
    if shutil.which(target) is None:
        known = sorted({name for path in config_files() for name in _servers(path)})
        hint = f" (servers in mcp.json: {', '.join(known)})" if known else " (no mcp.json found)"
        raise ValueError(f"{target!r} is neither a server named in mcp.json nor a command on PATH{hint}")
    return target, {}, None


def _http_entry(name: str, entry: dict[str, Any], path: Path) -> tuple[Any, dict[str, Any], str]:
    url = entry["url"]
    if not isinstance(url, str) or not url.lower().startswith(("http://", "https://")):
        raise ValueError(f"server {name!r} in {path} has a 'url' that is not http(s)")
    options: dict[str, Any] = {}
    headers = entry.get("headers")
    if isinstance(headers, dict):
        options["headers"] = {str(k): _expand_env(str(v), name, path) for k, v in headers.items()}
    return url, options, name


def _expand_env(value: str, name: str, path: Path) -> str:
    """``${env:NAME}`` -> the variable's value (VS Code's notation); a missing one is an error."""

    def one(match: re.Match[str]) -> str:
        variable = match.group(1)
        found = os.environ.get(variable)
        if found is None:
            raise ValueError(f"server {name!r} in {path} needs the environment variable {variable}")
        return found

    return re.sub(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}", one, value)
