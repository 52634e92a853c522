"""The discovery step of a sign-in: protected-resource metadata, then authorization-server metadata.

Why apart from the flow: it is one sequence of GETs with its own cache (the authorization
servers' metadata, shared by every MCP server they serve) and its own checks (the resource the
metadata names, PKCE S256, secure endpoints). The pure parsing lives in :mod:`._discovery`; this
module yields the requests and reads the answers through :class:`._flow.Flow`'s mailbox.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator

import httpx

from ..protocol._errors import McpError
from . import _discovery as disco
from ._discovery import AuthServer, ProtectedResource
from ._flow import HTTP_TIMEOUT, Discovered, Flow
from ._token import json_body
from ._www_authenticate import Challenge

__all__ = ["MetadataDiscovery"]

logger = logging.getLogger("mcp_notebook.auth")


class MetadataDiscovery:
    """Discovers the authorization server of an MCP server; caches each issuer's metadata."""

    def __init__(self) -> None:
        self._as_cache: dict[str, AuthServer] = {}
        self._protocol_version: str | None = None

    def __repr__(self) -> str:
        return f"MetadataDiscovery(issuers={tuple(self._as_cache)!r})"

    def _get(self, url: str, mcp_origin: str | None) -> httpx.Request:
        headers = {"Accept": "application/json"}
        version = self._protocol_version
        if version and disco.origin(url) == mcp_origin:  # the MCP servers' origin, not the AS's
            headers["MCP-Protocol-Version"] = version
        return httpx.Request("GET", url, headers=headers, extensions={"timeout": HTTP_TIMEOUT})

    async def discover(
        self, flow: Flow, challenge: Challenge | None, *, mcp_origin: str | None
    ) -> AsyncGenerator[httpx.Request, None]:
        """Find the authorization server for ``flow.server`` and put it in ``flow.discovered``.

        ``mcp_origin`` is the MCP servers' origin: requests there carry the protocol version."""
        self._protocol_version = flow.request.headers.get("mcp-protocol-version")
        server_url = flow.server.url
        prm: ProtectedResource | None = None
        for url in disco.prm_urls(server_url, challenge.resource_metadata if challenge else None):
            yield self._get(url, mcp_origin)
            response = await flow.received()
            logger.debug("protected resource metadata %s: HTTP %s", url, response.status_code)
            if response.status_code == 200:
                prm = disco.parse_prm(json_body(response.content), url)
                if prm is not None:
                    break
        if prm is None:
            # A 2025-03-26 server: no protected-resource metadata; its origin is the authorization server.
            logger.info(
                "no protected resource metadata for %s; using the 2025-03-26 discovery rules", server_url
            )
            server = None
            for url in disco.legacy_as_metadata_urls(server_url):
                yield self._get(url, mcp_origin)
                response = await flow.received()
                if response.status_code == 200:
                    server = disco.parse_as_metadata(
                        json_body(response.content),
                        url=url,
                        expected_issuer=None,
                        legacy_server_url=server_url,
                    )
                    break
            flow.discovered = Discovered(server_url, server or disco.legacy_auth_server(server_url), None)
        else:
            if not disco.resource_matches(prm.resource, server_url):
                raise McpError(
                    "auth",
                    f"the protected resource metadata at {prm.url} is for {prm.resource!r}, not for the "
                    f"MCP server at {server_url}; refusing to authorize (the server is misconfigured or "
                    "impersonating another)",
                )
            issuer = prm.authorization_servers[0]
            disco.require_secure(issuer, "authorization server")
            server = self._as_cache.get(issuer)
            if server is None:
                for url in disco.as_metadata_urls(issuer):
                    yield self._get(url, mcp_origin)
                    response = await flow.received()
                    logger.debug("authorization server metadata %s: HTTP %s", url, response.status_code)
                    data = json_body(response.content) if response.status_code == 200 else None
                    if isinstance(data, dict):
                        server = disco.parse_as_metadata(data, url=url, expected_issuer=issuer)
                        break
                if server is None:
                    raise McpError(
                        "auth",
                        f"the authorization server {issuer} publishes no metadata (tried "
                        f"{', '.join(disco.as_metadata_urls(issuer))})",
                    )
                self._as_cache[issuer] = server
            flow.discovered = Discovered(prm.resource, server, prm)
        server = flow.discovered.server
        if not server.supports_pkce_s256():
            raise McpError(
                "auth",
                f"the authorization server {server.issuer} does not list S256 in "
                "code_challenge_methods_supported; MCP requires PKCE with S256, so authorization "
                "cannot proceed",
            )
        for what, url in (
            ("authorization endpoint", server.authorization_endpoint),
            ("token endpoint", server.token_endpoint),
        ):
            disco.require_secure(url, what)
