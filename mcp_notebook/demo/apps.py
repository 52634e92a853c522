"""A demo MCP server with an MCP App: ``python -m mcp_notebook.demo.apps`` (stdio).

Why it exists: the notebook and the browser tests need an app whose every step we can name, on the
official Python SDK (its ``Apps`` extension), without Node. One model-visible tool,
``sales_board``, returns revenue per region of the demo sales data and carries the View
``ui://sales-board/board.html`` (:file:`sales_board.html`, self-contained: hand-written HTML and
JavaScript speaking the View's side of the protocol, no library, nothing fetched). The View draws
one bar per region; choosing a region (the largest one at first) calls ``region_detail``, a tool
visible to the app only (``visibility: ["app"]``), and hands the detail to the model with
``ui/update-model-context``, so a notebook reads it back as ``view.model_context``. It also logs a
line (``notifications/message``) and reports its size.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import anyio
from pydantic import BaseModel, Field

from mcp_notebook.demo._server import REGIONS, _records_for

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["BOARD_URI", "build_server", "main"]

BOARD_URI = "ui://sales-board/board.html"
PAGE = Path(__file__).with_name("sales_board.html")
Region = Literal["north", "south", "east", "west"]


class RegionTotal(BaseModel):
    region: str
    revenue: float = Field(description="revenue in USD, rounded to cents")
    units: int


class Board(BaseModel):
    regions: list[RegionTotal]
    total: float


class RegionDetail(BaseModel):
    region: str
    revenue: float
    units: int
    sales: int = Field(description="number of sales")
    top_product: str = Field(description="the product with the most revenue")


def _detail(region: str) -> RegionDetail:
    records = _records_for(region)
    by_product: defaultdict[str, float] = defaultdict(float)
    for record in records:
        by_product[record.product] += record.units * record.price
    return RegionDetail(
        region=region,
        revenue=round(sum(by_product.values()), 2),
        units=sum(r.units for r in records),
        sales=len(records),
        top_product=max(by_product, key=by_product.__getitem__, default=""),
    )


def sales_board() -> Board:
    """Revenue per region of the demo sales data, drawn as an interactive board (an MCP App).

    A client without MCP Apps gets the same numbers as structured content.
    """
    totals = [_detail(region) for region in REGIONS]
    return Board(
        regions=[RegionTotal(region=d.region, revenue=d.revenue, units=d.units) for d in totals],
        total=round(sum(d.revenue for d in totals), 2),
    )


def region_detail(region: Annotated[Region, Field(description="the region to detail")]) -> RegionDetail:
    """One region's revenue, units, number of sales and best product (called by the board's View)."""
    return _detail(region)


@functools.cache
def page() -> str:
    """The View's HTML."""
    return PAGE.read_text(encoding="utf-8")


def build_server() -> MCPServer:
    """A fresh server: the board tool, its View, and the app-only detail tool."""
    from mcp.server.apps import Apps
    from mcp.server.mcpserver import MCPServer

    apps = Apps()
    apps.tool(resource_uri=BOARD_URI, title="Sales board")(sales_board)
    apps.tool(resource_uri=BOARD_URI, visibility=["app"], title="Region detail")(region_detail)
    apps.add_html_resource(BOARD_URI, page(), name="sales-board", title="Sales board", prefers_border=True)
    return MCPServer(
        "mcp-notebook-apps-demo",
        title="MCP Notebook demo app",
        instructions="sales_board shows revenue per region as an MCP App.",
        extensions=[apps],
    )


def main() -> int:
    server: Any = build_server()
    anyio.run(server.run_stdio_async)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
