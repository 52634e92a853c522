"""One deadline per call, whatever the server does.

A server must not keep a call alive past its ``timeout`` by sending progress the call never asked
for, nor hold it forever by not reading what we write, nor double it by answering ``tools/list``
slowly. The server is ``tests/servers/deadline_server.py`` (real processes, real pipes), in both
eras. Elapsed times are bounded by the timeout under test plus the scheduling noise measured in the
same run (tests/timing.py), never by a fixed budget.
"""

from __future__ import annotations

import gc
import logging
import time
import warnings
from typing import Any

import anyio
import pytest

from mcp_notebook import Client, McpError
from mcp_notebook.connection._requests import _CANCEL_WAIT_CONGESTED

from .conftest import python_server
from .timing import VIRTUAL_SLOP, scheduling_noise

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

ERAS = ["legacy", "modern"]
MIB = 1024 * 1024


def server(era: str, *args: str) -> list[str]:
    return python_server("deadline_server.py", *(["--modern"] if era == "modern" else []), *args)


async def timed_failure(call: Any) -> tuple[McpError, float, float]:
    """The call's error, how long it took, and how late it may end: 50 ms plus the worst wakeup
    delay of the event loop measured while it ran (tests/timing.py's scheduling_noise)."""
    async with scheduling_noise() as noise:
        started = anyio.current_time()
        with pytest.raises(McpError) as info:
            with anyio.fail_after(30):  # the old code waited forever (or 600 s): fail, do not hang
                await call
        elapsed = anyio.current_time() - started
    return info.value, elapsed, noise.allowance()


async def wait_until(predicate: Any, timeout: float, what: str) -> None:
    """Poll ``predicate`` (counters have no event to wait on) until true or timeout."""
    deadline = anyio.current_time() + timeout
    while not predicate():
        if anyio.current_time() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await anyio.sleep(0.02)


# --- progress extends only the call that asked for it ------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_progress_under_the_call_id_does_not_extend_a_call_that_sent_no_token(era: str) -> None:
    """The server sends progress every 0.2 s for 20 s with the call's own id as its token; the
    call asked for none (no callback), so its 1.5 s deadline stands."""
    timeout = 1.5
    async with Client(server(era), protocol=era, timeout=10) as client:
        await client.list_tools()
        error, elapsed, late = await timed_failure(
            client.call_tool("tick", {"every": 0.2, "for": 20, "token": "id"}, timeout=timeout)
        )
        assert error.kind == "timeout", repr(error)
        assert timeout - VIRTUAL_SLOP <= elapsed <= timeout + late, elapsed
        # Every one of them was dropped and counted (the server goes on ticking after the timeout).
        await wait_until(lambda: client.stats.dropped_progress >= 6, 10, "the dropped progress")
        assert client.stats.malformed_frames == 0
        assert client.stats.timeouts == 1


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_progress_under_a_token_that_is_not_ours_is_dropped_and_extends_nothing(era: str) -> None:
    """The call asked for progress (a callback, so a token), but the server reports under another
    token: the callback never hears it, and the deadline stands."""
    timeout = 1.5
    seen: list[float] = []
    async with Client(server(era), protocol=era, timeout=10) as client:
        await client.list_tools()
        error, elapsed, late = await timed_failure(
            client.call_tool(
                "tick",
                {"every": 0.2, "for": 20, "token": "other"},
                timeout=timeout,
                progress=lambda p, t, m: seen.append(p),
            )
        )
        assert error.kind == "timeout", repr(error)
        assert timeout - VIRTUAL_SLOP <= elapsed <= timeout + late, elapsed
        assert seen == []
        await wait_until(lambda: client.stats.dropped_progress >= 6, 10, "the dropped progress")


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_progress_under_the_token_the_call_sent_still_extends_its_deadline(era: str) -> None:
    timeout = 1.0
    seen: list[float] = []
    async with Client(server(era), protocol=era, timeout=10) as client:
        await client.list_tools()
        started = time.monotonic()
        with anyio.fail_after(20):
            result = await client.call_tool(
                "tick",
                {"every": 0.2, "for": 2.5, "token": "given"},
                timeout=timeout,
                progress=lambda p, t, m: seen.append(p),
            )
        assert result.text == "ticked"
        assert time.monotonic() - started > timeout  # it outlived its timeout, as asked
        assert len(seen) >= 5
        assert client.stats.dropped_progress == 0


# --- a server that stopped reading -------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_a_server_that_stopped_reading_fails_a_large_call_at_its_deadline(
    era: str, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    """A 1 MiB argument fills the pipe of a server that no longer reads its stdin: the call fails
    by its timeout, the client closes within seconds, and asyncio has nothing to complain about."""
    timeout = 2.0
    caplog.set_level(logging.DEBUG)
    # Earlier tests' garbage (an unclosed stream of theirs) is collected now, not inside the block
    # below, where its ResourceWarning would be counted against this test. A full run's order has
    # landed two unclosed anyio memory streams here (legacy era, once in each of two fresh-clone
    # runs; never alone or in a short run); whether they are that garbage is not proven yet.
    gc.collect()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # A hang guard for the call and the close: closing (stdin closed, 0.5 s; a wait,
        # shutdown_timeout 2 s; then SIGTERM) takes a few seconds, never forever. How long is a
        # benchmark's question, not this test's.
        with anyio.fail_after(60):
            async with Client(server(era, "--deaf-after-list"), protocol=era, timeout=10) as client:
                await client.list_tools()  # the server's last read
                error, elapsed, late = await timed_failure(
                    client.call_tool("hang", {"blob": "x" * MIB}, timeout=timeout)
                )
                assert error.kind == "timeout", repr(error)
                # The cancel notice to a server that does not read is queued, waited for at most
                # _CANCEL_WAIT_CONGESTED, after the deadline.
                assert timeout - VIRTUAL_SLOP <= elapsed <= timeout + _CANCEL_WAIT_CONGESTED + late, elapsed
        gc.collect()  # "exception was never retrieved" is reported when a future is collected
        await anyio.sleep(0.1)
    noise = [r for r in caplog.records if r.name == "asyncio" and r.levelno >= logging.WARNING]
    assert noise == [], [r.getMessage() for r in noise]
    assert "InvalidStateError" not in caplog.text
    assert "InvalidStateError" not in capfd.readouterr().err
    assert [str(w.message) for w in caught if not issubclass(w.category, DeprecationWarning)] == []


# --- the tool list fetched for a call's checks spends the call's own deadline ------------------


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_a_slow_tool_list_leaves_the_call_its_deadline_and_the_call_says_it_went_unchecked(
    era: str, caplog: pytest.LogCaptureFixture
) -> None:
    timeout = 2.0
    events: list[Any] = []
    async with Client(server(era, "--list-delay", "60"), protocol=era, timeout=30) as client:
        client.on_event(lambda event: events.append(event) if event.kind == "unchecked_call" else None)
        async with scheduling_noise() as noise:
            started = anyio.current_time()
            with anyio.fail_after(30):
                result = await client.call_tool("echo", {"n": 1}, timeout=timeout)
            elapsed = anyio.current_time() - started
        assert result.text == "1"
        assert elapsed <= timeout + noise.allowance(), elapsed
        warned = [r for r in caplog.records if r.levelno == logging.WARNING and "'echo'" in r.getMessage()]
        assert len(warned) == 1, caplog.text
        assert "unchecked" in warned[0].getMessage()
        await wait_until(lambda: events, 5, "the unchecked_call event")
        assert events[0].data["tool"] == "echo"


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_a_slow_tool_list_and_a_call_that_never_answers_fail_within_the_one_timeout(
    era: str, caplog: pytest.LogCaptureFixture
) -> None:
    timeout = 3.0
    async with Client(server(era, "--list-delay", "60"), protocol=era, timeout=30) as client:
        error, elapsed, late = await timed_failure(client.call_tool("hang", {}, timeout=timeout))
        assert error.kind == "timeout", repr(error)
        assert timeout - VIRTUAL_SLOP <= elapsed <= timeout + late, elapsed
        assert "tool list" in error.message
        assert any(r.levelno == logging.WARNING and "'hang'" in r.getMessage() for r in caplog.records), (
            caplog.text
        )


@pytest.mark.parametrize("era", ERAS)
def test_the_notebook_shows_that_a_call_went_unchecked(era: str) -> None:
    pytest.importorskip("traitlets")
    import mcp_notebook

    session = mcp_notebook.connect(
        server(era, "--list-delay", "60"), protocol=era, timeout=1.0, show_progress=False, register=False
    )
    try:
        assert session.call_tool("echo", {"n": 2}, timeout=2.0).text == "2"
        deadline = time.monotonic() + 5
        while not [row for row in session.model.log if "'echo'" in str(row.get("data"))]:
            assert time.monotonic() < deadline, list(session.model.log)
            time.sleep(0.02)
        (row,) = [row for row in session.model.log if "'echo'" in str(row.get("data"))]
        assert row["level"] == "warning"
        assert "unchecked" in row["data"]
    finally:
        session.close()
