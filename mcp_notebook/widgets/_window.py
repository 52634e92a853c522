"""A bounded window over a long list: a search box, "‹ 1–50 of 20,000 tools ›" and paging.

Why: a panel that draws every item of a server's list does not scale. The explorer drew one row of
three widgets per tool: 20,000 tools took 11.7 s and 60,000 widget models, 200,000 never finished
(issue #35); a Dropdown of 200,000 resources sends them all to the browser on every change. A
panel shows :data:`PAGE_SIZE` items at a time instead, the rest one search or one page away, and
reuses the same widgets for whatever the window holds: the number of live widget models stays flat
however long the list is and however often one pages or searches (DESIGN.md's rule).

:class:`Window` owns the search box, the paging bar and the filtering; it knows nothing of what an
item looks like. The panel gives it the items, how each reads for the search (``text_of``), and a
callback that draws the window's items into the panel's own fixed set of rows.

A search is case-insensitive and matches items holding every word typed (as the explorer's search
always did); the lowercased text of each item is made once per list, on the first search, so
typing into a 200,000-item list costs one pass over strings, not one per item and keystroke.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from ..display._html import counted
from . import _ui as W
from ._buttons import set_enabled
from ._lean import lean

__all__ = ["PAGE_SIZE", "Window"]

#: How many items a panel draws at a time.
PAGE_SIZE = 50

_T = TypeVar("_T")


class Window(Generic[_T]):
    """A search box (``search``), a paging bar (``bar``: previous, ``label``, next) and the
    window of matching items they choose; ``on_window(items)`` draws it (from the thread that
    changed the list, the search or the page)."""

    def __init__(
        self,
        *,
        noun: str,
        text_of: Callable[[_T], str],
        on_window: Callable[[list[_T]], None],
        size: int = PAGE_SIZE,
        css: str = "mcpnb-window",
        compact: bool = False,
    ) -> None:
        self.noun = noun
        self.size = max(int(size), 1)
        self._text_of = text_of
        self._on_window = on_window
        self._lock = threading.RLock()
        self._items: list[_T] = []
        self._texts: list[str] | None = None  # lowercased, made on the first search of a list
        self._matches: list[_T] = []
        #: The index (in the matches) of the first item shown.
        self.start = 0
        #: Hide the search box too while every item fits in one page (a list that is rarely long).
        self.compact = compact
        if compact:  # its own layout: it is hidden and shown
            self.search = W.Text(placeholder=f"search {noun}s", layout=W.Layout(width="auto", display="none"))
        else:
            self.search = lean(W.Text, {"width": "auto"}, placeholder=f"search {noun}s")
        self.search.add_class(f"{css}-search")
        self.search.observe(lambda _: self._searched(), names="value")
        self.previous = lean(W.Button, {"width": "2.5em"}, icon="chevron-left", tooltip="previous page")
        self.previous.add_class(f"{css}-previous")
        self.previous.on_click(lambda _: self.turn(-1))
        self.next = lean(W.Button, {"width": "2.5em"}, icon="chevron-right", tooltip="next page")
        self.next.add_class(f"{css}-next")
        self.next.on_click(lambda _: self.turn(1))
        self.label = lean(W.Label)
        self.label.add_class(f"{css}-range")
        # its own layout: it is hidden while every item fits in one page
        self.bar = W.HBox(
            [self.previous, self.label, self.next], layout=W.Layout(align_items="center", display="none")
        )
        self.bar.add_class(css)

    # --- what is shown --------------------------------------------------------------------------

    @property
    def items(self) -> list[_T]:
        """Every item, in order."""
        return self._items

    @property
    def matches(self) -> list[_T]:
        """The items the search matches, in order."""
        return self._matches

    @property
    def window(self) -> list[_T]:
        """The items shown now."""
        with self._lock:
            return self._matches[self.start : self.start + self.size]

    def set_items(self, items: Sequence[_T]) -> None:
        """A new list (the server's changed): the same search, the same page where it still exists."""
        with self._lock:
            self._items = list(items)
            self._texts = None
            self._matches = self._filter()
        self._draw()

    def turn(self, pages: int) -> None:
        """Show the page ``pages`` after (negative: before) this one, within the matches."""
        with self._lock:
            last = max((len(self._matches) - 1) // self.size * self.size, 0)
            self.start = min(max(self.start + pages * self.size, 0), last)
        self._draw()

    def reveal(self, found: Callable[[_T], bool], *, clear_search: bool = True) -> _T | None:
        """Page to the first item ``found`` accepts (clearing a search that hides it, unless
        ``clear_search`` is false); the item, or None when it is not shown."""
        with self._lock:
            index = next((n for n, item in enumerate(self._matches) if found(item)), None)
            if index is None and clear_search and any(found(item) for item in self._items):
                self.search.value = ""  # draws the whole list; the page is set below
                index = next((n for n, item in enumerate(self._matches) if found(item)), None)
            if index is None:
                return None
            if not self.start <= index < self.start + self.size:
                self.start = index // self.size * self.size
                self._draw()
            return self._matches[index]

    def widgets(self) -> list[W.Widget]:
        """Every widget this window made (for closing)."""
        return [self.search, self.previous, self.label, self.next, self.bar]

    # --- inside ---------------------------------------------------------------------------------

    def _filter(self) -> list[_T]:
        words = self.search.value.strip().lower().split()
        if not words:
            return self._items
        if self._texts is None:
            self._texts = [self._text_of(item).lower() for item in self._items]
        return [
            item for item, text in zip(self._items, self._texts, strict=True) if all(w in text for w in words)
        ]

    def _searched(self) -> None:
        with self._lock:
            self._matches = self._filter()
            self.start = 0
        self._draw()

    def _draw(self) -> None:
        with self._lock:
            total = len(self._matches)
            if self.start >= total:
                self.start = max((total - 1) // self.size * self.size, 0)
            shown = self.window
            self.label.value = self._range(len(shown), total)
            paged = total > self.size
            set_enabled(self.previous, self.start > 0, tip="previous page", why="this is the first page")
            more = self.start + self.size < total
            set_enabled(self.next, more, tip="next page", why="this is the last page")
            display = "" if paged or self.search.value.strip() else "none"
            if self.bar.layout.display != display:
                self.bar.layout.display = display
            if self.compact and self.search.layout.display != display:
                self.search.layout.display = display
        self._on_window(shown)

    def _range(self, shown: int, total: int) -> str:
        """``1–50 of 20,000 tools`` (``of 3 matching``, while a search is typed)."""
        searching = bool(self.search.value.strip())
        if not total:
            return f"no matching {self.noun}s" if searching else f"no {self.noun}s"
        whole = f"{total:,} matching" if searching else counted(total, self.noun)
        return f"{self.start + 1:,}–{self.start + shown:,} of {whole}"
