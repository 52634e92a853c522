"""``ui/notifications/tool-input-partial``: the View sees a call's arguments while they are prepared.

A host opened with ``defer_call=True`` shows the View before the tool is called; Python streams the
arguments so far, then calls. The spec's order holds: nothing before the View's ``initialized``
(a View not ready yet gets only the latest partial input), partial inputs only before
``tool-input``, then the result. The host runs against the real probe server over stdio, a test
playing the View; through ``session.app`` in tests/test_widgets_app_files.py.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from tests.test_apps_host import INITIALIZE, INITIALIZED, counts, make_host, probe, shut, until

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

PARTIAL = "ui/notifications/tool-input-partial"
INPUT = "ui/notifications/tool-input"
RESULT = "ui/notifications/tool-result"


def sent(view: Any) -> list[tuple[str, Any]]:
    return [(m["method"], m["params"]) for m in view.sent if "method" in m]


@pytest.mark.anyio
async def test_partial_inputs_stream_before_the_input_and_the_result() -> None:
    async with probe() as client:
        host, view = make_host(client, "export_app", defer_call=True)
        await host.open()
        assert host.status == "ready"
        assert (await counts(client)).get("export_app", 0) == 0  # not called yet
        await host.send_partial_input({"title": "Q"})
        await host.send_partial_input({"title": "Q4 sa"})
        await host.receive(INITIALIZE)
        assert sent(view) == []  # nothing before initialized
        await host.receive(INITIALIZED)
        assert sent(view) == [(PARTIAL, {"arguments": {"title": "Q4 sa"}})]  # only the latest
        await host.send_partial_input({"title": "Q4 sales", "draft": [1, 2]})
        await host.call({"title": "Q4 sales"})
        await until(lambda: len(sent(view)) == 4)
        assert sent(view)[1:3] == [
            (PARTIAL, {"arguments": {"title": "Q4 sales", "draft": [1, 2]}}),
            (INPUT, {"arguments": {"title": "Q4 sales"}}),
        ]
        method, result = sent(view)[3]
        assert (method, result["structuredContent"]) == (RESULT, {"title": "Q4 sales", "rows": 2})
        assert host.result is not None
        with pytest.raises(RuntimeError, match="final"):
            await host.send_partial_input({"title": "late"})
        with pytest.raises(RuntimeError, match="called already"):
            await host.call({"title": "again"})
        assert (await counts(client))["export_app"] == 1
        await shut(host, view)


@pytest.mark.anyio
async def test_a_new_page_gets_the_latest_partial_input_again_after_its_initialized() -> None:
    async with probe() as client:
        host, view = make_host(client, "export_app", defer_call=True)
        await host.open()
        await host.receive(INITIALIZE)
        await host.receive(INITIALIZED)
        await host.send_partial_input({"title": "Q"})
        await host.receive(INITIALIZE)  # the frame reloaded
        await anyio.sleep(0.1)
        assert sent(view) == [(PARTIAL, {"arguments": {"title": "Q"}})]
        await host.receive(INITIALIZED)
        assert sent(view) == [(PARTIAL, {"arguments": {"title": "Q"}})] * 2
        await host.call({"title": "Q1"})
        await until(lambda: RESULT in [m for m, _ in sent(view)])
        await host.receive(INITIALIZE)  # and again, now that the input is final: no partial
        await host.receive(INITIALIZED)
        await until(lambda: [m for m, _ in sent(view)].count(RESULT) == 2)
        assert [m for m, _ in sent(view)][2:] == [INPUT, RESULT, INPUT, RESULT]
        await shut(host, view)


@pytest.mark.anyio
async def test_partial_input_and_call_belong_to_a_deferred_host_only() -> None:
    async with probe() as client:
        host, view = make_host(client, "export_app", {"title": "now"})
        with pytest.raises(RuntimeError, match="final"):
            await host.send_partial_input({"title": "n"})
        await host.open()
        with pytest.raises(RuntimeError, match="defer_call"):
            await host.call({"title": "again"})
        await shut(host, view)

        deferred, view = make_host(client, "export_app", defer_call=True)
        with pytest.raises(RuntimeError, match="open"):
            await deferred.call({})
        await deferred.open()
        for bad in ({"x": {1, 2}}, {"x": float("nan")}, ["not", "a", "mapping"]):
            with pytest.raises(ValueError, match=r"JSON|mapping"):
                await deferred.send_partial_input(bad)  # type: ignore[arg-type]
        await deferred.receive(INITIALIZED)
        assert sent(view) == []
        await shut(deferred, view)
