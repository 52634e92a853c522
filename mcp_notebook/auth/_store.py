"""Where tokens and client registrations live between requests, and between runs.

Tokens are keyed by the MCP server (its canonical URL, path included: the protected resource they
were issued for, never its origin): that is all a client knows before the first 401 tells it which
authorization server to ask, and two servers on one origin must never share a token. Each
:class:`Tokens` records the issuer and the resource it came from, so a change of authorization
server is noticed and the tokens dropped, and tokens a store returns under the wrong key are not
sent. Client registrations
are keyed by the authorization server's ``issuer``: credentials are bound to the server that issued
them and never presented to another one (SEP-2352).

:class:`FileTokenStore` keeps both in one JSON file readable only by its owner (mode 0600), written
to a temporary file and renamed over the old one, so a crash never leaves half a file and a reader
never sees one. Two processes writing the same file may lose one another's update (last writer
wins), never corrupt the file.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
import tempfile
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

import anyio
import anyio.to_thread

from . import _discovery as disco
from ._records import ClientInfo, Tokens

__all__ = ["FileTokenStore", "MemoryTokenStore", "TokenStore", "own_tokens"]

logger = logging.getLogger("mcp_notebook.auth")

_FORMAT = 1
_Record = TypeVar("_Record", Tokens, ClientInfo)


@runtime_checkable
class TokenStore(Protocol):
    """Persistence for :class:`OAuth`. Implement these four coroutines to keep credentials in a
    keyring, a database or a secrets manager; ``None`` as the value forgets the entry."""

    async def get_tokens(self, server: str) -> Tokens | None: ...

    async def set_tokens(self, server: str, tokens: Tokens | None) -> None: ...

    async def get_client(self, issuer: str) -> ClientInfo | None: ...

    async def set_client(self, issuer: str, client: ClientInfo | None) -> None: ...


class MemoryTokenStore:
    """Keeps credentials for the life of the process (the default)."""

    def __init__(self) -> None:
        self._tokens: dict[str, Tokens] = {}
        self._clients: dict[str, ClientInfo] = {}

    async def get_tokens(self, server: str) -> Tokens | None:
        return self._tokens.get(server)

    async def set_tokens(self, server: str, tokens: Tokens | None) -> None:
        if tokens is None:
            self._tokens.pop(server, None)
        else:
            self._tokens[server] = tokens

    async def get_client(self, issuer: str) -> ClientInfo | None:
        return self._clients.get(issuer)

    async def set_client(self, issuer: str, client: ClientInfo | None) -> None:
        if client is None:
            self._clients.pop(issuer, None)
        else:
            self._clients[issuer] = client

    def __repr__(self) -> str:
        return f"MemoryTokenStore(servers={len(self._tokens)}, clients={len(self._clients)})"


class FileTokenStore:
    """Keeps credentials in a JSON file created with mode 0600 (its directory, if created, 0700)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()
        self._lock = anyio.Lock()

    def __repr__(self) -> str:
        return f"FileTokenStore({str(self.path)!r})"

    async def get_tokens(self, server: str) -> Tokens | None:
        entry = (await self._read()).get("tokens", {}).get(server)
        return _decode(Tokens, entry, self.path)

    async def set_tokens(self, server: str, tokens: Tokens | None) -> None:
        await self._update("tokens", server, None if tokens is None else tokens.to_json())

    async def get_client(self, issuer: str) -> ClientInfo | None:
        entry = (await self._read()).get("clients", {}).get(issuer)
        return _decode(ClientInfo, entry, self.path)

    async def set_client(self, issuer: str, client: ClientInfo | None) -> None:
        await self._update("clients", issuer, None if client is None else client.to_json())

    async def _read(self) -> dict[str, Any]:
        async with self._lock:
            return await anyio.to_thread.run_sync(self._read_sync)

    async def _update(self, section: str, key: str, value: dict[str, Any] | None) -> None:
        async with self._lock:
            await anyio.to_thread.run_sync(self._update_sync, section, key, value)

    def _read_sync(self) -> dict[str, Any]:
        try:
            with open(self.path, encoding="utf-8") as f:
                mode = os.fstat(f.fileno()).st_mode
                data = json.load(f)
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            # The message names the file and the failure, never its contents.
            logger.warning(
                "token store %s is unreadable (%s); starting without stored credentials", self.path, exc
            )
            return {}
        if os.name == "posix" and mode & (stat.S_IRWXG | stat.S_IRWXO):
            logger.warning(
                "token store %s is readable by other users; it is rewritten with mode 0600", self.path
            )
        return data if isinstance(data, dict) else {}

    def _update_sync(self, section: str, key: str, value: dict[str, Any] | None) -> None:
        data = self._read_sync()
        data["format"] = _FORMAT
        entries = data.get(section)
        if not isinstance(entries, dict):
            entries = data[section] = {}
        if value is None:
            entries.pop(key, None)
        else:
            entries[key] = value
        self._write_sync(data)

    def _write_sync(self, data: dict[str, Any]) -> None:
        directory = self.path.parent
        if not directory.exists():
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        # mkstemp creates the file with mode 0600 (O_EXCL, owner only) before anything is written.
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(data, f, indent=1, sort_keys=True)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def _decode(cls: type[_Record], entry: Any, path: Path) -> _Record | None:
    if not isinstance(entry, dict):
        return None
    try:
        return cls.from_json(entry)
    except (TypeError, ValueError) as exc:
        logger.warning("ignoring a malformed %s entry in token store %s (%s)", cls.__name__, path, exc)
        return None


def own_tokens(tokens: Tokens | None, server_url: str) -> Tokens | None:
    """``tokens`` if they may be sent to the server at ``server_url``, else None.

    A store hands back whatever it keeps under a key; a token whose recorded resource does not
    cover this server (a store that ignores its key, a hand-edited file) would reach a server it
    was not issued for, so it is not used: the server's 401 starts a flow of its own instead.
    """
    if tokens is None or tokens.resource is None or disco.resource_matches(tokens.resource, server_url):
        return tokens
    logger.warning(
        "the token store returned tokens for %s when asked for %s; not sending them",
        tokens.resource,
        server_url,
    )
    return None
