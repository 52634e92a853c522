"""What travels to the workers: the server's definition, sealed, and the map's settings.

Why a sealed object: a server definition holds secrets (a bearer token, headers, ``env`` values,
maybe a token on a command line). Dask shows task arguments in many places: task keys and names
(the dashboard), the graph's repr, the worker's "Compute Failed" log line (``args: ...``) and
exceptions. So the definition is wrapped in :class:`ServerSpec`, whose ``repr``/``str`` show only
a label with no secret (a URL's scheme, host and path; a command's program name), whose dask token
(``__dask_tokenize__``, which names the tasks) is derived from that label and a random run id, and
whose secrets ride only in its pickled state, the task's payload.

The worker-side registry (``_registry``) keys connections by :attr:`ServerSpec.key`: a keyed
BLAKE2 digest of the whole definition under a random salt of the driver process, so that equal
definitions share a connection on a worker across maps, while the key says nothing about the
secrets (no one without the salt can test a guessed token against it).
"""

from __future__ import annotations

import hashlib
import os
import pickle
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

__all__ = ["Job", "ServerSpec", "label_of"]

#: Salts :attr:`ServerSpec.key` for this driver process (never sent anywhere on its own).
_SALT = os.urandom(16)


def label_of(target: Any) -> str:
    """A name for ``target`` that holds no secret: ``scheme://host:port/path`` for a URL (no user,
    password, query or fragment), the program's file name for a command, the type's name otherwise."""
    if isinstance(target, str) and re.match(r"^https?://", target, re.IGNORECASE):
        parts = urlsplit(target)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme}://{host}{port}{parts.path}"
    if isinstance(target, str):
        words = target.split()
        return os.path.basename(words[0]) if words else "command"
    if isinstance(target, Sequence) and target and isinstance(target[0], str):
        return os.path.basename(target[0])
    return type(target).__name__


class ServerSpec:
    """A server definition (``Client(target, **options)``) whose secrets never show.

    Only its pickled state carries ``target`` and ``options``; ``repr``, ``str`` and its dask
    token show :attr:`label`.
    """

    __slots__ = ("_options", "_target", "key", "label")

    def __init__(self, target: Any, options: Mapping[str, Any]) -> None:
        self._target = target
        self._options = dict(options)
        self.label = label_of(target)
        definition = pickle.dumps((target, sorted(self._options.items())))
        self.key = hashlib.blake2b(definition, key=_SALT, digest_size=16).hexdigest()

    def client_arguments(self) -> tuple[Any, dict[str, Any]]:
        """What to give ``Client``: the target and the options (secrets included)."""
        return self._target, dict(self._options)

    def __repr__(self) -> str:
        return f"<server {self.label} (definition hidden)>"

    __str__ = __repr__

    def __dask_tokenize__(self) -> str:
        return f"{self.label}-{self.key}"

    def __getstate__(self) -> tuple[Any, dict[str, Any], str, str]:
        return (self._target, self._options, self.label, self.key)

    def __setstate__(self, state: tuple[Any, dict[str, Any], str, str]) -> None:
        self._target, self._options, self.label, self.key = state


@dataclass(frozen=True)
class Job:
    """One map: the server, the tool, how rows become arguments, and its run id (the started-row
    records on the scheduler are kept under it, ``_ledger``)."""

    server: ServerSpec
    tool: str
    renames: dict[str, str] = field(default_factory=dict)
    concurrency: int = 16
    timeout: float | None = None
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)

    def __dask_tokenize__(self) -> tuple[Any, ...]:
        return ("mcp_notebook.dask.Job", self.server.__dask_tokenize__(), self.tool, self.run_id)
