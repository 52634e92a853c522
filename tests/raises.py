"""``raises_mcp``: ``pytest.raises(McpError)`` that also states which failure it expects.

A bare ``pytest.raises(McpError)`` passes on any failure: a timeout, a closed client or a bug in
the error path would all satisfy a test about a protocol error. Every expected McpError names its
``kind`` (and, where the words matter, a ``match`` on the message).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest

from mcp_notebook import McpError
from mcp_notebook.protocol import ERROR_KINDS


@contextlib.contextmanager
def raises_mcp(kind: str, match: str | None = None) -> Iterator[pytest.ExceptionInfo[McpError]]:
    """Expect an McpError of this ``kind`` whose message matches ``match`` (``re.search``)."""
    assert kind in ERROR_KINDS, f"no McpError kind {kind!r}"
    with pytest.raises(McpError, match=match) as info:
        yield info
    assert info.value.kind == kind, f"expected an McpError of kind {kind!r}, got {info.value!r}"
