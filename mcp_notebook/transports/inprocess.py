"""Old path of mcp_notebook.transports._inprocess (issue #27 moved it); kept until the faces step."""

import importlib
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a type checker reads this file, not sys.modules: show it the new module's names
    from mcp_notebook.transports._inprocess import *  # noqa: F403
else:
    sys.modules[__name__] = importlib.import_module("mcp_notebook.transports._inprocess")
