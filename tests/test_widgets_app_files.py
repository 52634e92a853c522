"""The App view's files and streamed input in a notebook session (no browser): the notebook layer's
answers to ``ui/download-file`` (a hook, the Save / Refuse question in the view, nobody to ask) and
``defer_call`` with ``send_partial_input`` / ``call``, through ``session.app`` on the real probe
server. The host's own rules are tests/test_apps_download.py and tests/test_apps_partial_input.py;
the page's side tests/test_browser_app_files.py.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from mcp_notebook.protocol._app_files import AppDownload
from tests.apps_peers import PROBE
from tests.test_apps_download import CSV, download
from tests.test_apps_host import INITIALIZED
from tests.widget_helpers import wait_for

pytest.importorskip("anywidget")

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

PARTIAL = "ui/notifications/tool-input-partial"
INPUT = "ui/notifications/tool-input"
RESULT = "ui/notifications/tool-result"
DOWNLOAD_MESSAGE = {"jsonrpc": "2.0", "id": 9, "method": "ui/download-file", "params": download()}


def _connect() -> Any:
    from mcp_notebook import connect

    env = {"PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    return connect([sys.executable, *PROBE[1:]], env=env, register=False, dialogs=False, show_progress=False)


def test_a_hook_answers_for_the_user_and_save_to_keeps_a_copy(tmp_path: Path) -> None:
    seen: list[AppDownload] = []

    def keep(file: AppDownload) -> bool:
        seen.append(file)
        return True

    with _connect() as session:
        view = session.app("export_app", on_download=keep, save_to=tmp_path)
        try:
            assert view.receive(DOWNLOAD_MESSAGE) == {"jsonrpc": "2.0", "id": 9, "result": {}}
            assert [f.name for f in seen] == ["q4.csv"]
            assert view.saved == [tmp_path / "q4.csv"]
            assert (tmp_path / "q4.csv").read_text() == CSV
            assert view.downloads == [
                {"name": "q4.csv", "mime_type": "text/csv", "size": 26, "accepted": True}
            ]
            assert view.download_request is None  # the hook answered: nothing asked in the view
        finally:
            view._discard()


def test_save_to_must_be_a_folder_that_exists(tmp_path: Path) -> None:
    with _connect() as session:
        with pytest.raises(NotADirectoryError, match="missing"):
            session.app("export_app", save_to=tmp_path / "missing")
        assert session.views == []


def test_without_a_page_or_a_hook_a_download_is_refused_at_once(tmp_path: Path) -> None:
    """A script standing in for the View (nbclient, a terminal) has nobody in front of a page to
    ask: refused straight away, never a question that would hold the cell forever."""
    with _connect() as session:
        view = session.app("export_app", save_to=tmp_path)
        try:
            answer = view.receive(DOWNLOAD_MESSAGE)
            assert answer == {"jsonrpc": "2.0", "id": 9, "result": {"isError": True}}
            assert view.downloads[0]["accepted"] is False
            assert list(tmp_path.iterdir()) == []
        finally:
            view._discard()


@pytest.mark.parametrize("save", [True, False])
def test_the_view_asks_the_user_and_sends_the_bytes_to_the_page_only(tmp_path: Path, save: bool) -> None:
    with _connect() as session:
        view = session.app("export_app", save_to=tmp_path)
        sent: list[tuple[Any, Any]] = []
        view.send = lambda content, buffers=None: sent.append((content, buffers))
        try:
            view.run.receive_soon(DOWNLOAD_MESSAGE)  # as the front end relays the View's message
            wait_for(lambda: view.download_request is not None, 10, "the question in the view")
            request_id = view.download_request["id"]
            assert view.download_request["files"] == [{"name": "q4.csv", "type": "text/csv", "size": 26}]
            assert sent == [({"mcpnb_download": request_id}, [CSV.encode()])]
            assert CSV not in repr(view.get_state())  # the bytes are in no trait
            view.answer_download(save)
            wait_for(lambda: len(sent) == 2, 10, "the answer to the View")
            assert sent[1] == ({"jsonrpc": "2.0", "id": 9, "result": {} if save else {"isError": True}}, None)
            assert view.download_request is None
            assert [p.name for p in tmp_path.iterdir()] == (["q4.csv"] if save else [])
            assert [d["accepted"] for d in view.downloads] == [save]
        finally:
            view._discard()


def test_a_notebook_view_streams_its_input_then_calls_once_in_the_history() -> None:
    with _connect() as s:
        view = s.app("export_app", defer_call=True)
        try:
            assert view.status == "ready"
            assert [h["name"] for h in s.model.history] == []  # opened, not called
            messages: list[dict[str, Any]] = []
            view.send = messages.append
            view.receive(INITIALIZED)
            view.send_partial_input({"title": "Q"})
            view.call({"title": "Q4"})
            assert view.wait(30) is not None
            assert view.result.structured_content == {"title": "Q4", "rows": 2}
            assert [m["method"] for m in messages] == [PARTIAL, INPUT, RESULT]
            assert [(h["name"], h["arguments"]) for h in s.model.history] == [("export_app", {"title": "Q4"})]
            with pytest.raises(RuntimeError):
                view.send_partial_input({"title": "late"})
        finally:
            view._discard()
