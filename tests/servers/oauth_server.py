"""The demo MCP server behind an OAuth 2.1 authorization server of ours, on one loopback port.

``python tests/servers/oauth_server.py`` binds ``127.0.0.1`` on a free port and prints exactly one
line to stdout, ``MCP_HTTP_URL=http://127.0.0.1:PORT/mcp``, once it accepts connections. The
origin is both the protected resource and the authorization server (its issuer), like a small
self-hosted deployment:

``/mcp``
    The demo server (``mcp_notebook.demo``'s Streamable HTTP app). Every request needs a bearer
    token this server issued, else ``401`` with ``WWW-Authenticate: Bearer resource_metadata=...``.
``/.well-known/oauth-protected-resource/mcp`` (and without ``/mcp``)
    RFC 9728 metadata naming this origin as the authorization server.
``/.well-known/oauth-authorization-server``
    RFC 8414 metadata: PKCE S256, public clients (``none``), dynamic registration,
    ``authorization_response_iss_parameter_supported``.
``POST /register``
    RFC 7591: any ``redirect_uris``; answers a fresh ``client_id``.
``GET /authorize``
    Checks the request (registered client and redirect URI, a loopback one in any port as RFC 8252
    §7.3 says, ``response_type=code``, an S256 challenge) and answers a sign-in page: one form,
    its button ``#approve``. Nothing else.
``POST /authorize``
    The person approved: ``302`` to the redirect URI with ``code``, ``state`` and ``iss``. The
    browser follows it; when nothing listens there, its address is what paste-back wants.
``POST /token``
    ``authorization_code``: the code once (a reused code is ``invalid_grant``, "already used"),
    within its lifetime (else ``invalid_grant``, "expired"), with the PKCE verifier, redirect URI
    and client it was issued for. The access token is random; nothing is logged.
``POST /_admin/expire-codes``
    Every code issued so far expires now (the test's clock, without waiting).
``GET /_admin/stats``
    ``{"codes_issued", "codes_redeemed", "tokens"}``: how many.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import secrets
import socket
import sys
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import uvicorn

from mcp_notebook.demo._server import http_app

HTTP_URL_PREFIX = "MCP_HTTP_URL="


def _s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode("ascii")).digest()).rstrip(b"=").decode()


class OAuthWorld:
    """The authorization server's state, and the ASGI app in front of the demo server."""

    def __init__(self, inner: Any, origin: str) -> None:
        self.inner = inner
        self.origin = origin
        self.clients: dict[str, list[str]] = {}  # client_id -> redirect URIs
        self.pending: dict[str, dict[str, str]] = {}  # sign-in page id -> the authorization request
        self.codes: dict[str, dict[str, Any]] = {}  # code -> its request, "used", "expired"
        self.tokens: set[str] = set()
        self.redeemed = 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.inner(scope, receive, send)  # lifespan: the demo app's session manager
            return
        path, method = scope["path"], scope["method"]
        if path == "/mcp" or path.startswith("/mcp/"):
            if self._bearer(scope) in self.tokens:
                await self.inner(scope, receive, send)
                return
            metadata = f"{self.origin}/.well-known/oauth-protected-resource/mcp"
            challenge = f'Bearer resource_metadata="{metadata}"'
            await _answer(send, 401, {"error": "unauthorized"}, [(b"www-authenticate", challenge.encode())])
            return
        body = await _body(receive)
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        form = dict(parse_qsl(body.decode("utf-8", "replace")))
        if path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
            await _answer(
                send, 200, {"resource": f"{self.origin}/mcp", "authorization_servers": [self.origin]}
            )
        elif path == "/.well-known/oauth-authorization-server":
            await _answer(send, 200, self._metadata())
        elif path == "/register" and method == "POST":
            await self._register(send, body)
        elif path == "/authorize" and method == "GET":
            await self._sign_in_page(send, query)
        elif path == "/authorize" and method == "POST":
            await self._approve(send, form)
        elif path == "/token" and method == "POST":
            await self._token(send, form)
        elif path == "/_admin/expire-codes" and method == "POST":
            for code in self.codes.values():
                code["expired"] = True
            await _answer(send, 200, {"expired": len(self.codes)})
        elif path == "/_admin/stats":
            stats = {
                "codes_issued": len(self.codes),
                "codes_redeemed": self.redeemed,
                "tokens": len(self.tokens),
            }
            await _answer(send, 200, stats)
        else:
            await _answer(send, 404, {"error": "not_found"})

    @staticmethod
    def _bearer(scope: dict[str, Any]) -> str | None:
        for key, value in scope["headers"]:
            if key == b"authorization":
                scheme, _, token = value.decode("latin-1").partition(" ")
                return token.strip() if scheme.lower() == "bearer" else None
        return None

    def _metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.origin,
            "authorization_endpoint": f"{self.origin}/authorize",
            "token_endpoint": f"{self.origin}/token",
            "registration_endpoint": f"{self.origin}/register",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "authorization_response_iss_parameter_supported": True,
        }

    async def _register(self, send: Any, body: bytes) -> None:
        try:
            asked = json.loads(body)
            uris = [str(u) for u in asked["redirect_uris"]]
        except (ValueError, KeyError, TypeError):
            await _answer(send, 400, {"error": "invalid_client_metadata"})
            return
        client_id = f"client-{len(self.clients) + 1}"
        self.clients[client_id] = uris
        answer = {"client_id": client_id, "redirect_uris": uris, "token_endpoint_auth_method": "none"}
        await _answer(send, 201, answer)

    async def _sign_in_page(self, send: Any, query: dict[str, str]) -> None:
        uris = self.clients.get(query.get("client_id", ""))
        if uris is None or not _registered(query.get("redirect_uri", ""), uris):
            await _answer(
                send, 400, {"error": "invalid_request", "error_description": "unknown client or redirect"}
            )
            return
        if query.get("response_type") != "code" or query.get("code_challenge_method") != "S256":
            await _answer(send, 400, {"error": "invalid_request", "error_description": "code with S256 only"})
            return
        request_id = secrets.token_urlsafe(16)
        self.pending[request_id] = query
        page = (
            "<!doctype html><html><head><meta charset='utf-8'><title>Sign in</title></head><body>"
            f"<h1>Sign in to {html.escape(self.origin)}</h1>"
            f"<p>{html.escape(query['client_id'])} asks for {html.escape(query.get('scope', 'access'))}.</p>"
            "<form method='post' action='/authorize'>"
            f"<input type='hidden' name='request' value='{request_id}'>"
            "<button id='approve' type='submit'>Sign in</button></form></body></html>"
        )
        await _send(send, 200, page.encode(), [(b"content-type", b"text/html; charset=utf-8")])

    async def _approve(self, send: Any, form: dict[str, str]) -> None:
        asked = self.pending.pop(form.get("request", ""), None)
        if asked is None:
            await _answer(send, 400, {"error": "invalid_request", "error_description": "no such sign-in"})
            return
        code = secrets.token_urlsafe(24)
        self.codes[code] = {"asked": asked, "used": False, "expired": False}
        redirect = f"{asked['redirect_uri']}?" + urlencode(
            {"code": code, "state": asked.get("state", ""), "iss": self.origin}
        )
        await _send(send, 302, b"", [(b"location", redirect.encode())])

    async def _token(self, send: Any, form: dict[str, str]) -> None:
        if form.get("grant_type") != "authorization_code":
            await _answer(send, 400, {"error": "unsupported_grant_type"})
            return
        issued = self.codes.get(form.get("code", ""))
        if issued is None:
            await _answer(send, 400, {"error": "invalid_grant", "error_description": "unknown code"})
            return
        if issued["used"]:
            await _answer(
                send, 400, {"error": "invalid_grant", "error_description": "the code was already used"}
            )
            return
        issued["used"] = True  # a code is spent by its first redemption, good or bad (RFC 6749 §4.1.2)
        asked = issued["asked"]
        if issued["expired"]:
            await _answer(send, 400, {"error": "invalid_grant", "error_description": "the code expired"})
            return
        if (
            form.get("client_id") != asked["client_id"]
            or form.get("redirect_uri") != asked["redirect_uri"]
            or _s256(form.get("code_verifier", "")) != asked.get("code_challenge")
        ):
            await _answer(send, 400, {"error": "invalid_grant", "error_description": "the code is not yours"})
            return
        token = secrets.token_urlsafe(24)
        self.tokens.add(token)
        self.redeemed += 1
        answer = {"access_token": token, "token_type": "Bearer", "expires_in": 3600}
        if asked.get("scope"):
            answer["scope"] = asked["scope"]
        await _answer(send, 200, answer)


def _registered(redirect_uri: str, uris: list[str]) -> bool:
    """Registered as is, or a loopback redirect that differs in its port alone (RFC 8252 §7.3)."""
    if redirect_uri in uris:
        return True
    ours = urlsplit(redirect_uri)
    loopback = ("127.0.0.1", "localhost", "::1")
    return ours.hostname in loopback and any(
        (u.scheme, u.hostname, u.path) == (ours.scheme, ours.hostname, ours.path) for u in map(urlsplit, uris)
    )


async def _body(receive: Any) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


async def _send(send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    head = [(b"content-length", str(len(body)).encode()), (b"cache-control", b"no-store"), *headers]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body})


async def _answer(
    send: Any, status: int, payload: Any, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    body = json.dumps(payload).encode()
    await _send(send, status, body, [(b"content-type", b"application/json"), *(headers or [])])


def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    sock.setblocking(False)
    origin = f"http://127.0.0.1:{sock.getsockname()[1]}"
    inner, path = http_app(host="127.0.0.1")
    app = OAuthWorld(inner, origin)

    class AnnouncingServer(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if not self.should_exit:
                sys.stdout.write(f"{HTTP_URL_PREFIX}{origin}{path}\n")
                sys.stdout.flush()

    config = uvicorn.Config(
        app,
        log_config=None,
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=2,
    )
    AnnouncingServer(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
