"""Saving a file an MCP App View offered into a folder the user chose, never where the View says.

The View only suggests a name (made safe by :func:`~mcp_notebook.protocol._app_files.safe_file_name`:
one component, no separator); the folder is the user's (``save_to=`` on a notebook's App view, or a
script's own ``confirm_download``). A file already there is never overwritten, and a symlink planted
under the name is never followed: the file is created exclusively, and a taken name gets " (2)",
" (3)"... before its extension, as browsers do.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..protocol._app_files import AppDownload, safe_file_name

__all__ = ["save_download"]

_MAX_TRIES = 1000
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_NOFOLLOW", 0)


def _names(name: str) -> list[str]:
    stem, dot, extension = name.rpartition(".")
    if not dot or not stem:
        stem, dot, extension = name, "", ""
    return [name, *(f"{stem} ({n}){dot}{extension}" for n in range(2, _MAX_TRIES + 1))]


def save_download(download: AppDownload, directory: str | os.PathLike[str]) -> Path:
    """Write ``download``'s bytes as a new file in ``directory`` (which must exist); its path.

    NotADirectoryError when ``directory`` is not a folder; FileExistsError when a thousand names
    are taken; other OSErrors as the file system raises them.
    """
    folder = Path(directory)
    if not folder.is_dir():
        raise NotADirectoryError(f"save_to must be an existing folder: {str(folder)!r} is not one")
    for name in _names(safe_file_name(download.name)):  # safe again: anyone can build an AppDownload
        path = folder / name
        try:
            descriptor = os.open(path, _FLAGS, 0o666)
        except FileExistsError:
            continue
        with os.fdopen(descriptor, "wb") as file:
            file.write(download.data)
        return path
    raise FileExistsError(f"{_MAX_TRIES} files named like {download.name!r} are already in {str(folder)!r}")
