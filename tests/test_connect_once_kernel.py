"""One session per cell in a real kernel (issue #29 item 6): the connect cell run again, as
JupyterLab runs it (its execute requests carry the cell's id), starts no second server.

Uses tests/test_kernel.py's kernel (jupyter_client driving an ipykernel); each run is sent with a
``cellId`` in its metadata, as JupyterLab, Notebook 7 and VS Code send it.
"""

from __future__ import annotations

from typing import Any

from .test_kernel import DEMO, Cell, Kernel, kernel

__all__ = ["kernel"]  # the fixture, used by name

CONNECT = (
    "import json, mcp_notebook\n"
    "{var} = mcp_notebook.connect({argv!r}, show_progress=False{extra})\n"
    "print(json.dumps({{'id': id({var}), 'name': {var}.name}}))\n"
)


def _run_in_cell(kernel: Kernel, cell_id: str, code: str) -> Cell:
    """Run ``code`` as the front end runs cell ``cell_id``: its id in the request's metadata."""
    session = kernel.client.session
    original = session.msg

    def msg(msg_type: str, content: Any = None, parent: Any = None, header: Any = None, metadata: Any = None):
        if msg_type == "execute_request":
            metadata = {**(metadata or {}), "cellId": cell_id}
        return original(msg_type, content, parent, header, metadata)

    session.msg = msg  # type: ignore[method-assign]
    try:
        return kernel.run_ok(code)
    finally:
        session.msg = original  # type: ignore[method-assign]


def test_a_connect_cell_run_again_keeps_one_server(kernel: Kernel) -> None:
    same = CONNECT.format(var="demo", argv=DEMO, extra="")
    first = _run_in_cell(kernel, "cell-a", same).json_line()
    assert len(kernel.servers()) == 1
    again = _run_in_cell(kernel, "cell-a", same)
    assert again.json_line() == first  # the same session object
    assert "closed the session" not in again.stdout
    assert len(kernel.servers()) == 1

    # The cell edited (another option) and run: the old session is closed, with a note.
    edited = _run_in_cell(kernel, "cell-a", CONNECT.format(var="demo", argv=DEMO, extra=", timeout=42"))
    assert edited.json_line()["id"] != first["id"]
    assert edited.json_line()["name"] == first["name"]
    assert "closed the session 'mcp-notebook-demo'" in edited.stdout
    assert "options differ (timeout)" in edited.stdout
    assert len(kernel.servers()) == 1

    # Another cell connecting to the same server gets its own session; the first stays open.
    other = _run_in_cell(kernel, "cell-b", CONNECT.format(var="o", argv=DEMO, extra=", timeout=42"))
    assert "closed the session" not in other.stdout
    assert len(kernel.servers()) == 2
    _run_in_cell(kernel, "cell-c", "demo.close()\no.close()\n")
    assert kernel.servers() == []


def test_a_cell_that_connects_in_a_loop_keeps_each_session_and_its_rerun_finds_them(kernel: Kernel) -> None:
    loop = (
        "import json, mcp_notebook\n"
        f"ss = [mcp_notebook.connect({DEMO!r}, show_progress=False, timeout=t) for t in (30, 31)]\n"
        "print(json.dumps({'ids': [id(s) for s in ss], 'open': [s.model.status for s in ss]}))\n"
    )
    first = _run_in_cell(kernel, "cell-loop", loop).json_line()
    assert len(set(first["ids"])) == 2
    assert first["open"] == ["ready", "ready"]
    assert len(kernel.servers()) == 2
    again = _run_in_cell(kernel, "cell-loop", loop)
    assert again.json_line() == first  # each call of the re-run finds its own session
    assert "closed the session" not in again.stdout
    assert len(kernel.servers()) == 2
    _run_in_cell(kernel, "cell-end", "for s in ss: s.close()\n")
    assert kernel.servers() == []
