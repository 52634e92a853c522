"""The code the notebook benchmark runs inside its kernels (issue #28), one template per step.

Each case connects in a setup cell (not timed), displays its panels there, then runs the measured
cell. Cells print one JSON line for the driver. Only the public face is used: ``mcp_notebook.connect``,
the widget methods, ``call_tool``/``acall_tool``/``map_tool``; the SDK's ``ClientSession`` is the
baseline in the same kernel.
"""

from __future__ import annotations

import sys
from pathlib import Path

SERVER = [sys.executable, str(Path(__file__).resolve().parent / "notebook_server.py")]

PRELUDE = f"""
import asyncio, json, sys, threading, time
import psutil
import mcp_notebook as m
from IPython.display import display
_nbb_server = {SERVER!r}
def _nbb_widgets():
    # ipywidgets' registry of live widget models (0 while ipywidgets is not even imported), plus
    # the panels' virtual controls (issue #38: ipywidgets classes on a virtual comm, not in the
    # registry, yet a leak of them is a leak all the same; the code before #38 has none)
    module = sys.modules.get('ipywidgets.widgets.widget')
    live = len(module._instances) if module is not None else 0
    ui = sys.modules.get('mcp_notebook.widgets._ui')
    return live + (ui.open_controls() if ui is not None else 0)
def _nbb_rss():
    return psutil.Process().memory_info().rss
"""

#: What each condition shows before the measured cell (``s`` is the session).
PANELS = {
    "flood": "display(s.log_widget(), s.status_widget(), s.dashboard())",
    "sequential": "display(s.dashboard(), s.explorer())",
}


def connect(show_progress: bool = True, panels: str | None = None) -> str:
    code = f"s = m.connect(_nbb_server, show_progress={show_progress!r})\n"
    code += "s.call_tool('echo', {'text': 'warm'})\n"
    if panels:
        code += panels + "\n"
    return code + "print(json.dumps({'widgets': _nbb_widgets()}))\n"


def log_flood(count: int, seconds: float) -> str:
    """Starts the flood in a thread (the shell stays free for the probes); ``_nbb_done`` is set once
    the kernel has processed every message, and the echo call made halfway through has answered."""
    return f"""
_nbb_done = threading.Event()
_nbb_flood = {{}}
def _nbb_echo():
    time.sleep({seconds / 2!r})
    started = time.perf_counter()
    s.call_tool('echo', {{'text': 'during the flood'}})
    _nbb_flood['echo_s'] = time.perf_counter() - started
def _nbb_run():
    last = 'message {count - 1}'
    echo = threading.Thread(target=_nbb_echo, daemon=True)
    _nbb_flood['start'] = time.time()
    echo.start()
    result = s.call_tool('log_flood', {{'count': {count}, 'seconds': {seconds!r}}})
    _nbb_flood['returned'] = time.time()
    limit = time.monotonic() + 300
    while not any(e.get('data') == last for e in list(s.model.log)[-20:]):
        if time.monotonic() > limit:
            _nbb_flood['timed_out'] = True
            break
        time.sleep(0.002)
    _nbb_flood['done'] = time.time()
    echo.join()
    _nbb_flood['server'] = result.structured_content
    _nbb_done.set()
threading.Thread(target=_nbb_run, daemon=True).start()
"""


FLOOD_REPORT = "print(json.dumps({**_nbb_flood, 'widgets': _nbb_widgets()}))"
PROBE = "1+1"
PROBE_DONE = "_nbb_done.is_set()"


def progress_flood(count: int, seconds: float) -> str:
    return f"""
_nbb_started = time.perf_counter()
_nbb_result = s.call_tool('progress_flood', {{'count': {count}, 'seconds': {seconds!r}}})
print(json.dumps({{'seconds': time.perf_counter() - _nbb_started, 'widgets': _nbb_widgets(),
                  'server': _nbb_result.structured_content}}))
"""


def sequential(calls: int, cap: float, rss_cap: int) -> str:
    """``calls`` blocking calls in a loop, stopped after ``cap`` seconds or once the kernel grew by
    ``rss_cap`` bytes (a leaking panel can take minutes and gigabytes on a shared machine: the rate
    and the growth per call are what matter)."""
    return f"""
import gc; gc.collect()
_nbb_w0, _nbb_r0 = _nbb_widgets(), _nbb_rss()
_nbb_started = time.perf_counter()
_nbb_limit = _nbb_started + {cap!r}
_nbb_calls = 0
for _ in range({calls}):
    s.call_tool('echo', {{'text': 'x'}})
    _nbb_calls += 1
    if _nbb_calls % 10 == 0 and (time.perf_counter() > _nbb_limit or _nbb_rss() - _nbb_r0 > {rss_cap}):
        break
_nbb_seconds = time.perf_counter() - _nbb_started
gc.collect()
print(json.dumps({{'calls': _nbb_calls, 'seconds': _nbb_seconds, 'widgets_before': _nbb_w0,
                  'widgets_after': _nbb_widgets(), 'rss_before': _nbb_r0, 'rss_after': _nbb_rss()}}))
"""


SDK_SETUP = """
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
print(json.dumps({'widgets': _nbb_widgets()}))
"""


def sdk_setup() -> str:
    """The SDK's imports, and our session ``s`` (no panel) for the interleaved batches."""
    return "s = m.connect(_nbb_server)\ns.call_tool('echo', {'text': 'warm'})\n" + SDK_SETUP


def sdk_sequential(calls: int, cap: float, pairs: int = 0) -> str:
    """The same loop with the official SDK's ClientSession, connected in the same (one) cell: its
    anyio scopes must be entered and left in one task.

    Then ``pairs`` times: 50 SDK calls, then 50 blocking ``s.call_tool`` calls, in the same kernel
    (the batches alternate, so a shared machine's load changes hit both alike); the median of the
    per-pair speed ratios is ``interleaved_ratio`` (ours/SDK). Separate kernels minutes apart gave
    ratios from 0.6 to 1.2 for the same code."""
    return f"""
import gc
async def _nbb_sdk():
    params = StdioServerParameters(command=_nbb_server[0], args=_nbb_server[1:])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as sdk:
            await sdk.initialize()
            await sdk.call_tool('echo', {{'text': 'warm'}})
            gc.collect()
            w0, r0 = _nbb_widgets(), _nbb_rss()
            started = time.perf_counter()
            limit = started + {cap!r}
            calls = 0
            for _ in range({calls}):
                await sdk.call_tool('echo', {{'text': 'x'}})
                calls += 1
                if time.perf_counter() > limit:
                    break
            seconds = time.perf_counter() - started
            gc.collect()
            report = {{'calls': calls, 'seconds': seconds, 'widgets_before': w0,
                      'widgets_after': _nbb_widgets(), 'rss_before': r0, 'rss_after': _nbb_rss()}}
            ratios = []
            for _ in range({pairs}):
                t = time.perf_counter()
                for _ in range(50):
                    await sdk.call_tool('echo', {{'text': 'x'}})
                theirs = time.perf_counter() - t
                t = time.perf_counter()
                for _ in range(50):
                    s.call_tool('echo', {{'text': 'x'}})  # blocking, from the same cell
                ratios.append(theirs / (time.perf_counter() - t))
            if ratios:
                import statistics
                report['interleaved_ratio'] = statistics.median(ratios)
            return report
print(json.dumps(await _nbb_sdk()))
"""


def map_setup(rows: int) -> str:
    return f"""
import gc
import pandas as pd
_nbb_frame = pd.DataFrame({{'text': [f'row {{i}}' for i in range({rows})]}})
gc.collect()
print(json.dumps({{'widgets': _nbb_widgets()}}))
"""


def map_rows(concurrency: int) -> str:
    return f"""
_nbb_started = time.perf_counter()
_nbb_out = s.map_tool('echo', _nbb_frame, concurrency={concurrency})
_nbb_seconds = time.perf_counter() - _nbb_started
print(json.dumps({{'rows': int((~_nbb_out['is_error']).sum()), 'seconds': _nbb_seconds}}))
"""


def gather_rows(concurrency: int) -> str:
    return f"""
async def _nbb_gather():
    limit = asyncio.Semaphore({concurrency})
    async def one(text):
        async with limit:
            return await s.acall_tool('echo', {{'text': text}})
    return await asyncio.gather(*(one(text) for text in _nbb_frame['text']))
_nbb_started = time.perf_counter()
_nbb_out = await _nbb_gather()
_nbb_seconds = time.perf_counter() - _nbb_started
print(json.dumps({{'rows': sum(not r.is_error for r in _nbb_out), 'seconds': _nbb_seconds}}))
"""
