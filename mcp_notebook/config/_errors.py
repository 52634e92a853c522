"""The one exception a config file raises or records: :class:`ConfigError`.

Its message names the file, the server and the field, and says what is wrong in words: it names
variables and fields, never their values, because the values in a config file are mostly secrets
(tokens in headers, keys in ``env``) and an exception message ends up in logs and tracebacks.
"""

from __future__ import annotations

from pathlib import Path

from ..protocol._errors import McpInvalidInput

__all__ = ["ConfigError"]


class ConfigError(McpInvalidInput, ValueError):
    """A config file, or one server entry in it, that cannot be used.

    ``str()`` reads ``"<path>: server 'github', field 'headers.Authorization': needs the
    environment variable GITHUB_TOKEN (not set)"``; the parts that are unknown are left out.
    It is a ``ValueError``, so code that caught the old lookup's errors still catches it, and an
    :class:`~mcp_notebook.McpError` of kind ``"invalid"`` (the caller's input), like every error
    the package raises.
    """

    def __init__(
        self,
        message: str,
        *,
        path: Path | None = None,
        server: str | None = None,
        field: str | None = None,
    ) -> None:
        self.reason = message
        self.path = path
        self.server = server
        self.field = field
        # As an McpError, ``message`` is what code shows for it (``error.message``): the whole
        # text, with the file, server and field; ``reason`` is what is wrong, alone.
        super().__init__("invalid", self._text())

    def _text(self) -> str:
        where = []
        if self.server is not None:
            where.append(f"server {self.server!r}")
        if self.field is not None:
            where.append(f"field {self.field!r}")
        text = f"{', '.join(where)}: {self.reason}" if where else self.reason
        return f"{self.path}: {text}" if self.path is not None else text

    def __str__(self) -> str:
        return self._text()

    def __repr__(self) -> str:
        return f"ConfigError({self._text()!r})"

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild, (self.reason, self.path, self.server, self.field))


def _rebuild(message: str, path: Path | None, server: str | None, field: str | None) -> ConfigError:
    return ConfigError(message, path=path, server=server, field=field)
