"""Requests on the wire: ids, the pending map, writing, awaiting, and how each one ended.

Why a part of its own: the router decides *when* a request is sent (ready, resent after a
recovery, answered ``input_required``); this part sends one: it stamps the message, enters it
into the pending map (the reader delivers its answer there), writes it within its deadline,
reports its progress in the caller's task, cancels it on the server when the caller gives up or
its deadline passes, and counts how it ended (``ConnectionStats.outcomes``).

Never resends: a message that provably was not written raises :class:`NotSent` for the router to
decide; anything else that failed may have run.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Collection
from typing import Any

import anyio

from ..protocol._envelope import stamp
from ..protocol._envelope import without_extensions as without_extensions_of
from ..protocol._errors import CONNECTION_CLOSED, REQUEST_TIMEOUT, McpError
from ..protocol._jsonrpc import ErrorResponse, RequestId, Response
from ..protocol._versions import Era
from ..transports._base import Channel, NotDelivered
from ._deadlines import DeadlineSweeper
from ._notifications import report_progress
from ._options import ConnectionOptions
from ._pending import EXPIRED, PendingRequest
from ._progress import GuardedProgress
from ._recovery import NotSent
from ._telemetry import Telemetry, with_trace_context
from ._wakeup import EventWakeup

__all__ = ["Outbox"]

#: How long a cancellation notice may wait to be written into a congested channel.
_CANCEL_WAIT_CONGESTED = 0.1

#: Said of a request whose fate is unknown: the reason it is failed rather than sent again.
_MAY_HAVE_RUN = "it may or may not have run on the server, so it was not sent again"


class Outbox:
    """The requests of one connection on the wire (across its channels: ids never repeat, so a
    late answer from an earlier channel never matches).

    ``sweeper`` gives the current channel's deadline sweeper; ``paused`` says whether deadlines
    are on hold (a request sent then starts paused). :meth:`use` sets the event loop's clock and
    event type once it is known.
    """

    def __init__(
        self,
        options: ConnectionOptions,
        capabilities: dict[Era, dict[str, Any]],
        *,
        telemetry: Telemetry,
        sweeper: Callable[[], DeadlineSweeper | None],
        paused: Callable[[], int],
    ) -> None:
        self._opts = options
        self._caps = capabilities
        self._telemetry = telemetry
        self._counters = telemetry.counters
        self._sweeper = sweeper
        self._paused = paused
        self._ids = itertools.count(1)
        #: Requests waiting for their answer, by id (the reader delivers answers here).
        self.pending: dict[RequestId, PendingRequest] = {}
        #: Requests sent whose caller has not yet seen how they ended: counted apart from the
        #: pending map, which an answer leaves a moment before its caller wakes up to count it.
        self.active = 0
        #: Ids of long-lived requests (``subscriptions/listen``).
        self.streams: set[RequestId] = set()
        self._clock: Callable[[], float] = anyio.current_time
        self._new_event: Callable[[], Any] = EventWakeup  # until use() gives the loop's own
        #: The capabilities a request declares without some extensions, by era and names: every
        #: plain tools/call leaves the tasks extension out, and the capabilities (built once per
        #: connection, never changed) would otherwise be copied for each call.
        self._trimmed: dict[tuple[Era, tuple[str, ...]], dict[str, Any]] = {}

    def use(self, clock: Callable[[], float], new_event: Callable[[], Any]) -> None:
        self._clock = clock
        self._new_event = new_event

    def fail_all(self, reason: McpError) -> None:
        """Fail every waiting request with ``reason`` (its channel ended)."""
        if not self.pending:
            return
        if reason.kind == "transport":
            reason = McpError(
                "transport",
                f"{reason.message} (the request was in flight; {_MAY_HAVE_RUN})",
                code=reason.code or CONNECTION_CLOSED,
            )
        pending = list(self.pending.values())
        self.pending.clear()
        for request in pending:
            request.deliver(reason)

    async def send(
        self,
        channel: Channel | None,
        method: str,
        params: dict[str, Any] | None,
        *,
        era: Era,
        version: str,
        timeout: float,
        progress: GuardedProgress | None = None,
        label: str | None = None,
        stream: bool = False,
        on_id: Callable[[RequestId], None] | None = None,
        without_extensions: Collection[str] = (),
    ) -> dict[str, Any]:
        """One JSON-RPC request on the current channel, with its deadline and cancellation: write
        it, await its outcome, and turn the outcome into a result or an McpError.

        Raises :class:`NotSent` when the message could not be written at all.
        """
        label = label or method
        if channel is None:
            raise NotSent(McpError("transport", f"{label}: not connected", code=CONNECTION_CLOSED))
        if len(self.pending) >= self._opts.max_in_flight:
            self._counters.overloaded += 1
            raise McpError(
                "overloaded",
                f"{label}: {len(self.pending)} requests are in flight "
                f"(max_in_flight={self._opts.max_in_flight})",
            )
        request_id = next(self._ids)
        # Our token is the request's id, sent only with a callback to report to: progress under
        # any other token, or for a request that sent none, is dropped (see NotificationRouter).
        token = request_id if progress is not None else None
        message = self._message(request_id, method, params, era, version, token, without_extensions)
        if on_id is not None:
            on_id(request_id)
        if stream:
            self.streams.add(request_id)
        pending = self._register(request_id, method, timeout, token)
        try:
            await self._write(channel, message, pending, label, direct=progress is None and not stream)
            if progress is None:  # the common call: nothing to report meanwhile, no frame more
                while pending.outcome is None:
                    await pending.wait()
            else:
                await self._await_answer(pending, progress)
        except anyio.get_cancelled_exc_class():
            self.ended("cancelled")
            if self.pending.pop(request_id, None) is not None and method != "initialize":
                self._counters.cancellations += 1
                if self._telemetry.listeners:
                    self._telemetry.emit(
                        "cancel", id=request_id, method=method, reason="cancelled by the client"
                    )
                await self._cancel_on_server(channel, request_id, "cancelled by the client")
            raise
        except (NotSent, McpError):
            raise  # a write that failed: counted where it was raised (_write)
        except BaseException:
            self.ended("error")  # not an McpError: a bug, or arguments that cannot be encoded
            raise
        finally:
            self.pending.pop(request_id, None)
            if stream:
                self.streams.discard(request_id)
            if not self.pending:  # the last one in flight: nothing of the burst may linger
                sweeper = self._sweeper()
                if sweeper is not None:
                    sweeper.forget_finished()
        return await self._settle(channel, pending, label, timeout)

    def _message(
        self,
        request_id: RequestId,
        method: str,
        params: dict[str, Any] | None,
        era: Era,
        version: str,
        token: RequestId | None,
        without_extensions: Collection[str],
    ) -> dict[str, Any]:
        """The request as sent: params stamped for the era, with the trace context if configured."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        stamped = stamp(
            params,
            era=era,
            version=version,
            capabilities=self._declared(era, without_extensions),
            client_info=self._opts.client_info,
            progress_token=token,
            log_level=self._opts.log_level,
        )
        trace = self._opts.trace_context
        if trace is not None:
            stamped = with_trace_context(stamped, trace)
        if stamped is not None:
            message["params"] = stamped
        return message

    def _declared(self, era: Era, without_extensions: Collection[str]) -> dict[str, Any]:
        """The capabilities one request declares: the era's, minus ``without_extensions``."""
        if not without_extensions:
            return self._caps[era]
        key = (era, tuple(without_extensions))
        trimmed = self._trimmed.get(key)
        if trimmed is None:
            trimmed = self._trimmed[key] = without_extensions_of(self._caps[era], without_extensions)
        return trimmed

    def _register(
        self, request_id: RequestId, method: str, timeout: float, token: RequestId | None
    ) -> PendingRequest:
        """Enter a request into the pending map (paused if deadlines are on hold) and count it."""
        now = self._clock()
        pending = PendingRequest(
            request_id,
            method,
            now=now,
            timeout=timeout,
            max_total=self._opts.max_total_timeout,
            new_event=self._new_event,
            token=token,
        )
        if self._paused():
            pending.pause(now)
        self.pending[request_id] = pending
        self.active += 1
        self._counters.requests += 1
        if self._telemetry.listeners:
            self._telemetry.emit("request_start", id=request_id, method=method)
        return pending

    async def _write(
        self, channel: Channel, message: dict[str, Any], pending: PendingRequest, label: str, *, direct: bool
    ) -> None:
        """Write the request, bounded by its deadline; from then on the sweeper times it.

        ``direct``: a plain request on a channel that can exchange it in place (HTTP) does so here.
        """
        sweeper = self._sweeper()
        exchange = getattr(channel, "exchange", None) if direct else None
        try:
            if exchange is not None:
                # HTTP: the exchange runs right here, bounded by the request's deadline (the
                # sweeper's expiry cancels it); see _StreamableChannel.exchange.
                if sweeper is not None:
                    sweeper.watch(pending)
                    sweeper = None
                answer = None
                with anyio.CancelScope() as pending.scope:
                    answer = await exchange(message)
                pending.scope = None
                if (  # (None: the answer comes through the reader)
                    isinstance(answer, Response | ErrorResponse | McpError) and pending.outcome is None
                ):
                    self.pending.pop(pending.id, None)
                    pending.deliver(answer)
            elif channel.congested:  # a write that may block is bounded by the request's deadline
                with anyio.CancelScope(deadline=pending.deadline) as send_scope:
                    await channel.send(message)
                if send_scope.cancelled_caught:
                    pending.expire()
            else:
                await channel.send(message)
        except NotDelivered as exc:  # nothing was written: safe to send on the next channel
            self.ended(exc.kind)
            error = McpError(exc.kind, f"{label}: {exc.message}", code=exc.code)
            raise NotSent(error, channel) from None
        except McpError as exc:  # some or all of it may have reached the server: never resend
            self.ended(exc.kind)
            note = f" ({_MAY_HAVE_RUN})" if exc.kind == "transport" else ""
            raise McpError(exc.kind, f"{label}: {exc.message}{note}", code=exc.code) from None
        if sweeper is not None:
            sweeper.watch(pending)

    @staticmethod
    async def _await_answer(pending: PendingRequest, progress: GuardedProgress | None) -> None:
        """Wait for the request's outcome, reporting its progress in the caller's task meanwhile."""
        while pending.outcome is None:
            await pending.wait()
            if progress is not None:
                for item in pending.take_progress():
                    await report_progress(progress, item)
        if progress is not None:  # updates that arrived while a callback ran, before the result
            for item in pending.take_progress():
                await report_progress(progress, item)

    async def _settle(
        self, channel: Channel, pending: PendingRequest, label: str, timeout: float
    ) -> dict[str, Any]:
        """Count how the request ended and return its result or raise its error."""
        outcome = pending.take_outcome()
        request_id, method = pending.id, pending.method
        # Counted before the "request" event goes out, so a listener reading stats sees it ended.
        if isinstance(outcome, Response):
            self._counters.ok += 1
            self.active -= 1
            if self._telemetry.listeners:
                self._telemetry.emit_request_end(request_id, method, pending.started, outcome)
            return outcome.result
        if isinstance(outcome, ErrorResponse):
            self.ended("server")
        elif outcome is EXPIRED:
            self.ended("timeout")
            self._counters.timeouts += 1
        else:
            assert isinstance(outcome, McpError)
            self.ended(outcome.kind)
        if self._telemetry.listeners:
            self._telemetry.emit_request_end(request_id, method, pending.started, outcome)
        if isinstance(outcome, ErrorResponse):
            raise McpError.from_jsonrpc(outcome.error, context=f"{label}: ")
        if outcome is EXPIRED:
            if method != "initialize":
                await self._cancel_on_server(channel, request_id, f"timed out after {timeout:g}s")
            raise McpError(
                "timeout",
                f"{label} timed out after {timeout:g}s; the server was asked to cancel it "
                "(pass timeout= for a longer deadline)",
                code=REQUEST_TIMEOUT,
            )
        assert isinstance(outcome, McpError)
        raise McpError(outcome.kind, f"{label}: {outcome.message}", code=outcome.code, data=outcome.data)

    def ended(self, kind: str) -> None:
        """Count a request that ended other than with a result (once, in the step it ended in)."""
        self.active -= 1
        self._telemetry.ended(kind)

    async def _cancel_on_server(self, channel: Channel, request_id: RequestId, reason: str) -> None:
        # A congested channel (a server that stopped reading) gets the notice queued, not waited
        # for: the caller's deadline has passed already.
        wait = _CANCEL_WAIT_CONGESTED if channel.congested else 1.0
        with anyio.CancelScope(shield=True), anyio.move_on_after(wait), contextlib.suppress(McpError):
            await channel.send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": request_id, "reason": reason},
                }
            )
