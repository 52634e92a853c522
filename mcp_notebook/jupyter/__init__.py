"""The top of the notebook stack: the ``%mcp`` magics and the ``Session``/``Group`` that open widgets.

``mcp_notebook.connect``/``Session``/``connect_all``/``Group`` are the ones here; the magics live in
``_magics`` (loaded by ``%load_ext mcp_notebook``).
"""

from ._session import Group, Session, connect, connect_all

__all__ = ["Group", "Session", "connect", "connect_all"]
