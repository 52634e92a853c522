"""What both HTTP bindings share: safe URLs for messages, redirects, bounded bodies, status mapping.

Kept apart from the channels so the rules that decide what a user reads when HTTP goes wrong (a
401 without credentials, a redirect to another origin, a 4xx without a JSON-RPC body) exist once.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import httpx

from ..protocol._errors import (
    CONNECTION_CLOSED,
    McpError,
)
from ..protocol._http_binding import jsonrpc_error_in, refusal
from ..protocol._jsonrpc import ErrorResponse, RequestId
from ._http_engine import Engine, TooLarge, WireError, WireResponse

__all__ = [
    "MAX_REDIRECTS",
    "error_from_status",
    "hide_queries_in_httpx_logs",
    "jsonrpc_error_in",
    "open_exchange",
    "safe_url",
    "same_origin",
    "transport_error",
]

MAX_REDIRECTS = 5
_FOLLOWED = (307, 308)  # the only redirects that keep a POST a POST with its body
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_ERROR_BODY_LIMIT = 64 * 1024


def safe_url(url: httpx.URL | str) -> str:
    """The URL as it may appear in a message: no user info, no query (API keys live there)."""
    url = httpx.URL(str(url))
    port = f":{url.port}" if url.port is not None else ""
    return f"{url.scheme}://{url.host}{port}{url.path}"


class _HideQueries(logging.Filter):
    """Takes query strings out of httpx's own "HTTP Request: POST <url>" log lines.

    httpx logs every request's full URL at INFO; a notebook that turns on INFO logging would then
    print (and save) an API key given in the server URL's query. Only URLs are touched.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and any(isinstance(a, httpx.URL) and a.query for a in record.args):
            record.args = tuple(
                a.copy_with(query=b"REDACTED") if isinstance(a, httpx.URL) and a.query else a
                for a in record.args
            )
        return True


def hide_queries_in_httpx_logs() -> None:
    """Install :class:`_HideQueries` on httpx's logger, once."""
    log = logging.getLogger("httpx")
    if not any(isinstance(f, _HideQueries) for f in log.filters):
        log.addFilter(_HideQueries())


def same_origin(a: httpx.URL, b: httpx.URL) -> bool:
    return (a.scheme, a.host, a.port or _default_port(a)) == (b.scheme, b.host, b.port or _default_port(b))


def _default_port(url: httpx.URL) -> int:
    return 443 if url.scheme == "https" else 80


class open_exchange:
    """``async with open_exchange(...) as response``: send one request and hold its response,
    following same-origin 307/308 only; the response is released on exit.

    Why by hand: httpx's own redirect following keeps custom headers (an ``X-API-Key``) on a
    redirect to another origin; a redirect that leaves the origin is refused here instead, with a
    message that says so, so no credential ever goes where the user did not send it. A class, not
    a generator: it runs for every call.
    """

    __slots__ = ("_auth", "_content", "_engine", "_headers", "_method", "_response", "_url")

    def __init__(
        self,
        engine: Engine,
        method: str,
        url: httpx.URL,
        *,
        headers: Mapping[str, str],
        content: bytes | None = None,
        auth: httpx.Auth | None = None,
    ) -> None:
        self._engine = engine
        self._method = method
        self._url = url
        self._headers = headers
        self._content = content
        self._auth = auth
        self._response: WireResponse | None = None

    async def __aenter__(self) -> WireResponse:
        method, url = self._method, self._url
        target = url
        for _ in range(MAX_REDIRECTS + 1):
            response = await self._engine.send(method, target, self._headers, self._content, self._auth)
            status = response.status
            location = response.headers.get("location") if status in _REDIRECTS else None
            if not location:
                self._response = response
                return response
            await response.release()
            next_url = target.join(location)
            if not same_origin(url, next_url):
                raise McpError(
                    "transport",
                    f"{safe_url(target)} redirected to another origin ({safe_url(next_url)}); not followed, "
                    "so no credentials go there. Use that URL as the server URL if you trust it.",
                    code=CONNECTION_CLOSED,
                )
            if status not in _FOLLOWED and method != "GET":
                raise McpError(
                    "transport",
                    f"{safe_url(target)} answered {method} with a {status} redirect, which would turn it "
                    "into a GET; only 307 and 308 are followed. Use the final URL as the server URL.",
                    code=CONNECTION_CLOSED,
                )
            target = next_url
        raise McpError(
            "transport", f"{safe_url(url)} redirected more than {MAX_REDIRECTS} times", code=CONNECTION_CLOSED
        )

    async def __aexit__(self, *exc_info: object) -> None:
        response, self._response = self._response, None
        if response is not None:
            await response.release()


async def read_error_body(response: WireResponse) -> bytes:
    try:
        return await response.read(_ERROR_BODY_LIMIT)
    except (TooLarge, WireError):
        return b""


def error_from_status(
    request_id: RequestId, response: WireResponse, body: bytes, *, where: str, credentials: bool
) -> ErrorResponse | McpError:
    """What a non-2xx answer means for its caller (the rules: :func:`..protocol._http_binding.refusal`)."""
    return refusal(
        request_id,
        response.status,
        response.reason,
        body,
        challenge=response.headers.get("www-authenticate"),
        where=where,
        credentials=credentials,
    )


def transport_error(message: str) -> McpError:
    return McpError("transport", message, code=CONNECTION_CLOSED)
