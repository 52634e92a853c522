"""Sessions inside a real Jupyter kernel: jupyter_client drives an ipykernel (no browser, no frontend).

The kernel is started from a kernelspec written to a temporary directory, so these tests need no
installed kernelspec: only ipykernel and jupyter_client in the running interpreter. The kernel runs
this checkout's ``mcp_notebook`` (``PYTHONPATH``), and its own stderr is kept in a file so errors
logged outside any cell (at interpreter exit, say) are seen too.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import pytest

from .conftest import demo_server, python_server, running, wait_gone
from .http_peers import everything_http, tasks_http
from .panel_comms import PANEL

pytest.importorskip("ipykernel")
pytest.importorskip("jupyter_client")

from jupyter_client import BlockingKernelClient, KernelManager
from jupyter_client.kernelspec import KernelSpecManager

ROOT = Path(__file__).resolve().parent.parent
KERNEL_NAME = "mcp-notebook-test-python"
DEMO = demo_server()
TASKS = python_server("tasks_server.py")
SHUTDOWN_WAIT = 5.0  # jupyter_client's default: SIGTERM after half of it (2.5 s), SIGKILL at the end
FORBIDDEN = ("cancel scope", "Traceback", "RuntimeError", "Task exception was never retrieved")


@dataclass
class Cell:
    status: str
    stdout: str = ""
    stderr: str = ""
    errors: list[dict[str, Any]] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)

    def json_line(self) -> Any:
        """The last stdout line that is a JSON document (what a cell printed for the test)."""
        for line in reversed(self.stdout.splitlines()):
            if line.startswith(("{", "[")):
                return json.loads(line)
        raise AssertionError(f"the cell printed no JSON line; stdout:\n{self.stdout}\nstderr:\n{self.stderr}")


@dataclass
class Kernel:
    manager: KernelManager
    client: BlockingKernelClient
    stderr_path: Path
    cells: list[Cell] = field(default_factory=list)

    @property
    def pid(self) -> int:
        return int(self.manager.provisioner.pid)  # type: ignore[union-attr]

    def run(self, code: str, timeout: float = 60, answers: list[str] | None = None) -> Cell:
        """Run ``code``; ``answers`` reply to its input requests (getpass, input) in turn, each
        request kept in ``cell.messages`` as ``input_request``."""
        cell = Cell(status="?")

        def hook(message: dict[str, Any]) -> None:
            kind = message["msg_type"]
            content = message["content"]
            cell.messages.append({"type": kind, "content": content})
            if kind == "stream":
                if content["name"] == "stdout":
                    cell.stdout += content["text"]
                else:
                    cell.stderr += content["text"]
            elif kind == "error":
                cell.errors.append(content)

        def stdin_hook(message: dict[str, Any]) -> None:
            cell.messages.append({"type": "input_request", "content": message["content"]})
            assert answers, f"the cell asked for input nobody gives: {message['content']}"
            self.client.input(answers.pop(0))

        reply = self.client.execute_interactive(
            code, output_hook=hook, timeout=timeout, allow_stdin=answers is not None, stdin_hook=stdin_hook
        )
        cell.status = reply["content"]["status"]
        self.cells.append(cell)
        return cell

    def run_ok(self, code: str, timeout: float = 60, answers: list[str] | None = None) -> Cell:
        cell = self.run(code, timeout, answers)
        assert cell.status == "ok", _describe(cell)
        assert not cell.errors, _describe(cell)
        _assert_clean(cell.stderr, "the cell's stderr")
        return cell

    def servers(self, marker: str = "mcp_notebook.demo") -> list[psutil.Process]:
        """The servers the kernel started whose command line has ``marker`` (by default: the demo)."""
        found = []
        for child in psutil.Process(self.pid).children(recursive=True):
            try:
                if any(marker in part for part in child.cmdline()):
                    found.append(child)
            except psutil.Error:
                continue
        return found

    def restart(self) -> None:
        """Restart the kernel as the notebook's Restart does: a shutdown request (the old kernel
        closes its sessions at exit), then a new kernel process on the same ports."""
        with self.stderr_path.open("a") as stderr:
            self.manager.restart_kernel(now=False, stderr=stderr)
        self.client.wait_for_ready(timeout=60)

    def kernel_stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def wait_for_output(self, message_id: str, text: str, timeout: float = 60) -> None:
        """Wait until the cell ``message_id`` prints ``text`` (its iopub stream; a hang guard only)."""
        while True:
            message = self.client.get_iopub_msg(timeout=timeout)
            if (
                message["parent_header"].get("msg_id") == message_id
                and message["msg_type"] == "stream"
                and text in message["content"]["text"]
            ):
                return

    def interrupt(self, message_id: str, timeout: float = 60) -> dict[str, Any]:
        """Interrupt the running cell ``message_id``; its execute_reply, once the kernel is idle.

        The kernel answers the interrupted cell, then stops aborting queued requests (an error
        makes ipykernel refuse what is queued behind it, "aborted"), then publishes idle for it:
        a cell sent before that idle may come back aborted, one sent after it runs.
        """
        self.manager.interrupt_kernel()
        reply = self.client.get_shell_msg(timeout=timeout)
        assert reply["parent_header"]["msg_id"] == message_id, reply
        while True:
            message = self.client.get_iopub_msg(timeout=timeout)
            if (
                message["parent_header"].get("msg_id") == message_id
                and message["msg_type"] == "status"
                and message["content"]["execution_state"] == "idle"
            ):
                return reply


def _describe(cell: Cell) -> str:
    tracebacks = "\n".join("\n".join(e.get("traceback", [])) for e in cell.errors)
    return f"status {cell.status}\nstdout:\n{cell.stdout}\nstderr:\n{cell.stderr}\nerrors:\n{tracebacks}"


def _assert_clean(text: str, where: str) -> None:
    for bad in FORBIDDEN:
        assert bad not in text, f"{where} contains {bad!r}:\n{text}"


@pytest.fixture
def kernel(tmp_path: Path, no_leaked_processes: None) -> Iterator[Kernel]:
    spec_dir = tmp_path / "kernels" / KERNEL_NAME
    spec_dir.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    spec = {"argv": argv, "display_name": "mcp-notebook tests", "language": "python"}
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    specs = KernelSpecManager(kernel_dirs=[str(tmp_path / "kernels")], ensure_native_kernel=False)
    # Unix sockets in this test's own directory, not TCP ports: jupyter_client picks a TCP port by
    # binding and releasing it before the kernel binds it, so two runs side by side once gave two
    # kernels the same port. A path nobody else uses cannot be taken meanwhile.
    ipc = tmp_path / "ipc"
    assert len(str(ipc)) < 90, f"{ipc} is too long for a unix socket path"
    manager = KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=specs, transport="ipc", ip=str(ipc))
    manager.shutdown_wait_time = SHUTDOWN_WAIT
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.pop("JPY_PARENT_PID", None)
    stderr_path = tmp_path / "kernel-stderr.txt"
    with stderr_path.open("w") as stderr:
        manager.start_kernel(env=env, cwd=str(tmp_path), stderr=stderr)
    client = manager.client()
    client.start_channels()
    started = Kernel(manager, client, stderr_path)
    try:
        client.wait_for_ready(timeout=60)
        yield started
    finally:
        client.stop_channels()
        if manager.has_kernel:
            leftovers = psutil.Process(started.pid).children(recursive=True) if manager.is_alive() else []
            manager.shutdown_kernel(now=True)
            for process in wait_gone(leftovers, 2.0):  # do not let one failure leak into others
                process.kill()


def test_cells_in_a_real_kernel(kernel: Kernel) -> None:
    """Connect, call, compute while the server talks, await, close; then exit with sessions open."""
    # Cell 1: connect.
    cell = kernel.run_ok(
        "import json, sys, threading, time\n"
        "import mcp_notebook\n"
        f"session = mcp_notebook.connect({DEMO!r})\n"
        "print(json.dumps({'status': session.model.status, "
        "'tools': [t.name for t in session.model.tools]}))\n"
    )
    first = cell.json_line()
    assert first["status"] == "ready"
    assert {"add", "slow_count", "add_tool"} <= set(first["tools"])
    servers = kernel.servers()
    assert len(servers) == 1, servers

    # Cell 2: call tools (blocking); the slow one shows a progress bar (one of our panels).
    cell = kernel.run_ok(
        "counted = session.call_tool('slow_count', {'steps': 3, 'delay': 0.02}).text\n"
        "print(json.dumps({'add': session.call_tool('add', {'a': 2, 'b': 3}).structured_content,\n"
        "                  'counted': counted}))\n"
    )
    second = cell.json_line()
    assert second["add"] == {"result": 5.0}
    assert second["counted"].startswith("Counted to 3")
    widgets = [
        m
        for m in cell.messages
        if m["type"] == "display_data" and "application/vnd.jupyter.widget-view+json" in m["content"]["data"]
    ]
    assert widgets, "no progress bar was displayed in the cell"
    opened = {
        m["content"]["comm_id"]: m["content"]["data"]["state"]
        for m in cell.messages
        if m["type"] == "comm_open"
    }
    shown = [
        opened.get(m["content"]["data"]["application/vnd.jupyter.widget-view+json"]["model_id"])
        for m in widgets
    ]
    assert any(state and state.get("_anywidget_id") == PANEL for state in shown), (
        "the bar is no panel of ours"
    )
    assert not any(s.get("_model_name") == "FloatProgressModel" for s in opened.values()), "tqdm's widgets"

    # Cell 3: the kernel's main thread sleeps; a widget-style callback on another thread makes the
    # server announce a new tool, and the engine updates the model while the cell is still busy.
    cell = kernel.run_ok(
        "changes = []\n"
        "def seen(change):\n"
        "    changes.append({'time': time.time(), 'name': change['name'],\n"
        "                    'main_thread': threading.current_thread() is threading.main_thread()})\n"
        "session.model.observe(seen, names=['tools', 'notifications'])\n"
        "def callback():\n"
        "    time.sleep(0.5)\n"
        "    session.call_tool('add_tool', {'name': 'during_sleep'})\n"
        "threading.Thread(target=callback, daemon=True).start()\n"
        "started = time.time()\n"
        "time.sleep(2)\n"
        "ended = time.time()\n"
        "print(json.dumps({'started': started, 'ended': ended, 'changes': list(changes),\n"
        "                  'tools': [t.name for t in session.model.tools]}))\n"
    )
    report = cell.json_line()
    started, ended = report["started"], report["ended"]
    assert ended - started >= 2.0
    inside = {c["name"] for c in report["changes"] if started < c["time"] < ended}
    assert {"tools", "notifications"} <= inside, report
    assert not any(c["main_thread"] for c in report["changes"]), "the model changed on the cell's thread"
    assert "during_sleep" in report["tools"], report

    # Cell 4: top-level await.
    cell = kernel.run_ok(
        "result = await session.acall_tool('add', {'a': 1, 'b': 2})\n"
        "print(json.dumps({'result': result.structured_content, 'history': len(session.model.history)}))\n"
    )
    fourth = cell.json_line()
    assert fourth["result"] == {"result": 3.0}
    assert fourth["history"] == 4  # slow_count, add, add_tool (from the thread), add

    # Cell 5: close; the server stops while the kernel runs on.
    cell = kernel.run_ok("session.close()\nprint(json.dumps({'status': session.model.status}))\n")
    assert cell.json_line() == {"status": "closed"}
    assert not wait_gone(servers, 3.0), "close() left its server running"
    assert kernel.manager.is_alive()
    assert kernel.run_ok("print(json.dumps([1 + 1]))").json_line() == [2]  # the kernel still works

    # Sessions still open when the kernel shuts down are closed at exit, all at once, fast enough
    # that jupyter_client never has to SIGTERM the kernel (it does so 2.5 s after the request).
    closed_log = kernel.stderr_path.with_name("closed-at-exit.txt")
    statuses = kernel.run_ok(
        # two names: one cell's connect() of one server is one session (issue #29)
        f"more = [mcp_notebook.connect({DEMO!r}, name=f'more{{i}}') for i in range(2)]\n"
        "def log_status(index):\n"
        "    def seen(change):\n"
        f"        with open({str(closed_log)!r}, 'a') as log:\n"
        "            log.write(f\"{index} {change['new']}\\n\")\n"
        "    return seen\n"
        "for index, opened in enumerate(more):\n"
        "    opened.model.observe(log_status(index), names='status')\n"
        "slow = {'steps': 100, 'delay': 0.1}\n"
        "busy = threading.Thread(target=lambda: more[1].call_tool('slow_count', slow), daemon=True)\n"
        "busy.start()\n"
        "time.sleep(0.3)\n"
        "print(json.dumps([s.model.status for s in more]))\n"
    ).json_line()
    assert statuses == ["ready", "ready"]
    open_servers = kernel.servers()
    assert len(open_servers) == 2, open_servers
    process = kernel.manager.provisioner.process  # type: ignore[union-attr]
    began = time.monotonic()
    kernel.manager.shutdown_kernel(now=False)
    took = time.monotonic() - began
    still = [p.pid for p in open_servers if running(p)]
    assert not still, f"servers still running after the kernel shut down: {still}"
    assert took < SHUTDOWN_WAIT / 2, f"the kernel took {took:.2f} s to shut down"
    status = getattr(kernel.manager, "_shutdown_status", None)
    if status is not None:  # jupyter_client >= 8: how far the shutdown had to escalate
        assert status.name == "ShutdownRequest", f"the kernel had to be stopped: {status}"
    assert process.returncode == 0, f"the kernel exited with {process.returncode}"
    # The sessions' own exit hook closed them (not only the transport's last-resort SIGTERM).
    assert set(closed_log.read_text().split("\n")) >= {"0 closed", "1 closed"}, closed_log.read_text()

    for index, ran in enumerate(kernel.cells, 1):
        for message in ran.messages:
            assert message["type"] != "error", f"cell {index}: {message}"
        _assert_clean(ran.stderr, f"cell {index}'s stderr")
    _assert_clean(kernel.kernel_stderr(), "the kernel's stderr")


def test_interrupting_a_blocked_cell_cancels_the_call(kernel: Kernel) -> None:
    """A kernel interrupt (the notebook's stop button) cancels the call; the session stays usable."""
    kernel.run_ok(
        "import json, time\n"
        "import mcp_notebook\n"
        f"session = mcp_notebook.connect({DEMO!r}, show_progress=False)\n"
    )
    (server,) = kernel.servers()
    message_id = kernel.client.execute(
        "def in_flight(progress, total, message):\n"
        "    if progress == 1:\n"
        "        print('in flight', flush=True)\n"
        "started = time.time()\n"
        "try:\n"
        "    session.call_tool('slow_count', {'steps': 100, 'delay': 0.1}, progress=in_flight)\n"
        "finally:\n"
        "    waited = time.time() - started\n"
    )
    kernel.wait_for_output(message_id, "in flight")  # the server is running the call: stop it now
    reply = kernel.interrupt(message_id)
    assert reply["content"]["status"] == "error"
    assert reply["content"]["ename"] == "KeyboardInterrupt"

    cell = kernel.run_ok(
        "deadline = time.time() + 60  # a hang guard: the cancelled call's entry comes at once\n"
        "while time.time() < deadline and not session.model.history:\n"
        "    time.sleep(0.02)\n"
        "entry = session.model.history[-1]\n"
        "print(json.dumps({'waited': waited, 'outcome': entry['outcome'], 'name': entry['name'],\n"
        "                  'in_flight': session.client.stats.in_flight,\n"
        "                  'add': session.call_tool('add', {'a': 1, 'b': 1}).structured_content}))\n"
    )
    report = cell.json_line()
    assert report["waited"] < 100 * 0.1, report  # it did not run to its end
    assert report["name"] == "slow_count"
    assert report["outcome"] == "cancelled", report
    assert report["add"] == {"result": 2.0}
    assert running(server), "the interrupt reached the server process"
    kernel.run_ok("session.close()")
    assert not wait_gone([server], 3.0)
    _assert_clean(kernel.kernel_stderr(), "the kernel's stderr")


def _control_request(kernel: Kernel, msg_type: str) -> str:
    """Send a control request as JupyterLab does while a cell runs (it creates a subshell for the
    first widget's comms); return its id once its reply is in."""
    message = kernel.client.session.msg(msg_type, {})
    kernel.client.control_channel.send(message)
    while True:
        reply = kernel.client.get_control_msg(timeout=10)
        if reply["parent_header"].get("msg_id") == message["header"]["msg_id"]:
            return str(message["header"]["msg_id"])


def test_the_kernel_stays_busy_while_a_cell_blocks_on_a_call(kernel: Kernel) -> None:
    """Issue #29 item 7: requests handled beside a blocked cell (JupyterLab's subshell requests on
    the control channel, a subshell's widget messages) publish their own Busy and Idle; the front
    end shows the last status it gets, so the cell's blocking call showed Idle after 0.5 s. The
    last status before the cell's own Idle must be Busy, and each side request still gets its Idle."""
    kernel.run_ok(
        f"import mcp_notebook\nsession = mcp_notebook.connect({DEMO!r})\n"
        "session.call_tool('echo', {'text': 'warm'})\n"
    )
    subshells = _supports_subshells(kernel)  # ipykernel 7: JupyterLab then opens one per widget target
    cell_id = kernel.client.execute(
        "print('calling', flush=True)\n"
        "counted = session.call_tool('slow_count', {'steps': 15, 'delay': 0.2}).text\n"
        "print(counted)\n"
    )
    statuses: list[tuple[str, str | None]] = []
    side: list[str] = []
    done = False
    while not done:
        message = kernel.client.get_iopub_msg(timeout=30)
        parent = message["parent_header"].get("msg_id")
        content = message["content"]
        if message["msg_type"] == "status":
            statuses.append((content["execution_state"], parent))
            done = parent == cell_id and content["execution_state"] == "idle"
        elif message["msg_type"] == "stream" and "calling" in content["text"] and not side:
            # the call has started: what JupyterLab sends meanwhile
            side.append(_control_request(kernel, "kernel_info_request"))
            if subshells:
                side.append(_control_request(kernel, "create_subshell_request"))
            with pytest.raises(queue.Empty):  # the cell is still running its call
                kernel.client.get_shell_msg(timeout=0)
    reply = kernel.client.get_shell_msg(timeout=10)
    assert reply["content"]["status"] == "ok", reply["content"]
    assert side, "the call finished before the test could send its side requests"
    for request in side:  # each side request was finished by its own Idle (the front end waits for it)
        assert ("idle", request) in statuses, statuses
    last_side_idle = max(i for i, (state, parent) in enumerate(statuses) if parent in side)
    assert statuses[-1] == ("idle", cell_id)
    assert ("busy", cell_id) in statuses[last_side_idle + 1 : -1], statuses  # Busy again, for the cell
    assert statuses[-2][0] == "busy", statuses  # what the front end shows while the call runs


def _supports_subshells(kernel: Kernel) -> bool:
    message = kernel.client.session.msg("kernel_info_request", {})
    kernel.client.control_channel.send(message)
    while True:
        reply = kernel.client.get_control_msg(timeout=10)
        if reply["parent_header"].get("msg_id") == message["header"]["msg_id"]:
            return "kernel subshells" in reply["content"].get("supported_features", [])


def _statuses(seen: list[list[list[str]]], task_id: str) -> list[str]:
    """The statuses a task's row had in each change of ``model.tasks`` the kernel recorded."""
    return [status for rows in seen for (tid, status) in rows if tid == task_id]


def test_tasks_in_a_real_kernel(kernel: Kernel) -> None:
    """The sync twins in cells: the model and the frame show a started task and follow it to its
    end, result() waits for it, cancel() stops one, and a task's request for input is answered by
    the elicitation= handler given to connect()."""
    first = kernel.run_ok(
        "import json\n"
        "import mcp_notebook\n"
        "asked = []\n"
        "def elicit(params):\n"
        "    asked.append(params.get('message'))\n"
        "    return {'name': 'Ada'}\n"
        f"s = mcp_notebook.connect({TASKS!r}, show_progress=False, elicitation=elicit)\n"
        "seen = []\n"
        "def on_tasks(change):\n"
        "    seen.append([[row['task_id'], row['status']] for row in change['new']])\n"
        "s.model.observe(on_tasks, names='tasks')\n"
        "t = s.start_tool('crunch', {'steps': 5, 'delay': 0.2})\n"
        "frame = s.tasks_frame()\n"
        "print(json.dumps({'module': mcp_notebook.__file__, 'id': t.task_id, 'repr': repr(t),\n"
        "                  'rows': [[r['task_id'], r['tool']] for r in s.model.tasks],\n"
        "                  'frame': frame[['task_id', 'tool']].astype(str).values.tolist()}))\n"
    ).json_line()
    assert Path(first["module"]).resolve().is_relative_to(ROOT), first["module"]  # this checkout's
    task_id = first["id"]
    assert task_id in first["repr"]
    assert first["rows"] == [[task_id, "crunch"]]
    assert first["frame"] == [[task_id, "crunch"]]
    (server,) = kernel.servers("tasks_server.py")

    second = kernel.run_ok(
        "result = t.result()\n"
        "frame = s.tasks_frame().set_index('task_id')\n"
        "row = next(r for r in s.model.tasks if r['task_id'] == t.task_id)\n"
        "print(json.dumps({'result': result.structured_content, 'status': t.status, 'done': t.done,\n"
        "                  'frame_status': str(frame.loc[t.task_id, 'status']),\n"
        "                  'frame_ended': str(frame.loc[t.task_id, 'ended']),\n"
        "                  'row': [row['status'], row['done'], row['result'].structured_content],\n"
        "                  'seen': seen}))\n"
    ).json_line()
    assert second["result"] == {"steps": 5}
    assert (second["status"], second["done"]) == ("completed", True)
    assert second["frame_status"] == "completed"
    assert second["frame_ended"] != "NaT"
    assert second["row"] == ["completed", True, {"steps": 5}]
    statuses = _statuses(second["seen"], task_id)
    assert statuses[0] == "working"  # as created, shown before the end
    assert statuses[-1] == "completed"

    third = kernel.run_ok(
        "long = s.start_tool('crunch', {'steps': 600, 'delay': 0.1})\n"
        "cancelled = long.cancel()\n"
        "try:\n"
        "    long.result()\n"
        "    outcome = 'result'\n"
        "except mcp_notebook.McpError as exc:\n"
        "    outcome = exc.kind\n"
        "frame = s.tasks_frame().set_index('task_id')\n"
        "print(json.dumps({'cancelled': cancelled, 'status': long.status, 'outcome': outcome,\n"
        "                  'frame_status': str(frame.loc[long.task_id, 'status']),\n"
        "                  'after': s.call_tool('optional_sum', {'a': 1, 'b': 2}).text}))\n"
    ).json_line()
    assert third == {
        "cancelled": True,
        "status": "cancelled",
        "outcome": "cancelled",
        "frame_status": "cancelled",
        "after": "3",  # the session carries on
    }
    assert running(server), "cancelling a task stopped the server"

    fourth = kernel.run_ok(
        "named = s.start_tool('ask_name', {'greeting': 'Hi'})\n"
        "greeting = named.result()\n"
        "print(json.dumps({'text': greeting.text, 'status': named.status, 'asked': asked,\n"
        "                  'seen': seen, 'id': named.task_id}))\n"
    ).json_line()
    assert fourth["text"] == "Hi, Ada!"
    assert fourth["status"] == "completed"
    assert fourth["asked"] == ["What is your name?"]
    assert "input_required" in _statuses(fourth["seen"], fourth["id"])

    kernel.run_ok("s.close()\nprint(json.dumps({'status': s.model.status}))\n")
    assert not wait_gone([server], 5.0), "close() left the tasks server running"
    for index, ran in enumerate(kernel.cells, 1):
        for message in ran.messages:
            assert message["type"] != "error", f"cell {index}: {message}"
    _assert_clean(kernel.kernel_stderr(), "the kernel's stderr")


def test_a_task_outlives_the_kernel_that_started_it(kernel: Kernel) -> None:
    """A task started over HTTP runs on when its kernel restarts; the new kernel attaches to it by
    id (what the task's repr showed) and gets its result.

    Where that works is the server's to say. tasks_server.py (the modern extension) keeps its tasks
    for whoever asks by id. server-everything (2025-11-25 tasks) lists the task in the session that
    started it, but keeps each HTTP session's tasks in a store of that session's own: a restarted
    kernel opens a new session, which cannot see them. That is checked too, so the day the server
    shares its tasks across sessions this test says so."""
    with tasks_http() as modern_peer, everything_http() as legacy_peer:
        first = kernel.run_ok(
            "import json\n"
            "import mcp_notebook\n"
            f"modern = mcp_notebook.connect({modern_peer.url!r}, show_progress=False)\n"
            f"legacy = mcp_notebook.connect({legacy_peer.url!r}, show_progress=False)\n"
            "crunch = modern.start_tool('crunch', {'steps': 20, 'delay': 0.1})\n"
            "research = legacy.start_tool('simulate-research-query', {'topic': 'restarts'})\n"
            "listed = legacy.tasks_frame(server=True)\n"
            "print(json.dumps({'crunch': crunch.task_id, 'research': research.task_id,\n"
            "                  'reprs': [repr(crunch), repr(research)],\n"
            "                  'listed': list(listed['task_id'].astype(str))}))\n"
        ).json_line()
        crunch_id, research_id = first["crunch"], first["research"]
        assert crunch_id in first["reprs"][0]
        assert research_id in first["reprs"][1]
        assert research_id in first["listed"]  # tasks/list, in the session that started it
        old_pid = kernel.pid

        kernel.restart()
        assert kernel.pid != old_pid

        second = kernel.run_ok(
            "import json\n"
            "import mcp_notebook\n"
            f"modern = mcp_notebook.connect({modern_peer.url!r}, show_progress=False)\n"
            "before = list(modern.model.tasks)\n"
            f"task = modern.get_task({crunch_id!r})\n"
            "result = task.result()\n"
            "frame = modern.tasks_frame()\n"
            "print(json.dumps({'before': before, 'result': result.structured_content,\n"
            "                  'status': task.status, 'repr': repr(task),\n"
            "                  'frame': frame[['task_id', 'status']].astype(str).values.tolist()}))\n"
        ).json_line()
        assert second["before"] == []  # a new kernel, a new session: it knew nothing of the task
        assert second["result"] == {"steps": 20}
        assert second["status"] == "completed"
        assert crunch_id in second["repr"]
        assert second["frame"] == [[crunch_id, "completed"]]

        third = kernel.run_ok(
            f"legacy = mcp_notebook.connect({legacy_peer.url!r}, show_progress=False)\n"
            "try:\n"
            f"    legacy.get_task({research_id!r})\n"
            "    refused = None\n"
            "except mcp_notebook.McpError as exc:\n"
            "    refused = [exc.kind, exc.message]\n"
            "listed = legacy.tasks_frame(server=True)\n"
            "print(json.dumps({'refused': refused, 'listed': list(listed['task_id'].astype(str)),\n"
            "                  'known': [r['task_id'] for r in legacy.model.tasks]}))\n"
            "modern.close()\n"
            "legacy.close()\n"
        ).json_line()
        assert third["refused"] is not None, "server-everything now shares tasks across sessions"
        kind, message = third["refused"]
        assert kind == "server"
        assert "not found" in message.lower()
        assert research_id not in third["listed"]
        assert third["known"] == []
    _assert_clean(kernel.kernel_stderr(), "the kernel's stderr")


def test_a_config_input_is_asked_once_per_kernel_in_a_password_field(kernel: Kernel, tmp_path: Path) -> None:
    secret = "kernel-input-s3cret"
    config = {
        "inputs": [{"type": "promptString", "id": "token", "description": "Demo token", "password": True}],
        "servers": {"demo": {"command": DEMO[0], "args": DEMO[1:], "env": {"DEMO_TOKEN": "${input:token}"}}},
    }
    (tmp_path / ".vscode").mkdir()
    (tmp_path / ".vscode" / "mcp.json").write_text(json.dumps(config))
    connect = (
        "import json, mcp_notebook\n"
        "group = mcp_notebook.connect_all(show_progress=False)\n"  # found on the search path
        "env = group.core.members['demo']._spec.client_args()[1]['env']\n"
        f"print(json.dumps({{**group.statuses, 'answer used': env['DEMO_TOKEN'] == {secret!r}}}))\n"
        "group"
    )
    first = kernel.run_ok(connect, answers=[secret])
    asked = [m["content"] for m in first.messages if m["type"] == "input_request"]
    assert len(asked) == 1
    assert asked[0]["password"] is True
    assert "Demo token" in asked[0]["prompt"]
    assert first.json_line() == {"demo": "ready", "answer used": True}
    kernel.run_ok("group.close()")
    # Asked once per kernel: connecting again asks nothing (no answers given: a request would fail).
    again = kernel.run_ok(connect, answers=[])
    assert again.json_line() == {"demo": "ready", "answer used": True}
    assert not [m for m in again.messages if m["type"] == "input_request"]
    kernel.run_ok("group.close()")
    # The cells' source holds the secret (this test compares with it); no output shows it.
    outputs = [m for cell in kernel.cells for m in cell.messages]
    assert secret not in json.dumps(
        [m for m in outputs if m["type"] not in ("input_request", "execute_input")]
    )
