"""What an MCP App View may ask the host to save (``ui/download-file``): the pure rules.

A View runs in a sandboxed frame that cannot download anything, so it asks the host (ext-apps
2.0.4: params ``{"contents": [EmbeddedResource | ResourceLink, ...]}``, result ``{"isError"?}``),
and the host asks the user. Everything here reads what a View sent, which is untrusted, and decides
what may be offered to the user; it never asks, writes or fetches anything (the host and the
notebook layer do).

- **Only embedded contents.** A ``resource_link`` would have the host fetch whatever address the
  View names (the kernel's network, its disk through ``file:``), so it is refused: a View that wants
  a file saved sends its bytes.
- **Bounded.** At most :data:`MAX_DOWNLOAD_FILES` files and :data:`MAX_DOWNLOAD_BYTES` bytes in all:
  the bytes cross the kernel's websocket twice (up from the View, inside a message the host already
  caps, then down to the browser that saves them) and are held in the kernel and the page until the
  user answers; a View must not fill either.
- **A name, never a path.** :func:`safe_file_name` keeps one file name: no path separator, no
  character :func:`~mcp_notebook.protocol._printable.printable` would escape (controls, bidi
  overrides that make ``exe.txt`` read as ``txt.exe``) nor any other Python calls unprintable, no
  leading dot, no name Windows reserves. Where the file lands is the user's choice, never the View's.
- **A plain type.** The MIME type is shown to the user and must be ``type/subtype``; anything else
  reads as ``application/octet-stream``.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

__all__ = [
    "MAX_DOWNLOAD_BYTES",
    "MAX_DOWNLOAD_FILES",
    "AppDownload",
    "DownloadRefused",
    "parse_download_request",
    "safe_file_name",
    "safe_mime_type",
]

MAX_DOWNLOAD_BYTES = 3 * 1024 * 1024
MAX_DOWNLOAD_FILES = 8
MAX_NAME_CHARS = 120
FALLBACK_NAME = "download"
FALLBACK_TYPE = "application/octet-stream"

# Separators of every common file system, and what Windows forbids in a name.
_UNSAFE = re.compile(r'[/\\:*?"<>|]')
_SPACES = re.compile(r"\s+")
_WINDOWS_DEVICES = re.compile(r"(?i)^(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?$")
_TOKEN = r"[a-z0-9][a-z0-9!#$&^_.+-]{0,126}"
_MIME = re.compile(rf"{_TOKEN}/{_TOKEN}")
_MAX_EXTENSION = 16


class DownloadRefused(ValueError):
    """A ``ui/download-file`` request the host will not put to the user (its message says why)."""


@dataclass(frozen=True)
class AppDownload:
    """One file a View offered: a safe ``name``, a plain ``mime_type`` and its bytes.

    Its repr shows the name, type and size, never the bytes (a View's export may hold anything).
    """

    name: str
    mime_type: str
    data: bytes = field(repr=False)

    @property
    def size(self) -> int:
        return len(self.data)

    def describe(self) -> dict[str, Any]:
        """What the user is shown and what is kept of an offer: name, type, size."""
        return {"name": self.name, "mime_type": self.mime_type, "size": self.size}

    def __repr__(self) -> str:
        return f"<AppDownload {self.name!r} {self.mime_type} {self.size} bytes>"


def safe_file_name(raw: Any) -> str:
    """One file name made from ``raw`` (what a View suggested), safe to show and to create.

    >>> safe_file_name("../../etc/passwd"), safe_file_name("report\\u202egpj.exe")
    ('_.._etc_passwd', 'reportgpj.exe')
    """
    text = unicodedata.normalize("NFC", raw) if isinstance(raw, str) else ""
    text = "".join(c for c in _SPACES.sub(" ", text) if c.isprintable())  # a tab or newline: a space
    text = _SPACES.sub(" ", _UNSAFE.sub("_", text)).strip(" .")
    if _WINDOWS_DEVICES.match(text):
        text = "_" + text
    if len(text) > MAX_NAME_CHARS:
        stem, dot, extension = text.rpartition(".")
        if dot and stem and len(extension) <= _MAX_EXTENSION:
            text = stem[: MAX_NAME_CHARS - len(extension) - 1].rstrip(" .") + "." + extension
        else:
            text = text[:MAX_NAME_CHARS].rstrip(" .")
    return text or FALLBACK_NAME


def safe_mime_type(raw: Any) -> str:
    """``raw``'s ``type/subtype`` in lower case (parameters dropped), or application/octet-stream."""
    if not isinstance(raw, str):
        return FALLBACK_TYPE
    essence = raw.split(";", 1)[0].strip().lower()
    return essence if _MIME.fullmatch(essence) else FALLBACK_TYPE


def _name_from_uri(uri: Any) -> str:
    """The last segment of the resource's URI path (``file:///out/report.csv`` -> ``report.csv``)."""
    if not isinstance(uri, str):
        return FALLBACK_NAME
    try:
        path = urlsplit(uri).path
    except ValueError:
        return FALLBACK_NAME
    return safe_file_name(unquote(path.rstrip("/").rpartition("/")[2]))


def _bytes_of(resource: Mapping[str, Any], room: int) -> bytes:
    text, blob = resource.get("text"), resource.get("blob")
    if isinstance(text, str) and blob is None:
        if len(text) > room:  # a character is at least a byte: no need to encode a huge one
            raise DownloadRefused(f"the download is larger than {MAX_DOWNLOAD_BYTES} bytes")
        data = text.encode("utf-8", errors="replace")
    elif isinstance(blob, str) and text is None:
        if len(blob) > room * 4 // 3 + 4:
            raise DownloadRefused(f"the download is larger than {MAX_DOWNLOAD_BYTES} bytes")
        try:
            data = base64.b64decode(blob, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise DownloadRefused("a blob to download is not base64") from exc
    else:
        raise DownloadRefused("each resource to download needs either text or blob")
    if len(data) > room:
        raise DownloadRefused(f"the download is larger than {MAX_DOWNLOAD_BYTES} bytes")
    return data


def parse_download_request(params: Mapping[str, Any]) -> list[AppDownload]:
    """The files of a ``ui/download-file`` request, or :class:`DownloadRefused` saying why not."""
    contents = params.get("contents")
    if not isinstance(contents, list) or not contents:
        raise DownloadRefused("ui/download-file needs a non-empty list of contents")
    if len(contents) > MAX_DOWNLOAD_FILES:
        raise DownloadRefused(f"at most {MAX_DOWNLOAD_FILES} files are saved at once")
    files: list[AppDownload] = []
    room = MAX_DOWNLOAD_BYTES
    for item in contents:
        if not isinstance(item, Mapping):
            raise DownloadRefused("each content to download must be an object")
        kind = item.get("type")
        if kind == "resource_link":
            raise DownloadRefused("this host saves only embedded contents, never what a link names")
        resource = item.get("resource")
        if kind != "resource" or not isinstance(resource, Mapping):
            raise DownloadRefused("each content to download must be an embedded resource")
        data = _bytes_of(resource, room)
        room -= len(data)
        files.append(
            AppDownload(_name_from_uri(resource.get("uri")), safe_mime_type(resource.get("mimeType")), data)
        )
    return files
