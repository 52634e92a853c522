"""Reading a config file, and telling which tool's format it is.

All the formats are one shape with different spellings, so one tolerant reader serves them all:

- Claude Desktop ``claude_desktop_config.json`` and Cursor ``.cursor/mcp.json``: ``mcpServers``.
- Claude Code ``.mcp.json``: ``mcpServers``, entries with ``type`` stdio/http/sse.
- VS Code ``.vscode/mcp.json``: ``servers`` and ``inputs``; VS Code user settings nest both under
  ``mcp``. VS Code writes JSON with comments and trailing commas, which the reader accepts.
- Ours, ``mcp.json``: ``mcpServers`` or ``servers``.

The format name is for display (and for nothing else): the file's name and folder say it first,
the keys second. Also here: the workspace folder a file's ``${workspaceFolder}`` and relative
paths mean. Pure apart from :func:`read_file`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ._errors import ConfigError

__all__ = ["detect_format", "read_file", "sections", "strip_jsonc", "workspace_for"]


def read_file(path: Path) -> dict[str, Any]:
    """The file's top-level object; ConfigError naming the file (and line/column) otherwise."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ConfigError(f"cannot read the file ({exc.strerror or type(exc).__name__})", path=path) from None
    except UnicodeDecodeError:
        raise ConfigError("is not UTF-8 text", path=path) from None
    try:
        data = json.loads(strip_jsonc(text))
    except json.JSONDecodeError as exc:
        # Only the position and the parser's reason: never the text, which may hold tokens.
        where = f"line {exc.lineno}, column {exc.colno}"
        raise ConfigError(f"invalid JSON at {where}: {exc.msg}", path=path) from None
    if not isinstance(data, dict):
        raise ConfigError(f"holds a JSON {type(data).__name__}, not an object", path=path)
    return data


def strip_jsonc(text: str) -> str:
    """``text`` with ``//`` and ``/* */`` comments and trailing commas blanked out (JSONC, as VS
    Code writes it). Blanked, not removed: JSON errors keep their line and column."""
    out = list(text)
    i, n = 0, len(text)
    last_comma: int | None = None
    while i < n:
        c = text[i]
        if c == '"':
            last_comma = None
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            continue
        if c == "/" and i + 1 < n and text[i + 1] in "/*":
            end = text.find("\n", i) if text[i + 1] == "/" else text.find("*/", i + 2)
            end = n if end < 0 else (end if text[i + 1] == "/" else end + 2)
            for j in range(i, end):
                if out[j] not in "\r\n":
                    out[j] = " "
            i = end
            continue
        if c == ",":
            last_comma = i
        elif c in "}]":
            if last_comma is not None:
                out[last_comma] = " "
            last_comma = None
        elif not c.isspace():
            last_comma = None
        i += 1
    return "".join(out)


def sections(data: dict[str, Any], path: Path | None) -> tuple[dict[str, Any], list[Any]]:
    """``(servers, inputs)`` of a loaded file, whichever spelling it uses."""
    holder = data
    if "mcpServers" not in data and "servers" not in data and isinstance(data.get("mcp"), dict):
        holder = data["mcp"]  # VS Code user settings
    key = "mcpServers" if "mcpServers" in holder else "servers"
    servers = holder.get(key, {})
    if not isinstance(servers, dict):
        raise ConfigError(f"'{key}' is not an object", path=path)
    inputs = holder.get("inputs", data.get("inputs", []))
    if not isinstance(inputs, list):
        raise ConfigError("'inputs' is not a list", path=path)
    return servers, inputs


def detect_format(path: Path | None, data: dict[str, Any]) -> str:
    """ "claude-desktop", "vscode", "cursor", "claude-code", "mcp.json" (or "dict" with no file)."""
    if path is None:
        return "dict"
    if path.name == "claude_desktop_config.json":
        return "claude-desktop"
    if path.parent.name == ".vscode" or (isinstance(data.get("mcp"), dict) and "mcpServers" not in data):
        return "vscode"
    if path.parent.name == ".cursor":
        return "cursor"
    if path.name == ".mcp.json":
        return "claude-code"
    if "inputs" in data and "servers" in data and "mcpServers" not in data:
        return "vscode"
    return "mcp.json"


def workspace_for(path: Path) -> Path:
    """The folder ``${workspaceFolder}`` means: the one holding ``.vscode/`` or ``.cursor/`` for a
    file in such a folder, else the file's own folder."""
    folder = path.parent
    return folder.parent if folder.name in (".vscode", ".cursor") else folder
