"""Server text made safe to print: the one rule every text form uses.

A terminal acts on what it is given: ``\\x1b]0;...\\x07`` retitles the window, ``\\x1b[2J`` clears
the screen, a carriage return lets later text overwrite a line, and a bidi override (U+202E) makes
``exe.txt`` read as ``txt.exe``. Text a server sends (a tool name, an error message, a log line, its
stderr) reaches reprs, ``str()`` of errors, log records and text tables; :func:`printable` shows
those characters as visible escapes (``\\x1b``, ``\\u202e``) instead, as the HTML forms escape markup.

Which characters: the C0 controls, DEL and the C1 controls (U+0000-001F, U+007F-009F), the line and
paragraph separators (U+2028, U+2029) and Unicode's bidi controls: the embeddings, overrides and
isolates (U+202A-202E, U+2066-2069) and the marks (U+061C, U+200E, U+200F), which reorder the
numbers and punctuation around them ("ok 12 ms" can read "sm 21 ko"). A multi-line text form
(``multiline=True``) keeps ``\\n`` and ``\\t``, with ``\\r\\n`` read as ``\\n``; a single-line
field (a name, a log record) keeps neither. A backslash is left as it
is, so the result is for reading, not for decoding back.

Pure and I/O-free, in ``protocol/`` so that every layer above (errors, transports, the connection's
logs, the display layer) can use it.
"""

from __future__ import annotations

import re

__all__ = ["printable"]

_MARKS = "\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_ONE_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f{_MARKS}]")
_LINES = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_MARKS}]")  # keeps \t (09) and \n (0a)
_CODES = [*range(0x20), *range(0x7F, 0xA0), 0x061C, 0x200E, 0x200F, 0x2028, 0x2029]
_CODES += [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]
#: each such character as it is shown (a table, not a formatted string per match: 3x faster)
_SHOWN = {chr(c): f"\\x{c:02x}" if c <= 0xFF else f"\\u{c:04x}" for c in _CODES} | {
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}


def _escape(match: re.Match[str]) -> str:
    return _SHOWN[match.group()]


def printable(text: object, *, multiline: bool = False) -> str:
    """``text`` (``str()`` of anything else) with every control and bidi character made visible.

    >>> printable("\\x1b]0;pwned\\x07name")
    '\\\\x1b]0;pwned\\\\x07name'
    >>> printable("two\\nlines"), printable("two\\r\\nlines", multiline=True)
    ('two\\\\nlines', 'two\\nlines')
    """
    value = text if isinstance(text, str) else str(text)
    if multiline:
        return _LINES.sub(_escape, value.replace("\r\n", "\n"))
    return _ONE_LINE.sub(_escape, value)
