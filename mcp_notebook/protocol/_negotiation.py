"""Era negotiation as pure functions (PROTOCOL.md §3.3, DESIGN.md "Negotiation").

The connection performs the I/O (a ``server/discover`` probe, an ``initialize`` handshake) and asks
this module what each outcome means. Nothing here sends, sleeps or reads a clock, so every rule is a
row in a table test.

The rules, for stdio and HTTP alike (HTTP statuses arrive as ``data.httpStatus``):

* A DiscoverResult that lists a modern version we speak -> modern at that version.
* A DiscoverResult that lists no version we speak (or no ``supportedVersions`` at all: some mocks
  answer every method with ``{}``) -> legacy: the server is not modern to us.
* ``-32022`` naming a mutual modern version -> one more discover at that version (never a fallback);
  naming none -> legacy, because dual-era SDK servers list only their modern versions there and a
  pure-modern server that shares nothing with us will refuse ``initialize`` with a clear error anyway.
* A second ``-32022`` after the retry -> a version error; we never loop.
* ``-32021`` / ``-32020`` -> the server is modern but refused us: its error (kind ``server``), not a
  fallback.
* Over HTTP, a 429 or 5xx (``data.httpStatus``) -> a failed attempt (kind ``transport``): a busy or
  broken server says nothing about its era.
* Any other error, or no answer within the probe timeout -> legacy, ``initialize``.
* The connection ending while the probe waits for its answer (a stdio server on an early mcp 1.x
  SDK exits on a method it does not know) -> under ``protocol="auto"``, connect again once and go
  straight to ``initialize``; a second such end is the connection's failure, never a loop.

What an agreed era implies for the client afterwards is here too, as named properties of
:class:`EraRules` (and so of :class:`Negotiated`): the one home of the era policy. Code outside
``protocol/`` asks ``negotiated.renews_expired_session``, never ``era == "legacy"``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ._errors import (
    CONNECTION_CLOSED,
    HEADER_MISMATCH,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    McpError,
)
from ._versions import (
    HANDSHAKE_VERSIONS,
    LATEST_HANDSHAKE_VERSION,
    LATEST_MODERN_VERSION,
    MODERN_VERSIONS,
    Era,
    era_of,
    pick_mutual_modern,
)

__all__ = [
    "Adopt",
    "Decision",
    "DiscoverAgain",
    "EraRules",
    "Fail",
    "Initialize",
    "Negotiated",
    "Pin",
    "after_discover",
    "after_probe_ended_connection",
    "check_initialize_result",
    "era_rules",
    "first_step",
    "parse_protocol_option",
]


@dataclass(frozen=True, slots=True)
class Adopt:
    """Speak the modern era at ``version``; ``result`` is the DiscoverResult."""

    version: str
    result: dict[str, Any]


@dataclass(frozen=True, slots=True)
class DiscoverAgain:
    """Send ``server/discover`` once more, at ``version``."""

    version: str


@dataclass(frozen=True, slots=True)
class Initialize:
    """Do the legacy handshake offering ``version``."""

    version: str


@dataclass(frozen=True, slots=True)
class Fail:
    """Give up with ``error``."""

    error: McpError


Decision = Adopt | DiscoverAgain | Initialize | Fail


@dataclass(frozen=True, slots=True)
class EraRules:
    """What speaking ``era`` means for the client, one property per decision (PROTOCOL.md §3-§4).

    The modern era has no sessions and no handshake: a server states its versions in
    ``server/discover``, answers with ``input_required`` rounds, routes by ``Mcp-*`` headers and
    streams list changes through ``subscriptions/listen``. The legacy era has the ``initialize``
    handshake, a session (over HTTP) the server may forget, and per-resource subscriptions.
    """

    era: Era

    # --- what the connection decides --------------------------------------------------------

    @property
    def answers_input_required(self) -> bool:
        """A result may be ``input_required``: answer its input requests and send it again."""
        return self.era == "modern"

    @property
    def rediscovers_on_unsupported_version(self) -> bool:
        """A ``-32022`` to a request means the server changed versions: discover again, resend."""
        return self.era == "modern"

    @property
    def renews_expired_session(self) -> bool:
        """A server that forgot our session refused the request unexecuted: handshake again, resend."""
        return self.era == "legacy"

    @property
    def reconnects_by_discover(self) -> bool:
        """A reconnect to a server found in this era probes with ``server/discover`` again (and
        never falls back); otherwise it repeats the handshake at the known version."""
        return self.era == "modern"

    @property
    def reprobes_after_refusal(self) -> bool:
        """A refused handshake that worked before means the server may have been upgraded: probe
        its era afresh. (A modern server never falls back, so its refusal is final.)"""
        return self.era == "legacy"

    @property
    def sets_log_level_per_session(self) -> bool:
        """The log level is a session setting (``logging/setLevel`` once), not stamped per request."""
        return self.era == "legacy"

    # --- what the HTTP binding decides ----------------------------------------------------------

    @property
    def resumes_broken_streams(self) -> bool:
        """A response stream that ends before its answer is resumed with ``Last-Event-ID``
        (SEP-1699); in the modern era such a stream is a failed request."""
        return self.era == "legacy"

    @property
    def tells_cancellation(self) -> bool:
        """A cancelled request's server is sent ``notifications/cancelled``; in the modern era
        closing the request's response stream is the cancellation."""
        return self.era == "legacy"

    # --- what the client and its live lists decide ---------------------------------------------

    @property
    def pings_with_discover(self) -> bool:
        """There is no ``ping``: ``server/discover`` is the round trip to measure."""
        return self.era == "modern"

    @property
    def routes_tools_by_header(self) -> bool:
        """Tool calls carry ``Mcp-Param-*`` headers from the tools' ``x-mcp-header`` declarations
        (where the channel routes by headers), so a tool whose declarations break the rules cannot
        be called."""
        return self.era == "modern"

    @property
    def lists_carry_ttl(self) -> bool:
        """A list result may say how long it stays fresh (``ttl``)."""
        return self.era == "modern"

    @property
    def announces_list_changes(self) -> bool:
        """List changes arrive as ``notifications/*/list_changed`` where the server's capabilities
        announce ``listChanged``; in the modern era they come through ``subscriptions/listen``."""
        return self.era == "legacy"

    @property
    def subscribes_per_resource(self) -> bool:
        """Resource updates are asked for with ``resources/subscribe``/``unsubscribe`` per URI
        (and asked again after a reconnect), not through a ``subscriptions/listen`` stream."""
        return self.era == "legacy"

    @property
    def listens_for_changes(self) -> bool:
        """Changes the client follows come through one ``subscriptions/listen`` stream."""
        return self.era == "modern"


_RULES: dict[Era, EraRules] = {"modern": EraRules("modern"), "legacy": EraRules("legacy")}


def era_rules(era: Era) -> EraRules:
    """The rules of ``era`` when there is no negotiated result at hand (a message's stamp, say)."""
    return _RULES[era]


@dataclass(frozen=True, slots=True)
class Negotiated(EraRules):
    """What the server and we agreed on (the era's rules are its properties)."""

    version: str
    server_info: dict[str, Any] = field(default_factory=dict)
    capabilities: dict[str, Any] = field(default_factory=dict)
    instructions: str | None = None

    @property
    def sends_log_level(self) -> bool:
        """Send ``logging/setLevel`` once ready: a session setting the server has the capability for."""
        return self.sets_log_level_per_session and "logging" in self.capabilities


@dataclass(frozen=True, slots=True)
class Pin:
    """What the user's ``protocol=`` option asks for: an era to probe for or a fixed version."""

    mode: str  # "auto" | "modern" | "legacy"
    version: str | None  # a pinned version, or None


def parse_protocol_option(value: str) -> Pin:
    """Validate ``protocol=``: "auto", "modern", "legacy" or a version string we speak."""
    if value in ("auto", "modern", "legacy"):
        return Pin(value, None)
    era = era_of(value)
    if era is None:
        raise ValueError(
            f"protocol={value!r} is not 'auto', 'modern', 'legacy' or a protocol version this client speaks "
            f"({', '.join(MODERN_VERSIONS + HANDSHAKE_VERSIONS)})"
        )
    return Pin(era, value)


def first_step(pin: Pin) -> DiscoverAgain | Initialize:
    """The first message to send: a discover probe, or straight to the handshake."""
    if pin.mode == "legacy":
        return Initialize(pin.version or LATEST_HANDSHAKE_VERSION)
    return DiscoverAgain(pin.version or LATEST_MODERN_VERSION)


def after_discover(
    pin: Pin,
    *,
    result: dict[str, Any] | None = None,
    error: dict[str, Any] | None = None,
    timed_out: bool = False,
    retried: bool = False,
) -> Decision:
    """What a discover outcome means. Exactly one of result / error / timed_out describes it.

    ``retried`` is True when this discover was itself the retry after a ``-32022``.
    """
    modern_only = pin.mode == "modern"
    if result is not None:
        supported = result.get("supportedVersions")
        wanted = pin.version
        if wanted is not None:
            if isinstance(supported, list) and wanted in supported:
                return Adopt(wanted, result)
        else:
            mutual = pick_mutual_modern(supported)
            if mutual is not None:
                return Adopt(mutual, result)
        if modern_only:
            return Fail(_no_mutual_version(supported, pin))
        return Initialize(LATEST_HANDSHAKE_VERSION)
    if error is not None:
        status = _http_status(error)
        if status is not None and (status == 429 or status >= 500):
            # Busy or broken: that says nothing about the era, so it is no reason to fall back.
            said = error.get("message")  # the binding's: the status, its reason, the address
            said = said if isinstance(said, str) and said else f"the server answered HTTP {status}"
            return Fail(
                McpError(
                    "transport",
                    f"server/discover: {said}; it is busy or failing, so its protocol era cannot be told yet",
                    code=CONNECTION_CLOSED,
                )
            )
        code = error.get("code")
        if code == UNSUPPORTED_PROTOCOL_VERSION:
            data = error.get("data")
            supported = data.get("supported") if isinstance(data, dict) else None
            mutual = pick_mutual_modern(supported)
            if mutual is not None and not retried and pin.version is None:
                return DiscoverAgain(mutual)
            if modern_only or retried:
                return Fail(_no_mutual_version(supported, pin))
            return Initialize(LATEST_HANDSHAKE_VERSION)
        if code in (MISSING_REQUIRED_CLIENT_CAPABILITY, HEADER_MISMATCH):
            return Fail(McpError.from_jsonrpc(error, context="server/discover refused: "))
        if modern_only:
            return Fail(McpError.from_jsonrpc(error, context="server/discover failed (protocol='modern'): "))
        return Initialize(LATEST_HANDSHAKE_VERSION)
    if timed_out:
        if modern_only:
            return Fail(McpError("timeout", "server/discover got no answer (protocol='modern')"))
        return Initialize(LATEST_HANDSHAKE_VERSION)
    raise ValueError("after_discover needs a result, an error or timed_out=True")


def after_probe_ended_connection(pin: Pin, *, ended_before: bool) -> Pin | None:
    """How to connect again after the connection ended while ``server/discover`` waited for its
    answer, or None: the end is the connection's failure.

    Servers built on early mcp 1.x SDKs (chroma-mcp 0.2.6 on mcp 1.6.0) exit on a method they do
    not know, and the probe is the first message they get: under ``protocol="auto"`` that is
    legacy evidence, so connect again as ``protocol="legacy"`` does (``initialize``, accepting the
    server's handshake version, no probe). Once only (``ended_before``): a server that also ends
    the next connection is failing, not old, and starting it again would loop.
    """
    if pin.mode != "auto" or ended_before:
        return None
    return Pin("legacy", None)


def check_initialize_result(pin: Pin, offered: str, result: dict[str, Any]) -> str:
    """The version the handshake agreed on, or a ``version``/``protocol`` McpError.

    The server answers with the version we offered or its own choice; we accept any handshake
    version we speak unless the user pinned one.
    """
    version = result.get("protocolVersion")
    if not isinstance(version, str):
        raise McpError("protocol", "initialize result has no protocolVersion")
    if not isinstance(result.get("capabilities", {}), dict):
        raise McpError("protocol", "initialize result has malformed capabilities")
    if pin.version is not None and version != pin.version:
        raise McpError(
            "version",
            f"server answered initialize with protocol version {version!r}, but protocol={pin.version!r} "
            "was pinned; use protocol='legacy' to accept the server's choice",
        )
    if version not in HANDSHAKE_VERSIONS:
        raise McpError(
            "version",
            f"server chose protocol version {version!r}, which this client does not speak "
            f"(it speaks {', '.join(HANDSHAKE_VERSIONS)} by handshake)",
            data={"supported": list(HANDSHAKE_VERSIONS), "requested": offered},
        )
    return version


def _http_status(error: dict[str, Any]) -> int | None:
    """The HTTP status an error came with (the HTTP binding puts it in ``data.httpStatus``)."""
    data = error.get("data")
    status = data.get("httpStatus") if isinstance(data, dict) else None
    return status if isinstance(status, int) and not isinstance(status, bool) else None


def _no_mutual_version(supported: Any, pin: Pin) -> McpError:
    listed = ", ".join(v for v in supported if isinstance(v, str)) if isinstance(supported, list) else "none"
    wanted = pin.version or " or ".join(MODERN_VERSIONS)
    return McpError(
        "version",
        f"no protocol version in common: the server supports {listed}; this client asked for {wanted}",
        code=UNSUPPORTED_PROTOCOL_VERSION,
        data={"supported": supported, "requested": wanted},
    )
