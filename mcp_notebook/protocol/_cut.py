"""How much of a server's log message is kept: one size, one note, for every place that keeps it.

Why: a server's ``notifications/message`` may carry up to ``max_message_bytes`` (32 MiB) of
``data``, and the client keeps or prints it in several places: the ``mcp_notebook.server`` log
records, the notebook's ``model.log`` (hundreds of rows) and the log panel. 150 messages of 16 MB
were 2.3 GB in ``model.log``. Each place keeps at most :data:`LOG_DATA_BYTES` of a message's
``data``, measured in UTF-8 bytes of its text form (the string itself, or its compact JSON), cut
at a character boundary and followed by a note that says how much was left out
(``… cut: 16,760,832 bytes more``), so nobody mistakes a cut value for the whole one.

Data that fits is kept exactly as sent (an object stays an object); data that does not becomes its
cut text. Pure and I/O-free, in ``protocol/`` so the connection and the notebook layer share it.
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from ._jsonrpc import encode

__all__ = [
    "LOG_DATA_BYTES",
    "LOG_NAME_CHARS",
    "Cut",
    "already_cut",
    "cut_log_data",
    "cut_note",
    "cut_text",
    "text_form",
]

#: The most of one log message's ``data`` kept or shown, in UTF-8 bytes of its text form.
LOG_DATA_BYTES = 16 * 1024
#: The most of a log message's ``logger`` name kept, in characters (it names, it does not tell).
LOG_NAME_CHARS = 200

_NOTE = re.compile(r" … cut: ([\d,]+) bytes more$")


class Cut(NamedTuple):
    """``value`` as kept; ``cut``: the bytes of its text form left out (0: kept whole); ``size``:
    the bytes of the text form kept (what it costs, roughly, to hold)."""

    value: Any
    cut: int
    size: int


def text_form(value: Any) -> str:
    """A string itself; anything else as compact JSON (``repr`` for what JSON cannot hold)."""
    if isinstance(value, str):
        return value
    try:
        return encode(value).decode()
    except (TypeError, ValueError):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=repr)


def cut_note(more: int) -> str:
    """The note that ends a cut text: how many bytes were left out."""
    return f" … cut: {more:,} bytes more"


def cut_text(text: str, limit: int, *, more: int = 0) -> tuple[str, int]:
    """``text`` within ``limit`` UTF-8 bytes, and the bytes left out.

    A text that fits (and ``more == 0``) is returned as it is; otherwise its first bytes (at a
    character boundary) and the note, which counts ``more`` bytes already left out before too.
    """
    if more == 0 and len(text) * 4 <= limit:  # fits whatever its characters: skip the encoding
        return text, 0
    raw = text.encode("utf-8", errors="surrogatepass")
    if more == 0 and len(raw) <= limit:
        return text, 0
    kept = raw[:limit].decode("utf-8", errors="ignore")  # a character cut in two is dropped
    left_out = len(raw) - len(kept.encode("utf-8", errors="surrogatepass")) + more
    return kept + cut_note(left_out), left_out


def cut_log_data(data: Any, limit: int = LOG_DATA_BYTES) -> Cut:
    """A log message's ``data`` as kept: itself when its text form fits in ``limit`` bytes, else
    that text cut, with the note."""
    if isinstance(data, str) and len(data) * 4 <= limit:
        return Cut(data, 0, len(data))
    if data is None or isinstance(data, bool | int | float):
        return Cut(data, 0, 8)
    text = text_form(data)
    kept, left_out = cut_text(text, limit)
    if not left_out:
        return Cut(data, 0, len(text))
    return Cut(kept, left_out, len(kept))


def already_cut(text: str) -> tuple[str, int]:
    """A text kept by :func:`cut_log_data`, without its note, and the bytes the note says were
    left out (0 when it has none): for a view that shows less of it and must count them too."""
    match = _NOTE.search(text)
    if match is None:
        return text, 0
    return text[: match.start()], int(match.group(1).replace(",", ""))
