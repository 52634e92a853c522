"""Every walk of a server's schema is bounded, and frames keep integers exact (issue #35, items 3 and 8).

``tests/servers/walks_server.py`` is a real stdio server whose 1.7 KB schemas expand to 4**10
nodes without a cycle (each definition refers to the next one four times). Before the bound, the
explorer's form built 393,000 widgets for it (92 s, 1 GB), ``to_dataframe()`` of a matching result
typed a million schema columns, and the magics' type lookup never ended. Each test holds a hang
guard (``pytest.mark.timeout``) so the old code fails by it rather than hanging the run; the
assertions are on counts (widget models, cells), never on time.

The same server sends integers past 2**53 and past int64: the frame, ``map_tool``'s column and the
picture must all hold them exactly (pandas alone reads a column of integers with a gap as float64,
and 9007199254740993 becomes 9007199254740992.0).
"""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest

import mcp_notebook
from mcp_notebook.protocol._schema_walk import MAX_SCHEMA_NODES, NOWHERE, NodeBudget, local_target
from tests.conftest import python_server
from tests.servers.walks_server import BEYOND_FLOAT, BEYOND_INT64, VALUE_LEVELS, fanned

from .widget_helpers import widget_models

pd = pytest.importorskip("pandas")

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

SERVER = python_server("walks_server.py")
#: what the bound allows: each node of the form's walk is a handful of widget models at most
MAX_FORM_WIDGETS = 6 * MAX_SCHEMA_NODES


def _widget_models() -> int:
    return widget_models()


@pytest.fixture(scope="module")
def session() -> Any:
    with mcp_notebook.connect(SERVER, show_progress=False) as s:
        yield s


# --- item 3: schema walks ---------------------------------------------------------------------


@pytest.mark.timeout(120)  # hang guard: the unbounded form takes minutes and a gigabyte
def test_the_explorer_form_of_a_fan_out_schema_is_bounded_and_edits_the_rest_as_json(session: Any) -> None:
    pytest.importorskip("ipywidgets")
    from mcp_notebook.widgets import explorer

    from .widget_helpers import find

    ex = explorer(session)
    try:
        before = _widget_models()
        ex.select("fanout")
        built = _widget_models() - before
        assert built <= MAX_FORM_WIDGETS, f"{built:,} widget models for one form"
        assert ex.form is not None
        cut = [
            field
            for field in find(ex.form.widget, "mcpnb-json-field")
            if "too large for a form" in field.placeholder
        ]
        assert cut, "the part past the bound is not a JSON editor"
        assert f"past {MAX_SCHEMA_NODES:,} nodes" in ex.form.widget.children[1].value
        # The JSON editor takes the rest of the value: what is typed there is sent as it is.
        deep = {"a": {"b": "x"}}
        cut[0].value = json.dumps(deep)
        assert deep in _values(ex.form.value)
        # Filling the form again (the explorer does on "reuse") is one more bounded build.
        before = _widget_models()
        ex.form.set_value({"root": fanned(3)})
        assert _widget_models() - before <= MAX_FORM_WIDGETS
    finally:
        ex.close()


def _values(value: Any) -> list[Any]:
    """Every object inside ``value``."""
    found = [value]
    if isinstance(value, dict):
        for item in value.values():
            found.extend(_values(item))
    return found


@pytest.mark.timeout(120)  # hang guard: the unbounded schema walk types a million columns
def test_a_fan_out_result_becomes_a_bounded_frame_that_keeps_the_rest_as_json(session: Any) -> None:
    result = session.call_tool("fanout")
    df = result.to_dataframe()
    assert df.shape[0] == 1
    assert df.shape[1] <= MAX_SCHEMA_NODES, f"{df.shape[1]:,} columns from one record"
    # Nothing is lost: each cell past the bound holds its object as JSON text.
    rebuilt: dict[str, Any] = {}
    for column, cell in df.iloc[0].items():
        value = json.loads(cell) if isinstance(cell, str) else cell
        node = rebuilt
        *parents, leaf = str(column).split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    assert rebuilt == {"root": fanned(VALUE_LEVELS)}
    # The picture reads the same columns as the frame.
    text = result._repr_mimebundle_()["text/plain"]
    assert f"{df.shape[1]:,} columns" in text.splitlines()[0], text.splitlines()[0]


@pytest.mark.timeout(120)  # hang guard: the unbounded type lookup visits 4**12 branches
def test_the_magics_type_lookup_through_fan_out_branches_is_bounded() -> None:
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "mcp_notebook")
    magics = shell.magics_manager.registry["McpMagics"]
    try:
        shell.run_line_magic("mcp", "connect fanmagic -- " + " ".join(SERVER))
        result = shell.run_line_magic("mcp", "call choose x=5")
        assert result.structured_content == {"result": 5}  # typed as the branches say: an integer
    finally:
        magics.close_all()


@pytest.mark.timeout(120)  # hang guard
def test_a_long_default_list_is_one_json_editor_holding_all_of_it() -> None:
    pytest.importorskip("ipywidgets")
    from mcp_notebook.widgets import SchemaForm

    rows = [{"a": f"x{i}"} for i in range(5_000)]
    item = {"type": "object", "properties": {"a": {"type": "string"}}}
    schema = {"type": "object", "properties": {"rows": {"type": "array", "items": item, "default": rows}}}
    before = _widget_models()
    form = SchemaForm(schema)
    assert _widget_models() - before <= MAX_FORM_WIDGETS
    assert form.value == {"rows": rows}
    assert form.errors() == []


@pytest.mark.timeout(60)  # hang guard: a fetch of the listener's URL waits for an answer forever
def test_the_explorer_form_never_fetches_a_reference_outside_the_schema() -> None:
    pytest.importorskip("ipywidgets")
    from mcp_notebook.widgets import explorer

    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0)  # accept() below only looks: nothing may be waiting
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/schema.json"
    try:
        with mcp_notebook.connect(python_server("walks_server.py", url), show_progress=False) as s:
            ex = explorer(s)
            try:
                ex.select("remote")
                assert ex.form is not None
                assert "refers outside itself" in ex.form.widget.children[1].value
                ex.form.set_value({"x": 1, "n": "one"})
                # judged here, the schema not fetched: the field's error, and the reference named
                # as the call would be refused for it (protocol/_json_schema)
                messages = ex.validate()
                assert "n: not an integer" in messages
                assert any("refers outside itself" in m and "never fetched" in m for m in messages)
            finally:
                ex.close()
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected: the schema was never fetched
    finally:
        listener.close()


@pytest.mark.timeout(120)  # hang guard
def test_values_are_shown_exactly_even_where_the_first_build_was_cut() -> None:
    pytest.importorskip("ipywidgets")
    from mcp_notebook.widgets import SchemaForm

    from .servers.walks_server import DEFINITIONS

    # "big" spends the first build's budget, so the check of "rows"' default is cut short there;
    # a later fill (its own budget) must still not put 7 into a text field as "7".
    item = {"type": "object", "properties": {name: {"type": "string"} for name in "stuvw"}}
    rows = {"type": "array", "items": item, "default": [{"s": "x"}]}
    big = {"$ref": "#/$defs/d0"}
    schema = {"type": "object", "properties": {"big": big, "rows": rows}, "$defs": DEFINITIONS}
    form = SchemaForm(schema)
    value = {"rows": [{"s": 7}]}
    form.set_value(value)
    assert form.value == value


@pytest.mark.parametrize(
    ("ref", "found"),
    [
        ("#", "root"),
        ("#/$defs/a", 1),
        ("#/$defs/a~1b", 2),
        ("#/$defs/c%20d", 3),
        ("#/list/1", "y"),
        ("#/$defs/missing", NOWHERE),
        ("#/list/9", NOWHERE),
        ("#anchor", NOWHERE),
        ("https://example.invalid/schema.json", NOWHERE),
        ("file:///etc/passwd", NOWHERE),
        ("other.json#/x", NOWHERE),
    ],
)
def test_references_resolve_only_inside_the_document(ref: str, found: Any) -> None:
    root = {"$defs": {"a": 1, "a/b": 2, "c d": 3}, "list": ["x", "y"]}
    assert local_target(root, ref) == (root if found == "root" else found)


def test_a_budget_refuses_all_or_nothing_and_remembers_it() -> None:
    budget = NodeBudget(10)
    assert budget.take(7)
    assert not budget.take(4)  # refused: nothing spent
    assert budget.exceeded
    assert budget.take(3)
    assert budget.remaining == 0
    assert not budget.take()


# --- item 8: exact integers -------------------------------------------------------------------


def test_integers_past_float_and_int64_stay_exact_in_the_frame_and_the_picture(session: Any) -> None:
    result = session.call_tool("big_ints")
    df = result.to_dataframe()
    assert df["exact"].tolist() == [BEYOND_FLOAT, 2]
    assert df["huge"].tolist() == [BEYOND_INT64, 3]
    assert str(df["gappy"].dtype) == "Int64"  # integers with a gap: nullable, never float64
    assert df.loc[0, "gappy"] == BEYOND_FLOAT
    assert df.loc[1, "gappy"] is pd.NA
    for column in df.columns:
        assert str(df[column].dtype) not in ("float64", "Float64"), column
    html = result._repr_mimebundle_()["text/html"]
    assert str(BEYOND_FLOAT) in html
    assert str(BEYOND_INT64) in html
    assert str(BEYOND_FLOAT - 1) not in html


def test_map_tool_keeps_integers_exact(session: Any) -> None:
    rows = pd.DataFrame({"n": pd.Series([BEYOND_FLOAT, 1.5, BEYOND_INT64], dtype=object)})
    frame = session.map_tool("echo", rows, progress=False)
    assert frame["result"].tolist() == [BEYOND_FLOAT, 1.5, BEYOND_INT64]
    gaps = pd.DataFrame({"n": pd.Series([BEYOND_FLOAT, None], dtype=object)})
    frame = session.map_tool("echo", gaps, progress=False)
    assert str(frame["result"].dtype) == "Int64"
    assert frame.loc[0, "result"] == BEYOND_FLOAT
    assert frame.loc[1, "result"] is pd.NA
    mixed = pd.DataFrame({"n": pd.Series([BEYOND_FLOAT, 1.5], dtype=object)})
    frame = session.map_tool("echo", mixed, progress=False)
    assert frame["result"].tolist() == [BEYOND_FLOAT, 1.5]


def test_a_csv_column_of_integers_with_a_gap_stays_exact(session: Any) -> None:
    df = session.read_resource("walks://ids.csv").to_dataframe()
    assert df.attrs["rule"] == "csv"
    assert str(df["id"].dtype) == "Int64"
    assert df.loc[0, "id"] == BEYOND_FLOAT
    assert df.loc[1, "id"] is pd.NA
    assert df["n"].tolist() == [1, 2, 3]
