"""Letting a dialog be answered while a cell waits in a blocking call.

A cell that runs ``session.call_tool(...)`` blocks the kernel's main thread until the call returns.
Jupyter delivers a button click as a comm message on the shell channel, and the kernel handles those
on that same main thread: without help the click waits for the call, and the call (whose server asked
for an elicitation or a sample) waits for the click, until the handler times out.

So while a dialog is open anywhere in the process, a session's blocking call waits here instead
(:func:`call`): every 20 ms it lets the kernel handle the comm messages that arrived (widget clicks
and edits) and keeps every other message (a queued cell, say) for the kernel to handle after the
cell, in the order received. While no dialog is open it blocks like :meth:`Engine.call`, with no
polling and no added latency: the dialog wakes the waiting thread when it opens.

How comm messages are handled, by kernel:

- ipykernel 7: the main shell's messages come from the shell-channel thread over an in-process
  ZMQ stream that only the main thread reads. While polling, the stream's receive callback is ours:
  pyzmq's public ``ZMQStream.flush`` reads what is pending and calls it; it dispatches a comm message
  at once (through the kernel's own ``shell_handlers``, with the message as the output parent) and
  hands every other message to the kernel's callback, which schedules it exactly as it would have.
- ipykernel 6: the same, on the kernel's shell stream (read by the main thread there).
- anything else: jupyter-ui-poll's ``ui_events()`` when it is installed and the kernel still has
  ``do_one_iteration`` (jupyter-ui-poll 1.1 calls that method and silently does nothing on
  ipykernel 7, which removed it, hence the approach above).

Outside a kernel, or off the kernel's main thread, nothing is polled (nothing needs to be: a
script's dialogs are not widgets, and a thread's wait does not block the main thread).

An ``async`` cell (``await session.acall_tool(...)``) needs none of this on ipykernel 7, which
dispatches comm messages while an async cell awaits.

The first blocking call in a kernel also installs :class:`_BusyKeeper`, which keeps the kernel's
status Busy while a cell runs: requests served beside it (JupyterLab's subshell requests on the
control channel, a subshell's widget messages) publish their own Idle, which the front end showed.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from ._engine import Engine

__all__ = [
    "call",
    "dialog_closed",
    "dialog_opened",
    "dialogs_open",
    "in_kernel",
    "keep_kernel_busy",
    "running_kernel",
    "ui_poller",
    "wait",
]

logger = logging.getLogger("mcp_notebook.widgets")

T = TypeVar("T")

_COMM_MESSAGES = frozenset({"comm_open", "comm_msg", "comm_close"})
_POLL_INTERVAL = 0.02  # seconds between two looks at the kernel's messages while a dialog is open
_POLL_BATCH = 20  # messages handled per look at most

_lock = threading.Lock()
_open = 0
_wakers: set[threading.Event] = set()
_busy_kept = False  # the kernel's status keeper is installed (keep_kernel_busy)


# --- open dialogs -------------------------------------------------------------------------------


def dialog_opened() -> None:
    """A dialog waits for the user: blocked calls start handling widget messages."""
    global _open
    with _lock:
        _open += 1
        wakers = list(_wakers)
    for event in wakers:
        event.set()


def dialog_closed() -> None:
    global _open
    with _lock:
        _open = max(0, _open - 1)
        wakers = list(_wakers)
    for event in wakers:
        event.set()


def dialogs_open() -> int:
    """How many dialogs wait for an answer, in the whole process."""
    return _open


# --- the kernel ---------------------------------------------------------------------------------


def running_kernel() -> Any:
    """The running ipykernel, or None (IPython is never imported here: no IPython, no kernel)."""
    ipython_module = sys.modules.get("IPython")
    if ipython_module is None:
        return None
    try:
        shell = ipython_module.get_ipython()
    except Exception:
        return None
    return getattr(shell, "kernel", None) if shell is not None else None


def in_kernel() -> bool:
    """True inside a Jupyter kernel (an IPython shell with a kernel), from any thread."""
    return running_kernel() is not None


def _main_shell_stream(kernel: Any) -> Any:
    """The ZMQ stream the kernel's main thread reads shell messages from, or None."""
    if getattr(kernel, "_supports_kernel_subshells", False):
        # ipykernel 7: the shell-channel thread forwards the main shell's messages over this pair.
        manager = getattr(getattr(kernel, "shell_channel_thread", None), "manager", None)
        pair = getattr(manager, "_shell_channel_to_main", None)
        return getattr(pair, "to_stream", None)
    return getattr(kernel, "shell_stream", None)


class _StreamPoller:
    """Handles the comm messages waiting on the main shell stream; keeps the rest in order."""

    def __init__(self, kernel: Any, stream: Any) -> None:
        import zmq

        self._pollin = zmq.POLLIN
        self._kernel = kernel
        self._stream = stream
        self._original = stream._recv_callback
        self._original_copy = stream._recv_copy
        stream.on_recv(self._received, copy=False)

    def poll(self, limit: int = _POLL_BATCH) -> None:
        self._stream.flush(self._pollin, limit)

    def close(self) -> None:
        self._stream.on_recv(self._original, copy=self._original_copy)

    def _received(self, frames: list[Any]) -> Any:
        kernel = self._kernel
        session = kernel.session
        try:
            # A peek (content=False) does not record the signature, so the kernel can still
            # deserialize what is not ours; the full read below records it, as the kernel would.
            idents, rest = session.feed_identities(frames, copy=False)
            kind = session.deserialize(rest, content=False, copy=False)["header"]["msg_type"]
        except Exception:
            kind = None
        if kind not in _COMM_MESSAGES:
            # Not ours: the kernel's own callback schedules it, to run after the cell, in order.
            return self._original(frames) if self._original is not None else None
        try:
            message = session.deserialize(rest, content=True, copy=False)
        except Exception:
            logger.exception("an invalid widget message arrived while a dialog was open")
            return None
        handler = kernel.shell_handlers.get(kind)
        if handler is None:
            return None
        parent_ident = kernel._parent_ident["shell"]
        parent = kernel.get_parent("shell")
        kernel.set_parent(idents, message, channel="shell")
        try:
            outcome = handler(self._stream, idents, message)
            if hasattr(outcome, "close"):  # a coroutine: comm handlers are plain functions today
                outcome.close()
                logger.warning("the kernel's %s handler is async; the message was dropped", kind)
        except Exception:
            logger.exception("a widget message raised while a dialog was open")
        finally:
            kernel.set_parent(parent_ident, parent, channel="shell")
        return None


class _UiPollAdapter:
    """jupyter-ui-poll's ``ui_events()`` for kernels that still have ``do_one_iteration``."""

    def __init__(self) -> None:
        from jupyter_ui_poll import ui_events

        self._context = ui_events()
        self._poll = self._context.__enter__()

    def poll(self, limit: int = _POLL_BATCH) -> None:
        self._poll(limit)

    def close(self) -> None:
        self._context.__exit__(None, None, None)


@contextlib.contextmanager
def ui_poller() -> Iterator[Callable[[int], None] | None]:
    """``poll(n)`` that handles up to ``n`` pending widget messages; None where impossible.

    Only on the kernel's main thread, inside ``with``: leaving it restores the kernel as it was.
    """
    poller: Any = None
    kernel = running_kernel() if threading.current_thread() is threading.main_thread() else None
    if kernel is not None:
        stream = _main_shell_stream(kernel)
        try:
            if stream is not None and hasattr(stream, "_recv_callback"):
                poller = _StreamPoller(kernel, stream)
            elif hasattr(kernel, "do_one_iteration"):
                poller = _UiPollAdapter()
        except ImportError:
            poller = None
        except Exception:
            logger.exception("cannot handle widget messages while waiting; dialogs may not answer")
            poller = None
    try:
        yield poller.poll if poller is not None else None
    finally:
        if poller is not None:
            poller.close()


# --- the kernel's busy status -------------------------------------------------------------------


class _BusyKeeper:
    """Keeps the kernel's status Busy for as long as a cell runs on the main shell (issue #29).

    Why: JupyterLab (4.5+, comms over subshells) sends ``create_subshell_request`` on the control
    channel when a cell's first widget opens (a call's progress bar), and a widget's messages go to
    that subshell's thread. ipykernel publishes Busy then Idle around each of those requests, and
    the front end shows the last status it got, whoever's it is: so a cell blocked in a 5 s call
    showed Busy for 0.5 s, then Idle. Those statuses cannot be held back (the front end waits for
    a request's Idle to finish it), so the keeper publishes Busy again, for the running cell, right
    after any other request's Idle while the cell runs: the last status is the cell's.

    It wraps the kernel's ``_publish_status`` once per kernel; the main shell's own Busy and Idle
    (on the main thread) say when a cell runs.
    """

    def __init__(self, kernel: Any) -> None:
        self._kernel = kernel
        self._lock = threading.Lock()
        self._original = kernel._publish_status
        # Installed from a cell (on the main thread): that cell is running now.
        current = (
            kernel.get_parent("shell") if threading.current_thread() is threading.main_thread() else None
        )
        self._running: Any = current if _msg_type(current) == "execute_request" else None
        kernel._publish_status = self._publish_status

    def _publish_status(self, status: str, channel: str, parent: Any = None) -> Any:
        outcome = self._original(status, channel, parent)
        try:
            self._follow(status, channel, parent)
        except Exception:  # never break the kernel's own messages
            logger.debug("could not keep the kernel's status busy", exc_info=True)
        return outcome

    def _follow(self, status: str, channel: str, parent: Any) -> None:
        main = threading.current_thread() is threading.main_thread() and channel == "shell"
        with self._lock:
            if main:
                request = parent or self._kernel.get_parent("shell")
                if _msg_type(request) == "execute_request":
                    self._running = request if status == "busy" else None
                return
            running = self._running
        if status == "idle" and running is not None:
            self._original("busy", "shell", running)


def _msg_type(message: Any) -> str | None:
    header = message.get("header") if isinstance(message, dict) else None
    return header.get("msg_type") if isinstance(header, dict) else None


def keep_kernel_busy() -> None:
    """Keep the kernel Busy while a cell runs (see :class:`_BusyKeeper`); once per kernel, from
    any thread; nothing outside a kernel."""
    global _busy_kept
    kernel = running_kernel()
    if kernel is None or not hasattr(kernel, "_publish_status"):
        return
    with _lock:
        if not hasattr(kernel, "_mcpnb_busy_keeper"):
            try:
                kernel._mcpnb_busy_keeper = _BusyKeeper(kernel)
            except Exception:
                logger.debug("could not watch the kernel's status", exc_info=True)
        _busy_kept = True


# --- waiting ------------------------------------------------------------------------------------


def wait(future: concurrent.futures.Future[T]) -> T:
    """``future.result()``, handling widget messages while any dialog is open."""
    wake = threading.Event()
    future.add_done_callback(lambda _done: wake.set())
    with _lock:
        _wakers.add(wake)
    try:
        while not future.done():
            if not _open:
                wake.wait()
                wake.clear()
                continue
            with ui_poller() as poll:
                while not future.done() and _open:
                    if poll is not None:
                        poll(_POLL_BATCH)
                    wake.wait(_POLL_INTERVAL)
                    wake.clear()
        return future.result()
    finally:
        with _lock:
            _wakers.discard(wake)


def call(engine: Engine, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
    """:meth:`Engine.call`, waiting with :func:`wait` on the kernel's main thread."""
    if threading.current_thread() is not threading.main_thread() or not in_kernel():
        return engine.call(fn, *args)  # (the engine's thread is never the main thread)
    if not _busy_kept:
        keep_kernel_busy()
    return engine.call(fn, *args, wait=wait)
