"""Old path of mcp_notebook.display._dataframes (issue #27 moved it); kept until the faces step."""

import importlib
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp_notebook.display._dataframes import *  # noqa: F403
    from mcp_notebook.display._dataframes import _str as _str
    from mcp_notebook.display._dataframes import _to_datetime as _to_datetime

sys.modules[__name__] = importlib.import_module("mcp_notebook.display._dataframes")
