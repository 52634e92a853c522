"""Every tunable of a connection, validated once when the client is built.

A bad value raises ``ValueError``/``TypeError`` naming the option, at construction time, never as a
mysterious failure in the middle of a session.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from .._version import __version__
from ..protocol._negotiation import Pin, parse_protocol_option

__all__ = ["ConnectionOptions"]

_LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


@dataclass(frozen=True, slots=True)
class ConnectionOptions:
    """Connection settings. Times are in seconds; ``None`` means "no limit" where allowed."""

    #: "auto" (probe ``server/discover``, fall back to ``initialize``), "modern", "legacy" or a version.
    protocol: str = "auto"
    #: Default deadline of every request.
    timeout: float = 60.0
    #: With ``reset_timeout_on_progress``, how long a request may run in all.
    max_total_timeout: float | None = 600.0
    #: A progress notification restarts the request's deadline (bounded by ``max_total_timeout``).
    reset_timeout_on_progress: bool = True
    #: How long the ``server/discover`` probe waits before concluding the server is legacy.
    probe_timeout: float = 5.0
    #: How long starting and negotiating may take, in all.
    connect_timeout: float = 30.0
    #: Requests in flight at once; beyond that a request is refused as ``overloaded``.
    max_in_flight: int = 4096
    #: Requests allowed to wait while the connection is not ready (reconnecting); beyond: ``overloaded``.
    max_queued: int = 256
    #: Reconnect (and restart a stdio server) after the transport is lost.
    reconnect: bool = True
    #: Consecutive failed reconnect attempts before the client closes.
    max_reconnect_attempts: int = 5
    #: Backoff before reconnect attempt n is ``min(backoff_max, backoff_initial * 2**(n-1))``, jittered.
    backoff_initial: float = 0.2
    backoff_max: float = 10.0
    #: Deadline for one sampling / elicitation / roots handler (a human may be answering).
    handler_timeout: float = 600.0
    #: Server-to-client handlers running at once; further requests wait for a slot.
    max_concurrent_handlers: int = 8
    #: ``input_required`` rounds one request may take before it fails as a protocol error.
    max_input_rounds: int = 10
    #: Items one list (tools, resources, templates, prompts, tasks) may hold, over all its pages;
    #: past it the list is refused with an McpError, never cut short. Why 25,000: published servers
    #: list tens to a few thousand items, and the explorer opens 20,000 tools at once, so no real
    #: list comes near it; a server that pages without end stops at ~30 MB of small tools (measured,
    #: issue #35) instead of gigabytes. Each page is further bounded by ``max_message_bytes``.
    max_list_items: int = 25_000
    #: Server log level to ask for (modern: per request in ``_meta``; legacy: ``logging/setLevel``).
    log_level: str | None = None
    #: Returns W3C trace context (``traceparent``, ``tracestate``) to put in each request's ``_meta``.
    trace_context: Callable[[], dict[str, str] | None] | None = None
    #: Our ``clientInfo``.
    client_info: dict[str, Any] = field(
        default_factory=lambda: {"name": "mcp-notebook", "version": __version__}
    )

    def __post_init__(self) -> None:
        parse_protocol_option(self.protocol)  # raises ValueError naming the option
        positive = ("timeout", "probe_timeout", "connect_timeout", "handler_timeout", "backoff_max")
        for name in positive:
            _check_positive(name, getattr(self, name))
        if self.max_total_timeout is not None:
            _check_positive("max_total_timeout", self.max_total_timeout)
        _check_number("backoff_initial", self.backoff_initial)
        if self.backoff_initial < 0:
            raise ValueError(f"backoff_initial={self.backoff_initial!r} must be >= 0")
        for name in ("max_in_flight", "max_concurrent_handlers", "max_input_rounds", "max_list_items"):
            _check_int(name, getattr(self, name), minimum=1)
        for name in ("max_queued", "max_reconnect_attempts"):
            _check_int(name, getattr(self, name), minimum=0)
        for name in ("reset_timeout_on_progress", "reconnect"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be True or False, not {getattr(self, name)!r}")
        if self.log_level is not None and self.log_level not in _LOG_LEVELS:
            raise ValueError(f"log_level={self.log_level!r} is not one of {', '.join(_LOG_LEVELS)}")
        if self.trace_context is not None and not callable(self.trace_context):
            raise TypeError(
                "trace_context must be a callable returning {'traceparent': ..., 'tracestate': ...}"
            )
        info = self.client_info
        if not isinstance(info, dict) or not isinstance(info.get("name"), str) or "version" not in info:
            raise ValueError("client_info must be a dict with a 'name' and a 'version'")

    def request_timeout(self, timeout: float | None) -> float:
        """The seconds a request given ``timeout`` may take (None: the default ``timeout``).

        One rule for the connection's requests and the client's calls, which split one deadline
        between a tool list fetch and the call."""
        if timeout is None:
            return self.timeout
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
            raise ValueError(f"timeout={timeout!r} must be a positive number of seconds")
        return timeout

    def backoff_delay(self, failures: int) -> float:
        """Seconds to wait before the next attempt after ``failures`` failed ones, jittered.

        Jitter (a random 50-100 % of the step) keeps many clients of one restarted server from
        all coming back in the same instant.
        """
        step = float(min(self.backoff_max, self.backoff_initial * 2**failures))
        return step * random.uniform(0.5, 1.0)

    @property
    def pin(self) -> Pin:
        return parse_protocol_option(self.protocol)

    @classmethod
    def names(cls) -> frozenset[str]:
        return frozenset(f.name for f in fields(cls))


def _check_number(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        raise TypeError(f"{name} must be a number of seconds, not {value!r}")


def _check_positive(name: str, value: Any) -> None:
    _check_number(name, value)
    if value <= 0:
        raise ValueError(f"{name}={value!r} must be > 0")


def _check_int(name: str, value: Any, *, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an integer, not {value!r}")
    if value < minimum:
        raise ValueError(f"{name}={value!r} must be >= {minimum}")
