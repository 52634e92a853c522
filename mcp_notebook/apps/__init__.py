"""MCP Apps (``io.modelcontextprotocol/ui``): interactive Views a tool ships as ``ui://`` HTML.

The pure rules live in the protocol layer (:mod:`mcp_notebook.protocol._apps`: the connection and
the result types need them, and the protocol layer imports nothing above it); the host that answers
a View (:mod:`.host`) is loaded on first use, since it imports the client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..protocol._apps import (
    APP_MIME_TYPE,
    APPS_PROTOCOL_VERSION,
    UI_EXTENSION,
    allow_attribute,
    callable_by_app,
    content_security_policy,
    extension_settings,
    tool_visibility,
    ui_resource_uri,
    visible_to_model,
)

if TYPE_CHECKING:
    from .host import AppError, AppHost, AppResource

__all__ = [
    "APPS_PROTOCOL_VERSION",
    "APP_MIME_TYPE",
    "UI_EXTENSION",
    "AppError",
    "AppHost",
    "AppResource",
    "allow_attribute",
    "callable_by_app",
    "content_security_policy",
    "extension_settings",
    "tool_visibility",
    "ui_resource_uri",
    "visible_to_model",
]

_LAZY = {"AppError", "AppHost", "AppResource"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from . import host

        return getattr(host, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
