"""Errors that fit a cell, in a real kernel (issue #29, item 4).

An McpError raised in a cell shows as one short block (IPython's ``_render_traceback_``): its
class and kind, the message, the call, what to do and the cell's own line, none of our frames or
anyio's; ``%mcp tb`` prints the full traceback; an interrupted call shows one line. Measured before
this: a schema error 128 lines, a closed session 25, an interrupt 51.
"""

from __future__ import annotations

import re

from .test_kernel import DEMO, Kernel
from .test_kernel import kernel as kernel  # the real-kernel fixture

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
MAX_LINES = 10


def _shown(cell_errors: list[dict[str, object]]) -> str:
    (error,) = cell_errors
    lines = error["traceback"]
    assert isinstance(lines, list)
    return ANSI.sub("", "\n".join(lines))


def _error_text(kernel: Kernel, code: str) -> tuple[str, str]:
    cell = kernel.run(code)
    assert cell.status == "error", cell
    return cell.errors[0]["ename"], _shown(cell.errors)  # type: ignore[return-value]


def test_an_mcp_error_in_a_cell_is_a_short_block_and_mcp_tb_has_the_rest(kernel: Kernel) -> None:
    kernel.run_ok(
        "import mcp_notebook\n"
        f"session = mcp_notebook.connect({DEMO!r}, show_progress=False, name='demo')\n"
        "%load_ext mcp_notebook\n"
    )
    ename, text = _error_text(kernel, "session.call_tool('add', {'x': 1, 'y': 2})")
    assert ename == "McpInvalidInput"
    lines = text.splitlines()
    assert len(lines) <= MAX_LINES, text
    assert lines[0].startswith("McpInvalidInput [invalid]: tool 'add' has no arguments 'x', 'y'"), text
    assert "call: tools/call 'add' on 'demo'" in text
    assert "what to do: " in text
    assert "cell, line 1: session.call_tool('add', {'x': 1, 'y': 2})" in text
    for internal in ("_calls.py", "_session.py", "anyio", "concurrent", "Traceback"):
        assert internal not in text, text

    # the full traceback, on demand: our frames and all, in IPython's own picture
    full = ANSI.sub("", kernel.run_ok("%mcp tb").stdout)
    assert "Traceback (most recent call last)" in full
    assert "_arguments.py" in full
    assert "_calls.py" in full
    assert len(full.splitlines()) > 3 * MAX_LINES

    # the user's own function keeps its frames; ours still go
    ename, text = _error_text(kernel, "def mine():\n    return session.call_tool('sales_record')\n\nmine()\n")
    assert len(text.splitlines()) <= MAX_LINES, text
    assert "did you mean 'sales_records'?" in text
    assert "cell, line 4: mine()" in text
    assert "cell, line 2, in mine: return session.call_tool('sales_record')" in text

    # a switch for the full traceback everywhere, and back
    kernel.run_ok("%mcp tb full")
    _, text = _error_text(kernel, "session.call_tool('add', {'x': 1})")
    assert "Traceback (most recent call last)" in text
    assert "_arguments.py" in text
    kernel.run_ok("%mcp tb short")

    # a misspelt optional argument the schema lets pass: sent, and the cell says so
    cell = kernel.run_ok("session.call_tool('sales_records', {'regoin': 'north', 'limit': 1})")
    assert "has no argument 'regoin'; did you mean 'region'?" in cell.stderr, cell.stderr

    # a closed session
    kernel.run_ok("session.close()")
    ename, text = _error_text(kernel, "session.call_tool('add', {'a': 1, 'b': 2})")
    assert ename == "McpClosed"
    assert len(text.splitlines()) <= MAX_LINES, text
    assert text.startswith("McpClosed [closed]: the session 'demo' is closed"), text
    assert "what to do: " in text
    assert "_session.py" not in text


def test_an_interrupted_call_is_one_line(kernel: Kernel) -> None:
    kernel.run_ok(f"import mcp_notebook\nsession = mcp_notebook.connect({DEMO!r}, show_progress=False)\n")
    message_id = kernel.client.execute(
        "def in_flight(progress, total, message):\n"
        "    if progress == 1:\n"
        "        print('in flight', flush=True)\n"
        "session.call_tool('slow_count', {'steps': 100, 'delay': 0.1}, progress=in_flight)\n"
    )
    kernel.wait_for_output(message_id, "in flight")
    reply = kernel.interrupt(message_id)  # once the kernel is idle again: the next cell runs
    assert reply["content"]["ename"] == "KeyboardInterrupt"  # still one, for `except KeyboardInterrupt`
    shown = ANSI.sub("", "\n".join(reply["content"]["traceback"]))
    assert shown == ("KeyboardInterrupt: call_tool('slow_count') interrupted; the request was cancelled"), (
        shown
    )
    cell = kernel.run("print(session.call_tool('add', {'a': 1, 'b': 1}).structured_content)")
    assert cell.status == "ok", cell
    assert "{'result': 2.0}" in cell.stdout
    kernel.run_ok("session.close()")
