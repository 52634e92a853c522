"""Old path of mcp_notebook.widgets._group_panels (issue #27 moved it); kept until the faces step."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("mcp_notebook.widgets._group_panels")
