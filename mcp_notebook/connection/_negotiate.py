"""The I/O half of era negotiation; the rules themselves are in :mod:`mcp_notebook.protocol._negotiation`.

Runs on a fresh channel before the connection is ready: a ``server/discover`` probe (modern) or the
``initialize`` handshake (legacy), as the pure decision functions direct, and returns what was
agreed. A server whose era is already known (a reconnect) is not probed again.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from ..protocol._envelope import META_SERVER_INFO
from ..protocol._errors import REFUSAL_KINDS, UNSUPPORTED_PROTOCOL_VERSION, McpError
from ..protocol._negotiation import (
    Adopt,
    Decision,
    DiscoverAgain,
    Fail,
    Initialize,
    Negotiated,
    Pin,
    after_discover,
    after_probe_ended_connection,
    check_initialize_result,
    first_step,
)
from ..protocol._versions import Era, pick_mutual_modern
from ..transports._base import Transport
from ._options import ConnectionOptions

__all__ = ["Exchange", "Negotiated", "Negotiator", "negotiate", "negotiated_from_discover"]

logger = logging.getLogger("mcp_notebook.connection")

#: ``exchange(method, params, era=, version=, timeout=)`` sends one request and returns its result.
Exchange = Callable[..., Awaitable[dict[str, Any]]]
Notify = Callable[[str, dict[str, Any] | None], Awaitable[None]]


async def negotiate(
    *,
    pin: Pin,
    known: Negotiated | None,
    exchange: Exchange,
    notify: Notify,
    capabilities: Callable[[Era], dict[str, Any]],
    client_info: dict[str, Any],
    probe_timeout: float,
    handshake_timeout: float,
) -> Negotiated:
    step: Decision
    if known is not None:
        # A server found modern stays modern: a lost probe is a failed attempt, never a fallback.
        if known.reconnects_by_discover:
            pin = Pin("modern", known.version)
            step = DiscoverAgain(known.version)
        else:
            step = Initialize(known.version)
    else:
        step = first_step(pin)
    retried = False
    probe_lost = False
    while True:
        if isinstance(step, DiscoverAgain):
            step = await _discover(pin, step.version, exchange, probe_timeout, retried=retried)
            probe_lost = isinstance(step, Initialize) and not retried  # a fallback, the first one
            retried = True
        elif isinstance(step, Adopt):
            return negotiated_from_discover(step.version, step.result)
        elif isinstance(step, Initialize):
            try:
                return await _initialize(
                    pin,
                    step.version,
                    exchange,
                    notify,
                    capabilities("legacy"),
                    client_info,
                    handshake_timeout,
                )
            except McpError as exc:
                if not (probe_lost and exc.code == UNSUPPORTED_PROTOCOL_VERSION):
                    raise
                # -32022 to the fallback handshake: one corrective probe. Typically a dual-era stdio
                # server slower to start than probe_timeout (a busy machine, many servers starting
                # at once) that read the probe after all and now serves the modern protocol on this
                # connection; its answer to the second probe comes at once.
                probe_lost = False
                step = first_step(pin)
        elif isinstance(step, Fail):
            raise step.error


async def _discover(pin: Pin, version: str, exchange: Exchange, timeout: float, *, retried: bool) -> Decision:
    try:
        result = await exchange("server/discover", None, era="modern", version=version, timeout=timeout)
    except McpError as exc:
        if exc.kind == "timeout":
            return after_discover(pin, timed_out=True, retried=retried)
        if exc.kind in ("server", "version"):
            error = {"code": exc.code, "message": exc.message, "data": exc.data}
            return after_discover(pin, error=error, retried=retried)
        raise
    return after_discover(pin, result=result, retried=retried)


def negotiated_from_discover(version: str, result: dict[str, Any]) -> Negotiated:
    meta = result.get("_meta")
    info = meta.get(META_SERVER_INFO) if isinstance(meta, dict) else None
    caps = result.get("capabilities")
    instructions = result.get("instructions")
    return Negotiated(
        era="modern",
        version=version,
        server_info=info if isinstance(info, dict) else {},
        capabilities=caps if isinstance(caps, dict) else {},
        instructions=instructions if isinstance(instructions, str) else None,
    )


async def _initialize(
    pin: Pin,
    version: str,
    exchange: Exchange,
    notify: Notify,
    capabilities: dict[str, Any],
    client_info: dict[str, Any],
    timeout: float,
) -> Negotiated:
    params = {"protocolVersion": version, "capabilities": capabilities, "clientInfo": client_info}
    result = await exchange("initialize", params, era="legacy", version=version, timeout=timeout)
    agreed = check_initialize_result(pin, version, result)
    await notify("notifications/initialized", None)
    info = result.get("serverInfo")
    instructions = result.get("instructions")
    return Negotiated(
        era="legacy",
        version=agreed,
        server_info=info if isinstance(info, dict) else {},
        capabilities=result.get("capabilities") or {},
        instructions=instructions if isinstance(instructions, str) else None,
    )


class Negotiator:
    """The era negotiation of one connection, across its channels.

    What was agreed is remembered in :attr:`known` (by the router), so a reconnect repeats the
    known handshake instead of probing again; a refusal of it probes afresh. ``exchange`` and
    ``notify`` send on the current channel.
    """

    def __init__(
        self,
        transport: Transport,
        options: ConnectionOptions,
        *,
        capabilities: Callable[[Era], dict[str, Any]],
        exchange: Exchange,
        notify: Notify,
    ) -> None:
        self._transport = transport
        self._opts = options
        self._pin = options.pin
        self._capabilities = capabilities
        self._exchange = exchange
        self._notify = notify
        #: The era found, remembered across reconnects.
        self.known: Negotiated | None = None
        #: The method of the negotiation request awaiting its answer (None between them).
        self._awaiting: str | None = None
        #: A connection ended on our discover probe once: the option to negotiate with since.
        self._probe_ended: Pin | None = None
        #: What ended it, until the log has been told.
        self._untold: str | None = None

    def probe_ended_connection(self, reason: McpError) -> bool:
        """The channel ended (``reason``) during negotiation: True if it ended while our
        ``server/discover`` probe awaited its answer and the server is to be reached again at
        once, with ``initialize`` and no probe (the rule: :func:`after_probe_ended_connection`);
        False if this end is a failure like any other."""
        if self._awaiting != "server/discover":
            return False
        pin = after_probe_ended_connection(self._pin, ended_before=self._probe_ended is not None)
        if pin is None:
            return False
        self._probe_ended = pin
        self._untold = reason.message.partition(";")[0]  # what ended it, without the quoted output
        return True

    def _tell_probe_ended(self) -> None:
        """Say once, when the handshake without the probe worked, that the probe ended the server:
        only then is it known that the probe did it (a server that exits at start-up whatever it
        is sent ends the second connection too, and fails as it would have)."""
        if self._untold is None:
            return
        # WARNING, not INFO: the server crashed on a message every MCP client may send, and each
        # connect now starts it twice; protocol='legacy' spares that, and only the user can say so.
        logger.warning(
            "%s: %s on the server/discover probe (as servers on early MCP SDKs do); started it again "
            "and connected with the legacy handshake (initialize). protocol='legacy' skips the probe",
            self._transport.describe(),
            self._untold,
        )
        self._untold = None

    async def on_new_channel(self) -> Negotiated:
        """Negotiate on a fresh channel within ``connect_timeout`` (TimeoutError past it)."""
        known = self.known or _hinted(self._transport, self._pin)
        with anyio.fail_after(self._opts.connect_timeout):
            if known is None and self._probe_ended is not None:
                negotiated = await self.handshake(None, self._probe_ended)
                self._tell_probe_ended()
                return negotiated
            try:
                return await self.handshake(known)
            except McpError as exc:
                if (
                    known is None
                    or not known.reprobes_after_refusal
                    or exc.kind not in REFUSAL_KINDS
                    or self._probe_ended is not None  # it would end the connection again
                ):
                    raise
                # The handshake that worked before is refused now: the server may have been
                # upgraded. Probe its era afresh (a modern server never falls back).
                logger.info(
                    "%s refused the handshake it accepted before (%s); probing its era again",
                    self._transport.describe(),
                    exc,  # str(): the server's text with its escapes made visible
                )
                self.known = None
                forget = getattr(self._transport, "forget", None)
                if callable(forget):
                    forget()
                return await self.handshake(None)

    async def handshake(self, known: Negotiated | None, pin: Pin | None = None) -> Negotiated:
        """Negotiate from what is known (None: probe), under ``pin`` or the user's option."""
        self._awaiting = None
        return await negotiate(
            pin=pin or self._pin,
            known=known,
            exchange=self._noted_exchange,
            notify=self._notify,
            capabilities=self._capabilities,
            client_info=self._opts.client_info,
            probe_timeout=self._opts.probe_timeout,
            handshake_timeout=self._opts.connect_timeout,
        )

    async def _noted_exchange(self, method: str, params: dict[str, Any] | None, **how: Any) -> dict[str, Any]:
        """``exchange``, noting which request awaits its answer: if the channel ends meanwhile,
        the connection asks :meth:`probe_ended_connection` whether the probe ended it."""
        self._awaiting = method
        result = await self._exchange(method, params, **how)
        self._awaiting = None
        return result

    async def after_ready(self, negotiated: Negotiated) -> None:
        """What a fresh session needs once agreed: the log level, where it is a session setting."""
        level = self._opts.log_level
        if level and negotiated.sends_log_level:
            try:
                await self._exchange(
                    "logging/setLevel",
                    {"level": level},
                    era="legacy",
                    version=negotiated.version,
                    timeout=self._opts.probe_timeout,
                )
            except McpError as exc:
                logger.warning("the server refused logging/setLevel: %s", exc)

    async def rediscover(self, error: McpError) -> Negotiated:
        """A modern server refused our version (``-32022``): discover again at a mutual one and
        return (and remember) the new agreement, or raise ``error`` if there is none."""
        data = error.data if isinstance(error.data, dict) else {}
        version = pick_mutual_modern(data.get("supported"))
        if version is None:
            raise error
        result = await self._exchange(
            "server/discover", None, era="modern", version=version, timeout=self._opts.probe_timeout
        )
        decision = after_discover(Pin("modern", None), result=result)
        if not isinstance(decision, Adopt):
            raise error
        self.known = negotiated_from_discover(decision.version, decision.result)
        return self.known


def _hinted(transport: Transport, pin: Pin) -> Negotiated | None:
    """What the transport remembers of this server's era (HTTP, per endpoint), as a known result.

    Only ``protocol="auto"`` asks: a pinned era or version is the user's word, not a guess.
    """
    if pin.mode != "auto" or pin.version is not None:
        return None
    hint = transport.era_hint()
    if hint is None:
        return None
    era, version = hint
    return Negotiated(era=era, version=version)
