"""The notebook layer under load, in real kernels: ``python -m benchmarks.notebook [--quick|--smoke]``.

Issue #28 item 5. Every condition of every case runs in a fresh ipykernel driven over its own
sockets (:mod:`benchmarks.kernel_driver`), against a paced stdio server
(:mod:`benchmarks.notebook_server`); the code run in the kernels is in
:mod:`benchmarks.notebook_cells`. What the kernel sends to the front end is counted on iopub
(messages and bytes by msg_type; widget messages = comm_open/comm_msg/comm_close), its CPU time and
RSS come from psutil on the kernel's pid, and live widget models from ipywidgets' registry plus the
panels' open virtual controls (``mcp_notebook.widgets._ui.open_controls()``, issue #38).

Cases (conditions side by side, interleaved, order rotating per repetition, medians):

- ``flood-log``: a log flood (5,000 messages over 2 s) with the log panel, status panel and dashboard
  displayed vs no panel; a ``1+1`` cell sent every 50 ms during it, a ``call_tool('echo')`` halfway.
- ``trickle-log``: the same at a pace a view can follow (1,000 messages over 10 s, 100 a second) with
  the panels displayed vs none: what the log views send per message once they draw only new rows.
- ``progress``: one call with 2,000 progress notifications over 2 s: no bar, its bar, bar + panels.
- ``sequential``: 1,000 blocking calls with no panel, with the dashboard and explorer displayed, and
  with the official SDK's ``ClientSession`` in the same kernel (a loop with a panel stops at a cap).
- ``map``: ``map_tool`` over 10,000 rows vs ``asyncio.gather`` with a semaphore doing the same calls.

The table shows each condition's median, the ratio the issue judges by, and its "done when".
Output: the table on stdout, progress on stderr, ``benchmarks/out/notebook.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import notebook_cells as cells
from benchmarks.kernel_driver import Kernel, PeakRss, Traffic, fresh_kernel
from benchmarks.run import code_state, machine, markdown_table, text_table

HERE = Path(__file__).resolve().parent
MB = 1_000_000

SIZES: dict[str, dict[str, Any]] = {
    "full": {
        "repeat": 3,
        "flood": (5000, 2.0),
        "trickle": (1000, 10.0),
        "progress": (2000, 2.0),
        "calls": 1000,
        "calls_cap": 30.0,
        "interleaved_pairs": 20,
        "calls_rss_cap": 300 * MB,
        "rows": 10_000,
        "concurrency": 8,
    },
    "quick": {
        "repeat": 2,
        "flood": (5000, 2.0),
        "trickle": (1000, 10.0),
        "progress": (2000, 2.0),
        "calls": 300,
        "calls_cap": 15.0,
        "interleaved_pairs": 20,
        "calls_rss_cap": 200 * MB,
        "rows": 3000,
        "concurrency": 8,
    },
    "smoke": {
        "repeat": 1,
        "flood": (200, 0.4),
        "trickle": (20, 0.4),
        "progress": (100, 0.3),
        "calls": 20,
        "calls_cap": 10.0,
        "interleaved_pairs": 2,
        "calls_rss_cap": 100 * MB,
        "rows": 100,
        "concurrency": 8,
    },
}
PROBE_INTERVAL = 0.05  # a `1+1` cell every 50 ms during the flood
CASES = {
    "flood-log": ("none", "panels"),
    "trickle-log": ("none", "panels"),
    "progress": ("none", "bar", "panels"),
    "sequential": ("none", "panels", "sdk"),
    "map": ("map", "gather"),
}


def _log(quiet: bool, text: str) -> None:
    if not quiet:
        print(text, file=sys.stderr, flush=True)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


# --- the cases: one condition in one fresh kernel, returning its metrics ---------------------------


def flood_log(kernel: Kernel, condition: str, size: dict[str, Any]) -> dict[str, Any]:
    count, seconds = size["flood"]
    panels = cells.PANELS["flood"] if condition == "panels" else None
    kernel.run_json(cells.PRELUDE + cells.connect(panels=panels))
    kernel.quiet(0.3, 5.0)
    widgets_before = kernel.run_json("print(json.dumps(_nbb_widgets()))")
    kernel.traffic = traffic = Traffic()
    cpu, rss = kernel.cpu(), kernel.rss()
    peak = PeakRss(kernel.process).start()
    flood = kernel.send(cells.log_flood(count, seconds))
    kernel.probes.add(flood)  # its own status/execute_input messages are not the flood's traffic
    sent: dict[str, float] = {}
    latencies: list[float] = []
    done = False
    next_probe = time.monotonic()
    limit = time.monotonic() + 300
    while not done and time.monotonic() < limit:
        now = time.monotonic()
        if now >= next_probe:
            sent_at = time.time()
            probe = kernel.send(cells.PROBE, user_expressions={"done": cells.PROBE_DONE})
            kernel.probes.add(probe)
            sent[probe] = sent_at
            next_probe = max(next_probe, now) + PROBE_INTERVAL  # late: no burst to catch up
        for reply in kernel.pump(max(0.0, next_probe - time.monotonic())):
            parent = reply["parent_header"]["msg_id"]
            if parent in sent:
                latencies.append(reply["sent_by_kernel"] - sent.pop(parent))
                value = reply["content"].get("user_expressions", {}).get("done", {})
                done = done or value.get("data", {}).get("text/plain") == "True"
    while sent and time.monotonic() < limit:  # the probes still queued: their latency counts too
        for reply in kernel.pump(0.1):
            if reply["parent_header"]["msg_id"] in sent:
                latencies.append(reply["sent_by_kernel"] - sent.pop(reply["parent_header"]["msg_id"]))
    kernel.quiet(0.5, 30.0)  # a view that redraws late (coalescing) sends its last frame here
    cpu = kernel.cpu() - cpu
    peak_rss = peak.stop()
    kernel.traffic = None
    report = kernel.run_json(cells.FLOOD_REPORT)
    if not done or report.get("timed_out"):
        raise RuntimeError(f"the flood did not finish: {report}")
    handled = report["done"] - report["start"]
    return {
        "front_end_mb_s": traffic.total_bytes / MB / handled,
        "widget_msgs_s": traffic.widget_messages / handled,
        "handle_s": handled,
        "server_send_s": report["server"]["last"] - report["server"]["first"],
        "lag_after_last_send_s": report["done"] - report["server"]["last"],
        "probe_p95_ms": _percentile(latencies, 0.95) * 1000,
        "probe_max_ms": max(latencies) * 1000,
        "probes": len(latencies),
        "echo_during_s": report["echo_s"],
        "kernel_cpu_s": cpu,
        "rss_peak_growth_mb": (peak_rss - rss) / MB,
        "front_end_mb": traffic.total_bytes / MB,
        "widget_msgs": traffic.widget_messages,
        "new_widgets": report["widgets"] - widgets_before,
        "_traffic": traffic.as_dict(),
    }


def trickle_log(kernel: Kernel, condition: str, size: dict[str, Any]) -> dict[str, Any]:
    """The flood's measurement at a followable pace (``size["trickle"]``), per message sent."""
    count = size["trickle"][0]
    result = flood_log(kernel, condition, {**size, "flood": size["trickle"]})
    result["front_end_kb_per_message"] = result["front_end_mb"] * MB / 1000 / count
    return result


def progress(kernel: Kernel, condition: str, size: dict[str, Any]) -> dict[str, Any]:
    count, seconds = size["progress"]
    panels = cells.PANELS["flood"] if condition == "panels" else None
    before = kernel.run_json(cells.PRELUDE + cells.connect(show_progress=condition != "none", panels=panels))
    kernel.quiet(0.3, 5.0)
    kernel.traffic = traffic = Traffic()
    cpu = kernel.cpu()
    report = kernel.run_json(cells.progress_flood(count, seconds))
    kernel.quiet(0.5, 30.0)
    cpu = kernel.cpu() - cpu
    kernel.traffic = None
    return {
        "widget_msgs": traffic.widget_messages,
        "front_end_mb": traffic.total_bytes / MB,
        "widget_msgs_s": traffic.widget_messages / report["seconds"],
        "call_s": report["seconds"],
        "kernel_cpu_s": cpu,
        "new_widgets": report["widgets"] - before["widgets"],
        "_traffic": traffic.as_dict(),
    }


def sequential(kernel: Kernel, condition: str, size: dict[str, Any]) -> dict[str, Any]:
    calls, cap = size["calls"], size["calls_cap"]
    if condition == "sdk":
        kernel.run_json(cells.PRELUDE + cells.sdk_setup())
        code = cells.sdk_sequential(calls, cap, size["interleaved_pairs"])
    else:
        panels = cells.PANELS["sequential"] if condition == "panels" else None
        kernel.run_json(cells.PRELUDE + cells.connect(panels=panels))
        code = cells.sequential(calls, cap, size["calls_rss_cap"])
    kernel.quiet(0.3, 5.0)
    kernel.traffic = traffic = Traffic()
    report = kernel.run_json(code, timeout=cap + 120)
    kernel.quiet(0.3, 30.0)
    kernel.traffic = None
    done = report["calls"]
    interleaved = (
        {"ours_vs_sdk_interleaved": report["interleaved_ratio"]} if "interleaved_ratio" in report else {}
    )
    return {
        **interleaved,
        "calls_s": done / report["seconds"],
        "calls": done,
        "new_widgets_per_call": (report["widgets_after"] - report["widgets_before"]) / done,
        "live_widgets_before": report["widgets_before"],
        "live_widgets_after": report["widgets_after"],
        "rss_growth_mb": (report["rss_after"] - report["rss_before"]) / MB,
        "widget_msgs_per_call": traffic.widget_messages / done,
        "front_end_kb_per_call": traffic.total_bytes / 1000 / done,
        "_traffic": traffic.as_dict(),
    }


def map_rows(kernel: Kernel, condition: str, size: dict[str, Any]) -> dict[str, Any]:
    rows, concurrency = size["rows"], size["concurrency"]
    kernel.run_json(cells.PRELUDE + cells.connect() + cells.map_setup(rows))
    kernel.quiet(0.3, 5.0)
    code = cells.map_rows(concurrency) if condition == "map" else cells.gather_rows(concurrency)
    rss = kernel.rss()
    peak = PeakRss(kernel.process).start()
    report = kernel.run_json(code, timeout=600)
    peak_rss = peak.stop()
    if report["rows"] != rows:
        raise RuntimeError(f"{condition}: {report['rows']} of {rows} rows answered")
    return {
        "rows_s": rows / report["seconds"],
        "rss_peak_growth_mb": (peak_rss - rss) / MB,
        "seconds": report["seconds"],
    }


RUNNERS: dict[str, Callable[[Kernel, str, dict[str, Any]], dict[str, Any]]] = {
    "flood-log": flood_log,
    "trickle-log": trickle_log,
    "progress": progress,
    "sequential": sequential,
    "map": map_rows,
}

# --- the table -----------------------------------------------------------------------------------

#: Per case: (metric, label, ratio (numerator, denominator) or None, threshold text, check).
#: A check takes the medians by condition and says whether the "done when" line is met.
Check = Callable[[dict[str, float]], bool]
ROWS: dict[str, list[tuple[str, str, tuple[str, str] | None, str, Check | None]]] = {
    "flood-log": [
        (
            "front_end_mb_s",
            "MB/s to the front end",
            ("panels", "none"),
            "panels ≤ 1 MB/s",
            lambda m: m["panels"] <= 1,
        ),
        (
            "widget_msgs_s",
            "widget messages/s",
            ("panels", "none"),
            "panels ≤ 60/s",
            lambda m: m["panels"] <= 60,
        ),
        (
            "handle_s",
            "s to handle the flood",
            ("panels", "none"),
            "panels/none ≤ 1.3",
            lambda m: m["panels"] <= 1.3 * m["none"],
        ),
        ("server_send_s", "s the server took to send it", ("panels", "none"), "", None),
        ("lag_after_last_send_s", "s from its last send to processed", ("panels", "none"), "", None),
        ("probe_p95_ms", "`1+1` p95 ms", ("panels", "none"), "panels ≤ 150 ms", lambda m: m["panels"] <= 150),
        ("probe_max_ms", "`1+1` max ms", ("panels", "none"), "", None),
        (
            "echo_during_s",
            "call_tool('echo') during it, s",
            ("panels", "none"),
            "panels ≤ 0.5 s",
            lambda m: m["panels"] <= 0.5,
        ),
        ("kernel_cpu_s", "kernel CPU s", ("panels", "none"), "", None),
        ("rss_peak_growth_mb", "kernel RSS peak growth MB", ("panels", "none"), "", None),
        ("front_end_mb", "MB to the front end", ("panels", "none"), "", None),
        ("new_widgets", "new live widget models", None, "flat", lambda m: m["panels"] <= 0),
    ],
    "trickle-log": [
        ("front_end_kb_per_message", "KB to the front end per message", ("panels", "none"), "", None),
        ("front_end_mb_s", "MB/s to the front end", ("panels", "none"), "", None),
        ("widget_msgs_s", "widget messages/s", ("panels", "none"), "", None),
        ("kernel_cpu_s", "kernel CPU s", ("panels", "none"), "", None),
        ("new_widgets", "new live widget models", None, "flat", lambda m: m["panels"] <= 0),
    ],
    "progress": [
        ("widget_msgs", "widget messages", ("panels", "bar"), "", None),
        ("widget_msgs_s", "widget messages/s", ("panels", "none"), "", None),
        ("front_end_mb", "MB to the front end", ("panels", "none"), "", None),
        ("call_s", "s for the call", ("panels", "none"), "", None),
        ("kernel_cpu_s", "kernel CPU s", ("panels", "none"), "", None),
        ("new_widgets", "new live widget models", None, "", None),
    ],
    "sequential": [
        (
            "calls_s",
            "calls/s",
            ("panels", "none"),
            "panels/none ≥ 0.8",
            lambda m: m["panels"] >= 0.8 * m["none"],
        ),
        # Judged on the alternated batches below, not here: fresh kernels minutes apart on a shared
        # 2-core machine gave 0.6 to 1.9 for the same code (issue #28's note), so this is context.
        ("calls_s", "calls/s, separate kernels (noisy)", ("none", "sdk"), "", None),
        (
            "ours_vs_sdk_interleaved",
            "ours/SDK, 50-call batches alternated in one kernel (median)",
            None,
            "sdk ≥ 0.8",
            lambda m: m["sdk"] >= 0.8,
        ),
        ("calls", "calls made (a loop stops at a time or RSS cap)", None, "", None),
        ("new_widgets_per_call", "new live widgets per call", None, "panels ≤ 1", lambda m: m["panels"] <= 1),
        ("live_widgets_after", "live widget models after", None, "", None),
        ("rss_growth_mb", "kernel RSS growth MB", None, "panels ≤ 10 MB", lambda m: m["panels"] <= 10),
        ("widget_msgs_per_call", "widget messages per call", None, "", None),
        ("front_end_kb_per_call", "KB to the front end per call", None, "", None),
    ],
    "map": [
        ("rows_s", "rows/s", ("map", "gather"), "", None),
        (
            "rss_peak_growth_mb",
            "kernel RSS peak growth MB",
            ("map", "gather"),
            "map/gather ≤ 1.5",
            lambda m: m["map"] <= 1.5 * m["gather"],
        ),
    ],
}


#: Metrics measured in some conditions only (the others do not lack them by failing).
ONLY = {"ours_vs_sdk_interleaved": ("sdk",)}


def _fmt(value: float | None) -> str:
    if value is None:
        return "-"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.3g}" if value else "0"


def summarise(samples: dict[str, dict[str, list[dict[str, Any]]]]) -> dict[str, Any]:
    """Medians per case, condition and metric; the table rows with ratios and the done-when lines."""
    medians: dict[str, dict[str, dict[str, float]]] = {}
    for case, by_condition in samples.items():
        medians[case] = {}
        for condition, runs in by_condition.items():
            keys = [k for k in (runs[0] if runs else {}) if not k.startswith("_")]
            medians[case][condition] = {k: statistics.median(run[k] for run in runs) for k in keys}
    header = ["case", "metric", "conditions", "ratio", "done when", "met"]
    rows, targets = [], []
    for case, specs in ROWS.items():
        if case not in medians:
            continue
        for metric, label, ratio, threshold, check in specs:
            conditions = ONLY.get(metric, CASES[case])
            by = {c: medians[case][c][metric] for c in conditions if metric in medians[case].get(c, {})}
            shown = ", ".join(f"{c} {_fmt(by[c]) if c in by else 'error'}" for c in conditions)
            if len(by) != len(conditions):  # a condition failed every repetition (errors in the JSON)
                rows.append([case, label, shown, "-", threshold or "-", "-"])
                continue
            ratio_text = "-"
            if ratio is not None:
                top, bottom = by[ratio[0]], by[ratio[1]]
                ratio_text = f"{ratio[0]}/{ratio[1]} {_fmt(top / bottom)}" if bottom else "-"
            met = "-" if check is None else ("met" if check(by) else "MISSED")
            rows.append([case, label, shown, ratio_text, threshold or "-", met])
            if check is not None:
                targets.append({"case": case, "metric": metric, "target": threshold, "met": met == "met"})
    return {"medians": medians, "table": {"header": header, "rows": rows}, "targets": targets}


def _one(case: str, condition: str, size: dict[str, Any]) -> dict[str, Any]:
    """One condition of one case in a fresh kernel, closed (with its servers) whatever happens."""
    kernel, workdir = fresh_kernel()
    try:
        return RUNNERS[case](kernel, condition, size)
    finally:
        kernel.close()
        workdir.cleanup()


def run(mode: str, cases: list[str], quiet: bool) -> dict[str, Any]:
    size = SIZES[mode]
    started = time.monotonic()
    samples: dict[str, dict[str, list[dict[str, Any]]]] = {c: {k: [] for k in CASES[c]} for c in cases}
    errors: list[dict[str, Any]] = []
    for rep in range(size["repeat"]):
        for case in cases:
            conditions = list(CASES[case])
            shift = rep % len(conditions)
            for condition in conditions[shift:] + conditions[:shift]:
                _log(quiet, f"[{time.monotonic() - started:5.0f} s] rep {rep + 1} {case} {condition}")
                try:
                    samples[case][condition].append(_one(case, condition, size))
                except Exception as exc:  # one failed kernel must not lose the run: recorded, shown
                    errors.append({"case": case, "condition": condition, "rep": rep + 1, "error": repr(exc)})
                    _log(quiet, f"  failed: {exc!r}"[:2000])
    report = {
        "mode": mode,
        "sizes": {k: list(v) if isinstance(v, tuple) else v for k, v in size.items()},
        "machine": machine(),
        "code": code_state(),
        "samples": samples,
        "errors": errors,
        **summarise(samples),
        "seconds": time.monotonic() - started,
    }
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.notebook", description=__doc__.split("\n\n")[0]
    )
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_true", help="fewer repetitions, calls and rows")
    size.add_argument("--smoke", action="store_true", help="every case once at tiny sizes (the test suite)")
    parser.add_argument(
        "--json", type=Path, default=HERE / "out" / "notebook.json", help="where to write JSON"
    )
    parser.add_argument(
        "--cases", default=",".join(CASES), help=f"comma-separated subset of {','.join(CASES)}"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = parser.parse_args(argv)
    cases = [c for c in args.cases.split(",") if c]
    unknown = set(cases) - set(CASES)
    if unknown:
        parser.error(f"unknown cases: {', '.join(sorted(unknown))}")
    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    report = run(mode, cases, args.quiet)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    table = report["table"]
    conditions = "; ".join(f"{case}: {', '.join(CASES[case])}" for case in cases)
    note = f"Conditions (medians of {SIZES[mode]['repeat']}): {conditions}."
    markdown = markdown_table(table["header"], table["rows"], ["---"] * len(table["header"]))
    args.json.with_suffix(".md").write_text(markdown + "\n\n" + note + "\n")
    print(text_table(table["header"], table["rows"]))
    print()
    print(note)
    met = sum(t["met"] for t in report["targets"])
    print(f"done-when lines met: {met} of {len(report['targets'])}")
    for error in report["errors"]:
        print(f"error: {error['case']} {error['condition']} (rep {error['rep']}): {error['error'][:500]}")
    code = report["code"]
    print(f"code: commit {code['commit']}, uncommitted: {', '.join(code['uncommitted']) or 'none'}")
    print(f"{mode} run took {report['seconds']:.0f} s; JSON: {args.json}")
    return 1 if report["errors"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
