"""A required argument left out whose schema gives a default is filled with it and sent (issue #37, 1).

@playwright/mcp's ``browser_take_screenshot`` lists ``scale`` in ``required`` and gives it
``"default": "css"``; the call in Playwright's README, ``{"type": "png"}``, is answered by the server
(which fills the default) and sent by the official SDK client, so refusing it here made the client
stricter than the server, and the explorer (whose form shows the default) disagree with
``call_tool``. One rule (``mcp_notebook/protocol/_defaults.py``) now fills it for ``call_tool``,
``%mcp call`` and the explorer. The server is ``tests/servers/schema_server.py`` (a real stdio
process) echoing the arguments it received, so each test asserts what reached the server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

import mcp_notebook
from mcp_notebook import Client
from tests.raises import raises_mcp

from .conftest import python_server

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

GUARD = 60  # what stops a hang; never a budget the test asserts

#: Playwright's schema for the tool, as its server lists it (zod: ``.default()`` keeps the name in
#: ``required``).
SCREENSHOT = {
    "name": "browser_take_screenshot",
    "inputSchema": {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "type": {"type": "string", "enum": ["png", "jpeg"], "default": "png"},
            "filename": {"type": "string"},
            "fullPage": {"type": "boolean"},
            "scale": {"type": "string", "enum": ["css", "device"], "default": "css"},
        },
        "required": ["type", "scale"],
        "additionalProperties": False,
    },
}
#: A required argument without a default: still refused when left out.
OPEN = {
    "name": "open_file",
    "inputSchema": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "mode": {"type": "string", "default": "r"}},
        "required": ["path", "mode"],
    },
}


def defaults_server(tmp_path: Path) -> list[str]:
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"tools": [SCREENSHOT, OPEN], "echo_arguments": True}))
    return python_server("schema_server.py", "--spec", str(spec), "--log", str(tmp_path / "calls.log"))


def sent(text: str) -> dict[str, Any]:
    """The arguments the server received, from its echo."""
    received = json.loads(text)
    assert isinstance(received, dict), text
    return received


@pytest.mark.anyio
async def test_call_tool_fills_a_required_default_and_sends_it(tmp_path: Path) -> None:
    async with Client(defaults_server(tmp_path)) as client:
        with anyio.fail_after(GUARD):
            result = await client.call_tool("browser_take_screenshot", {"type": "png"})
            assert sent(result.text) == {"type": "png", "scale": "css"}
            # a value given is never replaced by the default
            result = await client.call_tool("browser_take_screenshot", {"type": "jpeg", "scale": "device"})
            assert sent(result.text) == {"type": "jpeg", "scale": "device"}
            # validate=False sends exactly what was given
            result = await client.call_tool("browser_take_screenshot", {"type": "png"}, validate=False)
            assert sent(result.text) == {"type": "png"}
            # a required argument without a default is still refused, naming it, and nothing is sent
            with raises_mcp("invalid", match=r"'path' is a required property.*nothing was sent"):
                await client.call_tool("open_file", {})
            result = await client.call_tool("open_file", {"path": "a.txt"})
            assert sent(result.text) == {"path": "a.txt", "mode": "r"}
    assert (tmp_path / "calls.log").read_text().split().count("open_file") == 1


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Any]:
    opened = mcp_notebook.connect(defaults_server(tmp_path), show_progress=False, register=False)
    try:
        yield opened
    finally:
        opened.close()


def test_the_explorer_sends_what_call_tool_sends(session: Any) -> None:
    from mcp_notebook.widgets import explorer

    ex = explorer(session)
    try:
        ex.select("browser_take_screenshot")
        assert ex.form is not None
        ex.form.json_toggle.value = True  # what a user types as JSON leaves ``scale`` out
        ex.form.set_value({"type": "png"})
        assert ex.validate() == []
        assert ex.call() is not None, ex.validation.value
        result = ex.wait(GUARD)
        assert sent(result.text) == {"type": "png", "scale": "css"}
        ex.select("open_file")
        ex.form.json_toggle.value = True
        ex.form.set_value({"mode": "w"})
        assert ex.validate() == ["path: is required"]
    finally:
        ex.close()


def test_the_call_magic_fills_it_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "mcp_notebook")
    shell.run_line_magic("mcp", "connect shots -- " + " ".join(defaults_server(tmp_path)))
    try:
        result = shell.run_cell("%mcp call browser_take_screenshot type=png", store_history=False)
        assert result.success, capsys.readouterr()
        assert sent(result.result.text) == {"type": "png", "scale": "css"}
        capsys.readouterr()
        result = shell.run_cell("%mcp call open_file", store_history=False)
        assert not result.success
        out, err = capsys.readouterr()
        assert "missing" in out + err
        assert "'path'" in out + err
        assert "'mode'" not in out + err
    finally:
        shell.run_line_magic("mcp", "disconnect shots")
