"""The tool explorer and result view, driven from Python like a user would, against the real demo server.

Also: everything a server sends comes out inert. A fake session (same model, same engine) serves
hostile tool names, descriptions and results; every HTML value in the widget tree may then hold only
the handful of tags the widgets write themselves, with no event handler, link or image source.
"""

from __future__ import annotations

import gc
import re
import time

import ipywidgets as W
import pytest

import mcp_notebook
from mcp_notebook import McpError, Tool, ToolResult
from mcp_notebook.display._html import (
    Markup,
    content_block_html,
    display_url,
    escape,
    html_table,
    safe_image_src,
    state_badge,
    table,
)
from mcp_notebook.notebook import SessionModel
from mcp_notebook.notebook._engine import get_engine
from mcp_notebook.widgets import explorer, result_widget
from mcp_notebook.widgets._tool_source import python_code

from .conftest import demo_server
from .fakes import wait_until
from .widget_helpers import find, history_click, history_rows, walk, widget_models
from .widget_helpers import markup as html_of

HOSTILE = "<img src=x onerror=alert(1)>"
SCRIPT = "<script>alert(1)</script>"
SVG = '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script></svg>'
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
DEMO_TOOLS = {
    "sales_records",
    "add",
    "echo",
    "slow_count",
    "ask_user_name",
    "summarize",
    "list_roots",
    "write_log",
    "fail",
    "add_tool",
    "set_note",
    "build_report",
    "confirm_export",
    "sum_numbers",
}
# The only tags the widgets write; anything else in an HTML value came from a server.
OUR_TAGS = {
    "div",
    "pre",
    "b",
    "i",
    "em",
    "small",
    "code",
    "span",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
}
OUR_TAGS |= {"ul", "li", "style", "details", "summary"}
# What a tool's description as Markdown may hold (no links or images here: see assert_inert).
OUR_TAGS |= {"p", "strong", "ol", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "br"}


def assert_inert(widget) -> None:
    """No server markup anywhere: known tags only, no handlers, no links or sources, no HTML labels."""
    for w in walk(widget):
        assert not getattr(w, "description_allow_html", False), w
        if not isinstance(w, W.HTML | W.HTMLMath):
            continue
        for tag in re.findall(r"<\s*/?\s*([A-Za-z][A-Za-z0-9-]*)", w.value):
            assert tag.lower() in OUR_TAGS, (tag, w.value[:300])
        for markup in re.findall(r"<[^>]*>", w.value):
            assert not re.search(r"\son\w+\s*=|\bhref\s*=|\bsrc\s*=", markup, re.I), markup


def wait_for(predicate, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("timed out waiting")


@pytest.fixture
def session(no_leaked_processes):
    s = mcp_notebook.connect(demo_server(), show_progress=False)
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def ex(session):
    e = explorer(session)
    yield e
    e.close()


def call(ex, name, arguments, timeout=15.0):
    ex.select(name)
    ex.form.set_value(arguments)
    assert ex.call() is not None, ex.validation.value
    return ex.wait(timeout)


# --- against the demo server ---------------------------------------------------------------------------


def test_lists_the_demo_tools_with_badges(ex):
    assert set(ex.tool_names) == DEMO_TOOLS
    assert "mcpnb-explorer" in ex.widget._dom_classes
    buttons = {b.description: b for b in find(ex.widget, "mcpnb-tool")}
    assert buttons["add"].tooltip == "Add two numbers."
    entry = next(
        e for e in find(ex.widget, "mcpnb-tool-entry") if e.children[0].description == "sales_records"
    )
    badges = html_of(entry)
    assert "read-only" in badges
    assert "idempotent" in badges
    assert "destructive" not in badges
    assert ">Sales records</span>" in entry.children[1].value  # the title, beside the badges


def test_choosing_tools_over_and_over_keeps_the_live_widget_models_flat(ex):
    """A form replaced by another tool's is closed, its JSON editor and hidden fields too: before,
    each choice left about 11 live models behind (DESIGN.md: views close what they replace)."""

    names = ["add", "sales_records", "echo"]

    def round_of_choices() -> None:
        for name in names:
            ex.select(name)
            ex.form.json_toggle.value = True  # the fields leave the screen, still the form's
            ex.form.json_toggle.value = False

    round_of_choices()
    gc.collect()  # an earlier test's unheld controls close now, not in the middle of the count
    settled = widget_models()
    for _ in range(5):
        round_of_choices()
    assert widget_models() <= settled  # none made (garbage of this test may close: fewer is fine)


def test_search_filters_by_name_title_and_description(ex):
    ex.search.value = "count"
    assert ex.tool_names == ["slow_count"]
    ex.search.value = "always FAIL"
    assert ex.tool_names == ["fail"]
    ex.search.value = "elicitation"
    assert ex.tool_names == ["ask_user_name"]
    ex.search.value = "no such tool anywhere"
    assert ex.tool_names == []
    ex.search.value = ""
    assert set(ex.tool_names) == DEMO_TOOLS


def test_add_two_numbers_by_clicking(ex):
    (add_button,) = [b for b in find(ex.widget, "mcpnb-tool") if b.description == "add"]
    add_button.click()
    assert ex.selected.name == "add"
    assert "mcpnb-tool-selected" in add_button._dom_classes
    inputs = {name: find(find(ex.form.widget, f"mcpnb-field-{name}")[0], "mcpnb-input")[0] for name in "ab"}
    inputs["a"].value, inputs["b"].value = "2", "3"
    find(ex.widget, "mcpnb-call")[0].click()
    result = ex.wait()
    assert isinstance(result, ToolResult)
    assert result.structured_content == {"result": 5}
    (view,) = find(ex.widget, "mcpnb-result")
    table = find(view, "mcpnb-result-table")[0].value
    assert "<td" in table
    assert ">5.0<" in table
    assert "to_dataframe()" in html_of(view)
    assert find(view, "mcpnb-to-dataframe")
    assert ex.status.value.startswith("done")
    assert find(ex.widget, "mcpnb-cancel")[0].disabled


def test_sales_records_table_for_one_region(ex):
    result = call(ex, "sales_records", {"region": "north", "limit": 7})
    assert isinstance(result, ToolResult)
    (view,) = find(ex.widget, "mcpnb-result")
    table = find(view, "mcpnb-result-table")[0].value
    assert table.count("<tr>") == 1 + 7  # the header and one row per record
    for column in ("date", "region", "product", "units", "price"):
        assert f">{column}<" in table
    assert table.count(">north<") == 7
    find(view, "mcpnb-to-dataframe")[0].click()
    (output,) = find(view, "mcpnb-dataframe-output")
    assert output.outputs
    assert result.to_dataframe()["region"].tolist() == ["north"] * 7
    assert_inert(ex.widget)


def test_the_explorer_and_the_repr_draw_the_same_table_for_the_same_result(ex):
    """One renderer: the table the explorer shows is, markup for markup, the one in the repr."""
    result = call(ex, "sales_records", {"region": "south", "limit": 30})
    assert isinstance(result, ToolResult)
    (view,) = find(ex.widget, "mcpnb-result")
    shown = find(view, "mcpnb-result-table")[0].value
    assert "30 rows × 5 columns" in shown
    assert "… 10 more rows" in shown  # the preview: the first 20
    assert shown in result._repr_mimebundle_()["text/html"]
    plain = result._repr_mimebundle_()["text/plain"]
    assert plain.splitlines()[0].startswith("30 rows × 5 columns")


def test_schema_violation_is_refused_before_sending(ex):
    ex.select("sales_records")
    ex.form.set_value({"region": "north", "limit": 0})
    before = len(ex.calls())
    assert ex.call() is None
    assert "Not sent" in ex.validation.value
    assert "limit: must be ≥ 1" in ex.validation.value
    assert "mcpnb-invalid" in ex.validation._dom_classes
    assert ex.status.value == "not sent"
    ex.form.set_value({"region": "north", "limit": "lots"})
    assert ex.validate() == ["limit: not an integer"]
    time.sleep(0.1)
    assert len(ex.calls()) == before  # nothing reached the session
    ex.form.set_value({"limit": 2})
    assert ex.validate() == []
    assert "✓" in ex.validation.value


def test_required_argument_missing_is_refused(ex):
    ex.select("add")
    ex.form.set_value({"a": 1})
    assert ex.call() is None
    assert "b: is required" in ex.validation.value


def test_slow_count_progress_and_cancel(ex, session):
    ex.select("slow_count")
    ex.form.set_value({"steps": 100, "delay": 0.05})
    assert ex.call() is not None
    assert ex.busy
    assert not find(ex.widget, "mcpnb-cancel")[0].disabled
    assert find(ex.widget, "mcpnb-call")[0].disabled
    wait_for(lambda: ex.progress.value >= 2)
    assert ex.progress.max == 100
    assert "mcpnb-progress" in ex.progress._dom_classes
    find(ex.widget, "mcpnb-cancel")[0].click()
    result = ex.wait()
    assert isinstance(result, McpError)
    assert result.kind == "cancelled"
    view = find(ex.widget, "mcpnb-result")[0]
    assert find(view, "mcpnb-cancelled")
    assert "Cancelled" in html_of(view)
    assert ex.status.value.startswith("cancelled")
    entry = wait_for(lambda: next((e for e in ex.calls() if e["name"] == "slow_count"), None))
    assert entry["outcome"] == "cancelled"
    assert entry["duration"] < 4  # it did not run to the end
    assert find(ex.widget, "mcpnb-cancel")[0].disabled
    # The connection is fine afterwards.
    assert call(ex, "add", {"a": 1, "b": 1}).structured_content == {"result": 2}


def test_fail_shows_an_error_box(ex):
    result = call(ex, "fail", {"message": "broken " + HOSTILE})
    assert result.is_error
    view = find(ex.widget, "mcpnb-result")[0]
    (box,) = find(view, "mcpnb-error")
    assert "The tool reported an error" in box.value
    assert escape("broken " + HOSTILE) in box.value
    assert ex.status.value.startswith("tool error")
    assert_inert(ex.widget)


def test_echo_of_hostile_text_is_escaped(ex):
    result = call(ex, "echo", {"text": HOSTILE + SCRIPT})
    assert result.text == HOSTILE + SCRIPT
    view = find(ex.widget, "mcpnb-result")[0]
    text = html_of(view)
    assert "&lt;img src=x onerror=alert(1)&gt;&lt;script&gt;" in text
    assert "<img" not in text
    assert "<script" not in text
    assert_inert(ex.widget)


def test_a_tool_added_at_run_time_appears(ex):
    ex.select("add_tool")
    ex.form.set_value({"name": "fresh_tool"})
    result = call(ex, "add_tool", {"name": "fresh_tool"})
    assert "Added" in result.text
    wait_for(lambda: "fresh_tool" in ex.tool_names)
    assert ex.selected.name == "add_tool"  # the selection survives the refresh
    assert ex.form.value == {"name": "fresh_tool"}
    ex.search.value = "fresh"
    assert ex.tool_names == ["fresh_tool"]
    assert call(ex, "fresh_tool", {"text": "hi"}).text == "hi"


def test_history_rerun_copy_and_frame(ex):
    call(ex, "add", {"a": 2, "b": 3})
    rows = wait_for(lambda: history_rows(ex))
    assert len(rows) == 1
    history_click(ex, 0, "mcpnb-copy")
    (code,) = find(ex.widget, "mcpnb-code")
    assert code.value == "session.call_tool(\"add\", {'a': 2, 'b': 3})"
    assert code.layout.display != "none"

    ex.select("echo")  # re-run goes back to the tool of the entry
    history_click(ex, 0, "mcpnb-rerun")
    assert ex.selected.name == "add"
    assert ex.form.value == {"a": 2, "b": 3}
    assert ex.wait().structured_content == {"result": 5}
    wait_for(lambda: len(history_rows(ex)) == 2)

    frame = ex.history_frame()
    assert list(frame["name"]) == ["add", "add"]
    find(ex.widget, "mcpnb-history-frame")[0].click()
    assert ex.frame_output.outputs


def test_history_is_numbered_as_calls_counts_and_the_picker_follows_each_new_call(ex):
    # issue #38: numbered newest-first (1 = the last call) while ex.calls() counts oldest first,
    # and the picker stayed on whatever it had picked
    import re

    def numbers():
        row = r'<tr class="mcpnb-history-entry"[^>]*><td[^>]*>(\d+)</td>'
        return [int(n) for n in re.findall(row, ex._history.table.value)]

    for a in range(3):
        call(ex, "add", {"a": a, "b": 100})
    wait_for(lambda: numbers() == [2, 1, 0])
    assert [c["arguments"]["a"] for c in ex.calls()] == [0, 1, 2]  # row n is ex.calls()[n]
    assert ex._history.pick.label.startswith("2  ")
    assert "a=2, b=100" in ex._history.pick.label
    ex._history.choose(2)  # the user picks the oldest...
    assert ex._history.selected()["arguments"] == {"a": 0, "b": 100}
    call(ex, "add", {"a": 3, "b": 100})  # ...and a new call moves the picker to it
    wait_for(lambda: numbers() == [3, 2, 1, 0])
    wait_for(lambda: "a=3, b=100" in ex._history.pick.label)
    assert ex._history.selected()["arguments"] == {"a": 3, "b": 100}


def test_python_code_is_a_literal():
    code = python_code("t", {"a": None, "b": True, "c": [1.5, "x"], "d": {"e": "'q'"}})
    assert code == "session.call_tool(\"t\", {'a': None, 'b': True, 'c': [1.5, 'x'], 'd': {'e': \"'q'\"}})"
    assert (
        python_code("t", "<redacted>") == 'session.call_tool("t", {...})  # the arguments were not recorded'
    )
    namespace = {}
    exec("args = " + code[len('session.call_tool("t", ') : -1], namespace)
    assert namespace["args"] == {"a": None, "b": True, "c": [1.5, "x"], "d": {"e": "'q'"}}


# --- a hostile server ------------------------------------------------------------------------------------


class HostileSession:
    """What the explorer uses of a Session (model, name, spawn, acall_tool, history_frame), hostile."""

    def __init__(self, result):
        self.name = SCRIPT
        self.model = SessionModel()
        self._engine = get_engine()
        self.spawn = self._engine.spawn
        self.result = result
        self.calls = []
        evil = Tool.from_dict(
            {
                "name": "evil<b>",
                "title": HOSTILE,
                "description": SCRIPT + HOSTILE,
                "annotations": {"title": SCRIPT, "destructiveHint": True},
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "x<img": {
                            "type": "string",
                            "description": HOSTILE,
                            "title": SCRIPT,
                            "default": HOSTILE,
                        },
                        "pick": {"enum": [HOSTILE, SCRIPT]},
                    },
                },
            }
        )
        self.model.update(tools=[evil])

    async def acall_tool(self, name, arguments=None, **options):
        self.calls.append((name, arguments))
        if isinstance(self.result, BaseException):
            raise self.result
        return self.result

    def history_frame(self):
        import pandas as pd

        return pd.DataFrame({"name": [SCRIPT]})


def hostile_result():
    return ToolResult.from_dict(
        {
            "isError": True,
            "content": [
                {"type": "text", "text": HOSTILE + SCRIPT},
                {"type": "image", "mimeType": "image/svg+xml", "data": _b64(SVG)},
                {"type": "image", "mimeType": "image/png", "data": "javascript:alert(1)"},
                {"type": "image", "mimeType": "image/png", "data": PNG},
                {"type": "audio", "mimeType": "audio/wav", "data": "UklGRg=="},
                {"type": "audio", "mimeType": "text/html", "data": _b64(SCRIPT)},
                {
                    "type": "resource_link",
                    "uri": "javascript:alert(1)",
                    "name": HOSTILE,
                    "description": SCRIPT,
                },
                {"type": "resource_link", "uri": "https://bank.example@evil.example/" + HOSTILE, "name": "x"},
                {"type": "resource", "resource": {"uri": "file:///" + HOSTILE, "text": SCRIPT}},
                {
                    "type": "resource",
                    "resource": {"uri": "x:" + SCRIPT, "blob": _b64(SVG), "mimeType": SCRIPT},
                },
                {"type": SCRIPT, "value": HOSTILE},
            ],
            "structuredContent": {"rows": [{SCRIPT: HOSTILE, "n": {"deep": SCRIPT}}]},
        }
    )


def _b64(text: str) -> str:
    import base64

    return base64.b64encode(text.encode()).decode()


def test_hostile_tool_list_form_and_result_are_inert():
    session = HostileSession(hostile_result())
    ex = explorer(session)
    try:
        assert ex.tool_names == ["evil<b>"]
        ex.select("evil<b>")
        assert_inert(ex.widget)
        assert "destructive" in html_of(ex.widget)
        assert find(ex.form.widget, "mcpnb-field-x_img")
        assert ex.call() is not None
        result = ex.wait()
        assert result.is_error
        assert session.calls == [("evil<b>", {"x<img": HOSTILE})]
        view = find(ex.widget, "mcpnb-result")[0]
        images = [w for w in walk(view) if isinstance(w, W.Image)]
        assert len(images) == 1  # only the PNG
        assert images[0].format == "png"
        assert [w.format for w in walk(view) if isinstance(w, W.Audio)] == ["wav"]
        assert "&lt;svg" in html_of(view)  # SVG as source text
        assert find(view, "mcpnb-error")
        assert find(view, "mcpnb-result-table")
    finally:
        ex.show_history_frame()
        assert_inert(ex.widget)
        ex.close()


def test_client_refusal_is_shown_in_the_validation_area():
    session = HostileSession(
        McpError("invalid", "arguments for tool 'evil' do not match " + SCRIPT, code=-32602)
    )
    ex = explorer(session)
    try:
        ex.select("evil<b>")
        ex.call()
        result = ex.wait()
        assert isinstance(result, McpError)
        assert "Not sent" in ex.validation.value
        assert escape(SCRIPT) in ex.validation.value
        view = find(ex.widget, "mcpnb-result")[0]
        assert "McpError [invalid, code -32602]" in find(view, "mcpnb-error")[0].value
        assert_inert(ex.widget)
    finally:
        ex.close()


def test_tool_removed_from_the_server_clears_the_selection():
    session = HostileSession(hostile_result())
    ex = explorer(session)
    try:
        ex.select("evil<b>")
        session.model.update(tools=[Tool.from_dict({"name": "other", "inputSchema": {"type": "object"}})])
        assert ex.tool_names == ["other"]
        assert ex.selected is None
        assert "no longer offered" in ex.title.value
        assert ex.call_button.disabled
        with pytest.raises(KeyError):
            ex.select("evil<b>")
    finally:
        ex.close()


@pytest.mark.parametrize(
    "result",
    [
        McpError("timeout", SCRIPT, code=-32001),
        McpError("cancelled", HOSTILE),
        RuntimeError(HOSTILE),
        ToolResult.from_dict({"content": []}),
        ToolResult.from_dict({"content": [], "structuredContent": [1, SCRIPT, None]}),
        ToolResult.from_dict({"content": [], "structuredContent": {"k": HOSTILE}}),
    ],
)
def test_result_widget_kinds_are_inert(result):
    widget = result_widget(result)
    assert "mcpnb-result" in widget._dom_classes
    assert_inert(widget)
    if isinstance(result, BaseException):
        assert find(widget, "mcpnb-error")
    if isinstance(result, McpError) and result.kind == "timeout":
        assert "McpError [timeout, code -32001]" in html_of(widget)


# --- _html ----------------------------------------------------------------------------------------------


def test_escape():
    assert escape(HOSTILE) == "&lt;img src=x onerror=alert(1)&gt;"
    assert escape("\"'") == "&#34;&#39;"
    assert escape(None) == ""


def test_escaped_text_is_a_type_so_it_is_never_escaped_twice_nor_forgotten():
    once = escape(HOSTILE)
    assert isinstance(once, Markup)
    assert escape(once) == once  # already escaped: kept as it is
    # A builder escapes a plain string and keeps markup: the server's text cannot become a tag.
    row = table([(HOSTILE, once), ("badge", state_badge("ready"))])
    assert "<img" not in row
    assert row.count("&lt;img") == 2
    assert '<span class="mcpnb-badge"' in row
    assert "&amp;lt;" not in row


def test_base64_with_line_breaks_is_one_rule_for_reprs_and_widgets():
    wrapped = "\n".join(PNG[i : i + 8] for i in range(0, len(PNG), 8))
    expected = "data:image/png;base64," + PNG
    assert safe_image_src(wrapped, "image/png") == expected
    block = content_block_html({"type": "image", "mimeType": "image/png", "data": wrapped})
    assert f'src="{expected}"' in block


@pytest.mark.parametrize(
    ("value", "mime", "expected"),
    [
        ("javascript:alert(1)", None, None),
        ("JavaScript:alert(1)", "image/png", None),
        ("http://example.com/a.png", None, None),
        ("https://example.com/a.png", None, "https://example.com/a.png"),
        ("https://example.com/a.svg", None, None),
        ("https://example.com/a.png", "image/svg+xml", None),
        ('https://example.com/a.png" onerror="alert(1)', None, None),
        ("https://example.com/\u202egnp.png", None, None),
        ("data:image/svg+xml;base64," + _b64(SVG), None, None),
        ("data:text/html;base64," + _b64(SCRIPT), None, None),
        ("data:image/png;base64," + PNG, None, "data:image/png;base64," + PNG),
        ("data:image/png;base64,not base64!", None, None),
        (PNG, "image/png", "data:image/png;base64," + PNG),
        (PNG, "image/svg+xml", None),
        (_b64(SVG), None, None),
        (None, "image/png", None),
    ],
)
def test_safe_image_src(value, mime, expected):
    assert safe_image_src(value, mime) == expected


def test_display_url_shows_the_real_host():
    html = display_url("https://bank.example@evil.example/login?next=" + HOSTILE)
    assert '<b class="mcpnb-url-host" style="font-size:1.1em">evil.example</b>' in html
    assert "user name, not the site" in html
    assert "<img" not in html
    assert "href" not in html
    idn = display_url("https://exаmple.com/")  # a Cyrillic "а"
    assert "xn--" in idn
    assert "internationalised" in idn
    hidden = display_url("https://example.com/\u202etxt.exe")
    assert "%E2%80%AE" in hidden
    assert "javascript" in display_url("javascript:alert(1)")
    assert "<a" not in display_url("javascript:alert(1)")
    assert "not a valid URL" in display_url("http://[oops")


def test_html_table_escapes_every_cell():
    html = html_table([{SCRIPT: HOSTILE, "n": {"x": SCRIPT}}, {"extra": 1}], css_class="t<")
    assert "<script" not in html
    assert "<img" not in html
    assert 'class="t&lt;"' in html
    assert ">extra<" in html
    assert "&lt;script&gt;" in html
    assert html_table({"k": 1}).count("<tr>") == 2
    assert "… 3 more rows" in html_table([{"a": i} for i in range(5)], max_rows=2)
    assert ">value<" in html_table([1, 2])


def test_a_closed_session_leaves_the_explorer_drawn_with_a_closed_badge(session, ex):
    """Issue #29: the explorer keeps its tools and last result when its session closes, marked closed."""
    call(ex, "add", {"a": 2, "b": 3})
    session.close()
    header = find(ex.widget, "mcpnb-explorer-header")[0]
    # the model's observers run on the observer thread, just after the change (issue #28)
    wait_until(lambda: "mcpnb-closed" in header.value)
    assert ">closed<" in header.value
    assert "closed" in repr(ex)
    assert set(ex.tool_names) == DEMO_TOOLS  # still drawn: the list, the form, the result
    assert "5" in html_of(ex.result_box)
    assert ">closed<" in ex.snapshot_html()
