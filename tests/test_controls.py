"""Nothing from a server drives a terminal or fetches a URL by itself (issue #26).

Text forms (reprs, ``str()`` of errors, log records, the stderr tail, text tables, the text of a
tools frame) show control and bidi characters as visible escapes through one pure rule,
:func:`mcp_notebook.protocol.printable`; an image whose data is a remote URL is a placeholder naming
its host unless ``display_options.remote_images`` is on. The rules are tables of cases; the rest
runs against ``tests/servers/escape_server.py``, a real stdio server that puts escape sequences in
every string it sends.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from typing import Any

import pytest

import mcp_notebook
from mcp_notebook import Client, McpError, ToolResult
from mcp_notebook.protocol import printable

from .conftest import python_server

ESCAPE_SERVER = python_server("escape_server.py")
HOSTILE = "\x1b]0;pwned\x07\x1b[2J\u202etxt.exe\x9b31m"  # what escape_server puts everywhere
SHOWN = "\\x1b]0;pwned\\x07\\x1b[2J\\u202etxt.exe\\x9b31m"  # the same, made visible
PIXEL = "https://tracker.example/pixel.png?who=reader"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
#: a raw control or bidi character other than a line break or a tab (a multi-line form keeps those)
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
#: the same, a line break or a tab included (a single-line form keeps neither)
RAW_IN_A_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def assert_shown(text: str, *, one_line: bool = False, shown: str = SHOWN) -> None:
    """``text`` carries the hostile string made visible, and no raw control or bidi character."""
    raw = (RAW_IN_A_LINE if one_line else RAW).search(text)
    assert raw is None, f"raw {raw.group()!r} in {text!r}"
    assert shown in text, text


# --- the rule -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "multiline", "shown"),
    [
        ("plain text, ünïcode, 世界 🚀", False, "plain text, ünïcode, 世界 🚀"),
        ("\x1b]0;title\x07", False, "\\x1b]0;title\\x07"),  # OSC: retitles the window
        ("\x1b[2J\x1b[31m", False, "\\x1b[2J\\x1b[31m"),  # CSI: clears the screen, colours
        ("\x9b31m\x85\x7f\x00", False, "\\x9b31m\\x85\\x7f\\x00"),  # C1 CSI, NEL, DEL, NUL
        ("exe.\u202etxt", False, "exe.\\u202etxt"),  # a bidi override: reads as "exe.txt" reversed
        ("\u202a\u202b\u202c\u202d", False, "\\u202a\\u202b\\u202c\\u202d"),
        ("\u2066\u2067\u2068\u2069", False, "\\u2066\\u2067\\u2068\\u2069"),  # bidi isolates
        ("ok\u200f 12 ms\u200e\u061c", False, "ok\\u200f 12 ms\\u200e\\u061c"),  # bidi marks (#35)
        ("a\u2028b\u2029c", False, "a\\u2028b\\u2029c"),  # line and paragraph separators
        ("two\nlines\tand\rback", False, "two\\nlines\\tand\\rback"),  # a name stays one line
        ("two\nlines\tkept", True, "two\nlines\tkept"),  # a multi-line form keeps them
        ("windows\r\nline", True, "windows\nline"),
        ("over\rwrite", True, "over\\rwrite"),  # a lone CR would overwrite the line
        ("\x1b[2J\nnext", True, "\\x1b[2J\nnext"),
        ("C:\\path\\x1b", False, "C:\\path\\x1b"),  # backslashes as they are
        (None, False, "None"),
        ({"k": "v"}, False, "{'k': 'v'}"),
    ],
)
def test_printable_makes_controls_and_bidi_visible(text: Any, multiline: bool, shown: str) -> None:
    assert printable(text, multiline=multiline) == shown


@pytest.mark.parametrize(
    "code",
    [
        *range(0x20),
        *range(0x7F, 0xA0),
        *(0x61C, 0x200E, 0x200F, 0x2028, 0x2029),
        *range(0x202A, 0x202F),
        *range(0x2066, 0x206A),
    ],
)
def test_no_control_or_bidi_character_survives(code: int) -> None:
    char = chr(code)
    assert RAW_IN_A_LINE.search(printable(f"a{char}b")) is None
    kept = printable(f"a{char}b", multiline=True)
    assert RAW.search(kept) is None
    assert kept == ("a\nb" if char == "\n" else "a\tb" if char == "\t" else printable(f"a{char}b"))


# --- remote images ------------------------------------------------------------------------------


class _Images(HTMLParser):
    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.sources: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.sources += [value or "" for name, value in attrs if name in ("src", "srcset", "href")]


@pytest.fixture
def remote_images() -> Iterator[None]:
    mcp_notebook.display_options.remote_images = True
    try:
        yield
    finally:
        mcp_notebook.display_options.remote_images = False


def _html(*blocks: dict[str, Any]) -> str:
    return str(ToolResult.from_dict({"content": list(blocks)})._repr_mimebundle_()["text/html"])


def _image(data: str, mime: str = "image/png") -> dict[str, Any]:
    return {"type": "image", "mimeType": mime, "data": data}


@pytest.mark.parametrize(
    ("block", "host"),
    [
        (_image(PIXEL), "tracker.example"),
        (_image("  https://Tracker.Example:8443/p.gif"), "tracker.example"),
        (_image("http://tracker.example/p.png"), "tracker.example"),
        (_image("//tracker.example/p.png"), None),  # no scheme: not base64 either, not shown
        (_image("javascript:alert(1)"), "javascript:"),
        (_image("ftp://files.example/p.png"), "files.example"),
        (_image("https://xn--bcher-kva.example/p.png"), "xn--bcher-kva.example"),
        (_image("https://bücher.example/p.png"), "xn--bcher-kva.example"),  # named in ASCII
        (_image("https://a<b>.example/p.png"), "a&lt;b&gt;.example"),  # escaped
        (_image("https://a\x1bb\x07.example/p.png"), "a\\x1bb\\x07.example"),  # controls visible
        ({"type": "image", "mimeType": "image/png", "uri": PIXEL}, "tracker.example"),
    ],
)
def test_a_remote_image_is_a_placeholder_naming_its_host(block: dict[str, Any], host: str | None) -> None:
    html = _html(block)
    assert "<img" not in html
    assert _Images(html).sources == []
    if host is not None:
        assert f"image from <b>{host}</b>, not loaded: remote images are off" in html
        assert "display_options.remote_images" in html


@pytest.mark.parametrize("data", [PNG, f"data:image/png;base64,{PNG}", PNG[:40] + "\n" + PNG[40:]])
def test_data_and_base64_images_render_as_before(data: str) -> None:
    assert _Images(_html(_image(data))).sources == [f"data:image/png;base64,{PNG}"]


@pytest.mark.usefixtures("remote_images")
@pytest.mark.parametrize(
    ("block", "source"),
    [
        (_image(PIXEL), PIXEL),
        ({"type": "image", "mimeType": "image/png", "uri": PIXEL}, PIXEL),
        (_image("http://tracker.example/p.png"), None),  # https only
        (_image("https://tracker.example/p.svg", "image/svg+xml"), None),  # SVG never
        (_image("javascript:alert(1)"), None),
        (_image(PNG), f"data:image/png;base64,{PNG}"),
    ],
)
def test_remote_images_load_when_opted_in(block: dict[str, Any], source: str | None) -> None:
    html = _html(block)
    assert _Images(html).sources == ([source] if source else [])
    if source is None:
        assert "<img" not in html


def test_the_text_form_names_a_remote_image_without_its_size() -> None:
    text = ToolResult.from_dict({"content": [_image(PIXEL)]})._repr_mimebundle_()["text/plain"]
    assert text == "[image image/png from tracker.example, a remote URL]"


def test_the_widget_result_view_shows_the_same_placeholder(remote_images: None) -> None:
    pytest.importorskip("ipywidgets")
    from mcp_notebook.widgets import result_widget

    def html_of(widget: Any) -> str:
        return "".join(html_of(c) for c in getattr(widget, "children", ())) + str(
            getattr(widget, "value", "")
        )

    result = ToolResult.from_dict({"content": [_image(PIXEL)]})
    assert '<img src="https://tracker.example/' in html_of(result_widget(result))
    mcp_notebook.display_options.remote_images = False
    shown = html_of(result_widget(result))
    assert "<img" not in shown
    assert "image from <b>tracker.example</b>" in shown


# --- a real server ------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_results_from_a_real_server_show_escapes_and_no_remote_image(remote_images: None) -> None:
    async with Client(ESCAPE_SERVER, timeout=30) as client:
        assert client.server_info["name"] == f"escape{HOSTILE}"  # the data stays what was sent
        assert_shown(repr(client), one_line=True)
        result = await client.call_tool("show")
        assert result.content[1]["type"] == f"kind{HOSTILE}"
        assert_shown(repr(result), one_line=True)  # the block type and the text
        assert repr(result).startswith(f"ToolResult([text, kind{SHOWN}, image, image, image])")
        bundle = result._repr_mimebundle_()
        assert_shown(bundle["text/plain"])
        assert '<img src="https://tracker.example/' in bundle["text/html"]  # opted in
        mcp_notebook.display_options.remote_images = False
        html = result._repr_mimebundle_()["text/html"]
        assert '<img src="https' not in html
        assert "image from <b>tracker.example</b>" in html
        assert "image from <b>other.example</b>" in html
        assert f'<img src="data:image/png;base64,{PNG}"' in html


@pytest.mark.anyio
async def test_an_error_from_a_real_server_shows_escapes() -> None:
    async with Client(ESCAPE_SERVER, timeout=30) as client:
        with pytest.raises(McpError) as failed:
            await client.call_tool("fail")
    assert failed.value.message.endswith(f"failed{HOSTILE}")  # the message stays what was sent
    assert_shown(str(failed.value), one_line=True)
    assert_shown(repr(failed.value), one_line=True)


@pytest.mark.anyio
async def test_server_log_records_show_escapes(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="mcp_notebook.server"):
        async with Client(ESCAPE_SERVER, timeout=30, log_level="debug") as client:
            await client.call_tool("log")
    (record,) = [r for r in caplog.records if r.name == "mcp_notebook.server"]
    assert record.levelno == logging.WARNING
    assert_shown(record.getMessage(), one_line=True)
    assert record.getMessage() == f"logger{SHOWN}: data{SHOWN}"


@pytest.mark.anyio
async def test_the_stderr_tail_of_a_dead_server_shows_escapes() -> None:
    async with Client(ESCAPE_SERVER, timeout=30) as client:
        with pytest.raises(McpError) as died:
            await client.call_tool("die")
    assert died.value.kind == "transport"
    assert "exited with code 3" in died.value.message
    for text in (died.value.message, str(died.value)):
        assert_shown(text)
        assert f"first{SHOWN}" in text
        assert f"last{SHOWN}" in text


@pytest.fixture(scope="module")
def session() -> Iterator[Any]:
    pytest.importorskip("pandas")
    with mcp_notebook.connect(ESCAPE_SERVER, show_progress=False) as opened:
        yield opened


def test_a_session_repr_shows_escapes(session: Any) -> None:
    assert_shown(repr(session), one_line=True)  # serverInfo.name and version
    result = session.call_tool("show")
    assert_shown(repr(result), one_line=True)
    assert result.to_dataframe()["type"][1] == f"kind{HOSTILE}"  # a result's frame is the server's data


def test_the_tools_frame_text_shows_escapes(session: Any) -> None:
    frame = session.tools_frame()
    for text in (str(frame), frame.to_string(), repr(frame["description"]), repr(frame["title"])):
        assert_shown(text, shown="\\x1b]0;pwned\\x07")  # pandas cuts long cells
    assert list(frame["name"]) == ["show", "fail", "log", "die", "progress", f"named{SHOWN}"]
    assert frame["description"][0] == f"line one{SHOWN}\nline two"  # its line break kept
    assert [t.name for t in session.model.tools][-1] == f"named{HOSTILE}"  # the objects stay raw


def test_the_servers_and_log_frames_show_escapes(session: Any) -> None:
    from mcp_notebook.notebook._registry import REGISTRY

    servers = REGISTRY.frame()
    (server,) = [s for s in servers["server"] if isinstance(s, str) and s.startswith("escape")]
    assert server == f"escape{SHOWN} 1{SHOWN}"
    assert session.name.startswith(f"escape{SHOWN}")  # a name taken from the server
    assert RAW.search(servers.to_string()) is None

    from mcp_notebook.notebook._frames import _readable

    row = {"logger": f"l{HOSTILE}", "data": f"a{HOSTILE}\nb", "list": [f"x{HOSTILE}", 1], "n": 3}
    assert _readable(row) == {"logger": f"l{SHOWN}", "data": f"a{SHOWN}\nb", "list": [f"x{SHOWN}", 1], "n": 3}


def test_the_connect_magic_prints_the_server_name_with_escapes_visible(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("IPython")
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "mcp_notebook")
    capsys.readouterr()
    shell.run_line_magic("mcp", "connect escape -- " + " ".join(ESCAPE_SERVER))
    try:
        out, err = capsys.readouterr()
        assert out.startswith(f"connected 'escape': escape{SHOWN} 1{SHOWN} (legacy "), out + err
        assert_shown(out)
    finally:
        shell.run_line_magic("mcp", "disconnect escape")


def test_a_progress_message_reaches_the_terminal_with_escapes_visible(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip("tqdm")
    with mcp_notebook.connect(ESCAPE_SERVER, show_progress=True) as shown:
        capsys.readouterr()
        assert shown.call_tool("progress").text == "done"
    drawn = capsys.readouterr().err  # tqdm draws on stderr outside a notebook
    assert f"step{SHOWN}" in drawn, drawn
    assert RAW.search(drawn.replace("\r", "")) is None, drawn  # tqdm's own \r aside
