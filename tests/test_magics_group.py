"""``%mcp connect --all`` and groups in the magics, through a real IPython shell and real servers:
the board (a failing server shows why), ``%mcp servers``, ``%mcp call SERVER.TOOL``, names shared
with sessions (and which wins), one-line mistakes, completion of ``SERVER.TOOL`` and its arguments,
and closing.

Until ``mcp_notebook.config`` lands, ``connect_all`` cannot read a file, so the module's group comes
from ``%mcp connect --all`` with the magics' ``connect_all`` replaced by one that builds the
:class:`Group` from a mapping; the test with a real config file runs once the module is there.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("IPython")
pytest.importorskip("pandas")

import pandas as pd
from IPython.core.completer import provisionalcompleter
from IPython.core.interactiveshell import InteractiveShell

from mcp_notebook import Group, ToolResult  # Group: what connect_all() hands out (it opens widgets)
from mcp_notebook.jupyter import _group_commands as magics_group
from mcp_notebook.jupyter._magics import McpMagicError, McpMagics

from .conftest import PYTHON, demo_server, everything_server
from .fakes import wait_until

ANSI = re.compile(r"\x1b\[[0-9;]*m")
MISSING = "/nonexistent/x"
SERVERS: dict[str, Any] = {"demo": demo_server(), "everything": everything_server(), "broken": [MISSING]}
FAST_GIVE_UP = {"backoff_initial": 0.05, "backoff_max": 0.1, "max_reconnect_attempts": 1}


def _from_mapping(config: Any, *, only: list[str] | None = None, **options: Any) -> Group:
    """connect_all's stand-in: ``config`` names a mapping of SERVERS-like specs (or is one)."""
    servers = config if isinstance(config, dict) else SERVERS
    picked = {name: spec for name, spec in servers.items() if only is None or name in only}
    return Group(picked, **FAST_GIVE_UP, **options)


def _magics(shell: InteractiveShell) -> McpMagics:
    if "McpMagics" not in shell.magics_manager.registry:
        shell.run_line_magic("load_ext", "mcp_notebook")
    return shell.magics_manager.registry["McpMagics"]  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def ip() -> Iterator[InteractiveShell]:
    shell = InteractiveShell.instance()
    _magics(shell)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(magics_group, "connect_all", _from_mapping)
        yield shell
    magics = shell.magics_manager.registry.get("McpMagics")
    if magics is not None:
        magics.close_all()


@pytest.fixture(scope="module")
def connected(ip: InteractiveShell) -> tuple[McpMagics, str]:
    """The module's group 'g' (demo, everything, broken), connected once; ``(magics, what it showed)``."""
    magics = _magics(ip)
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        ip.run_line_magic("mcp", "connect --all --as g")
    return magics, ANSI.sub("", shown.getvalue())


@pytest.fixture
def g(connected: tuple[McpMagics, str]) -> McpMagics:
    magics = connected[0]
    assert "g" in magics.groups, "an earlier test closed the module's group"
    magics.current = "demo"
    return magics


def run(ip: InteractiveShell, source: str) -> Any:
    return ip.run_cell(source, store_history=False)


def ok(ip: InteractiveShell, source: str, capsys: pytest.CaptureFixture[str]) -> tuple[Any, str]:
    capsys.readouterr()
    result = run(ip, source)
    out, err = capsys.readouterr()
    text = ANSI.sub("", out + err)
    assert result.success, text
    return result.result, text


def one_error_line(ip: InteractiveShell, source: str, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    result = run(ip, source)
    out, err = capsys.readouterr()
    text = ANSI.sub("", out + err)
    assert isinstance(result.error_in_exec, McpMagicError), text
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    return lines[0]


# --- connecting --------------------------------------------------------------------------------------


def test_connect_all_shows_the_board_with_the_failing_servers_reason(
    ip: InteractiveShell, connected: tuple[McpMagics, str]
) -> None:
    magics, shown = connected
    group = magics.groups["g"]
    assert isinstance(group, Group)
    assert set(group.sessions) == {"demo", "everything"}
    lines = shown.splitlines()
    assert lines[0] == "group 'g'"
    assert lines[1].split() == ["server", "status", "protocol", "tools", "in", "flight", "last", "error"]
    board = {line.split()[0]: line for line in lines[2:5]}
    assert set(board) == {"demo", "everything", "broken"}
    assert "(current)" in board["demo"]
    tools = {name: len(group[name].model.tools) for name in ("demo", "everything")}
    assert tools["demo"] == 14  # the lists are shown complete, not mid-fetch
    assert board["demo"].split()[5] == "14"
    assert board["everything"].split()[4] == str(tools["everything"])
    assert " ready " in board["everything"]
    assert MISSING in board["broken"]  # the failing server shows why
    assert lines[-1] == "connected group 'g': 2 of 3 servers up; current session: 'demo'"
    assert magics.current == "demo"


def test_connect_all_mistakes_are_one_line(
    ip: InteractiveShell, g: McpMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "usage: %mcp connect --all [CONFIG]" in one_error_line(ip, "%mcp connect --all a b", capsys)
    assert one_error_line(ip, "%mcp connect x --only a -- cmd", capsys).startswith(
        "mcp connect: --only and --as go with --all"
    )
    assert "cannot be a group name" in one_error_line(ip, "%mcp connect --all --as k=v", capsys)
    assert "--token-env and --header apply to one server URL" in one_error_line(
        ip, "%mcp connect --all --token-env T", capsys
    )
    assert "needs server names" in one_error_line(ip, "%mcp connect --all --only ,", capsys)
    assert list(g.groups) == ["g"]


def test_help_documents_groups(
    ip: InteractiveShell, g: McpMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    _, text = ok(ip, "%mcp help", capsys)
    assert "  %mcp connect --all [CONFIG] [--only A,B] [--as GROUP]" in text
    assert "%mcp call SERVER.TOOL reaches any server" in text
    _, text = ok(ip, "%mcp help connect", capsys)
    assert "\n%mcp connect --all [CONFIG]" in text
    assert "a session connected on its own keeps its name over a group's server" in text
    _, text = ok(ip, "%mcp help call", capsys)
    assert "SERVER.TOOL (fastmcp's SERVER_TOOL too" in text
    assert "%mcp connect --all" in ip.object_inspect("%mcp")["docstring"]


# --- servers, calls ------------------------------------------------------------------------------------


def test_servers_lists_every_session_and_every_groups_server_one_row_each(
    ip: InteractiveShell, g: McpMagics, capsys: pytest.CaptureFixture[str], no_leaked_processes: None
) -> None:
    ok(ip, "%mcp connect solo -- " + " ".join(demo_server()), capsys)
    try:
        frame, _ = ok(ip, "%mcp servers", capsys)
        assert isinstance(frame, pd.DataFrame)
        rows = frame.set_index("name")
        assert list(rows.index) == ["solo", "demo", "everything", "broken"]
        assert list(rows["current"]) == [True, False, False, False]
        assert list(rows["group"].fillna("")) == ["", "g", "g", "g"]
        assert rows.loc["solo", "opened"] == "%mcp connect"
        assert rows.loc["demo", "opened"] == "%mcp connect --all"
        assert rows.loc["solo", "status"] == "ready"
        assert rows.loc["solo", "tools"] == 14
        assert rows.loc["demo", "server"].startswith("mcp-notebook-demo")
        assert rows.loc["broken", "status"] != "ready"
        assert MISSING in rows.loc["broken", "last_error"]  # a failing server still shows why
    finally:
        ok(ip, "%mcp disconnect solo", capsys)
    assert g.current == "demo"


def test_connect_all_shows_the_board_of_its_group(g: McpMagics) -> None:
    board = magics_group.ServerBoard(
        [("group 'g'", magics_group.group_rows("g", g.groups["g"], g._names(), g.current))]
    )
    html = board._repr_html_()
    assert "group &#39;g&#39;" in html
    assert "broken" in html
    assert MISSING in html
    assert "demo (current)" in repr(board)
    assert set(board.to_dataframe()["section"]) == {"group 'g'"}


def test_call_server_tool_goes_to_that_servers_session(
    ip: InteractiveShell, g: McpMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    group = g.groups["g"]
    g.current = "everything"
    result, _ = ok(ip, "%mcp call demo.add a=1 b=2", capsys)
    assert isinstance(result, ToolResult)
    assert result.structured_content == {"result": 3}
    assert group["demo"].model.history[-1]["name"] == "add"
    assert group["demo"].model.history[-1]["arguments"] == {"a": 1, "b": 2}  # coerced by demo's schema
    result, _ = ok(ip, "%mcp call everything.echo message=hi", capsys)
    assert "hi" in result.text
    assert group["everything"].model.history[-1]["name"] == "echo"
    result, _ = ok(ip, "%mcp call demo_add a=2 b=2", capsys)  # fastmcp's spelling
    assert result.structured_content == {"result": 4}
    result, _ = ok(ip, "%mcp call add a=3 b=2", capsys)  # only demo has it: no prefix needed
    assert result.structured_content == {"result": 5}
    result, _ = ok(ip, "%mcp call echo message=mine", capsys)  # the current session's own tool
    assert "mine" in result.text
    assert group["everything"].model.history[-1]["arguments"] == {"message": "mine"}
    result, _ = ok(ip, '%%mcp call demo.sales_records\n{"region": "north", "limit": 2}', capsys)
    assert not result.is_error
    _, _ = ok(ip, "%mcp call demo.add a=1 b=1 -o total", capsys)
    assert ip.user_ns["total"].structured_content == {"result": 2}
    result, _ = ok(ip, "%mcp call -s demo echo text=x", capsys)
    assert group["demo"].model.history[-1]["name"] == "echo"
    assert g.current == "everything"  # a call never switches


def test_a_groups_servers_are_names_like_sessions(
    ip: InteractiveShell, g: McpMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    _, text = ok(ip, "%mcp use everything", capsys)
    assert text.strip() == "current session: 'everything'"
    frame, _ = ok(ip, "%mcp tools", capsys)
    assert "get-sum" in set(frame["name"])
    frame, _ = ok(ip, "%mcp tools demo", capsys)  # a server's name: its tools
    assert "sales_records" in set(frame["name"])
    frame, _ = ok(ip, "%mcp tools g", capsys)  # a group's name: all of them, with a server column
    assert isinstance(frame, pd.DataFrame)
    assert {"demo", "everything"} == set(frame["server"])
    frame, _ = ok(ip, "%mcp history -s demo", capsys)
    assert isinstance(frame, pd.DataFrame)
    widget, _ = ok(ip, "%mcp status g", capsys)
    assert widget is not None


def test_mistakes_name_the_servers_there_are(
    ip: InteractiveShell, g: McpMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    assert one_error_line(ip, "%mcp call nosuch.add a=1 b=2", capsys) == (
        "mcp call: no server named 'nosuch' (for 'nosuch.add') (servers: broken, demo, everything)"
    )
    assert one_error_line(ip, "%mcp call dmeo.add a=1 b=2", capsys) == (
        "mcp call: no server named 'dmeo' (for 'dmeo.add'); did you mean 'demo'? "
        "(servers: broken, demo, everything)"
    )
    line = one_error_line(ip, "%mcp call broken.x", capsys)
    assert line.startswith("mcp call: server 'broken' is not connected (")
    assert MISSING in line
    line = one_error_line(ip, "%mcp call demo.ad a=1", capsys)
    assert line.startswith("mcp call: no tool 'ad' on 'demo'; did you mean 'add")
    assert one_error_line(ip, "%mcp use nope", capsys) == (
        "mcp use: no server named 'nope' (servers: broken, demo, everything)"
    )
    assert one_error_line(ip, "%mcp use g", capsys) == (
        "mcp use: 'g' is a group of servers (demo, everything, broken); name one of them"
    )
    assert one_error_line(ip, "%mcp disconnect demo", capsys) == (
        "mcp disconnect: 'demo' is a server of group 'g'; %mcp disconnect g closes the group"
    )
    g.current = None  # no current session: a bare name two servers offer must be qualified
    assert one_error_line(ip, "%mcp call echo message=x", capsys) == (
        "mcp call: several servers offer a tool 'echo'; name one: demo.echo, everything.echo"
    )
    assert one_error_line(ip, "%mcp call nothing_here", capsys) == (
        "mcp call: no server offers a tool 'nothing_here'; name it SERVER.TOOL "
        "(servers: demo, everything, broken)"
    )
    assert "demo" in g.groups["g"].sessions  # mistakes close nothing


def test_a_session_of_its_own_keeps_its_name_over_a_groups_server(
    ip: InteractiveShell, g: McpMagics, capsys: pytest.CaptureFixture[str], no_leaked_processes: None
) -> None:
    ok(ip, "%mcp connect everything -- " + " ".join(demo_server()), capsys)  # the demo server, named so
    try:
        result, _ = ok(ip, "%mcp call everything.add a=1 b=1", capsys)  # only the demo server has add
        assert result.structured_content == {"result": 2}
        frame, _ = ok(ip, "%mcp servers", capsys)
        assert "everything (hidden by the session)" in set(frame["name"])
    finally:
        ok(ip, "%mcp disconnect everything", capsys)
    result, _ = ok(ip, "%mcp call everything.echo message=back", capsys)  # the group's again
    assert "back" in result.text
    assert g.current == "demo"


# --- completion ---------------------------------------------------------------------------------------


def test_completion_offers_server_tool_names_and_their_arguments(g: McpMagics) -> None:
    complete = g.completions
    fragment, names = complete("%mcp call de")
    assert fragment == "de"
    assert {"demo.add", "demo.sales_records", "demo.echo"} <= set(names)
    assert all(name.startswith("demo.") for name in names)
    assert complete("%mcp call everything.ec") == ("everything.ec", ["everything.echo"])
    assert complete("%mcp call demo.add ") == ("", ["a=", "b="])
    assert complete("%mcp call everything.echo ") == ("", ["message="])
    assert complete("%mcp call demo_add a=1 ") == ("", ["b="])
    assert complete("%mcp call get-sum ") == ("", ["a=", "b="])  # everything's, the only one
    assert complete("%mcp call demo.sales_records region=no") == ("region=no", ["region=north"])
    assert complete("%mcp call ad") == ("ad", ["add", "add_tool"])  # the current session's own
    assert complete("%mcp call -s everything ec") == ("ec", ["echo"])
    assert complete("%mcp use ") == ("", ["broken", "demo", "everything"])
    assert complete("%mcp disconnect ") == ("", ["broken", "demo", "everything", "g"])
    assert complete("%mcp call -s e") == ("e", ["everything"])
    assert complete("%mcp connect --all ") is None  # CONFIG is a path: the file completer's


def test_completion_through_the_shell(ip: InteractiveShell, g: McpMagics) -> None:
    line = "%mcp call everything.ec"
    with provisionalcompleter():
        found = list(ip.Completer.completions(line, len(line)))
    assert [(c.text, c.start, c.end) for c in found] == [("everything.echo", len("%mcp call "), len(line))]
    line = "%mcp call demo.add b=1 "
    with provisionalcompleter():
        found = list(ip.Completer.completions(line, len(line)))
    assert [c.text for c in found] == ["a="]


# --- a real config file ---------------------------------------------------------------------------------


def test_connect_all_from_a_config_file(
    ip: InteractiveShell,
    g: McpMagics,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    no_leaked_processes: None,
) -> None:
    from mcp_notebook import connect_all

    monkeypatch.setattr(magics_group, "connect_all", connect_all)  # the real one, reading the file
    config = tmp_path / "servers.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "filedemo": {"command": PYTHON, "args": ["-m", "mcp_notebook.demo"]},
                    "other": {"command": MISSING},
                }
            }
        ),
        encoding="utf-8",
    )
    _, text = ok(ip, f"%mcp connect --all {config} --only filedemo --as cfg", capsys)
    try:
        assert "connected group 'cfg': 1 of 1 servers up; current session: 'filedemo'" in text
        result, _ = ok(ip, "%mcp call filedemo.add a=2 b=5", capsys)
        assert result.structured_content == {"result": 7}
    finally:
        ok(ip, "%mcp disconnect cfg", capsys)


# --- closing (last: the module's group goes) --------------------------------------------------------------


def test_connecting_a_group_name_again_replaces_it(
    ip: InteractiveShell, g: McpMagics, capsys: pytest.CaptureFixture[str], no_leaked_processes: None
) -> None:
    ok(ip, "%mcp connect --all --only demo --as again", capsys)
    first = g.groups["again"]
    group, text = ok(ip, "%mcp connect --all --only demo --as again -o again_group", capsys)
    assert group is None
    assert "(replaced the previous group)" in text
    assert first.statuses["demo"] == "closed"
    assert ip.user_ns["again_group"] is g.groups["again"] is not first
    assert g.current == "demo"  # the demo of the group connected last
    _, text = ok(ip, "%mcp disconnect again", capsys)
    assert text.strip() == "disconnected group 'again' (1 servers)"
    assert g.current == "demo"  # g's demo again
    assert list(g.groups) == ["g"]


def test_disconnect_closes_the_group_and_unload_closes_groups(
    ip: InteractiveShell, g: McpMagics, capsys: pytest.CaptureFixture[str], no_leaked_processes: None
) -> None:
    group = g.groups["g"]
    demo = group["demo"]
    _, text = ok(ip, "%mcp disconnect g", capsys)
    assert text.strip() == "disconnected group 'g' (3 servers)"
    assert demo.status == "closed"
    assert g.groups == {}
    assert g.current is None
    line = one_error_line(ip, "%mcp call demo.add a=1 b=2", capsys)
    assert line.startswith("mcp call: no MCP session: connect one first")

    g.add_group("late", _from_mapping({"demo": demo_server()}, show_progress=False))
    wait_until(lambda: "demo" in g.groups["late"].sessions)
    other = g.groups["late"]
    ip.run_line_magic("unload_ext", "mcp_notebook")
    assert other.statuses["demo"] == "closed"
    assert other["demo"].status == "closed"
    ip.run_line_magic("load_ext", "mcp_notebook")
    assert _magics(ip).groups == {}


# --- the board's text and HTML, directly ------------------------------------------------------------------


def test_board_text_and_html_keep_server_text_inert() -> None:
    row = {
        "server": "x<b>",
        "status": "closed",
        "era": None,
        "protocol_version": None,
        "tools": None,
        "in_flight": 0,
        "last_error": "boom\n\x1b[2Jgone <script>" + "z" * 200,
    }
    board = magics_group.ServerBoard([("group 'a\x1b[31m'", [row])])
    text = repr(board)
    assert "\x1b" not in text
    assert text.splitlines()[0] == "group 'a\\x1b[31m'"
    last = text.splitlines()[2]
    assert "boom \\x1b[2Jgone <script>" in last
    assert last.endswith("…")
    html = board._repr_html_()
    assert "<script>" not in html
    assert "x&lt;b&gt;" in html
    assert board.to_dataframe().loc[0, "section"] == "group 'a\x1b[31m'"
