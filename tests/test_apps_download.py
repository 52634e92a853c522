"""``ui/download-file``: a View asks the host to save a file, and the user decides.

The pure rules (what may be offered: embedded contents only, bounded, a safe name and a plain type)
by tables; the host against the real probe server over stdio, a test playing the View; saving into
a folder on a real file system; and the notebook layer's answers (a hook, the Save / Refuse question
in the view, nobody to ask) are tests/test_widgets_app_files.py; the browser's side (the bar, the
download) tests/test_browser_app_files.py.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from mcp_notebook.client._app_saving import save_download
from mcp_notebook.client._apps_host import MAX_DOWNLOAD_OFFERS
from mcp_notebook.protocol._app_files import (
    MAX_DOWNLOAD_BYTES,
    MAX_DOWNLOAD_FILES,
    AppDownload,
    DownloadRefused,
    parse_download_request,
    safe_file_name,
    safe_mime_type,
)
from mcp_notebook.protocol._printable import _CODES
from tests.test_apps_host import INITIALIZE, make_host, probe, request, shut

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

CSV = "region,revenue\nnorth,12.5\n"


def embedded(uri: str = "file:///exports/q4.csv", mime: Any = "text/csv", **data: Any) -> dict[str, Any]:
    return {"type": "resource", "resource": {"uri": uri, "mimeType": mime, **(data or {"text": CSV})}}


def download(*contents: dict[str, Any]) -> dict[str, Any]:
    return {"contents": list(contents or [embedded()])}


# --- the rules ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "name"),
    [
        ("report.csv", "report.csv"),
        ("../../etc/passwd", "_.._etc_passwd"),
        ("..\\..\\boot.ini", "_.._boot.ini"),
        ("C:\\Windows\\win.ini", "C__Windows_win.ini"),
        ("/absolute/path.txt", "_absolute_path.txt"),
        (".bashrc", "bashrc"),
        ("..", "download"),
        ("   ", "download"),
        ("", "download"),
        (None, "download"),
        (42, "download"),
        ("trailing. . .", "trailing"),
        ("a\tb\nc\r\nd.txt", "a b c d.txt"),
        ("bell\x07\x1b]0;title\x07.txt", "bell]0;title.txt"),
        ("invoice\u202efdp.exe", "invoicefdp.exe"),  # would read as "invoiceexe.pdf"
        ("x\u2066y\u2069\u200e\u061c.txt", "xy.txt"),
        ("zero\u200bwidth\ufeff.txt", "zerowidth.txt"),
        ('what?*<>|":.txt', "what_______.txt"),
        ("CON", "_CON"),
        ("nul.txt", "_nul.txt"),
        ("console.txt", "console.txt"),
        ("e\u0301t\u00e9.csv", "\u00e9t\u00e9.csv"),  # one form (NFC) for one name
    ],
)
def test_a_file_name_is_one_safe_name(raw: Any, name: str) -> None:
    assert safe_file_name(raw) == name


def test_no_character_printable_escapes_survives_in_a_file_name() -> None:
    for code in _CODES:
        name = safe_file_name(f"a{chr(code)}b.txt")
        assert chr(code) not in name, hex(code)
        assert name in ("ab.txt", "a b.txt"), (hex(code), name)


def test_a_long_name_is_cut_and_keeps_its_extension() -> None:
    name = safe_file_name("x" * 500 + ".csv")
    assert len(name) == 120
    assert name.endswith("xx.csv")
    assert len(safe_file_name("y" * 500)) == 120


@pytest.mark.parametrize(
    ("raw", "mime"),
    [
        ("text/csv", "text/csv"),
        ("Text/CSV; charset=utf-8", "text/csv"),
        ("application/vnd.ms-excel", "application/vnd.ms-excel"),
        ("image/svg+xml", "image/svg+xml"),
        ("text/html\r\nX-Evil: 1", "application/octet-stream"),
        ("csv", "application/octet-stream"),
        ("text/", "application/octet-stream"),
        ("t\u00e9xt/csv", "application/octet-stream"),
        (None, "application/octet-stream"),
        (["text/csv"], "application/octet-stream"),
    ],
)
def test_a_type_is_plain_or_octet_stream(raw: Any, mime: str) -> None:
    assert safe_mime_type(raw) == mime


def test_text_and_blob_contents_become_files_named_by_their_uri() -> None:
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
    files = parse_download_request(
        download(
            embedded(),
            embedded(
                "file:///tmp/..%2F..%2Fchart%20one.png", "image/png", blob=base64.b64encode(png).decode()
            ),
            embedded("ui://probe/", None, text="no name"),
        )
    )
    assert [(f.name, f.mime_type, f.data) for f in files] == [
        ("q4.csv", "text/csv", CSV.encode()),
        ("_.._chart one.png", "image/png", png),
        ("download", "application/octet-stream", b"no name"),
    ]
    assert repr(files[0]) == "<AppDownload 'q4.csv' text/csv 26 bytes>"  # never the bytes
    assert files[0].describe() == {"name": "q4.csv", "mime_type": "text/csv", "size": 26}


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({}, "non-empty list"),
        ({"contents": []}, "non-empty list"),
        ({"contents": "file"}, "non-empty list"),
        (download(*[embedded()] * (MAX_DOWNLOAD_FILES + 1)), f"at most {MAX_DOWNLOAD_FILES}"),
        ({"contents": ["x"]}, "must be an object"),
        (
            {"contents": [{"type": "resource_link", "uri": "file:///etc/passwd", "name": "passwd"}]},
            "never what a link names",
        ),
        ({"contents": [{"type": "text", "text": "hi"}]}, "embedded resource"),
        ({"contents": [{"type": "resource", "resource": "x"}]}, "embedded resource"),
        (download(embedded(text="a", blob="YQ==")), "either text or blob"),
        (download(embedded(text=None)), "either text or blob"),
        (download(embedded(blob="not base64!")), "not base64"),
        (download(embedded(text="x" * (MAX_DOWNLOAD_BYTES + 1))), "larger than"),
        (download(embedded(text="\u00e9" * (MAX_DOWNLOAD_BYTES // 2 + 1))), "larger than"),
        (download(embedded(blob="QUFB" * (MAX_DOWNLOAD_BYTES // 3 + 2))), "larger than"),
        (download(*[embedded(text="x" * (MAX_DOWNLOAD_BYTES // 2 + 1))] * 2), "larger than"),
    ],
)
def test_what_is_never_offered(params: dict[str, Any], words: str) -> None:
    with pytest.raises(DownloadRefused, match=words):
        parse_download_request(params)


# --- saving into a folder -------------------------------------------------------------------------


def test_save_download_writes_a_new_file_and_never_overwrites(tmp_path: Path) -> None:
    file = AppDownload("q4.csv", "text/csv", CSV.encode())
    first, second = save_download(file, tmp_path), save_download(file, tmp_path)
    assert (first.name, second.name) == ("q4.csv", "q4 (2).csv")
    assert first.read_bytes() == second.read_bytes() == CSV.encode()
    plain = AppDownload("notes", "text/plain", b"1")
    assert [save_download(plain, tmp_path).name for _ in range(2)] == ["notes", "notes (2)"]


def test_save_download_stays_in_its_folder_and_follows_no_planted_link(tmp_path: Path) -> None:
    folder, outside = tmp_path / "saved", tmp_path / "outside.txt"
    folder.mkdir()
    outside.write_text("untouched")
    (folder / "report.csv").symlink_to(outside)
    saved = save_download(AppDownload("report.csv", "text/csv", b"new"), folder)
    assert saved == folder / "report (2).csv"
    assert outside.read_text() == "untouched"
    escaped = save_download(AppDownload("../../escape.txt", "text/plain", b"x"), folder)  # built by hand
    assert escaped.parent == folder
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outside.txt", "saved"]
    with pytest.raises(NotADirectoryError):
        save_download(AppDownload("a.txt", "text/plain", b"x"), tmp_path / "missing")


# --- the host ---------------------------------------------------------------------------------------


class Asked:
    """A ``confirm_download`` that answers ``answer`` and keeps what it was asked."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.files: list[list[AppDownload]] = []

    async def __call__(self, files: list[AppDownload]) -> bool:
        self.files.append(files)
        if isinstance(self.answer, Exception):
            raise self.answer
        answer: bool = self.answer  # as given: only True may save
        return answer


@pytest.mark.anyio
async def test_download_is_offered_only_by_a_host_that_asks_the_user() -> None:
    async with probe() as client:
        host, view = make_host(client, "show_chart")
        await host.open()
        await host.receive(INITIALIZE)
        assert "downloadFile" not in view.result("init")["hostCapabilities"]
        await request(host, 1, "ui/download-file", download())
        assert view.error(1)["code"] == -32601  # not offered: as if unknown
        assert host.downloads == []
        await shut(host, view)

        asked = Asked(True)
        host, view = make_host(client, "show_chart", confirm_download=asked)
        await host.open()
        await host.receive(INITIALIZE)
        assert view.result("init")["hostCapabilities"]["downloadFile"] == {}
        await shut(host, view)


@pytest.mark.anyio
async def test_a_file_the_user_saves_is_answered_and_listed() -> None:
    async with probe() as client:
        asked = Asked(True)
        host, view = make_host(client, "show_chart", confirm_download=asked)
        await host.open()
        await request(host, 1, "ui/download-file", download())
        assert view.result(1) == {}
        ((file,),) = asked.files
        assert (file.name, file.mime_type, file.data) == ("q4.csv", "text/csv", CSV.encode())
        listed = [{"name": "q4.csv", "mime_type": "text/csv", "size": 26, "accepted": True}]
        assert host.downloads == listed
        assert ("downloads", listed) in view.changes
        await shut(host, view)


@pytest.mark.parametrize("answer", [False, None, "yes", RuntimeError("the dialog broke")])
@pytest.mark.anyio
async def test_a_file_the_user_refuses_is_answered_is_error(answer: Any) -> None:
    """A no is the spec's result ``{isError: true}``: the SDK's ``App.downloadFile`` resolves
    with it (a JSON-RPC error would make it throw where a View expects a value)."""
    async with probe() as client:
        asked = Asked(answer)
        host, view = make_host(client, "show_chart", confirm_download=asked)
        await host.open()
        await request(host, 1, "ui/download-file", download())
        assert view.result(1) == {"isError": True}
        assert [d["accepted"] for d in host.downloads] == [False]
        await shut(host, view)


@pytest.mark.anyio
async def test_a_download_that_is_never_offered_is_an_invalid_request_and_nobody_is_asked() -> None:
    async with probe() as client:
        asked = Asked(True)
        host, view = make_host(client, "show_chart", confirm_download=asked)
        await host.open()
        link = {"contents": [{"type": "resource_link", "uri": "file:///etc/passwd", "name": "passwd"}]}
        await request(host, 1, "ui/download-file", link)
        await request(host, 2, "ui/download-file", download(embedded(text="x" * (MAX_DOWNLOAD_BYTES + 1))))
        await request(host, 3, "ui/download-file", [1])
        assert [view.error(i)["code"] for i in (1, 2, 3)] == [-32602, -32602, -32602]
        assert "never what a link names" in view.error(1)["message"]
        assert asked.files == []
        assert host.downloads == []
        await shut(host, view)


@pytest.mark.anyio
async def test_a_view_that_keeps_offering_files_is_stopped_at_the_bound() -> None:
    """Each offer is a question put to the user: a View may not ask forever."""
    async with probe() as client:
        asked = Asked(False)
        host, view = make_host(client, "show_chart", confirm_download=asked)
        await host.open()
        eight = download(*[embedded()] * MAX_DOWNLOAD_FILES)
        rounds = MAX_DOWNLOAD_OFFERS // MAX_DOWNLOAD_FILES
        for request_id in range(rounds + 1):
            await request(host, request_id, "ui/download-file", eight)
        assert [view.result(i) for i in range(rounds)] == [{"isError": True}] * rounds
        assert view.error(rounds) == {"code": -32000, "message": "too many downloads from this View"}
        assert len(asked.files) == rounds
        assert len(host.downloads) == rounds * MAX_DOWNLOAD_FILES
        await shut(host, view)
