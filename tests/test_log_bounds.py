"""What a server's log messages cost is bounded in bytes, not only in count (issue #35).

A ``notifications/message`` may carry up to ``max_message_bytes`` of ``data``. Before: 150
messages of 16 MB were all kept in ``model.log`` (+2.3 GB), and 30 error messages of 4 MB printed
80 MB through the ``mcp_notebook.server`` records into the cell. Now each message's data is cut to
``LOG_DATA_BYTES`` of its text form, with a note of the bytes left out, in ``model.log``, the log
panel and the log records; ``model.log`` holds at most ``MAX_LOG_BYTES`` in all.

The server is real (``tests/servers/hostile_server.py`` over stdio, its ``flood_logs`` tool), the
client a notebook session and its log panel. Sizes and memory only, no timing.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from mcp_notebook.notebook._model import MAX_LOG_BYTES
from mcp_notebook.protocol._cut import LOG_DATA_BYTES, cut_log_data, cut_text, text_form

from .bomb_http import peak_rss_growth
from .conftest import python_server

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

MIB = 1 << 20
NOTE = re.compile(r" … cut: ([\d,]+) bytes more$")


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.NOTSET)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture
def server_records() -> Iterator[Records]:
    log = logging.getLogger("mcp_notebook.server")
    handler, level = Records(), log.level
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        log.removeHandler(handler)
        log.setLevel(level)


@pytest.fixture
def session() -> Iterator[Any]:
    pytest.importorskip("traitlets")
    import mcp_notebook

    session = mcp_notebook.connect(
        python_server("hostile_server.py"), show_progress=False, register=False, timeout=120
    )
    try:
        yield session
    finally:
        session.close()


def wait_for_rows(session: Any, count: int) -> list[dict[str, Any]]:
    """The model's log once ``count`` messages reached it (published a few times a second)."""
    deadline = time.monotonic() + 30
    while session.model._unpublished["log"] or len(session.model.log) < count:
        assert time.monotonic() < deadline, f"{len(session.model.log)} rows of {count}"
        time.sleep(0.02)
    return list(session.model.log)


def data_bytes(rows: list[dict[str, Any]]) -> int:
    return sum(len(text_form(row["data"]).encode()) for row in rows)


@pytest.mark.parametrize("shape", ["text", "object"])
def test_big_log_messages_are_cut_with_a_note_in_the_model_the_panel_and_the_records(
    session: Any, server_records: Records, shape: str
) -> None:
    count, size = 30, 4 * MIB
    with peak_rss_growth() as grew:
        session.call_tool("flood_logs", {"count": count, "bytes": size, "shape": shape, "level": "error"})
        rows = wait_for_rows(session, count)
    print(f"\n{count} log messages of {size / MIB:.0f} MiB ({shape}): peak RSS +{grew[0] / MIB:.0f} MiB")
    assert len(rows) == count
    for row in rows:
        data = row["data"]
        assert isinstance(data, str)
        note = NOTE.search(data)
        assert note is not None, data[-80:]
        kept = len(data[: note.start()].encode())
        assert kept <= LOG_DATA_BYTES
        assert row["cut"] == int(note.group(1).replace(",", "")) > size - 2 * LOG_DATA_BYTES
    assert data_bytes(rows) <= count * (LOG_DATA_BYTES + 100)
    assert grew[0] < 100 * MIB, f"the flood cost {grew[0] / MIB:.0f} MiB"

    # The server's records: 20 in full per level, each cut the same way (not 4 MB each).
    logged = [m for m in server_records.messages if m.startswith("flood: ")]
    assert logged
    assert all(len(m) < 2 * LOG_DATA_BYTES and NOTE.search(m) for m in logged), [len(m) for m in logged]

    # The panel shows less of each, and its note counts what the model left out as well.
    pytest.importorskip("ipywidgets")
    from mcp_notebook.widgets._log import SHOWN_BYTES, LogWidget

    view = LogWidget(session)
    try:
        deadline = time.monotonic() + 15
        while "bytes more" not in view.table.value:
            assert time.monotonic() < deadline, view.table.value[-500:]
            time.sleep(0.02)
        shown = [int(n.replace(",", "")) for n in re.findall(r"… cut: ([\d,]+) bytes more", view.table.value)]
        assert shown
        assert all(n > size - 2 * LOG_DATA_BYTES for n in shown), shown  # the model's cut counted too
        assert len(view.table.value) < count * 2 * SHOWN_BYTES
    finally:
        view.close()


def test_the_model_log_is_bounded_in_bytes_as_well_as_rows(session: Any) -> None:
    """Messages each under the cut, but more of them in bytes than MAX_LOG_BYTES: the oldest go."""
    size = 12 * 1024
    count = 2 * MAX_LOG_BYTES // size  # more than the bound holds, fewer than the 500 rows
    assert count < 1000
    session.call_tool("flood_logs", {"count": count, "bytes": size})
    deadline = time.monotonic() + 30
    while session.model._unpublished["log"] or not session.model.log:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    rows = list(session.model.log)
    assert all("cut" not in row and len(row["data"]) == size for row in rows)  # under the cut: whole
    assert data_bytes(rows) <= MAX_LOG_BYTES
    assert len(rows) >= MAX_LOG_BYTES // (size + 200) - 1  # the newest that fit are all there
    assert len(rows) < min(count, 500)


@pytest.mark.parametrize(
    ("data", "limit", "kept", "left_out"),
    [
        ("abc", 10, "abc", 0),
        ("a" * 20, 10, "a" * 10, 10),
        ("é" * 10, 5, "éé", 16),  # two bytes each: the third would be cut in two, so it goes
        ("\N{GRINNING FACE}" * 3, 6, "\N{GRINNING FACE}", 8),
    ],
)
def test_a_text_is_cut_at_a_character_boundary_with_the_bytes_left_out(
    data: str, limit: int, kept: str, left_out: int
) -> None:
    text, cut = cut_text(data, limit)
    assert cut == left_out
    assert text == (kept if not cut else f"{kept} … cut: {left_out:,} bytes more")


def test_data_that_fits_is_kept_as_sent_and_other_data_as_its_cut_json() -> None:
    small = {"rows": [1, 2, 3]}
    assert cut_log_data(small).value is small
    big = {"rows": ["y" * 1000] * 100}
    cut = cut_log_data(big, limit=1000)
    assert cut.value.startswith('{"rows":["yyy')
    assert cut.cut == len(text_form(big).encode()) - 1000
    assert len(cut.value.encode()) == 1000 + len(" … cut: 99,310 bytes more".encode())


def test_a_group_log_is_bounded_in_bytes_as_well_as_rows() -> None:
    pytest.importorskip("traitlets")
    from mcp_notebook.notebook._model import GroupModel

    model = GroupModel(max_log=1000, max_log_bytes=100_000)
    for index in range(50):
        model.append_log([{"server": "a", "kind": "log", "time": index, "data": "x" * 10_000}])
    assert data_bytes(model.log) <= 100_000
    assert [row["time"] for row in model.log] == list(range(41, 50))  # the newest that fit
    model.log = []  # set from outside: counted again from what it holds
    model.append_log([{"server": "a", "kind": "notification", "time": 99, "params": {"uri": "x"}}])
    assert [row["time"] for row in model.log] == [99]
