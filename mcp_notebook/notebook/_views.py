"""Reactive views: DataFrames that follow a session by themselves.

* :class:`LiveFrame` (``session.live_frame("tools")``): one of the model's lists (tools, resources,
  resource templates, prompts, history, tasks) as a DataFrame, rebuilt whenever that list changes.
* :class:`ResourceWatch` (``session.watch_resource(uri)``): a resource, re-read on every
  ``notifications/resources/updated`` for its URI (subscribing first, if nobody has).
* :class:`ToolWatch` (``session.watch_tool(name, args, every=2)`` or ``on=URI``): a tool call,
  repeated on a timer and/or on a resource's updates.

What they share, and why:

* **They observe the model, never the connection.** Updates arrive as changes of
  ``session.model`` (its lists, its ``notifications``), exactly what the widgets see.
* **One background task each, on the session's engine**, does the work (build the frame, read,
  call). A cell never waits for it, and two runs of one view never overlap: a slow tool skips timer
  ticks (counted in ``skipped``) instead of piling calls up.
* **Rate-bounded**: a burst of changes wakes the task once; runs are at least ``1 / rate`` seconds
  apart; the run after the last change reads the state as it is then, so a view always ends
  showing the final state.
* **Errors are shown, not raised**: a failed read or call is drawn in the view and kept in
  ``.error``; nothing is raised into the engine.
* **Stoppable**: ``.stop()`` unhooks the observers, cancels the task and gives back a subscription
  the view took; closing the session (or its connection closing) stops every view over it.
* **Display**: the latest DataFrame is ``.frame`` for code. In a notebook the view shows as a
  panel (``.widget``, one anywidget: ``widgets/_ui``) redrawn after each run; its ``text/plain`` is
  one line of state (plus the first rows) and its ``text/html`` a static copy of the frame, which
  is what a saved notebook shows where widgets cannot run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import re
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio

from ..client._results import ResourceContents, ToolResult
from ..display import _html
from ..display._durations import short_duration
from ..protocol._errors import McpError
from ..protocol._printable import printable

if TYPE_CHECKING:
    import pandas

    from ._ports import ViewOwner, ViewSession, WidgetFactory

__all__ = ["LIVE_FRAMES", "MIN_EVERY", "LiveFrame", "ResourceWatch", "ToolWatch"]

logger = logging.getLogger("mcp_notebook.notebook")

#: A text cell of a live frame's picture: lines kept, at most this many, aligned at the top.
_CELL_LINES = 6
_CELL_STYLE = "white-space:pre-wrap;vertical-align:top;text-align:left"
_MULTILINE_CELL = re.compile(r"<td>([^<]*\n[^<]*)</td>")


def _lines(value: Any) -> str:
    return _html.lines_cut(str(value), _CELL_LINES, 120 * _CELL_LINES)


#: The shortest ``every=`` a tool watch accepts, in seconds.
MIN_EVERY = 0.1
UPDATED = "notifications/resources/updated"


def _frame_builders() -> dict[str, Callable[[Any], pandas.DataFrame]]:
    from . import _frames as frames

    return {
        "tools": frames.tools_frame,
        "resources": frames.resources_frame,
        "resource_templates": frames.resource_templates_frame,
        "prompts": frames.prompts_frame,
        "history": frames.history_frame,
        "tasks": frames.tasks_frame,
    }


#: What ``session.live_frame(what)`` accepts: each is the model trait of that name.
LIVE_FRAMES = ("tools", "resources", "resource_templates", "prompts", "history", "tasks")


class Picture(str):
    """Static HTML a front end draws as it is (marimo asks ``_display_`` for something to show)."""

    def _repr_html_(self) -> str:
        return str(self)


class _View:
    """The shared machinery: the rate-bounded task on the engine, display, stopping."""

    kind = "view"

    def __init__(
        self, owner: ViewOwner, *, rate: float, max_rows: int, widget_factory: WidgetFactory | None = None
    ) -> None:
        if not rate > 0:
            raise ValueError("rate must be > 0 (runs per second)")
        if max_rows < 1:
            raise ValueError("max_rows must be >= 1")
        self._owner = owner
        self._engine = owner._engine
        self.model = owner.model
        #: At most this many runs (renders, reads, calls) a second.
        self.rate = float(rate)
        #: Rows shown in the display (the head and tail of a longer frame); ``.frame`` has them all.
        self.max_rows = max_rows
        #: The latest DataFrame (None until the first run).
        self.frame: pandas.DataFrame | None = None
        #: The latest error shown (a failed read or call), or None.
        self.error: str | None = None
        #: A standing remark shown in the header (e.g. a subscription the server refused), or None.
        self.note: str | None = None
        #: How many times the view was drawn with a new state.
        self.renders = 0
        #: When the view last showed a new state (``time.time()``), or None.
        self.updated_at: float | None = None
        self.stopped = False
        self._widget: Any = None
        # Draws .widget; handed in by the top layer's Session/Group (the notebook layer draws no widgets).
        self._widget_factory = widget_factory
        self._wake: anyio.Event | None = None
        self._woken_early = False
        self._last_run = -math.inf
        self._tasks: list[Any] = []
        self._ready = threading.Event()
        self._lock = threading.Lock()

    # --- the task -------------------------------------------------------------------------------

    @property
    def _interval(self) -> float:
        return 1.0 / self.rate

    def _start(self, *extra: Callable[[], Any]) -> None:
        self._owner._views.add(self)
        self.model.observe(self._on_status, names=["status"])
        for fn in (self._loop, *extra):
            self._tasks.append(self._engine.spawn(fn))

    def _poke(self) -> None:
        """Ask for a run, from any thread."""
        if self.stopped:
            return
        if self._engine.on_engine_thread():
            self._poke_here()
        else:
            # Never waits for the loop: the poking thread may hold a lock the loop is waiting for
            # (a group's board lock, whose model update notifies this view).
            with contextlib.suppress(RuntimeError):  # the engine has stopped (interpreter exit)
                self._engine.soon(self._poke_here)

    def _poke_here(self) -> None:
        if self._wake is None:
            self._woken_early = True
        else:
            self._wake.set()

    async def _loop(self) -> None:
        self._wake = anyio.Event()
        if self._woken_early:
            self._wake.set()
        while True:
            await self._wake.wait()
            delay = self._last_run + self._interval - time.monotonic()
            if delay > 0:
                await anyio.sleep(delay)
            # Changes during the wait are covered by this run, which reads the state as it is now;
            # changes during the run wake the next one.
            self._wake = anyio.Event()
            self._last_run = time.monotonic()
            try:
                await self._run()
            except anyio.get_cancelled_exc_class():
                raise
            except Exception as exc:  # a bug here must not take the engine down: show it
                logger.exception("a live view's update failed")
                self._show_error(f"{type(exc).__name__}: {exc}")
            self._ready.set()

    async def _run(self) -> None:
        raise NotImplementedError

    def _on_status(self, change: Any) -> None:
        if change["new"] == "closed":
            self._stop(give_back=False)

    # --- showing --------------------------------------------------------------------------------

    def _show(self, frame: pandas.DataFrame | None, error: str | None = None) -> None:
        with self._lock:
            self.frame = frame
            self.error = error
            self.renders += 1
            self.updated_at = time.time()
        self._redraw()

    def _show_error(self, message: str) -> None:
        with self._lock:
            self.error = message
            self.updated_at = time.time()
        self._redraw()

    def _redraw(self) -> None:
        if self._widget is not None:
            self._widget.show(self._header_html(), self._body_html())

    def _title(self) -> str:
        raise NotImplementedError

    def _counts(self) -> list[str]:
        return [f"{self.renders} renders"]

    def _state(self) -> str:
        return "stopped" if self.stopped else "live"

    def _summary(self) -> str:
        parts = [self._title()]
        if self.frame is not None:
            parts.append(f"{len(self.frame)} rows")
        parts.extend(self._counts())
        if self.updated_at is not None:
            parts.append("updated " + time.strftime("%H:%M:%S", time.localtime(self.updated_at)))
        return ", ".join(parts)

    def _header_html(self) -> str:
        colour = "#6a737d" if self.stopped else "#1b873f"
        header = (
            f'<div class="mcpnb-live-state"><span style="color:{colour}">●</span> '
            f"<b>{_html.escape(self._state())}</b> {_html.escape(self._summary())}</div>"
        )
        if self.note:
            header += f'<div class="mcpnb-live-note" style="color:#b08800">{_html.escape(self.note)}</div>'
        if self.error:
            header += f'<div class="mcpnb-live-error" style="color:#b00020">{_html.escape(self.error)}</div>'
        return header

    def _body_html(self) -> str:
        if self.frame is None:
            return "<i>waiting for the first update…</i>"
        # to_html escapes every cell (escape=True is its default): server strings stay text.
        # Durations (float seconds in the frame) read short here: 7 ms, 1.2 s (issue #29).
        formatters: dict[str, Callable[[Any], str]] = {
            name: short_duration for name in ("duration", "elapsed") if name in self.frame.columns
        }
        # Text keeps its line breaks (pandas would write them as a literal \n), a tall one cut to its
        # first lines with the rest counted: a tool's long description is not three screens tall.
        for name, dtype in self.frame.dtypes.items():
            if isinstance(name, str) and name not in formatters and str(dtype) in ("string", "str"):
                formatters[name] = _lines
        html = self.frame.to_html(
            max_rows=self.max_rows, border=0, classes="mcpnb-live-table", formatters=formatters
        )
        # pandas writes each data cell as a bare <td> on one line, its text escaped (no "<" in
        # it): a cell whose text holds a line break is drawn so that the break shows
        return _MULTILINE_CELL.sub(rf'<td style="{_CELL_STYLE}">\1</td>', str(html))

    @property
    def widget(self) -> Any:
        """The ipywidgets panel (a VBox: header and table), for layouts; redrawn after each run."""
        if self._widget is None:
            if self._widget_factory is None:
                # as if ipywidgets were missing: the display falls back to the HTML picture
                raise ImportError(
                    "this view has no widget factory (mcp_notebook.jupyter's sessions hand one in)"
                )
            self._widget = self._widget_factory(self, self._header_html(), self._body_html())
        return self._widget

    def __repr__(self) -> str:
        text = f"<{type(self).__name__} {self._state()}: {self._summary()}>"
        if self.note:
            text += f"\nnote: {self.note}"
        if self.error:
            text += f"\nerror: {self.error}"
        if self.frame is not None and len(self.frame.columns):
            text += "\n" + self.frame.to_string(max_rows=6, max_colwidth=40)
        return printable(text, multiline=True)  # the frame holds the server's raw data

    def _repr_html_(self) -> str:
        return f'<div class="mcpnb-live">{self._header_html()}{self._body_html()}</div>'

    def _display_(self) -> Any:
        """marimo shows what this returns (it draws no ipywidgets view of a bundle): the live
        panel where one can be drawn, else the static HTML."""
        try:
            return self.widget
        except ImportError:
            return Picture(self._repr_html_())

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        # The widget where a front end can draw it; the text and the static HTML everywhere else
        # (a terminal, nbconvert, GitHub and nbviewer show a saved notebook's HTML).
        bundle: dict[str, Any] = {"text/plain": repr(self), "text/html": self._repr_html_()}
        try:
            drawn = self.widget._repr_mimebundle_() or {}
        except ImportError:
            drawn = {}
        view = "application/vnd.jupyter.widget-view+json"
        if view in drawn:
            bundle[view] = drawn[view]
        return bundle

    # --- waiting and stopping -------------------------------------------------------------------

    def wait_ready(self, timeout: float = 10.0) -> _View:
        """Wait (blocking this cell only) until the first run has shown something; returns self."""
        if not self._ready.wait(timeout):
            raise TimeoutError(f"{self._title()}: nothing shown within {timeout:g}s")
        return self

    async def await_ready(self, timeout: float = 10.0) -> _View:
        """The async twin of :meth:`wait_ready`, for cells that ``await``."""
        loop = asyncio.get_running_loop()
        if not await loop.run_in_executor(None, self._ready.wait, timeout):
            raise TimeoutError(f"{self._title()}: nothing shown within {timeout:g}s")
        return self

    def stop(self) -> None:
        """Stop following: unhook, cancel the background work, give back a subscription the view
        took. Idempotent; the last frame stays in ``.frame`` and on show."""
        self._stop(give_back=True)

    async def astop(self) -> None:
        """The async twin of :meth:`stop` (also usable on the engine thread, e.g. in an observer)."""
        if self._engine.on_engine_thread():
            given = self._stop(give_back=False)
            if given:
                await self._give_back()
        else:
            await anyio.to_thread.run_sync(self.stop)

    def _stop(self, *, give_back: bool) -> bool:
        """Stop; returns whether something is left to give back (when not given back here)."""
        with self._lock:
            if self.stopped:
                return False
            self.stopped = True
        self.model.unobserve(self._on_status, names=["status"])
        self._unhook()
        for task in self._tasks:
            task.cancel()
        self._owner._views.discard(self)
        self._ready.set()
        pending = self._owes()
        if give_back and pending:
            if self._engine.on_engine_thread():
                self._tasks.append(self._engine.spawn(self._give_back))
            else:
                try:
                    self._engine.call(self._give_back)
                except McpError as exc:
                    logger.info("could not give back %s: %s", self._title(), exc)
            pending = False
        self._redraw()
        return pending

    def _unhook(self) -> None:
        """Remove the view's own observers (beyond the status one)."""

    def _owes(self) -> bool:
        """Is there a subscription to give back?"""
        return False

    async def _give_back(self) -> None:
        return None


class LiveFrame(_View):
    """One of the model's lists as a DataFrame, rebuilt whenever the list changes.

    ``session.live_frame(what)``; ``what`` is one of :data:`LIVE_FRAMES`.
    """

    kind = "live_frame"

    def __init__(
        self,
        owner: ViewOwner,
        what: str,
        *,
        rate: float = 4.0,
        max_rows: int = 50,
        builder: Callable[[Any], pandas.DataFrame] | None = None,
        widget_factory: WidgetFactory | None = None,
    ) -> None:
        if builder is None:
            builders = _frame_builders()
            if what not in builders:
                raise ValueError(f"live_frame() shows one of {', '.join(LIVE_FRAMES)}, not {what!r}")
            builder = builders[what]
        super().__init__(owner, rate=rate, max_rows=max_rows, widget_factory=widget_factory)
        self.what = what
        self._build = builder
        # Heard before the first build: a change landing while it runs (pandas, in the caller's
        # thread, can take seconds on a loaded machine) wakes the loop, which rebuilds.
        self.model.observe(self._changed, names=[what])
        try:
            self._show(self._build(getattr(self.model, what)))  # at once: .frame is there for code
        except BaseException:
            self.model.unobserve(self._changed, names=[what])
            raise
        self._last_run = time.monotonic()
        self._ready.set()
        self._start()

    def _changed(self, change: Any) -> None:
        self._poke()

    async def _run(self) -> None:
        items = getattr(self.model, self.what)
        # pandas work off the engine thread: the connection keeps answering meanwhile.
        self._show(await anyio.to_thread.run_sync(self._build, items))

    def _unhook(self) -> None:
        self.model.unobserve(self._changed, names=[self.what])

    def _title(self) -> str:
        name = getattr(self._owner, "name", None)
        owner = f"group {name!r}" if hasattr(self._owner, "statuses") else name
        return f"{self.what} of {owner if name else 'the group'}"


class _Updates:
    """Hears ``notifications/resources/updated`` for one URI through ``session.model`` and keeps
    the subscription that makes the server send them (taken only if nobody had it)."""

    def __init__(self, session: ViewSession, uri: str, on_update: Callable[[], None]) -> None:
        if not isinstance(uri, str) or not uri:
            raise TypeError("a resource URI is needed")
        self.session = session
        self.uri = uri
        self.count = 0
        #: The view subscribed (and will unsubscribe when it stops).
        self.owned = False
        self._on_update = on_update
        notifications = session.model.notifications
        self._last: Any = notifications[-1] if notifications else None
        session.model.observe(self._heard, names=["notifications"])

    def _heard(self, change: Any) -> None:
        entries = change["new"]
        fresh: list[dict[str, Any]] = []
        for entry in reversed(entries):
            if entry is self._last:
                break
            fresh.append(entry)
        if entries:
            self._last = entries[-1]
        hits = sum(
            1
            for entry in fresh
            if entry.get("method") == UPDATED and (entry.get("params") or {}).get("uri") == self.uri
        )
        if hits:
            self.count += hits
            self._on_update()

    async def subscribe(self) -> None:
        client = self.session.client
        if self.uri in client.subscriptions:
            return
        self.owned = True
        try:
            await client.subscribe(self.uri)
        except BaseException:
            self.owned = False
            raise

    def unhook(self) -> None:
        self.session.model.unobserve(self._heard, names=["notifications"])

    def owes(self) -> bool:
        if not self.owned or self.session._closed or self.session.client.status == "closed":
            return False
        # Another live watch over the same URI inherits the subscription instead.
        for view in list(self.session._views):
            updates = getattr(view, "_updates", None)
            if isinstance(updates, _Updates) and updates is not self and updates.uri == self.uri:
                updates.owned = True
                self.owned = False
                return False
        return True

    async def give_back(self) -> None:
        if self.owned:
            self.owned = False
            await self.session.client.unsubscribe(self.uri)


class ResourceWatch(_View):
    """A resource kept on show: re-read on every ``notifications/resources/updated`` for its URI.

    ``session.watch_resource(uri, as_frame=True)``. ``.value`` is the latest text, ``.contents``
    the latest :class:`~mcp_notebook.ResourceContents`, ``.frame`` its DataFrame (``as_frame``),
    ``.updates`` how many updates were announced and ``.reads`` how many reads were made (a burst
    of updates is one read).
    """

    kind = "watch_resource"

    def __init__(
        self,
        session: ViewSession,
        uri: str,
        *,
        as_frame: bool = True,
        subscribe: bool = True,
        rate: float = 4.0,
        max_rows: int = 50,
        widget_factory: WidgetFactory | None = None,
    ) -> None:
        super().__init__(session, rate=rate, max_rows=max_rows, widget_factory=widget_factory)
        self.session = session
        self.uri = uri
        self.as_frame = as_frame
        self.value: str | None = None
        self.contents: ResourceContents | None = None
        self.reads = 0
        self._want_subscription = subscribe
        self._subscribed = False
        self._updates = _Updates(session, uri, self._poke)
        self._poke()  # the first read
        self._start()

    @property
    def updates(self) -> int:
        """How many ``notifications/resources/updated`` for this URI arrived while watching."""
        return self._updates.count

    async def _run(self) -> None:
        if self._want_subscription and not self._subscribed:
            try:
                await self._updates.subscribe()
                self._subscribed = True
            except McpError as exc:
                self._want_subscription = False  # said once, in the header; the reads still happen
                self.note = f"not subscribed (updates will not be heard): {exc}"
        try:
            contents = await self.session.aread_resource(self.uri)
        except McpError as exc:
            self._show_error(str(exc))
            return
        frame = await anyio.to_thread.run_sync(contents.to_dataframe) if self.as_frame else None
        # Value, contents, frame and count move together: code polling one sees the others match.
        with self._lock:
            self.reads += 1
            self.contents = contents
            self.value = contents.text
            self.frame = frame
        self._show(frame)

    def _body_html(self) -> str:
        if self.as_frame or self.value is None:
            return super()._body_html()
        return _html.code_block(self.value)

    def __repr__(self) -> str:
        text = super().__repr__()
        if not self.as_frame and self.value is not None:
            value = self.value if len(self.value) <= 2000 else self.value[:2000] + " …"
            text += "\n" + printable(value, multiline=True)
        return text

    def _title(self) -> str:
        return self.uri

    def _counts(self) -> list[str]:
        return [f"{self.updates} updates", f"{self.reads} reads"]

    def _unhook(self) -> None:
        self._updates.unhook()

    def _owes(self) -> bool:
        return self._updates.owes()

    async def _give_back(self) -> None:
        await self._updates.give_back()


class ToolWatch(_View):
    """A tool call repeated on a timer (``every`` seconds) and/or on a resource's updates (``on``).

    ``session.watch_tool(name, arguments, every=5)``. One call at a time: a tick that comes while a
    call is running is skipped (``.skipped``), and updates during a call bring one more call after
    it. ``.result`` is the latest :class:`~mcp_notebook.ToolResult`, ``.frame`` its DataFrame,
    ``.calls`` and ``.errors`` (failed calls and results the tool marked as errors) count.
    """

    kind = "watch_tool"

    def __init__(
        self,
        session: ViewSession,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        every: float | None = None,
        on: str | None = None,
        rate: float = 4.0,
        timeout: float | None = None,
        max_rows: int = 50,
        widget_factory: WidgetFactory | None = None,
    ) -> None:
        if every is None and on is None:
            raise ValueError("watch_tool() needs every=SECONDS, on=URI, or both")
        if every is not None and not every >= MIN_EVERY:
            raise ValueError(f"every must be at least {MIN_EVERY} seconds")
        super().__init__(session, rate=rate, max_rows=max_rows, widget_factory=widget_factory)
        self.session = session
        self.name = name
        self.arguments = dict(arguments or {})
        self.every = every
        self.on = on
        self.timeout = timeout
        self.result: ToolResult | None = None
        self.calls = 0
        self.errors = 0
        #: Timer ticks that came while a call was still running (and were dropped).
        self.skipped = 0
        self.in_flight = False
        self._subscribed = False
        self._updates = _Updates(session, on, self._poke) if on is not None else None
        self._poke()  # the first call, at once
        self._start(*([self._tick] if every is not None else []))

    @property
    def _interval(self) -> float:
        return min(self.every, 1.0 / self.rate) if self.every is not None else 1.0 / self.rate

    @property
    def updates(self) -> int:
        return self._updates.count if self._updates is not None else 0

    async def _tick(self) -> None:
        assert self.every is not None
        every = self.every
        started = anyio.current_time()
        ticks = 0
        while True:
            ticks += 1
            await anyio.sleep_until(started + ticks * every)
            # A late wake-up (a busy engine) does not make up the ticks it missed.
            ticks = max(ticks, math.floor((anyio.current_time() - started) / every))
            if self.in_flight:
                self.skipped += 1
            else:
                self._poke_here()

    async def _run(self) -> None:
        if self._updates is not None and not self._subscribed:
            try:
                await self._updates.subscribe()
                self._subscribed = True
            except McpError as exc:
                self._show_error(f"not subscribed to {self.on}: {exc}")
        self.in_flight = True
        try:
            result = await self.session.acall_tool(
                self.name, self.arguments, progress=_no_progress, timeout=self.timeout
            )
        except McpError as exc:
            self.errors += 1
            self.calls += 1
            self._show_error(str(exc))
            return
        finally:
            self.in_flight = False
        frame = await anyio.to_thread.run_sync(result.to_dataframe)
        # The counters move together, as the result is shown: code polling them sees one state.
        error = f"the tool reported an error: {result.text[:500]}" if result.is_error else None
        with self._lock:
            self.result = result
            self.frame = frame
            self.errors += result.is_error
            self.calls += 1
        self._show(frame, error)

    def _title(self) -> str:
        when = []
        if self.every is not None:
            when.append(f"every {self.every:g}s")
        if self.on is not None:
            when.append(f"on {self.on}")
        return f"{self.name} {' and '.join(when)}"

    def _counts(self) -> list[str]:
        counts = [f"{self.calls} calls", f"{self.errors} errors"]
        if self.skipped:
            counts.append(f"{self.skipped} ticks skipped")
        return counts

    def _unhook(self) -> None:
        if self._updates is not None:
            self._updates.unhook()

    def _owes(self) -> bool:
        return self._updates is not None and self._updates.owes()

    async def _give_back(self) -> None:
        if self._updates is not None:
            await self._updates.give_back()


def _no_progress(progress: float, total: float | None, message: str | None) -> None:
    return None
