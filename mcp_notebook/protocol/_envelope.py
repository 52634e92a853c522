"""What goes around a request: the modern ``_meta`` envelope, progress tokens, capabilities.

One function stamps a request for either era, so no other module knows the reserved ``_meta`` keys
or the difference between a legacy and a modern capabilities object (PROTOCOL.md §3.1, §3.2, §4.1).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ._errors import McpError
from ._jsonrpc import RequestId
from ._versions import Era

__all__ = [
    "META_CLIENT_CAPABILITIES",
    "META_CLIENT_INFO",
    "META_LOG_LEVEL",
    "META_PROTOCOL_VERSION",
    "META_SERVER_INFO",
    "META_SUBSCRIPTION_ID",
    "client_capabilities",
    "result_type",
    "stamp",
    "without_extensions",
]

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

_RESULT_TYPES = frozenset({"complete", "input_required", "task"})


def stamp(
    params: dict[str, Any] | None,
    *,
    era: Era,
    version: str,
    capabilities: dict[str, Any],
    client_info: dict[str, Any],
    progress_token: RequestId | None = None,
    log_level: str | None = None,
) -> dict[str, Any] | None:
    """``params`` with the ``_meta`` the era requires, as a new dict (``params`` itself when there is
    nothing to add); the caller's dict is never changed."""
    meta: dict[str, Any] = {}
    if era == "modern":
        meta[META_PROTOCOL_VERSION] = version
        meta[META_CLIENT_CAPABILITIES] = capabilities
        meta[META_CLIENT_INFO] = client_info
        if log_level is not None:
            meta[META_LOG_LEVEL] = log_level
    if progress_token is not None:
        meta["progressToken"] = progress_token
    if not meta:
        return params
    stamped = dict(params) if params else {}
    existing = stamped.get("_meta")
    if isinstance(existing, dict):
        meta = {**existing, **meta}
    stamped["_meta"] = meta
    return stamped


def client_capabilities(
    era: Era,
    *,
    sampling: bool,
    elicitation_modes: Iterable[str],
    roots: bool,
    extensions: Iterable[str] = (),
    extension_settings: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The capabilities object we declare: only what a handler exists for.

    ``extensions`` are modern-era extension identifiers, each declared with empty settings (the
    tasks extension: its legacy twin is the core ``tasks`` capability). ``extension_settings``
    are extensions declared in both eras with their settings (MCP Apps: a 2025-11-25 server reads
    ``capabilities.extensions`` too, SEP-1865); on a name in both, the settings win.
    """
    caps: dict[str, Any] = {}
    if sampling:
        caps["sampling"] = {}
    modes = list(elicitation_modes)
    if modes:
        caps["elicitation"] = {mode: {} for mode in modes}
    if roots:
        # Legacy roots carry listChanged; modern roots have no such flag (PROTOCOL.md §3.2).
        caps["roots"] = {"listChanged": False} if era == "legacy" else {}
    declared: dict[str, Any] = {}
    if era == "modern":
        declared.update((name, {}) for name in extensions)
    for name, settings in (extension_settings or {}).items():
        declared[name] = dict(settings)
    if declared:
        caps["extensions"] = {name: declared[name] for name in sorted(declared)}
    return caps


def without_extensions(capabilities: dict[str, Any], names: Iterable[str]) -> dict[str, Any]:
    """``capabilities`` minus the named extensions, as a new dict (the same one if none is there).

    A tools/call that must not become a task leaves the tasks extension out of its declared
    capabilities: with the extension, a server may run an optional tool as a task.
    """
    declared = capabilities.get("extensions")
    if not isinstance(declared, dict):
        return capabilities
    kept = {name: settings for name, settings in declared.items() if name not in set(names)}
    if len(kept) == len(declared):
        return capabilities
    trimmed = {key: value for key, value in capabilities.items() if key != "extensions"}
    if kept:
        trimmed["extensions"] = kept
    return trimmed


def result_type(result: dict[str, Any]) -> str:
    """A modern result's ``resultType``; absent means "complete" (PROTOCOL.md §3.1)."""
    value = result.get("resultType", "complete")
    if not isinstance(value, str) or value not in _RESULT_TYPES:
        raise McpError("protocol", f"server sent a result with unknown resultType {value!r}")
    return str(value)
