"""mcp-notebook: a robust async MCP client, and the best way to use MCP servers from a notebook.

The core (this package's top level) is async and light: ``import mcp_notebook`` imports neither
traitlets, ipywidgets, pandas nor IPython. ::

    async with mcp_notebook.Client("python -m mcp_notebook.demo") as client:
        tools = await client.list_tools()
        result = await client.call_tool("add", {"a": 1, "b": 2})

How much of a result its picture shows is ``mcp_notebook.display_options`` (a :class:`DisplayOptions`:
``html_rows``, ``text_rows``, ...), changed in place. ``display_options.remote_images = True`` lets
an image given as an ``https:`` URL load; it is off because the browser would fetch it each time the
output is drawn, which tells the server when and where the notebook is opened (a tracking pixel).
"""

import sys
from typing import Any

from ._version import __version__
from .client import (
    AppError,
    Client,
    ClientGroup,
    Completion,
    Prompt,
    PromptResult,
    Resource,
    ResourceContents,
    ResourceTemplate,
    TaskHandle,
    Tool,
    ToolResult,
)
from .connection import ConnectionOptions, ConnectionStats
from .display._errors import error_html
from .display._pictures import DisplayOptions
from .display._pictures import options as display_options
from .protocol._errors import (
    ErrorKind,
    McpAuthError,
    McpCancelled,
    McpClosed,
    McpError,
    McpInvalidInput,
    McpOverloaded,
    McpProtocolError,
    McpServerError,
    McpTimeout,
    McpTransportError,
    McpVersionError,
)

__all__ = [
    "AppError",
    "Client",
    "ClientGroup",
    "Completion",
    "ConfigError",
    "ConnectionOptions",
    "ConnectionStats",
    "DisplayOptions",
    "ErrorKind",
    "Group",
    "McpAuthError",
    "McpCancelled",
    "McpClosed",
    "McpError",
    "McpInvalidInput",
    "McpOverloaded",
    "McpProtocolError",
    "McpServerError",
    "McpTimeout",
    "McpTransportError",
    "McpVersionError",
    "Prompt",
    "PromptResult",
    "Resource",
    "ResourceContents",
    "ResourceTemplate",
    "Session",
    "TaskHandle",
    "Tool",
    "ToolResult",
    "__version__",
    "connect",
    "connect_all",
    "disconnect",
    "display_options",
    "servers",
    "session",
    "show_full_tracebacks",
    "tools",
    "use",
]

#: The ``%mcp`` commands as functions (front ends without magics: marimo, scripts); the notebook layer's.
_COMMANDS = ("disconnect", "servers", "session", "show_full_tracebacks", "tools", "use")


def _show_errors_in(shell: Any) -> None:
    """Have IPython draw an :class:`McpError` (any subclass) with :func:`error_html`.

    The error family lives in the sans-IO protocol layer, which has no HTML; the picture is
    display's, and this registration is what a kernel needs to show it (IPython looks a type up
    along its MRO, so one entry covers every kind).
    """
    formatters = getattr(getattr(shell, "display_formatter", None), "formatters", None)
    if isinstance(formatters, dict) and "text/html" in formatters:
        formatters["text/html"].for_type(McpError, error_html)


def _show_errors_if_ipython() -> None:
    # Only when IPython is already running: this never imports it (the core stays light).
    ipython = sys.modules.get("IPython")
    get_ipython = getattr(ipython, "get_ipython", None)
    shell = get_ipython() if callable(get_ipython) else None
    if shell is not None:
        _show_errors_in(shell)


_show_errors_if_ipython()


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext mcp_notebook``: the ``%mcp`` and ``%%mcp`` magics (:mod:`.jupyter._magics`)."""
    from .jupyter import _magics as magics

    _show_errors_in(ipython)
    magics.load_ipython_extension(ipython)


def unload_ipython_extension(ipython: object) -> None:
    """``%unload_ext mcp_notebook``: closes the magics' sessions and removes ``%mcp``."""
    from .jupyter import _magics as magics

    magics.unload_ipython_extension(ipython)


def __getattr__(name: str) -> object:
    if name == "ConfigError":  # the config package loads when a config is read, not before
        from .config import ConfigError

        return ConfigError
    # The notebook layer (traitlets, pandas, ...) loads only when asked for, so the core stays light.
    if name in ("connect", "Session", "connect_all", "Group"):
        try:
            from . import jupyter
        except ImportError as exc:
            raise ImportError(
                f"mcp_notebook.{name} needs the notebook extra: pip install 'mcp-notebook[notebook]' ({exc})"
            ) from exc
        return getattr(jupyter, name)
    if name in _COMMANDS:
        try:
            from .notebook import _commands
        except ImportError as exc:
            raise ImportError(
                f"mcp_notebook.{name} needs the notebook extra: pip install 'mcp-notebook[notebook]' ({exc})"
            ) from exc
        return getattr(_commands, name)
    raise AttributeError(f"module 'mcp_notebook' has no attribute {name!r}")
