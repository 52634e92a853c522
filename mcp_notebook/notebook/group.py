"""Old path of mcp_notebook.notebook._group (issue #27 moved it); kept until the faces step."""

import importlib
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what the package still imports from here, for the type checker
    from mcp_notebook.notebook._group import Group as Group
    from mcp_notebook.notebook._group import board_html as board_html
    from mcp_notebook.notebook._group import connect_all as connect_all

sys.modules[__name__] = importlib.import_module("mcp_notebook.notebook._group")
