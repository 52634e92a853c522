"""The demo server plus ``burn``: a tool whose whole cost is a fixed few ms of server CPU per call.

For benchmarks/dask.py (issue #30). It is the demo server (the official SDK's ``MCPServer``, the
same Python stack and per-call overhead) with one tool added here rather than in the demo itself,
whose tool list the notebooks, the magics' tests and the README show. A Python server runs its
handlers on one core, so ``burn`` is work that only more server processes make faster.

Run: ``python -m benchmarks.burn_server`` (stdio).
"""

from __future__ import annotations

import time
from typing import Annotated

import anyio
from mcp_types import ToolAnnotations
from pydantic import Field

from mcp_notebook.demo._server import build_server, serve_stdio


def burn(ms: Annotated[float, Field(ge=0, le=1000, description="Milliseconds of CPU to burn")] = 5) -> float:
    """Keep the server's CPU busy for ``ms`` milliseconds (process time), then return ``ms``."""
    end = time.process_time() + ms / 1000
    while time.process_time() < end:
        pass
    return ms


def main() -> None:
    server = build_server()
    read_only = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
    server.add_tool(burn, title="Burn CPU", annotations=read_only)
    anyio.run(serve_stdio, server)


if __name__ == "__main__":
    main()
