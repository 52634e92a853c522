"""The HTTP test peers start, answer raw HTTP as their era says, and stop without leaking a process.

No client of ours is involved: each check is a hand-written httpx request, so these tests pin
down what the peers put on the wire for the HTTP transport's tests to rely on.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from tests.http_peers import (
    HTTP_PEERS,
    FaultPeer,
    HttpPeer,
    fault_http,
    fault_server_fixture,  # noqa: F401  (the fault_server fixture)
    http_peer_fixture,  # noqa: F401  (the http_peer fixture)
)

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
MODERN_CODES = {-32020, -32021, -32022}
ACCEPT = "application/json, text/event-stream"

pytestmark = pytest.mark.usefixtures("no_leaked_processes")


# ------------------------------------------------------------------------ helpers


def sse_events(text: str) -> list[dict[str, str]]:
    """Parse an SSE body into events (``event``, ``data``, ``id``, ``retry`` as present)."""
    events, current = [], {}
    for line in text.splitlines():
        if not line:
            if current:
                events.append(current)
            current = {}
            continue
        if line.startswith(":"):
            continue
        key, _, value = line.partition(":")
        value = value.removeprefix(" ")
        current[key] = current[key] + "\n" + value if key == "data" and key in current else value
    if current:
        events.append(current)
    return events


def messages(response: httpx.Response) -> list[dict[str, Any]]:
    """The JSON-RPC messages in a JSON or SSE response body."""
    content_type = response.headers.get("content-type", "")
    if content_type.startswith("application/json"):
        return [response.json()]
    assert content_type.startswith("text/event-stream"), content_type
    return [json.loads(e["data"]) for e in sse_events(response.text) if e.get("data")]


def only_message(response: httpx.Response) -> dict[str, Any]:
    found = [m for m in messages(response) if "id" in m]
    assert len(found) == 1, found
    return found[0]


def initialize(version: str = LEGACY, request_id: int = 1) -> dict[str, Any]:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "smoke", "version": "0"}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


def modern_request(
    method: str, params: dict[str, Any] | None = None, request_id: int = 1
) -> tuple[dict[str, Any], dict[str, str]]:
    """A 2026-07-28 request and its routing headers."""
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "smoke", "version": "0"},
    }
    body = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {**(params or {}), "_meta": meta}}
    headers = {"mcp-protocol-version": MODERN, "mcp-method": method}
    if method == "tools/call":
        headers["mcp-name"] = str((params or {})["name"])
    return body, headers


def post(url: str, body: dict[str, Any], **headers: str) -> httpx.Response:
    all_headers = {"accept": ACCEPT, **{k.replace("_", "-"): v for k, v in headers.items()}}
    return httpx.post(url, json=body, headers=all_headers, timeout=15)


def discover(url: str) -> httpx.Response:
    body, headers = modern_request("server/discover")
    return httpx.post(url, json=body, headers={"accept": ACCEPT, **headers}, timeout=15)


def assert_modern_discover(response: httpx.Response) -> None:
    assert response.status_code == 200, response.text
    result = only_message(response)["result"]
    assert MODERN in result["supportedVersions"]
    assert result["resultType"] == "complete"
    assert "tools" in result["capabilities"]


def assert_legacy_refusal(response: httpx.Response) -> None:
    """What a 2025-11-25 server answers a modern probe: a 4xx whose body is no modern error."""
    assert 400 <= response.status_code < 500, response.status_code
    if response.headers.get("content-type", "").startswith("application/json"):
        assert response.json().get("error", {}).get("code") not in MODERN_CODES, response.text


def legacy_session(url: str) -> tuple[str, dict[str, Any]]:
    response = post(url, initialize())
    assert response.status_code == 200, response.text
    result = only_message(response)["result"]
    assert result["protocolVersion"] == LEGACY
    session = response.headers["mcp-session-id"]
    assert (
        post(
            url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, mcp_session_id=session
        ).status_code
        == 202
    )
    return session, result


def sse_initialize(url: str) -> dict[str, Any]:
    """2024-11-05 HTTP+SSE: GET the stream, POST initialize to its endpoint, read the answer."""
    with (
        httpx.Client(timeout=15) as client,
        client.stream("GET", url, headers={"accept": "text/event-stream"}) as stream,
    ):
        assert stream.status_code == 200
        assert stream.headers["content-type"].startswith("text/event-stream")
        lines = stream.iter_lines()
        event: dict[str, str] = {}
        endpoint = None
        for line in lines:
            if line:
                key, _, value = line.partition(":")
                event[key] = value.removeprefix(" ")
                continue
            if event.get("event") == "endpoint":
                endpoint = str(httpx.URL(url).join(event["data"]))
                answer = client.post(endpoint, json=initialize("2024-11-05"), headers={"accept": ACCEPT})
                assert answer.status_code == 202, answer.text
            elif event.get("event") == "message":
                message = json.loads(event["data"])
                if message.get("id") == 1:
                    return message
            event = {}
    raise AssertionError(f"no initialize answer on the SSE stream (endpoint: {endpoint})")


# -------------------------------------------------------------------------- peers


def test_every_named_peer_is_covered() -> None:
    assert set(HTTP_PEERS) == {*MODERN_PEERS, *LEGACY_PEERS, *SSE_PEERS}


MODERN_PEERS = ["sdk-modern", "sdk-modern-json", "fault-modern", "tasks"]
LEGACY_PEERS = [
    "sdk-legacy",
    "sdk-legacy-json",
    "sdk-legacy-stateless",
    "everything-streamableHttp",
    "fault",
]
SSE_PEERS = ["sdk-sse", "everything-sse"]


@pytest.mark.parametrize("http_peer", MODERN_PEERS, indirect=True)
def test_modern_peer_answers_server_discover(http_peer: HttpPeer) -> None:
    response = discover(http_peer.url)
    assert_modern_discover(response)
    expected = "application/json" if http_peer.name == "sdk-modern-json" else None
    if expected:
        assert response.headers["content-type"].startswith(expected)
    if http_peer.name.startswith("fault"):
        assert response.headers["content-type"].startswith("text/event-stream")


@pytest.mark.parametrize("http_peer", LEGACY_PEERS, indirect=True)
def test_legacy_peer_refuses_discover_and_answers_initialize(http_peer: HttpPeer) -> None:
    assert_legacy_refusal(discover(http_peer.url))
    response = post(http_peer.url, initialize())
    assert response.status_code == 200, response.text
    result = only_message(response)["result"]
    assert result["protocolVersion"] == LEGACY
    assert result["serverInfo"]["name"]
    assert "tools" in result["capabilities"]
    if http_peer.name == "sdk-legacy-stateless":
        assert "mcp-session-id" not in response.headers
    else:
        assert response.headers["mcp-session-id"]
    if http_peer.name == "sdk-legacy-json":
        assert response.headers["content-type"].startswith("application/json")


@pytest.mark.parametrize("http_peer", SSE_PEERS, indirect=True)
def test_sse_peer_answers_initialize_on_its_stream(http_peer: HttpPeer) -> None:
    assert http_peer.url.endswith("/sse")
    answer = sse_initialize(http_peer.url)
    assert answer["result"]["serverInfo"]["name"]


@pytest.mark.parametrize("http_peer", ["sdk-modern"], indirect=True)
def test_dual_era_sdk_peer_also_opens_legacy_sessions(http_peer: HttpPeer) -> None:
    session, _ = legacy_session(http_peer.url)
    listed = post(
        http_peer.url,
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        mcp_session_id=session,
        mcp_protocol_version=LEGACY,
    )
    assert "echo" in {t["name"] for t in only_message(listed)["result"]["tools"]}


def test_a_peer_is_stopped_and_its_port_closed() -> None:
    with fault_http() as peer:
        assert peer.process.poll() is None
    assert peer.process.returncode is not None
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{peer.origin}/_admin/state", timeout=2)


# -------------------------------------------------------------------- fault server


def call(
    url: str, session: str, tool: str, arguments: dict[str, Any], request_id: int = 7, **headers: str
) -> httpx.Response:
    params: dict[str, Any] = {"name": tool, "arguments": arguments, "_meta": {"progressToken": "p"}}
    body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    return post(url, body, mcp_session_id=session, mcp_protocol_version=LEGACY, **headers)


def test_fault_legacy_call_streams_priming_progress_and_answer(fault_server: FaultPeer) -> None:
    session, _ = legacy_session(fault_server.url)
    response = call(fault_server.url, session, "slow", {"seconds": 0.1, "steps": 2})
    events = sse_events(response.text)
    assert events[0]["data"] == ""
    assert events[0]["retry"] == "100"
    assert all(e["id"] for e in events)
    payloads = [json.loads(e["data"]) for e in events[1:]]
    assert [p["method"] for p in payloads[:2]] == ["notifications/progress"] * 2
    assert payloads[-1]["result"]["content"][0]["text"] == "slow done after 0.1s"


def test_fault_forget_makes_old_sessions_404(fault_server: FaultPeer) -> None:
    session, _ = legacy_session(fault_server.url)
    assert fault_server.forget() == 1
    response = call(fault_server.url, session, "echo", {"text": "hi"})
    assert response.status_code == 404
    session, _ = legacy_session(fault_server.url)  # a new session works
    assert (
        "hi"
        in only_message(call(fault_server.url, session, "echo", {"text": "hi"}))["result"]["content"][0][
            "text"
        ]
    )


@pytest.mark.parametrize("how", ["end", "abort"])
def test_fault_legacy_drop_then_resume_with_last_event_id(fault_server: FaultPeer, how: str) -> None:
    fault_server.set(drop=how, drop_times=1)
    session, _ = legacy_session(fault_server.url)
    received = ""
    try:
        with httpx.Client(timeout=15) as client:
            body = {
                "jsonrpc": "2.0",
                "id": 9,
                "method": "tools/call",
                "params": {"name": "slow", "arguments": {"seconds": 0.3}},
            }
            headers = {"accept": ACCEPT, "mcp-session-id": session, "mcp-protocol-version": LEGACY}
            with client.stream("POST", fault_server.url, json=body, headers=headers) as stream:
                for chunk in stream.iter_text():
                    received += chunk
        assert how == "end"
    except httpx.RemoteProtocolError:
        assert how == "abort"
    events = sse_events(received)
    assert len(events) == 1
    assert events[0]["data"] == ""
    assert events[0]["retry"] == "100"
    resumed = httpx.get(
        fault_server.url,
        headers={"accept": "text/event-stream", "mcp-session-id": session, "last-event-id": events[0]["id"]},
        timeout=15,
    )
    assert resumed.status_code == 200
    answer = only_message(resumed)
    assert answer["id"] == 9
    assert answer["result"]["content"][0]["text"] == "slow done after 0.3s"
    assert fault_server.seen()["dropped"] == [9]


@pytest.mark.parametrize("how", ["end", "abort"])
def test_fault_modern_drop_loses_the_answer(how: str) -> None:
    with fault_http("--modern", "--drop", how, "--drop-times", "1", "--drop-after", "1") as peer:
        body, headers = modern_request(
            "tools/call", {"name": "slow", "arguments": {"seconds": 0.2, "steps": 2}}, request_id=3
        )
        body["params"]["_meta"]["progressToken"] = "t"
        received = ""
        try:
            with httpx.stream(
                "POST", peer.url, json=body, headers={"accept": ACCEPT, **headers}, timeout=15
            ) as s:
                for chunk in s.iter_text():
                    received += chunk
            assert how == "end"
        except httpx.RemoteProtocolError:
            assert how == "abort"
        payloads = [json.loads(e["data"]) for e in sse_events(received)]
        assert [p.get("method") for p in payloads] == ["notifications/progress"]
        body["id"] = 4  # re-issued with a new id: answered
        answer = only_message(
            httpx.post(peer.url, json=body, headers={"accept": ACCEPT, **headers}, timeout=15)
        )
        assert answer["id"] == 4
        assert answer["result"]["resultType"] == "complete"
        assert peer.seen()["dropped"] == [3]


def test_fault_modern_refuses_initialize_and_bad_headers() -> None:
    with fault_http("--modern") as peer:
        refused = post(peer.url, initialize())
        assert refused.status_code == 400
        assert refused.json()["error"]["code"] == -32022
        assert refused.json()["error"]["data"] == {"supported": [MODERN], "requested": LEGACY}
        body, headers = modern_request("tools/call", {"name": "echo", "arguments": {"text": "x"}})
        headers["mcp-name"] = "other"
        mismatch = httpx.post(peer.url, json=body, headers={"accept": ACCEPT, **headers}, timeout=15)
        assert mismatch.status_code == 400
        assert mismatch.json()["error"]["code"] == -32020
        body, headers = modern_request("nope/nope")
        unknown = httpx.post(peer.url, json=body, headers={"accept": ACCEPT, **headers}, timeout=15)
        assert unknown.status_code == 404
        assert unknown.json()["error"]["code"] == -32601
        assert httpx.get(peer.url, headers={"accept": "text/event-stream"}, timeout=15).status_code == 405


def test_fault_unauthorized_answers_401_bearer(fault_server: FaultPeer) -> None:
    fault_server.set(unauthorized=True)
    response = post(fault_server.url, initialize())
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert (
        httpx.get(f"{fault_server.origin}/.well-known/oauth-protected-resource", timeout=15).status_code
        == 404
    )
    fault_server.set(token="s3cret")
    assert post(fault_server.url, initialize(), authorization="Bearer s3cret").status_code == 200
    wrong = post(fault_server.url, initialize(), authorization="Bearer nope")
    assert wrong.status_code == 401
    assert "invalid_token" in wrong.headers["www-authenticate"]


@pytest.mark.parametrize("target", ["other-port", "localhost", "same-origin"])
def test_fault_redirect_records_what_the_target_saw(fault_server: FaultPeer, target: str) -> None:
    state = fault_server.set(redirect=target)
    response = post(fault_server.url, initialize(), authorization="Bearer s3cret")
    assert response.status_code == 307
    location = response.headers["location"]
    expected = {
        "other-port": f"http://127.0.0.1:{state['other_port']}/mcp",
        "localhost": f"http://localhost:{state['port']}/mcp",
        "same-origin": f"http://127.0.0.1:{state['port']}/moved",
    }[target]
    assert location == expected
    # Follow it by hand, without the credential, as a careful client would across origins.
    followed = post(location, initialize())
    assert followed.status_code == 200
    requests = fault_server.seen()["requests"]
    assert [r["status"] for r in requests] == [307, 200]
    assert [r["rpc_method"] for r in requests] == ["initialize", "initialize"]
    assert requests[0]["authorization"] == "Bearer s3cret"
    assert requests[1]["authorization"] is None
    assert requests[1]["path"] == httpx.URL(location).path
