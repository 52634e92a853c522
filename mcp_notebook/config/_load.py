"""Loading one config: the file (or dict) in, a :class:`ServerConfig` of checked entries out.

A bad entry does not spoil the file: it becomes one :class:`ConfigError` in ``errors`` and the other
entries load. Only a file that cannot be read at all, or a selection naming a server the file does
not have, raises. Entries not selected with ``only=`` are not resolved, so their variables need
not be set and their inputs are not asked.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._entries import ServerEntry, resolve_entry
from ._errors import ConfigError
from ._formats import detect_format, read_file, sections, workspace_for
from ._inputs import Inputs
from ._search import config_search_path, find_config, home_folder
from ._variables import Context

__all__ = ["ServerConfig", "load_config"]


@dataclass(repr=False)
class ServerConfig(Mapping[str, ServerEntry]):
    """The servers of one config, by name: a read-only mapping over ``servers``.

    ``errors`` maps the name of each entry that did not load to its error; ``declared`` lists
    every name the file has (selected or not, disabled ones too), in the file's order.
    """

    path: Path | None
    format: str
    servers: dict[str, ServerEntry]
    errors: dict[str, ConfigError] = field(default_factory=dict)
    declared: tuple[str, ...] = ()

    def __getitem__(self, name: str) -> ServerEntry:
        return self.servers[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.servers)

    def __len__(self) -> int:
        return len(self.servers)

    def __contains__(self, name: object) -> bool:
        return name in self.servers

    def __repr__(self) -> str:
        where = str(self.path) if self.path is not None else "<dict>"
        text = f"ServerConfig({where!r}, format={self.format!r}, servers={list(self.servers)!r}"
        if self.errors:
            text += f", errors={list(self.errors)!r}"
        return text + ")"


def load_config(
    config: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    *,
    only: Iterable[str] | None = None,
    inputs: Mapping[str, str] | None = None,
    ask: Callable[[dict[str, Any]], str] | None = None,
    environ: Mapping[str, str] | None = None,
    workspace: Path | None = None,
) -> ServerConfig:
    """Read a config file (or an already loaded dict) and resolve its servers.

    ``config``: None finds the first file of the search path (FileNotFoundError listing the paths
    searched if there is none); a path; or a dict (format "dict", workspace the current folder).
    ``only``: the names to resolve (an unknown or disabled name raises ConfigError).
    ``inputs``: answers for ``${input:ID}``, which win over ``ask(spec) -> str`` (default: a
    getpass prompt); asked answers are remembered per file until :func:`forget_inputs`.
    ``environ``: the environment variables expand from (default ``os.environ``).
    ``workspace``: what ``${workspaceFolder}`` and relative paths mean (default: the folder holding
    the file's ``.vscode/`` or ``.cursor/``, else the file's folder).
    """
    environ = os.environ if environ is None else environ
    path: Path | None
    if config is None:
        path = find_config(environ=environ)
        if path is None:
            searched = "\n  ".join(str(p) for p in config_search_path(environ=environ))
            raise FileNotFoundError(f"no MCP server config file found; searched:\n  {searched}")
    elif isinstance(config, Mapping):
        path = None
    else:
        path = Path(os.fspath(config)).expanduser()
    data: dict[str, Any] = read_file(path) if path is not None else dict(config)  # type: ignore[arg-type]
    raw_servers, raw_inputs = sections(data, path)
    format = detect_format(path, data)
    if workspace is None:
        workspace = workspace_for(path) if path is not None else Path.cwd()

    enabled = {name: raw for name, raw in raw_servers.items() if not _disabled(raw)}
    if only is None:
        selected = list(enabled)
    else:
        selected = list(dict.fromkeys(only))
        for name in selected:
            if name not in raw_servers:
                known = ", ".join(raw_servers) or "none"
                raise ConfigError(f"no such server (servers in the file: {known})", path=path, server=name)
            if name not in enabled:
                raise ConfigError('is disabled ("disabled": true)', path=path, server=name)

    answers = Inputs(
        _input_specs(raw_inputs),
        key=str(path.resolve()) if path is not None else None,
        given=inputs,
        ask=ask,
    )
    context = Context(
        environ=environ,
        workspace=Path(workspace),
        home=home_folder(environ),
        separator=os.sep,
        answer=answers.answer,
    )
    servers: dict[str, ServerEntry] = {}
    errors: dict[str, ConfigError] = {}
    for name in selected:
        try:
            servers[name] = resolve_entry(name, enabled[name], path=path, format=format, context=context)
        except ConfigError as exc:
            errors[name] = exc
    return ServerConfig(path, format, servers, errors, tuple(str(name) for name in raw_servers))


def _disabled(raw: Any) -> bool:
    return isinstance(raw, dict) and raw.get("disabled") is True


def _input_specs(raw_inputs: list[Any]) -> dict[str, dict[str, Any]]:
    return {
        spec["id"]: spec for spec in raw_inputs if isinstance(spec, dict) and isinstance(spec.get("id"), str)
    }
