"""The notebook layer: sessions on an engine thread, a traitlets model, DataFrames, rich output.

Needs the ``notebook`` extra (traitlets, pandas, tqdm, ipywidgets, IPython): ``pip install
'mcp-notebook[notebook]'``. Nothing here is imported by ``import mcp_notebook``.
"""

from ._tasks import SessionTask
from .group import Group, connect_all
from .model import GroupModel, SessionModel
from .session import Session, connect

__all__ = ["Group", "GroupModel", "Session", "SessionModel", "SessionTask", "connect", "connect_all"]
