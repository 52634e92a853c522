"""MCP Apps (``io.modelcontextprotocol/ui``): interactive Views a tool ships as ``ui://`` HTML.

The pure rules live in the protocol layer (:mod:`mcp_notebook.protocol._apps`: the connection and
the result types need them, and the protocol layer imports nothing above it); the host that answers
a View lives in the client room (:mod:`mcp_notebook.client._apps_host`, issue #27) and is loaded on
first use. This package is an alias face until the faces step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..protocol._app_files import AppDownload
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
    from ..client._app_saving import save_download
    from ..client._apps_host import AppError, AppHost, AppResource

__all__ = [
    "APPS_PROTOCOL_VERSION",
    "APP_MIME_TYPE",
    "UI_EXTENSION",
    "AppDownload",
    "AppError",
    "AppHost",
    "AppResource",
    "allow_attribute",
    "callable_by_app",
    "content_security_policy",
    "extension_settings",
    "save_download",
    "tool_visibility",
    "ui_resource_uri",
    "visible_to_model",
]

_LAZY = {"AppError", "AppHost", "AppResource"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from ..client import _apps_host

        return getattr(_apps_host, name)
    if name == "save_download":
        from ..client._app_saving import save_download

        return save_download
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
