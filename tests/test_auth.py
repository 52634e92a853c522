"""OAuth for MCP servers: the pure rules as tables, the local pieces on real files and sockets, and
the whole flow against an in-process authorization server and MCP server (``httpx.MockTransport``).

The conformance suites (stable and alpha) exercise the same flow against the official harness; these
tests pin the rules the harness checks so a regression shows up here first, fast, without Node.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import os
import stat
import string
import sys
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
import pytest

from mcp_notebook import McpError
from mcp_notebook.auth import BearerToken, ClientInfo, FileTokenStore, MemoryTokenStore, OAuth, Tokens
from mcp_notebook.auth._discovery import (
    as_metadata_urls,
    canonical_resource,
    legacy_as_metadata_urls,
    parse_as_metadata,
    prm_urls,
    require_secure,
    resource_matches,
)
from mcp_notebook.auth._loopback import LoopbackReceiver
from mcp_notebook.auth._pkce import new_pkce, new_state, s256
from mcp_notebook.auth._policy import (
    authorization_code_from,
    choose_client_auth_method,
    choose_registration_auth_method,
    parse_redirect,
    select_scope,
    union_scopes,
)
from mcp_notebook.auth._www_authenticate import bearer_challenge, parse_challenges
from tests.raises import raises_mcp

# --- PKCE -----------------------------------------------------------------------------------------


def test_pkce_s256_matches_the_rfc_7636_example() -> None:
    assert (
        s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    )


def test_pkce_verifier_has_the_rfc_shape_and_is_fresh_each_time() -> None:
    allowed = set(string.ascii_letters + string.digits + "-._~")
    pairs = [new_pkce() for _ in range(20)]
    for pkce in pairs:
        assert 43 <= len(pkce.verifier) <= 128
        assert set(pkce.verifier) <= allowed
        assert pkce.method == "S256"
        assert pkce.challenge == s256(pkce.verifier)
        assert "=" not in pkce.challenge
        assert pkce.verifier not in repr(pkce)
    assert len({p.verifier for p in pairs}) == 20
    assert len({new_state() for _ in range(20)}) == 20


# --- WWW-Authenticate -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        (
            'Bearer resource_metadata="https://mcp.example/.well-known/x", scope="a b"',
            {"resource_metadata": "https://mcp.example/.well-known/x", "scope": "a b"},
        ),
        (
            'Basic realm="x", Bearer scope="files:read", error="insufficient_scope"',
            {"scope": "files:read", "error": "insufficient_scope"},
        ),
        (
            'Bearer error="invalid_token", error_description="bad, really \\"bad\\"", scope="a,b"',
            {"error": "invalid_token", "error_description": 'bad, really "bad"', "scope": "a,b"},
        ),
        ("Bearer error=invalid_token, scope=read", {"error": "invalid_token", "scope": "read"}),
        (
            'bearer Scope="x"  ,  RESOURCE_METADATA = "https://m/.wk"',
            {"scope": "x", "resource_metadata": "https://m/.wk"},
        ),
        ('Basic dXNlcjpwYXNz==, Bearer realm="r"', {"realm": "r"}),
        ('DPoP algs="ES256", Bearer scope="s"', {"scope": "s"}),
        ("Bearer", {}),
    ],
)
def test_www_authenticate_bearer_parameters(header: str, expected: dict[str, str]) -> None:
    challenge = bearer_challenge(header)
    assert challenge is not None
    assert challenge.params == expected


def test_www_authenticate_keeps_other_schemes_and_token68() -> None:
    challenges = parse_challenges(["Basic dXNlcjpwYXNz==", 'DPoP algs="ES256 PS256", error="use_dpop_nonce"'])
    assert [c.scheme for c in challenges] == ["basic", "dpop"]
    assert challenges[0].token68 == "dXNlcjpwYXNz=="
    assert challenges[1].params == {"algs": "ES256 PS256", "error": "use_dpop_nonce"}


@pytest.mark.parametrize(
    ("header", "bearer_params"),
    [
        ("", None),
        (",,,", None),
        ('"unterminated', None),
        ("=x", None),
        ('Bearer scope="never closed', {"scope": "never closed"}),
        ("Bearer ,=,", {}),
    ],
)
def test_www_authenticate_never_raises_on_garbage(header: str, bearer_params: dict[str, str] | None) -> None:
    """Garbage yields no challenge or a harmless one, never an exception; a Bearer challenge is
    found only where the header names one, with only the parameters it could read."""
    challenges = parse_challenges(header)
    assert all(c.scheme and c.scheme == c.scheme.lower() and "=" not in c.scheme for c in challenges)
    assert ("bearer" in [c.scheme for c in challenges]) == (bearer_params is not None)
    found = bearer_challenge(header)
    assert (None if found is None else found.params) == bearer_params


def test_www_authenticate_scope_is_normalised_and_empty_scope_is_none() -> None:
    assert bearer_challenge('Bearer scope="  a   b "').scope == "a b"  # type: ignore[union-attr]
    assert bearer_challenge('Bearer scope=""').scope is None  # type: ignore[union-attr]


# --- discovery URLs and resource identity ----------------------------------------------------------


@pytest.mark.parametrize(
    ("server", "resource_metadata", "expected"),
    [
        (
            "https://mcp.example/mcp",
            None,
            [
                "https://mcp.example/.well-known/oauth-protected-resource/mcp",
                "https://mcp.example/.well-known/oauth-protected-resource",
            ],
        ),
        (
            "https://mcp.example/a/b/",
            "https://mcp.example/custom.json",
            [
                "https://mcp.example/custom.json",
                "https://mcp.example/.well-known/oauth-protected-resource/a/b",
                "https://mcp.example/.well-known/oauth-protected-resource",
            ],
        ),
        ("https://MCP.example:443", None, ["https://mcp.example/.well-known/oauth-protected-resource"]),
    ],
)
def test_protected_resource_metadata_url_order(
    server: str, resource_metadata: str | None, expected: list[str]
) -> None:
    assert prm_urls(server, resource_metadata) == expected


@pytest.mark.parametrize(
    ("issuer", "expected"),
    [
        (
            "https://as.example",
            [
                "https://as.example/.well-known/oauth-authorization-server",
                "https://as.example/.well-known/openid-configuration",
            ],
        ),
        (
            "https://as.example/",
            [
                "https://as.example/.well-known/oauth-authorization-server",
                "https://as.example/.well-known/openid-configuration",
            ],
        ),
        (
            "https://as.example/tenant1",
            [
                "https://as.example/.well-known/oauth-authorization-server/tenant1",
                "https://as.example/.well-known/openid-configuration/tenant1",
                "https://as.example/tenant1/.well-known/openid-configuration",
            ],
        ),
    ],
)
def test_authorization_server_metadata_url_order(issuer: str, expected: list[str]) -> None:
    assert as_metadata_urls(issuer) == expected


def test_legacy_servers_look_for_metadata_at_the_origin_only() -> None:
    assert legacy_as_metadata_urls("http://localhost:8000/v1/mcp") == [
        "http://localhost:8000/.well-known/oauth-authorization-server"
    ]


@pytest.mark.parametrize(
    ("url", "canonical"),
    [
        ("HTTPS://MCP.Example.com:443/mcp", "https://mcp.example.com/mcp"),
        ("https://mcp.example.com/", "https://mcp.example.com"),
        ("https://mcp.example.com:8443", "https://mcp.example.com:8443"),
        ("http://localhost:80/mcp?api_key=s3cret#frag", "http://localhost/mcp"),
        ("http://[::1]:3000/mcp", "http://[::1]:3000/mcp"),
    ],
)
def test_canonical_resource(url: str, canonical: str) -> None:
    assert canonical_resource(url) == canonical


@pytest.mark.parametrize(
    ("prm_resource", "server", "ok"),
    [
        ("https://mcp.example/mcp", "https://mcp.example/mcp", True),
        ("https://mcp.example", "https://mcp.example/mcp", True),
        ("https://mcp.example/", "https://mcp.example/mcp", True),
        ("HTTPS://MCP.EXAMPLE:443/mcp", "https://mcp.example/mcp", True),
        ("https://mcp.example/mcp/", "https://mcp.example/mcp", True),
        ("https://mcp.example/api", "https://mcp.example/api/v1/mcp", True),
        ("https://evil.example/mcp", "https://mcp.example/mcp", False),
        ("https://mcp.example/mc", "https://mcp.example/mcp", False),
        ("https://mcp.example/other", "https://mcp.example/mcp", False),
        ("http://mcp.example/mcp", "https://mcp.example/mcp", False),
        ("https://mcp.example:8443/mcp", "https://mcp.example/mcp", False),
        ("https://mcp.example/mcp#x", "https://mcp.example/mcp", False),
        ("not a url", "https://mcp.example/mcp", False),
    ],
)
def test_protected_resource_must_name_this_server(prm_resource: str, server: str, ok: bool) -> None:
    assert resource_matches(prm_resource, server) is ok


@pytest.mark.parametrize(
    ("url", "ok"),
    [
        ("https://as.example/token", True),
        ("http://localhost:9000/token", True),
        ("http://127.0.0.1/token", True),
        ("http://as.example/token", False),
        ("ftp://as.example/token", False),
    ],
)
def test_authorization_server_endpoints_must_be_https_except_on_loopback(url: str, ok: bool) -> None:
    if ok:
        require_secure(url, "token endpoint")
    else:
        with raises_mcp("auth", match="not an https URL"):
            require_secure(url, "token endpoint")


def _metadata(issuer: str, **extra: Any) -> dict[str, Any]:
    return {
        "issuer": issuer,
        "authorization_endpoint": f"{issuer}/authorize",
        "token_endpoint": f"{issuer}/token",
        "code_challenge_methods_supported": ["S256"],
        **extra,
    }


def test_authorization_server_metadata_must_name_the_issuer_it_was_fetched_for() -> None:
    url = "https://as.example/.well-known/oauth-authorization-server"
    server = parse_as_metadata(_metadata("https://as.example"), url=url, expected_issuer="https://as.example")
    assert server.issuer == "https://as.example"
    assert server.supports_pkce_s256()
    with pytest.raises(McpError, match=r"attacker\.example") as info:
        parse_as_metadata(
            _metadata("https://attacker.example"), url=url, expected_issuer="https://as.example"
        )
    assert info.value.kind == "auth"
    with raises_mcp("auth", match="issuer"):
        parse_as_metadata(
            {"authorization_endpoint": "x", "token_endpoint": "y"},
            url=url,
            expected_issuer="https://as.example",
        )


def test_legacy_metadata_issuer_must_be_the_servers_origin_exactly() -> None:
    """RFC 8414 §3.3: the issuer is the one the well-known URL was built from (the origin)."""
    url = "http://localhost:5000/.well-known/oauth-authorization-server"
    legacy = "http://localhost:5000/mcp"
    for issuer in ("http://localhost:5000", "http://localhost:5000/"):
        parse_as_metadata(_metadata(issuer), url=url, expected_issuer=None, legacy_server_url=legacy)
    for issuer in ("http://localhost:5000/oauth", "https://as.example"):  # 0.1.16's backcompat mock: /oauth
        with raises_mcp("auth", match="refusing metadata"):
            parse_as_metadata(_metadata(issuer), url=url, expected_issuer=None, legacy_server_url=legacy)


def test_metadata_without_s256_is_detected() -> None:
    url = "https://as.example/.well-known/openid-configuration"
    meta = _metadata("https://as.example")
    del meta["code_challenge_methods_supported"]
    assert not parse_as_metadata(meta, url=url, expected_issuer="https://as.example").supports_pkce_s256()


# --- scopes and client authentication ------------------------------------------------------------


@pytest.mark.parametrize(
    ("challenge", "prm", "as_scopes", "refresh", "expected"),
    [
        ("mcp:basic", ["mcp:profile"], None, True, "mcp:basic"),
        (None, ["mcp:basic", "mcp:read", "mcp:write"], None, True, "mcp:basic mcp:read mcp:write"),
        (None, None, None, True, None),
        (None, None, ["offline_access"], True, None),
        (None, ["mcp:basic"], ["mcp:basic", "offline_access"], True, "mcp:basic offline_access"),
        (None, ["mcp:basic"], ["mcp:basic", "offline_access"], False, "mcp:basic"),
        (None, ["mcp:basic", "mcp:read"], ["mcp:basic", "mcp:read"], True, "mcp:basic mcp:read"),
        ("a offline_access", None, ["offline_access"], True, "a offline_access"),
    ],
)
def test_scope_selection(
    challenge: str | None,
    prm: list[str] | None,
    as_scopes: list[str] | None,
    refresh: bool,
    expected: str | None,
) -> None:
    got = select_scope(
        challenge_scope=challenge, prm_scopes=prm, as_scopes=as_scopes, wants_refresh_token=refresh
    )
    assert got == expected


def test_step_up_asks_for_the_union_in_first_seen_order() -> None:
    assert (
        union_scopes("mcp:basic offline_access", "mcp:write mcp:basic")
        == "mcp:basic offline_access mcp:write"
    )
    assert union_scopes(None, "a") == "a"
    assert union_scopes(None, None) is None


@pytest.mark.parametrize(
    ("supported", "registration", "with_secret"),
    [
        (None, "client_secret_basic", "client_secret_basic"),
        (["none"], "none", "client_secret_basic"),
        (["client_secret_basic"], "client_secret_basic", "client_secret_basic"),
        (["client_secret_post"], "client_secret_post", "client_secret_post"),
        (["client_secret_post", "none"], "none", "client_secret_post"),
        (["client_secret_post", "client_secret_basic"], "client_secret_basic", "client_secret_basic"),
    ],
)
def test_token_endpoint_auth_method(supported: list[str] | None, registration: str, with_secret: str) -> None:
    assert choose_registration_auth_method(supported) == registration
    assert choose_client_auth_method(supported, has_secret=True, has_private_key=False) == with_secret
    assert choose_client_auth_method(supported, has_secret=False, has_private_key=False) == "none"
    assert choose_client_auth_method(supported, has_secret=True, has_private_key=True) == "private_key_jwt"


# --- the authorization response (RFC 9207 iss, state, error) -------------------------------------

ISSUER = "https://as.example"


@pytest.mark.parametrize(
    ("iss_supported", "params", "outcome"),
    [
        (True, {"iss": ISSUER}, "code"),
        (True, {}, "did not return an iss"),
        (False, {"iss": ISSUER}, "code"),
        (False, {}, "code"),
        (True, {"iss": "https://evil.example"}, "names issuer"),
        (False, {"iss": "https://evil.example"}, "names issuer"),
        (True, {"iss": ISSUER + "/"}, "names issuer"),
        (True, {"iss": "HTTPS://AS.EXAMPLE"}, "names issuer"),
        (True, {"iss": "https://as.example:443"}, "names issuer"),
        (True, {"iss": ISSUER, "state": "other"}, "state"),
        (True, {"iss": ISSUER, "state": None}, "state"),
        (True, {"iss": ISSUER, "code": None, "error": "access_denied"}, "access_denied"),
        (True, {"iss": "https://evil.example", "code": None, "error": "access_denied"}, "names issuer"),
        (True, {"iss": ISSUER, "code": None}, "neither a code nor an error"),
    ],
)
def test_authorization_response_checks(iss_supported: bool, params: dict[str, Any], outcome: str) -> None:
    full = {"code": "the-code", "state": "s1", **params}
    full = {k: v for k, v in full.items() if v is not None}
    if outcome == "code":
        assert (
            authorization_code_from(full, expected_state="s1", issuer=ISSUER, iss_supported=iss_supported)
            == "the-code"
        )
    else:
        with raises_mcp("auth", match=outcome) as info:
            authorization_code_from(full, expected_state="s1", issuer=ISSUER, iss_supported=iss_supported)
        assert "the-code" not in str(info.value)


@pytest.mark.parametrize(
    "value",
    [
        "http://localhost:3000/callback?code=c&state=s&iss=https%3A%2F%2Fas.example",
        "?code=c&state=s&iss=https%3A%2F%2Fas.example",
        "code=c&state=s&iss=https%3A%2F%2Fas.example",
        {"code": "c", "state": "s", "iss": "https://as.example"},
        {"code": ["c"], "state": ("s",), "iss": ["https://as.example"]},
        "http://localhost:3000/callback#code=c&state=s&iss=https%3A%2F%2Fas.example",
    ],
)
def test_on_authorize_may_return_a_url_a_query_or_a_mapping(value: Any) -> None:
    assert parse_redirect(value) == {"code": "c", "state": "s", "iss": "https://as.example"}


# --- records, repr and the stores ------------------------------------------------------------------

SECRETS = ("ACCESS-7f3e", "REFRESH-91ab", "CLIENTSECRET-2c4d", "CODE-55aa")


def test_reprs_never_show_a_secret() -> None:
    tokens = Tokens(access_token=SECRETS[0], refresh_token=SECRETS[1], scope="a", issuer=ISSUER)
    client = ClientInfo(client_id="cid", client_secret=SECRETS[2], issuer=ISSUER)
    auth = OAuth(client_id="cid", client_secret=SECRETS[2])
    shown = " ".join([repr(tokens), str(tokens), repr(client), repr(auth), repr(BearerToken(SECRETS[0]))])
    for secret in SECRETS[:3]:
        assert secret not in shown
    assert "cid" in shown
    assert "<redacted>" in shown


def test_bearer_token_sets_the_header() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers["authorization"])
        return httpx.Response(200)

    with httpx.Client(transport=httpx.MockTransport(handler), auth=BearerToken(" tok ")) as http:
        http.get("https://mcp.example/mcp")
    assert seen == ["Bearer tok"]
    with pytest.raises(ValueError, match="line breaks"):
        BearerToken("a\r\nX-Injected: 1")


@pytest.mark.anyio
async def test_file_token_store_round_trip_with_mode_0600(tmp_path: Any) -> None:
    path = tmp_path / "sub" / "tokens.json"
    store = FileTokenStore(path)
    assert await store.get_tokens("https://mcp.example/mcp") is None
    tokens = Tokens(
        access_token=SECRETS[0],
        refresh_token=SECRETS[1],
        expires_at=1e10,
        scope="a b",
        issuer=ISSUER,
        token_endpoint=f"{ISSUER}/token",
        resource="https://mcp.example/mcp",
        client_id="cid",
    )
    client = ClientInfo(
        client_id="cid",
        client_secret=SECRETS[2],
        token_endpoint_auth_method="client_secret_post",
        redirect_uris=("http://127.0.0.1:1/callback",),
        issuer=ISSUER,
    )
    await store.set_tokens("https://mcp.example/mcp", tokens)
    await store.set_client(ISSUER, client)
    if os.name == "posix":
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert sorted(os.listdir(path.parent)) == ["tokens.json"]  # no temporary file left behind

    again = FileTokenStore(path)  # a new process, as far as the store can tell
    assert await again.get_tokens("https://mcp.example/mcp") == tokens
    assert await again.get_client(ISSUER) == client
    await again.set_tokens("https://mcp.example/mcp", None)
    assert await again.get_tokens("https://mcp.example/mcp") is None
    assert await again.get_client(ISSUER) == client
    assert "tokens.json" in repr(again)


@pytest.mark.anyio
async def test_file_token_store_ignores_a_corrupt_file_and_rewrites_it(tmp_path: Any, caplog: Any) -> None:
    path = tmp_path / "tokens.json"
    path.write_text("{not json " + SECRETS[0])
    os.chmod(path, 0o644)
    store = FileTokenStore(path)
    with caplog.at_level(logging.WARNING, logger="mcp_notebook.auth"):
        assert await store.get_client(ISSUER) is None
        await store.set_client(ISSUER, ClientInfo(client_id="cid"))
    assert SECRETS[0] not in caplog.text
    assert json.loads(path.read_text())["clients"][ISSUER]["client_id"] == "cid"
    if os.name == "posix":
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


# --- the loopback listener, over a real socket -----------------------------------------------------


@pytest.mark.anyio
async def test_loopback_listener_receives_the_redirect_over_a_real_socket() -> None:
    receiver = LoopbackReceiver()
    redirect_uri = await receiver.start()
    assert redirect_uri.startswith("http://127.0.0.1:")
    assert redirect_uri.endswith("/callback")
    statuses: dict[str, int] = {}
    try:
        async with anyio.create_task_group() as tg:
            got: dict[str, str] = {}

            async def wait() -> None:
                got.update(await receiver.receive("the-state", timeout=10))

            tg.start_soon(wait)
            # A speculative connection that never sends anything must not hold up the real redirect.
            idle = await anyio.connect_tcp("127.0.0.1", receiver.port)
            async with httpx.AsyncClient() as http:
                base = redirect_uri.rsplit("/", 1)[0]
                statuses["favicon"] = (await http.get(f"{base}/favicon.ico")).status_code
                statuses["stray"] = (await http.get(f"{redirect_uri}?code=x&state=forged")).status_code
                ok = await http.get(
                    f"{redirect_uri}?code=CODE-55aa&state=the-state&iss=https%3A%2F%2Fas.example"
                )
                statuses["redirect"] = ok.status_code
                assert "Authorization complete" in ok.text
                assert "CODE-55aa" not in ok.text
            await idle.aclose()
    finally:
        await receiver.aclose()
    assert statuses == {"favicon": 404, "stray": 400, "redirect": 200}
    assert got == {"code": "CODE-55aa", "state": "the-state", "iss": "https://as.example"}


@pytest.mark.anyio
async def test_loopback_listener_times_out_with_an_actionable_error() -> None:
    receiver = LoopbackReceiver()
    await receiver.start()
    try:
        with pytest.raises(McpError, match="no authorization redirect arrived") as info:
            await receiver.receive("s", timeout=0.2)
        assert info.value.kind == "auth"
    finally:
        await receiver.aclose()


# --- the whole flow, against an in-process authorization server and MCP server --------------------

MCP = "https://mcp.example/mcp"
REDIRECT = "http://localhost:3000/callback"


class World:
    """An MCP server protected by an authorization server, as one httpx handler with knobs."""

    def __init__(self) -> None:
        self.issuer = ISSUER
        self.prm_scopes: list[str] | None = ["mcp:basic"]
        self.as_scopes: list[str] | None = ["mcp:basic", "mcp:write", "offline_access"]
        self.auth_methods = ["client_secret_post"]
        self.iss_supported = True
        self.expires_in = 3600
        self.required: Callable[[dict[str, Any]], set[str]] = lambda body: {"mcp:basic"}
        self.tokens: dict[str, set[str]] = {}  # access token -> granted scopes
        self.refresh_tokens: dict[str, set[str]] = {}
        self.codes: dict[str, dict[str, str]] = {}
        self.log: list[str] = []
        self.authorize_urls: list[str] = []
        self.assertion = "WORKLOAD-JWT-77"
        self.dpop_nonce: str | None = None  # when set, the MCP server demands DPoP proofs with this nonce
        self.proofs: list[dict[str, Any]] = []
        self.token_forms: list[dict[str, str]] = []
        self.registrations: list[dict[str, Any]] = []
        self.counter = 0

    def next(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}-{self.counter}"

    async def on_authorize(self, url: str) -> str:
        """The user's browser: approve at once and come back with code, state and iss."""
        self.authorize_urls.append(url)
        q = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
        code = self.next("CODE")
        self.codes[code] = q
        iss = f"&iss={self.issuer}" if self.iss_supported else ""
        return f"{q['redirect_uri']}?code={code}&state={q['state']}{iss}"

    def handler(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url).split("?")[0]
        self.log.append(f"{request.method} {url}")
        if url == "https://mcp.example/.well-known/oauth-protected-resource/mcp":
            prm: dict[str, Any] = {"resource": MCP, "authorization_servers": [self.issuer]}
            if self.prm_scopes is not None:
                prm["scopes_supported"] = self.prm_scopes
            return httpx.Response(200, json=prm)
        if url == f"{self.issuer}/.well-known/oauth-authorization-server":
            meta = _metadata(
                self.issuer,
                registration_endpoint=f"{self.issuer}/register",
                token_endpoint_auth_methods_supported=self.auth_methods,
                authorization_response_iss_parameter_supported=self.iss_supported,
            )
            if self.as_scopes is not None:
                meta["scopes_supported"] = self.as_scopes
            return httpx.Response(200, json=meta)
        if url == f"{self.issuer}/register":
            body = json.loads(request.content)
            self.registrations.append(body)
            return httpx.Response(
                201,
                json={
                    "client_id": self.next("client"),
                    "client_secret": SECRETS[2],
                    "token_endpoint_auth_method": body["token_endpoint_auth_method"],
                    "redirect_uris": body["redirect_uris"],
                },
            )
        if url == f"{self.issuer}/token":
            return self.token(request)
        if url == "https://idp.example/token":
            form = {k: v[0] for k, v in parse_qs(request.content.decode()).items()}
            self.token_forms.append(form)
            if form.get("subject_token") != "ID-TOKEN-3" or form.get("audience") != self.issuer:
                return httpx.Response(400, json={"error": "invalid_grant"})
            jag = "ID-JAG-9"
            return httpx.Response(
                200, json={"access_token": jag, "issued_token_type": ID_JAG, "token_type": "N_A"}
            )
        if url == MCP:
            return self.mcp(request)
        return httpx.Response(404)

    def token(self, request: httpx.Request) -> httpx.Response:
        form = {k: v[0] for k, v in parse_qs(request.content.decode()).items()}
        self.token_forms.append(form)
        if form["grant_type"] == "authorization_code":
            asked = self.codes.pop(form["code"])
            if (
                s256(form["code_verifier"]) != asked["code_challenge"]
                or form["resource"] != asked["resource"]
            ):
                return httpx.Response(400, json={"error": "invalid_grant"})
            scopes = set(asked.get("scope", "").split())
        elif form["grant_type"] == "refresh_token":
            if form["refresh_token"] not in self.refresh_tokens:
                return httpx.Response(400, json={"error": "invalid_grant", "error_description": "revoked"})
            scopes = self.refresh_tokens.pop(form["refresh_token"])
        elif form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer":
            if form["assertion"] not in (self.assertion, "ID-JAG-9"):
                return httpx.Response(
                    400, json={"error": "invalid_grant", "error_description": form["assertion"]}
                )
            scopes = set(form.get("scope", "").split())
        elif form["grant_type"] == "client_credentials":
            auth = base64.b64decode(request.headers["authorization"].split()[1]).decode()
            if auth != f"cc-client:{SECRETS[2]}":
                return httpx.Response(401, json={"error": "invalid_client"})
            scopes = set(form.get("scope", "").split())
        else:
            return httpx.Response(400, json={"error": "unsupported_grant_type"})
        access, refresh = self.next("ACCESS"), self.next("REFRESH")
        self.tokens[access] = scopes
        self.refresh_tokens[refresh] = scopes
        dpop = "dpop" in request.headers
        if dpop:
            self.proofs.append(_jwt_parts(request.headers["dpop"]))
        return httpx.Response(
            200,
            json={
                "access_token": access,
                "token_type": "DPoP" if dpop else "bearer",
                "expires_in": self.expires_in,
                "refresh_token": refresh,
                "scope": " ".join(sorted(scopes)),
            },
        )

    def mcp(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        metadata = "https://mcp.example/.well-known/oauth-protected-resource/mcp"
        header = request.headers.get("authorization", "")
        token = header.removeprefix("Bearer ").removeprefix("DPoP ")
        if self.dpop_nonce is not None and token in self.tokens:
            proof = _jwt_parts(request.headers["dpop"])
            self.proofs.append(proof)
            if not header.startswith("DPoP ") or proof["claims"].get("nonce") != self.dpop_nonce:
                challenge = 'DPoP error="use_dpop_nonce"'
                return httpx.Response(
                    401, headers={"WWW-Authenticate": challenge, "DPoP-Nonce": self.dpop_nonce}
                )
        if token not in self.tokens:
            return httpx.Response(401, headers={"WWW-Authenticate": f'Bearer resource_metadata="{metadata}"'})
        needed = self.required(body)
        if not needed <= self.tokens[token]:
            scope = " ".join(sorted(needed))
            challenge = f'Bearer error="insufficient_scope", scope="{scope}", resource_metadata="{metadata}"'
            return httpx.Response(403, headers={"WWW-Authenticate": challenge})
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": body["id"], "result": {"ok": True}})


ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"


def _jwt_parts(token: str) -> dict[str, Any]:
    def unb64(part: str) -> Any:
        return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))

    header, claims, _ = token.split(".")
    return {"header": unb64(header), "claims": unb64(claims), "jwt": token}


def _client(world: World, auth: httpx.Auth) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.MockTransport(world.handler), auth=auth)


async def _call(http: httpx.AsyncClient, method: str = "tools/list") -> httpx.Response:
    return await http.post(MCP, json={"jsonrpc": "2.0", "id": 1, "method": method})


def _oauth(world: World, **kwargs: Any) -> OAuth:
    return OAuth(redirect_uri=REDIRECT, on_authorize=world.on_authorize, **kwargs)


@pytest.mark.anyio
async def test_a_401_runs_the_whole_authorization_and_the_request_succeeds(caplog: Any) -> None:
    world = World()
    store = MemoryTokenStore()
    with caplog.at_level(logging.DEBUG, logger="mcp_notebook.auth"):
        async with _client(world, _oauth(world, store=store)) as http:
            response = await _call(http)
            assert response.status_code == 200
            assert (await _call(http)).status_code == 200  # the token is reused: no second authorization
    assert len(world.authorize_urls) == 1
    query = parse_qs(urlsplit(world.authorize_urls[0]).query)
    assert query["resource"] == [MCP]
    assert query["code_challenge_method"] == ["S256"]
    assert query["scope"] == ["mcp:basic offline_access"]
    assert world.registrations[0]["application_type"] == "native"
    assert world.registrations[0]["grant_types"] == ["authorization_code", "refresh_token"]
    assert world.token_forms[0]["client_secret"] == SECRETS[2]  # client_secret_post, as registered
    assert world.log[:5] == [
        f"POST {MCP}",
        "GET https://mcp.example/.well-known/oauth-protected-resource/mcp",
        "GET https://as.example/.well-known/oauth-authorization-server",
        "POST https://as.example/register",
        "POST https://as.example/token",
    ]
    stored = await store.get_tokens(MCP)
    assert stored is not None
    assert stored.issuer == ISSUER
    assert stored.resource == MCP
    assert (await store.get_client(ISSUER)) is not None
    for secret in [stored.access_token, stored.refresh_token or "", SECRETS[2], "CODE-"]:
        assert secret not in caplog.text


@pytest.mark.anyio
async def test_by_default_the_url_is_printed_and_the_redirect_arrives_on_loopback(capsys: Any) -> None:
    world = World()
    async with _client(world, OAuth()) as http, anyio.create_task_group() as tg:

        async def browser() -> None:
            # The user: reads the printed URL, approves, and the browser follows the redirect.
            printed = ""
            for _ in range(500):  # poll what the user sees; nothing else signals that the URL is out
                printed += capsys.readouterr().err
                if "Waiting for the redirect" in printed:
                    break
                await anyio.sleep(0.01)
            url = next(line.strip() for line in printed.splitlines() if line.strip().startswith("https://"))
            redirect = await world.on_authorize(url)
            async with httpx.AsyncClient() as real:
                assert (await real.get(redirect)).status_code == 200

        tg.start_soon(browser)
        with anyio.fail_after(10):
            assert (await _call(http)).status_code == 200
    redirect_uri = parse_qs(urlsplit(world.authorize_urls[0]).query)["redirect_uri"][0]
    assert redirect_uri.startswith("http://127.0.0.1:")
    assert redirect_uri.endswith("/callback")
    assert world.registrations[0]["redirect_uris"] == [redirect_uri]


@pytest.mark.anyio
async def test_a_token_about_to_expire_is_refreshed_before_the_request() -> None:
    world = World()
    world.expires_in = 5  # inside the refresh margin: every request refreshes first
    async with _client(world, _oauth(world)) as http:
        assert (await _call(http)).status_code == 200
        assert (await _call(http)).status_code == 200
    grants = [form["grant_type"] for form in world.token_forms]
    assert grants == ["authorization_code", "refresh_token"]
    assert world.token_forms[1]["resource"] == MCP
    assert len(world.authorize_urls) == 1


@pytest.mark.anyio
async def test_a_revoked_token_and_refresh_token_lead_to_a_new_authorization() -> None:
    world = World()
    async with _client(world, _oauth(world)) as http:
        assert (await _call(http)).status_code == 200
        world.tokens.clear()
        world.refresh_tokens.clear()
        assert (await _call(http)).status_code == 200
    assert [f["grant_type"] for f in world.token_forms] == [
        "authorization_code",
        "refresh_token",
        "authorization_code",
    ]
    assert len(world.authorize_urls) == 2
    assert len(world.registrations) == 1  # the registration is kept


@pytest.mark.anyio
async def test_insufficient_scope_steps_up_with_the_union_of_scopes() -> None:
    world = World()
    world.required = lambda body: (
        {"mcp:basic", "mcp:write"} if body["method"] == "tools/call" else {"mcp:basic"}
    )
    async with _client(world, _oauth(world)) as http:
        assert (await _call(http, "tools/list")).status_code == 200
        assert (await _call(http, "tools/call")).status_code == 200
    scopes = [parse_qs(urlsplit(u).query)["scope"][0] for u in world.authorize_urls]
    assert scopes == ["mcp:basic offline_access", "mcp:basic offline_access mcp:write"]


@pytest.mark.anyio
async def test_insufficient_scope_that_the_token_already_has_is_not_retried_forever() -> None:
    world = World()
    world.required = lambda body: {"mcp:admin"}
    world.prm_scopes = ["mcp:admin"]

    def never_enough(request: httpx.Request) -> httpx.Response:
        response = world.handler(request)
        if str(request.url) == MCP and response.status_code == 200:
            challenge = 'Bearer error="insufficient_scope", scope="mcp:admin"'
            return httpx.Response(403, headers={"WWW-Authenticate": challenge})
        return response

    async with httpx.AsyncClient(transport=httpx.MockTransport(never_enough), auth=_oauth(world)) as http:
        with pytest.raises(McpError, match="already carries") as info:
            await _call(http)
    assert info.value.kind == "auth"
    assert len(world.authorize_urls) == 1


@pytest.mark.anyio
async def test_concurrent_requests_share_one_authorization() -> None:
    world = World()
    responses: list[int] = []
    async with _client(world, _oauth(world)) as http:

        async def one() -> None:
            responses.append((await _call(http)).status_code)

        async with anyio.create_task_group() as tg:
            for _ in range(5):
                tg.start_soon(one)
    assert responses == [200] * 5
    assert len(world.authorize_urls) == 1
    assert len(world.registrations) == 1
    assert len(world.token_forms) == 1  # the others found the new token and did not even refresh


@pytest.mark.anyio
async def test_a_new_authorization_server_means_a_new_registration() -> None:
    world = World()
    store = MemoryTokenStore()
    async with _client(world, _oauth(world, store=store)) as http:
        assert (await _call(http)).status_code == 200
        world.issuer = "https://as2.example"  # the PRM now names another authorization server
        world.tokens.clear()
        assert (await _call(http)).status_code == 200
    assert len(world.registrations) == 2
    first_client = (await store.get_client(ISSUER)).client_id  # type: ignore[union-attr]
    second = [f for f in world.token_forms if f["grant_type"] == "authorization_code"][1]
    assert second["client_id"] != first_client
    # The old authorization server's tokens are dropped, not refreshed there.
    assert world.log.count("POST https://as.example/token") == 1
    assert not any(f["grant_type"] == "refresh_token" for f in world.token_forms)


@pytest.mark.anyio
async def test_a_wrong_iss_refuses_the_code_before_the_token_request() -> None:
    world = World()

    async def mixed_up(url: str) -> str:
        return (await world.on_authorize(url)).replace(f"iss={ISSUER}", "iss=https://evil.example")

    auth = OAuth(redirect_uri=REDIRECT, on_authorize=mixed_up)
    async with _client(world, auth) as http:
        with raises_mcp("auth", match="mix-up"):
            await _call(http)
    assert world.token_forms == []


@pytest.mark.anyio
async def test_a_sync_on_authorize_runs_in_a_worker_thread() -> None:
    world = World()

    def blocking(url: str) -> dict[str, str]:
        time.sleep(0.01)  # a blocking callback (input(), a GUI) must not stall the event loop
        return parse_redirect(anyio.from_thread.run(world.on_authorize, url))

    async with _client(world, OAuth(redirect_uri=REDIRECT, on_authorize=blocking)) as http:
        assert (await _call(http)).status_code == 200


@pytest.mark.anyio
async def test_tokens_in_a_file_store_survive_a_new_oauth_object(tmp_path: Any) -> None:
    world = World()
    path = tmp_path / "tokens.json"
    async with _client(world, _oauth(world, store=FileTokenStore(path))) as http:
        assert (await _call(http)).status_code == 200
    async with _client(world, _oauth(world, store=FileTokenStore(path))) as http:
        assert (await _call(http)).status_code == 200
    assert len(world.authorize_urls) == 1
    text = path.read_text()
    assert ISSUER in text


@pytest.mark.anyio
async def test_client_credentials_grant_uses_basic_auth_and_no_browser() -> None:
    world = World()
    world.auth_methods = ["client_secret_basic"]
    auth = OAuth(grant="client_credentials", client_id="cc-client", client_secret=SECRETS[2])
    async with _client(world, auth) as http:
        assert (await _call(http)).status_code == 200
    assert world.authorize_urls == []
    assert world.registrations == []
    form = world.token_forms[0]
    assert form["grant_type"] == "client_credentials"
    assert form["resource"] == MCP
    assert form["scope"] == "mcp:basic"  # offline_access is for refresh tokens: not for this grant
    assert "client_secret" not in form


@pytest.mark.anyio
async def test_the_token_is_never_sent_to_another_origin() -> None:
    world = World()
    seen: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.host == "elsewhere.example":
            seen.append(request.headers.get("authorization"))
            return httpx.Response(200)
        return world.handler(request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler), auth=_oauth(world)) as http:
        assert (await _call(http)).status_code == 200
        await http.get("https://elsewhere.example/x")
    assert seen == [None]


@pytest.mark.anyio
async def test_preregistered_credentials_are_not_taken_to_another_authorization_server() -> None:
    world = World()
    auth = _oauth(world, client_id="pre", client_secret=SECRETS[2], issuer="https://other-as.example")
    async with _client(world, auth) as http:
        with raises_mcp("auth", match=r"other-as\.example") as info:
            await _call(http)
    assert SECRETS[2] not in str(info.value)
    assert world.authorize_urls == []
    assert world.registrations == []


@pytest.mark.anyio
async def test_a_2025_03_26_server_without_metadata_uses_the_default_endpoints() -> None:
    legacy = "http://localhost:8000/mcp"
    seen: list[str] = []
    codes: dict[str, str] = {}

    def handler(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        seen.append(f"{request.method} {path}")
        if path == "/mcp":
            if request.headers.get("authorization") == "Bearer LEGACY-TOKEN":
                return httpx.Response(200, json={"jsonrpc": "2.0", "id": 1, "result": {}})
            return httpx.Response(401)  # 2025-03-26 servers need not send WWW-Authenticate
        if path == "/register":
            return httpx.Response(201, json={"client_id": "legacy-client"})
        if path == "/token":
            form = parse_qs(request.content.decode())
            assert s256(form["code_verifier"][0]) == codes[form["code"][0]]
            return httpx.Response(200, json={"access_token": "LEGACY-TOKEN", "token_type": "Bearer"})
        return httpx.Response(404)

    async def approve(url: str) -> str:
        assert url.startswith("http://localhost:8000/authorize?")
        q = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
        codes["C1"] = q["code_challenge"]
        assert q["resource"] == legacy
        return f"{REDIRECT}?code=C1&state={q['state']}"

    auth = OAuth(redirect_uri=REDIRECT, on_authorize=approve)
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler), auth=auth) as http:
        response = await http.post(legacy, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert response.status_code == 200
    assert seen == [
        "POST /mcp",
        "GET /.well-known/oauth-protected-resource/mcp",
        "GET /.well-known/oauth-protected-resource",
        "GET /.well-known/oauth-authorization-server",
        "POST /register",
        "POST /token",
        "POST /mcp",
    ]


@pytest.mark.anyio
async def test_a_401_that_asks_for_other_credentials_is_left_alone() -> None:
    world = World()

    def basic_only(request: httpx.Request) -> httpx.Response:
        world.log.append(str(request.url))
        return httpx.Response(401, headers={"WWW-Authenticate": 'Basic realm="api"'})

    async with httpx.AsyncClient(transport=httpx.MockTransport(basic_only), auth=_oauth(world)) as http:
        assert (await _call(http)).status_code == 401
    assert world.log == [MCP]  # no discovery, no browser


@pytest.mark.anyio
async def test_step_ups_stop_at_the_limit() -> None:
    world = World()
    asked = iter(range(100))
    world.required = lambda body: {f"scope{next(asked)}"}  # always one more
    async with _client(world, _oauth(world, max_step_ups=2)) as http:
        with pytest.raises(McpError, match="after 2 step-up") as info:
            await _call(http)
    assert info.value.kind == "auth"
    assert len(world.authorize_urls) == 3  # the first authorization and two step-ups


@pytest.mark.anyio
async def test_a_token_error_that_echoes_a_secret_does_not_repeat_it() -> None:
    world = World()

    def echo(request: httpx.Request) -> httpx.Response:
        if str(request.url) == f"{ISSUER}/token":
            form = {k: v[0] for k, v in parse_qs(request.content.decode()).items()}
            text = f"bad code {form['code']} for verifier {form['code_verifier']} of {form['client_secret']}"
            return httpx.Response(400, json={"error": "invalid_grant", "error_description": text})
        return world.handler(request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(echo), auth=_oauth(world)) as http:
        with raises_mcp("auth", match="invalid_grant") as info:
            await _call(http)
    message = str(info.value)
    assert "CODE-" not in message
    assert SECRETS[2] not in message
    assert message.count("<redacted>") == 3


@pytest.mark.anyio
async def test_jwt_bearer_grant_with_an_assertion_provider() -> None:
    world = World()
    contexts: list[Any] = []

    def provider(context: Any) -> str:
        contexts.append(context)
        return world.assertion

    auth = OAuth(grant="jwt_bearer", client_id="workload", assertion=provider)
    async with _client(world, auth) as http:
        assert (await _call(http)).status_code == 200
    assert contexts[0].issuer == ISSUER  # the audience a workload token must be minted for
    assert contexts[0].resource == MCP
    form = world.token_forms[0]
    assert form["grant_type"] == "urn:ietf:params:oauth:grant-type:jwt-bearer"
    assert form["client_id"] == "workload"
    assert world.authorize_urls == []


@pytest.mark.anyio
async def test_a_refused_assertion_is_reported_not_retried() -> None:
    world = World()
    auth = OAuth(grant="jwt_bearer", assertion="EXPIRED-JWT-1")
    async with _client(world, auth) as http:
        with raises_mcp("auth", match="invalid_grant") as info:
            await _call(http)
    assert "EXPIRED-JWT-1" not in str(info.value)
    assert len(world.token_forms) == 1


@pytest.mark.anyio
async def test_enterprise_managed_authorization_exchanges_the_id_token_first() -> None:
    from mcp_notebook.auth import IdpTokenExchange

    world = World()
    world.auth_methods = ["client_secret_basic"]
    exchange = IdpTokenExchange("https://idp.example/token", id_token="ID-TOKEN-3", client_id="idp-client")
    auth = OAuth(grant="jwt_bearer", client_id="cc-client", client_secret=SECRETS[2], assertion=exchange)
    async with _client(world, auth) as http:
        assert (await _call(http)).status_code == 200
    idp, asr = world.token_forms
    assert idp["grant_type"] == "urn:ietf:params:oauth:grant-type:token-exchange"
    assert idp["requested_token_type"] == ID_JAG
    assert idp["resource"] == MCP
    assert asr["assertion"] == "ID-JAG-9"
    assert "ID-TOKEN-3" not in repr(exchange)


@pytest.mark.anyio
async def test_dpop_binds_the_token_and_answers_the_servers_nonce() -> None:
    pytest.importorskip("cryptography")
    world = World()
    world.dpop_nonce = "nonce-1"
    async with _client(world, _oauth(world, dpop=True)) as http:
        assert (await _call(http)).status_code == 200
        assert (await _call(http)).status_code == 200
    token_proof, *resource_proofs = world.proofs
    assert token_proof["header"]["typ"] == "dpop+jwt"
    assert token_proof["header"]["alg"] == "ES256"
    assert "d" not in token_proof["header"]["jwk"]  # never the private key
    assert token_proof["claims"]["htm"] == "POST"
    assert token_proof["claims"]["htu"] == f"{ISSUER}/token"
    # first resource request without the nonce is refused, the retry and the next request carry it
    assert [p["claims"].get("nonce") for p in resource_proofs] == [None, "nonce-1", "nonce-1"]
    assert all(p["claims"]["htu"] == MCP and "ath" in p["claims"] for p in resource_proofs)
    assert len({p["claims"]["jti"] for p in world.proofs}) == len(world.proofs)  # a fresh proof each time


def test_dpop_proof_signature_verifies_against_its_own_jwk() -> None:
    pytest.importorskip("cryptography")
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

    from mcp_notebook.auth._dpop import DpopKey

    key = DpopKey()
    proof = key.proof("post", "https://mcp.example/mcp?x=1#f", access_token="tok", nonce="n")
    parts = _jwt_parts(proof)
    claims = parts["claims"]
    assert claims["htm"] == "POST"
    assert claims["htu"] == "https://mcp.example/mcp"
    assert claims["ath"] == base64.urlsafe_b64encode(hashlib.sha256(b"tok").digest()).rstrip(b"=").decode()
    jwk = parts["header"]["jwk"]

    def num(v: str) -> int:
        return int.from_bytes(base64.urlsafe_b64decode(v + "=" * (-len(v) % 4)), "big")

    public = ec.EllipticCurvePublicNumbers(num(jwk["x"]), num(jwk["y"]), ec.SECP256R1()).public_key()
    head, body, sig = proof.split(".")
    raw = base64.urlsafe_b64decode(sig + "=" * (-len(sig) % 4))
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    public.verify(der, f"{head}.{body}".encode(), ec.ECDSA(hashes.SHA256()))
    assert "jkt=" in repr(key)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"client_secret": "x"}, "client_id"),
        ({"grant": "client_credentials", "client_id": "c"}, "client_secret"),
        ({"on_authorize": lambda url: url}, "redirect_uri"),
        ({"redirect_uri": "https://app.example/callback"}, "loopback"),
        ({"client_metadata_url": "http://app.example/client.json"}, "https"),
        ({"grant": "password"}, "grant"),
        ({"grant": "jwt_bearer"}, "assertion"),
        ({"assertion": "x"}, "jwt_bearer"),
    ],
)
def test_configuration_mistakes_are_caught_at_construction(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        OAuth(**kwargs)


def test_private_key_jwt_assertion_verifies() -> None:
    pytest.importorskip("cryptography")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

    from mcp_notebook.auth._jwt import client_assertion

    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    token = client_assertion(pem, client_id="cid", audience=ISSUER, now=1_000_000)
    header_b64, claims_b64, sig_b64 = token.split(".")

    def unb64(part: str) -> bytes:
        return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))

    header, claims = json.loads(unb64(header_b64)), json.loads(unb64(claims_b64))
    assert header == {"alg": "ES256", "typ": "JWT"}
    assert claims["iss"] == claims["sub"] == "cid"
    assert claims["aud"] == ISSUER
    assert claims["exp"] - claims["iat"] == 300
    raw = unb64(sig_b64)
    signature = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    key.public_key().verify(signature, f"{header_b64}.{claims_b64}".encode(), ec.ECDSA(hashes.SHA256()))
    with raises_mcp("auth", match="does not fit"):
        client_assertion(pem, client_id="cid", audience=ISSUER, algorithm="RS256")
    with raises_mcp("auth", match="PEM") as info:
        client_assertion(
            "-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----", client_id="c", audience="a"
        )
    assert "nope" not in str(info.value)


def test_importing_auth_stays_light() -> None:
    # The auth package must not pull in optional heavy dependencies at import time.
    code = "import sys, mcp_notebook.auth; print('cryptography' in sys.modules)"
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# --- a sign-in in the middle of a session, under the client's request deadlines ------------------


def _json_rpc_server(world: World) -> Callable[[httpx.Request], httpx.Response]:
    """The World's protected MCP endpoint, answering like a (stateless, legacy-era) MCP server."""

    def handler(request: httpx.Request) -> httpx.Response:
        if str(request.url) != MCP:
            return world.handler(request)
        if request.method == "GET":
            return httpx.Response(405)  # no standalone stream
        body = json.loads(request.content)
        if "id" not in body:  # a notification: World.mcp answers requests only
            token = request.headers.get("authorization", "").removeprefix("Bearer ")
            return httpx.Response(202 if token in world.tokens else 401)
        response = world.handler(request)
        if response.status_code != 200:
            return response
        method = body["method"]
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": body["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "protected", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": "ok"}]}
        else:
            return httpx.Response(200, json={"jsonrpc": "2.0", "id": body["id"], "error": {"code": -32601}})
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": body["id"], "result": result})

    return handler


@pytest.mark.anyio
async def test_a_sign_in_mid_session_waits_for_the_person_not_for_the_request_deadline() -> None:
    """The tokens are revoked mid-session; signing in again takes longer than a request deadline.

    The call that met the 401 and the calls that queued behind the sign-in all wait for the
    person (bounded by authorize_timeout), then succeed with the new token.
    """
    from mcp_notebook import Client

    world = World()
    person_seconds = 0.0

    async def on_authorize(url: str) -> str:
        await anyio.sleep(person_seconds)  # a person reading the page and clicking "Allow"
        return await world.on_authorize(url)

    oauth = OAuth(redirect_uri=REDIRECT, on_authorize=on_authorize, authorize_timeout=30)
    http = httpx.AsyncClient(transport=httpx.MockTransport(_json_rpc_server(world)))
    texts: list[str] = []
    async with http, Client(MCP, auth=oauth, http_client=http, protocol="legacy", timeout=0.5) as client:
        assert (await client.call_tool("echo")).text == "ok"
        world.tokens.clear()  # revoked, refresh token included: only a new sign-in helps
        world.refresh_tokens.clear()
        person_seconds = 1.5  # three times the request deadline

        async def call() -> None:
            texts.append((await client.call_tool("echo")).text)

        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                for _ in range(3):
                    tg.start_soon(call)
        assert client.stats.timeouts == 0
        assert (await client.call_tool("echo")).text == "ok"  # deadlines apply again afterwards
    assert texts == ["ok"] * 3
    assert len(world.authorize_urls) == 2  # one sign-in at connect, one mid-session for all three
