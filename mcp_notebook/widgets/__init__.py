"""Jupyter widgets for MCP sessions (ipywidgets core controls only, so they work in JupyterLab,
Notebook 7, VS Code and Colab alike). Needs the ``notebook`` extra.

Everything a server sends is treated as untrusted: shown through text controls or escaped by
:mod:`._safe`, never executed.
"""

from ._explorer import explorer
from ._form import SchemaForm, form_for
from ._result_view import result_widget

__all__ = ["SchemaForm", "explorer", "form_for", "result_widget"]
