"""Old path of mcp_notebook.notebook._session (issue #27 moved it); kept until the faces step."""

import importlib
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what the package still imports from here, for the type checker
    from mcp_notebook.notebook._session import Session as Session
    from mcp_notebook.notebook._session import connect as connect

sys.modules[__name__] = importlib.import_module("mcp_notebook.notebook._session")
