"""Connect targets as people type them: the one parser behind ``connect("demo")``, ``%mcp connect``
and the registry's descriptions.

What it owns: splitting a line into words (shell style); telling a URL (the protocol's
:func:`~mcp_notebook.protocol._http_binding.is_http_url`) from a command line from a name; turning a
name into a server of an MCP config file (the formats, variables and search order are
:mod:`mcp_notebook.config`'s: the first file on the search path that names the server wins) or a
command on PATH; ``%mcp connect``'s words and HTTP options; and describing a target with nothing
secret in it. ``connect()``, the magics and the registry all read targets here, so they cannot
disagree about what a word means.

What it must never do: import IPython or the magics (the notebook layer sits below them), connect,
or show a secret (a token, a header's value, an environment value) in a description or an error.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from ..config import ConfigError, ServerEntry, config_search_path, load_config
from ..protocol._http_binding import is_http_url

__all__ = [
    "TargetError",
    "TargetOptions",
    "config_files",
    "connect_target",
    "describe_command",
    "describe_target",
    "describe_url",
    "find_entry",
    "http_options",
    "is_name",
    "resolve_target",
    "server_names",
    "split_line",
]


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


# --- names: config files, then PATH ------------------------------------------------------------------


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
    """A plain name (no spaces, no slash): looked up in the config files, then on PATH."""
    return isinstance(target, str) and not any(c.isspace() for c in target) and "/" not in target


def resolve_target(target: Any) -> tuple[Any, dict[str, Any], str | None]:
    """``(target for the Client, options from the config, a label)``; a target that is not a plain
    name (it has spaces or a slash, is a list, or is an object) is used as is."""
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


# --- %mcp connect's words ----------------------------------------------------------------------------


class TargetOptions(Protocol):
    """What :func:`connect_target` reads of the magics' parsed options."""

    @property
    def words(self) -> list[str]: ...
    @property
    def command(self) -> list[str] | None: ...
    @property
    def token_env(self) -> str | None: ...
    @property
    def headers(self) -> list[str]: ...
    @property
    def header_env(self) -> list[str]: ...


def connect_target(options: TargetOptions, usage: str) -> tuple[str | None, Any, str]:
    """``NAME -- COMMAND…``, ``[NAME] URL`` or ``NAME``: ``(name or None, target for connect(), a
    safe description)``. ``usage`` is the line a wrong shape is answered with."""
    words = options.words
    if options.command is not None:
        name, target, described = _command_target(words, options.command, usage)
    elif len(words) in (1, 2) and is_http_url(words[-1]):
        target = words[-1]
        name = words[0] if len(words) == 2 else (urlsplit(target).hostname or None)
        described = describe_url(target)
    elif len(words) == 1:
        name = target = words[0]
        described = _describe_name(name)
    else:
        raise TargetError(usage)
    if name is not None and (name.startswith("-") or "=" in name):
        raise TargetError(f"{name[:40]!r} cannot be a session name; {usage}")
    if not _is_url(target):
        http_only = [
            option
            for option, value in (
                ("--token-env", options.token_env),
                ("--header", options.headers),
                ("--header-env", options.header_env),
            )
            if value
        ]
        if http_only:
            raise TargetError(f"{', '.join(http_only)} apply only to a server URL")
    return name, target, described


def _command_target(words: Sequence[str], command: list[str], usage: str) -> tuple[str | None, Any, str]:
    if not command:
        raise TargetError("nothing after '--': give the command that starts the server")
    if len(words) > 1:
        raise TargetError(usage)
    target = list(command)
    return (words[0] if words else None), target, describe_command(target)


def _describe_name(name: str) -> str:
    """A NAME alone: a config file's server (described with its format), or a command on PATH; an
    error saying it is neither otherwise."""
    try:
        entry = find_entry(name)
        if entry is None:
            resolve_target(name)  # a command on PATH, or the error saying it is neither
    except ValueError as exc:
        raise TargetError(str(exc)) from None
    if entry is None:
        return describe_command(name)
    if entry.transport == "stdio":
        return f"{describe_command(split_line(entry.describe()))} ({entry.format})"
    return f"{entry.describe()} ({entry.format})"


def _is_url(target: Any) -> bool:
    return isinstance(target, str) and is_http_url(target)


def http_options(options: TargetOptions, target: Any) -> dict[str, Any]:
    """``headers`` and ``auth`` for an HTTP target from ``--header``, ``--header-env`` and
    ``--token-env`` (the last two read the environment; the values are never shown)."""
    if not _is_url(target):
        return {}
    result: dict[str, Any] = {}
    headers: dict[str, str] = {}
    for pair in options.headers:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise TargetError("--header needs NAME=VALUE")
        headers[key] = value
    for pair in options.header_env:
        key, sep, variable = pair.partition("=")
        if not sep or not key or not variable:
            raise TargetError("--header-env needs NAME=ENVIRONMENT_VARIABLE")
        headers[key] = _environment(variable, "--header-env")
    if headers:
        result["headers"] = headers
    if options.token_env is not None:
        result["auth"] = _environment(options.token_env, "--token-env")
    return result


def _environment(variable: str, option: str) -> str:
    value = os.environ.get(variable)
    if not value:
        raise TargetError(f"{option}: the environment variable {variable!r} is not set")
    return value


# --- safe descriptions -------------------------------------------------------------------------------

_SECRET_WORD = re.compile(r"token|secret|password|passwd|api[-_]?key|auth|credential|bearer", re.IGNORECASE)


def describe_target(text: str) -> str:
    """A server's command line or URL as a session lists it, with nothing secret in it."""
    if is_http_url(text):
        return describe_url(text)
    try:
        return describe_command(text)
    except ValueError:  # not a command line (an unbalanced quote): the first word only
        return text.split(" ", 1)[0]


def describe_command(command: str | list[str] | tuple[str, ...]) -> str:
    """The command, with the values of secret-looking arguments (``--api-key X``, ``TOKEN=X``) hidden."""
    argv = split_line(command) if isinstance(command, str) else [str(a) for a in command]
    if not argv:
        return ""
    shown = [os.path.basename(argv[0]) or argv[0]]
    hide_next = False
    for arg in argv[1:]:
        if hide_next:
            shown.append("***")
            hide_next = False
            continue
        key, sep, _ = arg.partition("=")
        if sep and _SECRET_WORD.search(key):
            shown.append(f"{key}=***")
        else:
            shown.append(arg)
            hide_next = arg.startswith("-") and bool(_SECRET_WORD.search(arg))
    return " ".join(shown)


def describe_url(url: str) -> str:
    """The URL without credentials, query or fragment (they may hold tokens)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"
