"""Results that read as data (issue #20): every shape drawn through the public path, in both MIME types.

``ToolResult.from_dict(...)._repr_mimebundle_()`` and ``ResourceContents.from_dict(...)`` are what a
notebook shows. A table shape is a ``table.mcpnb-result-table`` of its first rows with a caption
stating its size (``2,000 rows × 5 columns``), the same columns and size as ``to_dataframe()``;
anything else is its blocks, cut, with the full size stated. Whatever the server sends (hostile keys,
terminal escape codes, 10 MB, 100,000 rows), both pictures stay bounded and no server string becomes
markup.
"""

from __future__ import annotations

import base64
import csv
import dataclasses
import io
import json
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from typing import Any

import pytest

import mcp_notebook
from mcp_notebook import DisplayOptions, ResourceContents, ToolResult
from mcp_notebook.display._pictures import MAX_TEXT_LINES

# --- reading the pictures -----------------------------------------------------------------------


@dataclasses.dataclass
class Picture:
    """What an HTML picture holds: the result table's headers and rows (as the browser shows their
    text), the caption, the "more" note, the folded sections, and every tag and attribute."""

    headers: list[str] = dataclasses.field(default_factory=list)
    rows: list[list[str]] = dataclasses.field(default_factory=list)
    tables: int = 0
    caption: str = ""
    more: str = ""
    envelope: str = ""
    summaries: list[str] = dataclasses.field(default_factory=list)
    text: str = ""
    tags: list[tuple[str, list[tuple[str, str | None]]]] = dataclasses.field(default_factory=list)


class _Reader(HTMLParser):
    """Reads a picture as a browser would (character references decoded); of the result tables, the
    first one's header and body rows."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.picture = Picture()
        self._where: list[str] = []  # the open divs and summaries: whose text they keep apart, if any
        self._in_table = False
        self._in_body = False
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.picture.tags.append((tag, attrs))
        classes = (dict(attrs).get("class") or "").split()
        if tag == "table" and "mcpnb-result-table" in classes:
            self.picture.tables += 1
            self._in_table = self.picture.tables == 1
        if tag == "div":  # every div, so that each end tag closes its own
            kept = [c for c in classes if c in ("mcpnb-caption", "mcpnb-more", "mcpnb-envelope")]
            self._where.append(kept[0] if kept else self._where[-1] if self._where else "")
        if tag == "summary":
            self._where.append("summary")
            self.picture.summaries.append("")
        if self._in_table:
            if tag == "tbody":
                self._in_body = True
            elif tag == "tr" and self._in_body:
                self.picture.rows.append([])
            elif tag in ("th", "td"):
                self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("th", "td") and self._cell is not None:
            cell = "".join(self._cell)
            (self.picture.rows[-1] if self._in_body else self.picture.headers).append(cell)
            self._cell = None
        if tag == "table":
            self._in_table = self._in_body = False
        if tag in ("div", "summary") and self._where:
            self._where.pop()

    def handle_data(self, data: str) -> None:
        self.picture.text += data
        if self._cell is not None:
            self._cell.append(data)
        where = self._where[-1] if self._where else None
        if where == "mcpnb-caption":
            self.picture.caption += data
        elif where == "mcpnb-more":
            self.picture.more += data
        elif where == "mcpnb-envelope":
            self.picture.envelope += data
        elif where == "summary":
            self.picture.summaries[-1] += data


def read_html(html: str) -> Picture:
    reader = _Reader()
    reader.feed(str(html))  # a plain str: slices of a Markup are Markup, and would escape what they meet
    reader.close()
    return reader.picture


@dataclasses.dataclass
class TextTable:
    size: str
    header: str
    rows: list[str]
    notes: list[str]


def read_text(text: str) -> TextTable:
    """A text picture's table: the size line, the header line, the row lines and the notes after."""
    lines = text.split("\n")  # a table of no columns has an empty header line
    start = next(i for i, line in enumerate(lines) if re.search(r"\brows? × ", line))
    rows: list[str] = []
    notes: list[str] = []
    continued = False
    for line in lines[start + 2 :]:
        if continued:  # the row above has a cell that goes on (psql's " +"): the same row, a new line
            rows[-1] += "\n" + line
        else:
            (notes if line.startswith(("… ", "also: ")) or notes else rows).append(line)
        continued = line.endswith(" +") and not notes
    return TextTable(lines[start], lines[start + 1], rows, notes)


def result_bundle(raw: dict[str, Any]) -> tuple[str, str]:
    bundle = ToolResult.from_dict(raw)._repr_mimebundle_()
    return str(bundle["text/html"]), bundle["text/plain"]


def contents_bundle(*contents: dict[str, Any]) -> tuple[str, str]:
    bundle = ResourceContents.from_dict({"contents": list(contents)})._repr_mimebundle_()
    return str(bundle["text/html"]), bundle["text/plain"]


def size(rows: int, columns: int) -> str:
    return f"{rows:,} row{'s' * (rows != 1)} × {columns:,} column{'s' * (columns != 1)}"


# --- the shapes ---------------------------------------------------------------------------------

SALES = [
    {"date": "2025-01-01", "region": "north", "product": "gizmo", "units": 4, "price": 2.5},
    {"date": "2025-01-01", "region": "south", "product": "widget", "units": 7, "price": 1.25},
    {"date": "2025-01-02", "region": "east", "product": "gadget", "units": 1, "price": 9.0},
]
SALES_COLUMNS = ["date", "region", "product", "units", "price"]
SALES_FIRST = ["2025-01-01", "north", "gizmo", "4", "2.5"]
SALES_CSV = "date,region,product,units,price\n" + "".join(
    ",".join(str(v) for v in record.values()) + "\n" for record in SALES
)


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


@dataclasses.dataclass
class Case:
    """A result (``raw``) or a resource's one content (``content``), and the table it must draw."""

    id: str
    raw: dict[str, Any] | None = None
    content: dict[str, Any] | None = None
    headers: list[str] = dataclasses.field(default_factory=list)
    first: list[str] | None = None
    size: str = ""
    source: str = "structured content"
    #: a flat object: drawn as key/value rows, its keys the DataFrame's columns
    key_value: bool = False

    def bundle(self) -> tuple[str, str]:
        return result_bundle(self.raw) if self.raw is not None else contents_bundle(self.content or {})

    def to_dataframe(self) -> Any:
        if self.raw is not None:
            return ToolResult.from_dict(self.raw).to_dataframe()
        return ResourceContents.from_dict({"contents": [self.content]}).to_dataframe()


TABLES = [
    Case(
        "records",
        raw={"content": [text_block(json.dumps(SALES))], "structuredContent": SALES},
        headers=SALES_COLUMNS,
        first=SALES_FIRST,
        size=size(3, 5),
    ),
    Case(
        "wrapper",
        raw={"structuredContent": {"result": SALES}},
        headers=SALES_COLUMNS,
        first=SALES_FIRST,
        size=size(3, 5),
    ),
    Case(
        "wrapper-with-envelope",
        raw={"structuredContent": {"items": SALES[:2], "total": 240, "next": "page-2"}},
        headers=SALES_COLUMNS,
        first=SALES_FIRST,
        size=size(2, 5),
    ),
    Case(
        "columns",
        raw={"structuredContent": {"day": [1, 2, 3, 4], "units": [4, 7, 1, 0]}},
        headers=["day", "units"],
        first=["1", "4"],
        size=size(4, 2),
    ),
    Case(
        "values",
        raw={"structuredContent": [3, "three", None]},
        headers=["value"],
        first=["3"],
        size=size(3, 1),
    ),
    Case("scalar", raw={"structuredContent": 42}, headers=["value"], first=["42"], size=size(1, 1)),
    Case(
        "flat-object",
        raw={"structuredContent": {"region": "north", "units": 12, "open": True, "manager": None}},
        headers=["region", "units", "open", "manager"],
        first=["region", "north"],
        size=size(1, 4),
        key_value=True,
    ),
    Case(
        "json-text-array",
        raw={"content": [text_block(json.dumps(SALES))]},
        headers=SALES_COLUMNS,
        first=SALES_FIRST,
        size=size(3, 5),
        source="JSON text",
    ),
    Case(
        "json-text-object-per-block",
        raw={"content": [text_block(json.dumps(r)) for r in SALES]},
        headers=SALES_COLUMNS,
        first=SALES_FIRST,
        size=size(3, 5),
        source="JSON text",
    ),
    Case(
        "json-text-object",
        raw={"content": [text_block('{"status": "ok", "count": 2}')]},
        headers=["status", "count"],
        first=["status", "ok"],
        size=size(1, 2),
        source="JSON text",
        key_value=True,
    ),
    Case(
        "ragged-records",
        raw={"structuredContent": [{"a": 1, "b": 2}, {"c": 3}, {"b": 4, "d": 5}]},
        headers=["a", "b", "c", "d"],
        first=["1", "2", "", ""],
        size=size(3, 4),
    ),
    Case(
        "nested-values",
        raw={
            "structuredContent": [
                {"id": 1, "meta": {"a": 1, "b": {"c": "deep"}}, "tags": [1, 2], "empty": {}},
                {"id": 2, "meta": {"a": 2}, "tags": [], "extra": {"x": None}},
            ]
        },
        headers=["id", "meta.a", "meta.b.c", "tags", "empty", "extra.x"],
        first=["1", "1", "deep", "[1,2]", "{}", ""],
        size=size(2, 6),
    ),
    Case(
        "nested-object",
        raw={"structuredContent": {"name": "gizmo", "stock": {"north": 3, "south": 0}, "sizes": ["s", "m"]}},
        headers=["name", "stock.north", "stock.south", "sizes"],
        first=["name", "gizmo"],
        size=size(1, 4),
        key_value=True,
    ),
    Case("empty-records", raw={"structuredContent": []}, headers=[], size=size(0, 0)),
    Case("empty-wrapper", raw={"structuredContent": {"result": []}}, headers=[], size=size(0, 0)),
    # an empty list beside other fields is a field of one object, not its records (issue #29)
    Case(
        "empty-list-field",
        raw={"structuredContent": {"result": [], "total": 0}},
        headers=["result", "total"],
        size=size(1, 2),
        key_value=True,
    ),
    Case(
        "empty-columns",
        raw={"structuredContent": {"a": [], "b": []}},
        headers=["a", "b"],
        size=size(0, 2),
    ),
    Case(
        "csv",
        content={"uri": "demo://data/sales.csv", "mimeType": "text/csv", "text": SALES_CSV},
        headers=SALES_COLUMNS,
        first=SALES_FIRST,
        size=size(3, 5),
        source="CSV",
    ),
    Case(
        "csv-by-extension-quoted-blank-lines",
        content={"uri": "file:///q.CSV", "text": 'name,note\n\n"a, b","two\nlines"\n\nc,d\n'},
        headers=["name", "note"],
        first=["a, b", "two\nlines"],
        size=size(2, 2),
        source="CSV",
    ),
    Case(
        "csv-short-row",
        content={"uri": "file:///s.csv", "text": "a,b,c\n1\n1,2,3\n"},
        headers=["a", "b", "c"],
        first=["1", "", ""],
        size=size(2, 3),
        source="CSV",
    ),
    Case(
        "csv-header-only",
        content={"uri": "file:///h.csv", "text": "a,b\n"},
        headers=["a", "b"],
        size=size(0, 2),
        source="CSV",
    ),
    Case(
        "tsv",
        content={
            "uri": "x://t",
            "mimeType": "text/tab-separated-values; charset=utf-8",
            "text": "a\tb\n1\t2\n",
        },
        headers=["a", "b"],
        first=["1", "2"],
        size=size(1, 2),
        source="TSV",
    ),
    Case(
        "json-resource",
        content={"uri": "demo://region/north", "mimeType": "application/json", "text": json.dumps(SALES)},
        headers=SALES_COLUMNS,
        first=SALES_FIRST,
        size=size(3, 5),
        source="JSON",
    ),
    Case(
        "json-resource-object",
        content={"uri": "x://summary", "text": '{"region": "north", "total": 12}'},
        headers=["region", "total"],
        first=["region", "north"],
        size=size(1, 2),
        source="JSON",
        key_value=True,
    ),
]


@pytest.mark.parametrize("case", TABLES, ids=lambda c: c.id)
def test_a_table_shape_is_drawn_as_a_table_with_its_size(case: Case) -> None:
    html, _ = case.bundle()
    picture = read_html(html)
    assert picture.tables == 1
    if case.key_value:
        assert picture.headers == ["key", "value"]
        assert [row[0] for row in picture.rows] == case.headers
    else:
        assert picture.headers == case.headers
    assert len(picture.rows) == (len(case.headers) if case.key_value else int(case.size.split()[0]))
    if case.first is not None:
        assert picture.rows[0] == case.first
    assert picture.caption.startswith(f"{case.size} ({case.source})")
    assert ".to_dataframe()" in picture.caption
    assert not picture.more
    raw = "raw text" if case.content is not None else "raw JSON"
    assert raw in picture.summaries


@pytest.mark.parametrize("case", TABLES, ids=lambda c: c.id)
def test_a_table_shape_is_a_text_table_with_its_size(case: Case) -> None:
    _, text = case.bundle()
    table = read_text(text)
    assert table.size.startswith(f"{case.size} ({case.source})")
    heads = ["key", "value"] if case.key_value else case.headers
    assert table.header.split() == [h for h in heads if h]  # the column names on one line
    assert len(table.rows) == (len(case.headers) if case.key_value else int(case.size.split()[0]))
    if case.first is not None and all(" " not in c and "\n" not in c for c in case.first):
        assert table.rows[0].split() == [c for c in case.first if c]
    assert len(text.splitlines()) <= MAX_TEXT_LINES


@pytest.mark.parametrize("case", TABLES, ids=lambda c: c.id)
def test_the_picture_and_the_dataframe_agree(case: Case) -> None:
    """Same columns, and the caption's ``N rows × M columns`` is ``df.shape``; a flat object is one
    row of K columns as a DataFrame and K key/value rows in the picture."""
    pytest.importorskip("pandas")
    df = case.to_dataframe()
    html, text = case.bundle()
    picture = read_html(html)
    rows, columns = df.shape
    assert picture.caption.startswith(size(rows, columns) + " ")
    assert read_text(text).size.startswith(size(rows, columns) + " ")
    if case.key_value:
        assert rows == 1
        assert [row[0] for row in picture.rows] == list(df.columns)
    else:
        assert picture.headers == list(df.columns)
        assert len(picture.rows) == min(rows, mcp_notebook.display_options.html_rows)


def test_the_wrapper_s_envelope_is_shown_beside_its_records() -> None:
    case = next(c for c in TABLES if c.id == "wrapper-with-envelope")
    html, text = case.bundle()
    assert read_html(html).envelope == "also: total=240, next=page-2"
    assert read_text(text).notes == ["also: total=240, next=page-2"]


def test_structured_content_s_text_blocks_are_folded_away_under_the_table() -> None:
    html, _ = TABLES[0].bundle()
    assert sorted(read_html(html).summaries) == ["content (1 block)", "raw JSON"]
    details = [dict(attrs) for tag, attrs in read_html(html).tags if tag == "details"]
    assert sorted(d["class"] for d in details) == ["mcpnb-content", "mcpnb-raw"]
    assert all("open" not in d for d in details)  # both folded


# --- long results -------------------------------------------------------------------------------


def many_sales(count: int) -> list[dict[str, Any]]:
    return [{**SALES[i % 3], "units": i} for i in range(count)]


def test_a_2000_record_result_is_a_bounded_preview_of_its_first_rows() -> None:
    records = many_sales(2000)
    html, text = result_bundle({"content": [text_block(json.dumps(records))], "structuredContent": records})
    picture = read_html(html)
    assert picture.headers == SALES_COLUMNS
    assert len(picture.rows) == 20
    assert [row[3] for row in picture.rows] == [str(i) for i in range(20)]
    assert picture.caption.startswith("2,000 rows × 5 columns (structured content) · first 20 shown")
    assert picture.more == "… 1,980 more rows"
    assert len(html) < 100_000

    table = read_text(text)
    assert table.size.startswith("2,000 rows × 5 columns")
    assert table.header.split() == SALES_COLUMNS
    assert len(table.rows) == 10
    assert table.notes == ["… 1,990 more rows"]
    assert len(text.splitlines()) <= MAX_TEXT_LINES


def test_a_long_object_is_cut_by_keys() -> None:
    html, text = result_bundle({"structuredContent": {f"k{i}": i for i in range(50)}})
    picture = read_html(html)
    assert picture.caption.startswith("1 row × 50 columns")
    assert len(picture.rows) == 20
    assert picture.more == "… 30 more keys"
    assert read_text(text).notes == ["… 40 more keys"]


def test_a_wide_table_as_text_names_the_columns_left_out() -> None:
    records = [{f"column_{i}": i for i in range(40)}]
    html, text = result_bundle({"structuredContent": records})
    assert len(read_html(html).headers) == 40  # HTML scrolls sideways
    table = read_text(text)
    assert table.header.split()[0] == "column_0"
    assert len(table.header.split()) <= mcp_notebook.display_options.max_columns
    assert re.fullmatch(r"… \d+ more columns", table.notes[0])
    assert all(len(line) <= 140 for line in text.splitlines())


def test_a_wide_table_in_html_is_cut_at_html_columns_with_the_rest_counted() -> None:
    """25 records of 20,000 keys (5 MB of JSON): the first 50 columns, the others counted."""
    records = [{f"k{i}": i for i in range(20_000)} for _ in range(25)]
    html, text = result_bundle({"structuredContent": records})
    picture = read_html(html)
    assert picture.headers == [f"k{i}" for i in range(50)]
    assert {len(row) for row in picture.rows} == {50}
    assert picture.caption.startswith("25 rows × 20,000 columns")
    assert picture.more == "… 5 more rows, 19,950 more columns"
    assert len(html) < 100_000
    assert len(text.splitlines()) <= MAX_TEXT_LINES


def test_a_50000_column_csv_is_cut_at_html_columns() -> None:
    body = ",".join(f"c{i}" for i in range(50_000)) + "\n" + ",".join("1" for _ in range(50_000)) + "\n"
    html, text = contents_bundle({"uri": "x://wide.csv", "text": body})
    picture = read_html(html)
    assert len(picture.headers) == 50
    assert picture.more == "… 49,950 more columns"
    assert len(html) < 100_000
    assert read_text(text).notes[0].endswith("more columns")


def test_one_more_row_or_column_is_said_in_the_singular() -> None:
    records = [{f"k{i}": i for i in range(51)} for _ in range(21)]
    picture = read_html(result_bundle({"structuredContent": records})[0])
    assert picture.more == "… 1 more row, 1 more column"
    text = result_bundle({"structuredContent": records[:11]})[1]
    assert read_text(text).notes[0].startswith("… 1 more row, ")


MB10 = 10_000_000


def test_a_10_mb_text_result_is_cut_with_its_full_size_stated() -> None:
    html, text = result_bundle({"content": [text_block("x" * MB10)]})
    assert len(html) < 100_000
    assert f"… ({MB10 - 20_000:,} more characters)" in read_html(html).text
    assert len(text) < 1000
    assert text.endswith(f"({MB10:,} characters in all)")


def test_a_10_mb_image_is_summarised_not_inlined() -> None:
    data = base64.b64encode(b"\x89PNG" + b"0" * 10_000_000).decode()
    result = ToolResult.from_dict({"content": [{"type": "image", "mimeType": "image/png", "data": data}]})
    bundle = result._repr_mimebundle_()
    assert len(bundle["text/html"]) < 1_000
    assert "too large to show inline" in bundle["text/html"]
    assert "about 10,000,004 bytes" in bundle["text/html"]
    assert len(bundle["text/plain"]) < 200


def test_a_10_mb_json_array_result_is_a_bounded_table() -> None:
    rows = [{"i": i, "note": "y" * 90} for i in range(MB10 // 100)]
    payload = json.dumps(rows)
    assert len(payload) >= MB10
    html, text = result_bundle({"content": [text_block(payload)]})
    picture = read_html(html)
    assert picture.caption.startswith(f"{len(rows):,} rows × 2 columns (JSON text)")
    assert len(picture.rows) == 20
    assert len(html) < 100_000
    assert len(text.splitlines()) <= MAX_TEXT_LINES
    assert len(text) < 5000


def test_a_100000_row_csv_resource_is_a_bounded_table() -> None:
    body = "day,units,region\n" + "".join(f"{i},{i % 7},north\n" for i in range(100_000))
    html, text = contents_bundle({"uri": "x://big.csv", "mimeType": "text/csv", "text": body})
    picture = read_html(html)
    assert picture.headers == ["day", "units", "region"]
    assert len(picture.rows) == 20
    assert picture.caption.startswith("100,000 rows × 3 columns (CSV)")
    assert picture.more == "… 99,980 more rows"
    assert len(html) < 100_000
    table = read_text(text)
    assert text.splitlines()[0] == "x://big.csv"
    assert len(table.rows) == 10
    assert table.notes == ["… 99,990 more rows"]
    assert len(text) < 5000


def test_a_csv_field_longer_than_the_csv_module_allows_is_shown_as_contents() -> None:
    """A field over 128 KiB made both reprs fail; it is the resource's text, cut, like the DataFrame's."""
    content = {"uri": "x://long.csv", "text": "a,b\n1," + "y" * 200_000 + "\n"}
    html, text = contents_bundle(content)
    assert read_html(html).tables == 0
    assert len(html) < 100_000
    assert text.splitlines()[0] == "[resource] x://long.csv"
    assert len(text.splitlines()) <= MAX_TEXT_LINES
    pytest.importorskip("pandas")
    assert ResourceContents.from_dict({"contents": [content]}).to_dataframe().attrs["rule"] == "contents"


def test_a_csv_row_longer_than_its_header_makes_it_contents_in_the_picture_too() -> None:
    content = {"uri": "x://bad.csv", "text": "a,b\n1,2,3\n4,5,6\n"}
    html, text = contents_bundle(content)
    assert read_html(html).tables == 0
    assert text.splitlines()[:3] == ["[resource] x://bad.csv", "a,b", "1,2,3"]
    pytest.importorskip("pandas")
    assert ResourceContents.from_dict({"contents": [content]}).to_dataframe().attrs["rule"] == "contents"


# --- results that are not tables ----------------------------------------------------------------

PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000000000200015e2a3b4e0000000049454e44ae426082"
    )
).decode()


def test_plain_text_is_shown_as_text() -> None:
    html, text = result_bundle({"content": [text_block("Sales rose in March.")]})
    picture = read_html(html)
    assert picture.tables == 0
    assert "Sales rose in March." in picture.text
    assert text == "Sales rose in March."


def test_a_long_text_is_cut_with_its_size_stated() -> None:
    body = "\n".join(f"line {i}" for i in range(500))
    html, text = result_bundle({"content": [text_block(body)]})
    lines = text.splitlines()
    assert len(lines) <= MAX_TEXT_LINES
    assert lines[0] == "line 0"
    assert re.fullmatch(rf"… \([\d,]+ more lines, {len(body):,} characters in all\)", lines[-1])
    assert "line 499" in html  # 6 KB of text is shown whole in HTML, which scrolls


def test_images_and_mixed_blocks_are_shown_as_blocks() -> None:
    blocks = [
        text_block('{"looks": "like json"}'),
        {"type": "image", "mimeType": "image/png", "data": PNG},
        {"type": "resource_link", "uri": "https://example.org/report", "name": "report"},
    ]
    html, text = result_bundle({"content": blocks})
    picture = read_html(html)
    assert picture.tables == 0  # one block is not text: rule 6, no JSON table
    images = [dict(attrs) for tag, attrs in picture.tags if tag == "img"]
    assert [img["src"] for img in images] == [f"data:image/png;base64,{PNG}"]
    assert text.splitlines() == [
        '{"looks": "like json"}',
        f"[image image/png, about {len(base64.b64decode(PNG)):,} bytes]",
        "[link] report https://example.org/report",
    ]


def test_many_blocks_are_cut_with_their_count_stated() -> None:
    html, text = result_bundle({"content": [text_block(f"block {i}") for i in range(100)]})
    assert "… 80 more blocks (100 in all)" in read_html(html).text
    lines = text.splitlines()
    assert len(lines) <= MAX_TEXT_LINES
    assert lines[-1].endswith("more blocks (100 in all)")


@pytest.mark.parametrize(
    "raw",
    [{"content": []}, {}, {"content": None}],
    ids=["no-blocks", "no-content", "null-content"],
)
def test_an_empty_result_says_so(raw: dict[str, Any]) -> None:
    html, text = result_bundle(raw)
    assert read_html(html).text == "(empty result)"
    assert text == "(empty result)"


def test_empty_resource_contents_say_so() -> None:
    html, text = contents_bundle()
    assert read_html(html).tables == 0
    assert text == "(no contents)"


def test_an_error_result_is_marked_in_both_pictures() -> None:
    html, text = result_bundle({"content": [text_block("no such region")], "isError": True})
    assert "The tool reported an error" in read_html(html).text
    assert text.splitlines() == ["[tool error]", "no such region"]


# --- hostile strings ----------------------------------------------------------------------------

HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '"><svg onload=alert(1)>',
    "</td></tr></table><script>alert(2)</script>",
    "&lt;b&gt;already-escaped&lt;/b&gt;",
]
MARKUP_TAGS = {"script", "img", "svg", "iframe", "b"}


def csv_text(rows: list[list[str]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def hostile_cases(payload: str) -> list[tuple[str, str, str]]:
    records = [{payload: payload, "n": 1}, {"n": 2, f"meta{payload}": {payload: payload}}]
    return [
        ("records", *result_bundle({"structuredContent": records})),
        ("object", *result_bundle({"structuredContent": {payload: payload}})),
        ("json-text", *result_bundle({"content": [text_block(json.dumps(records))]})),
        ("blocks", *result_bundle({"content": [text_block(payload), {"type": "image", "data": payload}]})),
        ("csv", *contents_bundle({"uri": "x.csv", "text": csv_text([[payload, "n"], [payload, "1"]])})),
        ("contents", *contents_bundle({"uri": payload, "mimeType": "text/plain", "text": payload})),
    ]


@pytest.mark.parametrize("payload", HOSTILE)
def test_hostile_keys_and_values_are_text_never_markup(payload: str) -> None:
    for shape, html, text in hostile_cases(payload):
        picture = read_html(html)
        tags = {tag for tag, _ in picture.tags}
        assert not tags & MARKUP_TAGS, (shape, tags & MARKUP_TAGS)
        attributes = {name for _, attrs in picture.tags for name, _ in attrs}
        assert not {a for a in attributes if a.startswith("on")}, shape
        assert payload in picture.text, shape  # shown, as text
        assert payload[:20] in text, shape  # text/plain is not markup (a cell is cut at 30 characters)


def test_hostile_keys_and_values_are_table_headers_and_cells_as_text() -> None:
    records = [{h: h for h in HOSTILE}]
    html, _ = result_bundle({"structuredContent": records})
    picture = read_html(html)
    assert picture.headers == HOSTILE
    assert picture.rows == [HOSTILE]
    assert picture.caption.startswith(size(1, len(HOSTILE)))


def test_terminal_escape_codes_are_visible_text_in_text_plain() -> None:
    red = "\x1b[31mred\x1b[0m"
    cases = [
        result_bundle({"structuredContent": [{red: red, "bell\x07": "a\rb"}]})[1],
        result_bundle({"structuredContent": {red: red}})[1],
        result_bundle({"content": [text_block(f"{red}\n{red}")]})[1],
        contents_bundle({"uri": "x.csv", "text": f"h\n{red}\n"})[1],
        contents_bundle({"uri": f"x://{red}", "mimeType": "text/plain", "text": red})[1],
        result_bundle({"structuredContent": {"items": [{"a": 1}], red: red}})[1],  # the envelope
    ]
    for text in cases:
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", text), repr(text)
        assert "\\x1b[31mred\\x1b[0m" in text


def test_a_newline_in_a_key_or_cell_does_not_break_the_text_table() -> None:
    _, text = result_bundle({"structuredContent": [{"two\nlines": "a\nb"}, {"two\nlines": "c"}]})
    table = read_text(text)
    assert table.header == "two\\nlines"
    # its line break kept, the row marked (after the column's width) as going on below
    assert table.rows == ["a".ljust(len(table.header)) + " +\nb", "c"]
    _, text = result_bundle({"structuredContent": {"rows": [{"a": 1}], "next\npage": "p\n2"}})
    assert read_text(text).notes == ["also: next\\npage=p\\n2"]


# --- display options ----------------------------------------------------------------------------


@pytest.fixture
def display_options() -> Iterator[DisplayOptions]:
    options = mcp_notebook.display_options
    saved = dataclasses.replace(options)
    try:
        yield options
    finally:
        for name in (f.name for f in dataclasses.fields(DisplayOptions)):
            setattr(options, name, getattr(saved, name))


def test_display_options_is_the_renderers_options() -> None:
    from mcp_notebook.display import _pictures as _render

    assert mcp_notebook.display_options is _render.options
    assert isinstance(mcp_notebook.display_options, DisplayOptions)
    assert (mcp_notebook.display_options.html_rows, mcp_notebook.display_options.text_rows) == (20, 10)


def test_changing_display_options_changes_the_preview(display_options: DisplayOptions) -> None:
    records = many_sales(100)
    display_options.html_rows = 5
    display_options.text_rows = 3
    html, text = result_bundle({"structuredContent": records})
    picture = read_html(html)
    assert len(picture.rows) == 5
    assert picture.more == "… 95 more rows"
    assert picture.caption.startswith("100 rows × 5 columns (structured content) · first 5 shown")
    table = read_text(text)
    assert len(table.rows) == 3
    assert table.notes == ["… 97 more rows"]

    display_options.html_columns = 2
    assert read_html(result_bundle({"structuredContent": records})[0]).headers == ["date", "region"]
    display_options.html_columns = 100

    display_options.html_rows = 200
    display_options.text_rows = 100  # more than fit: text still stops at MAX_TEXT_LINES
    html, text = result_bundle({"structuredContent": records})
    assert len(read_html(html).rows) == 100
    assert not read_html(html).more
    assert len(text.splitlines()) == MAX_TEXT_LINES
    assert text.splitlines()[-1].startswith("… ")
