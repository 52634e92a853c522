"""A Windows Job Object that ends a server's whole process tree (Windows only; ctypes, no pywin32).

Why a job: Windows has no process groups to signal. A process put in a job takes its descendants
into it as they start, ``TerminateJobObject`` ends them all at once, and with
``JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`` the system ends them when the last handle to the job closes,
which also happens when this interpreter dies without running any cleanup.

Known gap: the server is put in the job just after it starts (``subprocess`` cannot start it
suspended), so a grandchild started in that first instant is outside the job and is not stopped.

Importing this module elsewhere than on Windows raises ImportError.
"""

from __future__ import annotations

import sys

if sys.platform != "win32":  # pragma: no cover - the only guard mypy and the import both honour
    raise ImportError("mcp_notebook.transports._winjob is for Windows only")

import ctypes
from ctypes import wintypes

__all__ = ["Job", "job_for"]

_KILL_ON_JOB_CLOSE = 0x00002000
_EXTENDED_LIMIT_INFORMATION = 9
_BASIC_ACCOUNTING_INFORMATION = 1
_PROCESS_TERMINATE = 0x0001
_PROCESS_SET_QUOTA = 0x0100


class _IoCounters(ctypes.Structure):
    _fields_ = [(name, ctypes.c_ulonglong) for name in ("reads", "writes", "others", "rb", "wb", "ob")]


class _BasicLimits(ctypes.Structure):
    _fields_ = [
        ("PerProcessUserTimeLimit", wintypes.LARGE_INTEGER),
        ("PerJobUserTimeLimit", wintypes.LARGE_INTEGER),
        ("LimitFlags", wintypes.DWORD),
        ("MinimumWorkingSetSize", ctypes.c_size_t),
        ("MaximumWorkingSetSize", ctypes.c_size_t),
        ("ActiveProcessLimit", wintypes.DWORD),
        ("Affinity", ctypes.c_size_t),
        ("PriorityClass", wintypes.DWORD),
        ("SchedulingClass", wintypes.DWORD),
    ]


class _ExtendedLimits(ctypes.Structure):
    _fields_ = [
        ("BasicLimitInformation", _BasicLimits),
        ("IoInfo", _IoCounters),
        ("ProcessMemoryLimit", ctypes.c_size_t),
        ("JobMemoryLimit", ctypes.c_size_t),
        ("PeakProcessMemoryUsed", ctypes.c_size_t),
        ("PeakJobMemoryUsed", ctypes.c_size_t),
    ]


class _Accounting(ctypes.Structure):
    _fields_ = [
        ("TotalUserTime", wintypes.LARGE_INTEGER),
        ("TotalKernelTime", wintypes.LARGE_INTEGER),
        ("ThisPeriodTotalUserTime", wintypes.LARGE_INTEGER),
        ("ThisPeriodTotalKernelTime", wintypes.LARGE_INTEGER),
        ("TotalPageFaultCount", wintypes.DWORD),
        ("TotalProcesses", wintypes.DWORD),
        ("ActiveProcesses", wintypes.DWORD),
        ("TotalTerminatedProcesses", wintypes.DWORD),
    ]


_kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
_kernel32.CreateJobObjectW.restype = wintypes.HANDLE
_kernel32.CreateJobObjectW.argtypes = [wintypes.LPVOID, wintypes.LPCWSTR]
_kernel32.OpenProcess.restype = wintypes.HANDLE
_kernel32.OpenProcess.argtypes = [wintypes.DWORD, wintypes.BOOL, wintypes.DWORD]
_kernel32.SetInformationJobObject.argtypes = [wintypes.HANDLE, ctypes.c_int, wintypes.LPVOID, wintypes.DWORD]
_kernel32.QueryInformationJobObject.argtypes = [
    wintypes.HANDLE,
    ctypes.c_int,
    wintypes.LPVOID,
    wintypes.DWORD,
    wintypes.LPDWORD,
]
_kernel32.AssignProcessToJobObject.argtypes = [wintypes.HANDLE, wintypes.HANDLE]
_kernel32.TerminateJobObject.argtypes = [wintypes.HANDLE, wintypes.UINT]
_kernel32.CloseHandle.argtypes = [wintypes.HANDLE]


def _check(ok: object) -> None:
    if not ok:
        raise ctypes.WinError(ctypes.get_last_error())


class Job:
    """One job handle holding one server's tree."""

    def __init__(self, handle: int) -> None:
        self._handle: int | None = handle

    def terminate(self) -> None:
        if self._handle is not None:
            _kernel32.TerminateJobObject(self._handle, 1)

    def active_processes(self) -> int:
        if self._handle is None:
            return 0
        info = _Accounting()
        ok = _kernel32.QueryInformationJobObject(
            self._handle, _BASIC_ACCOUNTING_INFORMATION, ctypes.byref(info), ctypes.sizeof(info), None
        )
        return int(info.ActiveProcesses) if ok else 0

    def close(self) -> None:
        handle, self._handle = self._handle, None
        if handle is not None:
            _kernel32.CloseHandle(handle)


def job_for(pid: int) -> Job:
    """A new kill-on-close job holding process ``pid``; raises OSError if Windows refuses."""
    handle = _kernel32.CreateJobObjectW(None, None)
    _check(handle)
    job = Job(handle)
    try:
        limits = _ExtendedLimits()
        limits.BasicLimitInformation.LimitFlags = _KILL_ON_JOB_CLOSE
        _check(
            _kernel32.SetInformationJobObject(
                handle, _EXTENDED_LIMIT_INFORMATION, ctypes.byref(limits), ctypes.sizeof(limits)
            )
        )
        process = _kernel32.OpenProcess(_PROCESS_TERMINATE | _PROCESS_SET_QUOTA, False, pid)
        _check(process)
        try:
            _check(_kernel32.AssignProcessToJobObject(handle, process))
        finally:
            _kernel32.CloseHandle(process)
    except BaseException:
        job.close()
        raise
    return job
