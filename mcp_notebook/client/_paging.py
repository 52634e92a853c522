"""Every page of a list, within one deadline and one bound on the items kept.

A server decides how a list is cut into pages and how many there are. A walk that gives each page
its own timeout and keeps whatever comes waits and grows as long as the server likes: 1,000 pages
under ``list_tools(timeout=3)`` took 52 s, and 20,000 tools a page reached 2.5 GB (issue #35). So
one walk has one deadline for all its pages (the caller's ``timeout``, or the client's default)
and keeps at most ``max_items`` items (the ``max_list_items`` option); past either it raises an
McpError that says which, and drops what it read: a list cut short is never handed on, or cached,
as if it were whole. A cursor the server repeats ends the walk with the items read and a warning,
as it did before these bounds (the loop is caught; whether such a list is whole, the server alone knows).

Pure of any client state: the caller passes how one page is asked for, so the tool, resource,
template and prompt lists (:mod:`._live`) and ``tasks/list`` (:mod:`._calls`) walk alike.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from ..protocol._errors import REQUEST_TIMEOUT, McpError

__all__ = ["MAX_PAGES", "every_page"]

logger = logging.getLogger("mcp_notebook.live")

#: Pages one walk may take, however small: the deadline bounds a walk in time, but a caller may pass
#: ``timeout=math.inf``, and empty pages cost no items.
MAX_PAGES = 10_000

#: Asks for one page: ``(params, seconds left) -> result``.
AskPage = Callable[[dict[str, Any] | None, float], Awaitable[dict[str, Any]]]


async def every_page(
    ask: AskPage,
    method: str,
    key: str,
    *,
    timeout: float,
    max_items: int,
    on_page: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """The items (dicts) of every page of ``method``'s ``key`` list, all within ``timeout`` seconds.

    ``on_page(result)`` sees each page's result (for its ``ttlMs``). Raises McpError ``timeout``
    when the deadline passes before the last page, ``protocol`` past ``max_items`` items or
    :data:`MAX_PAGES` pages or for a page without the list; what was read is dropped either way.
    """
    deadline = anyio.current_time() + timeout
    items: list[dict[str, Any]] = []
    seen: set[str] = set()
    cursor: str | None = None
    for pages in range(MAX_PAGES):
        left = deadline - anyio.current_time()
        if left <= 0:
            raise _past_deadline(method, timeout, pages, len(items))
        try:
            result = await ask({"cursor": cursor} if cursor is not None else None, left)
        except McpError as exc:
            if exc.kind == "timeout" and pages:
                raise _past_deadline(method, timeout, pages, len(items)) from None
            raise
        page = result.get(key)
        if not isinstance(page, list):
            raise McpError("protocol", f"{method}: the result has no {key!r} list")
        if len(items) + len(page) > max_items:
            raise McpError(
                "protocol",
                f"{method}: the server listed more than {max_items:,} items (max_list_items) in "
                f"{pages + 1:,} page(s); the list was refused, not cut short: pass a larger "
                "max_list_items= to the client to accept it",
                data={"pages": pages + 1, "max_list_items": max_items},
            )
        items.extend(item for item in page if isinstance(item, dict))
        if on_page is not None:
            on_page(result)
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str) or not cursor:
            return items
        if cursor in seen:
            logger.warning("%s: the server repeated a cursor; stopping after %d items", method, len(items))
            return items
        seen.add(cursor)
    raise McpError(
        "protocol",
        f"{method}: the server sent more than {MAX_PAGES:,} pages ({len(items):,} items); the list "
        "was refused, not cut short",
        data={"pages": MAX_PAGES},
    )


def _past_deadline(method: str, timeout: float, pages: int, count: int) -> McpError:
    return McpError(
        "timeout",
        f"{method}: the deadline of {timeout:g}s for the whole list passed after {pages:,} page(s) "
        f"({count:,} items read, and dropped: the list is incomplete); pass a longer timeout=",
        code=REQUEST_TIMEOUT,
        data={"pages": pages},
    )
