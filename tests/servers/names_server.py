"""A fastmcp server over stdio for the argument-name checks: fastmcp writes
``additionalProperties: false`` into every tool's inputSchema, so an unknown argument name is
refused by the schema (the demo server, on the Python SDK, lets extra keys pass).

    lookup  {"city": string, "units": string = "metric"} -> "<city> in <units>"
    grow    {"name": string} -> adds a tool ``name`` (it echoes ``text``) WITHOUT telling the client
            (no list_changed): a client's cached list then lacks a tool the server has.
"""

from __future__ import annotations

from fastmcp import FastMCP
from fastmcp.tools import Tool

server = FastMCP("names")


@server.tool
def lookup(city: str, units: str = "metric") -> str:
    """A city's weather, in units."""
    return f"{city} in {units}"


@server.tool
def grow(name: str) -> str:
    """Add a tool called name, quietly."""

    def echo(text: str) -> str:
        return text

    server.add_tool(Tool.from_function(echo, name=name))
    return f"added {name}"


if __name__ == "__main__":
    server.run(show_banner=False)
