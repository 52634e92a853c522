"""ClientGroup: many real servers at once, one tool table, failures shown and retried.

The five-server test is the issue's: the SDK server over stdio (modern era), server-everything over
stdio (legacy era), the SDK's Streamable HTTP server, server-everything over HTTP+SSE, and a server
whose command does not exist. The four come up, the fifth shows its error, the group works.
"""

from __future__ import annotations

import json
import sys

import anyio
import pytest

from mcp_notebook import Client, ClientGroup
from tests.conftest import demo_server, everything_server
from tests.fakes import eventually
from tests.http_peers import everything_http, sdk_http
from tests.raises import raises_mcp

pytestmark = pytest.mark.anyio

MISSING = "/nonexistent/mcp-server-that-is-not-there"
RUN_DEMO = "runpy.run_module('mcp_notebook.demo', run_name='__main__')"
FAST_RETRY = {"backoff_initial": 0.05, "backoff_max": 0.1, "max_reconnect_attempts": 2}


async def test_five_servers_four_up_one_failing(tmp_path, no_leaked_processes):
    with sdk_http("modern") as sdk, everything_http("sse") as sse:
        # One config file, VS Code's format: stdio, http and sse entries side by side.
        demo, everything = demo_server(), everything_server()
        config = {
            "servers": {
                "demo": {"type": "stdio", "command": demo[0], "args": demo[1:]},
                "everything": {"command": everything[0], "args": everything[1:]},
                "sdk-http": {"type": "http", "url": sdk.url},
                "everything-sse": {"type": "sse", "url": sse.url},
                "broken": {"command": MISSING, "args": ["--stdio"]},
            }
        }
        path = tmp_path / ".vscode" / "mcp.json"
        path.parent.mkdir()
        path.write_text(json.dumps(config))
        async with ClientGroup.from_config(path, timeout=30, **FAST_RETRY) as group:
            assert list(group) == ["demo", "everything", "sdk-http", "everything-sse", "broken"]
            statuses = group.statuses
            assert {n: s for n, s in statuses.items() if n != "broken"} == dict.fromkeys(
                ["demo", "everything", "sdk-http", "everything-sse"], "ready"
            )
            assert statuses["broken"] in ("failed", "connecting", "gave up")
            broken = group.members["broken"]
            assert broken.client is None
            assert MISSING in (broken.error_message or "")
            assert group["demo"].era == "modern"
            assert group["everything"].era == "legacy"
            assert group["sdk-http"].era == "modern"
            assert group["everything-sse"].era == "legacy"

            tools = await group.list_tools()
            by_server: dict[str, set[str]] = {}
            for tool in tools:
                server, _, name = tool.name.partition(".")
                by_server.setdefault(server, set()).add(name)
                assert tool.raw["name"] == name  # raw is the server's own
            assert set(by_server) == {"demo", "everything", "sdk-http", "everything-sse"}
            assert {"add", "echo"} <= by_server["demo"]
            assert {"get-sum", "echo"} <= by_server["everything"]

            assert float((await group.call_tool("demo.add", {"a": 1, "b": 2})).text) == 3
            assert float((await group.call_tool("sdk-http.add", {"a": 2, "b": 2})).text) == 4
            everything = await group.call_tool("everything.echo", {"message": "hi"})
            assert "hi" in everything.text
            over_sse = await group.call_tool("everything-sse.get-sum", {"a": 1, "b": 1})
            assert "2" in over_sse.text

            with raises_mcp("transport") as info:
                await group.call_tool("broken.anything", {})
            assert "broken" in str(info.value)
            assert "not connected" in str(info.value)
            with raises_mcp("invalid", match="several servers"):
                await group.call_tool("echo", {"text": "x"})

            # The group gives up on the missing command after max_reconnect_attempts retries.
            await eventually(lambda: group.members["broken"].status == "gave up", timeout=10)
            assert group.members["broken"].failures == FAST_RETRY["max_reconnect_attempts"] + 1
            summary = {row["server"]: row for row in group.summary()}
            assert summary["demo"]["era"] == "modern"
            assert summary["demo"]["tools"] >= 5
            assert summary["broken"]["status"] == "gave up"
            assert summary["broken"]["failures"] == FAST_RETRY["max_reconnect_attempts"] + 1
            assert MISSING in summary["broken"]["last_error"]
        assert set(group.statuses.values()) == {"closed"}


async def test_a_slow_server_does_not_hold_up_the_others(no_leaked_processes):
    # "slow" starts only after 2 s; "demo" must be ready (and usable) before that.
    late_start = "import time, runpy, sys; time.sleep(2); sys.argv = ['x']; " + RUN_DEMO
    slow = [sys.executable, "-c", late_start]
    group = ClientGroup({"demo": demo_server(), "slow": slow}, timeout=30)
    await group.connect(wait=False)
    try:
        await eventually(lambda: group.members["demo"].status == "ready", timeout=20)
        assert group.members["slow"].status in ("connecting", "negotiating")
        assert float((await group.call_tool("demo.add", {"a": 1, "b": 1})).text) == 2
        with anyio.fail_after(30):
            await group.connect()  # waits for the first round: the slow one is up now
        assert group.members["slow"].status == "ready"
    finally:
        await group.aclose()


async def test_a_failing_server_comes_up_when_retried(tmp_path, no_leaked_processes):
    # The command exists only after the first attempt failed: the retry finds it.
    script = tmp_path / "server.py"
    group = ClientGroup(
        {"late": [sys.executable, str(script)]},
        backoff_initial=0.05,
        backoff_max=0.1,
        max_reconnect_attempts=50,
    )
    seen: list[str] = []
    group.on_change(lambda member: seen.append(member.status))
    await group.connect()
    try:
        assert group.members["late"].status in ("failed", "connecting")
        assert group.members["late"].error is not None
        script.write_text(
            "import runpy, sys\nsys.argv=['x']\nrunpy.run_module('mcp_notebook.demo', run_name='__main__')\n"
        )
        await group.reconnect("late")
        await eventually(lambda: group.members["late"].status == "ready", timeout=20)
        assert group.members["late"].error is None
        assert group.members["late"].failures == 0
        assert "failed" in seen
        assert seen[-1] == "ready"
        assert float((await group.call_tool("late.add", {"a": 2, "b": 3})).text) == 5
    finally:
        await group.aclose()


async def test_tool_names_all_spellings(no_leaked_processes):
    async with ClientGroup({"demo": demo_server(), "my_demo": demo_server()}) as group:
        assert group.resolve("demo.add") == ("demo", "add")
        assert group.resolve("my_demo.add") == ("my_demo", "add")
        await group.list_tools()
        # fastmcp's spelling: SERVER_TOOL, matched against the tool lists (the longest server wins).
        assert group.resolve("my_demo_add") == ("my_demo", "add")
        assert group.resolve("demo_sales_records") == ("demo", "sales_records")
        with raises_mcp("invalid", match="several servers offer"):
            group.resolve("add")
        with raises_mcp("invalid", match="no tool 'nope' .*name tools SERVER.TOOL"):
            group.resolve("nope")
        with raises_mcp("invalid", match="did you mean 'demo.sales_records' or 'my_demo.sales_records'"):
            group.resolve("sales_record")
        with raises_mcp("invalid", match="no tool 'sales_record'; did you mean 'sales_records'"):
            await group.call_tool("demo.sales_record")
        assert float((await group.call_tool("my_demo_add", {"a": 1, "b": 1})).text) == 2
        names = {t.name for t in group.cached_tools}
        assert {"demo.add", "my_demo.add"} <= names


async def test_bad_names_and_members():
    with pytest.raises(ValueError, match="server name"):
        ClientGroup({"two words": ["x"]})
    group = ClientGroup({"a": ["x"]})
    with pytest.raises(KeyError, match="servers: a"):
        group.member("b")
    with raises_mcp("transport", match="not connected"):
        group["a"]
    assert "a" in group
    assert list(group) == ["a"]
    assert len(group) == 1


async def test_a_given_client_is_used_and_not_retried(no_leaked_processes):
    client = Client(demo_server())
    async with ClientGroup({"demo": client}) as group:
        assert group["demo"] is client
        assert client.status == "ready"
    assert client.status == "closed"


async def test_a_bad_config_entry_is_a_member_that_shows_its_error(no_leaked_processes):
    demo = demo_server()
    config = {
        "mcpServers": {
            "demo": {"command": demo[0], "args": demo[1:]},
            "bad": {"url": "ftp://example.invalid/mcp"},
        }
    }
    async with ClientGroup.from_config(config) as group:
        assert group.statuses == {"demo": "ready", "bad": "closed"}
        message = group.members["bad"].error_message or ""
        assert "bad" in message
        assert "url" in message
        with raises_mcp("invalid", match="config error"):
            await group.reconnect("bad")
        assert group.summary()[1]["last_error"] == message


GATED_DEMO = """
import os, runpy, sys
if os.path.exists(sys.argv[1]):
    sys.exit("the gate is closed")
sys.argv = ["demo"]
runpy.run_module("mcp_notebook.demo", run_name="__main__")
"""


async def test_a_server_given_up_on_starts_over_when_reconnected(tmp_path, no_leaked_processes):
    import os
    import signal

    script, gate = tmp_path / "gated.py", tmp_path / "closed"
    script.write_text(GATED_DEMO)
    options = {"backoff_initial": 0.05, "backoff_max": 0.1, "max_reconnect_attempts": 1}
    async with ClientGroup({"gated": [sys.executable, str(script), str(gate)]}, **options) as group:
        first = group["gated"]
        assert first.status == "ready"
        gate.touch()  # the server dies and cannot come back: the client gives up
        pid = first._transport.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        await eventually(lambda: group.members["gated"].status == "gave up", timeout=15)
        assert "gate is closed" in (group.members["gated"].error_message or "")
        with raises_mcp("closed"):
            await first.call_tool("add", {"a": 1, "b": 1})
        gate.unlink()
        await group.reconnect("gated")
        await eventually(lambda: group.members["gated"].status == "ready", timeout=20)
        second = group["gated"]
        assert second is not first
        assert first.status == "closed"
        assert float((await group.call_tool("gated.add", {"a": 1, "b": 1})).text) == 2
