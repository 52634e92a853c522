"""A budget for the log records a server can cause one message at a time.

Why it exists: a server that prints a million junk lines on stdout would otherwise cost a million
WARNING records, and with no logging configured Python's last-resort handler prints every one of
them into the notebook cell. What the user needs is to know it happens and how often; the exact
counts are the connection's (``ConnectionStats``), kept whatever is logged.

What it owns: for one logger of one connection, how many records of each *kind* (a short name
such as ``"bad frame"``) were shown in full and how many were held back since the last summary.

The rule, per kind: the first ``burst`` records are logged in full; the rest are only counted, and
at most one summary record per ``interval`` tells the counts of every kind held back (at the
highest level among them). A kind with nothing held back during a whole interval gets its burst
again, so a server that misbehaves once a day still gets each incident in full. ``close`` logs a
final summary when anything is still untold.

What it must never do: block or sleep on the caller's path (``log`` is synchronous and O(1)), read
a clock other than the one it was given (tests drive it with a fake one), or hold a message's text
beyond the record it logs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import anyio
import anyio.abc

from ._home import Home

__all__ = ["LogBudget"]

#: Records of each kind logged in full before they are only counted.
BURST = 5
#: Seconds between two summaries of what was held back.
INTERVAL = 10.0


class LogBudget:
    """Rate-limit one logger's per-message records for one connection (see the module docstring).

    ``budget.log(logging.WARNING, "bad frame", "skipped a line (%s)", reason)`` logs like
    ``logger.log`` would, within the budget. ``where`` names the connection in summaries; ``noun``
    names what was held back (``"warnings"``) and ``hint`` is appended to every summary.
    """

    __slots__ = (
        "_burst",
        "_clock",
        "_end",
        "_hint",
        "_home",
        "_interval",
        "_level",
        "_logger",
        "_noun",
        "_shown",
        "_start",
        "_summarizing",
        "_suppressed",
        "_wake",
        "_where",
    )

    def __init__(
        self,
        logger: logging.Logger,
        clock: Callable[[], float],
        *,
        where: Callable[[], str],
        noun: str = "records",
        hint: str = "",
        burst: int = BURST,
        interval: float = INTERVAL,
    ) -> None:
        if burst < 0:
            raise ValueError(f"burst={burst} must be >= 0")
        if not interval > 0:
            raise ValueError(f"interval={interval} must be > 0")
        self._logger = logger
        self._clock = clock
        self._where = where
        self._noun = noun
        self._hint = hint
        self._burst = burst
        self._interval = interval
        self._shown: dict[str, int] = {}  # kind -> records logged in full in this episode
        self._suppressed: dict[str, int] = {}  # kind -> records held back since the last summary
        self._level = logging.NOTSET  # the highest level held back since the last summary
        self._start = 0.0  # when the current interval began
        self._end: float | None = None  # when it ends; None while no interval is open
        self._wake: anyio.Event | None = None  # set when a summary becomes due (see run)
        self._home = Home()  # where summaries start their task (attach)
        self._summarizing = False  # has that task been started and not ended?

    @property
    def suppressed(self) -> dict[str, int]:
        """Records held back since the last summary, by kind (a copy)."""
        return dict(self._suppressed)

    def log(self, level: int, kind: str, msg: str, *args: Any, **kwargs: Any) -> None:
        """``logger.log(level, msg, *args, **kwargs)`` if ``kind`` has budget left, else count it."""
        if not self._logger.isEnabledFor(level):
            return  # nobody would see it: neither logged nor counted
        now = self._clock()
        if self._end is None:
            self._start, self._end = now, now + self._interval
        elif now >= self._end:
            self._roll(now)
            if self._end is None:
                self._start, self._end = now, now + self._interval
        shown = self._shown.get(kind, 0)
        if shown < self._burst:
            self._shown[kind] = shown + 1
            self._logger.log(level, msg, *args, stacklevel=2, **kwargs)
            return
        self._suppressed[kind] = self._suppressed.get(kind, 0) + 1
        if level > self._level:
            self._level = level
        if self._wake is not None:
            self._wake.set()
        elif not self._summarizing:
            self._summarizing = self._home.start_soon(self._summarize_while_held)

    def due(self) -> float | None:
        """When the next summary is due (clock time), or None when nothing is held back."""
        return self._end if self._suppressed else None

    def tick(self) -> None:
        """Log the summary if its interval has ended (``run`` calls this; tests may too)."""
        if self._end is not None:
            now = self._clock()
            if now >= self._end:
                self._roll(now)

    def close(self) -> None:
        """The connection is closing: tell what is still held back, and start afresh."""
        if self._suppressed:
            self._summarize(self._clock())
        self._shown = {}
        self._suppressed = {}
        self._level = logging.NOTSET
        self._end = None

    def attach(self, group: anyio.abc.TaskGroup | None) -> None:
        """Log each summary when its interval ends, from a task started in ``group`` only while
        something is held back (None detaches: the group is ending, and its task with it).

        Why not :meth:`run`: a budget that is never exceeded (nearly all of them) then costs no
        task at all, where ``run`` keeps one idle task per budget for the connection's lifetime.
        """
        self._home.settle(group)  # in the owner's task: its summaries start in its context
        if group is None:
            self._summarizing = False

    async def _summarize_while_held(self) -> None:
        try:
            while (due := self.due()) is not None:
                await anyio.sleep(max(0.0, due - self._clock()))
                self.tick()
        finally:
            self._summarizing = False

    async def run(self) -> None:
        """Log each summary when its interval ends, not only when the next record comes.

        Runs until cancelled (in a task group of the connection's); idle while nothing is held back.
        """
        while True:
            due = self.due()
            if due is None:
                self._wake = anyio.Event()
                try:
                    await self._wake.wait()
                finally:
                    self._wake = None
                continue
            await anyio.sleep(max(0.0, due - self._clock()))
            self.tick()

    def _roll(self, now: float) -> None:
        """An interval ended: summarise it; kinds held back stay limited, the others get their burst."""
        if not self._suppressed:
            self._shown = {}
            self._end = None
            return
        self._summarize(now)
        self._shown = dict.fromkeys(self._suppressed, self._burst)
        self._suppressed = {}
        self._level = logging.NOTSET
        self._start, self._end = now, now + self._interval

    def _summarize(self, now: float) -> None:
        counts = " and ".join(f"{count:,} more {kind!r}" for kind, count in self._suppressed.items())
        elapsed = max(0.0, now - self._start)
        self._logger.log(
            self._level,
            "%s: suppressed %s %s in the last %s%s",
            self._where(),
            counts,
            self._noun,
            f"{elapsed:.0f} s" if elapsed >= 1 else f"{elapsed:.1f} s",
            self._hint,
        )
