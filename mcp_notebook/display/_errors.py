"""The HTML picture of an :class:`~mcp_notebook.McpError`: what a notebook shows for one as a value.

It lives here, not on the exception, because the error family is in ``protocol/`` (sans-IO, no
HTML). The package's face registers :func:`error_html` with IPython's ``text/html`` formatter when
IPython is running, so a kernel draws an error as before; plain Python never needed it.
"""

from __future__ import annotations

from html import escape

from ..protocol._errors import McpError

__all__ = ["error_html"]


def error_html(err: McpError) -> str:
    """``err`` as one line of HTML: kind, code and message.

    Server error text is untrusted: escaped, like everything a server sends (the standard
    library's escape, quotes included).
    """
    code = f" <small>(code {err.code})</small>" if err.code is not None else ""
    return (
        f'<div style="color:#b00020"><b>McpError</b> [{escape(err.kind)}]{code}: {escape(err.message)}</div>'
    )
