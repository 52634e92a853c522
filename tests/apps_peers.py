"""The MCP Apps test peers: the three published example servers (npm, tests/package.json) and
our own probe server (tests/servers/apps_server.py).

Each example is the package's bundled ``dist/index.js`` run over stdio by the Node 22 that
tests/node_modules installs (``--stdio`` is required; without it they serve HTTP). They are
legacy-era servers (SDK server 2.0.0) with one app tool each; their tools carry both the current
``_meta.ui.resourceUri`` and the deprecated flat key, and their resources no ``_meta.ui``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
NODE = TESTS / "node_modules" / ".bin" / "node"
PACKAGES = TESTS / "node_modules" / "@modelcontextprotocol"
PROBE_SERVER = TESTS / "servers" / "apps_server.py"
PROBE = [sys.executable, str(PROBE_SERVER)]


@dataclass(frozen=True)
class Example:
    package: str
    tool: str
    resource: str
    #: Keys of the tool's structuredContent.
    structured_keys: tuple[str, ...]

    @property
    def entry(self) -> Path:
        return PACKAGES / self.package / "dist" / "index.js"

    @property
    def command(self) -> list[str]:
        return [str(NODE), str(self.entry), "--stdio"]

    @property
    def available(self) -> bool:
        return NODE.exists() and self.entry.exists()


EXAMPLES = {
    "basic-vanillajs": Example("server-basic-vanillajs", "get-time", "ui://get-time/mcp-app.html", ("time",)),
    "budget-allocator": Example(
        "server-budget-allocator",
        "get-budget-data",
        "ui://budget-allocator/mcp-app.html",
        ("config", "analytics"),
    ),
    "customer-segmentation": Example(
        "server-customer-segmentation",
        "get-customer-data",
        "ui://customer-segmentation/mcp-app.html",
        ("customers", "segments"),
    ),
}


def example_command(name: str) -> list[str]:
    """The stdio command line of an example server, skipping the test when it is not installed."""
    example = EXAMPLES[name]
    if not example.available:
        pytest.skip(f"{example.package} is not installed (npm ci --prefix tests)")
    return example.command
