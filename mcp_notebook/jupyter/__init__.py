"""The top of the notebook stack: the ``Session`` and ``Group`` with widget-opening methods.

``mcp_notebook.connect``/``Session``/``connect_all``/``Group`` are the ones here. (The ``%mcp``
magics join this package in a later step of issue #27.)
"""

from ._session import Group, Session, connect, connect_all

__all__ = ["Group", "Session", "connect", "connect_all"]
