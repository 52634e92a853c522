"""Where the metadata lives and what it must say: the pure half of discovery.

The OAuth flow fetches, this module decides: which URLs to try and in which order (RFC 9728 for the
protected-resource metadata, RFC 8414 and OpenID Connect Discovery for the authorization server,
the 2025-03-26 fallbacks for servers without either), whether a protected-resource document names
*this* server, and whether an authorization-server document is the one we asked for. Nothing here
does I/O; every rule is a function of strings and parsed JSON, tested by tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..protocol._errors import McpError

__all__ = [
    "AuthServer",
    "ProtectedResource",
    "as_metadata_urls",
    "canonical_resource",
    "is_loopback_host",
    "legacy_as_metadata_urls",
    "legacy_auth_server",
    "origin",
    "parse_as_metadata",
    "parse_prm",
    "prm_urls",
    "require_secure",
    "resource_matches",
]

_DEFAULT_PORTS = {"http": 80, "https": 443}
_LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


def is_loopback_host(host: str | None) -> bool:
    if not host:
        return False
    host = host.lower()
    return host in _LOOPBACK_HOSTS or host.endswith(".localhost") or host.startswith("127.")


def _split(url: str) -> tuple[str, str, str, str]:
    """(scheme, host, port-suffix, path) with scheme and host lowercased and a default port dropped."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    suffix = "" if port is None or port == _DEFAULT_PORTS.get(scheme) else f":{port}"
    return scheme, host, suffix, parts.path


def origin(url: str) -> str:
    """``scheme://host[:port]`` of a URL, canonical (lowercase, no default port)."""
    scheme, host, port, _ = _split(url)
    return f"{scheme}://{host}{port}"


def canonical_resource(url: str) -> str:
    """The MCP server's canonical URI (RFC 8707 §2, MCP "Canonical Server URI").

    Lowercase scheme and host, no default port, no fragment, and no query: the resource names the
    server, and a query string (sometimes an API key) has no business at the authorization server.
    A bare "/" path is dropped, as the spec recommends; any other path is kept as it is.
    """
    scheme, host, port, path = _split(url)
    if path == "/":
        path = ""
    return urlunsplit((scheme, f"{host}{port}", path, "", ""))


def resource_matches(prm_resource: str, server_url: str) -> bool:
    """Whether a protected-resource document's ``resource`` may stand for the server at ``server_url``.

    Same origin, and the resource's path is the server's path or a parent of it on a segment boundary
    (a document at the origin's root may describe ``/mcp``; ``/mc`` may not describe ``/mcp``). A
    different host is always a refusal: that is how a server impersonating another is caught.
    """
    try:
        r_scheme, r_host, r_port, r_path = _split(prm_resource)
        s_scheme, s_host, s_port, s_path = _split(server_url)
    except ValueError:
        return False
    if not r_scheme or not r_host or (r_scheme, r_host, r_port) != (s_scheme, s_host, s_port):
        return False
    if urlsplit(prm_resource).fragment:
        return False
    r_path, s_path = r_path.rstrip("/"), s_path.rstrip("/")
    return r_path == "" or s_path == r_path or s_path.startswith(r_path + "/")


def require_secure(url: str, what: str) -> None:
    """OAuth 2.1 §1.5: every authorization-server endpoint is HTTPS; plain HTTP only on loopback."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "https" or (scheme == "http" and is_loopback_host(parts.hostname)):
        return
    raise McpError(
        "auth",
        f"the {what} {url} is not an https URL; OAuth requires https for every authorization server "
        "endpoint (plain http is accepted only on localhost)",
    )


def prm_urls(server_url: str, resource_metadata: str | None) -> list[str]:
    """Protected-resource metadata locations, in the order MCP requires (RFC 9728 §3.1, §5).

    The ``resource_metadata`` URL from ``WWW-Authenticate`` first; then the well-known URI with the
    server's path inserted; then the one at the origin's root.
    """
    urls: list[str] = []
    if resource_metadata:
        urls.append(resource_metadata)
    root = origin(server_url)
    path = urlsplit(server_url).path.rstrip("/")
    if path:
        urls.append(f"{root}/.well-known/oauth-protected-resource{path}")
    urls.append(f"{root}/.well-known/oauth-protected-resource")
    return list(dict.fromkeys(urls))


def as_metadata_urls(issuer: str) -> list[str]:
    """Authorization-server metadata locations for an issuer, in the MCP spec's priority order.

    With a path (``https://as.example/tenant1``): RFC 8414 path insertion, then OpenID Connect path
    insertion, then OpenID Connect path appending. Without one: RFC 8414, then OpenID Connect.
    """
    root = origin(issuer)
    path = urlsplit(issuer).path.rstrip("/")
    if path:
        return [
            f"{root}/.well-known/oauth-authorization-server{path}",
            f"{root}/.well-known/openid-configuration{path}",
            f"{root}{path}/.well-known/openid-configuration",
        ]
    return [f"{root}/.well-known/oauth-authorization-server", f"{root}/.well-known/openid-configuration"]


def legacy_as_metadata_urls(server_url: str) -> list[str]:
    """2025-03-26 servers have no protected-resource metadata: the authorization server is the MCP
    server's origin, and its RFC 8414 metadata sits at the origin's root."""
    return [f"{origin(server_url)}/.well-known/oauth-authorization-server"]


@dataclass(frozen=True)
class ProtectedResource:
    """The fields of an RFC 9728 document that the client acts on."""

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None
    url: str  # where it was fetched


def _str_list(value: Any) -> tuple[str, ...] | None:
    if not isinstance(value, list):
        return None
    return tuple(v for v in value if isinstance(v, str) and v)


def parse_prm(data: Any, url: str) -> ProtectedResource | None:
    """A protected-resource document, or None when the JSON does not have the required shape."""
    if not isinstance(data, dict):
        return None
    resource = data.get("resource")
    servers = _str_list(data.get("authorization_servers"))
    if not isinstance(resource, str) or not resource or not servers:
        return None
    return ProtectedResource(
        resource=resource,
        authorization_servers=servers,
        scopes_supported=_str_list(data.get("scopes_supported")),
        url=url,
    )


@dataclass(frozen=True)
class AuthServer:
    """What the client uses from authorization-server metadata (RFC 8414 / OIDC Discovery).

    ``metadata_url`` is None for the 2025-03-26 default endpoints, where there was no document and so
    nothing to verify PKCE support or the issuer against.
    """

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    registration_endpoint: str | None = None
    device_authorization_endpoint: str | None = None  # RFC 8628 §4: the device grant is offered
    scopes_supported: tuple[str, ...] | None = None
    grant_types_supported: tuple[str, ...] | None = None
    token_endpoint_auth_methods_supported: tuple[str, ...] | None = None
    code_challenge_methods_supported: tuple[str, ...] | None = None
    dpop_signing_alg_values_supported: tuple[str, ...] | None = None
    iss_parameter_supported: bool = False
    client_id_metadata_document_supported: bool = False
    metadata_url: str | None = None

    def supports_pkce_s256(self) -> bool:
        return self.metadata_url is None or "S256" in (self.code_challenge_methods_supported or ())


def _issuer_equal(expected: str, actual: str) -> bool:
    # RFC 8414 §3.3 wants them identical. A lone trailing "/" is forgiven: both spellings build the
    # same well-known URL, so nothing an attacker could use hides in it, and real servers differ on it.
    return expected == actual or expected.rstrip("/") == actual.rstrip("/")


def parse_as_metadata(
    data: Any,
    *,
    url: str,
    expected_issuer: str | None,
    legacy_server_url: str | None = None,
) -> AuthServer:
    """Validate and keep an authorization-server metadata document fetched from ``url``.

    ``expected_issuer`` is the issuer identifier the well-known URL was built from (the protected
    resource's ``authorization_servers`` entry); the document's ``issuer`` must equal it, or the
    document is refused (RFC 8414 §3.3, SEP-2468): a server must not be able to point us at another
    server's endpoints. For a 2025-03-26 server (``legacy_server_url``) the authorization server is
    the MCP server's origin, so that origin is the issuer the document must name: exactly, as RFC
    8414 asks (0.1.16's conformance mock serves ``<origin>/oauth`` there, and is refused).
    """
    if not isinstance(data, dict):
        raise McpError("auth", f"the authorization server metadata at {url} is not a JSON object")
    issuer = data.get("issuer")
    if legacy_server_url is not None:
        expected_issuer = origin(legacy_server_url)
    if not isinstance(issuer, str) or expected_issuer is None or not _issuer_equal(expected_issuer, issuer):
        raise McpError(
            "auth",
            f"the authorization server metadata at {url} names issuer {issuer!r}, but it was fetched for "
            f"issuer {expected_issuer!r}; refusing metadata that describes a different authorization server",
        )
    endpoints: dict[str, str] = {}
    for name in ("authorization_endpoint", "token_endpoint"):
        value = data.get(name)
        if not isinstance(value, str) or not value:
            raise McpError("auth", f"the authorization server metadata at {url} has no {name}")
        endpoints[name] = value
    registration = data.get("registration_endpoint")
    device = data.get("device_authorization_endpoint")
    return AuthServer(
        issuer=issuer,
        authorization_endpoint=endpoints["authorization_endpoint"],
        token_endpoint=endpoints["token_endpoint"],
        registration_endpoint=registration if isinstance(registration, str) and registration else None,
        device_authorization_endpoint=device if isinstance(device, str) and device else None,
        scopes_supported=_str_list(data.get("scopes_supported")),
        grant_types_supported=_str_list(data.get("grant_types_supported")),
        token_endpoint_auth_methods_supported=_str_list(data.get("token_endpoint_auth_methods_supported")),
        code_challenge_methods_supported=_str_list(data.get("code_challenge_methods_supported")),
        dpop_signing_alg_values_supported=_str_list(data.get("dpop_signing_alg_values_supported")),
        iss_parameter_supported=data.get("authorization_response_iss_parameter_supported") is True,
        client_id_metadata_document_supported=data.get("client_id_metadata_document_supported") is True,
        metadata_url=url,
    )


def legacy_auth_server(server_url: str) -> AuthServer:
    """The 2025-03-26 default endpoints (``/authorize``, ``/token``, ``/register`` at the origin),
    for a server with neither protected-resource nor authorization-server metadata."""
    root = origin(server_url)
    return AuthServer(
        issuer=root,
        authorization_endpoint=f"{root}/authorize",
        token_endpoint=f"{root}/token",
        registration_endpoint=f"{root}/register",
    )
