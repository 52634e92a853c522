"""The HTTP engines that carry the Streamable HTTP and HTTP+SSE bindings: aiohttp, or httpx.

The bindings (``http.py``, ``_http_sse.py``) need four things of HTTP: send a request with headers
and a body, read the status and headers, stream the body in chunks, and let an ``httpx.Auth``
(a bearer token, :class:`mcp_notebook.auth.OAuth`) sign it. :class:`Engine` is that much and no
more, so the binding code is the same over either engine.

Why two. Measured against a server that takes 20 ms per call with 100 calls in flight, httpx 0.28
on its own transport reaches ~5 % of the ideal rate (its connection pool does more work the more
connections it holds), httpx on the httpx-aiohttp transport ~40-60 %, and aiohttp used directly
~85 %; with no delay, aiohttp is five times httpx-on-aiohttp (httpx's request and response models
cost more than the exchange). So on asyncio the default is :class:`AiohttpEngine`, which keeps
httpx only where a user's ``httpx.Auth`` needs its ``Request``/``Response`` objects.
:class:`HttpxEngine` serves trio (aiohttp is asyncio-only), a user's own ``httpx.AsyncClient``,
and proxies, given or named by the environment (httpx also speaks SOCKS).

Both engines raise :class:`WireError` when an exchange fails below HTTP (refused, reset, TLS,
DNS), so the bindings catch one exception whatever carries them.

Bodies are bounded after decoding. A gzip body a thousandth the size of what it inflates to must
not be inflated whole: every read counts the *decoded* bytes as they stream and stops at its limit
(:class:`TooLarge`), and a declared ``Content-Length`` is trusted only for a body without a
content-coding. aiohttp inflates in pieces of at most 256 KiB itself; on httpx the raw bytes are
inflated here (:class:`_Decoder`, gzip and deflate, in 64 KiB steps), because httpx inflates each
64 KiB network read whole (up to 64 MiB at once). Decoding happens once: a body aiohttp decoded
reaches an auth flow without its ``Content-Encoding``.
"""

from __future__ import annotations

import socket
import ssl
import urllib.request
import zlib
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol

import httpx

if TYPE_CHECKING:
    import aiohttp

__all__ = [
    "AiohttpEngine",
    "Engine",
    "EngineName",
    "HttpxEngine",
    "TooLarge",
    "WireError",
    "WireResponse",
    "environment_proxy",
    "read_bounded",
]

EngineName = Literal["auto", "aiohttp", "httpx"]
#: How long an idle connection is kept for reuse: under the 5 s after which uvicorn and Node close
#: idle connections, so a request is rarely sent on a connection the server is closing.
KEEPALIVE_SECONDS = 4.0
#: Headers the engine computes itself; a value copied from an ``httpx.Request`` would clash.
_ENGINE_HEADERS = frozenset({"host", "content-length", "transfer-encoding"})
#: What no longer describes a body the engine has decoded.
_DECODED = frozenset({"content-encoding", "content-length"})
#: The content-codings the httpx engine asks for and decodes itself, in bounded steps.
ACCEPT_ENCODING = "gzip, deflate"
#: Decoded bytes one inflate step may produce: what a compressed body costs beyond its limit.
_DECODE_STEP = 64 * 1024


class WireError(Exception):
    """An exchange failed below HTTP: no connection, a reset, TLS, DNS, a socket timeout.

    ``before_response`` is True when no part of a response had arrived: the request may not have
    reached the server at all (a kept-alive connection the server had just closed, say), so a
    request that is safe to repeat may be sent once more.
    """

    def __init__(self, message: str, *, before_response: bool = False) -> None:
        super().__init__(message)
        self.before_response = before_response


class TooLarge(Exception):
    """A body exceeded max_message_bytes; it was not read to the end.

    ``size`` is what had arrived (decoded) when the limit was passed, or the declared length of a
    body without a content-coding.
    """

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"a message of at least {size} bytes exceeded max_message_bytes={limit}")
        self.size = size
        self.limit = limit


def _codings(headers: Mapping[str, str]) -> list[str]:
    """The content-codings applied to a body, in the order they were applied (identity left out)."""
    value = headers.get("content-encoding") or ""
    return [c for c in (part.strip().lower() for part in value.split(",")) if c and c != "identity"]


class _Decoder:
    """Undoes one gzip or deflate content-coding, at most ``_DECODE_STEP`` bytes per step.

    zlib's ``max_length`` keeps the input it has not inflated yet (``unconsumed_tail``), so a
    bomb costs one step of memory however far it would inflate. Concatenated gzip members are
    decoded one after the other, as gzip readers do.
    """

    __slots__ = ("_gzip", "_obj", "_started")

    def __init__(self, coding: str) -> None:
        if coding not in ("gzip", "x-gzip", "deflate"):
            raise WireError(f"the server sent a body with content-coding {coding!r}, which was not asked for")
        self._gzip = coding != "deflate"
        self._obj = zlib.decompressobj(16 + zlib.MAX_WBITS if self._gzip else zlib.MAX_WBITS)
        self._started = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        if not self._started and data:
            self._started = True
            if not self._gzip and data[0] & 0x0F != 8:  # a raw deflate stream without its zlib header
                self._obj = zlib.decompressobj(-zlib.MAX_WBITS)
        while True:
            try:
                out = self._obj.decompress(data, _DECODE_STEP)
            except zlib.error as exc:
                raise WireError(f"the server sent a body that does not decode: {exc}") from None
            if out:
                yield out
            data = self._obj.unconsumed_tail
            if self._obj.eof:
                data = self._obj.unused_data if self._gzip else b""
                if not data:
                    return
                self._obj = zlib.decompressobj(16 + zlib.MAX_WBITS)  # the next gzip member
            elif not data and len(out) < _DECODE_STEP:
                return


def _through(pieces: Iterable[bytes], decoder: _Decoder) -> Iterator[bytes]:
    for piece in pieces:
        yield from decoder.feed(piece)


async def _decoded_stream(raw: AsyncIterator[bytes], headers: Mapping[str, str]) -> AsyncIterator[bytes]:
    codings = _codings(headers)
    if not codings:
        async for chunk in raw:
            yield chunk
        return
    decoders = [_Decoder(coding) for coding in reversed(codings)]  # refuses an unknown one at once
    async for chunk in raw:
        pieces: Iterable[bytes] = (chunk,)
        for decoder in decoders:
            pieces = _through(pieces, decoder)
        for piece in pieces:
            yield piece


async def read_bounded(response: httpx.Response, limit: int) -> bytes:
    """Read an ``httpx.Response`` whole, but never more than ``limit`` decoded bytes (:class:`TooLarge`).

    For the responses an ``httpx.Auth`` flow reads (OAuth metadata, registration, tokens), which
    httpx would read with ``aread()``, inflating a gzip body whole. The raw stream is decoded here
    in bounded steps; the response then holds the decoded body as a plain stream without its
    ``Content-Encoding``, so ``.content`` works and nothing decodes it twice. On either engine:
    a body the aiohttp engine decoded arrives without its ``Content-Encoding`` (see ``_signed``).
    """
    if response.is_stream_consumed:  # read before (by httpx, or by an earlier step)
        if len(response.content) > limit:
            raise TooLarge(len(response.content), limit)
        return response.content
    raw = response.stream
    try:
        body = await _collect(_decoded_stream(_raw_chunks(raw), response.headers), limit)
    finally:
        if isinstance(raw, httpx.AsyncByteStream):
            await raw.aclose()
    response.headers.pop("content-encoding", None)
    response.stream = httpx.ByteStream(body)
    await response.aread()
    return body


async def _raw_chunks(stream: httpx.SyncByteStream | httpx.AsyncByteStream) -> AsyncIterator[bytes]:
    if not isinstance(stream, httpx.AsyncByteStream):
        raise RuntimeError("read_bounded() needs the response of an httpx.AsyncClient")
    async for chunk in stream:
        yield chunk


class WireResponse(Protocol):
    """A response whose body has not been read yet; :meth:`release` it when done."""

    @property
    def status(self) -> int: ...

    @property
    def reason(self) -> str: ...

    @property
    def headers(self) -> Mapping[str, str]:
        """Case-insensitive."""
        ...

    def chunks(self) -> AsyncIterator[bytes]:
        """The body (content-encoding undone) in the chunks it arrives in."""
        ...

    async def read(self, limit: int) -> bytes:
        """The whole body, or :class:`TooLarge` as soon as it passes ``limit`` bytes."""
        ...

    async def release(self) -> None:
        """Give the connection back (or close it, if the body was not read to the end)."""
        ...


class Engine(Protocol):
    async def send(
        self,
        method: str,
        url: httpx.URL,
        headers: Mapping[str, str],
        content: bytes | None,
        auth: httpx.Auth | None,
    ) -> WireResponse:
        """Send one request (signed by ``auth``) and return its response, body unread.

        Redirects are not followed here (the bindings decide: same origin only). A plain method
        rather than a context manager: it runs for every call, and a generator-based context
        manager costs more than the call's own bookkeeping.
        """
        ...

    async def aclose(self) -> None: ...


# --- aiohttp ----------------------------------------------------------------------------------


class _AiohttpResponse:
    __slots__ = ("_body", "_response")

    def __init__(self, response: aiohttp.ClientResponse, body: bytes | None = None) -> None:
        self._response = response
        self._body = body  # already read (an auth flow read it)

    @property
    def status(self) -> int:
        return self._response.status

    @property
    def reason(self) -> str:
        return self._response.reason or ""

    @property
    def headers(self) -> Mapping[str, str]:
        return self._response.headers

    async def chunks(self) -> AsyncIterator[bytes]:
        if self._body is not None:
            if self._body:
                yield self._body
            return
        import aiohttp

        try:
            async for chunk in self._response.content.iter_any():
                yield chunk
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise WireError(_describe(exc)) from None

    async def read(self, limit: int) -> bytes:
        if self._body is not None:
            if len(self._body) > limit:
                raise TooLarge(len(self._body), limit)
            return self._body
        length = self._response.content_length
        if length is None or _codings(self._response.headers):
            # A compressed body's length says nothing of what it inflates to: count as it streams.
            return await _collect(self.chunks(), limit)
        if length > limit:
            raise TooLarge(length, limit)
        import aiohttp

        try:  # a plain body whose declared length is within the limit: one read, no iteration
            return await self._response.read()
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise WireError(_describe(exc)) from None

    async def release(self) -> None:
        self._response.release()


class _AiohttpBody(httpx.AsyncByteStream):
    """An aiohttp body as an httpx stream, for an auth flow that reads a response."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in _AiohttpResponse(self._response).chunks():
            yield chunk


class AiohttpEngine:
    """aiohttp's connector: keep-alive connections up to ``max_connections``, FIFO waiting beyond.

    No read timeout: a request's deadline belongs to the connection above, and listen streams are
    long-lived. ``connect_timeout`` bounds opening a socket.
    """

    def __init__(
        self, *, max_connections: int, https: bool, verify: Any = True, connect_timeout: float | None = 30.0
    ) -> None:
        """Made when a connection starts, before any request: importing aiohttp (~0.3 s, more on a
        loaded machine) and loading CA certificates must not eat into the first request's deadline
        (the era probe's is a few seconds)."""
        self._max_connections = max_connections
        self._connect_timeout = connect_timeout
        self._urls: dict[str, Any] = {}
        self._session = self._open_session(_ssl_context(verify) if https else True)

    def _open_session(self, tls: ssl.SSLContext | bool) -> aiohttp.ClientSession:
        import aiohttp  # paid by the first HTTP connection, not by `import mcp_notebook`

        connector = aiohttp.TCPConnector(
            limit=self._max_connections, limit_per_host=0, ssl=tls, keepalive_timeout=KEEPALIVE_SECONDS
        )
        return aiohttp.ClientSession(
            connector=connector,
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=self._connect_timeout),
            # Not trust_env: aiohttp then reads netrc and the proxy settings in a worker thread on
            # every request (two thread hops a call). An endpoint that the environment sends
            # through a proxy gets the httpx engine instead (see environment_proxy).
            trust_env=False,
            skip_auto_headers=("User-Agent",),
        )

    async def send(
        self,
        method: str,
        url: httpx.URL,
        headers: Mapping[str, str],
        content: bytes | None,
        auth: httpx.Auth | None,
    ) -> WireResponse:
        if auth is None:
            return _AiohttpResponse(await self._send(method, str(url), headers, content))
        return await self._signed(method, url, headers, content, auth)

    async def _signed(
        self, method: str, url: httpx.URL, headers: Mapping[str, str], content: bytes | None, auth: httpx.Auth
    ) -> WireResponse:
        """Run ``auth``'s flow (httpx's contract: it yields requests, we send back responses)."""
        flow = auth.async_auth_flow(httpx.Request(method, url, headers=headers, content=content))
        try:
            request = await flow.__anext__()
            while True:
                body = request.content or None
                wire_headers = {k: v for k, v in request.headers.items() if k.lower() not in _ENGINE_HEADERS}
                response = await self._send(request.method, str(request.url), wire_headers, body)
                bridged = httpx.Response(
                    response.status,
                    # aiohttp decoded the body already: httpx must not decode it again.
                    headers=[(k, v) for k, v in response.headers.items() if k.lower() not in _DECODED],
                    stream=_AiohttpBody(response),
                    request=request,
                )
                try:
                    request = await flow.asend(bridged)
                except StopAsyncIteration:
                    break  # the flow is content with this response: it is the answer
                except BaseException:
                    response.release()
                    raise
                response.release()  # the flow asked for another request (a refreshed token, say)
        finally:
            await flow.aclose()
        try:
            read: bytes | None = bridged.content  # the flow read it: the stream is spent
        except httpx.ResponseNotRead:
            read = None
        return _AiohttpResponse(response, read)

    async def _send(
        self, method: str, url: str, headers: Mapping[str, str], content: bytes | None
    ) -> aiohttp.ClientResponse:
        import aiohttp

        target = self._urls.get(url)
        if target is None:  # parsing a URL costs as much as a small request's bookkeeping: once each
            target = self._urls[url] = _yarl_url(url) if len(self._urls) < 64 else url
        try:
            return await self._session.request(
                method, target, headers=headers, data=content, allow_redirects=False
            )
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise WireError(_describe(exc), before_response=True) from None

    async def aclose(self) -> None:
        await self._session.close()


def environment_proxy(url: httpx.URL) -> str | None:
    """The proxy that HTTP(S)_PROXY / ALL_PROXY (less NO_PROXY) name for ``url``, if any."""
    proxies = urllib.request.getproxies()
    proxy = proxies.get(url.scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass(url.host):
        return None
    return proxy


def _ssl_context(verify: Any) -> ssl.SSLContext | bool:
    if verify is False:
        return False
    if isinstance(verify, ssl.SSLContext):
        return verify
    # httpx's context: certifi's roots (or the CA file or folder given), the same trust either engine.
    return httpx.create_ssl_context(verify=verify)


async def _collect(pieces: AsyncIterator[bytes], limit: int) -> bytes:
    """The pieces joined, or :class:`TooLarge` as soon as they pass ``limit`` bytes."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in pieces:
        size += len(chunk)
        if size > limit:
            raise TooLarge(size, limit)
        chunks.append(chunk)
    return b"".join(chunks)


def _yarl_url(url: str) -> Any:
    import yarl  # aiohttp's own URL type, installed with it

    return yarl.URL(url, encoded=True)


def _describe(exc: BaseException) -> str:
    """What failed, in words a person reads first (refused, DNS), then the library's own text."""
    text = str(exc)
    raw = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    cause = _plain_cause(exc)
    return f"{cause} ({raw})" if cause else raw


def _plain_cause(exc: BaseException, seen: set[int] | None = None) -> str | None:
    """The common reasons a connection cannot be made, found among ``exc``'s causes (aiohttp keeps
    the OSError as ``os_error``, httpx chains it, trio groups one per address tried); None for any
    other failure."""
    seen = set() if seen is None else seen
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, socket.gaierror) or type(current).__name__ == "ClientConnectorDNSError":
            return "the host name could not be resolved (DNS)"
        if isinstance(current, ConnectionRefusedError):
            return "connection refused: nothing listens at that address"
        if isinstance(current, BaseExceptionGroup):
            for inner in current.exceptions:
                found = _plain_cause(inner, seen)
                if found is not None:
                    return found
        os_error = getattr(current, "os_error", None)
        if isinstance(os_error, BaseException) and id(os_error) not in seen:
            current = os_error
        else:
            current = current.__cause__ or current.__context__
    return None


# --- httpx ------------------------------------------------------------------------------------


class _HttpxResponse:
    __slots__ = ("_response",)

    def __init__(self, response: httpx.Response) -> None:
        self._response = response

    @property
    def status(self) -> int:
        return self._response.status_code

    @property
    def reason(self) -> str:
        return self._response.reason_phrase

    @property
    def headers(self) -> Mapping[str, str]:
        return self._response.headers

    async def chunks(self) -> AsyncIterator[bytes]:
        response = self._response
        if response.is_stream_consumed:  # an auth flow read it (boundedly: read_bounded)
            if response.content:
                yield response.content
            return
        try:
            async for chunk in _decoded_stream(response.aiter_raw(), response.headers):
                yield chunk
        except httpx.HTTPError as exc:
            raise WireError(_describe(exc)) from None

    async def read(self, limit: int) -> bytes:
        declared = self._response.headers.get("content-length")
        if (
            declared is not None
            and declared.isdigit()
            and int(declared) > limit
            and not _codings(self._response.headers)
        ):
            raise TooLarge(int(declared), limit)
        return await _collect(self.chunks(), limit)

    async def release(self) -> None:
        await self._response.aclose()


class HttpxEngine:
    """An ``httpx.AsyncClient``: the user's own (never closed here) or one made for trio/proxies.

    Every request gets its own timeout with no read or pool limit, so a user's client with httpx's
    default 5 s timeout cannot cut a long tool call or a listen stream: deadlines are the
    connection's business.
    """

    def __init__(
        self, client: httpx.AsyncClient, *, owned: bool, connect_timeout: float | None = 30.0
    ) -> None:
        self._client = client
        self._owned = owned
        self._timeout = httpx.Timeout(connect_timeout, read=None, write=connect_timeout, pool=None)

    async def send(
        self,
        method: str,
        url: httpx.URL,
        headers: Mapping[str, str],
        content: bytes | None,
        auth: httpx.Auth | None,
    ) -> WireResponse:
        if not any(name.lower() == "accept-encoding" for name in headers):
            # Only the codings decoded here in bounded steps (not httpx's default br/zstd).
            headers = {**headers, "Accept-Encoding": ACCEPT_ENCODING}
        request = self._client.build_request(
            method, url, headers=headers, content=content, timeout=self._timeout
        )
        kwargs: dict[str, Any] = {"stream": True, "follow_redirects": False}
        if auth is not None:
            kwargs["auth"] = auth
        try:
            return _HttpxResponse(await self._client.send(request, **kwargs))
        except httpx.HTTPError as exc:
            raise WireError(_describe(exc), before_response=True) from None

    async def aclose(self) -> None:
        if self._owned:
            await self._client.aclose()
