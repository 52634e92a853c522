"""A small, self-contained demo MCP server for trying out ``mcp_notebook``.

The server is called ``mcp-notebook-demo`` and serves a toy sales data set, so
every MCP feature the client library supports has something real to look at:

Tools
    ``sales_records(region="all", limit=20)``
        Structured output: a list of sales records (``date``, ``region``,
        ``product``, ``units``, ``price``), generated deterministically. Turns
        straight into a DataFrame.
    ``add(a, b)``
        A tiny structured tool returning a number.
    ``echo(text)``
        Returns ``text`` unchanged, as plain text content (no output schema).
    ``slow_count(steps=5, delay=0.2)``
        Reports progress after every step; a large ``delay`` makes it a handy
        long-running call for timeout and cancellation tests.
    ``ask_user_name(greeting="Hello")``
        Asks the user for their name through elicitation and greets them.
    ``summarize(text, max_words=30)``
        Asks the client's LLM (sampling) for a summary of ``text``.
    ``list_roots()``
        Lists the roots the client shares (``roots/list``), asked at every call.
    ``write_log(message, level="info")``
        Sends ``message`` to the client as a log message (``notifications/message``).
    ``fail(message)``
        Always fails, producing a result with ``isError: true``.
    ``add_tool(name)``
        Registers a new echo tool at run time and announces the change
        (``tools/list_changed``), for watching a client's cache follow along.
    ``set_note(text)``
        Changes ``demo://note`` and notifies its subscribers
        (``resources/updated``).
    ``build_report(topic, sections=4, delay=0.5)``
        A long-running task (task support ``required``): writes a report on
        ``topic`` from the sales data one section at a time; the task's status
        message says which section ("Writing section 2 of 4..."), and the
        report comes back as structured content.
    ``confirm_export(rows=100)``
        A task (``required``) that waits in ``input_required`` for the user to
        confirm the export and pick CSV or JSON in a form, then exports (or
        says it did not, when declined).
    ``sum_numbers(numbers, delay=0)``
        Adds numbers; task support ``optional``: a task when the client asks.

Resources
    ``demo://readme`` (markdown), ``demo://data/sales.csv`` (CSV), the
    subscribable ``demo://note`` (text) and the template
    ``demo://region/{name}`` (JSON summary of one region).

Prompts
    ``analyze_region(region)`` and ``greeting(name)``. The ``region`` prompt
    argument and the template's ``name`` variable both have completions.

Elicitation and sampling go through the SDK's ``Resolve(...)`` dependencies, so
they work in both protocol eras: as server-to-client requests on a legacy
(``initialize`` handshake) connection, and as ``input_required`` round trips on
a 2026-07-28 connection.

Tasks work in both eras too (:mod:`mcp_notebook.demo._task_runner`): the 2025-11-25
core tasks on a legacy connection (``params.task`` on ``tools/call``,
``tasks/get``, the blocking ``tasks/result`` that also carries the form's
``elicitation/create``, ``tasks/list``, ``tasks/cancel`` and
``notifications/tasks/status``), and the 2026-07-28 extension
``io.modelcontextprotocol/tasks`` on a modern one (``tasks/get`` with the
outcome or ``inputRequests`` inlined, ``tasks/update``, ``tasks/cancel``). Task
state lives in the server process's memory, kept 10 minutes; the suggested poll
interval is 250 ms.

Run it over stdio with ``python -m mcp_notebook.demo``. By default it serves
both protocol eras (the client's first request picks one); pass
``--legacy-only`` to serve only the ``initialize`` handshake era, which is
useful for testing a client's fallback from ``server/discover`` (the legacy-only
server answers ``server/discover`` with ``-32601 Method not found``).
``--log-level`` sets the stderr log level (default ``WARNING``); stdout carries
only protocol messages.

``--http PORT`` serves it over Streamable HTTP instead (``0`` picks a free
port; ``--host`` defaults to ``127.0.0.1``): once it accepts connections it
prints exactly one line to stdout, ``MCP_HTTP_URL=http://127.0.0.1:PORT/mcp``,
and serves until SIGINT/SIGTERM. Both eras are served there too (a request
whose ``MCP-Protocol-Version`` header names 2026-07-28 is served statelessly,
an ``initialize`` opens a legacy session); ``--legacy-only`` refuses the modern
header with ``400`` and a legacy JSON-RPC error, as a 2025-11-25 server does.
``--stateless`` drops legacy sessions (no ``Mcp-Session-Id``; each POST is
served on its own), ``--json-response`` answers with JSON bodies instead of
SSE streams (with either, a legacy connection has no way to carry the
server's elicitation/sampling requests: those tools fail with ``-32600``, and
so does the ``tasks/result`` that would ask ``confirm_export``'s form), and
``--sse`` serves the deprecated 2024-11-05 HTTP+SSE transport at ``/sse``
instead (the printed URL then ends in ``/sse``). ``--token TOKEN`` (or the
environment variable ``MCP_DEMO_TOKEN``) makes every HTTP request need
``Authorization: Bearer TOKEN``; others are answered ``401`` with
``WWW-Authenticate: Bearer``.

Importing this package is cheap: the MCP SDK is only imported when
:func:`build_server` or :func:`main` is called.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ._tokens import valid_token

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from mcp_notebook.demo._server import LogLevel

__all__ = ["TOKEN_ENV", "build_server", "main"]

TOKEN_ENV = "MCP_DEMO_TOKEN"
"""The environment variable that ``--token`` defaults to (HTTP only; stdio ignores it)."""


def build_server(*, log_level: LogLevel = "WARNING") -> MCPServer:
    """Build a fresh demo ``MCPServer`` (imports the MCP SDK on first call).

    Args:
        log_level: Level for the SDK's logging (to stderr): DEBUG, INFO, WARNING,
            ERROR or CRITICAL.
    """
    from mcp_notebook.demo._server import build_server as _build_server

    return _build_server(log_level=log_level)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point: serve the demo server over stdio (or HTTP with ``--http``).

    Args:
        argv: Command-line arguments, without the program name. Defaults to
            ``sys.argv[1:]``.

    Returns:
        The process exit code.
    """
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m mcp_notebook.demo",
        description="Serve the mcp-notebook-demo MCP server over stdio, or over HTTP with --http.",
    )
    parser.add_argument(
        "--legacy-only",
        action="store_true",
        help=(
            "serve only the legacy initialize-handshake protocol era; "
            "server/discover and 2026-07-28 requests are refused"
        ),
    )
    parser.add_argument(
        "--log-level",
        choices=["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"],
        default="WARNING",
        help="level of the server's log output, which goes to stderr (default: %(default)s)",
    )
    http = parser.add_argument_group(
        "HTTP",
        "serve over HTTP instead of stdio; the URL is printed to stdout as one line, MCP_HTTP_URL=<url>",
    )
    http.add_argument(
        "--http",
        type=int,
        metavar="PORT",
        help="serve Streamable HTTP at http://HOST:PORT/mcp (0 picks a free port)",
    )
    http.add_argument("--host", default="127.0.0.1", help="address to listen on (default: %(default)s)")
    http.add_argument(
        "--stateless",
        action="store_true",
        help="no legacy sessions: no Mcp-Session-Id, each POST served on its own (no server requests)",
    )
    http.add_argument(
        "--json-response", action="store_true", help="answer requests with JSON bodies instead of SSE streams"
    )
    http.add_argument(
        "--sse",
        action="store_true",
        help="serve the deprecated 2024-11-05 HTTP+SSE transport at /sse instead of Streamable HTTP",
    )
    http.add_argument(
        "--token",
        metavar="TOKEN",
        default=None,
        help=(
            "require 'Authorization: Bearer TOKEN' on every request, else answer 401 "
            f"(default: the environment variable {TOKEN_ENV}, if set)"
        ),
    )
    args = parser.parse_args(argv)
    token_given = args.token is not None
    if args.token is None:
        args.token = os.environ.get(TOKEN_ENV) or None
    http_only = [
        name
        for name, value in (
            ("--stateless", args.stateless),
            ("--json-response", args.json_response),
            ("--sse", args.sse),
            ("--token", token_given),
        )
        if value
    ]
    if args.http is None and http_only:
        parser.error(f"{', '.join(http_only)} needs --http PORT")
    if args.sse and (args.stateless or args.json_response):
        parser.error("--stateless and --json-response apply to Streamable HTTP, not to --sse")
    if args.http is not None and not 0 <= args.http <= 65535:
        parser.error("--http PORT must be between 0 and 65535")
    if args.http is not None and args.token is not None and not valid_token(args.token):
        parser.error("the token must be non-empty printable ASCII without spaces")

    try:
        if args.http is None:
            from mcp_notebook.demo._server import run_stdio

            run_stdio(legacy_only=args.legacy_only, log_level=args.log_level)
        else:
            from mcp_notebook.demo._server import run_http

            run_http(
                port=args.http,
                host=args.host,
                legacy_only=args.legacy_only,
                stateless=args.stateless,
                json_response=args.json_response,
                sse=args.sse,
                log_level=args.log_level,
                token=args.token,
            )
    except KeyboardInterrupt:
        return 130
    return 0
