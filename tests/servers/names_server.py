"""A fastmcp server over stdio for the argument-name checks: fastmcp writes
``additionalProperties: false`` into every tool's inputSchema, so an unknown argument name is
refused by the schema (the demo server, on the Python SDK, lets extra keys pass).

    lookup  {"city": string, "units": string = "metric"} -> "<city> in <units>"
"""

from __future__ import annotations

from fastmcp import FastMCP

server = FastMCP("names")


@server.tool
def lookup(city: str, units: str = "metric") -> str:
    """A city's weather, in units."""
    return f"{city} in {units}"


if __name__ == "__main__":
    server.run(show_banner=False)
