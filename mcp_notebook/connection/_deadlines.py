"""One task that times out every pending request of a connection, instead of a timer per request.

Why: a deadline scope per request costs a timer handle and two cancel-scope transitions on every
call, which measured as a third of the client's throughput with 100 calls in flight. Here each
request is one heap entry; the sweeper sleeps until the earliest deadline, expires what is due,
and looks again. Deadlines that move (progress extends one, a human-in-the-loop handler pauses
them all) need no heap surgery: an entry that pops early is pushed again at the request's current
deadline, and a paused request (deadline = infinity) is watched again when it resumes.

Entries of finished requests are dropped lazily, and the heap is rebuilt when they outnumber the
live ones, so it stays proportional to what is in flight.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Iterable

import anyio

from ._pending import PendingRequest

__all__ = ["DeadlinePause", "DeadlineSweeper"]

_COMPACT_SLACK = 64


class DeadlineSweeper:
    def __init__(self, clock: Callable[[], float], live_count: Callable[[], int]) -> None:
        self._clock = clock
        self._live_count = live_count
        self._heap: list[tuple[float, int, PendingRequest]] = []
        self._order = itertools.count()
        self._target = math.inf
        self._wakeup = anyio.Event()

    def watch(self, pending: PendingRequest) -> None:
        """Start (or resume) timing ``pending`` against its current deadline."""
        deadline = pending.deadline
        if deadline == math.inf or pending.outcome is not None:
            return  # paused, or already answered (during its own send, say): nothing to time
        heap = self._heap
        live = self._live_count()
        # Drop the entries of finished requests, never anyone else's: the live count alone does
        # not say which request is the live one.
        if live <= 1 and len(heap) == 1 and heap[0][2].outcome is not None:
            heap.clear()  # one call at a time: the previous call's entry (no list to build)
        elif (live <= 1 and heap) or (len(heap) > _COMPACT_SLACK and len(heap) > 2 * live):
            self._heap = heap = [entry for entry in heap if entry[2].outcome is None]
            heapq.heapify(heap)
        heapq.heappush(heap, (deadline, next(self._order), pending))
        if deadline < self._target:
            self._wakeup.set()

    def forget_finished(self) -> None:
        """The pending map is empty (no caller awaits a request): drop every entry now.

        Why: entries are otherwise dropped when the next request is watched, and after a burst
        (a thousand calls at once, then nothing) that left each finished request's shell and its
        heap entry alive until the next call, a per-request record kept after the request ended:
        hundreds of KB that the heap showed as growth from one batch of calls to the next.
        """
        del self._heap[:]  # every watched request is in the pending map until its caller is done

    async def run(self) -> None:
        """Expire requests as their deadlines pass; runs until cancelled with its connection."""
        while True:
            self._target = self._expire_due(self._clock())
            self._wakeup = anyio.Event()
            with anyio.move_on_at(self._target):
                await self._wakeup.wait()

    def _expire_due(self, now: float) -> float:
        """Expire what is due; the next deadline to wake for. (Not inline in :meth:`run`: a local
        reference to the heap or a request held across its wait would keep them alive after
        :meth:`watch` replaced the heap or :meth:`forget_finished` emptied it.)"""
        heap = self._heap
        while heap and heap[0][0] <= now:
            _, _, pending = heapq.heappop(heap)
            if pending.outcome is not None:
                continue
            if pending.deadline <= now:
                pending.expire()
            elif pending.deadline != math.inf:
                heapq.heappush(heap, (pending.deadline, next(self._order), pending))
        return heap[0][0] if heap else math.inf


class DeadlinePause:
    """Stops every request's clock while a person answers (a human-in-the-loop handler, a sign-in).

    Pauses nest: the deadlines run again when the last one ends. A request sent while paused
    starts paused (the router asks :attr:`paused`). ``pending`` lists the requests waiting now and
    ``sweeper`` is the current channel's sweeper, which watches each resumed request again.
    """

    __slots__ = ("_clock", "_pending", "_sweeper", "paused")

    def __init__(
        self,
        clock: Callable[[], float],
        pending: Callable[[], Iterable[PendingRequest]],
        sweeper: Callable[[], DeadlineSweeper | None],
    ) -> None:
        self._clock = clock
        self._pending = pending
        self._sweeper = sweeper
        self.paused = 0

    def pause(self) -> None:
        self.paused += 1
        if self.paused == 1:
            now = self._clock()
            for pending in self._pending():
                pending.pause(now)

    def resume(self) -> None:
        self.paused -= 1
        if self.paused == 0:
            now = self._clock()
            sweeper = self._sweeper()
            for pending in self._pending():
                pending.resume(now)
                if sweeper is not None:
                    sweeper.watch(pending)

    def hold(self) -> Callable[[], None]:
        """Pause now; the returned function (idempotent) resumes."""
        self.pause()
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                self.resume()

        return release
