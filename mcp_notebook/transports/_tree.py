"""A server process and everything it started, stopped together, on POSIX and on Windows.

Why a tree: servers are often launchers (``npx``, ``uvx``, a shell script) whose real work runs in a
grandchild. Stopping only the direct child leaves the grandchild running with our pipes open.

* POSIX: the server starts a new session, so it leads a process group of its own that its
  descendants join; the group is signalled as one (SIGTERM, then SIGKILL).
* Windows: the server starts in a new process group (``CREATE_NEW_PROCESS_GROUP``) and is put in a
  Job Object with ``KILL_ON_JOB_CLOSE`` (see :mod:`._winjob`); descendants join the job
  automatically, terminating the job ends all of them, and the job also dies with this
  interpreter, however it exits. If no job can be made, ``taskkill /T /F`` stops the tree by
  parent links instead. Windows has no SIGTERM for console programs without a console: the
  graceful step there is closing stdin, which comes first on every platform.

What it must never do: block for long (it runs at close and at interpreter exit), or raise when
the processes are already gone.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
from typing import Any

__all__ = ["WINDOWS", "ProcessTree", "spawn_options", "taskkill_argv"]

logger = logging.getLogger("mcp_notebook.transports.stdio")

WINDOWS = sys.platform == "win32"
#: ``subprocess.CREATE_NEW_PROCESS_GROUP`` (defined by the subprocess module only on Windows).
CREATE_NEW_PROCESS_GROUP = 0x00000200
_SIGKILL = getattr(signal, "SIGKILL", signal.SIGTERM)


def spawn_options(*, windows: bool = WINDOWS) -> dict[str, Any]:
    """The process-creation options that make the server the root of a tree we can stop."""
    if windows:
        return {"creationflags": CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


def taskkill_argv(pid: int) -> list[str]:
    """Windows' own tree kill, for when the server is not in a job: ``/T`` its descendants too."""
    return ["taskkill", "/T", "/F", "/PID", str(pid)]


class ProcessTree:
    """The server (``pid``) and its descendants: its process group, or its Windows job."""

    def __init__(self, pid: int, *, windows: bool = WINDOWS) -> None:
        self.pid = pid
        self.windows = windows
        self._job: Any = None
        if windows:
            try:
                self._job = _make_job(pid)
            except OSError as exc:  # e.g. a sandbox that forbids jobs: fall back to taskkill
                logger.debug("could not put the server in a job object (%s); using taskkill", exc)

    @property
    def has_job(self) -> bool:
        return self._job is not None

    @property
    def kill_blocks(self) -> bool:
        """True when ``kill`` runs a program (taskkill) and so belongs in a worker thread."""
        return self.windows and self._job is None

    def terminate(self) -> None:
        """Ask the whole tree to stop (SIGTERM to the group); on Windows, end it (see kill)."""
        if self.windows:
            self.kill()
        else:
            _signal_group(self.pid, signal.SIGTERM)

    def kill(self) -> None:
        """End the whole tree now."""
        if not self.windows:
            _signal_group(self.pid, _SIGKILL)
        elif self._job is not None:
            self._job.terminate()
        else:
            _run_quietly(taskkill_argv(self.pid))

    def leftovers(self) -> bool:
        """True while some process of the tree may still run (the server's grandchildren, say)."""
        if not self.windows:
            try:
                os.killpg(self.pid, 0)
            except (ProcessLookupError, PermissionError, OSError):
                return False
            return True
        return self._job is not None and self._job.active_processes() > 0

    def release(self) -> None:
        """Forget the tree; on Windows closing the job handle ends whatever is left in it."""
        job, self._job = self._job, None
        if job is not None:
            job.close()


def _make_job(pid: int) -> Any:
    from . import _winjob  # Windows only: imported where it can work

    return _winjob.job_for(pid)


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(OSError):  # already gone (ProcessLookupError), or not ours
        os.killpg(pgid, sig)


def _run_quietly(argv: list[str]) -> None:
    try:
        subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        logger.debug("%s failed: %s", argv[0], exc)
