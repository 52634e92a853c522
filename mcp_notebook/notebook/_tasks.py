"""Old path of mcp_notebook.notebook._session_tasks (issue #27 moved it); kept until the faces step."""

import importlib
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what the package still imports from here, for the type checker
    from mcp_notebook.notebook._session_tasks import SessionTask as SessionTask

sys.modules[__name__] = importlib.import_module("mcp_notebook.notebook._session_tasks")
