"""The read loop the raw stdio test servers share: one JSON object a line on stdin, each handed to
the server's own ``handle``; a line that is not a JSON object is skipped (these servers test the
client, not their own parsing). The servers run as scripts, so they import it from their folder."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any


def serve(handle: Callable[[dict[str, Any]], None]) -> None:
    """Hand every JSON object read from stdin to ``handle``, until stdin ends."""
    for raw in sys.stdin.buffer:
        try:
            message = json.loads(raw)
        except ValueError:
            continue
        if isinstance(message, dict):
            handle(message)
