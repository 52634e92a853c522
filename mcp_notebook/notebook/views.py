"""Old path of mcp_notebook.notebook._views (issue #27 moved it); kept until the faces step."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("mcp_notebook.notebook._views")
