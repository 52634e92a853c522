"""Real MCP servers over HTTP, each in its own process on a free localhost port, for the HTTP tests.

Context managers (usable from sync and async tests alike; starting blocks for about a second):

``sdk_http(era, *, stateless=False, json_response=False, sse=False)``
    Our demo server on the official Python SDK (``mcp`` 2.3.0): ``python -m mcp_notebook.demo
    --http 0``. ``era="modern"`` is the SDK's dual-era server (a request stamped
    ``MCP-Protocol-Version: 2026-07-28`` is served statelessly in the modern era, an
    ``initialize`` opens a legacy session); ``era="legacy"`` adds ``--legacy-only`` (a modern
    request gets ``400`` with a plain legacy error). ``stateless``/``json_response`` are the SDK's
    options, ``sse`` serves the deprecated 2024-11-05 HTTP+SSE transport (URL ends in ``/sse``).
``everything_http("streamableHttp" | "sse")``
    npm ``@modelcontextprotocol/server-everything`` (TypeScript SDK 1.x, 2025-11-25 only):
    ``node .../dist/index.js streamableHttp`` (``/mcp``; sessions, resumable event store) or
    ``node .../dist/index.js sse`` (``GET /sse``, POSTs to ``/message?sessionId=...``). It
    takes its port from the ``PORT`` environment variable and listens on all interfaces.
``tasks_http()``
    ``tests/servers/tasks_server.py --http``: fastmcp with the ``fastmcp-tasks`` extension (the
    2026-07-28 tasks flavour; see its docstring).
``fault_http(*args)``
    ``tests/servers/http_fault_server.py`` (see its docstring): yields a :class:`FaultPeer`,
    whose ``set(...)``, ``forget()``, ``reset()``, ``seen()`` and ``state()`` drive the server's
    ``/_admin`` endpoints.

Each yields an :class:`HttpPeer` (``.url``, ``.process``, ``.output()``) and stops the process
on exit: SIGTERM to its process group, SIGKILL after a few seconds. A server that does not come
up fails the test with its output. Python servers are ready when they print
``MCP_HTTP_URL=<url>``; node servers (which print nothing usable) once the OS shows the
process listening on the port picked for it.

Fixtures: ``http_peer`` (parametrize it indirectly with names from :data:`HTTP_PEERS`) and
``fault_server``. Both depend on ``no_leaked_processes``, so they also check that nothing
outlives the test. To use them, import their functions into the test module (the names differ,
so ruff sees no redefinition)::

    from tests.http_peers import http_peer_fixture, fault_server_fixture  # noqa: F401
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx
import psutil
import pytest

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
FAULT_SERVER = TESTS / "servers" / "http_fault_server.py"
EVERYTHING_JS = TESTS / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
URL_PREFIX = "MCP_HTTP_URL="
START_TIMEOUT = 20.0
STOP_TIMEOUT = 5.0

EVERYTHING_PATHS = {"streamableHttp": "/mcp", "sse": "/sse"}


@dataclass
class HttpPeer:
    """One running HTTP server process."""

    name: str
    url: str
    process: subprocess.Popen[bytes]
    argv: list[str]
    _lines: list[str] = field(default_factory=list, repr=False)

    @property
    def origin(self) -> str:
        """``http://host:port`` of :attr:`url`."""
        parsed = httpx.URL(self.url)
        return f"{parsed.scheme}://{parsed.netloc.decode('ascii')}"

    def output(self) -> str:
        """Everything the process wrote so far, stdout and stderr interleaved line by line."""
        return "".join(self._lines)


class FaultPeer(HttpPeer):
    """The fault server, with its ``/_admin`` endpoints as methods."""

    def _admin(self, method: str, action: str, body: dict[str, Any] | None = None) -> Any:
        response = httpx.request(method, f"{self.origin}/_admin/{action}", json=body, timeout=10)
        response.raise_for_status()
        return response.json()

    def set(self, **switches: Any) -> dict[str, Any]:
        """Change switches (``modern``, ``drop``, ``drop_times``, ``drop_after``, ``retry_ms``,
        ``unauthorized``, ``token``, ``redirect``, ``redirect_status``); returns the new state."""
        result: dict[str, Any] = self._admin("POST", "set", switches)
        return result

    def forget(self) -> int:
        """Forget every session (a restart, as far as clients can tell); returns how many."""
        return int(self._admin("POST", "forget")["forgotten"])

    def reset(self) -> dict[str, Any]:
        """Switches back to the command line's; sessions and records cleared."""
        result: dict[str, Any] = self._admin("POST", "reset")
        return result

    def state(self) -> dict[str, Any]:
        """``{"switches": {...}, "port": n, "other_port": n, "sessions": n}``."""
        result: dict[str, Any] = self._admin("GET", "state")
        return result

    def seen(self) -> dict[str, Any]:
        """``{"requests": [...], "cancelled": [...], "dropped": [...]}`` (see the server's docstring)."""
        result: dict[str, Any] = self._admin("GET", "seen")
        return result

    def requests(self, **match: Any) -> list[dict[str, Any]]:
        """The recorded MCP HTTP requests whose fields equal ``match`` (e.g. ``rpc_method="tools/call"``)."""
        return [r for r in self.seen()["requests"] if all(r.get(k) == v for k, v in match.items())]


# ------------------------------------------------------------------------ processes


def _drain(stream: Any, lines: list[str], tag: str, on_line: Callable[[str | None], None] | None) -> None:
    """Read ``stream`` to EOF (so the process never blocks on a full pipe), keeping its lines."""
    try:
        with contextlib.suppress(ValueError, OSError):
            for raw in iter(stream.readline, b""):
                line = raw.decode("utf-8", "replace")
                lines.append(f"[{tag}] {line}" if line.endswith("\n") else f"[{tag}] {line}\n")
                if on_line is not None:
                    on_line(line.rstrip("\r\n"))
    finally:
        if on_line is not None:
            on_line(None)  # EOF: whoever waits for a line stops waiting


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the process's group, SIGKILL if it is still there after STOP_TIMEOUT.

    The group is only signalled while its leader is known not to be reaped, so its id cannot
    have been reused by then.
    """
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(STOP_TIMEOUT)


@dataclass
class _Running:
    """A started process whose stdout and stderr are being drained by two threads."""

    process: subprocess.Popen[bytes]
    lines: list[str]
    announced: threading.Event  # set once stdout printed the URL line, or reached EOF
    url: list[str]  # the printed URL, once there is one
    readers: list[threading.Thread]

    def settle(self) -> None:
        """After a failed start: give the process and the readers a moment to finish its output."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(1.0)
        for reader in self.readers:
            reader.join(1.0)


@contextlib.contextmanager
def _spawn(name: str, argv: list[str], env: dict[str, str] | None = None) -> Iterator[_Running]:
    """Start ``argv`` in its own process group with both pipes drained; stop it on exit."""
    lines: list[str] = []
    announced = threading.Event()
    url: list[str] = []

    def on_stdout(line: str | None) -> None:
        if line is None:
            announced.set()
        elif line.startswith(URL_PREFIX) and not url:
            url.append(line[len(URL_PREFIX) :].strip())
            announced.set()

    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=ROOT,
            env={**os.environ, **(env or {})},
            start_new_session=True,  # so stopping it can signal its whole process group
        )
    except FileNotFoundError:
        process = None
    if process is None:
        pytest.fail(f"HTTP peer {name} cannot start: {argv[0]!r} is not on PATH", pytrace=False)
    readers = [
        threading.Thread(target=_drain, args=(process.stdout, lines, "out", on_stdout), daemon=True),
        threading.Thread(target=_drain, args=(process.stderr, lines, "err", None), daemon=True),
    ]
    for reader in readers:
        reader.start()
    try:
        yield _Running(process, lines, announced, url, readers)
    finally:
        _stop(process)
        for reader in readers:
            reader.join(STOP_TIMEOUT)
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()


def _failed(name: str, why: str, running: _Running) -> None:
    running.settle()
    output = "".join(running.lines[-60:]) or "(no output)\n"
    pytest.fail(f"HTTP peer {name} {why}. Its output:\n{output}", pytrace=False)


@contextlib.contextmanager
def _python_peer(name: str, argv: list[str], peer_class: type[HttpPeer] = HttpPeer) -> Iterator[Any]:
    """A server of ours that prints ``MCP_HTTP_URL=<url>`` once it accepts connections."""
    with _spawn(name, argv) as running:
        if not running.announced.wait(START_TIMEOUT):
            _failed(name, f"printed no {URL_PREFIX} line within {START_TIMEOUT:g}s", running)
        if not running.url:
            code = running.process.poll()
            _failed(name, f"closed its stdout (exit code {code}) without printing its URL", running)
        yield peer_class(name, running.url[0], running.process, argv, running.lines)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for_port(process: subprocess.Popen[bytes], port: int, timeout: float) -> bool:
    """Poll until ``process`` itself listens on ``port`` (True), or it exits or time runs out.

    Asks the OS which sockets the process listens on rather than connecting to the port: a
    connection could be accepted by whoever else holds the port while our server dies of
    EADDRINUSE.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        try:
            sockets = psutil.Process(process.pid).net_connections(kind="inet")
        except psutil.Error:
            sockets = []
        if any(c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port for c in sockets):
            return True
        time.sleep(0.05)
    return False


# --------------------------------------------------------------------------- peers


def sdk_http(
    era: Literal["modern", "legacy"] = "modern",
    *,
    stateless: bool = False,
    json_response: bool = False,
    sse: bool = False,
) -> contextlib.AbstractContextManager[HttpPeer]:
    """Our demo server (official Python SDK) over HTTP; see the module docstring."""
    if era not in ("modern", "legacy"):
        raise ValueError(f"era must be 'modern' or 'legacy', not {era!r}")
    args = ["--http", "0"]
    if era == "legacy":
        args.append("--legacy-only")
    if stateless:
        args.append("--stateless")
    if json_response:
        args.append("--json-response")
    if sse:
        args.append("--sse")
    name = "-".join(["sdk", era, *(a.lstrip("-") for a in args[2:] if a != "--legacy-only")])
    return _python_peer(name, [sys.executable, "-m", "mcp_notebook.demo", *args])


def fault_http(*args: str) -> contextlib.AbstractContextManager[FaultPeer]:
    """The fault server with these command-line flags (e.g. ``"--modern"``, ``"--drop", "end"``)."""
    return _python_peer("fault", [sys.executable, str(FAULT_SERVER), *args], FaultPeer)


def tasks_http() -> contextlib.AbstractContextManager[HttpPeer]:
    """The fastmcp tasks server (modern tasks extension) over Streamable HTTP."""
    return _python_peer("tasks", [sys.executable, str(TESTS / "servers" / "tasks_server.py"), "--http"])


@contextlib.contextmanager
def everything_http(mode: Literal["streamableHttp", "sse"] = "streamableHttp") -> Iterator[HttpPeer]:
    """npm server-everything over HTTP on a free port; see the module docstring."""
    if mode not in EVERYTHING_PATHS:
        raise ValueError(f"mode must be one of {sorted(EVERYTHING_PATHS)}, not {mode!r}")
    if not EVERYTHING_JS.exists():
        pytest.fail(f"{EVERYTHING_JS} is missing: run `npm ci --prefix tests` (the .ci/run script does)")
    name = f"everything-{mode}"
    argv = ["node", str(EVERYTHING_JS), mode]
    for attempt in range(3):  # the free port may be taken between our probe and node's listen
        port = _free_port()
        with _spawn(name, argv, env={"PORT": str(port)}) as running:
            process = running.process
            if _wait_for_port(process, port, START_TIMEOUT):
                url = f"http://127.0.0.1:{port}{EVERYTHING_PATHS[mode]}"
                yield HttpPeer(name, url, process, argv, running.lines)
                return
            if process.poll() is None:
                _failed(name, f"did not listen on port {port} within {START_TIMEOUT:g}s", running)
            # Most likely the port was taken after all: the streamableHttp server then says so and
            # exits 1, the sse one says it is running and exits 0. Either way, another port.
            if attempt == 2:
                _failed(name, f"exited with code {process.returncode} before listening (3 tries)", running)


HTTP_PEERS: dict[str, Callable[[], contextlib.AbstractContextManager[HttpPeer]]] = {
    "sdk-modern": lambda: sdk_http("modern"),
    "sdk-modern-json": lambda: sdk_http("modern", json_response=True),
    "sdk-legacy": lambda: sdk_http("legacy"),
    "sdk-legacy-json": lambda: sdk_http("legacy", json_response=True),
    "sdk-legacy-stateless": lambda: sdk_http("legacy", stateless=True),
    "sdk-sse": lambda: sdk_http("legacy", sse=True),
    "everything-streamableHttp": lambda: everything_http("streamableHttp"),
    "everything-sse": lambda: everything_http("sse"),
    "tasks": tasks_http,
    "fault": lambda: fault_http(),
    "fault-modern": lambda: fault_http("--modern"),
}
"""Named peers for ``@pytest.mark.parametrize("http_peer", [...names...], indirect=True)``."""


@pytest.fixture(name="http_peer")
def http_peer_fixture(request: pytest.FixtureRequest, no_leaked_processes: None) -> Iterator[HttpPeer]:
    """The peer named by the (indirect) parameter, running for the test."""
    with HTTP_PEERS[request.param]() as peer:
        yield peer


@pytest.fixture(name="fault_server")
def fault_server_fixture(no_leaked_processes: None) -> Iterator[FaultPeer]:
    """The fault server with its default switches (legacy, well-behaved until told otherwise)."""
    with fault_http() as peer:
        yield peer
