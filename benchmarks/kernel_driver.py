"""A real ipykernel driven over its own sockets, with every iopub message counted (notebook benchmark).

:class:`Kernel` starts a fresh kernel of this interpreter (kernelspec in a temporary directory, this
checkout first on ``PYTHONPATH``, as tests/test_kernel.py does) and reads its shell and iopub
sockets itself with one ``zmq.Poller``, so that it can send ``execute_request`` probes on a
schedule while counting, byte by byte, what the kernel sends to the front end: every iopub
message is tallied by ``msg_type`` (frames' sizes summed, as they travel), and messages caused by
the probes are kept apart. No front end is attached: widgets send their comm messages anyway.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import zmq
from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpecManager

ROOT = Path(__file__).resolve().parent.parent
_KERNEL_NAME = "mcp-notebook-bench-python"
WIDGET_TYPES = ("comm_open", "comm_msg", "comm_close")
_PROBE_TYPES = ("status", "execute_input", "execute_result")


@dataclass
class Traffic:
    """iopub messages and bytes by msg_type (``probe_messages``: the probes' own status,
    execute_input and execute_result, counted apart)."""

    messages: Counter[str] = field(default_factory=Counter)
    bytes: Counter[str] = field(default_factory=Counter)
    probe_messages: int = 0

    @property
    def total_bytes(self) -> int:
        return sum(self.bytes.values())

    @property
    def widget_messages(self) -> int:
        return sum(self.messages[t] for t in WIDGET_TYPES)

    def as_dict(self) -> dict[str, Any]:
        return {
            "messages": dict(self.messages),
            "bytes": dict(self.bytes),
            "widget_messages": self.widget_messages,
            "total_bytes": self.total_bytes,
            "probe_messages": self.probe_messages,
        }


class CellError(RuntimeError):
    """A benchmark cell raised in the kernel (its traceback is the message)."""


class Kernel:
    """One fresh kernel; :meth:`run` runs a cell, :meth:`pump` reads and counts what arrives."""

    def __init__(self, workdir: Path) -> None:
        spec_dir = workdir / "kernels" / _KERNEL_NAME
        spec_dir.mkdir(parents=True, exist_ok=True)
        argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
        spec = {"argv": argv, "display_name": "mcp-notebook bench", "language": "python"}
        (spec_dir / "kernel.json").write_text(json.dumps(spec))
        specs = KernelSpecManager(kernel_dirs=[str(workdir / "kernels")], ensure_native_kernel=False)
        self.manager = KernelManager(kernel_name=_KERNEL_NAME, kernel_spec_manager=specs)
        self.manager.shutdown_wait_time = 5.0
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        env.pop("JPY_PARENT_PID", None)
        # A kernel under pytest does not capture its fds, so its sys.stderr has no fileno and the
        # SDK's stdio_client (errlog=sys.stderr) cannot start a server: run it as users get it.
        env.pop("PYTEST_CURRENT_TEST", None)
        self._stderr = (workdir / "kernel-stderr.txt").open("w")
        self.manager.start_kernel(env=env, cwd=str(workdir), stderr=self._stderr)
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)
        self.process = psutil.Process(int(self.manager.provisioner.pid))  # type: ignore[union-attr]
        self._shell = self.client.shell_channel.socket
        self._iopub = self.client.iopub_channel.socket
        self._session = self.client.session
        self._poller = zmq.Poller()
        self._poller.register(self._shell, zmq.POLLIN)
        self._poller.register(self._iopub, zmq.POLLIN)
        self.traffic: Traffic | None = None  # set to count
        self.probes: set[str] = set()
        self._replies: dict[str, dict[str, Any]] = {}
        self._idle: set[str] = set()
        self._stdout: dict[str, list[str]] = {}
        self._errors: dict[str, list[str]] = {}
        self.last_iopub = time.monotonic()
        self.pump(0.2)

    # --- the wire -------------------------------------------------------------------------------

    def _receive(self, socket: zmq.Socket[bytes]) -> tuple[dict[str, Any], int]:
        frames = socket.recv_multipart(zmq.NOBLOCK)
        size = sum(len(frame) for frame in frames)
        _, parts = self._session.feed_identities(frames)
        return self._session.deserialize(parts), size

    def pump(self, timeout: float) -> list[dict[str, Any]]:
        """Read whatever arrives within ``timeout`` seconds (at least one poll); the shell replies read."""
        replies = []
        deadline = time.monotonic() + timeout
        while True:
            left = max(0.0, deadline - time.monotonic())
            ready = dict(self._poller.poll(int(left * 1000)))
            if not ready:
                return replies
            if self._iopub in ready:
                while self._iopub.poll(0):
                    self._on_iopub(*self._receive(self._iopub))
            if self._shell in ready:
                while self._shell.poll(0):
                    reply, _ = self._receive(self._shell)
                    parent = reply["parent_header"].get("msg_id", "")
                    # When the kernel sent it (its header's date): the driver may read it later,
                    # busy reading a flood of widget messages on a machine with two cores.
                    reply["sent_by_kernel"] = reply["header"]["date"].timestamp()
                    self._replies[parent] = reply
                    replies.append(reply)
            if time.monotonic() >= deadline:
                return replies

    def _on_iopub(self, message: dict[str, Any], size: int) -> None:
        self.last_iopub = time.monotonic()
        kind = message["header"]["msg_type"]
        parent = message["parent_header"].get("msg_id", "")
        if self.traffic is not None:
            # A probe's own messages only: ipykernel stamps messages sent from other threads (the
            # engine's widget updates, say) with the parent of the latest shell request, often a probe.
            if parent in self.probes and kind in _PROBE_TYPES:
                self.traffic.probe_messages += 1
            else:
                self.traffic.messages[kind] += 1
                self.traffic.bytes[kind] += size
        content = message["content"]
        if kind == "status" and content.get("execution_state") == "idle":
            self._idle.add(parent)
        elif kind == "stream" and content.get("name") == "stdout":
            self._stdout.setdefault(parent, []).append(content["text"])
        elif kind == "error":
            self._errors.setdefault(parent, []).append("\n".join(content.get("traceback", [])))

    def quiet(self, seconds: float, limit: float) -> None:
        """Read until nothing came on iopub for ``seconds`` (at most ``limit`` seconds)."""
        deadline = time.monotonic() + limit
        self.last_iopub = time.monotonic()
        while time.monotonic() < deadline and time.monotonic() - self.last_iopub < seconds:
            self.pump(0.05)

    # --- cells ----------------------------------------------------------------------------------

    def send(self, code: str, **options: Any) -> str:
        return str(self.client.execute(code, store_history=False, **options))

    def reply(self, msg_id: str) -> dict[str, Any] | None:
        return self._replies.pop(msg_id, None)

    def run(self, code: str, timeout: float = 120.0) -> str:
        """Run a cell to its end (reply and idle); its stdout, or :class:`CellError` if it raised."""
        msg_id = self.send(code)
        deadline = time.monotonic() + timeout
        while not (msg_id in self._replies and msg_id in self._idle):
            if time.monotonic() > deadline:
                raise TimeoutError(f"a cell ran longer than {timeout} s:\n{code[:400]}")
            self.pump(0.1)
        reply = self._replies.pop(msg_id)
        self._idle.discard(msg_id)
        errors = self._errors.pop(msg_id, [])
        stdout = "".join(self._stdout.pop(msg_id, []))
        if reply["content"]["status"] != "ok" or errors:
            raise CellError("\n".join(errors) or str(reply["content"]))
        return stdout

    def run_json(self, code: str, timeout: float = 120.0) -> Any:
        """Run a cell whose last stdout line is a JSON document, and return the document."""
        stdout = self.run(code, timeout)
        for line in reversed(stdout.splitlines()):
            try:
                return json.loads(line)
            except ValueError:
                continue
        raise CellError(f"the cell printed no JSON line:\n{stdout}")

    # --- the kernel process ---------------------------------------------------------------------

    def cpu(self) -> float:
        """The kernel's own CPU seconds (user + system; its servers not included)."""
        times = self.process.cpu_times()
        return float(times.user + times.system)

    def rss(self) -> int:
        return int(self.process.memory_info().rss)

    def close(self) -> None:
        self.client.stop_channels()
        if self.manager.has_kernel:
            leftovers = self.process.children(recursive=True) if self.manager.is_alive() else []
            self.manager.shutdown_kernel(now=True)
            _, alive = psutil.wait_procs(leftovers, timeout=2.0)
            for process in alive:
                process.kill()
        self._stderr.close()


class PeakRss:
    """Samples a process's RSS every 10 ms in a thread, between ``start()`` and ``stop()``."""

    def __init__(self, process: psutil.Process) -> None:
        self._process = process
        self._stop = threading.Event()
        self.peak = 0
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.01):
            try:
                self.peak = max(self.peak, int(self._process.memory_info().rss))
            except psutil.Error:
                return

    def start(self) -> PeakRss:
        self.peak = int(self._process.memory_info().rss)
        self._thread.start()
        return self

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def fresh_kernel() -> tuple[Kernel, tempfile.TemporaryDirectory[str]]:
    """A fresh kernel in a temporary directory (close the kernel, then clean the directory)."""
    workdir = tempfile.TemporaryDirectory(prefix="nbbench-")
    return Kernel(Path(workdir.name)), workdir
