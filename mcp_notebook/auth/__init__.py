"""Authorization for MCP servers over HTTP: static bearer tokens and the OAuth 2.1 flow of the MCP
authorization spec, both as :class:`httpx.Auth` objects the HTTP transport passes to its client. ::

    auth = OAuth(store=FileTokenStore("~/.config/mcp-notebook/tokens.json"))
    async with httpx.AsyncClient(auth=auth) as http:
        ...

stdio servers take credentials from their environment instead (the spec says so); nothing here
applies to them.
"""

from ._assertions import AssertionContext, IdpTokenExchange
from ._bearer import BearerToken
from ._device import DeviceSignIn
from ._oauth import OAuth, OnAuthorize
from ._records import ClientInfo, Tokens
from ._store import FileTokenStore, MemoryTokenStore, TokenStore

__all__ = [
    "AssertionContext",
    "BearerToken",
    "ClientInfo",
    "DeviceSignIn",
    "FileTokenStore",
    "IdpTokenExchange",
    "MemoryTokenStore",
    "OAuth",
    "OnAuthorize",
    "TokenStore",
    "Tokens",
]
