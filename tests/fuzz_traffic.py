"""Hypothesis strategies for what a server may send: valid, almost valid, and plain wrong.

Each example is a list of raw lines (bytes). The string ``"__ID__"`` inside a message becomes the
bare token ``__ID__``, which the test servers replace with the JSON id of the request being
answered, so a line can pose as that request's answer, its progress or its cancellation. The
rest aims at every value a server controls: ids and tokens of every JSON type (unhashable ones
included), params that are not objects, results of the wrong shape, ``input_required`` rounds,
server requests of every kind, duplicate and stray ids, deep nesting, huge strings, invalid UTF-8,
NaN and friends.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from hypothesis import strategies as st

__all__ = ["MARK", "budget", "handshake_answers", "traffic"]

MARK = "__ID__"
FUZZ_EXAMPLES = 100
FUZZ_EXAMPLES_LONG = 2000


def budget(config: pytest.Config, short: int = FUZZ_EXAMPLES) -> int:
    """Examples per fuzz test: ``short`` in a normal run, ``FUZZ_EXAMPLES_LONG`` under
    ``pytest -m fuzz``, or ``MCPNB_FUZZ_EXAMPLES`` when set."""
    override = os.environ.get("MCPNB_FUZZ_EXAMPLES")
    if override:
        return int(override)
    return FUZZ_EXAMPLES_LONG if "fuzz" in (config.option.markexpr or "") else short


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
)
#: Any JSON value (and NaN/Infinity, which Python's json writes but JSON does not allow).
json_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)

#: Ids and tokens: ours (the marker), strays no request of ours has (so an answer to one is never
#: legitimately believed), wrong scalar types, and unhashable ones: a third of the draws each.
ids = st.one_of(
    st.one_of(
        st.just(MARK),
        st.integers(min_value=-3, max_value=0),
        st.integers(min_value=10**6, max_value=10**6 + 3),
        st.just(2**64 + 1),
        st.text(max_size=10),
    ),
    st.one_of(st.floats(allow_nan=True), st.booleans(), st.none()),
    st.one_of(
        st.lists(st.integers(), max_size=2),
        st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    ),
)

NOTIFICATIONS = [
    "notifications/progress",
    "notifications/cancelled",
    "notifications/message",
    "notifications/tools/list_changed",
    "notifications/resources/list_changed",
    "notifications/resources/updated",
    "notifications/prompts/list_changed",
    "notifications/elicitation/complete",
    "notifications/tasks/status",
    "notifications/subscriptions/acknowledged",
    "notifications/roots/list_changed",
]
SERVER_REQUESTS = [
    "ping",
    "sampling/createMessage",
    "elicitation/create",
    "roots/list",
    "tasks/get",
    "bogus/method",
]


def _maybe(value: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(value, json_values)


def _fields(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """An object with some of ``fields``, each right-typed or any JSON value."""
    return st.fixed_dictionaries({}, optional={name: _maybe(value) for name, value in fields.items()})


_params = st.one_of(
    _fields(
        progressToken=ids,
        progress=st.floats(allow_nan=True),
        total=st.integers(),
        message=st.text(max_size=10),
        requestId=ids,
        reason=st.text(max_size=10),
        level=st.sampled_from(["debug", "info", "error", "emergency", "nope"]),
        logger=st.text(max_size=5),
        data=json_values,
        uri=st.text(max_size=10),
        elicitationId=st.text(max_size=5),
        notifications=json_values,
        _meta=st.dictionaries(
            st.sampled_from(["io.modelcontextprotocol/subscriptionId", "x"]), ids, max_size=1
        ),
        messages=json_values,
        maxTokens=st.integers(),
        requestedSchema=json_values,
        mode=st.sampled_from(["form", "url"]),
        url=st.text(max_size=10),
        taskId=st.text(max_size=5),
    ),
    json_values,
)

_content = st.lists(
    _fields(
        type=st.sampled_from(["text", "image", "audio", "resource", "resource_link", "weird"]),
        text=st.text(max_size=20),
        data=st.text(max_size=10),
        mimeType=st.text(max_size=10),
        uri=st.text(max_size=10),
        resource=json_values,
    ),
    max_size=3,
)
_results = st.one_of(
    _fields(
        content=_content,
        isError=st.booleans(),
        structuredContent=json_values,
        resultType=st.sampled_from(["complete", "input_required", "task", "other"]),
        inputRequests=st.dictionaries(
            st.text(max_size=3),
            _fields(method=st.sampled_from(SERVER_REQUESTS), params=_params),
            max_size=2,
        ),
        requestState=json_values,
        tools=st.lists(_fields(name=st.text(max_size=5), inputSchema=json_values), max_size=2),
        nextCursor=json_values,
        _meta=json_values,
    ),
    json_values,
)
_errors = st.one_of(
    _fields(
        code=st.integers(min_value=-32800, max_value=-31000), message=st.text(max_size=20), data=json_values
    ),
    json_values,
)
_versions = st.sampled_from(["2.0", "2.0", "2.0", "1.0", None])


def _message(core: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    return st.tuples(_versions, core).map(
        lambda pair: {**({"jsonrpc": pair[0]} if pair[0] else {}), **pair[1]}
    )


responses = _message(
    st.one_of(
        st.fixed_dictionaries({"id": ids, "result": _results}),
        st.fixed_dictionaries({"id": ids, "error": _errors}),
        st.fixed_dictionaries({"id": ids, "result": _results, "error": _errors}),
        st.fixed_dictionaries({"id": ids}),
    )
)
#: The two notifications whose params pick a request of ours, well-formed but for their values.
routed = st.one_of(
    st.fixed_dictionaries(
        {
            "jsonrpc": st.just("2.0"),
            "method": st.just("notifications/progress"),
            "params": st.fixed_dictionaries(
                {"progressToken": ids},
                optional={"progress": _maybe(st.floats()), "total": json_values, "message": json_values},
            ),
        }
    ),
    st.fixed_dictionaries(
        {
            "jsonrpc": st.just("2.0"),
            "method": st.just("notifications/cancelled"),
            "params": st.fixed_dictionaries({"requestId": ids}, optional={"reason": json_values}),
        }
    ),
)
#: Notifications of every kind the client acts on: a valid envelope, params of any shape.
announced = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0"), "method": st.sampled_from(NOTIFICATIONS), "params": _params}
)
notifications = _message(
    st.fixed_dictionaries(
        {"method": st.one_of(st.sampled_from(NOTIFICATIONS), st.text(max_size=10))},
        optional={"params": _params},
    )
)
#: Answers to the request in flight (well-formed envelopes; the result or error is anything).
answers = st.one_of(
    st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "id": st.just(MARK), "result": _results}),
    st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "id": st.just(MARK), "error": _errors}),
)
#: Server requests the client must answer: valid envelopes, params of any shape.
asks = st.fixed_dictionaries(
    {
        "jsonrpc": st.just("2.0"),
        "id": st.one_of(st.integers(min_value=0, max_value=5), st.text(max_size=4)),
        "method": st.sampled_from(SERVER_REQUESTS),
    },
    optional={"params": _params},
)
server_requests = _message(
    st.fixed_dictionaries(
        {"id": ids, "method": st.one_of(st.sampled_from(SERVER_REQUESTS), json_values)},
        optional={"params": _params},
    )
)


def _encode(message: Any) -> bytes:
    # allow_nan: NaN/Infinity go out as the bare words, which a strict parser must refuse.
    return json.dumps(message, allow_nan=True).replace(json.dumps(MARK), MARK).encode()


_odd_bytes = st.one_of(
    st.binary(max_size=40),
    st.sampled_from(
        [
            b"",
            b"   ",
            b"NaN",
            b'{"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": NaN}}',
            b'{"jsonrpc": "2.0", "id": __ID__, "result": {"content": [{"type": "text", "text": "\xff"}]}}',
            b'{"jsonrpc": "2.0", "id": __ID__, "result": {"content": []}, "id": 1}',
            b'{"jsonrpc": "2.0", "id": 123456789012345678901234567890, "result": {}}',
            b'{"jsonrpc": "2.0", "id": "\\ud800", "result": {}}',
            b'{"jsonrpc": "2.0", "id": __ID__, "result": {"resultType": "input_required", '
            b'"requestState": "\\ud800"}}',
            b'{"jsonrpc": "2.0", "id": __ID__, "result": {"content": [{"type": "text", "text": "\\udfff"}]}}',
            b'{"jsonrpc": "2.0", "method": "notifications/progress", '
            b'"params": {"progressToken": __ID__, "progress": 1' + b"0" * 400 + b"}}",
            b'{"jsonrpc": "2.0", "id": __ID__, "result": {"tools": [], "ttlMs": 1' + b"0" * 400 + b"}}",
            b"[" * 5000 + b"]" * 5000,
            b'{"a":' * 3000 + b"1" + b"}" * 3000,
            b'{"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "'
            + b"x" * 300_000
            + b'"}}',
            b'[{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}]',
        ]
    ),
)

lines = st.one_of(
    routed.map(_encode),
    announced.map(_encode),
    answers.map(_encode),
    asks.map(_encode),
    responses.map(_encode),
    notifications.map(_encode),
    server_requests.map(_encode),
    _odd_bytes,
)

#: One example: a short burst of lines, as the server writes them before its real answer.
traffic = st.lists(lines, min_size=1, max_size=6)

_handshake_results = st.one_of(
    _fields(
        supportedVersions=st.lists(
            st.sampled_from(["2026-07-28", "2025-11-25", "1999-01-01", ""]), max_size=3
        ),
        protocolVersion=st.sampled_from(
            ["2026-07-28", "2025-11-25", "2025-06-18", "2024-11-05", "1999-01-01"]
        ),
        capabilities=st.dictionaries(
            st.sampled_from(["tools", "resources", "prompts", "logging", "completions", "tasks"]), json_values
        ),
        serverInfo=json_values,
        instructions=json_values,
        resultType=st.sampled_from(["complete", "input_required", "other"]),
        ttlMs=json_values,
        _meta=st.dictionaries(st.sampled_from(["io.modelcontextprotocol/serverInfo", "x"]), json_values),
    ),
    json_values,
)
#: What a server may answer to ``server/discover`` or ``initialize``: a result or an error of any
#: shape (the -32022 "unsupported version" error with its ``data.supported`` included), or nothing.
handshake_answers = st.one_of(
    st.fixed_dictionaries({"result": _handshake_results}),
    st.fixed_dictionaries(
        {
            "error": st.one_of(
                _errors,
                _fields(
                    code=st.just(-32022),
                    message=st.text(max_size=5),
                    data=_fields(supported=st.lists(st.sampled_from(["2026-07-28", "x"]), max_size=2)),
                ),
            )
        }
    ),
    st.none(),
)
