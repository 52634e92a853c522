"""Jupyter widgets for MCP sessions: each panel is one anywidget (:mod:`._ui`), so it works in
JupyterLab, Notebook 7, VS Code, Colab and marimo alike. Needs the ``notebook`` extra.

Everything a server sends is treated as untrusted: shown through text controls or escaped by
:mod:`mcp_notebook.display._html`, never executed.
"""

from ._explorer import explorer
from ._form import SchemaForm, form_for
from ._result_view import result_widget

__all__ = ["SchemaForm", "explorer", "form_for", "result_widget"]

# Panels and human-in-the-loop dialogs (status, resources, prompts, log, tasks, elicitation/sampling,
# roots), and the dashboard that shows them together.
from ._dashboard import dashboard
from ._dialogs import NotebookDialogs, RootsList, roots_widget
from ._log import log_widget
from ._prompts import prompts_widget
from ._resources import expand_uri_template, resources_widget
from ._status import status_widget
from ._tasks_panel import tasks_widget

__all__ += [
    "NotebookDialogs",
    "RootsList",
    "dashboard",
    "expand_uri_template",
    "log_widget",
    "prompts_widget",
    "resources_widget",
    "roots_widget",
    "status_widget",
    "tasks_widget",
]

# MCP Apps: AppView needs anywidget, so it is imported on first use (``session.app(...)`` makes one).
__all__ += ["AppView"]


def __getattr__(name: str) -> object:
    if name == "AppView":
        from ._app import AppView

        return AppView
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
