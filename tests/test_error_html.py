"""An McpError's HTML picture: display/_errors.error_html, registered with IPython by the face.

The error family is sans-IO (protocol/ has no HTML), so a kernel draws one through IPython's
``text/html`` formatter, which ``import mcp_notebook`` (IPython running) and ``%load_ext
mcp_notebook`` register. Each check runs a real ``InteractiveShell`` in a fresh interpreter, so the
order of "IPython started" and "mcp_notebook imported" is the one the test says.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from mcp_notebook import McpError
from mcp_notebook.display._errors import error_html


def _shell_formats(script: str) -> dict[str, str]:
    code = textwrap.dedent(
        """
        import json
        from IPython.core.interactiveshell import InteractiveShell
        """
    ) + textwrap.dedent(script)
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_error_html_escapes_the_servers_text_and_names_kind_and_code() -> None:
    html = error_html(McpError("server", "<script>x</script> 'q'", code=-32000))
    assert "<script>" not in html
    assert "&lt;script&gt;" in html
    assert "[server]" in html
    assert "(code -32000)" in html


def test_an_error_is_drawn_as_html_by_a_running_ipython_shell() -> None:
    data = _shell_formats(
        """
        shell = InteractiveShell.instance()
        import mcp_notebook
        err = mcp_notebook.McpError("timeout", "<b>slow</b>")
        formatted, _ = shell.display_formatter.format(err)
        print(json.dumps(formatted))
        """
    )
    assert data["text/html"] == error_html(McpError("timeout", "<b>slow</b>"))
    assert "&lt;b&gt;slow&lt;/b&gt;" in data["text/html"]


def test_load_ext_registers_the_picture_when_the_package_came_first() -> None:
    data = _shell_formats(
        """
        import mcp_notebook  # no IPython running yet: nothing to register with
        shell = InteractiveShell.instance()
        before, _ = shell.display_formatter.format(mcp_notebook.McpError("closed", "gone"))
        shell.run_line_magic("load_ext", "mcp_notebook")
        after, _ = shell.display_formatter.format(mcp_notebook.McpError("closed", "gone"))
        print(json.dumps({"before": "text/html" in before, "after": after.get("text/html", "")}))
        """
    )
    assert data["before"] is False
    assert data["after"] == error_html(McpError("closed", "gone"))
