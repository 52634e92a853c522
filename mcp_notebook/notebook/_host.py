"""Which front end runs the cells (Jupyter, marimo, or none: a script), and what each one tells us.

Why one seam: the notebook layer needs four things from whatever runs the cells (is anyone there to
answer a dialog; which cell is running, and which run of it, so that a re-run ``connect()`` gets its
session back; how to put a dialog under the cell whose call asked for it, from the engine thread;
when the notebook's kernel goes away, so its sessions close). IPython and marimo answer each
differently. Everything else asks here, so no other module of the layer knows about marimo, and the
IPython side stays where it was (:mod:`._uipoll` keeps the kernel's message pump and Busy status).

Cheap and optional: nothing here imports IPython or marimo. Each is looked up in ``sys.modules``,
so a process that has not imported one is not running in it (a marimo kernel imported ``marimo``
long before any cell ran), and a Jupyter kernel or a script never loads marimo.

marimo's answers come from its runtime context (thread-local: the kernel thread that runs the
cells has one, the engine thread has none): the running cell is ``context.execution_context``, a
new one per run of a cell. A dialog is written under the cell as ``mo.Thread`` does it, from a copy
of the context fixed to that cell (:func:`cell_writer`). In ``marimo run`` every browser session is a
kernel thread of the one server process; its sessions are closed when that thread ends
(:func:`on_kernel_end`).
"""

from __future__ import annotations

import itertools
import logging
import sys
import threading
import weakref
from collections.abc import Callable
from typing import Any, Literal

from . import _uipoll

__all__ = [
    "cell_run",
    "cell_writer",
    "close_with_kernel",
    "front_end",
    "in_notebook",
    "on_kernel_end",
    "user_namespace",
]

logger = logging.getLogger("mcp_notebook.notebook")

FrontEnd = Literal["jupyter", "marimo"]


def front_end() -> FrontEnd | None:
    """The front end whose kernel runs this thread's code: "jupyter", "marimo", or None (a script,
    a plain Python shell, or a thread neither kernel knows)."""
    if _uipoll.in_kernel():
        return "jupyter"
    if _marimo_context() is not None:
        return "marimo"
    return None


def in_notebook() -> bool:
    """True in a notebook kernel of any front end: someone may be there to answer a dialog."""
    return front_end() is not None


def user_namespace() -> dict[str, Any]:
    """The notebook's variables (IPython's ``user_ns``, marimo's kernel globals), or ``{}``: where a
    panel looks up the name the user gave a session, to write code that runs as shown."""
    ipython = sys.modules.get("IPython")
    get_ipython = getattr(ipython, "get_ipython", None)
    shell = get_ipython() if callable(get_ipython) else None
    namespace = getattr(shell, "user_ns", None)
    if namespace is None:
        context = _marimo_context()
        namespace = getattr(context, "globals", None) if context is not None else None
    return namespace if isinstance(namespace, dict) else {}


# --- the running cell ----------------------------------------------------------------------------


class _Run:
    """One run of a marimo cell: equal only to itself while that run lasts (marimo makes a new
    execution context for every run of a cell; an ended run's context is gone, so it equals none)."""

    __slots__ = ("_context",)

    def __init__(self, execution_context: Any) -> None:
        self._context = weakref.ref(execution_context)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Run):
            return NotImplemented
        mine = self._context()
        return mine is not None and mine is other._context()

    def __hash__(self) -> int:
        return id(self._context())

    def __repr__(self) -> str:
        return f"<marimo cell run {'ended' if self._context() is None else 'running'}>"


def cell_run() -> tuple[Any, Any] | None:
    """``(cell, run)`` of the marimo cell running on this thread, or None (not in marimo: the
    Jupyter side reads its kernel's execute request, see :mod:`._once`).

    ``cell`` is the kernel and marimo's cell id (stable across runs and edits of the cell), ``run``
    this run. The kernel is part of it because ``marimo run`` serves every browser session from a
    kernel thread of one process, each with the same notebook's cell ids: two viewers of an app
    are two notebooks, and the second one's connect cell must not get the first one's session."""
    context = _marimo_context()
    execution = getattr(context, "execution_context", None) if context is not None else None
    cell_id = getattr(execution, "cell_id", None)
    if execution is None or cell_id is None:
        return None
    return ("marimo-cell", _kernel_number(), str(cell_id)), _Run(execution)


#: A number for each marimo kernel thread seen (one per browser session in ``marimo run``).
_kernels: weakref.WeakKeyDictionary[threading.Thread, int] = weakref.WeakKeyDictionary()
_kernels_lock = threading.Lock()
_serials = itertools.count()


def _kernel_number() -> int:
    thread = threading.current_thread()
    with _kernels_lock:
        number = _kernels.get(thread)
        if number is None:
            number = _kernels[thread] = next(_serials)
        return number


def cell_writer() -> Callable[[Any], None] | None:
    """On the thread of a running marimo cell: a function that appends an object to THAT cell's
    output, callable from any thread (the engine's) for as long as the cell runs. None elsewhere
    (Jupyter's ``display()`` finds its running cell by itself; a script has no cell).

    Built as ``mo.Thread`` builds its context: a copy of the kernel's context whose stream is a
    thread-safe copy and whose execution context is the cell's, so what is written goes to that
    cell and to its accumulated output."""
    context = _marimo_context()
    execution = getattr(context, "execution_context", None) if context is not None else None
    if execution is None:
        return None
    try:
        import dataclasses

        from marimo._runtime.context.types import ExecutionContext
        from marimo._runtime.output import _output

        copy = dataclasses.replace(context)
        copy.stdout = None  # marimo's standard streams are not thread-safe
        copy.stderr = None
        copy.stream = context.stream.copy_for_thread()
        copy.execution_context = ExecutionContext(
            cell_id=execution.cell_id, setting_element_value=False, output=execution.output
        )
    except Exception:  # another marimo than the one this was written for: no dialog under the cell
        logger.debug("could not take marimo's cell context", exc_info=True)
        return None

    def write(value: Any) -> None:
        with copy.install():
            _output.append(value)

    return write


# --- the kernel's end ----------------------------------------------------------------------------

#: The callbacks to call when each watched marimo kernel thread ends, by the thread.
_at_kernel_end: dict[threading.Thread, list[Callable[[], None]]] = {}
_at_kernel_end_lock = threading.Lock()


def on_kernel_end(callback: Callable[[], None]) -> bool:
    """Call ``callback()`` (on a thread of its own) when the marimo kernel running this thread ends,
    if that kernel is a thread of a longer-lived process (``marimo run`` runs each browser session's
    kernel as a thread of the server, which outlives it). Returns whether it will.

    A kernel that is a process of its own (``marimo edit``, Jupyter) ends with its process, where
    :mod:`._engine`'s exit hooks close every session."""
    thread = threading.current_thread()
    if thread is threading.main_thread() or _marimo_context() is None:
        return False
    with _at_kernel_end_lock:
        callbacks = _at_kernel_end.get(thread)
        if callbacks is not None:
            callbacks.append(callback)
            return True
        _at_kernel_end[thread] = [callback]

    def wait_for_end() -> None:
        thread.join()  # a blocking wait on the kernel thread's end, not a poll
        with _at_kernel_end_lock:
            ended = _at_kernel_end.pop(thread, [])
        for ending in ended:
            try:
                ending()
            except Exception:
                logger.exception("closing what an ended marimo kernel opened failed")

    threading.Thread(target=wait_for_end, name="mcp-notebook-marimo-kernel-end", daemon=True).start()
    return True


def close_with_kernel(closeable: Any) -> None:
    """Close ``closeable`` (a session, a group: anything with ``close()``) when the marimo kernel
    thread that opened it ends (see :func:`on_kernel_end`); held weakly, so one closed and dropped
    before is not kept alive for it."""
    if "marimo" not in sys.modules:
        return
    ref = weakref.ref(closeable)

    def close() -> None:
        found = ref()
        if found is not None:
            found.close()

    on_kernel_end(close)


# --- marimo --------------------------------------------------------------------------------------


def _marimo_context() -> Any:
    """marimo's runtime context of this thread when it is a notebook kernel's (``marimo edit``,
    ``marimo run``), else None. Never imports marimo: not loaded means not running in it."""
    if "marimo" not in sys.modules:
        return None
    try:
        from marimo._runtime.context.kernel_context import KernelRuntimeContext
        from marimo._runtime.context.types import safe_get_context

        context = safe_get_context()
    except Exception:  # another marimo than the one this was written for
        return None
    return context if isinstance(context, KernelRuntimeContext) else None
