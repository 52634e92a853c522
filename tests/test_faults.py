"""Fault injection over stdio: servers that misbehave, and a client that must stay healthy.

Every fault must end in a clear ``McpError`` of the right kind within its deadline, leave the
client usable (restarting the server where needed), never hang, and leave no process behind.
The misbehaving server is ``tests/servers/bad_server.py`` (stdlib only, legacy handshake).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import textwrap
import threading
import time
from pathlib import Path

import anyio
import psutil
import pytest

from mcp_notebook import Client, McpError
from tests.raises import raises_mcp

from .conftest import PYTHON, python_server
from .timing import VIRTUAL_SLOP, scheduling_noise

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

CRASH_LINE = "bad_server: FATAL: the flux capacitor melted (exit 3)"
STARTUP_LINE = "bad_server: cannot start: config file /etc/bad_server.toml is missing"
GARBAGE_PER_ANSWER = 6  # lines bad_server --garbage prints before every answer
MIB = 1024 * 1024


def bad(*args: str) -> list[str]:
    return python_server("bad_server.py", *args)


def read_log(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def tool_calls(log: list[dict], name: str | None = None) -> list[dict]:
    return [
        m for m in log if m.get("method") == "tools/call" and (name is None or m["params"]["name"] == name)
    ]


def read_pid(path: Path) -> int:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        text = path.read_text().strip() if path.exists() else ""
        if text:
            return int(text)
        time.sleep(0.02)
    raise AssertionError(f"{path} was never written")


def gone(pid: int) -> bool:
    """True when ``pid`` is not running (an unreaped zombie of someone else counts as gone)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if gone(pid):
            return True
        time.sleep(0.05)
    return gone(pid)


async def wait_until(predicate, timeout: float, what: str) -> None:
    """Poll ``predicate`` (counters and status have no event to wait on) until true or timeout."""
    deadline = anyio.current_time() + timeout
    while not predicate():
        if anyio.current_time() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await anyio.sleep(0.02)


class PeakRss:
    """The growth of this process's RSS over a block, sampled every few milliseconds in a thread."""

    def __init__(self) -> None:
        self._process = psutil.Process()
        self._stop = threading.Event()
        self.baseline = self.peak = self._process.memory_info().rss
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._process.memory_info().rss)
            self._stop.wait(0.005)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._process.memory_info().rss)

    @property
    def growth(self) -> int:
        return self.peak - self.baseline


async def expect_error(coro, kind: str) -> tuple[McpError, float]:
    start = time.monotonic()
    with pytest.raises(McpError) as info:
        await coro
    elapsed = time.monotonic() - start
    assert info.value.kind == kind, repr(info.value)
    return info.value, elapsed


# --- 1. garbage on stdout ----------------------------------------------------------------------


@pytest.mark.anyio
async def test_garbage_lines_between_messages_are_skipped_and_counted():
    async with Client(bad("--garbage", "--crlf"), timeout=10) as client:
        # discover (-32601) and initialize: two answers, each preceded by the garbage lines
        assert client.stats.malformed_frames == 2 * GARBAGE_PER_ANSWER
        tools = await client.list_tools()
        assert {t.name for t in tools} >= {"echo", "huge", "crash", "hang"}
        for n in range(3):
            assert (await client.call_tool("echo", {"n": n})).text == str(n)
        stats = client.stats
        assert stats.malformed_frames == 6 * GARBAGE_PER_ANSWER
        assert stats.oversized_frames == 0
        assert stats.late_responses == 0
        assert stats.reconnects == 0
        assert stats.timeouts == 0
        assert stats.in_flight == 0
        assert client.status == "ready"


@pytest.mark.anyio
async def test_skipped_line_is_logged_with_its_head(caplog):
    """The warning for a skipped line shows the start of that line, whatever made it unusable."""
    caplog.set_level(logging.WARNING, logger="mcp_notebook.connection")
    async with Client(bad("--garbage"), timeout=10) as client:
        assert client.stats.malformed_frames > 0
    messages = [r.getMessage() for r in caplog.records if "not JSON-RPC" in r.getMessage()]
    assert any("this is not json at all" in m for m in messages)  # a JSON parse error: head shown
    # A line that parses as JSON but is not JSON-RPC: the head should be shown too.
    assert any("[1, 2, 3]" in m for m in messages), messages
    assert any("hello" in m for m in messages), messages


# --- 2. an answer larger than max_message_bytes ------------------------------------------------


@pytest.mark.anyio
async def test_oversized_answer_fails_fast_with_bounded_memory():
    async with Client(bad(), timeout=30) as client:
        await client.list_tools()
        with PeakRss() as rss:
            error, elapsed = await expect_error(client.call_tool("huge", {"mb": 50}), "transport")
        assert "max_message_bytes" in error.message
        assert "huge" in error.message
        assert elapsed < 5, f"took {elapsed:.1f}s: the answer should be refused as it streams in"
        assert rss.growth < 200 * MIB, f"RSS grew by {rss.growth / MIB:.0f} MiB"
        # the same connection still works
        assert (await client.call_tool("echo", {"n": 7})).text == "7"
        stats = client.stats
        assert stats.oversized_frames == 1
        assert stats.timeouts == 0
        assert stats.reconnects == 0
        assert stats.in_flight == 0


@pytest.mark.anyio
async def test_oversized_answer_memory_is_bounded_by_the_limit_not_the_answer():
    """A 200 MiB line with a 2 MiB limit: memory must not grow with the answer."""
    async with Client(bad(), timeout=30, max_message_bytes=2 * MIB) as client:
        await client.list_tools()
        with PeakRss() as rss:
            error, elapsed = await expect_error(client.call_tool("huge", {"mb": 200}), "transport")
        assert "max_message_bytes=2097152" in error.message
        assert elapsed < 10
        assert rss.growth < 32 * MIB, f"RSS grew by {rss.growth / MIB:.0f} MiB for a 2 MiB limit"
        assert (await client.call_tool("echo", {"n": 8})).text == "8"
        assert client.stats.oversized_frames == 1
        assert client.stats.reconnects == 0


@pytest.mark.anyio
async def test_oversized_answer_with_id_last_fails_fast():
    """The TypeScript SDK writes ``{"result": ..., "jsonrpc": "2.0", "id": N}``: the id comes last.

    The oversized answer must still fail its own request at once, not leave it to its deadline.
    """
    async with Client(bad("--id-last"), timeout=30) as client:
        await client.list_tools()
        error, elapsed = await expect_error(client.call_tool("huge", {"mb": 40}, timeout=4), "transport")
        assert "max_message_bytes" in error.message
        assert elapsed < 3
        assert (await client.call_tool("echo", {"n": 9})).text == "9"


@pytest.mark.anyio
async def test_large_answer_accepted_with_a_higher_limit():
    async with Client(bad(), timeout=30, max_message_bytes=64 * MIB) as client:
        await client.list_tools()
        result = await client.call_tool("huge", {"mb": 50})
        assert len(result.text) == 50 * MIB
        assert result.text[:3] == "xxx"
        del result
        assert (await client.call_tool("echo", {"n": 1})).text == "1"
        assert client.stats.oversized_frames == 0
        assert client.stats.malformed_frames == 0


# --- 3. the server exits mid-call --------------------------------------------------------------


@pytest.mark.anyio
async def test_server_exit_mid_call_reports_exit_code_and_stderr_then_restarts(tmp_path):
    pidfile = tmp_path / "pid"
    async with Client(bad("--pidfile", str(pidfile)), timeout=30) as client:
        await client.list_tools()
        first_pid = read_pid(pidfile)
        pidfile.unlink()
        error, elapsed = await expect_error(client.call_tool("crash", timeout=30), "transport")
        assert elapsed < 5
        assert "exited with code 3" in error.message
        assert CRASH_LINE in error.message
        assert "crash" in error.message  # names the call
        # the client restarts the server by itself
        await wait_until(lambda: client.stats.reconnects == 1 and client.status == "ready", 10, "restart")
        assert (await client.call_tool("echo", {"n": 3})).text == "3"
        second_pid = read_pid(pidfile)
        assert second_pid != first_pid
        assert wait_gone(first_pid, 2), "the crashed server was not reaped"
        stats = client.stats
        assert stats.reconnects == 1
        assert stats.timeouts == 0
        assert stats.in_flight == 0


@pytest.mark.anyio
async def test_call_right_after_server_exit_waits_for_the_restart():
    """A retry issued the moment a call failed because the server died must get the new server."""
    async with Client(bad(), timeout=10) as client:
        await client.list_tools()
        await expect_error(client.call_tool("crash"), "transport")
        result = await client.call_tool("echo", {"n": 4})  # within its 10 s: the new server answered
        assert result.text == "4"
        assert client.stats.reconnects == 1


# --- 4. a call that is never answered ----------------------------------------------------------


@pytest.mark.anyio
async def test_unanswered_call_times_out_and_is_cancelled_on_the_server(tmp_path):
    log = tmp_path / "log.jsonl"
    async with Client(bad("--log", str(log)), timeout=10) as client:
        await client.list_tools()
        # on time: by the deadline plus the scheduling noise measured meanwhile (tests/timing.py)
        async with scheduling_noise() as noise:
            error, elapsed = await expect_error(client.call_tool("hang", timeout=0.5), "timeout")
        assert 0.5 - VIRTUAL_SLOP <= elapsed <= 0.5 + noise.allowance(), (elapsed, noise.allowance())
        assert "hang" in error.message
        assert (await client.call_tool("echo", {"n": 5})).text == "5"
        received = read_log(log)
        (hang,) = tool_calls(received, "hang")
        cancels = [m for m in received if m.get("method") == "notifications/cancelled"]
        assert [c["params"]["requestId"] for c in cancels] == [hang["id"]]
        assert "id" not in cancels[0]
        stats = client.stats
        assert stats.timeouts == 1
        assert stats.reconnects == 0
        assert stats.in_flight == 0


@pytest.mark.anyio
async def test_answer_after_the_deadline_is_dropped_and_counted():
    async with Client(bad(), timeout=10) as client:
        await client.list_tools()
        await expect_error(client.call_tool("slow", {"seconds": 0.6}, timeout=0.2), "timeout")
        await wait_until(lambda: client.stats.late_responses == 1, 5, "the late answer")
        assert (await client.call_tool("echo", {"n": 6})).text == "6"
        stats = client.stats
        assert stats.late_responses == 1
        assert stats.timeouts == 1
        assert stats.in_flight == 0


# --- 5. answers to ids nobody asked for --------------------------------------------------------


@pytest.mark.anyio
async def test_answers_with_unknown_ids_are_dropped_and_counted():
    async with Client(bad("--stray-ids"), timeout=10) as client:
        await client.list_tools()
        assert (await client.call_tool("echo", {"n": 11})).text == "11"
        assert client.stats.late_responses == 3  # ids 99999 (result), 99998 (error), "not-a-request"
        assert (await client.call_tool("echo", {"n": 12})).text == "12"
        stats = client.stats
        assert stats.late_responses == 6
        assert stats.malformed_frames == 0
        assert stats.reconnects == 0
        assert stats.in_flight == 0


# --- 6. arguments that violate the inputSchema -------------------------------------------------


@pytest.mark.anyio
async def test_invalid_arguments_are_refused_before_sending(tmp_path):
    log = tmp_path / "log.jsonl"
    secret = "hunter2-do-not-show"
    async with Client(bad("--log", str(log)), timeout=10) as client:
        await client.list_tools()
        requests_before = client.stats.requests

        error, _ = await expect_error(client.call_tool("echo", {"n": secret}), "invalid")
        assert "'n'" in error.message or ".n" in error.message
        assert "integer" in error.message
        assert secret not in str(error)
        assert secret not in repr(error)

        error, _ = await expect_error(client.call_tool("echo", {"n": 1, "api_key": secret}), "invalid")
        assert "api_key" in error.message
        assert secret not in str(error)

        error, _ = await expect_error(client.call_tool("echo", {}), "invalid")
        assert "'n'" in error.message
        assert "required" in error.message

        assert client.stats.requests == requests_before  # nothing was sent
        assert tool_calls(read_log(log)) == []
        # a valid call still works, and is the only one the server ever saw
        assert (await client.call_tool("echo", {"n": 2})).text == "2"
        assert [m["params"]["arguments"] for m in tool_calls(read_log(log))] == [{"n": 2}]
        assert client.stats.reconnects == 0


# --- 6b. a result that breaks the tool's outputSchema --------------------------------------------


@pytest.mark.anyio
async def test_structured_content_that_breaks_the_output_schema_fails_the_call():
    async with Client(bad(), timeout=10) as client:
        good = await client.call_tool("report", {"shape": "good"})
        assert good.structured_content == {"count": 1, "rows": [{"price": 1.5}]}

        error, _ = await expect_error(client.call_tool("report", {"shape": "bad"}), "protocol")
        assert "'report'" in error.message
        assert "outputSchema" in error.message
        assert "structuredContent.count must be of type 'integer'" in error.message
        assert "structuredContent.rows[0].price must be of type 'number'" in error.message
        assert "cheap" not in str(error)  # paths and rules, not values
        assert "many" not in str(error)
        assert len(str(error)) < 1000

        error, _ = await expect_error(client.call_tool("report", {"shape": "missing"}), "protocol")
        assert "no structuredContent" in error.message

        # A tool's own error report is not held to the schema.
        assert (await client.call_tool("report", {"shape": "error"})).is_error
        # validate=False accepts whatever the server sent.
        unchecked = await client.call_tool("report", {"shape": "bad"}, validate=False)
        assert unchecked.structured_content["count"] == "many"
        assert client.stats.reconnects == 0


# --- 7. servers that cannot start --------------------------------------------------------------


@pytest.mark.anyio
async def test_missing_command_fails_connect_with_not_found():
    client = Client(["/nonexistent/definitely-not-an-mcp-server", "--flag"], timeout=5)
    error, elapsed = await expect_error(client.connect(), "transport")
    assert "not found" in error.message
    assert "definitely-not-an-mcp-server" in error.message
    assert elapsed < 5
    assert client.status == "closed"
    await client.aclose()  # idempotent after a failed connect
    with raises_mcp("closed"):
        await client.call_tool("echo", {"n": 1})


@pytest.mark.anyio
async def test_server_exiting_at_startup_quotes_its_stderr():
    client = Client(bad("--fail-startup"), timeout=5)
    start = time.monotonic()
    with pytest.raises(McpError) as info:
        async with client:
            pass
    elapsed = time.monotonic() - start
    assert info.value.kind == "transport", repr(info.value)
    assert "exited with code 2" in info.value.message
    assert STARTUP_LINE in info.value.message
    assert elapsed < 5
    assert client.status == "closed"
    assert STARTUP_LINE in client.stderr


# --- 8. a server that ignores EOF and SIGTERM --------------------------------------------------


@pytest.mark.anyio
async def test_stubborn_server_is_killed_on_close(tmp_path):
    pidfile = tmp_path / "pid"
    client = Client(bad("--stubborn", "--pidfile", str(pidfile)), timeout=10, shutdown_timeout=0.5)
    await client.connect()
    assert (await client.call_tool("echo", {"n": 1})).text == "1"
    pid = read_pid(pidfile)
    start = time.monotonic()
    await client.aclose()
    elapsed = time.monotonic() - start
    # stdin closed, 0.5s; SIGTERM (ignored), 2s grace; then SIGKILL
    assert elapsed < 5, f"aclose took {elapsed:.1f}s"
    assert gone(pid)
    assert client.status == "closed"


# --- 9. a server with a grandchild -------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("stubborn", [False, True], ids=["grandchild", "grandchild-ignoring-sigterm"])
async def test_grandchild_is_stopped_with_the_server(tmp_path, stubborn):
    grandchild_file = tmp_path / "grandchild"
    args = ["--grandchild", str(grandchild_file)] + (["--stubborn-grandchild"] if stubborn else [])
    client = Client(bad(*args), timeout=10)
    await client.connect()
    grandchild = read_pid(grandchild_file)
    try:
        assert not gone(grandchild)
        assert (await client.call_tool("echo", {"n": 1})).text == "1"
        await client.aclose()
        assert wait_gone(grandchild, 3), "the server's grandchild survived aclose()"
    finally:
        if not gone(grandchild):
            os.kill(grandchild, 9)


# --- 10. a client dropped without aclose -------------------------------------------------------

DROPPED = textwrap.dedent(
    """
    import asyncio, sys
    from mcp_notebook import Client

    async def main():
        client = Client(sys.argv[2:], timeout=10, shutdown_timeout=0.5)
        await client.connect()
        print("connected", (await client.call_tool("echo", {"n": 1})).text, flush=True)
        # no aclose(): the loop ends, the interpreter exits

    if sys.argv[1] == "asyncio.run":
        asyncio.run(main())
    elif sys.argv[1] == "trio.run":  # the client's system task is cancelled when main() returns
        import trio

        trio.run(main)
    else:  # a loop that is never closed: the client's task is never cancelled, only atexit remains
        asyncio.new_event_loop().run_until_complete(main())
    """
)


def run_dropped(
    tmp_path: Path, *server_args: str, runner: str = "asyncio.run"
) -> tuple[subprocess.CompletedProcess[str], int]:
    script = tmp_path / "dropped.py"
    script.write_text(DROPPED)
    pidfile = tmp_path / "pid"
    # This checkout's mcp_notebook, not whichever one is installed (the script is not in the repo).
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        [PYTHON, str(script), runner, *bad("--pidfile", str(pidfile), *server_args)],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
    )
    assert "connected 1" in done.stdout, done.stderr
    return done, read_pid(pidfile)


@pytest.mark.parametrize("runner", ["asyncio.run", "run_until_complete", "trio.run"])
@pytest.mark.parametrize("server_args", [(), ("--stubborn",)], ids=["plain", "stubborn"])
def test_dropped_client_does_not_orphan_its_server(tmp_path, server_args, runner):
    done, pid = run_dropped(tmp_path, *server_args, runner=runner)
    try:
        assert done.returncode == 0, done.stderr
        assert wait_gone(pid, 3), "the server outlived the interpreter of a client never closed"
    finally:
        if not gone(pid):
            os.kill(pid, 9)


@pytest.mark.parametrize("runner", ["asyncio.run", "trio.run"])
def test_dropped_client_exits_quietly(tmp_path, runner):
    """Interpreter exit with an open client is normal in scripts: no error log, no traceback."""
    done, pid = run_dropped(tmp_path, runner=runner)
    try:
        assert done.returncode == 0
        assert "Traceback" not in done.stderr, done.stderr
        assert "failed" not in done.stderr, done.stderr
    finally:
        if not wait_gone(pid, 3):
            os.kill(pid, 9)


# --- 11. a server that floods stderr -----------------------------------------------------------


@pytest.mark.anyio
async def test_stderr_flood_is_drained_and_bounded():
    async with Client(bad(), timeout=20) as client:
        await client.list_tools()
        start = time.monotonic()
        result = await client.call_tool("flood_stderr", {"mb": 10, "newlines": True})
        assert result.text.startswith("flooded ")
        # one 10 MB stderr line without a newline must not be kept whole either
        await client.call_tool("flood_stderr", {"mb": 10, "newlines": False})
        elapsed = time.monotonic() - start
        assert elapsed < 10, f"took {elapsed:.1f}s"
        await wait_until(lambda: "flood done" in client.stderr, 5, "the end of the stderr flood")
        lines = client.stderr
        assert 0 < len(lines) <= 200
        assert max(len(line) for line in lines) <= 8192
        assert sum(len(line) for line in lines) < 4 * MIB
        assert (await client.call_tool("echo", {"n": 13})).text == "13"
        stats = client.stats
        assert stats.reconnects == 0
        assert stats.timeouts == 0
        assert stats.malformed_frames == 0
