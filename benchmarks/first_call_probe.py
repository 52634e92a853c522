"""The first call of a tool whose inputSchema uses formats, in a fresh interpreter (issue #37, 3).

``python -m benchmarks.first_call_probe --client ours`` prints one JSON object. The server is the
echo server over stdio; the tool is its ``visit``, whose schema is what pydantic writes for
``url: AnyUrl, since: datetime | None = None`` (``format: uri``, and an ``anyOf`` with
``format: date-time`` that our quick check leaves to jsonschema). Every sample is a new process,
because what is measured happens once per process: importing what the first check needs.

- ``first_ms``: the first ``visit`` call, from the call to its result;
- ``warm_ms``: the same call again, so ``first_ms - warm_ms`` is what the first call paid once;
- ``total_ms``: importing the client's library, connecting and the first call;
- ``full_ms``: then the first call of ``place`` (a nested model by ``$ref``, and a ``date-time``),
  which only jsonschema judges: what importing jsonschema costs us there;
- ``heavy``: which of jsonschema and its format libraries the process had loaded by then
  (``rfc3987_syntax``, ``lark``: the IRI grammar), for the table's note.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ECHO = (sys.executable, str(Path(__file__).resolve().parent / "echo_server.py"))
ARGUMENTS = {"url": "https://example.com/a", "since": "2026-01-01T00:00:00Z"}
PLACE = {"at": {"lat": 59.9, "lon": 10.7}, "when": "2026-01-01T00:00:00Z"}
HEAVY = ("jsonschema", "rfc3987_syntax", "lark", "webcolors", "uri_template")


async def probe(client: str) -> dict[str, object]:
    started = time.perf_counter()
    from benchmarks.clients import Target, make

    adapter = make(client)  # imports the client's library
    await adapter.connect(Target(argv=(*ECHO, "--era", "modern", "--format-tools")), "auto")
    try:
        before = time.perf_counter()
        await adapter.call("visit", dict(ARGUMENTS))
        first = time.perf_counter()
        await adapter.call("visit", dict(ARGUMENTS))
        warm = time.perf_counter()
        await adapter.call("place", dict(PLACE))
        full = time.perf_counter()
    finally:
        await adapter.close()
    return {
        "first_ms": (first - before) * 1000,
        "warm_ms": (warm - first) * 1000,
        "total_ms": (first - started) * 1000,
        "full_ms": (full - warm) * 1000,
        "heavy": ",".join(name for name in HEAVY if name in sys.modules),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client", required=True)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(probe(args.client))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
