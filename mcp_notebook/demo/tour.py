"""A guided tour of the client against the bundled demo server: ``python -m mcp_notebook.demo.tour``.

It starts the demo server twice, once as the dual-era SDK server (the client probes and lands on
the modern 2026-07-28 era) and once restricted to the legacy handshake (the probe falls back), and
shows each capability in turn: tools with structured output, progress, elicitation and sampling
answered by handlers, tasks (started, followed, and one waiting for a form), resources, templates,
prompts, completion, a timeout that cancels on the server, and the connection statistics.

It only prints and never asks: it runs the same in a terminal, a pipe or CI. ``--lab`` starts
JupyterLab at the quickstart notebook instead (:mod:`mcp_notebook.demo._lab`).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

import anyio

from mcp_notebook import Client, ConnectionStats, McpError


def _server(*flags: str) -> list[str]:
    return [sys.executable, "-m", "mcp_notebook.demo", *flags]


def _elicit(params: dict[str, Any]) -> dict[str, Any]:
    fields = params.get("requestedSchema", {}).get("properties", {})
    if "confirm" in fields:  # confirm_export's form
        print(f"    [elicitation] the server asks: {params.get('message')!r} -> confirming, as CSV")
        return {"confirm": True, "format": "csv"}
    print(f"    [elicitation] the server asks: {params.get('message')!r} -> answering 'Ada'")
    return {"name": "Ada"}


def _sample(params: dict[str, Any]) -> str:
    print("    [sampling] the server wants an LLM completion -> answering from the tour")
    return "Pipes carry newline-delimited JSON-RPC; sockets carry HTTP."


def _progress_bar(progress: float, total: float | None, message: str | None) -> None:
    width = 20
    done = int(width * progress / total) if total else 0
    out_of = f"{total:g}" if total else "?"  # 4, not 4.0
    print(f"    [{'#' * done}{'.' * (width - done)}] {progress:g}/{out_of} {message or ''}")


def _server_line(info: dict[str, Any]) -> str:
    """``mcp-notebook-demo 0.1.0 ("MCP Notebook demo server")``: the server's words, not a dict."""
    name = " ".join(str(info[key]) for key in ("name", "version") if info.get(key)) or "(unnamed)"
    title = info.get("title")
    return f"{name} ({title!r})" if title and title != info.get("name") else name


def _stats_lines(stats: ConnectionStats) -> list[str]:
    """The connection's counters in words, the zero ones left out (never a raw dataclass repr).

    The first line accounts for every request: how each ended, plus those in flight and the
    long-lived ``subscriptions/listen`` stream the client keeps open in the modern era (once
    printed on the next line, so the ended ones seemed one short of the total)."""
    words = {"server": "server error"}
    parts = [f"{n} {words.get(outcome, outcome)}" for outcome, n in sorted(stats.outcomes.items())]
    parts.append(f"{stats.in_flight} in flight")
    if stats.streams:
        parts.append(f"{stats.streams} open (listening for changes)")
    lines = [f"{stats.requests} requests: {', '.join(parts)}"]
    counted = {
        "notifications": stats.notifications,
        "server requests": stats.server_requests,
        "timeouts": stats.timeouts,
        "cancellations": stats.cancellations,
        "late responses": stats.late_responses,
        "reconnects": stats.reconnects,
        "overloaded answers": stats.overloaded,
        "malformed frames": stats.malformed_frames,
        "oversized frames": stats.oversized_frames,
        "dropped progress reports": stats.dropped_progress,
    }
    lines.append(", ".join(f"{count} {what}" for what, count in counted.items() if count) or "nothing else")
    zero = [what for what, count in counted.items() if not count]
    if zero:
        lines.append(f"no {', '.join(zero)}")
    return lines


async def _tour(flags: tuple[str, ...], title: str) -> None:
    print(f"\n=== {title}: {' '.join(['python -m mcp_notebook.demo', *flags])}")
    async with Client(_server(*flags), elicitation=_elicit, sampling=_sample) as client:
        server = _server_line(client.server_info)
        print(f"  connected: era={client.era} version={client.protocol_version} server={server}")
        tools = await client.list_tools()
        print(f"  {len(tools)} tools: {', '.join(t.name for t in tools)}")

        result = await client.call_tool("sales_records", {"region": "north", "limit": 5})
        rows = result.structured_content["result"]
        print("  sales_records(region='north', limit=5):")
        print("    " + " | ".join(f"{k:>10}" for k in rows[0]))
        for row in rows:
            print("    " + " | ".join(f"{v!s:>10}" for v in row.values()))

        print("  slow_count with progress:")
        print(
            "   ",
            (await client.call_tool("slow_count", {"steps": 4, "delay": 0.1}, progress=_progress_bar)).text,
        )
        print("  ask_user_name:", (await client.call_tool("ask_user_name", {})).text)
        print(
            "  summarize:",
            (await client.call_tool("summarize", {"text": "A long text about transports."})).text,
        )
        failed = await client.call_tool("fail", {"message": "as intended"})
        print(f"  fail: is_error={failed.is_error} text={failed.text!r}")
        try:
            await client.call_tool("add", {"a": "one", "b": 2})
        except McpError as exc:
            print(f"  add with a bad argument -> McpError(kind={exc.kind!r}): {exc}")

        print(f"  tasks (flavour {client.tasks_flavour!r}):")
        handle = await client.start_tool("build_report", {"topic": "the tour", "sections": 3, "delay": 0.3})
        print(f"    build_report started at once: {handle!r}")
        await anyio.sleep(0.4)
        await handle.refresh()
        print(f"    a moment later: {handle.status}, {handle.status_message!r}")
        report = await handle.result()
        titles = [section["title"] for section in report.structured_content["sections"]]
        print(f"    {handle.status}: {titles}")
        export = await client.call_tool("confirm_export", {"rows": 5})  # followed to its end
        print(f"    confirm_export: {export.structured_content['message']}")

        resources = await client.list_resources()
        print(f"  resources: {', '.join(r.uri for r in resources)}")
        print(f"  templates: {', '.join(t.uri_template for t in await client.list_resource_templates())}")
        region = json.loads((await client.read_resource("demo://region/west")).text)
        print(f"  demo://region/west: {json.dumps(region)[:100]}...")
        print(f"  prompts: {', '.join(p.name for p in await client.list_prompts())}")
        print(
            "  complete analyze_region(region='s'):",
            (await client.complete("analyze_region", ("region", "s"))).values,
        )
        try:
            await client.call_tool("slow_count", {"steps": 50, "delay": 0.2}, timeout=0.5)
        except McpError as exc:
            print(f"  10 s of work, timeout=0.5 -> McpError(kind={exc.kind!r}); the server was told to stop")
        print("  connection stats:")
        for line in _stats_lines(client.stats):
            print(f"    {line}")


async def _both_eras() -> None:
    await _tour((), "The official SDK server, dual-era (our probe lands on the modern era)")
    await _tour(("--legacy-only",), "The same server restricted to the handshake (the probe falls back)")
    print("\nDone. Both eras, one client, no server processes left behind.")


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point: the terminal tour, or JupyterLab with ``--lab``; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m mcp_notebook.demo.tour",
        description="A tour of mcp-notebook against the bundled demo server, in both protocol eras.",
    )
    parser.add_argument(
        "--lab",
        action="store_true",
        help="start JupyterLab (this interpreter's) at the quickstart notebook instead; needs a checkout",
    )
    parser.add_argument("--no-browser", action="store_true", help="with --lab: only print the URL")
    parser.add_argument("--port", type=int, default=0, help="with --lab: the port (default: a free one)")
    args = parser.parse_args(argv)
    if not args.lab and (args.no_browser or args.port):
        parser.error("--no-browser and --port go with --lab")
    if not 0 <= args.port <= 65535:
        parser.error("--port must be between 0 and 65535")
    if args.lab:
        from mcp_notebook.demo._lab import lab

        return lab(browser=not args.no_browser, port=args.port)
    # Piped (``| tee``, CI), Python buffers stdout in blocks: the tour would print nothing for
    # half a minute, then everything. A line at a time, as in a terminal.
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(line_buffering=True)
    anyio.run(_both_eras)
    print(f"Next, the notebooks in JupyterLab: {_this_python()} -m mcp_notebook.demo.tour --lab")
    return 0


def _this_python() -> str:
    """This interpreter as the user would type it: relative when it lives below the current directory."""
    try:
        relative = os.path.relpath(sys.executable)
    except ValueError:  # another drive, on Windows
        return sys.executable
    return sys.executable if relative.startswith("..") else relative


if __name__ == "__main__":
    raise SystemExit(main())
