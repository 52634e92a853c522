"""The notebook layer: sessions on an engine thread, a traitlets model, DataFrames, rich output.

Needs the ``notebook`` extra (traitlets, pandas, tqdm, ipywidgets, IPython): ``pip install
'mcp-notebook[notebook]'``. Nothing here is imported by ``import mcp_notebook``.
"""

from ._group import Group, connect_all
from ._model import GroupModel, SessionModel
from ._session import Session, connect
from ._session_tasks import SessionTask

__all__ = ["Group", "GroupModel", "Session", "SessionModel", "SessionTask", "connect", "connect_all"]
