"""Live state: cached lists kept fresh, coalesced change notifications, managed subscriptions, events.

One :class:`LiveState` runs beside each connection (in the client's task group) and owns:

* the four :class:`~mcp_notebook.client._cache.CachedList` objects, fetched on demand (or eagerly), and
  refreshed when the server announces a change or the connection comes back;
* the coalescing of ``list_changed`` bursts: the first notification of a burst is delivered at once,
  the rest of the burst collapses into one trailing delivery per window, and each list is re-fetched
  at most once per ``min_refresh_interval`` however hard the server floods;
* resource subscriptions: ``resources/subscribe`` on a legacy server; on a modern one the
  ``subscriptions/listen`` stream, opened from the union of what is wanted, replaced by a new
  stream (acknowledged first, then the old one closed) when that changes, re-opened after a drop;
* the queues behind ``client.notifications()`` and the telemetry hook ``client.on_event()``.

Everything it hears from the connection arrives through quick synchronous listeners that only set
flags and events; the work (fetching, re-subscribing, calling user callbacks) happens in its own
tasks, so neither the reader nor the caller ever runs it inline.
"""

from __future__ import annotations

import collections
import functools
import inspect
import logging
import math
import random
import time
from collections.abc import Callable
from typing import Any, Literal

import anyio
import anyio.abc

from ..connection import (
    Connection,
    ConnectionEvent,
    ConnectionOptions,
    ConnectionState,
    Home,
    NotificationQueue,
)
from ..protocol._envelope import META_SUBSCRIPTION_ID
from ..protocol._errors import METHOD_NOT_FOUND, McpError
from ..protocol._headers import split_by_header_rules
from ..protocol._jsonrpc import Notification, RequestId
from ._cache import KINDS, CachedList, Freshness, ListKind, ttl_of
from ._paging import every_page

__all__ = ["Event", "LiveState"]

logger = logging.getLogger("mcp_notebook.live")
event_log = logging.getLogger("mcp_notebook.events")

_ACK_TIMEOUT = 10.0
_MAX_LISTENS = 4
_EVENT_BACKLOG = 10_000
#: A listen stream that broke after being up this long starts a fresh count of failures.
_SHORT_LIVED = 5.0
#: After the server ends a listen stream gracefully (its ``complete`` result), listen again after
#: this pause (the SSE default reconnection time): the server closed it on purpose, which is no
#: failure and never backs off, but a server that does it at once must not get a request storm.
_RELISTEN_DELAY = 1.0

#: What an event hook gets; the same object the connection emits.
Event = ConnectionEvent


def _lists_by_notice() -> dict[str, tuple[str, ...]]:
    by_notice: dict[str, tuple[str, ...]] = {}
    for name, kind in KINDS.items():
        by_notice[kind.notification] = (*by_notice.get(kind.notification, ()), name)
    return by_notice


#: The lists each ``list_changed`` notification invalidates (the two resource lists share one).
_CHANGED_KINDS = _lists_by_notice()


#: The era rules (protocol._negotiation.EraRules) the live lists ask; the era itself is never compared here.
_Rule = Literal[
    "routes_tools_by_header",
    "lists_carry_ttl",
    "announces_list_changes",
    "subscribes_per_resource",
    "listens_for_changes",
]


class _Listen:
    """One ``subscriptions/listen`` stream."""

    def __init__(self, wanted: dict[str, Any]) -> None:
        self.filter = wanted
        self.id: RequestId | None = None
        self.honoured: dict[str, Any] | None = None
        self.error: McpError | None = None
        self.scope: anyio.CancelScope | None = None
        self.acked = anyio.Event()
        self.settled = anyio.Event()  # acknowledged or ended
        self.ended = anyio.Event()
        self.opened_at = 0.0
        self.ended_at = math.inf
        #: Ended because the whole connection went down (the reconnect re-opens it, no backoff).
        self.with_connection = False

    def close(self) -> None:
        if self.scope is not None:
            self.scope.cancel()


class _Backlog:
    """The events recorded for the hooks and not yet dispatched, and the event that says so."""

    __slots__ = ("events", "ready")

    def __init__(self) -> None:
        self.events: collections.deque[Event] = collections.deque(maxlen=_EVENT_BACKLOG)
        self.ready = anyio.Event()


class LiveState:
    def __init__(
        self,
        connection: Connection,
        converters: dict[str, Callable[[dict[str, Any]], Any]],
        *,
        options: ConnectionOptions | None = None,
        eager: bool = False,
        window: float = 0.25,
        min_refresh_interval: float = 1.0,
    ) -> None:
        if window < 0 or min_refresh_interval < 0:
            raise ValueError("list_changed_window and min_refresh_interval must be >= 0")
        self._conn = connection
        #: The lists' deadline (``timeout``) and bound (``max_list_items``).
        self._options = options or ConnectionOptions()
        self._converters = converters
        self._eager = eager
        self._window = window
        self._min_interval = min_refresh_interval
        self._lists: dict[str, CachedList[Any]] = {}
        for name, kind in KINDS.items():
            entry: CachedList[Any] = CachedList(kind, anyio.current_time)
            entry.watch_with(functools.partial(self._watched, kind))
            self._lists[name] = entry
        #: Change notices whose window is open (a trailing delivery ends it), and those of them
        #: that came again in it (the trailing delivery is due).
        self._windows: set[str] = set()
        self._dirty: set[str] = set()
        # A refresh's event is made with the first one (an event holds close to 1 KB of heap, and
        # most connections never see a change).
        self._want: dict[str, anyio.Event] = {}
        self._asked: set[str] = set()  # lists someone fetched: those are kept fresh
        self._unlimited: set[str] = set()  # lists whose next refresh skips the rate limit
        #: How many times each list was fetched by this layer (refreshes, not caller fetches).
        self.refreshes: dict[str, int] = dict.fromkeys(KINDS, 0)
        self._queues: list[NotificationQueue] = []
        self._event_hooks: list[Callable[[Event], Any]] = []
        #: Events waiting for the hooks; made with the first hook (most clients have none).
        self._backlog: _Backlog | None = None
        self._subscriptions: set[str] = set()
        self._listens: dict[RequestId, _Listen] = {}
        self._current_listen: _Listen | None = None
        self._newest_acked: RequestId | None = None
        self._listen_changed = anyio.Event()
        self._listen_unsupported = False
        self._warned_tools: set[str] = set()
        self._closed = anyio.Event()
        self._was_ready = False
        self._tg: anyio.abc.TaskGroup | None = None
        #: The group and context the loops start in (run's, not the context of whatever first
        #: asked for one: a loop outlives that caller, see connection._home).
        self._home = Home()
        #: The loops started so far (see _start): each starts with its first work, not with the
        #: client, so an idle client holds none of them (a task costs 3 KB of heap idle).
        self._loops: set[str] = set()
        connection.on_notification(self._on_notification)
        connection.on_state_change(self._on_state)
        # The connection's telemetry (two events a request) is heard only while someone listens:
        # building events nobody reads costs the hot path.
        self._unhear_connection: Callable[[], None] | None = None
        if event_log.isEnabledFor(logging.DEBUG):
            self._unhear_connection = connection.on_event(self._on_connection_event)

    # --- what the client reads ------------------------------------------------------------------

    def cached(self, kind: str) -> list[Any] | None:
        return self._lists[kind].value

    def freshness(self, kind: str) -> Freshness:
        return self._lists[kind].freshness()

    @property
    def subscriptions(self) -> frozenset[str]:
        return frozenset(self._subscriptions)

    def notifications(self, maxsize: int) -> NotificationQueue:
        queue = NotificationQueue(maxsize, on_close=self._queues.remove)
        self._queues.append(queue)
        return queue

    def on_event(self, hook: Callable[[Event], Any]) -> Callable[[], None]:
        self._event_hooks.append(hook)
        if self._backlog is None:
            self._backlog = _Backlog()
        self._start("events", self._dispatch_events)
        if self._unhear_connection is None:
            self._unhear_connection = self._conn.on_event(self._on_connection_event)

        def remove() -> None:
            if hook in self._event_hooks:
                self._event_hooks.remove(hook)
            if (
                not self._event_hooks
                and self._unhear_connection is not None
                and not event_log.isEnabledFor(logging.DEBUG)
            ):
                self._unhear_connection()
                self._unhear_connection = None

        return remove

    # --- lifetime -------------------------------------------------------------------------------

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Run the background work until the connection closes."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            self._home.settle(tg)
            # State changes since construction were already heard (the listener came first), and
            # the events they set are waiting for their loops: those start now, the rest with
            # their first work.
            for name, want in self._want.items():
                if want.is_set():
                    self._start(name, self._refresh_loop, name)
            if self._event_hooks:
                self._start("events", self._dispatch_events)
            if self._rules("listens_for_changes"):
                self._start("listen", self._manage_listen)
            task_status.started()
            await self._closed.wait()
            tg.cancel_scope.cancel()
        self._tg = None
        self._home.settle(None)
        self._loops.clear()
        self._windows.clear()
        self._dirty.clear()
        for queue in list(self._queues):
            queue.close()

    def _start(self, loop: str, run: Callable[..., Any], *args: Any) -> None:
        """Start a background loop (named ``loop``) in the task group unless it runs already.

        Before :meth:`run` there is no group: ``run`` starts the loops whose work is waiting.
        """
        if loop not in self._loops and self._home.start_soon(run, *args):
            self._loops.add(loop)

    def _ask_refresh(self, name: str) -> None:
        self._flag(self._want, name)
        self._start(name, self._refresh_loop, name)

    @staticmethod
    def _flag(events: dict[str, anyio.Event], key: str) -> None:
        """Set ``events[key]``, made on first use (the loop that waits for it renews it)."""
        event = events.get(key)
        if event is None:
            event = events[key] = anyio.Event()
        event.set()

    # --- lists ----------------------------------------------------------------------------------

    async def get(self, name: str, *, refresh: bool = False, timeout: float | None = None) -> list[Any]:
        entry = self._lists[name]
        if not refresh and entry.is_fresh() and entry.value is not None:
            return entry.value
        return await self._fetch(name, timeout)

    async def _fetch(self, name: str, timeout: float | None) -> list[Any]:
        kind = KINDS[name]
        entry = self._lists[name]
        self._asked.add(name)
        generation = entry.generation
        started = anyio.current_time()
        items, ttl = await self._list_all(kind, timeout)
        if name == "tools" and self._rules("routes_tools_by_header") and self._conn.routes_by_headers():
            items = self._callable_over_http(items)
        convert = self._converters.get(name)
        value = [convert(item) for item in items] if convert else items
        stored = entry.store(generation, value, ttl if self._rules("lists_carry_ttl") else None)
        self._emit(
            "cache_refresh",
            list=name,
            count=len(value),
            stored=stored,
            duration=anyio.current_time() - started,
        )
        return value

    async def _list_all(
        self, kind: ListKind, timeout: float | None
    ) -> tuple[list[dict[str, Any]], float | None]:
        """Every page, within one deadline and the ``max_list_items`` bound (:mod:`._paging`)."""
        ttls: list[float] = []

        def page_ttl(result: dict[str, Any]) -> None:
            ttl = ttl_of(result)
            if ttl is not None:
                ttls.append(ttl)

        async def ask(params: dict[str, Any] | None, left: float) -> dict[str, Any]:
            return await self._conn.request(kind.method, params, timeout=left)

        items = await every_page(
            ask,
            kind.method,
            kind.key,
            timeout=self._options.request_timeout(timeout),
            max_items=self._options.max_list_items,
            on_page=page_ttl,
        )
        return items, min(ttls, default=None)

    def _callable_over_http(self, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Leave out tools whose ``x-mcp-header`` declarations break the rules (§3.5: the HTTP
        client MUST); one bad tool never costs the others. Each is warned about once."""
        kept, dropped = split_by_header_rules(tools)
        for name, why in dropped:
            if name not in self._warned_tools:
                self._warned_tools.add(name)
                logger.warning("left out tool %r: %s", name, why)
        return kept

    def _watched(self, kind: ListKind) -> bool:
        """Will the server tell us when this list changes?"""
        if self._conn.state != "ready":
            return False
        if self._rules("announces_list_changes"):
            capability = self._conn.server_capabilities().get(kind.capability)
            announced = isinstance(capability, dict) and capability.get("listChanged") is True
            # Over HTTP the announcement can only arrive while the GET stream is up.
            return announced and self._conn.hears_server()
        listen = self._current_listen
        return listen is not None and bool((listen.honoured or {}).get(kind.listen_flag))

    def _want_refresh(self, name: str, *, rate_limited: bool = True) -> None:
        """Invalidate a list and have it re-fetched; ``rate_limited=False`` for one-off causes (a
        new listen stream, a reconnect) that must not delay the refresh a change notice asks for."""
        self._lists[name].invalidate()
        if not rate_limited:
            self._unlimited.add(name)
        self._ask_refresh(name)

    async def _refresh_loop(self, name: str) -> None:
        """Re-fetch one list when asked, at most once per ``min_refresh_interval``."""
        last = last_one_off = -math.inf
        while True:
            await self._want[name].wait()
            self._want[name] = anyio.Event()
            one_off = name in self._unlimited
            self._unlimited.discard(name)
            # Change notices share one spacing, one-off causes (a new listen stream, a reconnect)
            # another, so neither delays the other; but a stream a proxy keeps dropping and the
            # client keeps re-opening cannot fetch the lists more than once per interval either.
            since = last_one_off if one_off else last
            delay = since + self._min_interval - anyio.current_time()
            if delay > 0:
                await anyio.sleep(delay)
            if name not in self._asked and not self._eager:
                continue  # nobody has asked for this list yet: nothing to keep fresh
            if not self._server_offers(KINDS[name]):
                continue
            if one_off:
                last_one_off = anyio.current_time()
            else:
                last = anyio.current_time()
            self.refreshes[name] += 1
            try:
                await self._fetch(name, None)
            except McpError as exc:
                logger.info("could not refresh %s: %s", name, exc)

    def _server_offers(self, kind: ListKind) -> bool:
        return kind.capability in self._conn.server_capabilities()

    # --- notifications --------------------------------------------------------------------------

    def _on_notification(self, notification: Notification) -> None:
        params = notification.params or {}
        meta = params.get("_meta")
        subscription = meta.get(META_SUBSCRIPTION_ID) if isinstance(meta, dict) else None
        if type(subscription) is not int and type(subscription) is not str:
            subscription = None  # ours are JSON-RPC ids; anything else (even a list) names none
        method = notification.method
        if method == "notifications/subscriptions/acknowledged":
            self._acknowledged(subscription, params.get("notifications"))
            return
        if subscription is not None and subscription != self._newest_acked:
            return  # the same event from a listen stream we are replacing
        self._emit("notification", method=method)
        names = _CHANGED_KINDS.get(method)
        if names:
            for name in names:
                self._lists[name].invalidate()  # at once: no fetch racing this news may be stored
            self._changed(method)
            return
        self._publish(notification)

    def _publish(self, notification: Notification) -> None:
        for queue in self._queues:
            queue.put(notification)

    def _changed(self, method: str) -> None:
        """First of a burst at once (here, in order with the notifications around it); the rest of
        the burst as one trailing delivery per window, from a task that lives as long as the burst."""
        if method in self._windows:
            self._dirty.add(method)
            return
        self._deliver(method)
        if self._home.start_soon(self._trail, method):  # (before run, no window: each at once)
            self._windows.add(method)

    async def _trail(self, method: str) -> None:
        try:
            while True:
                await anyio.sleep(self._window)
                if method not in self._dirty:
                    return
                self._dirty.discard(method)
                self._deliver(method)
        finally:
            self._windows.discard(method)
            self._dirty.discard(method)

    def _deliver(self, method: str) -> None:
        self._publish(Notification(method, None))
        for name in _CHANGED_KINDS[method]:
            self._want_refresh(name)

    # --- connection state -----------------------------------------------------------------------

    def _on_state(self, state: ConnectionState) -> None:
        self._listen_changed.set()
        if self._rules("listens_for_changes"):
            self._start("listen", self._manage_listen)
        if state == "reconnecting":
            for entry in self._lists.values():
                entry.invalidate()
        elif state == "ready":
            if self._was_ready:
                self._after_reconnect()
            else:
                self._was_ready = True
                if self._eager:
                    for name, kind in KINDS.items():
                        if self._server_offers(kind):
                            self._ask_refresh(name)
        elif state == "closed":
            self._closed.set()

    def _after_reconnect(self) -> None:
        for name, entry in self._lists.items():
            entry.invalidate()
            if name in self._asked or self._eager:
                self._ask_refresh(name)
        if self._tg is not None and self._subscriptions and self._rules("subscribes_per_resource"):
            self._tg.start_soon(self._resubscribe_legacy)

    async def _resubscribe_legacy(self) -> None:
        for uri in sorted(self._subscriptions):
            try:
                await self._conn.request("resources/subscribe", {"uri": uri})
            except McpError as exc:
                logger.warning("could not renew the subscription after reconnecting: %s", exc)
        self._emit("subscription", action="renewed", count=len(self._subscriptions))

    # --- subscriptions --------------------------------------------------------------------------

    async def subscribe(self, uri: str, *, timeout: float | None = None) -> None:
        if not isinstance(uri, str) or not uri:
            raise TypeError("subscribe() needs a resource URI")
        capability = self._conn.server_capabilities().get("resources")
        if not (isinstance(capability, dict) and capability.get("subscribe") is True):
            raise McpError(
                "invalid", "the server does not offer resource subscriptions (resources.subscribe)"
            )
        new = uri not in self._subscriptions
        self._subscriptions.add(uri)
        try:
            if self._rules("subscribes_per_resource"):
                await self._conn.request("resources/subscribe", {"uri": uri}, timeout=timeout)
            else:
                self._listen_changed.set()
                self._start("listen", self._manage_listen)
                await self._until_listen_covers(uri, timeout)
        except BaseException:
            if new:
                self._subscriptions.discard(uri)
                self._listen_changed.set()
            raise
        self._emit("subscription", action="subscribed")

    async def unsubscribe(self, uri: str, *, timeout: float | None = None) -> None:
        if uri not in self._subscriptions:
            return
        self._subscriptions.discard(uri)
        if self._rules("subscribes_per_resource"):
            await self._conn.request("resources/unsubscribe", {"uri": uri}, timeout=timeout)
        else:
            self._listen_changed.set()
        self._emit("subscription", action="unsubscribed")

    async def _until_listen_covers(self, uri: str, timeout: float | None) -> None:
        limit = timeout if timeout is not None else _ACK_TIMEOUT
        with anyio.move_on_after(limit):
            while True:
                listen = self._current_listen
                if listen is not None and uri in listen.filter.get("resourceSubscriptions", []):
                    honoured = (listen.honoured or {}).get("resourceSubscriptions") or []
                    if uri not in honoured:
                        raise McpError("server", "the server did not honour the subscription")
                    return
                if self._listen_unsupported:
                    raise McpError("server", "the server does not support subscriptions/listen")
                changed = self._listen_changed
                await changed.wait()
        raise McpError("timeout", f"the subscription was not acknowledged within {limit:g}s")

    def _desired_filter(self) -> dict[str, Any]:
        capabilities = self._conn.server_capabilities()
        wanted: dict[str, Any] = {}
        for kind in KINDS.values():
            capability = capabilities.get(kind.capability)
            if isinstance(capability, dict) and capability.get("listChanged") is True:
                wanted[kind.listen_flag] = True
        resources = capabilities.get("resources")
        if self._subscriptions and isinstance(resources, dict) and resources.get("subscribe") is True:
            wanted["resourceSubscriptions"] = sorted(self._subscriptions)
        return wanted

    async def _manage_listen(self) -> None:
        """Keep one acknowledged listen stream matching what is wanted (modern servers)."""
        failures = 0
        while True:
            changed = self._listen_changed = anyio.Event()
            current = self._current_listen
            if current is not None and current.ended.is_set():
                ended, self._current_listen, current = current, None, None
                if ended.with_connection:
                    failures = 0  # the reconnect re-opens it at once
                elif ended.error is None:
                    # Ended gracefully by the server: listen again after a fixed pause, however
                    # often; that is no failure, so it never backs off.
                    failures = 0
                    await self._pause(_RELISTEN_DELAY)
                    continue
                else:
                    # Broken off (or cut by a proxy): back off, so a proxy that keeps cutting
                    # the stream soon after opening gets a growing pause, not a request storm.
                    lived = ended.ended_at - ended.opened_at
                    failures = 1 if lived >= _SHORT_LIVED else failures + 1
                    await self._backoff(failures)
                    continue
            if (
                self._conn.state == "ready"
                and self._rules("listens_for_changes")
                and not self._listen_unsupported
            ):
                desired = self._desired_filter()
                if desired and (current is None or current.filter != desired):
                    opened = await self._open_listen(desired)
                    if opened is None:
                        failures += 1
                        await self._backoff(failures)
                        continue
                    if current is not None:
                        current.close()
                    self._current_listen = opened
                    changed.set()  # wake subscribers waiting for coverage
                    continue
                if not desired and current is not None:
                    current.close()
                    self._current_listen = None
            await changed.wait()

    async def _backoff(self, failures: int) -> None:
        await self._pause(min(30.0, 0.5 * 2 ** min(failures, 6)) * random.uniform(0.5, 1.0))

    async def _pause(self, delay: float) -> None:
        with anyio.move_on_after(delay):
            await self._closed.wait()

    async def _open_listen(self, wanted: dict[str, Any]) -> _Listen | None:
        if len(self._listens) >= _MAX_LISTENS or self._tg is None:
            return None
        listen = _Listen(dict(wanted))
        listen.opened_at = anyio.current_time()
        self._tg.start_soon(self._run_listen, listen)
        with anyio.move_on_after(_ACK_TIMEOUT):
            await listen.settled.wait()
        if listen.acked.is_set() and not listen.ended.is_set():
            requested = {k for k, v in wanted.items() if v}
            honoured = {k for k, v in (listen.honoured or {}).items() if v}
            if requested - honoured:
                logger.warning("the server honoured only part of the subscription: %s", sorted(honoured))
            self._emit("subscription", action="listening", honoured=sorted(honoured))
            return listen
        listen.close()
        if listen.error is not None and listen.error.code == METHOD_NOT_FOUND:
            self._listen_unsupported = True
            self._listen_changed.set()
        return None

    async def _run_listen(self, listen: _Listen) -> None:
        def learn_id(request_id: RequestId) -> None:
            if listen.id is not None:
                self._listens.pop(listen.id, None)
            listen.id = request_id
            self._listens[request_id] = listen

        with anyio.CancelScope() as scope:
            listen.scope = scope
            try:
                await self._conn.request(
                    "subscriptions/listen",
                    {"notifications": listen.filter},
                    timeout=math.inf,
                    stream=True,
                    on_id=learn_id,
                    label="subscriptions/listen",
                )
            except McpError as exc:
                listen.error = exc
                if exc.kind not in ("transport", "closed"):
                    logger.info("the listen stream ended: %s", exc)
        listen.ended_at = anyio.current_time()
        listen.with_connection = self._conn.state != "ready"
        if listen.id is not None:
            self._listens.pop(listen.id, None)
        listen.ended.set()
        listen.settled.set()
        self._listen_changed.set()
        self._emit("subscription", action="stream_ended")

    def _acknowledged(self, subscription: Any, honoured: Any) -> None:
        listen = self._listens.get(subscription)
        if listen is None:
            return
        listen.honoured = honoured if isinstance(honoured, dict) else {}
        listen.acked.set()
        listen.settled.set()
        self._newest_acked = subscription
        # A stream replays nothing: a list fetched before its acknowledgement may already be out
        # of date, so every list this stream newly watches is fetched again (PROTOCOL.md §3.7).
        previous = self._current_listen
        watched_before = (
            previous.honoured or {} if previous is not None and not previous.ended.is_set() else {}
        )
        for name, kind in KINDS.items():
            if listen.honoured.get(kind.listen_flag) and not watched_before.get(kind.listen_flag):
                self._want_refresh(name, rate_limited=False)

    # --- events ---------------------------------------------------------------------------------

    def _on_connection_event(self, event: Event) -> None:
        self._record(event)

    def _rules(self, rule: _Rule) -> bool:
        """Whether the negotiated era's ``rule`` holds (False before anything is negotiated)."""
        negotiated = self._conn.negotiated
        return negotiated is not None and bool(getattr(negotiated, rule))

    def _emit(self, kind: str, **data: Any) -> None:
        self._record(Event(kind, time.time(), data))

    def emit(self, kind: str, **data: Any) -> None:
        """Tell the event hooks of something the client did (ids, names and reasons; no payloads)."""
        self._emit(kind, **data)

    def _record(self, event: Event) -> None:
        if event_log.isEnabledFor(logging.DEBUG):
            event_log.debug("%s %s", event.kind, event.data)
        backlog = self._backlog
        if self._event_hooks and backlog is not None:
            backlog.events.append(event)
            backlog.ready.set()

    async def _dispatch_events(self) -> None:
        """Call the user's event hooks in this task, never in the reader or a caller."""
        backlog = self._backlog
        assert backlog is not None  # made with the first hook, before this loop starts
        events = backlog.events
        while True:
            await backlog.ready.wait()
            backlog.ready = anyio.Event()
            while events:
                event = events.popleft()
                for hook in list(self._event_hooks):
                    try:
                        outcome = hook(event)
                        if inspect.isawaitable(outcome):
                            await outcome
                    except Exception:
                        logger.exception("an event hook raised; ignored")
