"""Stopping a server's whole process tree: the Windows code paths, as far as a POSIX box can go.

The real POSIX behaviour (a grandchild, even one ignoring SIGTERM, is gone after ``aclose()``) is
tested against a real server in ``test_faults.py``. Windows itself cannot run here, so these tests
pin what does not need it: which creation options are used, that the tree is ended through the
job (or ``taskkill /T`` without one), and that the exit hook never needs ``os.WNOHANG``. The job
object's ctypes calls themselves run only on Windows (see the README).
"""

from __future__ import annotations

import os

import pytest

from mcp_notebook.transports import _stdio as stdio
from mcp_notebook.transports import _tree


class FakeJob:
    def __init__(self) -> None:
        self.calls: list[str] = []
        self.active = 2

    def terminate(self) -> None:
        self.calls.append("terminate")
        self.active = 0

    def active_processes(self) -> int:
        return self.active

    def close(self) -> None:
        self.calls.append("close")


def test_a_posix_server_leads_a_new_session_and_a_windows_one_a_new_process_group() -> None:
    assert _tree.spawn_options(windows=False) == {"start_new_session": True}
    assert _tree.spawn_options(windows=True) == {"creationflags": 0x00000200}


def test_a_windows_server_is_ended_with_its_job(monkeypatch: pytest.MonkeyPatch) -> None:
    job = FakeJob()
    monkeypatch.setattr(_tree, "_make_job", lambda pid: job)
    ran: list[list[str]] = []
    monkeypatch.setattr(_tree, "_run_quietly", ran.append)
    tree = _tree.ProcessTree(4242, windows=True)
    assert tree.has_job
    assert not tree.kill_blocks
    assert tree.leftovers()
    tree.terminate()
    assert job.calls == ["terminate"]
    assert not tree.leftovers()
    tree.release()
    assert job.calls == ["terminate", "close"]
    assert ran == []  # no taskkill when the job did it


def test_a_windows_server_without_a_job_is_ended_with_a_tree_kill(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(pid: int) -> None:
        raise PermissionError("jobs are not allowed here")

    monkeypatch.setattr(_tree, "_make_job", refuse)
    ran: list[list[str]] = []
    monkeypatch.setattr(_tree, "_run_quietly", ran.append)
    tree = _tree.ProcessTree(4242, windows=True)
    assert not tree.has_job
    assert tree.kill_blocks  # taskkill is a program: the stdio transport runs it in a thread
    tree.kill()
    assert ran == [["taskkill", "/T", "/F", "/PID", "4242"]]


def test_the_exit_hook_ends_windows_trees_without_os_wnohang(monkeypatch: pytest.MonkeyPatch) -> None:
    job = FakeJob()
    monkeypatch.setattr(_tree, "_make_job", lambda pid: job)
    monkeypatch.delattr(os, "WNOHANG")  # Windows has none
    monkeypatch.setattr(stdio, "_LIVE_TREES", {4242: _tree.ProcessTree(4242, windows=True)})
    stdio._kill_leftover_servers()
    assert job.calls == ["terminate", "close"]
    assert stdio._LIVE_TREES == {}


def test_the_winjob_module_refuses_to_load_off_windows() -> None:
    if _tree.WINDOWS:
        pytest.skip("this is Windows: the module loads")
    with pytest.raises(ImportError):
        import mcp_notebook.transports._winjob  # noqa: F401


class FakeKernel32:
    """Records the Job Object calls _winjob makes; ``refuse`` names one that fails."""

    def __init__(self, refuse: str = "") -> None:
        self.calls: list[tuple[str, tuple[object, ...]]] = []
        self.refuse = refuse
        self.limit_flags: int | None = None

    def __getattr__(self, name: str) -> object:
        def call(*args: object) -> object:
            self.calls.append((name, args))
            if name == "SetInformationJobObject":
                self.limit_flags = args[2]._obj.BasicLimitInformation.LimitFlags  # type: ignore[attr-defined]
            if name == self.refuse:
                return 0
            return {"CreateJobObjectW": 100, "OpenProcess": 200}.get(name, 1)

        call.argtypes = call.restype = None  # type: ignore[attr-defined]
        object.__setattr__(self, name, call)
        return call


def load_winjob(monkeypatch: pytest.MonkeyPatch, kernel32: FakeKernel32):
    """_winjob's source run as if on Windows, against a fake kernel32 (its struct sizes are not Windows')."""
    import ctypes
    import importlib.util
    import sys

    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(ctypes, "WinDLL", lambda name, use_last_error: kernel32, raising=False)
    monkeypatch.setattr(ctypes, "get_last_error", lambda: 5, raising=False)
    monkeypatch.setattr(ctypes, "WinError", lambda code: OSError(code, "refused"), raising=False)
    path = os.path.join(os.path.dirname(_tree.__file__), "_winjob.py")
    spec = importlib.util.spec_from_file_location("winjob_under_test", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_job_is_kill_on_close_and_holds_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    kernel32 = FakeKernel32()
    winjob = load_winjob(monkeypatch, kernel32)
    job = winjob.job_for(4242)
    names = [name for name, _ in kernel32.calls]
    assert names == [
        "CreateJobObjectW",
        "SetInformationJobObject",
        "OpenProcess",
        "AssignProcessToJobObject",
        "CloseHandle",  # the process handle, not the job
    ]
    assert kernel32.limit_flags == 0x2000  # JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
    assert kernel32.calls[2][1] == (0x0001 | 0x0100, False, 4242)
    assert kernel32.calls[4][1] == (200,)
    job.terminate()
    job.close()
    job.close()  # idempotent
    assert kernel32.calls[-2:] == [("TerminateJobObject", (100, 1)), ("CloseHandle", (100,))]


def test_a_refused_job_is_closed_and_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    kernel32 = FakeKernel32(refuse="AssignProcessToJobObject")
    winjob = load_winjob(monkeypatch, kernel32)
    with pytest.raises(OSError, match="refused"):
        winjob.job_for(4242)
    closed = [args for name, args in kernel32.calls if name == "CloseHandle"]
    assert closed == [(200,), (100,)]  # the process handle, then the job
