"""The notebook layer's :class:`Session` in plain Python (no kernel): blocking and async twins on the
engine thread, the traitlets model kept fresh by the engine, history, closing, naming servers in
``mcp.json``, Ctrl-C, calls from the engine thread, and HTML that never runs what a server sent."""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest

pytest.importorskip("traitlets")

import mcp_notebook
from mcp_notebook import McpError
from mcp_notebook.notebook import Session, SessionModel

from .conftest import demo_server

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

DEMO = demo_server()


def _connect(**options: Any) -> Session:
    options.setdefault("show_progress", False)
    return mcp_notebook.connect(DEMO, **options)


def _wait_for(predicate: Callable[[], Any], timeout: float, what: str) -> float:
    """Poll until ``predicate()`` is true; return how long it took."""
    started = time.monotonic()
    while not predicate():
        if time.monotonic() - started > timeout:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(0.01)
    return time.monotonic() - started


@pytest.fixture
def session() -> Any:
    opened = _connect()
    try:
        yield opened
    finally:
        opened.close()


# --- connecting ---------------------------------------------------------------------------------


def test_connect_returns_a_ready_session_with_its_lists(session: Session) -> None:
    model = session.model
    assert isinstance(model, SessionModel)
    assert session.status == model.status == "ready"
    assert model.server_info["name"] == "mcp-notebook-demo"
    assert session.name == "mcp-notebook-demo"
    assert model.era in ("modern", "legacy")
    assert model.protocol_version
    assert "tools" in model.capabilities
    assert model.instructions
    assert "demo server" in model.instructions
    assert {"add", "echo", "slow_count", "add_tool", "set_note"} <= {t.name for t in model.tools}
    assert {"demo://readme", "demo://note"} <= {r.uri for r in model.resources}
    assert {"demo://region/{name}"} <= {t.uri_template for t in model.resource_templates}
    assert {"analyze_region", "greeting"} <= {p.name for p in model.prompts}
    assert model.updated_at > 0
    assert model.in_flight == 0
    assert "ready" in repr(session)
    result = session.call_tool("add", {"a": 1, "b": 2})
    assert result.structured_content == {"result": 3.0}


def test_connect_by_name_from_mcp_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = {"mcpServers": {"demo": {"command": sys.executable, "args": ["-m", "mcp_notebook.demo"]}}}
    (tmp_path / "mcp.json").write_text(json.dumps(config))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-user-config"))
    with mcp_notebook.connect("demo", show_progress=False) as named:
        assert named.name == "demo"
        assert named.status == "ready"
        assert named.model.server_info["name"] == "mcp-notebook-demo"
        assert named.call_tool("echo", {"text": "hi"}).text == "hi"
    assert named.status == "closed"


def test_connect_by_name_to_an_http_server_from_mcp_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.http_peers import fault_http

    token = "mcp-json-token-3f9a"
    with fault_http() as server:
        server.set(unauthorized=True, token=token)
        headers = {"Authorization": "Bearer ${env:REMOTE_TOKEN}"}
        config = {"mcpServers": {"remote": {"url": server.url, "headers": headers}}}
        (tmp_path / "mcp.json").write_text(json.dumps(config))
        monkeypatch.chdir(tmp_path)
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-user-config"))
        with pytest.raises(ValueError, match="REMOTE_TOKEN"):
            mcp_notebook.connect("remote")
        monkeypatch.setenv("REMOTE_TOKEN", token)
        with mcp_notebook.connect("remote", show_progress=False) as remote:
            assert remote.name == "remote"
            assert remote.call_tool("echo", {"text": "over http"}).text == "over http"
            assert token not in repr(remote) + remote._repr_html_()


def test_unknown_server_name_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = {"mcpServers": {"demo": {"command": sys.executable}, "other": {"command": "x"}}}
    (tmp_path / "mcp.json").write_text(json.dumps(config))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-user-config"))
    with pytest.raises(ValueError, match="no-such-server") as caught:
        mcp_notebook.connect("no-such-server")
    message = str(caught.value)
    assert "mcp.json" in message
    assert "demo" in message
    assert "other" in message


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["/nonexistent/server-command"], ["'/nonexistent/server-command' was not found"]),
        # Its pipes close as it exits, and the exit status and the stderr bytes arrive by other
        # routes: under load the first write used to fail before the exit was seen, and the user
        # read "the server closed its stdout" with neither the code nor the stderr.
        (
            [sys.executable, "-c", "import sys; sys.stderr.write('no config file\\n'); sys.exit(3)"],
            ["exited with code 3", "its last stderr lines:\n  no config file"],
        ),
    ],
    ids=["missing", "exits"],
)
def test_a_server_that_cannot_start_raises_a_clear_error(argv: list[str], expected: list[str]) -> None:
    with pytest.raises(McpError) as caught:
        mcp_notebook.connect(argv)
    assert caught.value.kind == "transport"
    for part in expected:
        assert part in str(caught.value)
    assert "closed its stdout" not in str(caught.value)


def test_two_sessions_at_once() -> None:
    first, second = _connect(), _connect()
    try:
        pids = {first.client._transport.pid, second.client._transport.pid}  # type: ignore[attr-defined]
        assert len(pids) == 2
        assert None not in pids
        results: dict[str, Any] = {}

        def use(label: str, opened: Session) -> None:
            results[label] = opened.call_tool("slow_count", {"steps": 4, "delay": 0.15}).text

        threads = [threading.Thread(target=use, args=(k, s)) for k, s in (("a", first), ("b", second))]
        for thread in threads:
            thread.start()
        # Both calls (0.6 s each) in flight at the same moment: they run at once, not one after
        # the other (seen in the models, not timed: a loaded machine stretches any duration).
        both = lambda: first.model.in_flight >= 1 and second.model.in_flight >= 1  # noqa: E731
        _wait_for(both, 15, "both calls in flight at once")
        for thread in threads:
            thread.join(15)
        assert set(results) == {"a", "b"}
        assert all("Counted to 4" in text for text in results.values())
        first.call_tool("add_tool", {"name": "only_in_first"})
        _wait_for(lambda: "only_in_first" in {t.name for t in first.model.tools}, 3, "first's tools")
        assert "only_in_first" not in {t.name for t in second.model.tools}
        first.close()
        assert second.call_tool("add", {"a": 2, "b": 2}).structured_content == {"result": 4.0}
    finally:
        first.close()
        second.close()
    assert first.status == second.status == "closed"


# --- the model follows the server without being asked ------------------------------------------


def test_model_follows_tool_changes_without_being_asked(session: Session) -> None:
    changes: list[tuple[float, str, bool]] = []
    session.model.observe(
        lambda change: changes.append(
            (time.time(), change["name"], threading.current_thread() is threading.main_thread())
        ),
        names=["tools", "notifications"],
    )
    # Lists are re-fetched at most once a second (LiveState's min_refresh_interval), and a fetch
    # happens just after connecting (the listen stream's acknowledgement): the first change right
    # after connecting may wait up to that second.
    called = time.time()
    session.call_tool("add_tool", {"name": "first_new"})
    # (The waits bound, they time nothing: a loaded CI machine ran out of a 1 s and a 5 s one.)
    _wait_for(lambda: "first_new" in {t.name for t in session.model.tools}, 15, "model.tools")
    time.sleep(1.05)  # past the rate limit
    called = time.time()
    before = session.model.updated_at
    session.call_tool("add_tool", {"name": "second_new"})
    _wait_for(lambda: "second_new" in {t.name for t in session.model.tools}, 15, "model.tools")
    assert session.model.updated_at > before
    # the observers of an engine-made change run on the observer thread, just after it
    _wait_for(lambda: [t for t, name, _ in changes if name == "tools" and t >= called], 15, "observer")
    assert not any(on_main for _, _, on_main in changes), "the model changed on the caller's thread"
    assert any(
        n["method"] == "notifications/tools/list_changed" and n["time"] >= called
        for n in session.model.notifications
    )


def test_resource_updates_reach_the_model(session: Session) -> None:
    session.subscribe("demo://note")
    before = len(session.model.notifications)
    session.call_tool("set_note", {"text": "changed"})
    _wait_for(
        lambda: any(
            n["method"] == "notifications/resources/updated" and n["params"].get("uri") == "demo://note"
            for n in session.model.notifications[before:]
        ),
        2.0,
        "resources/updated in model.notifications",
    )
    assert session.read_resource("demo://note").text == "changed"
    entry = session.model.notifications[-1]
    assert set(entry) >= {"time", "method", "params"}


def test_an_observer_that_raises_is_logged_and_harmless(
    session: Session, caplog: pytest.LogCaptureFixture
) -> None:
    calls: list[str] = []

    def broken(change: Any) -> None:
        calls.append("broken")
        raise ValueError("a widget bug")

    def fine(change: Any) -> None:
        calls.append("fine")

    session.model.observe(broken, names="history")
    session.model.observe(fine, names="history")
    with caplog.at_level(logging.ERROR, logger="mcp_notebook.notebook"):
        assert session.call_tool("add", {"a": 1, "b": 1}).structured_content == {"result": 2.0}
        assert session.call_tool("add", {"a": 2, "b": 2}).structured_content == {"result": 4.0}
        # (two calls' changes may be told as one: the model coalesces them under load)
        _wait_for(lambda: "fine" in calls and len(session.model.history) == 2, 15, "the observers")
    logged = [r for r in caplog.records if r.name == "mcp_notebook.notebook" and r.exc_info]
    assert logged, caplog.records
    assert "a widget bug" in str(logged[0].exc_info[1])  # type: ignore[index]
    assert session.status == "ready"
    assert len(session.model.history) == 2

    session.model.unobserve(broken, names="history")
    told = len(calls)
    session.call_tool("echo", {"text": "x"})
    _wait_for(lambda: len(calls) > told, 15, "the observer")
    assert "broken" not in calls[told:]  # unobserved: the others still hear


# --- history ------------------------------------------------------------------------------------


def test_history_records_every_call(session: Session) -> None:
    session.call_tool("add", {"a": 1, "b": 2})
    session.call_tool("fail", {"message": "nope"})
    session.read_resource("demo://readme")
    session.get_prompt("greeting", {"name": "Ada"})
    with pytest.raises(McpError):
        session.call_tool("add", {"a": "not a number"})
    history = session.model.history
    assert [(e["method"], e["name"]) for e in history[:4]] == [
        ("tools/call", "add"),
        ("tools/call", "fail"),
        ("resources/read", "demo://readme"),
        ("prompts/get", "greeting"),
    ]
    add, fail, read, prompt = history[:4]
    assert add["arguments"] == {"a": 1, "b": 2}
    assert add["outcome"] == "ok"
    assert isinstance(add["result_size"], int)
    assert add["result_size"] > 0
    assert 0 <= add["duration"] < 5
    assert abs(add["time"] - time.time()) < 30
    assert fail["outcome"] == "tool_error"
    assert read["outcome"] == "ok"
    assert read["result_size"] > 0
    assert prompt["arguments"] == {"name": "Ada"}
    assert len(history) == 5  # arguments rejected before sending are still a call, one that failed
    assert history[4]["outcome"] == "invalid"
    assert history[4]["result_size"] is None


def test_redact_arguments_hides_them() -> None:
    with _connect(redact_arguments=True) as redacted:
        redacted.call_tool("echo", {"text": "secret-token-123"})
        redacted.get_prompt("greeting", {"name": "secret-name"})
        history = redacted.model.history
        assert [e["arguments"] for e in history] == ["<redacted>", "<redacted>"]
        assert "secret" not in json.dumps(history, default=str)
        assert history[0]["name"] == "echo"
        assert history[0]["outcome"] == "ok"


# --- closing ------------------------------------------------------------------------------------


def test_close_is_idempotent_and_later_calls_raise_closed() -> None:
    opened = _connect()
    pid = opened.client._transport.pid  # type: ignore[attr-defined]
    server = psutil.Process(pid)
    opened.close()
    opened.close()
    assert opened.status == "closed"
    assert opened.model.status == "closed"
    assert not server.is_running() or server.status() == psutil.STATUS_ZOMBIE
    with pytest.raises(McpError) as caught:
        opened.call_tool("add", {"a": 1, "b": 2})
    assert caught.value.kind == "closed"
    with pytest.raises(McpError) as caught:
        opened.list_tools()
    assert caught.value.kind == "closed"
    with pytest.raises(McpError) as caught:
        asyncio.run(opened.acall_tool("add", {"a": 1, "b": 2}))
    assert caught.value.kind == "closed"
    asyncio.run(opened.aclose())  # the async twin is idempotent too
    assert "closed" in opened._repr_html_()


def test_aclose_from_another_event_loop() -> None:
    opened = _connect()

    async def use_and_close() -> Any:
        result = await opened.acall_tool("add", {"a": 5, "b": 5})
        await opened.aclose()
        return result

    assert asyncio.run(use_and_close()).structured_content == {"result": 10.0}
    assert opened.status == "closed"
    opened.close()


def test_close_while_a_call_is_in_flight_ends_that_call() -> None:
    opened = _connect()
    outcome: list[BaseException | Any] = []

    def blocked() -> None:
        try:
            outcome.append(opened.call_tool("slow_count", {"steps": 100, "delay": 0.1}))
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=blocked)
    thread.start()
    _wait_for(lambda: opened.model.in_flight >= 1, 5, "the call to start")
    began = time.monotonic()
    opened.close()
    thread.join(10)
    assert not thread.is_alive(), "a call in flight still blocks after close()"
    assert time.monotonic() - began < 5
    assert len(outcome) == 1, outcome
    assert isinstance(outcome[0], McpError), outcome
    assert outcome[0].kind == "closed"


# --- threads, Ctrl-C and the engine thread ------------------------------------------------------


def test_widget_callback_on_another_thread_while_a_cell_is_blocked(session: Session) -> None:
    """A widget callback (another thread) uses the session while the "cell" waits on a slow call."""
    marks: dict[str, float] = {}

    def callback() -> None:
        _wait_for(lambda: session.model.in_flight >= 1, 5, "the slow call to start")
        marks["callback_started"] = time.monotonic()
        marks["callback_result"] = session.call_tool("add", {"a": 20, "b": 22}).structured_content["result"]
        marks["callback_done"] = time.monotonic()

    thread = threading.Thread(target=callback)
    marks["cell_started"] = time.monotonic()
    thread.start()
    result = session.call_tool("slow_count", {"steps": 10, "delay": 0.1})
    marks["cell_done"] = time.monotonic()
    thread.join(5)
    assert "Counted to 10" in result.text
    assert marks["callback_result"] == 42
    assert marks["cell_started"] < marks["callback_started"] < marks["callback_done"] < marks["cell_done"]
    assert marks["callback_done"] - marks["callback_started"] < 0.5
    assert marks["cell_done"] - marks["callback_done"] > 0.3  # the slow call was still running
    assert [e["name"] for e in session.model.history] == ["add", "slow_count"]


@pytest.mark.usefixtures("default_sigint")
def test_ctrl_c_while_blocked_cancels_the_call_on_the_engine(session: Session) -> None:
    """SIGINT to the main thread (what Ctrl-C and a kernel interrupt do) cancels the request."""
    if not hasattr(signal, "pthread_kill"):
        pytest.skip("needs signal.pthread_kill")
    main = threading.main_thread().ident
    assert main == threading.get_ident()

    def interrupt() -> None:
        _wait_for(lambda: session.model.in_flight >= 1, 5, "the slow call to start")
        time.sleep(0.2)
        signal.pthread_kill(main, signal.SIGINT)  # type: ignore[arg-type]

    thread = threading.Thread(target=interrupt)
    thread.start()
    began = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        session.call_tool("slow_count", {"steps": 100, "delay": 0.1})
    waited = time.monotonic() - began
    thread.join(5)
    assert waited < 5
    _wait_for(lambda: session.model.history, 3, "the cancelled call in the history")
    entry = session.model.history[-1]
    assert (entry["name"], entry["outcome"]) == ("slow_count", "cancelled")
    _wait_for(lambda: session.client.stats.in_flight == 0, 3, "no request in flight")
    assert session.call_tool("add", {"a": 1, "b": 1}).structured_content == {"result": 2.0}


def test_cancelling_an_awaited_call_cancels_it_on_the_engine(session: Session) -> None:
    async def cancel_soon() -> None:
        task = asyncio.ensure_future(session.acall_tool("slow_count", {"steps": 100, "delay": 0.1}))
        await asyncio.sleep(0.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    began = time.monotonic()
    asyncio.run(cancel_soon())
    assert time.monotonic() - began < 3
    _wait_for(lambda: session.model.history, 3, "the cancelled call in the history")
    assert session.model.history[-1]["outcome"] == "cancelled"
    _wait_for(lambda: session.client.stats.in_flight == 0, 3, "no request in flight")
    assert session.ping() >= 0


def test_blocking_call_from_the_engine_thread_points_to_the_async_twin(session: Session) -> None:
    caught: list[BaseException] = []

    async def on_the_engine() -> None:  # where handlers run (observers no longer do: see below)
        try:
            session.call_tool("echo", {"text": "from the engine"})
        except BaseException as exc:
            caught.append(exc)

    session._engine.call(on_the_engine)
    assert caught, "the blocking call on the engine thread did not raise"
    error = caught[0]
    assert isinstance(error, RuntimeError), repr(error)
    assert "engine thread" in str(error)
    assert "acall_tool" in str(error)
    assert session.call_tool("add", {"a": 2, "b": 2}).structured_content == {"result": 4.0}


def test_an_observer_may_make_a_blocking_call(session: Session) -> None:
    """Observers of engine-made changes run on the observer thread (issue #28), not the engine's:
    a blocking call from one answers, and neither it nor the call that fired it deadlocks."""
    answers: list[Any] = []

    def observer(change: Any) -> None:
        if change.new and change.new[-1]["name"] == "add":
            answers.append(session.call_tool("echo", {"text": "from an observer"}).text)

    session.model.observe(observer, names="history")
    done: list[Any] = []
    worker = threading.Thread(target=lambda: done.append(session.call_tool("add", {"a": 1, "b": 1})))
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "a blocking call from an observer deadlocked the engine"
    assert done[0].structured_content == {"result": 2.0}
    _wait_for(lambda: answers, 10, "the observer's call")
    session.model.unobserve(observer, names="history")
    assert answers == ["from an observer"]


def test_close_from_an_observer_closes_the_session(session: Session) -> None:
    """close() from an observer really closes: the server stops, nothing is left half-closed.

    (Observed before observers left the engine thread: its close() raised only after setting
    ``_closed`` and cancelling the notification follower, so the server kept running.)
    """
    server = psutil.Process(session.client._transport.pid)  # type: ignore[attr-defined]
    caught: list[BaseException] = []

    def observer(change: Any) -> None:
        try:
            session.close()
        except BaseException as exc:
            caught.append(exc)

    session.model.observe(observer, names="history")
    try:
        session.call_tool("add", {"a": 1, "b": 1})
        _wait_for(lambda: session.status == "closed", 10, "the observer's close()")
        session.model.unobserve(observer, names="history")
        assert not caught, caught
        assert session.model.status == "closed"
        server.wait(3)
        session.close()  # again, from the main thread: a no-op
    finally:
        session._engine.call(session.client.aclose)  # stop the server even while a bug is there


class _Widget:
    def __init__(self) -> None:
        self.seen: list[Any] = []

    def on_change(self, change: Any) -> None:
        self.seen.append(change["new"])


def test_model_unobserve_accepts_a_bound_method() -> None:
    """Widgets observe with bound methods (``model.observe(self._on_change)``) and unobserve the same way.

    Each ``widget.on_change`` access makes a new bound-method object, so the wrapper, looked up by
    ``id(handler)``, is not found: unobserve raises ValueError and the observer stays registered.
    """
    model = SessionModel()
    widget = _Widget()
    model.observe(widget.on_change, names="status")
    model.status = "ready"
    model.unobserve(widget.on_change, names="status")
    model.status = "closed"
    assert widget.seen == ["ready"]


def test_model_observing_the_same_bound_method_twice_calls_it_once() -> None:
    """As plain traitlets does: observe() of a handler already observing the same names is a no-op."""
    model = SessionModel()
    widget = _Widget()
    model.observe(widget.on_change, names="status")
    model.observe(widget.on_change, names="status")
    model.status = "ready"
    assert widget.seen == ["ready"]


# --- rendering and progress ---------------------------------------------------------------------

HOSTILE_NAME = "<img src=x onerror=alert(1)>"
HOSTILE_TEXT = "<script>alert(1)</script>"


def _hostile_server() -> Any:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer(HOSTILE_NAME, version="<svg onload=alert(2)>", instructions=HOSTILE_TEXT)

    @server.tool(description=HOSTILE_TEXT)
    def harmless(text: str) -> str:
        return text

    @server.prompt(description=HOSTILE_TEXT)
    def greet(name: str) -> str:
        return f"Hello {name}"

    return server


def test_repr_html_escapes_what_a_hostile_server_sent() -> None:
    with mcp_notebook.connect(_hostile_server(), show_progress=False) as hostile:
        assert hostile.model.server_info["name"] == HOSTILE_NAME
        assert [t.description for t in hostile.model.tools] == [HOSTILE_TEXT]
        hostile.call_tool("harmless", {"text": HOSTILE_TEXT})
        page = hostile._repr_html_()
        assert "&lt;img src=x onerror=alert(1)&gt;" in page  # shown, as text
        lowered = page.lower()
        for raw in ("<script", "<img", "<svg"):
            assert raw not in lowered, f"{raw} in {page}"


def test_progress_bar_does_not_break_a_call(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("tqdm")
    with _connect(show_progress=True) as shown:
        result = shown.call_tool("slow_count", {"steps": 5, "delay": 0.05})
        assert "Counted to 5" in result.text
        reported: list[float] = []
        result = shown.call_tool(
            "slow_count", {"steps": 3, "delay": 0.01}, progress=lambda p, t, m: reported.append(p)
        )
        assert "Counted to 3" in result.text
        assert reported == [1, 2, 3]
    err = capsys.readouterr().err
    assert "slow_count" in err  # tqdm's bar, outside a notebook, on stderr


# --- interpreter exit ---------------------------------------------------------------------------

EXIT_SCRIPT = """
import json, sys, threading, time
import mcp_notebook
from mcp_notebook import McpError
sessions = [mcp_notebook.connect(ARGV, show_progress=False) for _ in range(3)]
def busy():
    try:
        sessions[0].call_tool("slow_count", {"steps": 100, "delay": 0.1})
    except McpError as exc:
        print(json.dumps({"busy_call": exc.kind}), flush=True)
threading.Thread(target=busy, daemon=True).start()
while sessions[0].model.in_flight < 1:
    time.sleep(0.01)
print(json.dumps({"pids": [s.client._transport.pid for s in sessions], "exiting": time.time()}), flush=True)
"""


def test_open_sessions_are_closed_quickly_at_interpreter_exit(tmp_path: Path) -> None:
    """A script (or kernel) that ends with sessions open stops every server, all at once, fast."""
    import subprocess

    script = tmp_path / "exit_with_open_sessions.py"
    script.write_text(EXIT_SCRIPT.replace("ARGV", repr(DEMO)))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    ended = time.time()
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    report = next(line for line in lines if "pids" in line)
    assert ended - report["exiting"] < 2.0, f"exit took {ended - report['exiting']:.2f} s"
    alive = [pid for pid in report["pids"] if psutil.pid_exists(pid) and _not_zombie(pid)]
    assert not alive, f"servers outlived the interpreter: {alive}"
    for bad in ("Traceback", "cancel scope", "Task exception"):
        assert bad not in done.stderr, done.stderr


def _not_zombie(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
