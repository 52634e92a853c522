"""A one-shot HTTP listener on the loopback interface that receives the authorization redirect.

The browser finishes the authorization at ``http://127.0.0.1:<port>/callback?code=...&state=...``
(RFC 8252 §7.3: native apps use a loopback redirect; the port may be ephemeral). This module binds
that socket, answers each connection with a short HTML page, and hands back the query parameters of
the first ``GET /callback`` whose ``state`` matches the one we sent. Anything else (a favicon, a
stray request, a redirect answering some other attempt) gets a 4xx and the wait goes on.

Connections are served concurrently, each with its own read deadline: browsers open speculative
connections that never send a byte, and one of those must not hold up the real redirect. The page
never echoes anything from the request.

Behind a proxy (``OAuth(redirect_uri="https://hub.example/user/ada/proxy/8765/callback",
callback_port=8765)``: jupyter-server-proxy, a tunnel) the browser is sent to the public address and
the proxy forwards the request here, with the public path or only its tail (jupyter-server-proxy
strips ``/user/ada/proxy/8765``): a request is taken when its path is the public path or a tail of
it that starts at a ``/``. The ``state`` check is what makes a redirect ours either way.
"""

from __future__ import annotations

import contextlib
import logging
from urllib.parse import parse_qsl, urlsplit

import anyio
import anyio.abc

from ..protocol._errors import McpError

__all__ = ["LoopbackReceiver"]

logger = logging.getLogger("mcp_notebook.auth")

_MAX_HEAD = 16 * 1024
_READ_TIMEOUT = 10.0

_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>{title}</title></head>
<body style="font-family:system-ui,sans-serif;margin:3em"><h2>{title}</h2><p>{text}</p></body></html>"""
_DONE = _PAGE.format(title="Authorization complete", text="You can close this tab and return to Python.")
_FAILED = _PAGE.format(
    title="Authorization not completed",
    text="The authorization server sent an error. Return to Python for details.",
)
_STRAY = _PAGE.format(
    title="Not the expected redirect", text="This request does not answer the current authorization."
)


def _response(status: str, body: str) -> bytes:
    data = body.encode("utf-8")
    head = (
        f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {len(data)}\r\n"
        "Cache-Control: no-store\r\nReferrer-Policy: no-referrer\r\nConnection: close\r\n\r\n"
    )
    return head.encode("ascii") + data


def _path_matches(got: str, expected: str) -> bool:
    """``got`` is ``expected``, or a tail of it from a ``/`` on (what a path-stripping proxy forwards)."""
    return got == expected or (got.startswith("/") and got != "/" and expected.endswith(got))


class LoopbackReceiver:
    """Bind with :meth:`start` (the redirect URI is known from then on), then :meth:`receive` once,
    then :meth:`aclose`. Binding early matters: dynamic registration needs the redirect URI, port
    included, before the user is sent anywhere."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        path: str = "/callback",
        *,
        public_uri: str | None = None,
    ) -> None:
        self.host = host
        self.port = port
        self.path = path or "/"
        #: The address the browser is sent to when a proxy forwards it here (None: this listener's own).
        self.public_uri = public_uri
        self._listener: anyio.abc.Listener[anyio.abc.SocketStream] | None = None

    @property
    def redirect_uri(self) -> str:
        if self.public_uri is not None:
            return self.public_uri
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{self.path}"

    async def start(self) -> str:
        try:
            listener = await anyio.create_tcp_listener(local_host=self.host, local_port=self.port)
        except OSError as exc:
            raise McpError(
                "auth",
                f"cannot listen for the authorization redirect on {self.host}:{self.port} "
                f"({exc.strerror or exc}); pick another port with OAuth(callback_port=...) "
                "or pass on_authorize=",
            ) from exc
        self._listener = listener
        self.port = int(listener.extra(anyio.abc.SocketAttribute.local_port))
        return self.redirect_uri

    async def aclose(self) -> None:
        if self._listener is not None:
            listener, self._listener = self._listener, None
            await listener.aclose()

    async def receive(self, expected_state: str, *, timeout: float | None) -> dict[str, str]:
        """The query parameters of the matching redirect; an ``auth`` McpError after ``timeout``."""
        if self._listener is None:
            raise RuntimeError("LoopbackReceiver.receive() before start()")
        listener = self._listener
        result: dict[str, str] = {}

        async def handle(stream: anyio.abc.SocketStream) -> None:
            async with stream:
                with anyio.move_on_after(_READ_TIMEOUT):
                    params = await self._serve_one(stream, expected_state)
                    if params is not None and not result:
                        result.update(params)
                        tg.cancel_scope.cancel()

        with anyio.move_on_after(timeout):
            async with anyio.create_task_group() as tg:
                await listener.serve(handle, task_group=tg)
        if not result:
            raise McpError(
                "auth",
                f"no authorization redirect arrived at {self.redirect_uri} within {timeout or 0:g} s; "
                "open the printed URL in a browser on this machine, "
                "or pass on_authorize= to handle it yourself",
            )
        return result

    async def _serve_one(self, stream: anyio.abc.SocketStream, expected_state: str) -> dict[str, str] | None:
        head = b""
        try:
            while b"\r\n\r\n" not in head and b"\n\n" not in head:
                if len(head) > _MAX_HEAD:
                    await stream.send(_response("431 Request Header Fields Too Large", _STRAY))
                    return None
                head += await stream.receive(4096)
        except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
            return None
        request_line = head.split(b"\n", 1)[0].decode("latin-1").strip()
        parts = request_line.split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/"):
            await stream.send(_response("400 Bad Request", _STRAY))
            return None
        method, target = parts[0], parts[1]
        url = urlsplit(target)
        if method != "GET" or not _path_matches(url.path, self.path):
            await stream.send(_response("404 Not Found", _STRAY))
            return None
        params = dict(parse_qsl(url.query, keep_blank_values=True))
        if params.get("state") != expected_state or not ("code" in params or "error" in params):
            logger.info("ignored a request to the authorization callback that does not carry our state")
            await stream.send(_response("400 Bad Request", _STRAY))
            return None
        # If the browser went away before the page, the parameters arrived all the same.
        with contextlib.suppress(anyio.BrokenResourceError, OSError):
            await stream.send(_response("200 OK", _FAILED if "error" in params else _DONE))
        return params
