"""The notebook layer: sessions on an engine thread, a traitlets model, DataFrames, rich output.

Needs the ``notebook`` extra (traitlets, pandas, tqdm, ipywidgets, IPython): ``pip install
'mcp-notebook[notebook]'``. Nothing here is imported by ``import mcp_notebook``.

This layer opens no widgets: ``mcp_notebook.Session`` (:mod:`mcp_notebook.jupyter`) is this
``Session`` plus ``explorer()``, ``dashboard()``, ...; :func:`connect` and :func:`connect_all` hand
out those classes once :mod:`mcp_notebook.jupyter` is imported (``mcp_notebook.connect`` and
``%load_ext mcp_notebook`` import it).
"""

from ._group import Group, connect_all
from ._model import GroupModel, SessionModel
from ._roots import RootsList
from ._session import Session, connect
from ._session_tasks import SessionTask

__all__ = [
    "Group",
    "GroupModel",
    "RootsList",
    "Session",
    "SessionModel",
    "SessionTask",
    "connect",
    "connect_all",
]
