"""Background work started on demand, in its owner's context rather than its trigger's.

An owner that starts a loop only when it first has work (an idle connection holds no parked task)
starts it from whichever task brought that work: a caller's ``call_tool``, a cell's ``start_tool``.
``start_soon`` copies the current context into the new task, so the loop would carry the trigger's
context variables for its whole life: the notebook's "which cell, which panel is this for" among
them, so a task's question asked later, while no cell runs, would go under the old cell instead of
the tasks panel. :class:`Home` records the owner's context where its own long-lived task runs and
starts each such loop from a copy of it, as if the owner had started the loop itself.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Coroutine
from typing import Any

import anyio.abc

__all__ = ["Home"]


class Home:
    """A task group and the context of the task that owns it; :meth:`start_soon` starts in both."""

    __slots__ = ("_context", "group")

    def __init__(self) -> None:
        self.group: anyio.abc.TaskGroup | None = None
        self._context: contextvars.Context | None = None

    def settle(self, group: anyio.abc.TaskGroup | None) -> None:
        """Called by the owner's own task: start in ``group``, in this task's context (None: stop)."""
        self.group = group
        self._context = contextvars.copy_context() if group is not None else None

    def start_soon(self, fn: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> bool:
        """Start ``fn(*args)`` in the owner's group and context; False when there is no group."""
        group, context = self.group, self._context
        if group is None or context is None:
            return False
        # A copy each time: a Context cannot be entered twice at once, and the owner's own task
        # may be the one asking.
        context.copy().run(lambda: group.start_soon(fn, *args))
        return True
