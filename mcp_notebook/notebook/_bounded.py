"""A bounded log that grows in place: the model's ``history`` (issue #28).

Why not a list replaced on every append (how the model's other lists change): the history holds up
to 10,000 entries and grows once per call, so copying it to add one made every call O(n). Here an
append is O(1) (a ``deque`` with ``maxlen``) and the model tells its observers itself (the trait's
value stays the same object; see ``SessionModel.append``).

Readers keep the list's reading surface: ``len``, indexing (ends in O(1)), slicing (a list),
iteration, ``==`` against any sequence, ``repr``. The engine thread appends while the kernel's
thread reads, so every read that walks the entries takes a snapshot under a lock first: a reader
never sees "deque mutated during iteration", and never holds the lock while its own code runs.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, overload

from traitlets import TraitType

__all__ = ["BoundedLog", "BoundedLogTrait"]

_Row = dict[str, Any]


class BoundedLog(Sequence[_Row]):
    """The newest ``maxlen`` entries, oldest first."""

    def __init__(self, entries: Iterable[_Row] = (), *, maxlen: int = 10_000) -> None:
        self._items: deque[_Row] = deque(entries, maxlen=max(1, maxlen))
        self._lock = threading.Lock()
        #: Entries ever appended (also those the bound dropped since).
        self.appended = 0

    @property
    def maxlen(self) -> int:
        return self._items.maxlen or 0

    def append(self, entry: _Row) -> None:
        with self._lock:
            self._items.append(entry)
            self.appended += 1

    def snapshot(self) -> list[_Row]:
        """A list of the entries now, oldest first (one copy, taken under the lock)."""
        with self._lock:
            return list(self._items)

    def tail(self, count: int, keep: Callable[[_Row], bool] | None = None) -> list[_Row]:
        """The newest ``count`` entries (those ``keep`` accepts), newest first, walking back only as
        far as needed: what a view of the last calls reads at every redraw."""
        found: list[_Row] = []
        with self._lock:
            for entry in reversed(self._items):
                if keep is None or keep(entry):
                    found.append(entry)
                    if len(found) >= count:
                        break
        return found

    def __len__(self) -> int:
        return len(self._items)

    @overload
    def __getitem__(self, index: int) -> _Row: ...
    @overload
    def __getitem__(self, index: slice) -> list[_Row]: ...
    def __getitem__(self, index: int | slice) -> _Row | list[_Row]:
        if isinstance(index, slice):
            return self.snapshot()[index]
        with self._lock:
            return self._items[index]

    def __iter__(self) -> Iterator[_Row]:
        return iter(self.snapshot())

    def __reversed__(self) -> Iterator[_Row]:
        return reversed(self.snapshot())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, BoundedLog):
            return self is other or self.snapshot() == other.snapshot()
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return self.snapshot() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, like a list

    def __repr__(self) -> str:
        return repr(self.snapshot())


class BoundedLogTrait(TraitType[BoundedLog, Any]):
    """A trait holding a :class:`BoundedLog`; assigning any iterable of entries (``model.history =
    []``) makes a new log bounded by the owner's ``max_<name>``."""

    default_value = None
    info_text = "a bounded log of entries"

    def validate(self, obj: Any, value: Any) -> BoundedLog:
        if isinstance(value, BoundedLog):
            return value
        if isinstance(value, Iterable) and not isinstance(value, str | bytes | dict):
            limit = int(getattr(obj, f"_max_{self.name}", 10_000))
            return BoundedLog(list(value)[-limit:], maxlen=limit)
        self.error(obj, value)
