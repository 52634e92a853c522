"""A notebook session shows its server's log messages from the first call (issue #37, item 1).

A server logs only to a client that asks: in the 2026-07-28 era a request asks in its ``_meta``
(and the server must send nothing to one that does not), in the legacy era ``logging/setLevel``
asks once. Notebook sessions (``connect``, ``%mcp connect``, groups) ask at "info" unless given
``log_level=``; the core ``Client`` asks for nothing, as the spec intends.

Real servers: the bundled demo as a subprocess (its ``write_log`` tool, both eras) and an
in-process official-SDK legacy server that records the level it is asked for.
"""

from __future__ import annotations

import warnings
from typing import Any

import mcp_types as types
import pytest
from mcp.server.lowlevel import Server

import mcp_notebook
from mcp_notebook.client import Client
from mcp_notebook.notebook import Group

from .conftest import demo_server
from .widget_helpers import wait_for

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

DEMO = demo_server()


def _logged(session: Any) -> list[tuple[str, str]]:
    """``(level, text)`` of each log message in the session's model, oldest first."""
    return [(entry["level"], entry["data"]) for entry in session.model.log]


def _write_log(session: Any, message: str, level: str = "info") -> None:
    session.call_tool("write_log", {"message": message, "level": level})


@pytest.mark.parametrize(("protocol", "era"), [("auto", "modern"), ("legacy", "legacy")])
def test_a_session_shows_the_demos_log_in_its_model_and_log_panel(protocol: str, era: str) -> None:
    with mcp_notebook.connect(DEMO, show_progress=False, dialogs=False, protocol=protocol) as session:
        assert session.model.era == era
        panel = session.log_widget()
        try:
            _write_log(session, "first contact")
            wait_for(lambda: ("info", "first contact") in _logged(session), 15, "the message in model.log")
            wait_for(
                lambda: any(e["data"] == "first contact" for e in panel.entries()),
                15,
                "the message in the log panel",
            )
            (row,) = [e for e in panel.entries() if e["data"] == "first contact"]
            assert row["kind"] == "info"
        finally:
            panel.close()


def test_a_modern_session_asks_at_info_and_log_level_changes_it() -> None:
    # The demo's modern era sends only what a request asked for: a debug message is left out at
    # "info", and an info one at "warning". Messages come in order, so once the later one is in,
    # the earlier one would be too.
    with mcp_notebook.connect(DEMO, show_progress=False, dialogs=False) as session:
        assert session.model.era == "modern"
        _write_log(session, "chatter", "debug")
        _write_log(session, "said", "info")
        wait_for(lambda: ("info", "said") in _logged(session), 15, "the info message")
        assert "chatter" not in [text for _, text in _logged(session)]
    with mcp_notebook.connect(DEMO, show_progress=False, dialogs=False, log_level="warning") as session:
        _write_log(session, "said", "info")
        _write_log(session, "careful", "warning")
        wait_for(lambda: ("warning", "careful") in _logged(session), 15, "the warning")
        assert "said" not in [text for _, text in _logged(session)]


def test_a_groups_servers_are_asked_for_their_logs() -> None:
    group = Group({"demo": DEMO}, show_progress=False, dialogs=False)
    try:
        assert group["demo"].model.era == "modern"
        group.call_tool("demo.write_log", {"message": "from the group"})
        wait_for(
            lambda: ("info", "from the group") in _logged(group["demo"]), 15, "the message in the session"
        )
        wait_for(
            lambda: any(e.get("data") == "from the group" for e in group.model.log), 15, "the merged log"
        )
    finally:
        group.close()


def test_mcp_connect_asks_for_the_servers_log() -> None:
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "mcp_notebook")
    magics = shell.magics_manager.registry["McpMagics"]
    shell.run_line_magic("mcp", f"connect logs -- {' '.join(DEMO)}")
    try:
        session = magics.sessions["logs"].session
        shell.run_line_magic("mcp", "call write_log message=magic -s logs")
        wait_for(lambda: ("info", "magic") in _logged(session), 15, "the message in model.log")
    finally:
        shell.run_line_magic("mcp", "disconnect logs")


# --- who asks: an SDK legacy server that records logging/setLevel -------------------------------


def _level_recorder() -> tuple[Any, list[str]]:
    """An in-process legacy SDK server declaring ``logging``; the list gets each level asked for."""
    asked: list[str] = []

    async def set_level(_ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
        asked.append(params.level)
        return types.EmptyResult()

    with warnings.catch_warnings():  # the SDK warns that logging is deprecated in 2026-07-28
        warnings.simplefilter("ignore")
        server = Server("level recorder", on_set_logging_level=set_level)
    return server, asked


@pytest.mark.parametrize(
    ("options", "expected"),
    [({}, ["info"]), ({"log_level": "debug"}, ["debug"]), ({"log_level": None}, [])],
    ids=["default", "debug", "opted-out"],
)
def test_a_legacy_session_sets_the_level_once_connected(options: dict[str, Any], expected: list[str]) -> None:
    server, asked = _level_recorder()
    with mcp_notebook.connect(server, protocol="legacy", show_progress=False, dialogs=False, **options) as s:
        assert "logging" in s.model.capabilities
        assert asked == expected


@pytest.mark.anyio
async def test_the_core_client_asks_for_no_logs() -> None:
    server, asked = _level_recorder()
    async with Client(server, protocol="legacy") as client:
        assert "logging" in client.server_capabilities
    assert asked == []

    # Modern: no request asks, so the demo sends nothing; asked, it sends (ordered before the answer).
    for level, expected in ((None, 0), ("info", 1)):
        async with Client(DEMO, log_level=level) as client:
            assert client.era == "modern"
            async with client.notifications() as queue:
                await client.call_tool("write_log", {"message": "core"})
                assert len(queue) == expected, level
