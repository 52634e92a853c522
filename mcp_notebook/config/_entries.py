"""One server entry: its checked, expanded form (:class:`ServerEntry`) and how a raw one becomes it.

:func:`resolve_entry` turns the raw JSON of one entry into a :class:`ServerEntry` or raises the one
:class:`ConfigError` that says what is wrong with it (the first problem found, naming the field), so
a loader can record it and go on with the other entries. It expands variables (``_variables``),
reads ``envFile`` with python-dotenv, and makes relative paths relative to the workspace folder.

The values in ``env`` and ``headers`` are secrets: the repr of an entry shows their keys only, and
:meth:`ServerEntry.describe` shows a value that came from the environment or an input as the
``${...}`` text it was written as.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal
from urllib.parse import urlsplit

from ..protocol._http_binding import is_http_url
from ._errors import ConfigError
from ._variables import Context, VariableError, expand

__all__ = ["ServerEntry", "TransportName", "resolve_entry"]

TransportName = Literal["stdio", "http", "sse"]

#: Every spelling of a transport the formats use; "http" is Streamable HTTP (which may fall back
#: to the legacy HTTP+SSE transport by itself), "sse" is the legacy transport only.
_TYPES: dict[str, TransportName] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamableHttp": "http",
    "streamable_http": "http",
    "sse": "sse",
}


@dataclass(frozen=True, repr=False)
class ServerEntry:
    """One server from a config file, with every variable expanded and every field checked.

    ``env`` and ``headers`` hold secrets: the repr shows their keys only. To connect::

        target, options = entry.client_args()
        async with mcp_notebook.Client(target, **options) as client: ...
    """

    name: str
    transport: TransportName
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict, hash=False)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict, hash=False)
    source: Path | None = None
    format: str = "dict"
    #: What :meth:`describe` shows (secret parts as their ``${...}`` text); computed when empty.
    shown: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        # Read-only views: an entry is a value, shared by the cache of files and its users.
        object.__setattr__(self, "args", tuple(self.args))
        object.__setattr__(self, "env", MappingProxyType(dict(self.env)))
        object.__setattr__(self, "headers", MappingProxyType(dict(self.headers)))

    def __reduce__(self) -> tuple[Any, ...]:
        # The read-only views do not pickle; the entry does (to a worker process, say).
        fields = (self.command, self.args, dict(self.env), self.cwd, self.url, dict(self.headers))
        return (_rebuild, (self.name, self.transport, *fields, self.source, self.format, self.shown))

    def client_args(self) -> tuple[Any, dict[str, Any]]:
        """``(target, options)`` for ``mcp_notebook.Client(target, **options)``.

        stdio: the argv list, with ``env`` and ``cwd`` when set; http: the URL, with ``headers``;
        sse: an ``HttpTransport(url, headers=..., mode="sse")``, a new one on every call because a
        transport belongs to one client.
        """
        if self.transport == "stdio":
            options: dict[str, Any] = {}
            if self.env:
                options["env"] = dict(self.env)
            if self.cwd is not None:
                options["cwd"] = self.cwd
            return [str(self.command), *self.args], options
        if self.transport == "sse":
            from ..transports._http import HttpTransport

            return HttpTransport(str(self.url), headers=dict(self.headers), mode="sse"), {}
        return str(self.url), ({"headers": dict(self.headers)} if self.headers else {})

    def describe(self) -> str:
        """``"python -m x"`` or ``"https://host/mcp"``: no secret (no header, no env value, no URL
        query or user info; a part that came from the environment or an input shows as written)."""
        if self.shown:
            return self.shown
        if self.transport == "stdio":
            return shlex.join([str(self.command), *self.args])
        return _safe_url(str(self.url))

    def __repr__(self) -> str:
        # The command without its arguments (a literal token may be one); the URL without query.
        shown = self.describe()
        target = f"command={shlex.split(shown)[0]!r}" if self.command else f"url={shown!r}"
        parts = [f"name={self.name!r}", f"transport={self.transport!r}", target]
        if self.args:
            parts.append(f"args={len(self.args)}")
        if self.env:
            parts.append(f"env keys={sorted(self.env)!r}")
        if self.headers:
            parts.append(f"header names={sorted(self.headers)!r}")
        parts.append(f"format={self.format!r}")
        return f"ServerEntry({', '.join(parts)})"


def _rebuild(*values: Any) -> ServerEntry:
    return ServerEntry(*values)


def resolve_entry(
    name: str,
    raw: Any,
    *,
    path: Path | None,
    format: str,
    context: Context,
) -> ServerEntry:
    """The checked entry, or the ConfigError for its first problem."""
    fields = _Fields(name, path, format, context)
    error = fields.error
    if not isinstance(raw, dict):
        raise error(f"is a JSON {type(raw).__name__}, not an object")
    kind = raw.get("type")
    if kind is not None and (not isinstance(kind, str) or kind not in _TYPES):
        shown = kind[:30] if isinstance(kind, str) else type(kind).__name__
        raise error(f"unknown type {shown!r} (stdio, http or sse)", "type")
    command, url = raw.get("command"), raw.get("url")
    if kind is None and command is None and url is None:
        raise error("has neither 'command' nor 'url'")
    # No type: a command means stdio (also beside a url, as the old lookup read it), else http.
    untyped: TransportName = "stdio" if command is not None else "http"
    transport = _TYPES[kind] if kind is not None else untyped
    if transport == "stdio":
        return _stdio_entry(raw, command, fields)
    return _url_entry(raw, url, transport, fields)


@dataclass(frozen=True)
class _Fields:
    """What checking one entry's fields needs: where the entry came from (for its errors) and the
    variables its values may use."""

    name: str
    path: Path | None
    format: str
    context: Context

    def error(self, message: str, field_name: str | None = None) -> ConfigError:
        return ConfigError(message, path=self.path, server=self.name, field=field_name)

    def expanded(self, text: str, field_name: str) -> tuple[str, str]:
        """(value, what a display shows for it)."""
        try:
            result = expand(text, self.context)
        except VariableError as exc:
            raise self.error(str(exc), field_name) from None
        return result.value, (text if result.secret else result.value)


def _stdio_entry(raw: dict[str, Any], command: Any, fields: _Fields) -> ServerEntry:
    """A stdio entry: the command, its arguments, its environment and its folder."""
    error, expanded, context = fields.error, fields.expanded, fields.context
    if not isinstance(command, str) or not command.strip():
        raise error("must be the command that starts the server (a non-empty string)", "command")
    command, shown_command = expanded(command, "command")
    raw_args = raw.get("args")
    if raw_args is None:
        raw_args = []
    if not isinstance(raw_args, list) or not all(isinstance(a, str) for a in raw_args):
        raise error("must be a list of strings", "args")
    args, shown_args = [], []
    for i, arg in enumerate(raw_args):
        value, shown = expanded(arg, f"args[{i}]")
        args.append(value)
        shown_args.append(shown)
    env = _env_file(raw.get("envFile"), context, expanded, error)
    for key, value in _string_map(raw.get("env"), "env", error).items():
        env[key] = expanded(value, f"env.{key}")[0]
    cwd = raw.get("cwd")
    if cwd is not None:
        if not isinstance(cwd, str):
            raise error("must be a string (a folder)", "cwd")
        cwd = str((context.workspace / expanded(cwd, "cwd")[0]).resolve())
    return ServerEntry(
        fields.name,
        "stdio",
        command=command,
        args=tuple(args),
        env=env,
        cwd=cwd,
        source=fields.path,
        format=fields.format,
        shown=shlex.join([shown_command, *shown_args]),
    )


def _url_entry(raw: dict[str, Any], url: Any, transport: TransportName, fields: _Fields) -> ServerEntry:
    """An http or sse entry: the URL and its headers."""
    error, expanded = fields.error, fields.expanded
    if not isinstance(url, str) or not url.strip():
        raise error(f"a {transport} server needs its URL (a string)", "url")
    url, shown_url = expanded(url.strip(), "url")
    if not is_http_url(url) or not urlsplit(url).hostname:
        raise error("is not an http(s) URL", "url")
    headers = {
        key: expanded(value, f"headers.{key}")[0]
        for key, value in _string_map(raw.get("headers"), "headers", error).items()
    }
    return ServerEntry(
        fields.name,
        transport,
        url=url,
        headers=headers,
        source=fields.path,
        format=fields.format,
        shown=_safe_url(shown_url),
    )


def _string_map(value: Any, field_name: str, error: Any) -> dict[str, str]:
    """A JSON object of strings (numbers and booleans are written as JSON writes them)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise error("must be an object of strings", field_name)
    result: dict[str, str] = {}
    for key, item in value.items():
        if isinstance(item, bool):
            item = "true" if item else "false"
        elif isinstance(item, int | float):
            item = str(item)
        elif not isinstance(item, str):
            raise error("must be a string", f"{field_name}.{key}")
        result[str(key)] = item
    return result


def _env_file(value: Any, context: Context, expanded: Any, error: Any) -> dict[str, str]:
    """The variables of ``envFile`` (python-dotenv's syntax, no interpolation: what the file says),
    relative to the workspace folder; the entry's own ``env`` goes over them. Read for stdio
    entries only: an HTTP server gets no environment from us."""
    if value is None:
        return {}
    if not isinstance(value, str) or not value.strip():
        raise error("must be a path (a string)", "envFile")
    name, shown = expanded(value, "envFile")
    file = context.workspace / name
    if not file.is_file():
        raise error(f"file not found: {context.workspace / shown}", "envFile")
    from dotenv import dotenv_values

    try:
        values = dotenv_values(file, interpolate=False, encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"cannot read {context.workspace / shown} ({type(exc).__name__})", "envFile") from None
    return {key: item for key, item in values.items() if item is not None}


def _safe_url(url: str) -> str:
    """scheme://host[:port]/path: user info, query and fragment may hold tokens."""
    try:
        parts = urlsplit(url)
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "<invalid URL>"
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}{port}{parts.path}" if parts.scheme else parts.path
