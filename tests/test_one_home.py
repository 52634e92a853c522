"""Rules that had several spellings now have one home (issue #27): each is pinned here once, and
every picture or request that used a copy now shows the same answer."""

from __future__ import annotations

import base64

import pytest

from mcp_notebook.auth._token import basic_credentials
from mcp_notebook.display import _html
from mcp_notebook.display import _pictures as _render
from mcp_notebook.protocol._http_binding import is_http_url


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("http://127.0.0.1:8000/mcp", True),
        ("HTTPS://example.test/mcp", True),
        ("uvx mcp-server-time", False),
        ("file:///tmp/x", False),
        ("ui://board/app.html", False),
        (None, False),
        (["http://a"], False),
    ],
)
def test_one_url_test(text: object, expected: bool) -> None:
    assert is_http_url(text) is expected


@pytest.mark.parametrize("raw", [b"", b"a", b"ab", b"abc", b"abcd", bytes(range(256)) * 3])
def test_base64_size_is_the_decoded_size(raw: bytes) -> None:
    text = base64.b64encode(raw).decode()
    assert _html.base64_size(text) == len(raw)
    assert _html.base64_size(f"  {text}\n") == len(raw)


def test_base64_size_of_no_text_is_zero() -> None:
    assert _html.base64_size(None) == 0
    assert _html.base64_size(b"YQ==") == 0


def test_the_text_picture_and_the_html_picture_agree_on_a_size() -> None:
    one_byte = base64.b64encode(b"a").decode()  # "YQ==": the old text formula said 3 bytes
    block = {"type": "image", "mimeType": "image/png", "data": one_byte}
    text = _render.result_text(None, [block])
    assert "about 1 bytes" in text, text
    blob = {"type": "resource", "resource": {"uri": "file:///a.bin", "blob": one_byte}}
    assert "(1 bytes)" in _render.result_text(None, [blob])


def test_basic_credentials_form_encode_both_parts() -> None:
    value = basic_credentials("id:with colon", "sécret")
    assert value.startswith("Basic ")
    pair = base64.b64decode(value.removeprefix("Basic ")).decode()
    assert pair == "id%3Awith%20colon:s%C3%A9cret"
