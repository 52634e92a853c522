"""A real kernel signs in with the device grant (RFC 8628) through its panel, then calls a tool.

The authorization server and the MCP server are tests/test_auth_device.py's gateway, on loopback in
this process (a blocking portal's event loop); the kernel is a real ipykernel (tests/test_kernel.py)
and the page is tests/panel_comms.py, which plays the browser's side of our panels over comms. The
cell blocks in ``mcp_notebook.Session(..., auth=OAuth(flow="device"))``; the code is read off the
panel under that cell (which the kernel must draw while the cell waits), the person approves it at
the server, and the cell goes on to call a protected tool. No loopback listener is opened.
"""

from __future__ import annotations

import contextlib
import time
from queue import Empty
from typing import Any

import anyio.from_thread
import pytest

from .panel_comms import PanelsOverComms
from .raw_http import raw_http_server
from .test_auth_device import DeviceGateway
from .test_kernel import Kernel
from .test_kernel import kernel as kernel  # the real-kernel fixture

pytest.importorskip("anywidget")


def _until(client: Any, page: PanelsOverComms, seen: Any, what: str, timeout: float = 60) -> Any:
    """Read IOPub into ``page`` until ``seen(message)`` is true; a hang guard only."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(Empty):
            message = client.get_iopub_msg(timeout=1)
            page.saw(message)
            found = seen(message)
            if found:
                return found
    raise AssertionError(f"no {what} within {timeout:g} s")


def test_a_kernel_signs_in_with_the_device_grant_through_its_panel(kernel: Kernel) -> None:
    with anyio.from_thread.start_blocking_portal() as portal:
        world = portal.call(DeviceGateway)
        with portal.wrap_async_context_manager(raw_http_server(world.app)) as base:
            world.base = base
            world.interval = 0.2
            kernel.run_ok("import json\nimport mcp_notebook\nfrom mcp_notebook.auth import OAuth\n")
            client = kernel.client
            cell = client.execute(
                f"session = mcp_notebook.Session({world.resource('good')!r}, protocol='legacy', timeout=20,\n"
                "    auth=OAuth(flow='device', authorize_timeout=60), show_progress=False)\n"
                "print(json.dumps({'text': session.call_tool('whoami').text}))\n"
            )
            page = PanelsOverComms(client)

            def code_shown(_message: Any) -> Any:
                found = page.find("HTMLModel", "mcpnb-device-code")
                return found if found and page.displayed else None

            try:
                panel, key = _until(client, page, code_shown, "device sign-in panel")
            except AssertionError as exc:
                raise AssertionError(f"{exc}; the kernel's stderr:\n{kernel.kernel_stderr()}") from None
            html = page.panels[panel][key]["value"]
            user_code = html.split(">", 1)[1].split("<", 1)[0]
            assert page.panel_of("VBoxModel", "mcpnb-device-sign-in") in page.displayed
            portal.call(world.person, "approve", user_code)

            printed: list[str] = []

            def done(message: Any) -> bool:
                if message["parent_header"].get("msg_id") == cell and message["msg_type"] == "stream":
                    printed.append(message["content"]["text"])
                status = page.find("HTMLModel", "mcpnb-sign-in-status")
                said = page.panels[status[0]][status[1]]["value"] if status else ""
                return "Signed in." in said and '"text": "good"' in "".join(printed)

            _until(client, page, done, "signed-in panel and the tool's answer")
            kernel.run_ok("session.close()\n")
    assert "/authorize" not in world.paths
    assert world.only_own_tokens("good")
    stderr = kernel.kernel_stderr()
    assert "Traceback" not in stderr, stderr
    assert not any(code in stderr for code in world.devices)
