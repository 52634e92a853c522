"""Sans-IO protocol layer: JSON-RPC framing, MCP versions and eras, negotiation rules, error codes.

No I/O, no clocks, no threads. Everything here is a pure function or a small value object, so every
rule is tested with plain inputs.
"""

from ._errors import ERROR_KINDS, ErrorKind, McpError
from ._printable import printable
from ._versions import HANDSHAKE_VERSIONS, MODERN_VERSIONS, SUPPORTED_VERSIONS, Era

__all__ = [
    "ERROR_KINDS",
    "HANDSHAKE_VERSIONS",
    "MODERN_VERSIONS",
    "SUPPORTED_VERSIONS",
    "Era",
    "ErrorKind",
    "McpError",
    "printable",
]
