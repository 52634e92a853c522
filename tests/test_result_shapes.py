"""Results whose blocks carry values of the wrong type still display (found by tests/test_fuzz.py).

A notebook shows every result it gets; a server that puts a list where a MIME type belongs, or a
string where a resource object belongs, must get a "not shown" placeholder, not a traceback.
"""

from __future__ import annotations

import pytest

from mcp_notebook import ToolResult

ODD_BLOCKS = [
    {"type": "image", "mimeType": [], "data": "AAAA"},
    {"type": "audio", "mimeType": {"a": 1}, "data": "AAAA"},
    {"type": "resource", "resource": "file:///x"},
    {"type": "resource", "resource": [1, 2]},
    {"type": "resource", "resource": {"uri": "file:///x", "mimeType": ["text/plain"], "blob": "AAAA"}},
]


@pytest.mark.parametrize("block", ODD_BLOCKS, ids=lambda b: f"{b['type']}-{sorted(b)[-1]}")
def test_a_block_with_values_of_the_wrong_type_is_displayed_as_not_shown(block: dict) -> None:
    result = ToolResult.from_dict({"content": [block]})
    bundle = result._repr_mimebundle_()
    assert "text/html" in bundle
    repr(result)
