"""Old path of mcp_notebook.display._html (issue #27 moved it); kept until the faces step."""

import importlib
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp_notebook.display._html import *  # noqa: F403
    from mcp_notebook.display._html import base64_size as base64_size

sys.modules[__name__] = importlib.import_module("mcp_notebook.display._html")
