"""Old path of mcp_notebook.client._cache (issue #27 moved it); kept until the faces step."""

import importlib
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp_notebook.client._cache import *  # noqa: F403

sys.modules[__name__] = importlib.import_module("mcp_notebook.client._cache")
