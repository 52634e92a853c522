"""``OAuth()``'s arguments, refused at construction when wrong (a ValueError that says what fits).

Why a module of its own: a mistake in how the options combine (a grant without its credentials, a
redirect this process cannot receive) must fail where the object is made, not at the first 401
minutes later; the rules are many and would crowd the flow's own module.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from . import _discovery as disco
from ._where import FLOWS

__all__ = ["check_options"]


def check_options(
    *,
    grant: str,
    assertion: object,
    client_id: str | None,
    client_secret: str | None,
    private_key: str | bytes | None,
    client_metadata_url: str | None,
    flow: str,
    on_authorize: object,
    redirect_uri: str | None,
    callback_port: int,
    max_step_ups: int,
    max_response_bytes: int,
) -> None:
    """Raise ValueError for options that cannot work together."""
    if grant not in ("authorization_code", "client_credentials", "jwt_bearer"):
        raise ValueError(
            f"grant must be 'authorization_code', 'client_credentials' or 'jwt_bearer', not {grant!r}"
        )
    if (grant == "jwt_bearer") != (assertion is not None):
        raise ValueError("grant='jwt_bearer' needs assertion=, and assertion= needs grant='jwt_bearer'")
    if (client_secret is not None or private_key is not None) and not client_id:
        raise ValueError("client_secret= and private_key= need the client_id= they belong to")
    if grant == "client_credentials" and (not client_id or (client_secret is None and private_key is None)):
        raise ValueError("grant='client_credentials' needs client_id= and client_secret= (or private_key=)")
    _check_flow(flow, grant=grant, on_authorize=on_authorize, redirect_uri=redirect_uri, port=callback_port)
    if client_metadata_url is not None:
        parts = urlsplit(client_metadata_url)
        if parts.scheme != "https" or parts.path in ("", "/"):
            raise ValueError(
                "client_metadata_url= must be an https URL with a path (the client ID metadata document)"
            )
    if max_step_ups < 0:
        raise ValueError("max_step_ups must be 0 or more")
    if max_response_bytes < 1024:
        raise ValueError("max_response_bytes must be at least 1024")


def _check_flow(flow: str, *, grant: str, on_authorize: object, redirect_uri: str | None, port: int) -> None:
    """``flow=`` and the redirect options that go with it, refused at construction when wrong."""
    if flow not in FLOWS:
        raise ValueError(f"flow must be one of {', '.join(map(repr, FLOWS))}, not {flow!r}")
    if flow != "auto" and grant != "authorization_code":
        raise ValueError(f"flow={flow!r} is how a person signs in: grant={grant!r} has no person")
    if on_authorize is not None:
        if flow != "auto":
            raise ValueError(
                f"on_authorize= is a sign-in step of its own; leave flow= at 'auto', not {flow!r}"
            )
        if redirect_uri is None:
            raise ValueError(
                "on_authorize= needs redirect_uri=: the redirect URI the authorization server sends to"
            )
        return
    if redirect_uri is None:
        return
    parts = urlsplit(redirect_uri)
    if parts.scheme == "http" and disco.is_loopback_host(parts.hostname):
        return
    if parts.scheme == "https" and parts.hostname and (flow == "paste" or port):
        return  # paste-back (nothing listens), or a proxy that forwards to callback_port here
    raise ValueError(
        "without on_authorize=, redirect_uri= must be a loopback http URL (such as "
        "http://127.0.0.1:8765/callback) that this process can listen on, or the https URL of a proxy "
        "that forwards to this machine, with callback_port= the local port it forwards to"
    )
