"""An MCP App's run in a notebook when Python stands in for a View that also runs (issue #29 item 2).

Notebook 09 plays the View from Python when it sees no model context yet. After Run All in
JupyterLab the real View runs too, and it had not reported anything when that cell ran: the
stand-in's requests (ids 1 and 2) were answered to the front end, where the View took the
stand-in's ``{}`` for the answer to its own ``tools/call`` of ``region_detail`` (id 2) and showed
"Could not load south: region_detail failed". These tests drive the notebook layer's
:class:`~mcp_notebook.notebook._apps.AppRun` against the real demo app server: the View's messages
arrive as the widget relays them (``receive_soon``), the stand-in's through ``receive``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from .fakes import wait_until

ROOT = Path(__file__).resolve().parents[1]


def _connect() -> Any:
    from mcp_notebook import connect

    command = [sys.executable, "-m", "mcp_notebook.demo.apps"]
    env = {"PYTHONPATH": str(ROOT)}
    return connect(command, env=env, register=False, dialogs=False, show_progress=False)


def _request(ident: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}


INITIALIZE = {"protocolVersion": "2026-01-26", "appInfo": {"name": "view", "version": "1"}}
INITIALIZED = {"jsonrpc": "2.0", "method": "ui/notifications/initialized", "params": {}}


def _run(session: Any, sent: list[dict[str, Any]]) -> Any:
    from mcp_notebook.notebook._apps import AppRun

    async def refuse(_url: str) -> bool:
        return False

    run = AppRun(
        session,
        "sales_board",
        None,
        name="sales_board",
        send=sent.append,
        confirm_open_link=refuse,
        on_change=lambda _name, _value: None,
    )
    session._engine.call(run.open)
    return run


def _answers(sent: list[dict[str, Any]], ident: int) -> list[dict[str, Any]]:
    return [m for m in sent if m.get("id") == ident and "method" not in m]


@pytest.mark.usefixtures("no_leaked_processes")
def test_the_views_own_region_detail_call_gets_data_while_python_stands_in() -> None:
    with _connect() as session:
        sent: list[dict[str, Any]] = []
        run = _run(session, sent)
        # The View, as the browser relays it: its handshake, then (once the board is drawn) its
        # own call of the app-only tool, id 2.
        run.receive_soon(_request(1, "ui/initialize", INITIALIZE))
        wait_until(lambda: _answers(sent, 1))
        run.receive_soon(INITIALIZED)
        wait_until(lambda: any(m.get("method") == "ui/notifications/tool-result" for m in sent))
        detail_call = {"name": "region_detail", "arguments": {"region": "south"}}
        run.receive_soon(_request(2, "tools/call", detail_call))
        # The notebook's cell, which saw no model context yet, stands in with the same ids.
        initialized = run.receive(_request(1, "ui/initialize", INITIALIZE))
        assert run.receive(INITIALIZED) is None
        context = {"structuredContent": {"selected": {"region": "west"}}}
        updated = run.receive(_request(2, "ui/update-model-context", context))
        wait_until(lambda: _answers(sent, 2))
        # The View gets only its own answers: one answer to id 1, one to id 2, the region's data.
        assert len(_answers(sent, 1)) == 1
        detail = _answers(sent, 2)
        assert len(detail) == 1, detail
        assert detail[0]["result"]["structuredContent"]["region"] == "south"
        assert detail[0]["result"]["structuredContent"]["sales"] > 0
        # ...and Python the stand-in's.
        assert initialized is not None
        assert initialized["result"]["protocolVersion"] == "2026-01-26"
        assert updated == {"jsonrpc": "2.0", "id": 2, "result": {}}
        assert run.host.model_context == context
        methods = [m["method"] for m in sent if "method" in m]
        assert methods == ["ui/notifications/tool-input", "ui/notifications/tool-result"]


@pytest.mark.usefixtures("no_leaked_processes")
def test_the_view_that_starts_after_python_stood_in_still_gets_the_result() -> None:
    """Run All in JupyterLab: the kernel runs notebook 09's stand-in cell before the View's own
    messages are handled, and the result it triggers may reach a frame that is still loading. The
    View's own handshake, later, must bring the result again (once the board stayed empty in CI)."""
    tool_result = "ui/notifications/tool-result"
    with _connect() as session:
        sent: list[dict[str, Any]] = []
        run = _run(session, sent)
        run.receive(_request(1, "ui/initialize", INITIALIZE))
        assert run.receive(INITIALIZED) is None
        wait_until(lambda: any(m.get("method") == tool_result for m in sent))
        run.receive_soon(_request(1, "ui/initialize", INITIALIZE))
        wait_until(lambda: _answers(sent, 1))
        run.receive_soon(INITIALIZED)
        wait_until(lambda: [m.get("method") for m in sent].count(tool_result) == 2)
        methods = [m["method"] for m in sent if "method" in m]
        assert methods == ["ui/notifications/tool-input", tool_result] * 2


@pytest.mark.usefixtures("no_leaked_processes")
def test_a_stand_ins_refused_request_is_answered_to_python_not_the_view() -> None:
    with _connect() as session:
        sent: list[dict[str, Any]] = []
        run = _run(session, sent)
        answer = run.receive(_request(7, "tools/call", {"name": "no_such_tool", "arguments": {}}))
        assert answer is not None
        assert answer["id"] == 7
        assert "no_such_tool" in answer["error"]["message"]
        answer = run.receive(_request(8, "ui/no-such-method", {}))
        assert answer is not None
        assert answer["error"]["code"] == -32601
        assert _answers(sent, 7) == []
        assert _answers(sent, 8) == []
