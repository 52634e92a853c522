"""A private JupyterLab server on 127.0.0.1 for the browser tests.

Everything the server reads or writes lives in one temporary folder: its config, data and runtime
dirs (``JUPYTER_CONFIG_DIR``, ``JUPYTER_DATA_DIR``, ``JUPYTER_RUNTIME_DIR``), the user settings and
workspaces (under the config dir), ``IPYTHONDIR`` and the notebooks (``root/``). So nothing of the
user's Jupyter setup leaks in, and nothing of the test leaks out. The kernel is a kernelspec written
there that runs this interpreter with this checkout on ``PYTHONPATH``.

Nothing reaches the network: update checks, news and the extension manager's listings are off, and
the popups that would ask about them are disabled too.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest

from ..conftest import wait_gone

ROOT = Path(__file__).resolve().parents[2]
KERNEL_NAME = "mcp-notebook-browser-test"
START_TIMEOUT = 90.0  # seconds for the server to answer /api/status (about 2 s when idle)
STOP_TIMEOUT = 30.0  # seconds for /api/shutdown to stop the kernels and the server
PROCESS_GRACE = 15.0  # seconds for a stopped kernel's own children (MCP servers) to exit
# In a cell's stderr or in the server's log (where the kernels' own stderr goes too), these mean an
# error that nothing reported: a failure even when every widget looked right.
FORBIDDEN = ("Traceback", "Task exception was never retrieved", "cancel scope")

# Plugin settings, as JupyterLab's default_setting_overrides.json (the user can still change them).
SETTING_OVERRIDES: dict[str, dict[str, Any]] = {
    # No "Would you like to receive official Jupyter news?" toast, no update check.
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
    # Every cell stays in the DOM (no virtual scrolling), so locators find outputs anywhere.
    "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"},
}
# Frontend plugins that are switched off (page_config.json's disabledExtensions).
DISABLED_PLUGINS = [
    "@jupyterlab/apputils-extension:announcements",
    "@jupyterlab/extensionmanager-extension:plugin",
]


class LabError(AssertionError):
    pass


@dataclass
class Lab:
    """A running JupyterLab server."""

    process: subprocess.Popen[bytes]
    url: str  # http://127.0.0.1:PORT/ (with the trailing slash)
    token: str
    root_dir: Path  # where notebooks go
    base_dir: Path
    log_path: Path

    def page_url(self, notebook: str) -> str:
        """The URL that opens ``notebook`` (a path under root_dir) in JupyterLab, logged in."""
        return f"{self.url}lab/tree/{notebook}?token={self.token}&reset"

    def api(self, method: str, path: str, body: Any = None, timeout: float = 10.0) -> Any:
        """Calls the server's REST API; returns the decoded JSON answer (None when empty)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.url}api/{path}", data=data, method=method)
        request.add_header("Authorization", f"token {self.token}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            text = answer.read()
        return json.loads(text) if text else None

    def kernels(self) -> list[dict[str, Any]]:
        return list(self.api("GET", "kernels"))

    def stop_kernels(self) -> None:
        """Shuts down every session and kernel (each kernel closes its MCP sessions at exit)."""
        for session in self.api("GET", "sessions"):
            with suppress(urllib.error.HTTPError):
                self.api("DELETE", f"sessions/{session['id']}", timeout=30)
        for kernel in self.kernels():
            with suppress(urllib.error.HTTPError):
                self.api("DELETE", f"kernels/{kernel['id']}", timeout=30)

    def descendants(self) -> list[psutil.Process]:
        """The server's processes below it: kernels and what they started."""
        try:
            return psutil.Process(self.process.pid).children(recursive=True)
        except psutil.Error:
            return []

    def log(self, last: int = 60) -> str:
        lines = self.log_path.read_text(errors="replace").splitlines()
        return "\n".join(lines[-last:])

    def log_size(self) -> int:
        return self.log_path.stat().st_size

    def log_since(self, offset: int) -> str:
        with self.log_path.open("rb") as log:
            log.seek(offset)
            return log.read().decode(errors="replace")

    def our_errors(self, offset: int) -> list[str]:
        """Error reports in the log since ``offset`` that involve this package's code.

        The log holds the server's records and the kernels' own stderr. The server's tracebacks
        about browser websockets that closed while it wrote (``WebSocketClosedError``, when a page
        closes) are its own business; a report that names ``mcp_notebook`` is ours.
        """
        blocks = re.split(r"\n(?=\[|Task exception was never retrieved)", self.log_since(offset))
        return [b for b in blocks if "mcp_notebook" in b and any(bad in b for bad in FORBIDDEN)]


def _describe(process: psutil.Process) -> str:
    try:
        return f"{process.pid} {' '.join(process.cmdline())[:200]}"
    except psutil.Error:
        return str(process.pid)


def kill_leftovers(processes: list[psutil.Process], what: str, timeout: float) -> None:
    """Fails if any of the processes outlives ``timeout``; kills them first so nothing leaks on."""
    alive = wait_gone(processes, timeout)
    if not alive:
        return
    described = [_describe(p) for p in alive]
    for process in alive:
        with suppress(psutil.Error):
            process.kill()
    wait_gone(alive, 5.0)
    raise LabError(f"{what}: still running after {timeout:.0f} s (killed now): {described}")


def _write_config(base: Path) -> dict[str, str]:
    """Writes the server's private config, kernelspec and settings; returns its environment."""
    config, data, runtime = base / "config", base / "data", base / "runtime"
    for folder in (config / "labconfig", data / "kernels" / KERNEL_NAME, runtime, base / "ipython"):
        folder.mkdir(parents=True, exist_ok=True)
    (config / "labconfig" / "default_setting_overrides.json").write_text(json.dumps(SETTING_OVERRIDES))
    (config / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {name: True for name in DISABLED_PLUGINS}})
    )
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("JUPYTER", "JPY_", "JUPYTERLAB_", "IPYTHON"))
    }
    python_path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    kernelspec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "mcp-notebook browser tests",
        "language": "python",
        "env": {"PYTHONPATH": python_path},
        "metadata": {"debugger": False},
    }
    (data / "kernels" / KERNEL_NAME / "kernel.json").write_text(json.dumps(kernelspec))
    env.update(
        JUPYTER_CONFIG_DIR=str(config),
        JUPYTER_DATA_DIR=str(data),
        JUPYTER_RUNTIME_DIR=str(runtime),
        JUPYTERLAB_SETTINGS_DIR=str(config / "lab" / "user-settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(config / "lab" / "workspaces"),
        IPYTHONDIR=str(base / "ipython"),
        PYTHONPATH=python_path,
        PYTHONUNBUFFERED="1",
    )
    return env


def _server_info(runtime: Path, pid: int) -> dict[str, Any] | None:
    """The server's runtime file (written once it listens): it holds the port it bound."""
    path = runtime / f"jpserver-{pid}.json"
    try:
        return dict(json.loads(path.read_text()))
    except (OSError, ValueError):
        return None


def require_jupyterlab() -> None:
    try:
        import jupyterlab  # noqa: F401
    except ImportError:
        pytest.fail("jupyterlab is not installed: run scripts/setup.sh (it installs the dev extra)")


@contextmanager
def running_lab(base: Path) -> Iterator[Lab]:
    """Starts JupyterLab in ``base``, waits until it answers, yields it; stops it and its kernels."""
    require_jupyterlab()
    env = _write_config(base)
    root_dir = base / "root"
    root_dir.mkdir(exist_ok=True)
    token = secrets.token_hex(16)
    log_path = base / "jupyterlab.log"
    argv = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--allow-root",  # harmless when not root; CI runs as root
        "--ServerApp.ip=127.0.0.1",
        "--ServerApp.port=0",  # the port it binds is read from its runtime file
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root_dir}",
        "--ServerApp.terminals_enabled=False",
        f"--MappingKernelManager.default_kernel_name={KERNEL_NAME}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
        "--LabApp.expose_app_in_browser=True",  # window.jupyterapp, to run commands and read state
    ]
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            argv, cwd=base, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
        )
    print(f"JupyterLab (pid {process.pid}) logs to {log_path}")
    lab: Lab | None = None
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if process.poll() is not None:
                raise LabError(f"JupyterLab exited with {process.returncode}:\n{log_path.read_text()}")
            if time.monotonic() > deadline:
                raise LabError(
                    f"JupyterLab did not answer within {START_TIMEOUT:.0f} s:\n{log_path.read_text()}"
                )
            info = _server_info(base / "runtime", process.pid)
            if info is not None:
                candidate = Lab(process, info["url"], token, root_dir, base, log_path)
                try:
                    candidate.api("GET", "status", timeout=5)
                except OSError:  # urllib's errors included: not listening yet
                    pass
                else:
                    lab = candidate
                    break
            time.sleep(0.1)
        yield lab
    finally:
        _stop(process, lab, log_path)


def _stop(process: subprocess.Popen[bytes], lab: Lab | None, log_path: Path) -> None:
    """Asks the server to shut down (it stops its kernels first); escalates if it does not."""
    try:
        below = psutil.Process(process.pid).children(recursive=True)
    except psutil.Error:
        below = []
    if lab is not None and process.poll() is None:
        with suppress(OSError):
            lab.api("POST", "shutdown", timeout=STOP_TIMEOUT)
    try:
        process.wait(STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        kill_leftovers(below, "processes of a JupyterLab that had to be terminated", 0)
        raise LabError(
            f"JupyterLab did not stop within {STOP_TIMEOUT:.0f} s:\n{log_path.read_text()}"
        ) from None
    kill_leftovers(below, "kernels or servers of the stopped JupyterLab", PROCESS_GRACE)
