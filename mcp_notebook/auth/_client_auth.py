"""Who the OAuth client is at an authorization server, and how it authenticates there.

Why apart from the flow: choosing the client identity (pre-registered, a Client ID Metadata
Document, a stored registration, a new dynamic registration), finding the client a stored refresh
token belongs to, and signing token requests with the client's credentials are one concern with its
own secrets (the client secret, the private key). :class:`mcp_notebook.auth.OAuth` holds one
:class:`ClientAuth` and asks it; this module knows the flow only through :class:`._flow.Flow`.

Secrets are never logged, never put in an exception message, and never shown by ``repr``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from typing import Any
from urllib.parse import urlsplit

import httpx

from ..protocol._errors import McpError
from . import _discovery as disco
from ._device import DEVICE_CODE_GRANT
from ._discovery import AuthServer
from ._flow import HTTP_TIMEOUT, Flow
from ._policy import choose_client_auth_method, choose_registration_auth_method
from ._records import ClientInfo, Tokens
from ._store import TokenStore
from ._token import authenticate, parse_registration, registration_request

__all__ = ["ClientAuth"]

logger = logging.getLogger("mcp_notebook.auth")


class ClientAuth:
    """The client's configured identity and credentials, and the clients known per issuer."""

    def __init__(
        self,
        *,
        client_id: str | None,
        client_secret: str | None,
        private_key: str | bytes | None,
        signing_algorithm: str | None,
        issuer: str | None,
        client_metadata_url: str | None,
        client_name: str,
        store: TokenStore,
    ) -> None:
        self.client_id = client_id
        self._client_secret = client_secret
        self._private_key = private_key
        self._signing_algorithm = signing_algorithm
        self._issuer = issuer
        self._client_metadata_url = client_metadata_url
        self._client_name = client_name
        self._store = store
        self._clients: dict[str, ClientInfo] = {}  # the client each issuer knows us as, this process

    def __repr__(self) -> str:
        return f"ClientAuth(client_id={self.client_id!r})"

    def remember(self, issuer: str, client: ClientInfo) -> None:
        """``client`` is who this process is at ``issuer`` (a later refresh uses it)."""
        self._clients[issuer] = client

    def authenticate(
        self, client: ClientInfo, body: dict[str, str], headers: dict[str, str], *, audience: str
    ) -> None:
        """Add ``client``'s authentication to a token request's ``body`` and ``headers``."""
        authenticate(
            client,
            body,
            headers,
            audience=audience,
            private_key=self._private_key,
            signing_algorithm=self._signing_algorithm,
        )

    def configured(self, server: AuthServer) -> ClientInfo | None:
        if not self.client_id:
            return None
        if self._issuer is not None and self._issuer != server.issuer:
            raise McpError(
                "auth",
                f"the configured client_id belongs to the authorization server {self._issuer}, but the MCP "
                f"server now uses {server.issuer}; register a client there and configure it (credentials "
                "are not portable between authorization servers)",
            )
        method = choose_client_auth_method(
            server.token_endpoint_auth_methods_supported,
            has_secret=self._client_secret is not None,
            has_private_key=self._private_key is not None,
        )
        return ClientInfo(
            client_id=self.client_id,
            client_secret=self._client_secret,
            token_endpoint_auth_method=method,
            issuer=server.issuer,
            source="preregistered",
        )

    def metadata_document(self) -> ClientInfo | None:
        if self._client_metadata_url is None:
            return None
        return ClientInfo(
            client_id=self._client_metadata_url,
            token_endpoint_auth_method="private_key_jwt" if self._private_key is not None else "none",
            source="metadata_document",
        )

    async def for_refresh(self, tokens: Tokens) -> ClientInfo | None:
        """The client ``tokens`` were issued to, if this process can act as it; else None."""
        assert tokens.issuer is not None
        known = self._clients.get(tokens.issuer)
        if known is not None and known.client_id == tokens.client_id:
            return known
        if self.client_id:
            if self._issuer is not None and self._issuer != tokens.issuer:
                return None
            return ClientInfo(
                client_id=self.client_id,
                client_secret=self._client_secret,
                token_endpoint_auth_method=choose_client_auth_method(
                    None,
                    has_secret=self._client_secret is not None,
                    has_private_key=self._private_key is not None,
                ),
                issuer=tokens.issuer,
                source="preregistered",
            )
        if tokens.client_id and tokens.client_id == self._client_metadata_url:
            return self.metadata_document()
        stored = await self._store.get_client(tokens.issuer)
        if stored is None or stored.client_id != tokens.client_id:
            return None
        return stored

    async def identify(
        self, flow: Flow, server: AuthServer, redirect_uri: str | None
    ) -> AsyncGenerator[httpx.Request, None]:
        """Pick the client identity, in the spec's order: pre-registered, metadata document, stored
        registration for this issuer, new dynamic registration.

        ``redirect_uri`` None: for the device grant (RFC 8628), which has no redirect; a client is
        then registered for that grant, with no redirect URIs, and a stored one is reused only if
        it was registered so (one registered for redirects may not be allowed the device grant)."""
        flow.client = self.configured(server)
        if flow.client is not None:
            return
        if self._client_metadata_url is not None and server.client_id_metadata_document_supported:
            flow.client = self.metadata_document()
            return
        stored = await self._store.get_client(server.issuer)
        if (
            stored is not None
            and stored.issuer in (None, server.issuer)
            and not stored.secret_expired()
            and (
                not stored.redirect_uris
                if redirect_uri is None
                else _redirect_registered(redirect_uri, stored.redirect_uris)
            )
        ):
            flow.client = stored
            return
        if server.registration_endpoint is None:
            hint = (
                " It supports client ID metadata documents: pass OAuth(client_metadata_url=...)."
                if server.client_id_metadata_document_supported
                else ""
            )
            raise McpError(
                "auth",
                f"the authorization server {server.issuer} offers no dynamic client registration; "
                f"register a client there and pass OAuth(client_id=..., client_secret=...).{hint}",
            )
        disco.require_secure(server.registration_endpoint, "registration endpoint")
        method = choose_registration_auth_method(server.token_endpoint_auth_methods_supported)
        metadata: dict[str, Any] = {
            "client_name": self._client_name,
            "redirect_uris": [redirect_uri] if redirect_uri is not None else [],
            "grant_types": ["authorization_code", "refresh_token"]
            if redirect_uri is not None
            else [DEVICE_CODE_GRANT, "refresh_token"],
            "response_types": ["code"] if redirect_uri is not None else [],
            "token_endpoint_auth_method": method,
            # SEP-837: a loopback redirect (or none: a device) is a native application; anything
            # else is a web one.
            "application_type": "native"
            if redirect_uri is None or disco.is_loopback_host(urlsplit(redirect_uri).hostname)
            else "web",
        }
        yield registration_request(server.registration_endpoint, metadata, {"timeout": HTTP_TIMEOUT})
        response = await flow.received()
        flow.client = parse_registration(
            response.status_code,
            response.content,
            endpoint=server.registration_endpoint,
            issuer=server.issuer,
            requested_method=method,
            redirect_uris=(redirect_uri,) if redirect_uri is not None else (),
        )
        logger.info("registered client %s with %s", flow.client.client_id, server.issuer)
        try:
            await self._store.set_client(server.issuer, flow.client)
        except Exception as exc:
            logger.warning(
                "could not save the client registration to %r: %s", self._store, type(exc).__name__
            )


def _redirect_registered(redirect_uri: str, registered: tuple[str, ...]) -> bool:
    """Whether a stored registration covers our redirect URI. A loopback redirect may differ in its
    port alone: RFC 8252 §7.3 has servers accept any port there, since native clients use ephemeral ones."""
    if redirect_uri in registered:
        return True
    ours = urlsplit(redirect_uri)
    if not disco.is_loopback_host(ours.hostname):
        return False
    for uri in registered:
        theirs = urlsplit(uri)
        if (theirs.scheme, theirs.hostname, theirs.path) == (ours.scheme, ours.hostname, ours.path):
            return True
    return False
