"""The device authorization grant (RFC 8628): sign in on any device by typing a short code.

Why: the loopback redirect needs the browser and the kernel on one machine, and for most notebook
users (Colab, JupyterHub, Binder, a kernel over SSH) they are not. With this grant the client asks
the authorization server for a pair of codes (§3.1, §3.2), shows the person the short *user code*
and where to enter it, and polls the token endpoint with the long *device code* (§3.4) until the
person has approved or declined, or the code expired (§3.5). Nothing needs to reach the kernel.

The pure half (reading the two kinds of answer, what a poll's error means for the next one) is a
set of functions; :class:`DeviceStep` is the thin half that yields the requests into the OAuth
flow's own ``httpx`` client and sleeps between polls (an anyio sleep: the event loop stays free).

What is secret: the device code, which any holder could redeem for the person's tokens until it
expires; it is never in a ``repr``, a log line or an error message. The user code and the
verification URI are meant to be shown: they are what a person types and opens.
"""

from __future__ import annotations

import logging
import math
import sys
import threading
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Literal

import anyio
import httpx

from ..protocol._errors import McpError
from ..protocol._printable import printable
from . import _discovery as disco
from ._flow import HTTP_TIMEOUT, Flow
from ._token import json_body, oauth_error, parse_token_response, refused, secrets_in, token_request
from ._user_step import UserStep

__all__ = [
    "DEVICE_CODE_GRANT",
    "DeviceAuthorization",
    "DeviceSignIn",
    "DeviceStep",
    "ShowDeviceCode",
    "next_interval",
    "parse_device_authorization",
]

logger = logging.getLogger("mcp_notebook.auth")

DEVICE_CODE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
#: RFC 8628 §3.2: without an ``interval`` the client waits 5 s between polls.
DEFAULT_INTERVAL = 5.0
#: RFC 8628 §3.5: each ``slow_down`` adds 5 s to the interval, for this poll and every later one.
SLOW_DOWN_STEP = 5.0
#: The shortest wait between polls, whatever the server says: RFC 8628 counts the interval in whole
#: seconds, and a server's 0.000001 must not make the client poll in a loop. (Not 1 s: test servers
#: of ours ask for fractions of a second, to keep the suite short.)
MIN_INTERVAL = 0.05
_MAX_USER_CODE = 64  # a code is for typing: a longer one is a broken (or hostile) server's
_MAX_URI = 2048


@dataclass(frozen=True)
class DeviceAuthorization:
    """The authorization server's answer to the device authorization request (RFC 8628 §3.2)."""

    device_code: str = field(repr=False)
    user_code: str
    verification_uri: str
    verification_uri_complete: str | None
    expires_in: float
    interval: float


def parse_device_authorization(
    status: int, content: bytes, *, endpoint: str, redact: list[str]
) -> DeviceAuthorization:
    """The codes of a successful answer, or an ``auth`` McpError that quotes the server's error."""
    if status != 200:
        what = f"the device authorization endpoint {endpoint} refused the request"
        raise refused(status, content, what=what, redact=redact)
    data = json_body(content)
    if not isinstance(data, dict):
        raise McpError("auth", f"the device authorization endpoint {endpoint} answered without a JSON object")
    strings = {name: data.get(name) for name in ("device_code", "user_code", "verification_uri")}
    missing = [name for name, value in strings.items() if not isinstance(value, str) or not value]
    expires_in = _seconds(data.get("expires_in"))
    if expires_in is None:
        missing.append("expires_in")
    if missing or expires_in is None:
        raise McpError(
            "auth",
            f"the device authorization endpoint {endpoint} answered without {', '.join(missing)}",
        )
    user_code, uri = str(strings["user_code"]), str(strings["verification_uri"])
    complete = data.get("verification_uri_complete")
    complete = complete if isinstance(complete, str) and complete else None
    if len(user_code) > _MAX_USER_CODE or any(len(u) > _MAX_URI for u in (uri, complete or "")):
        raise McpError(
            "auth", f"the device authorization endpoint {endpoint} answered with an oversized code or URI"
        )
    disco.require_secure(uri, "verification URI")
    if complete is not None:
        disco.require_secure(complete, "verification URI")
    return DeviceAuthorization(
        device_code=str(strings["device_code"]),
        user_code=user_code,
        verification_uri=uri,
        verification_uri_complete=complete,
        expires_in=expires_in,
        interval=max(MIN_INTERVAL, _seconds(data.get("interval")) or DEFAULT_INTERVAL),
    )


def _seconds(value: object) -> float | None:
    """A positive number of seconds from JSON, or None."""
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 and math.isfinite(value):
        return float(value)
    return None


def next_interval(error: str | None, interval: float) -> float | None:
    """The wait before the next poll after a refused one, or None when polling must stop (§3.5).

    ``authorization_pending``: the person has not answered yet, poll again after ``interval``.
    ``slow_down``: the same, with 5 s more from now on. Anything else (``access_denied``,
    ``expired_token``, a client or grant error) ends the sign-in.
    """
    if error == "authorization_pending":
        return interval
    if error == "slow_down":
        return interval + SLOW_DOWN_STEP
    return None


Outcome = Literal["waiting", "signed in", "failed"]


class DeviceSignIn:
    """What a person is shown for one device sign-in, and how it ended.

    Handed to each listener of :meth:`mcp_notebook.auth.OAuth.on_device_code` as the sign-in
    starts: ``user_code`` to type at ``verification_uri`` (or ``verification_uri_complete``, which
    carries the code, when the server gives one), for the MCP server at ``server_url`` through the
    authorization server ``issuer``, before ``expires_at`` (epoch seconds). ``outcome`` turns from
    ``"waiting"`` to ``"signed in"`` or ``"failed"`` (then ``message`` says why), and
    :meth:`on_change` callbacks hear it. None of it is secret: the device code is not here.
    """

    def __init__(
        self,
        *,
        server_url: str,
        issuer: str,
        user_code: str,
        verification_uri: str,
        verification_uri_complete: str | None,
        expires_at: float,
    ) -> None:
        self.server_url = server_url
        self.issuer = issuer
        self.user_code = user_code
        self.verification_uri = verification_uri
        self.verification_uri_complete = verification_uri_complete
        self.expires_at = expires_at
        self.outcome: Outcome = "waiting"
        self.message = ""
        self._callbacks: list[Callable[[DeviceSignIn], None]] = []
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (
            f"<DeviceSignIn {self.outcome}: open {printable(self.verification_uri)} and enter "
            f"{printable(self.user_code)}>"
        )

    @property
    def instruction(self) -> str:
        """The line a person reads: where to go and what to type, in printable characters."""
        return f"To sign in, open {printable(self.verification_uri)} and enter {printable(self.user_code)}"

    def on_change(self, callback: Callable[[DeviceSignIn], None]) -> Callable[[], None]:
        """Call ``callback(sign_in)`` when the outcome is known (on the thread of the sign-in)."""
        with self._lock:
            self._callbacks.append(callback)
        return lambda: self._callbacks.remove(callback) if callback in self._callbacks else None

    def _finish(self, outcome: Outcome, message: str = "") -> None:
        with self._lock:
            if self.outcome != "waiting":
                return
            self.outcome, self.message = outcome, message
            callbacks = list(self._callbacks)
        for callback in callbacks:
            try:
                callback(self)
            except Exception:
                logger.exception("a device sign-in callback raised; ignored")


#: Shows a device sign-in to the person (a notebook's widget); see :meth:`OAuth.on_device_code`.
ShowDeviceCode = Callable[[DeviceSignIn], None]
#: Adds the client's authentication (and, at the token endpoint, a DPoP proof) to a request's form
#: and headers; ``True`` when the request goes to the token endpoint.
Sign = Callable[[dict[str, str], dict[str, str], bool], None]


class DeviceStep:
    """The device grant's requests and waits, and who shows the code to the person."""

    def __init__(self, user_step: UserStep) -> None:
        self._user_step = user_step
        self._presenters: list[ShowDeviceCode] = []

    def __repr__(self) -> str:
        return f"DeviceStep(presenters={len(self._presenters)})"

    def listen(self, presenter: ShowDeviceCode) -> Callable[[], None]:
        """Have ``presenter`` show each device sign-in instead of the printed line; returns an undo."""
        presenters = self._presenters
        presenters.append(presenter)
        return lambda: presenters.remove(presenter) if presenter in presenters else None

    async def run(
        self,
        flow: Flow,
        *,
        endpoint: str,
        token_endpoint: str,
        issuer: str,
        resource: str,
        scope: str | None,
        client_id: str,
        sign: Sign,
        seen: Callable[[httpx.Response], None],
        dpop: bool,
    ) -> AsyncGenerator[httpx.Request, None]:
        """Ask for the codes, show them, poll until the person answered; ``flow.tokens`` then holds
        the tokens, or an ``auth`` McpError says why not (nothing is stored either way)."""
        form = {"resource": resource, **({"scope": scope} if scope else {})}
        headers: dict[str, str] = {}
        sign(form, headers, False)
        yield token_request(endpoint, form, headers, {"timeout": HTTP_TIMEOUT})
        response = await flow.received()
        codes = parse_device_authorization(
            response.status_code, response.content, endpoint=endpoint, redact=secrets_in(form, headers)
        )
        redact = [codes.device_code]
        sign_in = DeviceSignIn(
            server_url=flow.server.url,
            issuer=issuer,
            user_code=codes.user_code,
            verification_uri=codes.verification_uri,
            verification_uri_complete=codes.verification_uri_complete,
            expires_at=time.time() + codes.expires_in,
        )
        timeout = self._user_step.authorize_timeout
        now = anyio.current_time()
        expires = now + codes.expires_in
        gives_up = now + timeout if timeout is not None else math.inf
        interval = codes.interval
        with self._user_step.held():
            self._show(sign_in)
            try:
                while True:
                    wake = anyio.current_time() + interval
                    if wake >= min(expires, gives_up):
                        await anyio.sleep_until(min(expires, gives_up))
                        raise self._ended(issuer, expired=expires <= gives_up, timeout=timeout)
                    await anyio.sleep_until(wake)
                    poll = {"grant_type": DEVICE_CODE_GRANT, "device_code": codes.device_code}
                    poll_headers: dict[str, str] = {}
                    sign(poll, poll_headers, True)
                    yield token_request(token_endpoint, poll, poll_headers, {"timeout": HTTP_TIMEOUT})
                    response = await flow.received()
                    seen(response)
                    if response.status_code == 200:
                        break
                    error, _ = oauth_error(response.content)
                    if error == "use_dpop_nonce" and dpop:
                        continue  # RFC 9449 §8: the next poll carries the server's nonce
                    wait = next_interval(error, interval)
                    if wait is not None:
                        interval = wait
                        continue
                    if error == "access_denied":
                        raise McpError(
                            "auth",
                            f"the sign-in was declined at {issuer} (access_denied); no token was issued",
                            data={"oauth_error": error, "status": response.status_code},
                        )
                    if error == "expired_token":
                        raise self._ended(issuer, expired=True, timeout=timeout)
                    break  # another refusal: reported by the token parser, with the server's words
                flow.tokens = parse_token_response(
                    response.status_code,
                    response.content,
                    what="device code grant",
                    endpoint=token_endpoint,
                    issuer=issuer,
                    resource=resource,
                    client_id=client_id,
                    requested_scope=scope,
                    dpop=dpop,
                    redact=[*redact, *secrets_in(poll, poll_headers)],
                )
            except McpError as exc:
                sign_in._finish("failed", str(exc))
                raise
            except BaseException:
                sign_in._finish("failed", "The sign-in was stopped.")
                raise
            sign_in._finish("signed in")
        logger.info("signed in at %s with the device grant for %s", issuer, flow.server.url)

    @staticmethod
    def _ended(issuer: str, *, expired: bool, timeout: float | None) -> McpError:
        if expired:
            return McpError(
                "auth",
                f"the code expired before the sign-in at {issuer} was completed; "
                "no token was issued: run the request again for a new code",
                data={"oauth_error": "expired_token"},
            )
        return McpError(
            "auth",
            f"the sign-in at {issuer} was not completed within authorize_timeout={timeout or 0:g} s; "
            "no token was issued",
        )

    def _show(self, sign_in: DeviceSignIn) -> None:
        """Through the presenters (a notebook's widget); printed when there is none, or when every
        one of them failed: a person who is never shown the code could only wait for the expiry."""
        logger.info("%s (for %s)", sign_in.instruction, sign_in.server_url)
        shown = False
        for presenter in list(self._presenters):
            try:
                presenter(sign_in)
                shown = True
            except Exception:
                logger.exception("a device sign-in presenter raised; ignored")
        if not shown:
            also = sign_in.verification_uri_complete
            print(
                f"{sign_in.instruction}\n"
                + (f"  (or open {printable(also)}, which holds the code)\n" if also else "")
                + f"Waiting for the sign-in for {sign_in.server_url} ...",
                file=sys.stderr,
                flush=True,
            )
