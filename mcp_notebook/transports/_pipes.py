"""A child process's three pipes, behind one small interface, with a fast path on asyncio.

Why two implementations: anyio's process streams add a scheduling round (a checkpoint) to every
write, and the stdio channel writes once per request. On a pipelined connection that round is
most of the client's cost (measured: it halves calls per second against a minimal server). On
asyncio, which is what Jupyter and almost every user runs, the stream writer's ``write`` is
synchronous and ``drain`` only waits when the pipe is actually full, so :class:`AsyncioPipes` uses
them directly. :class:`AnyioPipes` serves every other anyio backend (trio) unchanged.

Both return ``b""`` at end of output. A failed write says how far it got, because the connection
resends only what provably never left: :class:`PipeClosed` when stdin was already gone before the
write began (nothing written), :class:`PipeBroken` when it broke during the write (some or all of the
bytes may already be in the child's hands).
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import anyio
import anyio.abc

from ._base import on_asyncio

__all__ = ["AnyioPipes", "AsyncioPipes", "PipeBroken", "PipeClosed", "Pipes", "spawn"]

_WRITE_HIGH_WATER = 256 * 1024


class PipeClosed(Exception):
    """The child's stdin was gone before this write began: none of its bytes were written."""


class PipeBroken(Exception):
    """The child's stdin broke during this write: the child may have read some or all of it."""


class Pipes(Protocol):
    pid: int

    @property
    def congested(self) -> bool:
        """True when ``write`` may wait for the child to read."""
        ...

    @property
    def returncode(self) -> int | None: ...

    async def write(self, data: bytes) -> None: ...

    async def read(self, max_bytes: int) -> bytes: ...

    async def read_stderr(self, max_bytes: int) -> bytes: ...

    async def close_stdin(self) -> None: ...

    async def wait(self) -> int: ...

    async def aclose(self) -> None: ...


async def spawn(
    argv: Sequence[str], *, cwd: str | None, env: Mapping[str, str], options: Mapping[str, Any]
) -> Pipes:
    """Start ``argv`` with piped stdin/stdout/stderr (raises OSError like subprocess does).

    ``options`` are further process-creation keywords (a new session, Windows creation flags).
    """
    if on_asyncio():
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=dict(env),
            **options,
        )
        return AsyncioPipes(process)
    anyio_process = await anyio.open_process(
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=dict(env),
        **options,
    )
    return AnyioPipes(anyio_process)


class AsyncioPipes:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        assert process.stderr is not None
        self._process = process
        self._stdin = process.stdin
        self._stdout = process.stdout
        self._stderr = process.stderr
        self._outbox: list[bytes] = []
        self._pending_bytes = 0
        self.pid = process.pid

    @property
    def returncode(self) -> int | None:
        return self._process.returncode

    @property
    def congested(self) -> bool:
        return self._stdin.transport.get_write_buffer_size() + self._pending_bytes > _WRITE_HIGH_WATER

    async def write(self, data: bytes) -> None:
        """Queue ``data``; frames queued in one loop iteration go out in one system call.

        Waits for the child to read only when the pipe was congested before this write began: a
        caller that saw ``congested`` False bounds nothing by its deadline, so its write must not
        wait (a child that stopped reading would hold it forever). A large frame into an idle
        pipe is therefore queued whole, and the writers after it find the pipe congested and wait
        under their own deadlines: memory stays bounded by one frame past the high-water mark.
        """
        stdin = self._stdin
        if stdin.is_closing():
            raise PipeClosed
        congested = self.congested
        self._outbox.append(data)
        self._pending_bytes += len(data)
        if len(self._outbox) == 1:
            asyncio.get_running_loop().call_soon(self._flush)
        if congested:
            self._flush()
            try:
                await stdin.drain()
            except (ConnectionError, RuntimeError) as exc:
                # The frames were handed to the OS before the pipe broke: the child may have read
                # them (and acted on them, and died of them), so they are not "unsent".
                raise PipeBroken from exc

    def _flush(self) -> None:
        if not self._outbox:
            return
        data = self._outbox[0] if len(self._outbox) == 1 else b"".join(self._outbox)
        self._outbox.clear()
        self._pending_bytes = 0
        if not self._stdin.is_closing():
            self._stdin.write(data)

    async def read(self, max_bytes: int) -> bytes:
        try:
            return await self._stdout.read(max_bytes)
        except (ConnectionError, OSError):
            return b""

    async def read_stderr(self, max_bytes: int) -> bytes:
        try:
            return await self._stderr.read(max_bytes)
        except (ConnectionError, OSError):
            return b""

    async def close_stdin(self) -> None:
        """Close stdin once what we wrote is out; a child that does not read it in time loses it.

        The wait is shielded: cancelling ``wait_closed()`` itself would cancel the future asyncio
        later resolves when the pipe goes, and asyncio then logs an ``InvalidStateError``. When our
        caller gives up first, the pipe is aborted instead, which resolves that future at once.
        """
        self._flush()
        stdin = self._stdin
        if stdin.is_closing():
            return
        stdin.close()
        closed = asyncio.ensure_future(stdin.wait_closed())
        closed.add_done_callback(_consume)
        try:
            await asyncio.shield(closed)
        except (ConnectionError, OSError):
            pass
        finally:
            if not closed.done():
                stdin.transport.abort()

    async def wait(self) -> int:
        return await self._process.wait()

    async def aclose(self) -> None:
        await self.close_stdin()
        # Closing the read transports releases the file descriptors even if a grandchild keeps
        # the other ends of the pipes open.
        for stream in (self._stdout, self._stderr):
            transport = getattr(stream, "_transport", None)
            if transport is not None:
                transport.close()
        await self._process.wait()


def _consume(future: asyncio.Future[None]) -> None:
    """Retrieve a finished future's exception, so asyncio does not report it as never retrieved."""
    if not future.cancelled():
        future.exception()


class AnyioPipes:
    def __init__(self, process: anyio.abc.Process) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        assert process.stderr is not None
        self._process = process
        self._stdin = process.stdin
        self._stdout = process.stdout
        self._stderr = process.stderr
        self._write_lock = anyio.Lock()
        self.pid = process.pid

    #: Writes go through anyio's stream, which may wait: always bound them by the deadline.
    congested = True

    @property
    def returncode(self) -> int | None:
        return self._process.returncode

    async def write(self, data: bytes) -> None:
        if self._process.returncode is not None:
            raise PipeClosed  # the child has exited and been reaped: nothing can reach it
        try:
            async with self._write_lock:  # other backends refuse concurrent sends on one stream
                await self._stdin.send(data)
        except anyio.ClosedResourceError as exc:
            raise PipeClosed from exc  # closed on our side before this write: nothing went out
        except (anyio.BrokenResourceError, OSError) as exc:
            raise PipeBroken from exc  # the write itself failed, possibly part-way

    async def read(self, max_bytes: int) -> bytes:
        return await _receive(self._stdout, max_bytes)

    async def read_stderr(self, max_bytes: int) -> bytes:
        return await _receive(self._stderr, max_bytes)

    async def close_stdin(self) -> None:
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await self._stdin.aclose()

    async def wait(self) -> int:
        return await self._process.wait()

    async def aclose(self) -> None:
        await self._process.aclose()


async def _receive(stream: anyio.abc.ByteReceiveStream, max_bytes: int) -> bytes:
    try:
        return await stream.receive(max_bytes)
    except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        return b""
