"""The router: one live conversation with one server, across reconnects.

What it owns: the transport's channel and the reader task, the run/attempt loop, the state
machine (``_states.py``) and reconnects, and the request path: wait for ``ready``, send, recover
as the table in ``_recovery.py`` allows, answer ``input_required`` rounds. Each other job is a part
it owns and gives callables to (none imports this module): the wire (``_requests.Outbox``: ids,
one counter never reset so a late answer from an earlier attempt never matches, the pending map,
deadlines, cancellation), what the server sends on its own (``_notifications``), the server's
requests (``_server_requests``), deadline pausing (``_deadlines``), era negotiation
(``_negotiate.Negotiator``) and telemetry (``_telemetry``).

States: ``connecting -> negotiating -> ready -> (reconnecting -> negotiating -> ready)* ->
closing -> closed``.

What it must never do: run user code in the reader task (progress callbacks run in the caller's
task, handlers in their own), resend a request that may have run (only a ``-32022`` answer, which
means the server refused the request unexecuted, and a send the transport proves wrote nothing, a
:class:`~mcp_notebook.transports._base.NotDelivered`, are retried), or put arguments or secrets in a
message.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from typing import Any

import anyio
import anyio.abc

from ..protocol._envelope import result_type
from ..protocol._errors import (
    CONNECTION_CLOSED,
    FATAL_KINDS,
    MAX_NAME_CHARS,
    REQUEST_TIMEOUT,
    McpError,
    advise_first_connect,
    clip,
)
from ..protocol._jsonrpc import (
    ErrorResponse,
    FrameError,
    Notification,
    Request,
    RequestId,
    Response,
)
from ..protocol._negotiation import Pin
from ..protocol._printable import printable
from ..protocol._versions import Era
from ..transports._base import Channel, RequestFailed, Transport, secrets_of
from ._deadlines import DeadlinePause, DeadlineSweeper
from ._handlers import ClientHandlers
from ._log_budget import LogBudget
from ._negotiate import Negotiated, Negotiator
from ._notifications import NotificationRouter
from ._options import ConnectionOptions
from ._progress import GuardedProgress, ProgressCallback
from ._recovery import NotSent, Recovery, allowed_recovery, classify_failure, failed_again, relist_tools
from ._requests import Outbox
from ._server_requests import ServerRequests
from ._states import ConnectionState, Lifecycle, LifecycleEvent
from ._telemetry import ConnectionEvent, ConnectionStats, Telemetry, clock_and_events

__all__ = ["Connection", "ConnectionEvent", "ConnectionState", "ConnectionStats", "ProgressCallback"]

logger = logging.getLogger("mcp_notebook.connection")
#: The server's own log messages of one level logged in full before only a summary is (they are
#: the server's content, so more than our own warnings; listeners still receive every one).
_SERVER_LOG_BURST = 20


class _Attempt:
    """One channel's lifetime: how it ended, and what to cancel when it does."""

    def __init__(self) -> None:
        self.ended = anyio.Event()
        self.reason: McpError | None = None
        self.fatal = False
        self.negotiation_scope: anyio.CancelScope | None = None
        self.task_group: anyio.abc.TaskGroup | None = None
        #: The channel's end was its first failure (not a failed negotiation, not a close).
        self.channel_ended = False
        #: It ended on our discover probe: connect again at once, without the probe.
        self.probe_ended = False


class Connection:
    def __init__(self, transport: Transport, options: ConnectionOptions, handlers: ClientHandlers) -> None:
        self._transport = transport
        #: The values given to reach the server (env, headers, a token): masked in every error
        #: this connection raises and every log record it makes of the server's text.
        self.secrets = secrets_of(transport)
        self._opts = options
        self._handlers = handlers
        self._caps: dict[Era, dict[str, Any]] = {
            "modern": handlers.capabilities("modern"),
            "legacy": handlers.capabilities("legacy"),
        }
        self._handshakes = Negotiator(
            transport,
            options,
            capabilities=self._caps.__getitem__,
            exchange=self._exchange,
            notify=self.notify,
        )
        self._life = Lifecycle()  # the state, moved only through _move (see _states.py)
        self._state_changed = anyio.Event()
        self._negotiated: Negotiated | None = None
        self._session_generation = 0  # bumped by each renewal of a legacy HTTP session
        self._renew_lock = anyio.Lock()
        self._relist_lock = anyio.Lock()
        self._channel: Channel | None = None
        self._attempt: _Attempt | None = None
        self._close_requested = anyio.Event()
        self._closed_reason: McpError | None = None
        self._last_error: McpError | None = None
        self._running = False  # has run() started? (a close before it ends the connection at once)
        self._queued = 0
        self._sweeper: DeadlineSweeper | None = None
        # Chosen once the event loop is known (in run): on asyncio the loop's own clock and events
        # skip anyio's per-call backend lookup on the hot path.
        self._clock: Callable[[], float] = anyio.current_time
        # What a server can cause once per message is logged within a budget (the first few in
        # full, then a summary per interval), so a flood cannot flood a notebook cell through
        # logging; the counters above stay exact.
        self._warnings = LogBudget(
            logger,
            lambda: self._clock(),
            where=transport.describe,
            noun="warnings",
            hint=" (client.stats has the exact counts)",
        )
        self._server_logs = LogBudget(
            logging.getLogger("mcp_notebook.server"),
            lambda: self._clock(),
            where=transport.describe,
            noun="log messages from the server",
            burst=_SERVER_LOG_BURST,
        )
        self._telemetry = Telemetry(lambda: self._clock(), self._warnings)
        self._counters = self._telemetry.counters
        self._pauses = DeadlinePause(
            lambda: self._clock(), lambda: self._pending.values(), lambda: self._sweeper
        )
        self._outbox = Outbox(
            options,
            self._caps,
            telemetry=self._telemetry,
            sweeper=lambda: self._sweeper,
            paused=lambda: self._pauses.paused,
        )
        # The outbox's own map and set (never replaced), read by the reader and the parts.
        self._pending = self._outbox.pending
        self._streams = self._outbox.streams
        self._serving = ServerRequests(
            handlers,
            options,
            counters=self._counters,
            warnings=self._warnings,
            pauses=self._pauses,
            channel=lambda: self._channel,
            give_up=self._give_up_channel,
        )
        self._notes = NotificationRouter(
            counters=self._counters,
            warnings=self._warnings,
            server_logs=self._server_logs,
            clock=lambda: self._clock(),
            secrets=self.secrets,
            pending=lambda: self._pending,
            streams=self._streams,
            scopes=self._serving.scopes,
            extend_on_progress=options.reset_timeout_on_progress,
        )

    # --- observation ----------------------------------------------------------------------------

    @property
    def state(self) -> ConnectionState:
        return self._life.state

    @property
    def negotiated(self) -> Negotiated | None:
        return self._negotiated

    @property
    def closed_reason(self) -> McpError | None:
        return self._closed_reason

    @property
    def last_error(self) -> McpError | None:
        """Why the connection was last lost (kept across reconnects); None if it never was."""
        return self._last_error

    def hears_server(self) -> bool:
        """Can a message the server sends on its own (a list change) reach us right now?"""
        channel = self._channel
        return channel is not None and channel.hears_server

    def routes_by_headers(self) -> bool:
        """Are modern requests routed by ``Mcp-*`` headers (Streamable HTTP)? Then a tool whose
        ``x-mcp-header`` declarations break the rules cannot be called and is left out."""
        channel = self._channel
        return channel is not None and channel.routes_by_headers

    def negotiated_era(self) -> Era | None:
        return self._negotiated.era if self._negotiated is not None else None

    def server_capabilities(self) -> dict[str, Any]:
        return self._negotiated.capabilities if self._negotiated is not None else {}

    def now(self) -> float:
        """The clock every deadline of this connection runs on (on asyncio, the loop's own).

        Callers timing a call read it here: ``anyio.current_time()`` looks the backend up on each
        read, which measured as a tenth of a pipelined call's cost when a call read it four times.
        """
        return self._clock()

    def stats(self) -> ConnectionStats:
        return self._telemetry.snapshot(active=self._outbox.active, streams=len(self._streams))

    def on_state_change(self, callback: Callable[[ConnectionState], None]) -> Callable[[], None]:
        """Call ``callback(state)`` on every transition; returns a function that unsubscribes."""
        return self._notes.on_state_change(callback)

    def on_notification(self, callback: Callable[[Notification], None]) -> Callable[[], None]:
        """Call ``callback(notification)`` from the reader: for quick, non-blocking library code only."""
        return self._notes.on_notification(callback)

    def on_event(self, callback: Callable[[ConnectionEvent], None]) -> Callable[[], None]:
        """Call ``callback(event)`` for telemetry events; quick, non-blocking library code only.

        Events name methods, ids, durations and outcomes; never arguments, results or headers.
        """
        return self._telemetry.on_event(callback)

    @property
    def _closing(self) -> bool:
        """Has the user closed it? (The state says ``closing`` until the shutdown is over.)"""
        return self._close_requested.is_set()

    def _move(self, event: LifecycleEvent) -> None:
        """Apply a lifecycle event (the table in ``_states.py``) and tell whoever listens.

        An event the table forbids raises :class:`ForbiddenTransition`: a bug in this module.
        """
        before = self._life.state
        state = self._life.apply(event)
        if state == before:
            return
        self._state_changed.set()
        self._state_changed = anyio.Event()
        logger.debug("connection to %s: %s", self._transport.describe(), state)
        if self._telemetry.listeners:
            self._telemetry.emit("state", state=state)
        self._notes.tell_state(state)

    # --- lifetime -------------------------------------------------------------------------------

    async def run(self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Connect, stay connected, reconnect; return when closed. Reports started once first ready.

        If the first attempt fails, the error is raised (through ``TaskGroup.start``) instead.
        """
        if self._closing:
            raise self._closed_error()
        self._running = True
        self._clock, new_event = clock_and_events()
        self._outbox.use(self._clock, new_event)
        failures = 0
        try:
            while True:
                attempt = _Attempt()
                was_ready = await self._run_attempt(attempt, task_status)
                reason = attempt.reason or McpError(
                    "transport", "the connection ended", code=CONNECTION_CLOSED
                )
                if self._closing:
                    if not self._life.ever_ready:
                        raise self._closed_error()
                    break
                if not self._life.ever_ready:
                    if attempt.probe_ended:
                        self._move("lost")  # and start the server again, at once
                        continue
                    raise advise_first_connect(reason)
                if attempt.fatal or not self._opts.reconnect:
                    self._closed_reason = reason
                    break
                failures = 0 if was_ready else failures + 1
                if failures >= self._opts.max_reconnect_attempts:
                    self._closed_reason = McpError(
                        "transport",
                        f"gave up reconnecting after {failures} failed attempts; "
                        f"last error: {reason.message}",
                        code=CONNECTION_CLOSED,
                    )
                    break
                self._move("lost")
                self._counters.reconnects += 1
                with anyio.move_on_after(self._opts.backoff_delay(failures)):
                    await self._close_requested.wait()
                if self._closing:
                    break
        except McpError as exc:  # the first attempt failed: that is why the client is closed
            if self._closed_reason is None and exc.kind != "closed":
                self._closed_reason = exc
            raise
        except Exception as exc:
            # A bug, not a server's doing (those end an attempt): say so, rather than "closed".
            if self._closed_reason is None and not self._closing:
                self._closed_reason = McpError(
                    "transport",
                    f"the connection failed unexpectedly ({type(exc).__name__}); please report this",
                    code=CONNECTION_CLOSED,
                )
            raise
        finally:
            if self._closed_reason is None:
                self._closed_reason = McpError("closed", "the client was closed", code=CONNECTION_CLOSED)
            self._outbox.fail_all(self._closed_reason)
            self._move("finished" if self._closing else "give_up")
            self._warnings.close()
            self._server_logs.close()

    async def close(self) -> None:
        """Ask ``run`` to shut down gracefully; returns at once (the owner awaits ``run``)."""
        self._close_requested.set()
        self._move("close")
        if not self._running and self._in_state("closing"):  # nothing runs that would finish it
            self._closed_reason = McpError("closed", "the client was closed", code=CONNECTION_CLOSED)
            self._move("finished")
        if self._attempt is not None:
            self._end_attempt(
                self._attempt, McpError("closed", "the client was closed", code=CONNECTION_CLOSED)
            )

    async def _run_attempt(self, attempt: _Attempt, task_status: anyio.abc.TaskStatus[None]) -> bool:
        """One channel from start to end; True if it became ready."""
        self._attempt = attempt
        ready = False
        try:
            async with self._transport.connect() as channel, anyio.create_task_group() as tg:
                attempt.task_group = tg
                self._channel = channel
                self._sweeper = DeadlineSweeper(self._clock, lambda: len(self._pending))
                tg.start_soon(self._sweeper.run)
                tg.start_soon(self._read_loop, channel, attempt)
                self._warnings.attach(tg)  # a summary task only once something is held back
                self._server_logs.attach(tg)
                self._move("channel_open")
                negotiated = await self._negotiate(attempt)
                if negotiated is not None and not self._closing:
                    self._negotiated = self._handshakes.known = negotiated
                    await self._handshakes.after_ready(negotiated)
                    ready = True
                    first = not self._life.ever_ready
                    self._move("negotiated")
                    if first:
                        task_status.started()
                    await attempt.ended.wait()
                tg.cancel_scope.cancel()
        except McpError as exc:  # the transport could not start
            self._end_attempt(attempt, exc)
        except BaseExceptionGroup as group:
            # A transport that starts inside a task group (HTTP+SSE opens its stream there) raises
            # its McpError wrapped in a group: the same failed attempt, to be backed off and retried.
            error = _only_mcp_error(group)
            if error is None:
                raise
            self._end_attempt(attempt, error)
        finally:
            self._warnings.attach(None)
            self._server_logs.attach(None)
            self._channel = None
            self._sweeper = None
            self._attempt = None
            attempt.task_group = None
        if not ready and self._closing:
            self._closed_reason = attempt.reason
        elif not ready and attempt.channel_ended and attempt.reason is not None:
            attempt.probe_ended = self._handshakes.probe_ended_connection(attempt.reason)
        return ready

    async def _negotiate(self, attempt: _Attempt) -> Negotiated | None:
        """Agree on an era on the new channel; None (the attempt ended) if that failed."""
        with anyio.CancelScope() as scope:
            attempt.negotiation_scope = scope
            try:
                return await self._handshakes.on_new_channel()
            except TimeoutError:
                self._end_attempt(
                    attempt,
                    McpError(
                        "timeout",
                        "the server did not finish connecting within "
                        f"connect_timeout={self._opts.connect_timeout:g}s",
                        code=REQUEST_TIMEOUT,
                    ),
                )
            except McpError as exc:
                self._end_attempt(attempt, exc, fatal=exc.kind in FATAL_KINDS)
        return None

    def _end_attempt(self, attempt: _Attempt, reason: McpError, *, fatal: bool = False) -> None:
        """The channel is finished: fail its requests now, stop negotiating, wake the attempt."""
        self.secrets.mask_error(reason)  # (the reason may quote the server: its stderr, its error)
        if reason.kind != "closed":
            self._last_error = reason
        if attempt.reason is None:
            attempt.reason = reason
            attempt.fatal = fatal
        attempt.ended.set()
        if attempt.negotiation_scope is not None:
            attempt.negotiation_scope.cancel()
        if attempt.task_group is not None:
            attempt.task_group.cancel_scope.cancel()
        if self._attempt is attempt:
            # From this moment new requests wait for the next channel instead of writing to a dead
            # one; the old channel is still being shut down in the background.
            self._channel = None
            if self._life.ever_ready and not self._closing and self._opts.reconnect and not attempt.fatal:
                self._move("lost")
        self._outbox.fail_all(reason)

    # --- requests -------------------------------------------------------------------------------

    def hold_deadlines(self) -> Callable[[], None]:
        """Pause every request's deadline (those sent later too) until the returned function runs.

        For a person's step outside any one request, such as an OAuth sign-in that a 401 started
        mid-session: the requests waiting for it must wait for the person, not time out. The
        returned function is idempotent.
        """
        return self._pauses.hold()

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
        label: str | None = None,
        stream: bool = False,
        on_id: Callable[[RequestId], None] | None = None,
        without_extensions: Collection[str] = (),
    ) -> dict[str, Any]:
        """Send a request in the negotiated era and return its final result.

        ``stream=True`` marks a long-lived request (``subscriptions/listen``) that the server may
        end with ``notifications/cancelled``; ``on_id`` learns each JSON-RPC id the request is
        sent with (an ``input_required`` round or a resend gets a new one). ``without_extensions``
        leaves those extensions out of the capabilities this one request declares (modern era).

        Waits for ``ready`` first (bounded by ``max_queued`` and the deadline), answers
        ``input_required`` rounds through the handlers, and resends once in the cases where the
        server provably did not run it: a ``-32022`` (after re-discovering), a legacy session the
        server forgot (after renewing it) and a ``-32020`` (after re-listing the tools). All of it
        within one deadline.
        """
        timeout = self._opts.request_timeout(timeout)
        progress = GuardedProgress.wrap(progress)  # one guard for every resend of this request
        label = clip(label or method, 2 * MAX_NAME_CHARS)  # a server's 200,000-character tool name
        rounds = 0
        used: frozenset[Recovery] = frozenset()  # each recovery at most once per request
        current = params
        # One deadline for the whole logical request, across input rounds and resends; time spent
        # in the client's own handlers (a person answering) is added back, as a pause.
        deadline = self._clock() + timeout
        while True:
            remaining = deadline - self._clock()
            if remaining <= 0:
                self._counters.timeouts += 1
                raise McpError(
                    "timeout",
                    f"{label} timed out after {timeout:g}s (across its resends)",
                    code=REQUEST_TIMEOUT,
                )
            waited = await self._wait_ready(remaining, label)
            negotiated = self._negotiated
            assert negotiated is not None
            session = self._session_generation
            try:
                result = await self._outbox.send(
                    self._channel,
                    method,
                    current,
                    era=negotiated.era,
                    version=negotiated.version,
                    timeout=max(remaining - waited, 0.001),
                    progress=progress,
                    label=label,
                    stream=stream,
                    on_id=on_id,
                    without_extensions=without_extensions,
                )
            except (NotSent, McpError) as exc:
                failure = classify_failure(exc, negotiated, method)
                recovery = allowed_recovery(failure, used, reconnect=self._opts.reconnect)
                if recovery is None or not await self._recover(recovery, exc, session, deadline):
                    # An error may quote the server, which may echo a secret it was given.
                    if isinstance(exc, NotSent):
                        raise self.secrets.mask_error(exc.error) from None
                    again = failed_again(exc, failure, used)
                    if again is not exc:
                        raise self.secrets.mask_error(again) from None
                    self.secrets.mask_error(exc)
                    raise
                used |= {recovery}
                continue
            if negotiated.answers_input_required and result_type(result) == "input_required":
                rounds += 1
                if rounds > self._opts.max_input_rounds:
                    raise McpError(
                        "protocol",
                        f"{label}: the server asked for input more than max_input_rounds="
                        f"{self._opts.max_input_rounds} times",
                    )
                asked = self._clock()
                current = await self._serving.answer_input_required(params, result, label)
                deadline += self._clock() - asked
                if "inputResponses" not in current:
                    # State-only round (load shedding / polling): back off a little instead of
                    # hammering. Our own wait, so on the request's clock (only time the handlers
                    # took, a person answering, is added back).
                    await anyio.sleep(min(0.05 * rounds, 0.25, max(deadline - self._clock(), 0.0)))
                continue
            return result

    async def _renew_session(self, sent_under: int) -> None:
        """Run the handshake again on this channel, once for all the requests the 404 refused.

        Meanwhile the connection is ``negotiating`` again, so new requests wait (they would go
        without a session and be refused). A renewal that fails ends the channel: the reconnect
        starts a session from scratch.
        """
        async with self._renew_lock:
            if self._session_generation != sent_under:
                return  # another request renewed it already
            negotiated = self._negotiated
            if negotiated is None or not negotiated.renews_expired_session or self._life.state != "ready":
                return
            self._move("renew")
            try:
                renewed = await self._handshakes.handshake(negotiated, Pin("legacy", negotiated.version))
            except McpError as exc:
                if self._attempt is not None:
                    self._end_attempt(self._attempt, exc)
                raise
            finally:
                self._session_generation += 1
            self._negotiated = self._handshakes.known = renewed
            logger.info("%s forgot our session; started a new one", self._transport.describe())
            if self._in_state("negotiating"):  # not if the channel died meanwhile
                self._move("negotiated")

    async def _recover(
        self, recovery: Recovery, exc: NotSent | McpError, sent_under: int, deadline: float
    ) -> bool:
        """Do what lets a refused request be sent again (see _recovery.py); False: it cannot be."""
        negotiated = self._negotiated
        assert negotiated is not None
        if isinstance(exc, NotSent):
            # The channel was gone before any byte of our message was written: it never reached
            # the server, so sending it on the next channel is safe. A send that failed part-way
            # is not NotSent: it fails the call instead.
            return await self._channel_replaced(exc.channel, max(deadline - self._clock(), 0.0))
        if recovery == "rediscover":
            self._negotiated = await self._handshakes.rediscover(exc)
        elif recovery == "renew_session":
            # The server forgot the session and refused the request unexecuted (§4.2).
            await self._renew_session(sent_under)
        else:
            # Our Mcp-Param-* headers disagree with the tool as the server has it now (§3.5):
            # learn the tools anew, and tell the cache the list changed (the server's tools did).
            async with self._relist_lock:
                await relist_tools(
                    self._exchange, era=negotiated.era, version=negotiated.version, timeout=self._opts.timeout
                )
            self._notes.announce(Notification("notifications/tools/list_changed", None))
        return True

    async def _channel_replaced(self, dead: Channel | None, timeout: float) -> bool:
        """Wait until ``dead`` is no longer the current channel; False if it still is at the timeout.

        A write that found the channel gone can fail before the reader has noticed the end; a
        resend must go to the next channel, not straight back to the dead one.
        """
        with anyio.move_on_after(timeout):
            while dead is not None and self._channel is dead and not self._closing:
                await self._state_changed.wait()
            return True
        return False

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        channel = self._channel
        if channel is None:
            raise McpError("transport", "not connected", code=CONNECTION_CLOSED)
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await channel.send(message)

    async def _wait_ready(self, timeout: float, label: str) -> float:
        """Wait (as one of at most ``max_queued``) until ready; return the seconds waited."""
        if self._life.state == "ready":
            return 0.0
        if self._closing or self._life.state == "closed":
            raise self._closed_error()
        if self._queued >= self._opts.max_queued:
            self._counters.overloaded += 1
            raise McpError(
                "overloaded",
                f"{label}: {self._queued} requests are already waiting for the connection "
                f"(max_queued={self._opts.max_queued})",
            )
        start = anyio.current_time()
        self._queued += 1
        try:
            with anyio.move_on_after(timeout):
                while not self._in_state("ready"):
                    if self._closing or self._in_state("closed"):
                        raise self._closed_error()
                    await self._state_changed.wait()
                return anyio.current_time() - start
        finally:
            self._queued -= 1
        raise McpError(
            "timeout",
            f"{label}: the connection was not ready within {timeout:g}s (state: {self._life.state})",
            code=REQUEST_TIMEOUT,
        )

    def _in_state(self, state: ConnectionState) -> bool:
        # A method, not an inline comparison, so type narrowing does not survive an await.
        return self._life.state == state

    def _closed_error(self) -> McpError:
        reason = self._closed_reason
        if reason is None or reason.kind == "closed":
            return McpError("closed", "the client is closed", code=CONNECTION_CLOSED)
        return McpError("closed", f"the client is closed: {reason.message}", code=CONNECTION_CLOSED)

    async def _exchange(
        self, method: str, params: dict[str, Any] | None, *, era: Era, version: str, timeout: float
    ) -> dict[str, Any]:
        """One request on the current channel, for negotiation and housekeeping (no retry)."""
        try:
            return await self._outbox.send(
                self._channel, method, params, era=era, version=version, timeout=timeout
            )
        except NotSent as not_sent:
            raise not_sent.error from None

    async def fulfil(self, input_requests: dict[str, Any], label: str) -> dict[str, Any]:
        """Answer a modern ``inputRequests`` map through the client's handlers, within
        ``handler_timeout``: for an ``input_required`` round and for a task that waits for input."""
        return await self._serving.fulfil(input_requests, label)

    # --- the reader -----------------------------------------------------------------------------

    async def _read_loop(self, channel: Channel, attempt: _Attempt) -> None:
        """Route every frame; only the channel's end (an McpError from ``receive``) stops it.

        The handlers below check each server-controlled value before use, and anything they did
        not foresee costs that one frame (logged and counted), never the connection: a reader that
        died would leave every caller waiting and the client closed for a reason nobody gave.
        """
        try:
            while True:
                message = await channel.receive()
                kind = type(message)
                try:
                    if kind is Response or kind is ErrorResponse:
                        self._on_response(message)  # type: ignore[arg-type]
                    elif kind is Notification:
                        self._on_notification(message)  # type: ignore[arg-type]
                    elif kind is Request:
                        self._serving.on_request(message, attempt.task_group)  # type: ignore[arg-type]
                    else:
                        self._on_bad_frame(message, attempt)  # type: ignore[arg-type]
                except Exception as exc:  # a bug, or a value we did not foresee
                    self._counters.malformed_frames += 1
                    self._warnings.log(
                        logging.ERROR,
                        "unhandled message",
                        "dropped a %s from the server that could not be handled (%s)",
                        kind.__name__,
                        type(exc).__name__,
                        exc_info=logger.isEnabledFor(logging.DEBUG),
                    )
        except McpError as exc:
            if attempt.reason is None:
                attempt.channel_ended = True
            self._end_attempt(attempt, exc)

    def _on_notification(self, message: Notification) -> None:
        self._notes.route(message)

    def _on_bad_frame(self, error: FrameError | RequestFailed, attempt: _Attempt) -> None:
        self._notes.on_bad_frame(error, self._serving.refuse, attempt.task_group)

    def _give_up_channel(self, reason: McpError) -> None:
        """The server misbehaves past a bound (it stopped reading our answers): close, for good.

        Not reconnected: a restarted server would do the same, and a connection that became ready
        each time would retry it forever.
        """
        attempt = self._attempt
        if attempt is None:
            return
        self._end_attempt(attempt, reason, fatal=True)
        if self._life.ever_ready and not self._closing:
            # Closed from now on, not only once the server has been stopped (seconds, for one that
            # does not read): a request meanwhile fails at once with this reason.
            self._closed_reason = reason
            self._move("give_up")

    def _on_response(self, message: Response | ErrorResponse) -> None:
        pending = self._pending.pop(message.id, None) if message.id is not None else None
        if pending is not None:
            pending.deliver(message)
            return
        if message.id is None:
            error = message.error if isinstance(message, ErrorResponse) else {}
            self._warnings.log(
                logging.WARNING,
                "error without id",
                "the server could not process a message from us: %s",
                self.secrets.mask(printable(error.get("message"))),
            )
            return
        self._counters.late_responses += 1
        self._warnings.log(
            logging.DEBUG,
            "late response",
            "dropped a response to request %r, which is no longer waiting",
            message.id,
        )
        if self._telemetry.listeners:
            self._telemetry.emit("late_response", id=message.id)


def _only_mcp_error(group: BaseExceptionGroup[BaseException]) -> McpError | None:
    """The first McpError of a group that holds nothing else (nested groups included), else None."""
    matched, rest = group.split(McpError)
    if matched is None or rest is not None:
        return None
    leaf: BaseException = matched
    while isinstance(leaf, BaseExceptionGroup):
        leaf = leaf.exceptions[0]
    return leaf if isinstance(leaf, McpError) else None
