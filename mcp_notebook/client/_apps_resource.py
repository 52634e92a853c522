"""An MCP App's View as read from its server: the HTML and the policy its ``_meta.ui`` asks for.

:func:`parse_resource` turns a ``resources/read`` result into an :class:`AppResource`, or refuses
it with :class:`AppError` (no contents, the wrong type, neither text nor blob, too large). Its own
module because :mod:`._apps_host` (the View's conversation) is long enough without it.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..protocol._apps import APP_MIME_TYPE, allow_attribute, content_security_policy
from ..protocol._errors import McpInvalidInput

__all__ = ["MAX_HTML_BYTES", "AppError", "AppResource", "parse_resource"]

#: A View's HTML larger than this is refused.
MAX_HTML_BYTES = 16 * 1024 * 1024


class AppError(McpInvalidInput):
    """An app that cannot be shown: not an app tool, a missing View, a View of the wrong type."""

    def __init__(self, message: str) -> None:
        super().__init__("invalid", message)


@dataclass(frozen=True)
class AppResource:
    """A View's HTML and what its iframe may do, decided from the resource's ``_meta.ui``."""

    uri: str
    html: str
    mime_type: str
    #: ``_meta.ui.csp`` and ``_meta.ui.permissions`` as the server sent them (None when absent);
    #: what is enforced is ``csp_header`` and ``allow``, built from them by the rules.
    csp: dict[str, Any] | None
    permissions: dict[str, Any] | None
    csp_header: str
    allow: str
    prefers_border: bool | None


def _same_mime(value: Any) -> bool:
    return isinstance(value, str) and "".join(value.split()).lower() == APP_MIME_TYPE


def _view_contents(contents: list[dict[str, Any]], uri: str) -> dict[str, Any] | None:
    for content in contents:
        if content.get("uri") == uri:
            return content
    return contents[0] if contents else None


def _html_of(content: dict[str, Any], uri: str) -> str:
    text = content.get("text")
    if isinstance(text, str):
        if len(text) > MAX_HTML_BYTES:
            raise AppError(f"the View {uri} is larger than {MAX_HTML_BYTES} bytes")
        return text
    blob = content.get("blob")
    if isinstance(blob, str):
        if len(blob) > MAX_HTML_BYTES * 4 // 3 + 4:
            raise AppError(f"the View {uri} is larger than {MAX_HTML_BYTES} bytes")
        try:
            return base64.b64decode(blob, validate=True).decode("utf-8", errors="replace")
        except (binascii.Error, ValueError) as exc:
            raise AppError(f"the View {uri} is a blob that is not base64") from exc
    raise AppError(f"the View {uri} has neither text nor blob")


def parse_resource(uri: str, raw: Mapping[str, Any]) -> AppResource:
    """An :class:`AppResource` from a ``resources/read`` result, or AppError (wrong type, no HTML)."""
    contents = raw.get("contents")
    content = (
        _view_contents([c for c in contents if isinstance(c, dict)], uri)
        if isinstance(contents, list)
        else None
    )
    if content is None:
        raise AppError(f"the server returned no contents for the View {uri}")
    mime = content.get("mimeType")
    if not _same_mime(mime):
        raise AppError(
            f"the View {uri} is {mime!r}, not {APP_MIME_TYPE!r}: it is not an MCP App and is not shown"
        )
    html = _html_of(content, uri)
    meta = content.get("_meta")
    ui = meta.get("ui") if isinstance(meta, dict) else None
    ui = ui if isinstance(ui, dict) else {}
    csp = ui.get("csp") if isinstance(ui.get("csp"), dict) else None
    permissions = ui.get("permissions") if isinstance(ui.get("permissions"), dict) else None
    border = ui.get("prefersBorder")
    return AppResource(
        uri=uri,
        html=html,
        mime_type=str(mime),
        csp=csp,
        permissions=permissions,
        csp_header=content_security_policy(csp),
        allow=allow_attribute(permissions),
        prefers_border=border if isinstance(border, bool) else None,
    )
