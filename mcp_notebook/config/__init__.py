"""MCP server config files, in every common format: Claude Desktop, VS Code, Cursor, Claude Code
and our ``mcp.json``.

Core, not notebook: scripts name their servers the way notebooks do. ::

    from mcp_notebook import Client
    from mcp_notebook.config import load_config

    config = load_config(".vscode/mcp.json", only=["github"])   # or load_config() to search
    target, options = config["github"].client_args()
    async with Client(target, **options) as client:
        ...

What lives where: ``_formats`` reads and recognises files, ``_variables`` expands ``${...}``,
``_inputs`` asks and remembers VS Code inputs, ``_entries`` checks one server entry, ``_search``
knows where files are, ``_load`` puts them together. Values in ``env`` and ``headers``, and input
answers, are secrets: no repr, log line or error message here contains them.
"""

from ._entries import ServerEntry
from ._errors import ConfigError
from ._inputs import forget_inputs
from ._load import ServerConfig, load_config
from ._search import config_search_path, find_config

__all__ = [
    "ConfigError",
    "ServerConfig",
    "ServerEntry",
    "config_search_path",
    "find_config",
    "forget_inputs",
    "load_config",
]
