"""A fastmcp server whose tools answer as servers people use do, for how results are drawn (#37).

- ``polars_describe``: a GitHub pipe table in a text block, as excel-mcp-polars answers; one cell
  holds a ``<script>`` that must stay text.
- ``fetch_page``: a page as Markdown (prose, a long pipe table, fenced code) in a text block, as
  mcp-server-fetch answers (``Contents of URL:`` and the page).
- ``execute_cell``: a cell run by jupyter-mcp-server that printed a DataFrame and drew a plot:
  structuredContent ``{"kind", "result", "outputs", "count", "images"}`` whose ``images`` points at
  the PNG sent as an image content block beside it (the bytes are not repeated in the JSON).
- ``execute_noisy_cell``: the same with a plot of noise (about 270 KB, PNG cannot shrink it): too
  large to be copied into a table cell or a saved snapshot, so named there.
- ``long_help``: a tool whose description runs to many lines (``session.live_frame("tools")``).

Run ``python pictures_server.py`` (stdio).
"""

from __future__ import annotations

import base64
import json
import random
import struct
import zlib
from typing import Any

from fastmcp import FastMCP
from fastmcp.tools import ToolResult
from mcp_types import ImageContent, TextContent

SCRIPT = "<script>alert(1)</script>"
POLARS_TABLE = f"| region | count |\n|---|---:|\n| north | 50 |\n| south | 30 |\n| {SCRIPT} | 7 |\n"
#: rows of the page's table: more than a picture draws (``display_options.html_rows``, 20)
PAGE_ROWS = 60
PAGE = (
    "Contents of https://example.org/report:\n"
    "# Sales report\n\n"
    f"Regions by units sold. A tag in prose stays text: {SCRIPT}\n\n"
    "| region | units |\n|:---|---:|\n"
    + "".join(f"| region {n} | {n * 10} |\n" for n in range(PAGE_ROWS))
    + "\n```python\ntotal = frame['units'].sum()\nprint(total)\n```\n"
)
#: what ``print(frame)`` wrote in the cell: pandas' aligned lines
PRINTED = "   region  units\n0   north     50\n1   south     30\n2    east     20"
#: the description of ``long_help``: more lines than a live frame draws in one cell
HELP_LINES = [f"Step {n}: do the thing number {n}." for n in range(1, 31)]


def png(width: int, height: int, *, noise: bool = False) -> bytes:
    """A PNG of ``width`` × ``height`` pixels: bands of colour (a screenshot shows it was drawn),
    or random pixels (``noise``: its size stays about 3 bytes a pixel)."""
    bands = [(31, 119, 180), (255, 127, 14), (44, 160, 44)]
    band_row = b"".join(bytes(bands[x * len(bands) // width]) for x in range(width))
    pixels = random.Random(37)
    rows = b"".join(b"\x00" + (pixels.randbytes(3 * width) if noise else band_row) for _ in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


PLOT = base64.b64encode(png(120, 60)).decode("ascii")
NOISE = base64.b64encode(png(300, 300, noise=True)).decode("ascii")
CELL: dict[str, Any] = {
    "kind": "execute_cell",
    "result": PRINTED,
    "outputs": [PRINTED, "<Figure size 640x480 with 1 Axes>"],
    "count": 1,
    "images": ["[omitted: see image content block 1]"],
}

mcp = FastMCP("pictures-test-server")


def _text(text: str) -> ToolResult:
    """Text content only, no structuredContent: what low-level and TypeScript servers send."""
    return ToolResult(content=[TextContent(type="text", text=text)])


@mcp.tool
def polars_describe() -> ToolResult:
    """A sheet's summary as a Markdown table (excel-mcp-polars)."""
    return _text(POLARS_TABLE)


@mcp.tool
def fetch_page() -> ToolResult:
    """A web page as Markdown (mcp-server-fetch)."""
    return _text(PAGE)


def _cell(plot: str) -> ToolResult:
    return ToolResult(
        content=[
            TextContent(type="text", text=json.dumps(CELL)),
            ImageContent(type="image", data=plot, mimeType="image/png"),
        ],
        structured_content=CELL,
    )


@mcp.tool
def execute_cell() -> ToolResult:
    """A cell that printed a DataFrame and drew a plot (jupyter-mcp-server)."""
    return _cell(PLOT)


@mcp.tool
def execute_noisy_cell() -> ToolResult:
    """A cell that drew a large plot (jupyter-mcp-server)."""
    return _cell(NOISE)


@mcp.tool(description="\n".join(HELP_LINES))
def long_help() -> str:
    return "done"


if __name__ == "__main__":
    mcp.run(show_banner=False)
