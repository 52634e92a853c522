"""A static bearer token: for servers that hand out API tokens, or tokens obtained elsewhere."""

from __future__ import annotations

from collections.abc import Generator

import httpx

__all__ = ["BearerToken"]


class BearerToken(httpx.Auth):
    """Send ``Authorization: Bearer <token>`` with every request. The token never appears in a repr."""

    def __init__(self, token: str) -> None:
        if not isinstance(token, str) or not token.strip():
            raise ValueError("BearerToken needs the token as a non-empty string")
        if any(c in token for c in "\r\n\0"):
            raise ValueError("a bearer token cannot contain line breaks")
        self._token = token.strip()

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self._token}"
        yield request

    def __repr__(self) -> str:
        return "BearerToken(<redacted>)"

    def secret_values(self) -> tuple[str, ...]:
        """What the transport masks wherever the server's text is shown (a server may echo it)."""
        return (self._token,)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BearerToken) and other._token == self._token

    def __hash__(self) -> int:
        return hash((BearerToken, self._token))
