"""The ``%mcp`` / ``%%mcp`` magics, through a real IPython shell and real servers: every subcommand,
``key=value`` coerced by the tool's inputSchema, ``-o``, cell bodies, tab completion, mcp.json, and
mistakes reported as one line (never a traceback). The parsing rules are also tested directly."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

pytest.importorskip("IPython")
pytest.importorskip("pandas")

import pandas as pd
from IPython.core.completer import provisionalcompleter
from IPython.core.interactiveshell import InteractiveShell

from mcp_notebook import PromptResult, ResourceContents, ToolResult
from mcp_notebook.jupyter import _magic_args as margs
from mcp_notebook.jupyter import _magics as magics_module
from mcp_notebook.jupyter._magics import COMMANDS, McpMagicError, McpMagics
from mcp_notebook.notebook import SessionTask
from mcp_notebook.notebook._frames import TASK_COLUMNS

from .conftest import PYTHON, demo_server, everything_server, python_server
from .test_frames_uniform import assert_uniform

ANSI = re.compile(r"\x1b\[[0-9;]*m")
DEMO_LINE = "connect demo -- " + " ".join(demo_server())
TASKS_LINE = "connect tasks -- " + " ".join(python_server("tasks_server.py"))


def _children() -> set[int]:
    return {p.pid for p in psutil.Process(os.getpid()).children(recursive=True)}


@pytest.fixture(scope="module")
def ip() -> Iterator[InteractiveShell]:
    """One shell for the module, with the extension loaded; every session closed at the end."""
    shell = InteractiveShell.instance()
    before = _children()
    shell.run_line_magic("load_ext", "mcp_notebook")
    try:
        yield shell
    finally:
        magics = shell.magics_manager.registry.get("McpMagics")
        if magics is not None:
            magics.close_all()
        deadline = time.monotonic() + 5
        while _children() - before and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _children() - before, "a server started by the magics outlived the tests"


def _magics(shell: InteractiveShell) -> McpMagics:
    if "McpMagics" not in shell.magics_manager.registry:
        shell.run_line_magic("load_ext", "mcp_notebook")
    return shell.magics_manager.registry["McpMagics"]  # type: ignore[no-any-return]


@pytest.fixture
def demo(ip: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> McpMagics:
    """The shell's "demo" session (the demo server), connected once and current for each test."""
    magics = _magics(ip)
    entry = magics.sessions.get("demo")
    if entry is None or entry.session.status != "ready":
        ip.run_line_magic("mcp", DEMO_LINE)
    magics.current = "demo"
    capsys.readouterr()
    return magics


def run(ip: InteractiveShell, source: str) -> Any:
    return ip.run_cell(source, store_history=False)


def output(capsys: pytest.CaptureFixture[str]) -> str:
    out, err = capsys.readouterr()
    return ANSI.sub("", out + err)


def one_error_line(ip: InteractiveShell, source: str, capsys: pytest.CaptureFixture[str]) -> str:
    """Run ``source``; it must fail with exactly one line of output and no traceback."""
    capsys.readouterr()
    result = run(ip, source)
    text = output(capsys)
    assert not result.success, text
    assert isinstance(result.error_in_exec, McpMagicError)
    assert "Traceback" not in text
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    return lines[0]


def ok(ip: InteractiveShell, source: str, capsys: pytest.CaptureFixture[str]) -> tuple[Any, str]:
    """Run ``source``; it must succeed. ``(its value, its output)``."""
    capsys.readouterr()
    result = run(ip, source)
    text = output(capsys)
    assert result.success, text
    assert "Traceback" not in text
    return result.result, text


# --- connecting, servers, use, disconnect ---------------------------------------------------------


def test_connect_prints_one_line_and_makes_the_session_current(
    ip: InteractiveShell, demo: McpMagics, capsys: pytest.CaptureFixture[str], no_leaked_processes: None
) -> None:
    value, text = ok(ip, f"%mcp connect bad -- {' '.join(python_server('bad_server.py'))}", capsys)
    assert value is None
    assert text.startswith("connected 'bad': bad-server 0.0.1 (legacy ")
    assert demo.current == "bad"
    frame, _ = ok(ip, "%mcp servers", capsys)
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == [
        "name",
        "current",
        "server",
        "status",
        "era",
        "protocol",
        "tools",
        "opened",
        "group",
        "target",
        "last_error",
    ]
    rows = frame.set_index("name")
    assert rows.loc["bad", "opened"] == "%mcp connect"
    assert rows.loc["bad", "server"] == "bad-server 0.0.1"
    assert bool(rows.loc["bad", "current"])
    assert not bool(rows.loc["demo", "current"])
    assert rows.loc["bad", "target"].endswith("bad_server.py")
    assert rows.loc["demo", "target"].endswith("-m mcp_notebook.demo")
    assert rows.loc["bad", "era"] == "legacy"
    assert rows.loc["demo", "status"] == "ready"

    _, text = ok(ip, "%mcp use demo", capsys)
    assert text.strip() == "current session: 'demo'"
    assert demo.current == "demo"
    # -s picks a session for one command without switching.
    result, _ = ok(ip, "%mcp call -s bad echo n=7", capsys)
    assert result.text == "7"
    assert demo.current == "demo"

    _, text = ok(ip, "%mcp disconnect bad", capsys)
    assert text.strip() == "disconnected 'bad'"
    assert list(demo.sessions) == ["demo"]
    assert demo.current == "demo"


def test_connecting_a_name_again_replaces_its_session(
    ip: InteractiveShell, demo: McpMagics, capsys: pytest.CaptureFixture[str], no_leaked_processes: None
) -> None:
    command = " ".join(python_server("bad_server.py"))
    ok(ip, f"%mcp connect bad -- {command}", capsys)
    first = demo.sessions["bad"].session
    _, text = ok(ip, f"%mcp connect bad -o bad_session -- {command}", capsys)
    assert "replaced the previous session" in text
    assert first.status == "closed"
    assert ip.user_ns["bad_session"] is demo.sessions["bad"].session is not first
    ok(ip, "%mcp disconnect", capsys)  # the current one: bad
    assert "bad" not in demo.sessions
    assert demo.current == "demo"


def test_disconnect_all_then_nothing_is_current(
    ip: InteractiveShell, demo: McpMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    _, text = ok(ip, "%mcp disconnect --all", capsys)
    assert text.strip() == "disconnected 'demo'"
    assert demo.sessions == {}
    assert demo.current is None
    line = one_error_line(ip, "%mcp tools", capsys)
    assert line.startswith("mcp tools: no MCP session: connect one first")
    _, text = ok(ip, "%mcp disconnect --all", capsys)
    assert text.strip() == "no sessions to disconnect"


def test_unknown_server_is_one_line_with_a_suggestion(
    ip: InteractiveShell, demo: McpMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    assert one_error_line(ip, "%mcp use dmeo", capsys) == (
        "mcp use: no session named 'dmeo'; did you mean 'demo'? (sessions: demo)"
    )
    assert "no session named 'nope'" in one_error_line(ip, "%mcp call -s nope add a=1 b=2", capsys)
    assert "no session named 'x'" in one_error_line(ip, "%mcp disconnect x", capsys)
    line = one_error_line(ip, "%mcp connect no-such-server-here", capsys)
    assert "'no-such-server-here' is neither a server named in mcp.json nor a command on PATH" in line


def test_connect_mistakes_are_one_line(
    ip: InteractiveShell,
    demo: McpMagics,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    no_leaked_processes: None,
) -> None:
    monkeypatch.delenv("MCP_MAGIC_UNSET", raising=False)
    assert "could not start the server" in one_error_line(ip, "%mcp connect x -- no-such-command-xyz", capsys)
    assert "protocol='bogus'" in one_error_line(ip, "%mcp connect x --protocol bogus -- cmd", capsys)
    line = one_error_line(
        ip, "%mcp connect web https://example.invalid/mcp --token-env MCP_MAGIC_UNSET", capsys
    )
    assert line == "mcp connect: --token-env: the environment variable 'MCP_MAGIC_UNSET' is not set"
    line = one_error_line(ip, "%mcp connect x --token-env T -- cmd", capsys)
    assert line == "mcp connect: --token-env apply only to a server URL"
    assert "nothing after '--'" in one_error_line(ip, "%mcp connect x --", capsys)
    assert "usage: %mcp connect NAME" in one_error_line(ip, "%mcp connect", capsys)
    assert "usage: %mcp connect NAME" in one_error_line(ip, "%mcp connect a b", capsys)
    assert "cannot be a session name" in one_error_line(ip, "%mcp connect k=v -- cmd", capsys)
    assert list(demo.sessions) == ["demo"]


def test_connect_by_name_from_mcp_json(
    ip: InteractiveShell,
    demo: McpMagics,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    no_leaked_processes: None,
) -> None:
    config = {
        "mcpServers": {
            "cfg": {
                "command": PYTHON,
                "args": [*python_server("bad_server.py")[1:], "--pidfile", "server.pid"],
                "env": {"SECRET_TOKEN": "hunter2"},
            }
        }
    }
    (tmp_path / "mcp.json").write_text(json.dumps(config), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))
    with provisionalcompleter():
        assert demo.completions("%mcp connect c") == ("c", ["cfg"])
    _, text = ok(ip, "%mcp connect cfg", capsys)
    assert text.startswith("connected 'cfg': bad-server")
    frame, text = ok(ip, "%mcp servers", capsys)
    target = frame.set_index("name").loc["cfg", "target"]
    assert target.endswith("bad_server.py --pidfile server.pid (mcp.json)")
    assert "hunter2" not in frame.to_string() + text
    result, _ = ok(ip, "%mcp call echo n=3", capsys)
    assert result.text == "3"
    ok(ip, "%mcp disconnect cfg", capsys)


def test_connect_to_a_url_with_a_token_from_the_environment(
    ip: InteractiveShell,
    demo: McpMagics,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    no_leaked_processes: None,
) -> None:
    server = subprocess.Popen(
        [*demo_server("--http", "0")], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip().removeprefix("MCP_HTTP_URL=")
        assert url.startswith("http://127.0.0.1:")
        monkeypatch.setenv("MCP_MAGIC_TOKEN", "tok-s3cret")
        monkeypatch.setenv("MCP_MAGIC_HEADER", "hdr-s3cret")
        line = (
            f"%mcp connect web {url}?key=q-s3cret --token-env MCP_MAGIC_TOKEN "
            "--header X-Trace=1 --header-env X-Api-Key=MCP_MAGIC_HEADER"
        )
        _, text = ok(ip, line, capsys)
        assert text.startswith("connected 'web': mcp-notebook-demo")
        frame, text2 = ok(ip, "%mcp servers", capsys)
        assert frame.set_index("name").loc["web", "target"] == url
        assert "s3cret" not in text + text2 + frame.to_string()
        result, _ = ok(ip, "%mcp call add a=2 b=3", capsys)
        assert result.structured_content == {"result": 5}
        ok(ip, "%mcp disconnect web", capsys)
    finally:
        server.terminate()
        server.wait(timeout=10)
        if server.stdout is not None:
            server.stdout.close()


# --- lists --------------------------------------------------------------------------------------


def test_tools_is_a_frame_filtered_by_glob_or_substring(
    ip: InteractiveShell, demo: McpMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    frame, _ = ok(ip, "%mcp tools", capsys)
    assert isinstance(frame, pd.DataFrame)
    assert "sales_records" in set(frame["name"])
    assert len(frame) == len(demo.sessions["demo"].session.model.tools)
    frame, _ = ok(ip, "%mcp tools SALES", capsys)
    assert list(frame["name"]) == ["sales_records"]
    frame, _ = ok(ip, "%mcp tools 'a*'", capsys)
    assert sorted(frame["name"]) == ["add", "add_tool", "ask_user_name"]
    assert list(frame.index) == [0, 1, 2]
    frame, _ = ok(ip, "%mcp tools zzz", capsys)
    assert frame.empty


def test_resources_prompts_and_history_frames(
    ip: InteractiveShell, demo: McpMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    frame, _ = ok(ip, "%mcp resources", capsys)
    assert "demo://readme" in set(frame["uri"])
    frame, _ = ok(ip, "%mcp prompts", capsys)
    assert {"greeting", "analyze_region"} <= set(frame["name"])
    ok(ip, "%mcp call add a=1 b=1", capsys)
    frame, _ = ok(ip, "%mcp history", capsys)
    assert frame.iloc[-1]["name"] == "add"
    assert frame.iloc[-1]["outcome"] == "ok"


# --- call: coercion, bodies, -o --------------------------------------------------------------------


def _last_arguments(magics: McpMagics, name: str = "demo") -> Any:
    return magics.sessions[name].session.model.history[-1]["arguments"]


def test_call_returns_the_result_and_coerces_numbers(
    ip: InteractiveShell, demo: McpMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    result, _ = ok(ip, "%mcp call add a=1.5 b=2", capsys)
    assert isinstance(result, ToolResult)
    assert result.structured_content == {"result": 3.5}
    arguments = _last_arguments(demo)
    assert arguments == {"a": 1.5, "b": 2}
    assert type(arguments["b"]) is int

    result, _ = ok(ip, "%mcp call sales_records region=north limit=3", capsys)
    records = result.data["result"]
    assert len(records) == 3
    assert {r["region"] for r in records} == {"north"}
    arguments = _last_arguments(demo)
    assert arguments == {"region": "north", "limit": 3}
    assert type(arguments["limit"]) is int

    result, _ = ok(ip, "%mcp call echo 'text=hello world'", capsys)
    assert result.text == "hello world"
    result, _ = ok(ip, "%mcp call echo text=42", capsys)  # a string property keeps the text
    assert _last_arguments(demo) == {"text": "42"}

    result, _ = ok(ip, "%mcp call add a:=1 b:=2.5", capsys)  # key:=JSON
    assert result.structured_content == {"result": 3.5}


def test_call_coerces_booleans_and_integers_on_the_wire(
    ip: InteractiveShell,
    demo: McpMagics,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    no_leaked_processes: None,
) -> None:
    log = tmp_path / "received.jsonl"
    ok(ip, f"%mcp connect bad -- {' '.join(python_server('bad_server.py', '--log', str(log)))}", capsys)
    try:
        ok(ip, "%mcp call flood_stderr mb=0 newlines=yes", capsys)
        ok(ip, "%mcp call flood_stderr mb=0.0 newlines=False", capsys)
        result, _ = ok(ip, "%mcp call echo n=12", capsys)
        assert result.text == "12"
        sent = [json.loads(line) for line in log.read_text().splitlines()]
        calls = [m["params"]["arguments"] for m in sent if m.get("method") == "tools/call"]
        assert calls == [{"mb": 0, "newlines": True}, {"mb": 0.0, "newlines": False}, {"n": 12}]
        assert "number" in one_error_line(ip, "%mcp call flood_stderr mb=lots", capsys)
        assert "must be true or false" in one_error_line(ip, "%mcp call flood_stderr newlines=maybe", capsys)
    finally:
        ok(ip, "%mcp disconnect bad", capsys)


def test_cell_body_json_or_yaml_merged_with_the_line(
    ip: InteractiveShell, demo: McpMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    result, _ = ok(ip, '%%mcp call add\n{"a": 1, "b": 2}', capsys)
    assert result.structured_content == {"result": 3}
    result, _ = ok(ip, "%%mcp call sales_records\nregion: south\nlimit: 2\n", capsys)
    assert [r["region"] for r in result.data["result"]] == ["south", "south"]
    result, _ = ok(ip, '%%mcp call add b=5\n{"a": 1, "b": 2}', capsys)  # the line wins
    assert result.structured_content == {"result": 6}
    result, _ = ok(ip, "%%mcp call add a=1 b=2\n\n", capsys)  # an empty body
    assert result.structured_content == {"result": 3}
    assert "must be an object of arguments" in one_error_line(ip, "%%mcp call add\n[1, 2]", capsys)
    assert "neither JSON nor YAML" in one_error_line(ip, "%%mcp call add\na: [1\n", capsys)


def test_output_option_stores_the_result_and_shows_nothing(
    ip: InteractiveShell, demo: McpMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    value, text = ok(ip, "%mcp call add a=1 b=2 -o total", capsys)
    assert value is None
    assert text == ""
    assert isinstance(ip.user_ns["total"], ToolResult)
    assert ip.user_ns["total"].structured_content == {"result": 3}
    ok(ip, "%mcp call --out=rows sales_records limit=4 --frame", capsys)
    assert isinstance(ip.user_ns["rows"], pd.DataFrame)
    assert len(ip.user_ns["rows"]) == 4
    ok(ip, "%mcp tools -o tools_df", capsys)
    assert isinstance(ip.user_ns["tools_df"], pd.DataFrame)
    ok(ip, "%mcp read demo://readme -o readme", capsys)
    assert isinstance(ip.user_ns["readme"], ResourceContents)
    ok(ip, "%mcp prompt greeting name=Ann -o greeting", capsys)
    assert isinstance(ip.user_ns["greeting"], PromptResult)
    ok(ip, "%mcp servers -o servers", capsys)
    assert list(ip.user_ns["servers"]["name"]) == ["demo"]
    # A tool that reports an error: stored, and said in one line.
    value, text = ok(ip, "%mcp call fail message=boom -o failed", capsys)
    assert value is None
    assert ip.user_ns["failed"].is_error
    assert text.strip() == "mcp call: tool 'fail' reported an error: Error executing tool fail: boom"
    assert "needs a Python variable name" in one_error_line(ip, "%mcp call add a=1 b=2 -o 1x", capsys)
    assert one_error_line(ip, "%mcp tools -o", capsys) == "mcp tools: option -o needs a value"


def test_a_tool_error_result_is_returned_not_raised(
    ip: InteractiveShell, demo: McpMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    result, _ = ok(ip, "%mcp call fail message=boom", capsys)
    assert isinstance(result, ToolResult)
    assert result.is_error


# --- mistakes: one line each -------------------------------------------------------------------------


def test_a_bad_tool_name_is_one_line_with_a_suggestion(
    ip: InteractiveShell, demo: McpMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    line = one_error_line(ip, "%mcp call ad a=1 b=2", capsys)
    assert line.startswith("mcp call: no tool 'ad' on 'demo'; did you mean 'add")
    assert "(tools: add, add_tool, " in line
    line = one_error_line(ip, "%%mcp call sales_record\nlimit: 2", capsys)
    assert "did you mean 'sales_records'?" in line


def test_a_bad_argument_is_one_line_and_never_shows_the_value(
    ip: InteractiveShell, demo: McpMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    assert one_error_line(ip, "%mcp call add a=s3cret b=1", capsys) == (
        "mcp call: tool 'add': argument 'a' must be a number"
    )
    assert one_error_line(ip, "%mcp call add a=1 c=2", capsys) == (
        "mcp call: tool 'add' has no argument 'c' (arguments: a, b)"
    )
    assert one_error_line(ip, "%mcp call sales_records regoin=north", capsys) == (
        "mcp call: tool 'sales_records' has no argument 'regoin'; did you mean 'region'? "
        "(arguments: limit, region)"
    )
    assert one_error_line(ip, "%mcp call add a=1", capsys) == (
        "mcp call: tool 'add': missing the required argument 'b' (arguments: a, b)"
    )
    assert "is not valid JSON" in one_error_line(ip, "%mcp call add a:=[s3cret b=1", capsys)
    assert "argument 'a' is given twice" in one_error_line(ip, "%mcp call add a=1 a=2 b=1", capsys)
    assert "expected key=value" in one_error_line(ip, "%mcp call add 1 2", capsys)
    # the client's own schema check (minimum 1) also comes as one line, before anything is sent
    line = one_error_line(ip, "%mcp call sales_records limit=0", capsys)
    assert line.startswith("mcp call: arguments for tool 'sales_records' do not match its inputSchema")
    for source in ("%mcp call add a=s3cret b=1", "%mcp call add a:=[s3cret b=1"):
        assert "s3cret" not in one_error_line(ip, source, capsys)


def test_other_mistakes_are_one_line(
    ip: InteractiveShell, demo: McpMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    assert one_error_line(ip, "%mcp tols", capsys).startswith(
        "mcp tols: unknown subcommand 'tols'; did you mean 'tools'?"
    )
    assert one_error_line(ip, "%mcp tools --frame", capsys) == (
        "mcp tools: unknown option '--frame' for %mcp tools (options: --all, --out, --server)"
    )
    assert one_error_line(ip, "%mcp use demo -o x", capsys) == (
        "mcp use: unknown option '-o' for %mcp use (it takes no options)"
    )
    assert "no closing quotation" in one_error_line(ip, "%mcp call echo 'text=abc", capsys)
    assert "takes no cell body" in one_error_line(ip, "%%mcp tools\nadd", capsys)
    assert "'--' comes only in %mcp connect" in one_error_line(ip, "%mcp call add -- a=1", capsys)
    assert "usage: %mcp read URI" in one_error_line(ip, "%mcp read", capsys)
    assert "--timeout needs a positive number" in one_error_line(ip, "%mcp call add --timeout -1", capsys)
    # errors from the server come as one line too
    line = one_error_line(ip, "%mcp read demo://nope", capsys)
    assert line.startswith("mcp read: ")
    assert "Unknown resource" in line


def test_the_error_line_is_red_unless_colours_are_off(ip: InteractiveShell) -> None:
    assert McpMagicError("mcp x: bad")._render_traceback_() == ["\x1b[0;31mmcp x: bad\x1b[0m"]
    assert McpMagicError("mcp x: bad", colour=False)._render_traceback_() == ["mcp x: bad"]
    assert magics_module._one_line("a\nb\x1b[2Jc\u202e" + "z" * 1000).startswith("a b\\x1b[2Jc\\u202ez")
    assert len(magics_module._one_line("z" * 1000)) == 600


# --- read, prompt, views -------------------------------------------------------------------------


def test_read_returns_the_resource_contents(
    ip: InteractiveShell, demo: McpMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    contents, _ = ok(ip, "%mcp read demo://readme", capsys)
    assert isinstance(contents, ResourceContents)
    assert contents.text
    contents, _ = ok(ip, "%mcp read demo://region/north", capsys)
    assert "north" in contents.text


def test_prompt_takes_string_arguments(
    ip: InteractiveShell, demo: McpMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    result, _ = ok(ip, "%mcp prompt greeting 'name=Ann Lee'", capsys)
    assert isinstance(result, PromptResult)
    assert "Ann Lee" in result.text
    assert _last_arguments(demo) == {"name": "Ann Lee"}
    result, _ = ok(ip, "%mcp prompt greeting name=42", capsys)
    assert _last_arguments(demo) == {"name": "42"}
    result, _ = ok(ip, "%%mcp prompt analyze_region\nregion: west", capsys)
    assert "west" in result.text
    assert one_error_line(ip, "%mcp prompt greting name=x", capsys).startswith(
        "mcp prompt: no prompt 'greting' on 'demo'; did you mean 'greeting'?"
    )
    assert one_error_line(ip, "%mcp prompt greeting nam=x", capsys) == (
        "mcp prompt: prompt 'greeting' has no argument 'nam'; did you mean 'name'? (arguments: name)"
    )
    assert one_error_line(ip, "%mcp prompt greeting", capsys) == (
        "mcp prompt: prompt 'greeting': missing the required argument 'name' (arguments: name)"
    )


def test_status_explore_and_log_give_widgets(
    ip: InteractiveShell, demo: McpMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("ipywidgets")
    for source in ("%mcp status", "%mcp status demo", "%mcp explore", "%mcp log"):
        widget, _ = ok(ip, source, capsys)
        assert type(widget).__module__.startswith("mcp_notebook.widgets"), source
    assert "no session named 'other'" in one_error_line(ip, "%mcp status other", capsys)


def test_status_and_log_fall_back_without_widgets(
    ip: InteractiveShell, demo: McpMagics, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    session = demo.sessions["demo"].session

    def no_widgets() -> Any:
        raise ImportError("No module named 'ipywidgets'")

    for method in ("status_widget", "log_widget", "explorer"):
        monkeypatch.setattr(session, method, no_widgets)
    value, _ = ok(ip, "%mcp status", capsys)
    assert value is session  # the session's HTML card

    async def log_one() -> None:  # a log entry as the session records one (no logger named)
        session.model.append("log", {"time": time.time(), "level": "info", "logger": None, "data": "hi"})

    session._engine.call(log_one)
    value, _ = ok(ip, "%mcp log", capsys)
    assert isinstance(value, pd.DataFrame)
    assert list(value.columns) == ["time", "level", "logger", "data"]
    assert_uniform(value, "%mcp log")  # local aware times, pd.NA (issue #29)
    assert "the explorer needs ipywidgets" in one_error_line(ip, "%mcp explore", capsys)


def test_tools_hides_app_only_tools_unless_all(
    ip: InteractiveShell, demo: McpMagics, capsys: pytest.CaptureFixture[str], no_leaked_processes: None
) -> None:
    ok(ip, "%mcp connect apps -- " + " ".join(python_server("apps_server.py")), capsys)
    try:
        frame, _ = ok(ip, "%mcp tools -s apps", capsys)
        assert "app_refresh" not in set(frame["name"])  # only an MCP App's View may call it
        assert frame.set_index("name").loc["show_chart", "ui"] == "ui://probe/chart.html"
        frame, _ = ok(ip, "%mcp tools --all -s apps", capsys)
        assert "app_refresh" in set(frame["name"])
    finally:
        ok(ip, "%mcp disconnect apps", capsys)
        demo.current = "demo"


# --- tasks -----------------------------------------------------------------------------------------


@pytest.fixture
def tasks(
    ip: InteractiveShell, demo: McpMagics, capsys: pytest.CaptureFixture[str], no_leaked_processes: None
) -> Iterator[McpMagics]:
    """A "tasks" session on tests/servers/tasks_server.py (modern tasks), current for the test."""
    ok(ip, f"%mcp {TASKS_LINE}", capsys)
    try:
        yield demo
    finally:
        if "tasks" in demo.sessions:
            ok(ip, "%mcp disconnect tasks", capsys)
        demo.current = "demo"


def _task_row(frame: pd.DataFrame, task_id: str) -> pd.Series:
    rows = frame[frame["task_id"] == task_id]
    assert len(rows) == 1, frame.to_string()
    return rows.iloc[0]


def test_call_task_returns_the_running_task_and_tasks_follows_it(
    ip: InteractiveShell, tasks: McpMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    value, text = ok(ip, "job = %mcp call --task crunch steps=4 delay=0.2", capsys)
    assert (value, text) == (None, "")
    job = ip.user_ns["job"]
    assert isinstance(job, SessionTask)
    assert job.task_id
    assert job.tool == "crunch"
    assert job.task_id in repr(job)
    session = tasks.sessions["tasks"].session
    arguments = _last_arguments(tasks, "tasks")
    assert arguments == {"steps": 4, "delay": 0.2}  # coerced by the schema, as for a plain call
    assert type(arguments["steps"]) is int

    frame, _ = ok(ip, "%mcp tasks", capsys)
    assert list(frame.columns) == list(TASK_COLUMNS)
    row = _task_row(frame, job.task_id)
    assert row["tool"] == "crunch"
    assert row["status"] in ("working", "completed")

    # An unambiguous prefix of the id is enough; the result is the tool's.
    result, _ = ok(ip, f"%mcp tasks result {job.task_id[:8]}", capsys)
    assert isinstance(result, ToolResult)
    assert result.structured_content == {"steps": 4}
    assert job.status == "completed"
    assert job.done
    row = _task_row(ok(ip, "%mcp tasks", capsys)[0], job.task_id)
    assert row["status"] == "completed"
    assert not pd.isna(row["ended"])
    got, _ = ok(ip, f"%mcp tasks get {job.task_id}", capsys)
    assert isinstance(got, SessionTask)
    assert got.handle is job.handle  # the session's own task, not a second attachment
    framed, _ = ok(ip, f"%mcp tasks result {job.task_id} --frame", capsys)
    assert isinstance(framed, pd.DataFrame)
    ok(ip, f"%mcp tasks result {job.task_id} -o crunched", capsys)
    assert ip.user_ns["crunched"].structured_content == {"steps": 4}

    # Without --task, a task tool is followed to its end and its result returned.
    result, _ = ok(ip, "%mcp call crunch steps=2 delay=0.05", capsys)
    assert isinstance(result, ToolResult)
    assert result.structured_content == {"steps": 2}
    assert len(session.model.tasks) == 2  # the plain call ran as a task too, and shows
    # A cell body gives the arguments of a task as of a call.
    ok(ip, '%%mcp call --task optional_sum -o summed\n{"a": 2, "b": 3}', capsys)
    assert ip.user_ns["summed"].result().text == "5"


def test_call_task_with_out_prints_the_id_and_cancel_stops_it(
    ip: InteractiveShell, tasks: McpMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    value, text = ok(ip, "%mcp call --task crunch steps=600 delay=0.1 -o long", capsys)
    assert value is None
    long = ip.user_ns["long"]
    assert isinstance(long, SessionTask)
    assert text.strip() == f"started task {long.task_id!r} (crunch) on 'tasks'"
    assert long.task_id in tasks.completions("%mcp tasks cancel ")[1]

    value, text = ok(ip, f"%mcp tasks cancel {long.task_id[:10]}", capsys)
    assert value is None
    assert text.strip() == f"cancelled task {long.task_id!r} (crunch)"
    assert long.status == "cancelled"
    assert _task_row(ok(ip, "%mcp tasks", capsys)[0], long.task_id)["status"] == "cancelled"
    assert long.task_id not in tasks.completions("%mcp tasks cancel ")[1]
    assert long.task_id in tasks.completions("%mcp tasks result ")[1]

    value, text = ok(ip, f"%mcp tasks cancel {long.task_id} -o again", capsys)
    assert value is None
    assert text.strip() == f"task {long.task_id!r} (crunch) had already ended: cancelled"
    assert ip.user_ns["again"].handle is long.handle
    assert one_error_line(ip, f"%mcp tasks result {long.task_id}", capsys) == (
        f"mcp tasks: task {long.task_id!r} was cancelled"
    )

    # A finished task is not cancelled.
    ok(ip, "%mcp call --task crunch steps=1 delay=0 -o quick", capsys)
    quick = ip.user_ns["quick"]
    quick.result()
    _, text = ok(ip, f"%mcp tasks cancel {quick.task_id}", capsys)
    assert text.strip() == f"task {quick.task_id!r} (crunch) had already ended: completed"


def test_a_task_the_session_does_not_know_is_attached_by_id(
    ip: InteractiveShell, demo: McpMagics, capsys: pytest.CaptureFixture[str], no_leaked_processes: None
) -> None:
    from .http_peers import tasks_http

    with tasks_http() as peer:
        ok(ip, f"%mcp connect first {peer.url}", capsys)
        ok(ip, "%mcp call --task crunch steps=3 delay=0.1 -o started", capsys)
        task_id = ip.user_ns["started"].task_id
        ok(ip, "%mcp disconnect first", capsys)  # the task runs on; a new session knows nothing of it
        ok(ip, f"%mcp connect second {peer.url}", capsys)
        try:
            assert demo.sessions["second"].session.model.tasks == []
            assert task_id not in demo.completions("%mcp tasks result ")[1]
            # A prefix stands only for a task the session knows; the server wants the whole id.
            line = one_error_line(ip, f"%mcp tasks get {task_id[:8]}", capsys)
            assert line.startswith(f"mcp tasks: tasks/get {task_id[:8]!r}: ")
            result, _ = ok(ip, f"%mcp tasks result {task_id}", capsys)
            assert result.structured_content == {"steps": 3}
            row = _task_row(ok(ip, "%mcp tasks", capsys)[0], task_id)
            assert row["status"] == "completed"
            assert pd.isna(row["tool"])  # attached by id: the server does not say which tool
            got, _ = ok(ip, f"%mcp tasks get {task_id[:8]}", capsys)  # known now
            assert got.task_id == task_id
        finally:
            ok(ip, "%mcp disconnect second", capsys)
            demo.current = "demo"


def test_task_mistakes_are_one_line(
    ip: InteractiveShell, tasks: McpMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "no result for --frame yet" in one_error_line(ip, "%mcp call --task crunch --frame", capsys)
    assert one_error_line(ip, "%mcp tasks frob x", capsys) == (
        "mcp tasks: unknown action 'frob' (actions: cancel, get, result)"
    )
    assert one_error_line(ip, "%mcp tasks reslt x", capsys).startswith(
        "mcp tasks: unknown action 'reslt'; did you mean 'result'?"
    )
    assert one_error_line(ip, "%mcp tasks result", capsys) == (
        "mcp tasks: usage: %mcp tasks result TASK_ID [-s SERVER] [-o VAR]"
    )
    assert "usage: %mcp tasks get TASK_ID" in one_error_line(ip, "%mcp tasks get a b", capsys)
    assert "usage: %mcp tasks cancel TASK_ID" in one_error_line(ip, "%mcp tasks cancel ''", capsys)
    assert "go with %mcp tasks result TASK_ID" in one_error_line(ip, "%mcp tasks --timeout 1", capsys)
    assert "not cancel" in one_error_line(ip, "%mcp tasks cancel x --frame", capsys)
    assert "--all goes with the list" in one_error_line(ip, "%mcp tasks get x --all", capsys)
    assert one_error_line(ip, "%mcp tasks --task", capsys).startswith("mcp tasks: unknown option '--task'")
    assert one_error_line(ip, "%mcp tasks get nope", capsys).startswith("mcp tasks: tasks/get 'nope': ")
    # The modern tasks extension has no list of the server's tasks.
    assert "this server does not list tasks" in one_error_line(ip, "%mcp tasks --all", capsys)
    # A task that needs input no one can give (the shell has no dialogs): said, not waited for.
    ok(ip, "%mcp call --task ask_name -o asking", capsys)
    asking = ip.user_ns["asking"]
    line = one_error_line(ip, f"%mcp tasks result {asking.task_id}", capsys)
    assert line.startswith(f"mcp tasks: task {asking.task_id!r} (ask_name) needs input")
    assert "elicitation" in line
    ok(ip, f"%mcp tasks cancel {asking.task_id}", capsys)
    # A tool the server runs at once even when asked for a task: said, and the result is kept.
    _, text = ok(ip, "echoed = %mcp call --task echo text=hi", capsys)
    assert text.strip() == (
        "mcp call: 'tasks' ran 'echo' at once, not as a task; the returned task is done and holds the result"
    )
    echoed = ip.user_ns["echoed"]
    assert echoed.done
    assert echoed.result().text == "hi"
    # A server without tasks.
    ok(ip, f"%mcp connect bad -- {' '.join(python_server('bad_server.py'))}", capsys)
    try:
        assert one_error_line(ip, "%mcp call --task echo n=1", capsys) == (
            "mcp call: tool 'echo' cannot run as a task: this server offers no tasks"
        )
        frame, _ = ok(ip, "%mcp tasks", capsys)
        assert frame.empty
        assert list(frame.columns) == list(TASK_COLUMNS)
        assert "this server offers no tasks" in one_error_line(ip, "%mcp tasks get abc", capsys)
    finally:
        ok(ip, "%mcp disconnect bad", capsys)


def test_a_task_id_may_be_a_prefix_no_other_known_id_has(demo: McpMagics) -> None:
    class Known:
        def __init__(self, task_id: str) -> None:
            self.task_id = task_id

    class Stub:
        def __init__(self) -> None:
            self.tasks = [Known("abc"), Known("abc-1"), Known("abdef")]

        def get_task(self, task_id: str) -> str:
            return f"attached {task_id}"

    stub: Any = Stub()
    assert demo._task("s", stub, "abc") is stub.tasks[0]  # an exact id wins over a longer one
    assert demo._task("s", stub, "abc-") is stub.tasks[1]
    assert demo._task("s", stub, "abd") is stub.tasks[2]
    with pytest.raises(margs.MagicArgError) as caught:
        demo._task("s", stub, "ab")
    assert str(caught.value) == "'ab' starts the ids of 3 tasks on 's'; give more of the id"
    assert demo._task("s", stub, "zzz") == "attached zzz"  # not known here: asked of the server


def test_tasks_on_a_server_with_a_task_list(
    ip: InteractiveShell, demo: McpMagics, capsys: pytest.CaptureFixture[str], no_leaked_processes: None
) -> None:
    """server-everything: 2025-11-25 core tasks, tasks/list offered; simulate-research-query is a
    required task of a few seconds."""
    ok(ip, f"%mcp connect everything -- {' '.join(everything_server())}", capsys)
    try:
        _, text = ok(ip, "%mcp call --task simulate-research-query topic=tasks -o research", capsys)
        research = ip.user_ns["research"]
        assert text.strip() == f"started task {research.task_id!r} (simulate-research-query) on 'everything'"
        listed, _ = ok(ip, "%mcp tasks --all", capsys)
        assert list(listed.columns) == list(TASK_COLUMNS)
        assert research.task_id in set(listed["task_id"])
        # A plain call (meanwhile the task runs on): followed to its end, its result returned.
        result, _ = ok(ip, "%mcp call simulate-research-query topic=plain", capsys)
        assert isinstance(result, ToolResult)
        assert "Research Report: plain" in result.text
        result, _ = ok(ip, f"%mcp tasks result {research.task_id}", capsys)
        assert "Research Report: tasks" in result.text
        frame, _ = ok(ip, "%mcp tasks", capsys)
        row = _task_row(frame, research.task_id)
        assert (row["tool"], row["status"]) == ("simulate-research-query", "completed")
        assert len(frame) == 2  # the plain call ran as a task too
        listed, _ = ok(ip, "%mcp tasks --all -s everything", capsys)
        assert _task_row(listed, research.task_id)["status"] == "completed"
        # --task on a tool whose taskSupport is forbidden is refused before anything is sent.
        assert one_error_line(ip, "%mcp call --task echo message=x", capsys) == (
            "mcp call: tool 'echo' does not run as a task (its execution.taskSupport is forbidden)"
        )
    finally:
        ok(ip, "%mcp disconnect everything", capsys)


# --- help ----------------------------------------------------------------------------------------


def test_help_lists_every_subcommand(
    ip: InteractiveShell, demo: McpMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    value, text = ok(ip, "%mcp help", capsys)
    assert value is None
    for command in COMMANDS.values():
        assert f"%mcp {command.usage}" in text
    _, bare = ok(ip, "%mcp", capsys)
    assert bare == text
    _, text = ok(ip, "%mcp help call", capsys)
    assert text.startswith("%mcp call TOOL")
    assert "inputSchema" in text
    assert "%mcp connect" not in text
    assert "did you mean 'call'" in one_error_line(ip, "%mcp help cal", capsys)
    _, text = ok(ip, "%mcp help tasks", capsys)
    assert text.startswith("%mcp tasks [get | result | cancel TASK_ID] [--all]")
    assert "tasks/list" in text
    _, text = ok(ip, "%mcp help call", capsys)
    assert "--task starts the tool as a task and returns the task at once" in text


def test_question_mark_help_shows_the_same_text(ip: InteractiveShell, demo: McpMagics) -> None:
    info = ip.object_inspect("%mcp")
    assert info["found"]
    assert "%mcp call TOOL [key=value …]" in info["docstring"]
    assert "%mcp disconnect [NAME | --all]" in info["docstring"]


# --- tab completion ------------------------------------------------------------------------------


def test_completion_of_subcommands_servers_tools_arguments_and_uris(demo: McpMagics) -> None:
    complete = demo.completions
    assert complete("%mcp ") == ("", sorted(COMMANDS))
    assert complete("%mcp ca") == ("ca", ["call"])
    assert complete("%mcp use ") == ("", ["demo"])
    assert complete("%mcp disconnect d") == ("d", ["demo"])
    assert complete("%mcp call sa") == ("sa", ["sales_records"])
    assert complete("%%mcp call ad") == ("ad", ["add", "add_tool"])
    assert complete("%mcp call -s demo ad") == ("ad", ["add", "add_tool"])
    assert complete("%mcp call -s ") == ("", ["demo"])
    assert complete("%mcp call sales_records ") == ("", ["limit=", "region="])
    assert complete("%mcp call sales_records limit=3 ") == ("", ["region="])
    assert complete("%mcp call sales_records region=") == (
        "region=",
        ["region=all", "region=east", "region=north", "region=south", "region=west"],
    )
    assert complete("%mcp call sales_records region=no") == ("region=no", ["region=north"])
    assert complete("%mcp prompt ") == ("", ["analyze_region", "greeting"])
    assert complete("%mcp prompt greeting ") == ("", ["name="])
    assert complete("%mcp read demo://r") == ("demo://r", ["demo://readme", "demo://region/"])
    assert complete("%mcp help t") == ("t", ["tasks", "tb", "tools"])
    assert complete("%mcp call add --t") == ("--t", ["--task", "--timeout"])
    assert complete("%mcp tasks ") == ("", ["cancel", "get", "result"])
    assert complete("%mcp tasks r") == ("r", ["result"])
    assert complete("%mcp tasks --") == ("--", ["--all", "--frame", "--out", "--server", "--timeout"])
    assert complete("%mcp tasks result ") == ("", [])  # no tasks on the demo server yet
    assert complete("%mcp tasks result x ") == ("", [])
    assert complete("%mcp call add -o ") == ("", [])
    assert complete("%mcp call nosuchtool ") == ("", [])
    # not ours: other completers answer
    assert complete("x = 1") is None
    assert complete("%mcpx ") is None
    assert complete("%mcp connect d -- pyth") is None


@pytest.mark.filterwarnings(
    "ignore::PendingDeprecationWarning"
)  # Completer.complete, which ipykernel may use
def test_completion_through_the_shell(ip: InteractiveShell, demo: McpMagics) -> None:
    line = "%mcp call sales_records reg"
    with provisionalcompleter():
        found = list(ip.Completer.completions(line, len(line)))
    assert [(c.text, c.start, c.end) for c in found] == [("region=", len(line) - 3, len(line))]
    assert ip.complete("", "%mcp call ad", 12) == ("ad", ["add", "add_tool"])
    text = 'x = "%mcp call ad"\n%mcp call ec'
    with provisionalcompleter():
        found = list(ip.Completer.completions(text, len(text)))
    assert [c.text for c in found] == ["echo"]


def test_unload_closes_the_sessions_and_removes_the_magic(
    ip: InteractiveShell, demo: McpMagics, capsys: pytest.CaptureFixture[str], no_leaked_processes: None
) -> None:
    session = demo.sessions["demo"].session
    matchers = len(ip.Completer.custom_matchers)
    ip.run_line_magic("unload_ext", "mcp_notebook")
    assert session.status == "closed"
    assert "mcp" not in ip.magics_manager.magics["line"]
    assert "mcp" not in ip.magics_manager.magics["cell"]
    assert len(ip.Completer.custom_matchers) == matchers - 1
    ip.run_line_magic("load_ext", "mcp_notebook")
    assert "mcp" in ip.magics_manager.magics["line"]
    assert len(ip.Completer.custom_matchers) == matchers
    ip.run_line_magic("load_ext", "mcp_notebook")  # loading twice changes nothing
    assert len(ip.Completer.custom_matchers) == matchers


# --- the parsing rules, directly -------------------------------------------------------------------


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "flag": {"type": "boolean"},
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "ids": {"type": "array", "items": {"type": "integer"}},
        "matrix": {"type": "array", "items": {"type": "array"}},
        "options": {"type": "object"},
        "maybe": {"type": ["integer", "null"]},
        "either": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "level": {"enum": [1, 2, 3]},
        "mode": {"$ref": "#/$defs/Mode"},
        "anything": {},
        "text": {"type": "string"},
    },
    "required": ["text"],
    "$defs": {"Mode": {"type": "string", "enum": ["fast", "slow"]}},
}


def coerce(**pairs: str) -> dict[str, Any]:
    pairs.setdefault("text", "t")
    return margs.tool_arguments([f"{k}={v}" for k, v in pairs.items()], SCHEMA, "tool")


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("true", True),
        ("YES", True),
        ("on", True),
        ("1", True),
        ("False", False),
        ("no", False),
        ("off", False),
        ("0", False),
    ],
)
def test_booleans(word: str, expected: bool) -> None:
    assert coerce(flag=word)["flag"] is expected


def test_numbers_arrays_objects_null_and_strings() -> None:
    assert coerce(count="42", ratio="1.5") == {"count": 42, "ratio": 1.5, "text": "t"}
    assert coerce(count="3.0")["count"] == 3
    assert type(coerce(count="3.0")["count"]) is int
    assert coerce(ratio="2")["ratio"] == 2
    assert type(coerce(ratio="2")["ratio"]) is int
    assert coerce(ratio="2e3")["ratio"] == 2000.0
    assert coerce(tags="a,b , c")["tags"] == ["a", "b", "c"]
    assert coerce(tags='["a,b", "c"]')["tags"] == ["a,b", "c"]
    assert coerce(tags="")["tags"] == []
    assert coerce(ids="1,2,3")["ids"] == [1, 2, 3]
    assert coerce(matrix="[[1, 2], [3]]")["matrix"] == [[1, 2], [3]]
    assert coerce(options='{"k": [1]}')["options"] == {"k": [1]}
    assert coerce(maybe="null")["maybe"] is None
    assert coerce(maybe="7")["maybe"] == 7
    assert coerce(either="7")["either"] == 7
    assert coerce(either="seven")["either"] == "seven"
    assert coerce(note="null")["note"] is None
    assert coerce(note="hello")["note"] == "hello"
    assert coerce(level="2")["level"] == 2  # type inferred from the enum
    assert coerce(mode="fast")["mode"] == "fast"  # through $ref
    assert coerce(anything="5")["anything"] == "5"  # no type: the text as it is
    assert coerce(text="007") == {"text": "007"}


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        ({"count": "1.5"}, "tool 'tool': argument 'count' must be an integer"),
        ({"ratio": "nan"}, "argument 'ratio' must be a number"),
        ({"ratio": "inf"}, "argument 'ratio' must be a number"),
        ({"flag": "maybe"}, "argument 'flag' must be true or false"),
        ({"ids": "1,x"}, "argument 'ids' must be an integer"),
        ({"matrix": "1,2"}, "argument 'matrix' must be a JSON array or a comma-separated list"),
        ({"options": "k=v"}, "argument 'options' must be a JSON object"),
        ({"options": "{bad"}, "the value of 'options' is not valid JSON"),
        ({"tags": "[1"}, "the value of 'tags' is not valid JSON"),
        ({"maybe": "x"}, "argument 'maybe' must be an integer or null"),
    ],
)
def test_values_that_do_not_fit(pairs: dict[str, str], message: str) -> None:
    with pytest.raises(margs.MagicArgError) as caught:
        coerce(**pairs)
    assert message in str(caught.value)
    for value in pairs.values():
        assert value not in str(caught.value).replace(f"'{next(iter(pairs))}'", "")


def test_json_forcing_names_and_required() -> None:
    args = margs.tool_arguments(["count:=null", 'text:="007"', "tags:=[1]"], SCHEMA, "tool")
    assert args == {"count": None, "text": "007", "tags": [1]}
    with pytest.raises(margs.MagicArgError, match=r"has no argument 'flg'; did you mean 'flag'\?"):
        margs.tool_arguments(["flg=1", "text=t"], SCHEMA, "tool")
    with pytest.raises(margs.MagicArgError, match=r"missing the required argument 'text'"):
        margs.tool_arguments([], SCHEMA, "tool")
    with pytest.raises(margs.MagicArgError, match="takes no arguments"):
        margs.tool_arguments(["x=1"], {"type": "object"}, "tool")
    with pytest.raises(margs.MagicArgError, match="has no name"):
        margs.tool_arguments(["=1"], SCHEMA, "tool")
    open_schema = {"type": "object", "properties": {"a": {}}, "additionalProperties": {"type": "integer"}}
    assert margs.tool_arguments(["b=3"], open_schema, "tool") == {"b": 3}
    assert margs.tool_arguments(["b=x"], {"additionalProperties": True}, "tool") == {"b": "x"}
    # the body comes first, the line overrides it
    assert margs.tool_arguments(["count=2"], SCHEMA, "tool", base={"count": 1, "text": "t"}) == {
        "count": 2,
        "text": "t",
    }


def test_prompt_arguments_are_strings() -> None:
    declared = [{"name": "name", "required": True}, {"name": "style"}]
    assert margs.prompt_arguments(["name=7", "style:=3"], declared, "p") == {"name": "7", "style": "3"}
    assert margs.prompt_arguments([], declared, "p", base={"name": 5}) == {"name": "5"}
    with pytest.raises(margs.MagicArgError, match="has no argument 'colour'"):
        margs.prompt_arguments(["name=x"], declared, "p", base={"colour": "red"})
    with pytest.raises(margs.MagicArgError, match="takes no arguments"):
        margs.prompt_arguments(["a=1"], [], "p")


def test_bodies() -> None:
    assert margs.body_arguments(None) == {}
    assert margs.body_arguments("  \n") == {}
    assert margs.body_arguments('{"a": [1, 2]}') == {"a": [1, 2]}
    assert margs.body_arguments("a: 1\nb: [x, y]\n") == {"a": 1, "b": ["x", "y"]}
    assert margs.body_arguments("# only a comment\n") == {}
    with pytest.raises(
        margs.MagicArgError, match=r"must be an object of arguments \(key: value\), not array"
    ):
        margs.body_arguments("- 1\n- 2\n")


def test_bodies_without_pyyaml(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "yaml", None)  # import yaml now fails
    assert margs.body_arguments('{"a": 1}') == {"a": 1}
    with pytest.raises(margs.MagicArgError, match="YAML bodies need PyYAML"):
        margs.body_arguments("a: 1")


def test_options_and_words() -> None:
    allowed = ("out", "server", "timeout", "frame")
    parsed = margs.parse_options(
        ["add", "-o", "r", "a=-1", "--timeout=2.5", "-5", "--frame"], allowed, "call"
    )
    assert parsed.words == ["add", "a=-1", "-5"]
    assert (parsed.out, parsed.timeout, parsed.frame, parsed.command) == ("r", 2.5, True, None)
    parsed = margs.parse_options(["x", "--", "cmd", "-o", "v"], ("out",), "connect")
    assert parsed.words == ["x"]
    assert parsed.command == ["cmd", "-o", "v"]
    assert parsed.out is None
    with pytest.raises(margs.MagicArgError, match="option --frame takes no value"):
        margs.parse_options(["--frame=1"], allowed, "call")
    # A task id may start with a dash (base64url): longer than a short option, it is a word.
    parsed = margs.parse_options(["result", "-T-0GLgAJ", "-o", "r"], allowed, "tasks")
    assert parsed.words == ["result", "-T-0GLgAJ"]
    assert parsed.out == "r"
    for unknown in ("-x", "--bogus"):
        with pytest.raises(margs.MagicArgError, match="unknown option"):
            margs.parse_options(["result", unknown], allowed, "tasks")
    assert margs.split_line("call echo 'text=a b' \"x=c d\"") == ["call", "echo", "text=a b", "x=c d"]
    assert margs.split_line("call echo text=#notacomment") == ["call", "echo", "text=#notacomment"]


def test_targets_are_described_without_secrets() -> None:
    describe = magics_module._describe_command
    assert describe(["/usr/bin/python3", "-m", "srv"]) == "python3 -m srv"
    assert describe(["srv", "--api-key", "k1", "--token=k2", "API_KEY=k3", "--port", "80"]) == (
        "srv --api-key *** --token=*** API_KEY=*** --port 80"
    )
    assert describe("npx -y server --password p") == "npx -y server --password ***"
    url = magics_module._describe_url
    assert url("https://user:pw@host.example:8443/mcp?token=x#f") == "https://host.example:8443/mcp"
    assert url("http://[::1]/mcp") == "http://[::1]/mcp"
