"""``session.model``: a traitlets object mirroring one connection, for widgets and observers.

It is the only bridge between the engine and the UI: the session writes it (from the engine
thread) as the connection's state, cached lists, notifications and calls change; widgets and user
code observe it and never reach into the connection. Lists are replaced, never mutated, so every
change fires exactly one notification, and bounded logs keep the newest entries last. The
exception is ``history``, which grows once per call: it is a ``BoundedLog`` appended to in place
(O(1)), its observers told with the new entry as ``change.added``.

An observer that raises is logged and skipped: a bug in a widget must not disturb the connection
(traitlets would otherwise propagate the exception into the code that set the trait). The changes
the engine makes are observed on the observer thread (:mod:`._observers`), never inside the
connection's read path; one that is slow is logged once.

The server's log messages and notifications can come by the thousand a second, so they do not go
to the traits one by one: :meth:`SessionModel.append` adds them to a bounded deque and pokes a
:class:`~._coalesce.Coalescer`, which publishes the deques to ``log`` and ``notifications`` at most
ten times a second on the UI thread (``_coalesce.py``). One change may then carry several new
entries, listed in ``change.added`` (as for ``history``); the observers of those traits (widgets,
user code) run there, never on the engine thread that reads the connection.

Both are bounded in bytes as well as rows: each entry keeps at most ``LOG_DATA_BYTES`` (16 KiB) of
the server's ``data`` (or a notification's ``params``), cut with a note and the bytes left out in
the row's ``cut``; and each log holds at most :data:`MAX_LOG_BYTES` of them in all, the oldest
rows going first. 150 log messages of 16 MB were 2.3 GB in ``model.log``; now a few MB.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from traitlets import All, Bunch, Dict, Float, HasTraits, Int, List, Unicode

from ..protocol._cut import LOG_NAME_CHARS, cut_log_data, text_form
from ._bounded import BoundedLog, BoundedLogTrait
from ._coalesce import Coalescer
from ._engine import on_engine_thread
from ._gauge import Gauge as _Gauge
from ._observers import dispatcher

if TYPE_CHECKING:
    from traitlets.utils.sentinel import Sentinel

    from ..client._results import Prompt, Resource, ResourceTemplate, Tool

__all__ = ["GroupModel", "SessionModel"]

logger = logging.getLogger("mcp_notebook.notebook")

_Handler = Callable[[Any], Any]
_Row = dict[str, Any]

#: Seconds between two publications of the log and notifications (at most 10 a second).
PUBLISH_INTERVAL = 0.1
#: An observer taking longer than this (seconds) is logged, once.
SLOW_OBSERVER = 0.2
_STREAMS = ("log", "notifications")
#: The most bytes of server data (log ``data``, notification ``params``, in their text form) that
#: ``model.log`` and ``model.notifications`` each hold; past it the oldest rows go.
MAX_LOG_BYTES = 4 * 1024 * 1024
#: What a row costs beside its data (time, level, logger), counted against MAX_LOG_BYTES.
_ROW_BYTES = 200
#: Of a notification's params that had to be cut, the small members kept as they are (a watch
#: still finds the ``uri`` of a ``resources/updated``): at most this many, each at most this long.
_KEPT_MEMBERS = 16
_KEPT_CHARS = 1024


class _Model(HasTraits):
    """Observers that cannot break the engine, and writes as one consistent change."""

    updated_at = Float(0.0, help="when anything in the model last changed")

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # Keyed by the handler itself: bound methods are new objects on every access but equal.
        self._wrapped: dict[tuple[_Handler, Sentinel | str], _Handler] = {}

    def observe(self, handler: _Handler, names: Any = None, type: Sentinel | str = "change") -> None:
        safe = self._wrapped.get((handler, type))
        if safe is None:
            safe = self._wrapped[(handler, type)] = _guarded(handler)
        super().observe(safe, names=All if names is None else names, type=type)

    def unobserve(self, handler: _Handler, names: Any = None, type: Sentinel | str = "change") -> None:
        safe = self._wrapped.get((handler, type), handler)
        super().unobserve(safe, names=All if names is None else names, type=type)
        dispatcher().drop(safe)  # changes already handed over are not delivered after this

    def update(self, **values: Any) -> None:
        """Set several traits as one consistent change."""
        with self.hold_trait_notifications():
            for name, value in values.items():
                setattr(self, name, value)
            self.updated_at = time.time()


class SessionModel(_Model):
    """Observable state of one session. Times are ``time.time()`` seconds."""

    status = Unicode("connecting", help="connecting, negotiating, ready, reconnecting or closed")
    era = Unicode(None, allow_none=True, help="'modern' or 'legacy'")
    protocol_version = Unicode(None, allow_none=True)
    server_info = Dict(help="the server's name, version, title, ...")
    capabilities = Dict(help="the server's capabilities")
    instructions = Unicode(None, allow_none=True)
    tools: List[Tool] = List(help="Tool objects, kept fresh by the server's change notices")
    resources: List[Resource] = List()
    resource_templates: List[ResourceTemplate] = List()
    prompts: List[Prompt] = List()
    in_flight = Int(0, help="requests waiting for their answer")
    reconnects = Int(0)
    last_error = Unicode(None, allow_none=True, help="why the connection was last lost")
    notifications: List[_Row] = List(help="recent notifications, newest last: {time, method, params}")
    log: List[_Row] = List(help="recent server log messages, newest last: {time, level, logger, data}")
    history = BoundedLogTrait(
        help="tool calls, resource reads and prompt gets, newest last: {time, method, name, ...}; "
        "grows in place (a BoundedLog: len, indexing, slicing, iteration as a list's)"
    )
    tasks: List[_Row] = List(
        help="tasks started or attached to, oldest first, one row each: {task_id, tool, status, "
        "status_message, started, ended, elapsed, error, result}; kept live by the client's poller"
    )

    def __init__(
        self,
        *,
        max_log: int = 500,
        max_history: int = 10_000,
        max_log_bytes: int = MAX_LOG_BYTES,
        **kwargs: Any,
    ) -> None:
        self._max_log = max_log
        self._max_log_bytes = max_log_bytes
        self._max_history = max_history
        self._in_flight = _Gauge(lambda count: _Model.update(self, in_flight=count), lambda: self.in_flight)
        super().__init__(**kwargs)
        if "history" not in kwargs:
            self.set_trait("history", BoundedLog(maxlen=max_history))
        self._streams: dict[str, deque[_Row]] = {name: deque() for name in _STREAMS}
        self._sizes: dict[str, deque[int]] = {name: deque() for name in _STREAMS}  # each row's bytes
        self._bytes = dict.fromkeys(_STREAMS, 0)  # the sum of each stream's sizes
        self._stream_lock = threading.Lock()
        self._unpublished = dict.fromkeys(_STREAMS, 0)  # entries appended since the last publish
        self._publisher = Coalescer(self._publish, PUBLISH_INTERVAL, what="the session model's log")

    def update(self, **values: Any) -> None:
        """Set several traits as one consistent change; ``in_flight`` is shown at most 10 times a
        second (see :class:`._gauge.Gauge`), so a call writes the model once, for its history."""
        if "in_flight" in values:
            self._in_flight.note(values.pop("in_flight"))
            if not values:
                return
        super().update(**values)

    def append(self, name: str, entry: dict[str, Any]) -> None:
        """Add to a bounded log (notifications, log, history), newest last.

        ``history`` grows in place (O(1)); ``log`` and ``notifications`` are published within
        :data:`PUBLISH_INTERVAL` (see the module's docstring); the caller never waits for their
        observers.
        """
        if name == "history":
            self._append_history(entry)
            return
        if name in self._streams:
            entry, size = _kept(name, entry)
            with self._stream_lock:
                items, sizes = self._streams[name], self._sizes[name]
                items.append(entry)
                sizes.append(size)
                total = self._bytes[name] + size
                while len(items) > 1 and (len(items) > self._max_log or total > self._max_log_bytes):
                    items.popleft()
                    total -= sizes.popleft()
                self._bytes[name] = total
                self._unpublished[name] += 1
            self._publisher.poke()
            return
        limit = self._max_history if name == "history" else self._max_log
        items = getattr(self, name)
        self.update(**{name: [*items[-(limit - 1) :], entry] if limit > 1 else [entry]})

    def _append_history(self, entry: dict[str, Any]) -> None:
        # O(1): the log grows in place and the observers are told here, with the entry as
        # ``change.added`` (``old`` and ``new`` are the same object: no copy was made to compare).
        history = self.history
        history.append(entry)
        _tell(self, "history", history, history, [entry], self.notify_change)
        self.updated_at = time.time()

    def _publish(self) -> None:
        # On the UI thread: see _announce.
        with self._stream_lock:
            fresh = {name: list(items) for name, items in self._streams.items()}
            counts, self._unpublished = self._unpublished, dict.fromkeys(_STREAMS, 0)
        for name, new in fresh.items():
            if new != getattr(self, name):
                _announce(self, name, new, new[-counts[name] :] if counts[name] else [])


def _kept(name: str, entry: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """A log message or notification as the model keeps it (its server data cut to
    ``LOG_DATA_BYTES``, with a note), and the bytes it is counted for."""
    if name == "log":
        cut = cut_log_data(entry.get("data"))
        logger = entry.get("logger")
        kept = {**entry, "data": cut.value}
        if isinstance(logger, str) and len(logger) > LOG_NAME_CHARS:
            kept["logger"] = logger[:LOG_NAME_CHARS] + "…"
    else:
        params = entry.get("params")
        cut = cut_log_data(params)
        kept = dict(entry)
        if cut.cut:
            small = (
                [(k, v) for k, v in params.items() if _small(v)][:_KEPT_MEMBERS]
                if isinstance(params, dict)
                else []
            )
            kept["params"] = {**dict(small), "cut": cut.value}
    if cut.cut:
        kept["cut"] = cut.cut
    return kept, cut.size + _ROW_BYTES


def _small(value: Any) -> bool:
    if isinstance(value, str):
        return len(value) <= _KEPT_CHARS
    return value is None or isinstance(value, bool | int | float)


def _announce(model: _Model, name: str, new: list[_Row], added: list[_Row]) -> None:
    """Set a trait only the UI thread writes, and tell its observers there.

    The engine writes the model's other traits meanwhile, possibly inside its own
    ``hold_trait_notifications`` (which swaps the instance's ``notify_change`` and would catch this
    change, to fire it on the engine thread): so the value is stored and announced past that hold.
    """
    old = getattr(model, name)
    model._trait_values[name] = new
    model._trait_values["updated_at"] = time.time()
    _tell(model, name, old, new, added, lambda change: HasTraits.notify_change(model, change))


def _tell(
    model: _Model, name: str, old: Any, new: Any, added: list[_Row], notify: Callable[[Bunch], None]
) -> None:
    """Tell the observers of a trait that grew: the one shape of a change that lists its new
    entries in ``change.added`` (history, log, notifications), sent through ``notify``."""
    notify(Bunch(name=name, old=old, new=new, owner=model, type="change", added=added))


class GroupModel(_Model):
    """Observable state of a group of servers (``group.model``), written from the engine thread.

    ``servers`` is the status board: one row per server, in config order, rebuilt whenever a
    server's status, lists or counters change. ``log`` merges the servers' log messages and
    notifications, each entry with its ``server``.
    """

    servers: List[_Row] = List(
        help="one row per server: {server, status, era, protocol_version, server_name, "
        "server_version, tools, in_flight, reconnects, failures, last_error, target}"
    )
    statuses = Dict(
        help="server name -> connecting, negotiating, ready, reconnecting, failed (with a reason), "
        "gave up, closing or closed"
    )
    sessions = Dict(help="server name -> Session, for the servers that came up")
    tools: List[Tool] = List(help="every server's tools as Tool objects named SERVER.TOOL")
    total_tools = Int(0)
    log: List[_Row] = List(
        help="recent log messages and notifications of every server, newest last: {server, time, ...}"
    )

    def __init__(self, *, max_log: int = 1000, max_log_bytes: int = MAX_LOG_BYTES, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._max_log = max_log
        self._max_log_bytes = max_log_bytes
        self._sizes: deque[int] = deque()  # the bytes each row of ``log`` is counted for
        self._bytes = 0

    def append_log(self, entries: list[dict[str, Any]]) -> None:
        """Add the sessions' new entries (called on the UI thread, where the sessions publish),
        within ``max_log`` rows and ``max_log_bytes`` (their data is already cut by the sessions)."""
        if not entries:
            return
        rows = [*self.log, *entries]
        if len(self._sizes) != len(rows) - len(entries):  # ``log`` was set from outside: count it again
            self._sizes = deque(_row_bytes(row) for row in rows[: -len(entries)])
            self._bytes = sum(self._sizes)
        for entry in entries:
            size = _row_bytes(entry)
            self._sizes.append(size)
            self._bytes += size
        first = 0
        while len(rows) - first > 1 and (
            len(rows) - first > self._max_log or self._bytes > self._max_log_bytes
        ):
            self._bytes -= self._sizes.popleft()
            first += 1
        _announce(self, "log", rows[first:], entries)


def _row_bytes(row: dict[str, Any]) -> int:
    """What a merged log row is counted for: its data's text form, and the row around it."""
    return len(text_form(row.get("data", row.get("params")))) + _ROW_BYTES


def _guarded(handler: _Handler) -> _Handler:
    """The handler as the model calls it: errors logged, slowness logged once, and, for a change
    made on the engine thread, run on the observer thread instead (:mod:`._observers`)."""

    def call(change: Any) -> Any:
        if on_engine_thread():
            dispatcher().submit(call, change)  # the connection never waits for an observer
            return None
        start = time.monotonic()
        try:
            return handler(change)
        except Exception:
            logger.exception("an observer of the session model raised; ignored")
            return None
        finally:
            took = time.monotonic() - start
            if took > SLOW_OBSERVER:
                dispatcher().note_slow(call, took)

    call.__wrapped__ = handler  # type: ignore[attr-defined]
    return call
