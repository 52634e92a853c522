"""``python -m mcp_notebook.demo.tour --lab``: one Ctrl-C stops JupyterLab and its kernels.

In a terminal (stdin a tty) Jupyter Server answers the first SIGINT with "Shut down this Jupyter
server (y/[n])?" and waits for a second Ctrl-C or a "y"; the lab passes ``answer_yes`` so one Ctrl-C
is enough. The test gives the lab a pseudo-terminal as stdin (as a user's terminal does), starts a
kernel through the REST API, sends one SIGINT to the process group (what the terminal sends), and
checks that the lab and the kernel are gone within the kernel's own shutdown wait plus a hang guard.
"""

from __future__ import annotations

import os
import pty
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import pytest
from jupyter_client.manager import KernelManager

from .conftest import PYTHON

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and pseudo-terminals")

ROOT = Path(__file__).resolve().parents[1]
#: How long Jupyter waits for a kernel to stop before killing it, then a guard for the interpreter's
#: own exit: the bound of a clean stop.
STOP_BOUND = float(KernelManager.shutdown_wait_time.default_value) + 15.0
START_GUARD = 120.0  # only stops a hang while JupyterLab starts


def _wait_for_url(lab: subprocess.Popen[bytes], out: Path) -> str:
    deadline = time.monotonic() + START_GUARD
    while time.monotonic() < deadline and lab.poll() is None:
        found = re.search(r"http://127\.0\.0\.1:\d+/lab/tree/\S+\?token=\w+", out.read_text())
        if found:
            return found.group(0)
        time.sleep(0.2)
    pytest.fail(f"no URL printed:\n{out.read_text()[-3000:]}")


def _start_kernel(base: str, token: str, lab: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_GUARD
    while time.monotonic() < deadline and lab.poll() is None:
        try:
            answer = httpx.post(f"{base}/api/kernels", headers={"Authorization": f"token {token}"}, json={})
        except httpx.TransportError:
            time.sleep(0.3)
            continue
        assert answer.status_code == 201, answer.text
        return
    pytest.fail("JupyterLab never answered")


def test_one_ctrl_c_stops_the_lab_and_its_kernels(tmp_path: Path) -> None:
    out = tmp_path / "lab.out"
    terminal, tty = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")}
    with out.open("w") as sink:
        lab = subprocess.Popen(
            [PYTHON, "-m", "mcp_notebook.demo.tour", "--lab", "--no-browser"],
            cwd=ROOT,
            env=env,
            stdin=tty,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    os.close(tty)
    try:
        url = _wait_for_url(lab, out)
        base, token = url.split("/lab/", 1)[0], url.rsplit("token=", 1)[1]
        _start_kernel(base, token, lab)
        family = [psutil.Process(lab.pid), *psutil.Process(lab.pid).children(recursive=True)]
        assert len(family) >= 2, "the kernel is a child of the lab"
        os.killpg(lab.pid, signal.SIGINT)  # one Ctrl-C: the terminal signals its foreground group
        try:
            lab.wait(timeout=STOP_BOUND)
        except subprocess.TimeoutExpired:
            pytest.fail(f"one Ctrl-C did not stop the lab:\n{out.read_text()[-3000:]}")
        _gone, alive = psutil.wait_procs(family, timeout=STOP_BOUND)
        assert not alive, f"left running: {alive}"
        assert "Shut down this Jupyter server" not in out.read_text()
    finally:
        os.close(terminal)
        if lab.poll() is None:
            os.killpg(lab.pid, signal.SIGKILL)
            lab.wait()
