"""The I/O half of era negotiation; the rules themselves are in :mod:`mcp_notebook.protocol.negotiation`.

Runs on a fresh channel before the connection is ready: a ``server/discover`` probe (modern) or the
``initialize`` handshake (legacy), as the pure decision functions direct, and returns what was
agreed. A server whose era is already known (a reconnect) is not probed again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ..protocol.envelope import META_SERVER_INFO
from ..protocol.errors import UNSUPPORTED_PROTOCOL_VERSION, McpError
from ..protocol.negotiation import (
    Adopt,
    Decision,
    DiscoverAgain,
    Fail,
    Initialize,
    Negotiated,
    Pin,
    after_discover,
    check_initialize_result,
    first_step,
)
from ..protocol.versions import Era

__all__ = ["Exchange", "Negotiated", "negotiate", "negotiated_from_discover"]

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
