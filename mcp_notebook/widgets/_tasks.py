"""Old path of mcp_notebook.widgets._tasks_panel (issue #27 moved it); kept until the faces step."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("mcp_notebook.widgets._tasks_panel")
