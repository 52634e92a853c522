"""The bearer-token rule of the demo server's ``--token``, apart from the package and the server.

Why its own module: both the command line (``demo/__init__``) and the HTTP server
(``demo/server``) check a token; with the rule here, the server no longer imports its own
package, which imported the server (a package <-> child cycle).
"""

from __future__ import annotations

__all__ = ["valid_token"]


def valid_token(token: str) -> bool:
    """What a bearer token may be here: non-empty printable ASCII without spaces."""
    return bool(token) and all(0x21 <= ord(c) <= 0x7E for c in token)
