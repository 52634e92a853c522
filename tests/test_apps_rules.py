"""The pure MCP Apps rules: resource URIs, visibility, the View's CSP and allow attribute."""

from __future__ import annotations

from typing import Any

import pytest

from mcp_notebook.apps import (
    APP_MIME_TYPE,
    allow_attribute,
    callable_by_app,
    content_security_policy,
    extension_settings,
    tool_visibility,
    ui_resource_uri,
    visible_to_model,
)
from mcp_notebook.protocol._apps import valid_sources

URI = "ui://probe/app.html"


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        ({"ui": {"resourceUri": URI}}, URI),
        ({"ui/resourceUri": URI}, URI),  # the deprecated flat key
        ({"ui": {"resourceUri": URI}, "ui/resourceUri": "ui://other/x"}, URI),  # current key wins
        ({"ui": {"visibility": ["app"]}, "ui/resourceUri": URI}, URI),  # ui without resourceUri
        ({"ui": {"resourceUri": "https://evil.example/app.html"}}, None),  # not ui://: no UI
        ({"ui": {"resourceUri": "https://x"}, "ui/resourceUri": URI}, None),  # bad current: not read on
        ({"ui/resourceUri": "file:///etc/passwd"}, None),
        ({"ui": {"resourceUri": "ui://"}}, None),
        ({"ui": {"resourceUri": "ui://a b"}}, None),
        ({"ui": {"resourceUri": 42}}, None),
        ({"ui": {"resourceUri": "UI://probe/x"}}, None),
        ({"ui": {"resourceUri": "ui://" + "x" * 5000}}, None),
        ({"ui": "ui://probe/app.html"}, None),
        ({}, None),
        (None, None),
        ("not a mapping", None),
    ],
)
def test_ui_resource_uri(meta: Any, expected: str | None) -> None:
    assert ui_resource_uri(meta) == expected


@pytest.mark.parametrize(
    ("meta", "visibility"),
    [
        (None, ("model", "app")),
        ({}, ("model", "app")),
        ({"ui": {"resourceUri": URI}}, ("model", "app")),
        ({"ui": {"visibility": ["app"]}}, ("app",)),
        ({"ui": {"visibility": ["model"]}}, ("model",)),
        ({"ui": {"visibility": ["app", "model"]}}, ("model", "app")),
        ({"ui": {"visibility": ["app", "app"]}}, ("app",)),
        ({"ui": {"visibility": []}}, ("model", "app")),  # malformed: the default
        ({"ui": {"visibility": "app"}}, ("model", "app")),
        ({"ui": {"visibility": ["app", "admin"]}}, ("model", "app")),
        ({"ui": {"visibility": [None]}}, ("model", "app")),
        ({"ui": {"visibility": {"app": True}}}, ("model", "app")),
    ],
)
def test_tool_visibility(meta: Any, visibility: tuple[str, ...]) -> None:
    assert tool_visibility(meta) == visibility
    assert visible_to_model(meta) == ("model" in visibility)
    assert callable_by_app(meta) == ("app" in visibility)


DEFAULT_CSP = (
    "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "connect-src 'none'; img-src 'self' data:; font-src 'self'; media-src 'self' data:; "
    "frame-src 'none'; object-src 'none'; base-uri 'self'"
)


def test_absent_csp_is_the_spec_default() -> None:
    assert content_security_policy(None) == DEFAULT_CSP
    assert content_security_policy({}) == DEFAULT_CSP
    assert content_security_policy("connect everything") == DEFAULT_CSP  # type: ignore[arg-type]
    assert content_security_policy({"connectDomains": []}) == DEFAULT_CSP


def test_declared_domains_land_in_their_directives() -> None:
    csp = {
        "connectDomains": ["https://api.example.com", "wss://live.example.com"],
        "resourceDomains": ["https://cdn.example.com"],
        "frameDomains": ["https://www.youtube.com"],
        "baseUriDomains": ["https://cdn.example.com"],
    }
    assert content_security_policy(csp) == (
        "default-src 'none'; "
        "script-src 'self' 'unsafe-inline' https://cdn.example.com; "
        "style-src 'self' 'unsafe-inline' https://cdn.example.com; "
        "connect-src https://api.example.com wss://live.example.com; "
        "img-src 'self' data: https://cdn.example.com; "
        "font-src 'self' https://cdn.example.com; "
        "media-src 'self' data: https://cdn.example.com; "
        "frame-src https://www.youtube.com; "
        "object-src 'none'; "
        "base-uri https://cdn.example.com"
    )


HOSTILE = [
    "https://a.example.com; script-src 'unsafe-eval'",
    "https://a.example.com 'unsafe-eval'",
    "'unsafe-eval'",
    "'unsafe-inline'",
    "'self'",
    "'none'",
    "*",
    "https://*",
    "https://*.com",
    "*.example.com",
    "data:",
    "blob:",
    "https:",
    "javascript:alert(1)",
    "http://api.example.com",
    "ws://api.example.com",
    "http://localhost:8888",
    "https://a.example.com\nscript-src *",
    "https://a.example.com\r\n",
    "https://a.example.com\t",
    " https://a.example.com",
    "https://a.example.com/path",
    "https://a.example.com/?q=1",
    "https://user:pw@a.example.com",
    'https://a.example.com"',
    "https://a.example.com,https://b.example.com",
    "https://exаmple.com",  # Cyrillic a
    "https://-bad.example.com",
    "https://a.example.com:0",
    "https://a.example.com:99999",
    "https://" + "a" * 64 + ".com",
    "",
    None,
    42,
    ["https://a.example.com"],
    {"https://a.example.com": True},
]


@pytest.mark.parametrize("entry", HOSTILE, ids=repr)
@pytest.mark.parametrize("key", ["connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"])
def test_hostile_entries_never_reach_the_policy(key: str, entry: Any) -> None:
    assert valid_sources({key: [entry]}, key) == []
    policy = content_security_policy({key: [entry]})
    assert policy == DEFAULT_CSP


@pytest.mark.parametrize(
    ("key", "entry", "kept"),
    [
        ("connectDomains", "https://API.Example.com/", "https://api.example.com"),
        ("connectDomains", "wss://live.example.com:8443", "wss://live.example.com:8443"),
        ("connectDomains", "https://*.example.com", "https://*.example.com"),
        ("resourceDomains", "https://cdn.jsdelivr.net", "https://cdn.jsdelivr.net"),
        ("resourceDomains", "wss://cdn.example.com", None),  # a socket is no resource
        ("frameDomains", "wss://x.example.com", None),
        ("baseUriDomains", "https://cdn.example.com:443", "https://cdn.example.com:443"),
    ],
)
def test_valid_sources_are_normalised(key: str, entry: str, kept: str | None) -> None:
    assert valid_sources({key: [entry]}, key) == ([kept] if kept else [])


def test_sources_are_deduplicated_and_bounded() -> None:
    many = [f"https://h{i}.example.com" for i in range(500)]
    assert len(valid_sources({"connectDomains": many}, "connectDomains")) == 64
    twice = ["https://a.example.com", "https://A.example.com/"]
    assert valid_sources({"connectDomains": twice}, "connectDomains") == ["https://a.example.com"]
    assert valid_sources({"connectDomains": "https://a.example.com"}, "connectDomains") == []


def test_hostile_entries_beside_good_ones_leave_only_the_good() -> None:
    csp = {"connectDomains": ["https://ok.example.com", "*", "https://x.com; default-src *"]}
    assert "connect-src https://ok.example.com;" in content_security_policy(csp)


@pytest.mark.parametrize(
    ("permissions", "allow"),
    [
        (None, ""),
        ({}, ""),
        ({"camera": {}}, "camera"),
        (
            {"clipboardWrite": {}, "geolocation": {}, "microphone": {}, "camera": {}},
            "camera; microphone; geolocation; clipboard-write",
        ),
        ({"camera": True, "microphone": False, "geolocation": None}, "camera"),
        ({"usb": {}, "camera": "yes", "clipboard-write": {}}, ""),
        ({"camera": {}, "display-capture": {}}, "camera"),
        ("camera", ""),
    ],
)
def test_allow_attribute(permissions: Any, allow: str) -> None:
    assert allow_attribute(permissions) == allow


def test_extension_settings() -> None:
    assert extension_settings() == {"mimeTypes": [APP_MIME_TYPE]}
    assert APP_MIME_TYPE == "text/html;profile=mcp-app"
