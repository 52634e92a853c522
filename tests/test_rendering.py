"""Rich reprs escape everything a server sent, and reprs never show secrets."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from mcp_notebook import (
    Client,
    McpError,
    Prompt,
    PromptResult,
    Resource,
    ResourceContents,
    ResourceTemplate,
    Tool,
    ToolResult,
)
from mcp_notebook.display._errors import error_html
from mcp_notebook.transports import StdioTransport
from tests.raises import raises_mcp

HOSTILE = [
    '<img src=x onerror="alert(1)">',
    "<script>alert('pwned')</script>",
    '"><svg onload=alert(1)>',
    "javascript:alert(1)",
]
PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="


class _Elements(HTMLParser):
    """Every element and attribute a browser would build from the markup."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))


def _assert_inert(markup: str) -> None:
    """No script, no event handler, no active URL: what the server sent stays text."""
    parser = _Elements()
    parser.feed(markup)
    for tag, attrs in parser.elements:
        assert tag not in ("script", "svg", "iframe", "object", "embed", "style"), markup
        for name, value in attrs.items():
            assert not name.startswith("on"), f"event handler {name} in {markup!r}"
            if name in ("src", "href"):
                assert value is not None
                assert value.startswith(("data:image/png;base64,", "https://", "http://")), value


@pytest.mark.parametrize("payload", HOSTILE)
def test_tool_result_html_escapes_every_kind_of_block(payload: str) -> None:
    result = ToolResult.from_dict(
        {
            "content": [
                {"type": "text", "text": payload},
                {"type": "resource_link", "uri": payload, "name": payload},
                {"type": "resource", "resource": {"uri": payload, "text": payload}},
                {"type": "image", "mimeType": "image/svg+xml", "data": "PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+"},
                {"type": "image", "mimeType": f"image/png;{payload}", "data": PNG_1PX},
                {"type": "image", "mimeType": "image/png", "data": f"{payload}"},
                {"type": payload, "x": payload},
            ],
            "isError": True,
        }
    )
    bundle = result._repr_mimebundle_()
    _assert_inert(bundle["text/html"])
    assert "The tool reported an error" in bundle["text/html"]
    assert payload in bundle["text/plain"]  # plain text is shown as text, which is safe


def test_valid_raster_image_is_inlined() -> None:
    html = ToolResult.from_dict({"content": [{"type": "image", "mimeType": "image/png", "data": PNG_1PX}]})
    assert f'src="data:image/png;base64,{PNG_1PX}"' in html._repr_mimebundle_()["text/html"]


def test_http_links_are_clickable_other_schemes_are_not() -> None:
    block = {"type": "resource_link", "uri": "https://example.org/a?b=<c>", "name": "doc"}
    markup = ToolResult.from_dict({"content": [block]})._repr_mimebundle_()["text/html"]
    assert 'href="https://example.org/a?b=&lt;c&gt;"' in markup
    assert 'rel="noopener noreferrer nofollow"' in markup


@pytest.mark.parametrize("payload", HOSTILE)
def test_listing_reprs_escape_server_strings(payload: str) -> None:
    tool = Tool.from_dict(
        {
            "name": payload,
            "title": payload,
            "description": payload,
            "inputSchema": {
                "type": "object",
                "properties": {payload: {"type": payload, "description": payload}},
            },
        }
    )
    _assert_inert(tool._repr_html_())
    _assert_inert(Resource.from_dict({"uri": payload, "name": payload, "mimeType": payload})._repr_html_())
    contents = ResourceContents.from_dict({"contents": [{"uri": payload, "text": payload}]})
    _assert_inert(contents._repr_mimebundle_()["text/html"])
    message = {"role": payload, "content": {"type": "text", "text": payload}}
    prompt = PromptResult.from_dict({"messages": [message]})
    _assert_inert(prompt._repr_html_())
    prompt_object = Prompt.from_dict(
        {"name": payload, "description": payload, "arguments": [{"name": payload, "description": payload}]}
    )
    _assert_inert(prompt_object._repr_html_())
    template = ResourceTemplate.from_dict({"uriTemplate": payload, "name": payload, "description": payload})
    _assert_inert(template._repr_html_())
    _assert_inert(error_html(McpError("server", payload, code=-32000)))


def test_malformed_results_are_protocol_errors() -> None:
    with pytest.raises(McpError) as caught:
        ToolResult.from_dict({"content": "not a list"})
    assert caught.value.kind == "protocol"
    with raises_mcp("protocol"):
        Tool.from_dict({"description": "no name"})


def test_env_values_never_appear_in_reprs() -> None:
    secret = "sk-live-THIS-IS-SECRET-42"
    transport = StdioTransport(["server", "--flag"], env={"API_TOKEN": secret})
    assert secret not in repr(transport)
    assert "API_TOKEN" in repr(transport)
    client = Client(["server"], env={"API_TOKEN": secret})
    assert secret not in repr(client)
    assert secret not in transport.describe()


def test_error_messages_mask_env_values_quoted_from_stderr() -> None:
    secret = "sk-live-THIS-IS-SECRET-42"
    transport = StdioTransport(["server"], env={"API_TOKEN": secret})
    transport._stderr.append(f"Traceback: token {secret} rejected")
    message = transport.exit_message(1)
    assert "token *** rejected" in message
    assert secret not in message


# --- third-party shapes (issue #29): text drawn as Markdown, grids' headers, literals ------------


@pytest.mark.parametrize("payload", HOSTILE)
def test_a_wrapped_markdown_text_stays_inert(payload: str) -> None:
    text = (
        f"# {payload}\n\n- {payload}\n- [click]({payload})\n- [js](javascript:alert(1))\n"
        f"![pixel](https://tracker.example/p.png)\n\n{payload}\n"
    )
    result = ToolResult.from_dict(
        {"content": [{"type": "text", "text": text}], "structuredContent": {"result": text}}
    )
    html = result._repr_mimebundle_()["text/html"]
    assert "<h1>" in html  # drawn as Markdown, not as a table
    assert "<table" not in html
    _assert_inert(html)
    assert "<img" not in html  # nothing is fetched: the image is at most a link
    assert 'href="javascript' not in html
    if "<" in payload:
        assert payload not in html


@pytest.mark.parametrize("payload", HOSTILE)
def test_grid_headers_and_literal_cells_are_escaped(payload: str) -> None:
    grid = ToolResult.from_dict({"content": [], "structuredContent": {"values": [[payload, "n"], ["a", 1]]}})
    literal = ToolResult.from_dict({"content": [{"type": "text", "text": str([{payload: payload, "n": 1}])}]})
    for result in (grid, literal):
        bundle = result._repr_mimebundle_()
        assert "<table" in bundle["text/html"]
        _assert_inert(bundle["text/html"])
        if "<" in payload:
            assert payload not in bundle["text/html"]
        assert payload in result.to_dataframe().columns  # the data itself is kept as sent
