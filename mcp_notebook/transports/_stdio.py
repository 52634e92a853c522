"""stdio transport: a server as a subprocess speaking newline-delimited JSON-RPC.

What it owns: starting the process (argv, env, cwd) as the root of a tree it can stop (its own
process group; on Windows a new process group in a Job Object: see :mod:`._tree`), framing stdout
into messages with a hard size limit, draining stderr into a bounded buffer (never inherited, so a
chatty server cannot fill a pipe and stall, nor write into a notebook), and stopping the process the
way the spec asks: close stdin, wait, SIGTERM the group, wait, SIGKILL the group (on Windows:
close stdin, wait, end the job). Processes that are still alive when the interpreter exits are
killed by an ``atexit`` hook, so nothing is orphaned.

What it must never do: log or repr the values of the environment passed to the server, or block
the event loop.
"""

from __future__ import annotations

import atexit
import collections
import logging
import os
import shlex
import signal
import sys
import threading
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.to_thread

from ..protocol._errors import McpError
from ..protocol._jsonrpc import FrameError, Message, decode, encode
from ..protocol._printable import printable
from ..protocol._secrets import Secrets
from ..protocol._versions import Era
from ._base import NotDelivered, OversizedFrame
from ._env import child_env
from ._pipes import PipeBroken, PipeClosed, Pipes, spawn
from ._program import missing_program, stand_in_interpreter
from ._tree import ProcessTree, spawn_options

__all__ = ["DEFAULT_MAX_MESSAGE_BYTES", "StdioTransport"]

logger = logging.getLogger("mcp_notebook.transports.stdio")

DEFAULT_MAX_MESSAGE_BYTES = 32 * 1024 * 1024
_READ_CHUNK = 256 * 1024
_HEAD_BYTES = 4096
_TAIL_BYTES = 512
_STDERR_LINE_LIMIT = 8192
#: How many of the last stdout lines that were not JSON-RPC are kept for the exit report, and how
#: much of each: a server that prints its usage and exits 0 says why only there.
_STDOUT_LINES = 5
_QUOTED_CHARS = 500
#: How long a failed read or write waits for the server's exit status and the rest of its stderr
#: before saying why the channel ended. The pipes close as the process exits, but the exit status
#: (a SIGCHLD, a watcher thread) and the last stderr bytes arrive by other routes, later under load:
#: without the wait a server that exits at start-up was sometimes reported as "closed its stdout".
_EXIT_GRACE = 2.0


class StdioTransport:
    """Run ``argv`` and talk to it over its stdin and stdout.

    The server inherits only an allow-list of this process's environment (``PATH``, ``HOME``, the
    locale, the temp dir and the like: see :mod:`mcp_notebook.transports._env`), so API keys in a
    kernel's environment do not reach it; ``env`` is added on top, and ``inherit_env=True`` passes
    the whole environment instead. ``env`` values are treated as secrets: they never appear in a
    repr, a log line or an error message, and (``secrets``) are masked wherever the server's text
    is shown, should it echo them: the stderr tail that error messages quote, its errors, logs and
    results.
    """

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        inherit_env: bool = False,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        stderr_lines: int = 200,
        shutdown_timeout: float = 2.0,
    ) -> None:
        argv = shlex.split(command) if isinstance(command, str) else [os.fspath(a) for a in command]
        if not argv:
            raise ValueError("command is empty: give the server's argv, e.g. ['python', '-m', 'my_server']")
        if env is not None and not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
            raise TypeError("env must map str to str")
        if max_message_bytes < 1024:
            raise ValueError(f"max_message_bytes={max_message_bytes} is too small (minimum 1024)")
        if stderr_lines < 0:
            raise ValueError(f"stderr_lines={stderr_lines} must be >= 0")
        if shutdown_timeout < 0:
            raise ValueError(f"shutdown_timeout={shutdown_timeout} must be >= 0")
        self.argv: list[str] = argv
        self._env = dict(env) if env else {}
        #: The env values, masked wherever the server's text is shown (the rule: protocol/_secrets).
        self.secrets = Secrets(self._env.values())
        self.cwd = os.fspath(cwd) if cwd is not None else None
        self.inherit_env = inherit_env
        self.max_message_bytes = max_message_bytes
        self.shutdown_timeout = shutdown_timeout
        #: How long the server gets after SIGTERM before SIGKILL.
        self.terminate_timeout = 2.0
        self._stderr: collections.deque[str] = collections.deque(maxlen=stderr_lines)
        self._stdout: collections.deque[str] = collections.deque(maxlen=_STDOUT_LINES)
        self.pid: int | None = None
        self.returncode: int | None = None
        self._told_stand_in = False

    def __repr__(self) -> str:
        env = f", env={{{', '.join(repr(k) + ': ***' for k in self._env)}}}" if self._env else ""
        return f"StdioTransport({shlex.join(self.argv)!r}{env})"

    def describe(self) -> str:
        return shlex.join(self.argv)

    def recent_stderr(self) -> list[str]:
        return list(self._stderr)

    def era_hint(self) -> tuple[Era, str] | None:
        return None

    def note_stray_stdout(self, line: bytes) -> None:
        """Keep (bounded) a stdout line that was not a message, for the exit report to quote."""
        text = line[: _QUOTED_CHARS * 4].decode(errors="replace").rstrip("\r")
        if text.strip():
            self._stdout.append(text)

    def mask_frame_error(self, error: FrameError) -> FrameError:
        """Mask env values in the bytes a skipped frame keeps for the log (a server may echo them)."""
        if self.secrets:
            error.head = self.secrets.mask_bytes(error.head)
        return error

    def _child_env(self) -> dict[str, str]:
        return child_env(os.environ, self._env, inherit_all=self.inherit_env, windows=sys.platform == "win32")

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[_StdioChannel]:
        pipes = await self._spawn()
        self.pid = pipes.pid
        self.returncode = None
        self._stdout.clear()
        tree = ProcessTree(pipes.pid)
        with _live_lock:
            _LIVE_TREES[pipes.pid] = tree
        channel = _StdioChannel(self, pipes)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._drain_stderr, pipes, channel.stderr_drained)
                try:
                    yield channel
                finally:
                    channel.stopping = True
                    with anyio.CancelScope(shield=True):
                        await self._stop(pipes, tree)
                    tg.cancel_scope.cancel()
        finally:
            with _live_lock:
                _LIVE_TREES.pop(pipes.pid, None)
            tree.release()

    async def _spawn(self) -> Pipes:
        env = self._child_env()
        try:
            return await spawn(self._program(env), cwd=self.cwd, env=env, options=spawn_options())
        except FileNotFoundError:
            raise missing_program(self.argv[0], self.cwd) from None
        except PermissionError:
            raise McpError(
                "transport", f"could not start the server: {self.argv[0]!r} is not executable"
            ) from None
        except OSError as exc:
            raise McpError(
                "transport", f"could not start the server {self.argv[0]!r}: {exc.strerror or exc}"
            ) from None

    def _program(self, env: dict[str, str]) -> list[str]:
        """``argv``, or with the running interpreter for a bare ``python`` the server's PATH
        lacks (see :mod:`._program`), said once in the log."""
        python = stand_in_interpreter(self.argv[0], env)
        if python is None:
            return self.argv
        if not self._told_stand_in:
            self._told_stand_in = True
            # INFO: what the command meant in nearly every case, and nothing to fix.
            logger.info(
                "%r is not on PATH: starting %s with the running interpreter, %s",
                self.argv[0],
                self.describe(),
                python,
            )
        return [python, *self.argv[1:]]

    async def _drain_stderr(self, pipes: Pipes, drained: anyio.Event) -> None:
        """Keep the server's stderr flowing into a bounded buffer; a stalled pipe would stall it."""
        partial = b""
        try:
            while chunk := await pipes.read_stderr(_READ_CHUNK):
                lines = (partial + chunk).split(b"\n")
                partial = lines.pop()[-_STDERR_LINE_LIMIT:]
                for line in lines:
                    self._stderr.append(line[:_STDERR_LINE_LIMIT].decode(errors="replace").rstrip("\r"))
            if partial:
                self._stderr.append(partial.decode(errors="replace"))
        finally:
            drained.set()

    async def _stop(self, pipes: Pipes, tree: ProcessTree) -> None:
        """Close stdin, wait, SIGTERM the group, wait, SIGKILL the group; always reap the process."""
        if pipes.returncode is None:
            with anyio.move_on_after(0.5):
                await pipes.close_stdin()
            with anyio.move_on_after(self.shutdown_timeout):
                await pipes.wait()
            for step, grace in ((tree.terminate, self.terminate_timeout), (tree.kill, None)):
                if pipes.returncode is not None:
                    break
                await _run_step(tree, step)
                if grace is None:
                    await pipes.wait()
                else:
                    with anyio.move_on_after(grace):
                        await pipes.wait()
        await _stop_leftovers(tree)
        self.returncode = pipes.returncode
        with anyio.move_on_after(1.0):
            await pipes.aclose()

    def exit_message(self, returncode: int | None) -> str:
        """Why the channel ended, quoting the last stdout lines that were not messages and the
        last stderr lines (escaped, each cut at 500 characters, env secrets masked)."""
        if returncode is None:
            what = "the server closed its stdout"
        elif returncode < 0:
            try:
                name = signal.Signals(-returncode).name
            except ValueError:
                name = str(-returncode)
            what = f"the server process was killed by {name}"
        else:
            what = f"the server process exited with code {returncode}"
        for name, lines in (("stdout", self._stdout), ("stderr", self._stderr)):
            tail = [line for line in lines if line.strip()][-5:]
            if tail:
                quoted = "\n  ".join(self._quote(line) for line in tail)
                what += f"; its last {name} lines:\n  {quoted}"
        return what

    def _quote(self, line: str) -> str:
        text = self.secrets.mask(line)
        cut = text[:_QUOTED_CHARS] + ("..." if len(text) > _QUOTED_CHARS else "")
        return printable(cut)


class _StdioChannel:
    """One running server process: framed reads from stdout, serialized writes to stdin."""

    hears_server = True
    routes_by_headers = False  # the server writes to our pipe whenever it likes

    def __init__(self, transport: StdioTransport, pipes: Pipes) -> None:
        self._transport = transport
        self._pipes = pipes
        self._limit = transport.max_message_bytes
        self._buffer = bytearray()
        self._frames: collections.deque[bytes | FrameError] = collections.deque()
        self._discarding = 0  # bytes of an oversized frame discarded so far (0 = not discarding)
        self._discard_head = b""
        self._discard_tail = b""
        #: Set when the server's stderr reached its end (everything it wrote is in the buffer).
        self.stderr_drained = anyio.Event()
        #: We are stopping the server: a failed write is our doing, with no exit worth waiting for.
        self.stopping = False

    @property
    def congested(self) -> bool:
        return self._pipes.congested

    async def send(self, message: dict[str, Any]) -> None:
        try:
            await self._pipes.write(encode(message) + b"\n")
        except PipeClosed:
            raise NotDelivered("could not write to the server: " + await self._exit_reason()) from None
        except PipeBroken:
            raise McpError(
                "transport",
                "the server stopped reading while we wrote to it: " + await self._exit_reason(),
                code=-32000,
            ) from None

    async def receive(self) -> Message | FrameError:
        while not self._frames:
            chunk = await self._pipes.read(_READ_CHUNK)
            if not chunk:
                raise McpError("transport", await self._exit_reason(), code=-32000)
            self._feed(chunk)
        frame = self._frames.popleft()
        if isinstance(frame, FrameError):
            return self._transport.mask_frame_error(frame)
        try:
            return decode(frame)
        except FrameError as exc:
            self._transport.note_stray_stdout(frame)
            return self._transport.mask_frame_error(exc)

    async def _exit_reason(self) -> str:
        """Why the pipes failed: the exit code and stderr tail once the process has ended.

        Called whichever of the reader and a writer sees the pipes fail first, so both report the
        same exit. Waits (at most ``_EXIT_GRACE``) for the exit status and the end of stderr; a
        server that closed its stdout but kept running is reported as such after the wait.
        """
        with anyio.move_on_after(0 if self.stopping else _EXIT_GRACE):
            await self._pipes.wait()
            await self.stderr_drained.wait()
        return self._transport.exit_message(self._pipes.returncode)

    def _feed(self, chunk: bytes) -> None:
        """Split a chunk into frames, discarding any frame past the size limit as it streams in."""
        start = 0
        if self._discarding:
            newline = chunk.find(b"\n")
            if newline < 0:
                self._discarding += len(chunk)
                self._discard_tail = (self._discard_tail + chunk[-_TAIL_BYTES:])[-_TAIL_BYTES:]
                return
            tail = (self._discard_tail + chunk[max(0, newline - _TAIL_BYTES) : newline])[-_TAIL_BYTES:]
            self._frames.append(
                OversizedFrame(self._discarding + newline, self._limit, self._discard_head, tail)
            )
            self._discarding = 0
            self._discard_head = self._discard_tail = b""
            start = newline + 1
        buffer = self._buffer
        limit = self._limit
        while True:
            newline = chunk.find(b"\n", start)
            if newline < 0:
                break
            if buffer:
                buffer += chunk[start:newline]
                line = bytes(buffer)
                buffer.clear()
            else:
                line = chunk[start:newline]
            start = newline + 1
            if len(line) > limit:
                self._frames.append(OversizedFrame(len(line), limit, line[:_HEAD_BYTES], line[-_TAIL_BYTES:]))
            elif line and not line.isspace():
                self._frames.append(line)
        rest = len(chunk) - start
        if len(buffer) + rest > limit:
            head = bytes(buffer[:_HEAD_BYTES]) + chunk[start : start + _HEAD_BYTES]
            self._discard_head = head[:_HEAD_BYTES]
            self._discard_tail = (bytes(buffer[-_TAIL_BYTES:]) + chunk[start:][-_TAIL_BYTES:])[-_TAIL_BYTES:]
            self._discarding = len(buffer) + rest
            buffer.clear()
        elif rest:
            buffer += chunk[start:]


# --- processes still alive at interpreter exit --------------------------------------------------

_LIVE_TREES: dict[int, ProcessTree] = {}
_live_lock = threading.Lock()


async def _run_step(tree: ProcessTree, step: Callable[[], None]) -> None:
    if tree.kill_blocks:  # Windows without a job: taskkill is a program run, not a signal
        await anyio.to_thread.run_sync(step)
    else:
        step()


async def _stop_leftovers(tree: ProcessTree) -> None:
    """Grandchildren that stayed in the server's tree (a wrapper script's child, say) go too.

    There is no event for "a process group became empty", so this checks a few times during a
    short grace period before it escalates to a kill.
    """
    if not tree.leftovers():
        return
    await _run_step(tree, tree.terminate)
    for _ in range(20):
        await anyio.sleep(0.025)
        if not tree.leftovers():
            return
    await _run_step(tree, tree.kill)


@atexit.register
def _kill_leftover_servers() -> None:
    """Stop servers of clients that were never closed, so none outlives the interpreter."""
    with _live_lock:
        trees = list(_LIVE_TREES.values())
        _LIVE_TREES.clear()
    if not trees:
        return
    for tree in trees:
        tree.terminate()
    import time  # at exit there is no event loop; a short blocking wait is the only option

    # Windows has no zombies to reap and no polite signal: terminate() already ended those trees.
    waiting = [tree for tree in trees if not tree.windows]
    deadline = time.monotonic() + 1.0
    while waiting and time.monotonic() < deadline:
        waiting = [tree for tree in waiting if not _reap(tree.pid)]
        if waiting:
            time.sleep(0.02)
    for tree in waiting:
        tree.kill()
        _reap(tree.pid)
    for tree in trees:
        tree.release()


def _reap(pid: int) -> bool:
    """True when ``pid`` is gone (reaped here or by someone else). POSIX only (``os.WNOHANG``)."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    except OSError:
        return True
    return done == pid
