"""MCP Apps (``io.modelcontextprotocol/ui``, spec 2026-01-26): the pure rules.

This module owns every decision about an app that needs no I/O: which tool has a View and where
its HTML lives, who may see or call a tool, and what a View's iframe is allowed to do (the
Content-Security-Policy and the ``allow`` attribute built from the resource's ``_meta.ui``).

It must never do I/O, keep state or import anything above the protocol layer; the host
(:mod:`mcp_notebook.client._apps_host`) applies these rules, the widget only draws what they decided.

Everything here reads server data, which is untrusted: a malformed value means "absent", never an
exception, and no server value can make the policy looser than the spec's defaults. Where the spec
and safety disagree we tighten (the spec allows a host to): see :func:`content_security_policy`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "APPS_PROTOCOL_VERSION",
    "APP_MIME_TYPE",
    "UI_EXTENSION",
    "allow_attribute",
    "callable_by_app",
    "content_security_policy",
    "extension_settings",
    "tool_visibility",
    "ui_resource_uri",
    "valid_sources",
    "visible_to_model",
]

UI_EXTENSION = "io.modelcontextprotocol/ui"
APP_MIME_TYPE = "text/html;profile=mcp-app"
APPS_PROTOCOL_VERSION = "2026-01-26"

_DEPRECATED_URI_KEY = "ui/resourceUri"
_UI_SCHEME = "ui://"
_MAX_URI = 2048
_VISIBILITIES = ("model", "app")
_DEFAULT_VISIBILITY = _VISIBILITIES


def extension_settings() -> dict[str, Any]:
    """The settings we declare for the ui extension in the client's capabilities."""
    return {"mimeTypes": [APP_MIME_TYPE]}


def _ui(meta: Mapping[str, Any] | None) -> Mapping[str, Any]:
    if not isinstance(meta, Mapping):
        return {}
    ui = meta.get("ui")
    return ui if isinstance(ui, Mapping) else {}


def _ui_uri(value: Any) -> str | None:
    if not isinstance(value, str) or not value.startswith(_UI_SCHEME):
        return None
    if not len(_UI_SCHEME) < len(value) <= _MAX_URI or any(c.isspace() for c in value):
        return None
    return value


def ui_resource_uri(meta: Mapping[str, Any] | None) -> str | None:
    """The ``ui://`` resource holding a tool's View, or None for a tool without one.

    ``meta`` is the tool's ``_meta``. The current key ``_meta.ui.resourceUri`` wins; the deprecated
    flat key ``_meta["ui/resourceUri"]`` is read when the current one is absent. A value that is not
    a ``ui://`` URI (``https://``, empty, not a string) is ignored as if absent: the tool is treated
    as a tool without UI, never fetched from elsewhere, and never an error (a list of tools must
    not fail because one tool is odd).
    """
    current = _ui(meta).get("resourceUri")
    if current is not None:
        return _ui_uri(current)
    if isinstance(meta, Mapping):
        return _ui_uri(meta.get(_DEPRECATED_URI_KEY))
    return None


def tool_visibility(meta: Mapping[str, Any] | None) -> tuple[str, ...]:
    """Who may use the tool: a tuple of "model" and/or "app", in that order.

    Absent means both (the spec's default). A malformed value (not a list, an unknown or
    non-string member, an empty list) falls back to the default too: the visibility field only
    ever narrows who sees a tool, so a value we cannot read narrows nothing.
    """
    value = _ui(meta).get("visibility")
    if not isinstance(value, list | tuple) or not value:
        return _DEFAULT_VISIBILITY
    if not all(isinstance(v, str) and v in _VISIBILITIES for v in value):
        return _DEFAULT_VISIBILITY
    return tuple(v for v in _VISIBILITIES if v in value)


def visible_to_model(meta: Mapping[str, Any] | None) -> bool:
    """Whether the tool belongs in the tool list shown to the model (and, here, to the user)."""
    return "model" in tool_visibility(meta)


def callable_by_app(meta: Mapping[str, Any] | None) -> bool:
    """Whether a View may call the tool through the host (``tools/call`` from the iframe)."""
    return "app" in tool_visibility(meta)


# --- the View's Content-Security-Policy --------------------------------------------------------

# A host source as the spec's examples write them: scheme, host (optionally led by one "*." label),
# optional port; no path, query, credentials, quotes, spaces or separators. Lower-cased first.
_LABEL = r"(?!-)[a-z0-9-]{1,63}(?<!-)"
_SOURCE = re.compile(
    rf"(?P<scheme>[a-z]+)://(?P<wild>\*\.)?(?P<host>{_LABEL}(?:\.{_LABEL})*)(?::(?P<port>[0-9]{{1,5}}))?/?"
)
_MAX_SOURCES = 64
_MAX_SOURCE_LEN = 300

#: Which schemes each list may name. Only TLS: a server cannot open the View to plain http or ws.
_SCHEMES = {
    "connectDomains": frozenset({"https", "wss"}),
    "resourceDomains": frozenset({"https"}),
    "frameDomains": frozenset({"https"}),
    "baseUriDomains": frozenset({"https"}),
}


def _source(entry: Any, schemes: frozenset[str]) -> str | None:
    if not isinstance(entry, str) or len(entry) > _MAX_SOURCE_LEN or not entry.isascii():
        return None
    match = _SOURCE.fullmatch(entry.lower())
    if match is None or match["scheme"] not in schemes:
        return None
    host = match["host"]
    if match["wild"] and "." not in host:
        return None  # "*.com" would open a whole top-level domain
    port = match["port"]
    if port is not None and not 0 < int(port) < 65536:
        return None
    return f"{match['scheme']}://{match['wild'] or ''}{host}{':' + port if port else ''}"


def valid_sources(csp: Mapping[str, Any] | None, key: str) -> list[str]:
    """The entries of ``csp[key]`` that are safe host sources, normalised and de-duplicated.

    Everything else is dropped, silently: a ``;`` or a newline (a new directive), a quote (a
    keyword such as ``'unsafe-eval'``), a space (several sources in one entry), ``*`` alone, a
    scheme source (``data:``, ``blob:``, ``https:``), ``http``/``ws``, a path, credentials,
    non-ASCII look-alikes. ``key`` is one of connectDomains, resourceDomains, frameDomains,
    baseUriDomains.
    """
    if not isinstance(csp, Mapping):
        return []
    entries = csp.get(key)
    if not isinstance(entries, list | tuple):
        return []
    schemes = _SCHEMES[key]
    kept: list[str] = []
    for entry in entries[: _MAX_SOURCES * 4]:
        source = _source(entry, schemes)
        if source is not None and source not in kept:
            kept.append(source)
        if len(kept) >= _MAX_SOURCES:
            break
    return kept


def _directive(name: str, fixed: Iterable[str], sources: list[str], empty: str | None = None) -> str:
    parts = [*fixed, *sources]
    if not parts and empty is not None:
        parts = [empty]
    return " ".join([name, *parts])


def content_security_policy(csp: Mapping[str, Any] | None) -> str:
    """The CSP for a View, from its resource's ``_meta.ui.csp`` (None when absent).

    As the spec builds it, with two tightenings:

    - ``connect-src`` never includes ``'self'``: a View has no server of its own, and in a
      notebook its iframe's "self" could be the notebook server's origin; without connect
      domains it is ``'none'`` (which is also the spec's default when ``ui.csp`` is absent).
    - every declared domain must be an ``https://`` origin (``wss://`` too for connect), see
      :func:`valid_sources`; anything else is dropped rather than copied into the header.

    ``default-src 'none'`` and ``object-src 'none'`` are always there; ``frame-src`` is
    ``'none'`` and ``base-uri`` is ``'self'`` unless domains are declared for them.
    """
    resources = valid_sources(csp, "resourceDomains")
    directives = [
        "default-src 'none'",
        _directive("script-src", ("'self'", "'unsafe-inline'"), resources),
        _directive("style-src", ("'self'", "'unsafe-inline'"), resources),
        _directive("connect-src", (), valid_sources(csp, "connectDomains"), "'none'"),
        _directive("img-src", ("'self'", "data:"), resources),
        _directive("font-src", ("'self'",), resources),
        _directive("media-src", ("'self'", "data:"), resources),
        _directive("frame-src", (), valid_sources(csp, "frameDomains"), "'none'"),
        "object-src 'none'",
        _directive("base-uri", (), valid_sources(csp, "baseUriDomains"), "'self'"),
    ]
    return "; ".join(directives)


_PERMISSIONS = (
    ("camera", "camera"),
    ("microphone", "microphone"),
    ("geolocation", "geolocation"),
    ("clipboardWrite", "clipboard-write"),
)


def allow_attribute(permissions: Mapping[str, Any] | None) -> str:
    """The iframe ``allow`` attribute from ``_meta.ui.permissions``: only what was asked for.

    A permission is asked for by an object (``{"camera": {}}``, the spec's form) or ``true``;
    ``false``, ``null`` and anything else is not a request. Unknown permissions are ignored.
    """
    if not isinstance(permissions, Mapping):
        return ""
    asked = [
        feature
        for key, feature in _PERMISSIONS
        if isinstance(permissions.get(key), Mapping) or permissions.get(key) is True
    ]
    return "; ".join(asked)
