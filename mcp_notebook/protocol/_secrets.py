"""The values a connection must never show, and the one rule that masks them in server text.

Why: the values given to reach a server (``env=`` of a stdio server, ``headers=`` and a bearer token
of an HTTP one) are secrets, and the server knows them: it may echo them back in a JSON-RPC error,
a log message, a tool result or its stderr. Whatever of the server's text reaches the screen (an
error's message, a log record, the notebook's log, a result's text and pictures) passes through
:meth:`Secrets.mask` first, which shows each such value as ``***``.

The rule, one for every place:

- A value is masked only if it is at least :data:`MIN_SECRET_CHARS` (8) characters long: shorter
  values (``"1"``, ``"true"``, ``"8080"``, ``"debug"``) are settings, not secrets, and masking them
  would garble ordinary text. A header value of the ``Scheme credentials`` shape (``Bearer abc...``)
  masks its credentials on their own as well.
- A value is found as it is, JSON-escaped (as it reads inside JSON text, with ``\\uXXXX`` escapes or
  without), HTML-escaped (either quote convention) and with control characters shown as escapes
  (:func:`printable`), so a server cannot slip it past by quoting it.
- Masking is a display rule: the server's data stays as it was sent (``result.raw``, a
  notification's params); only the text made from it to show is masked.

What it costs: nothing when there are no secrets (``if secrets:`` is the whole check); otherwise a
few ``str.replace`` calls per text shown, each a C-speed scan, and a walk of a JSON value only where
a value is shown whole (a log message's data, a result's blocks in a picture).

Pure and I/O-free, in ``protocol/`` so that every layer above (transports, the connection, the
results and the widgets) uses this one rule.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ._errors import McpError
from ._jsonrpc import encode
from ._printable import printable

__all__ = ["MASK", "MIN_SECRET_CHARS", "NO_SECRETS", "Secrets", "header_secrets"]

#: What a secret reads as wherever it is masked.
MASK = "***"
_MASK_BYTES = MASK.encode()
#: Values shorter than this are not masked (see the module docstring).
MIN_SECRET_CHARS = 8


_HTML_ESCAPES = [
    str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': quote, "'": apostrophe})
    for quote, apostrophe in (("&#34;", "&#39;"), ("&quot;", "&#x27;"))
]


def _forms(value: str) -> set[str]:
    """Every way ``value`` can appear in text a server sent or we made from it."""
    quoted = {
        value,
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        printable(value),
    }
    # As the display layer's HTML shows it (markupsafe: &#34; &#39;) or the standard library's.
    escaped = {form.translate(table) for form in quoted for table in _HTML_ESCAPES}
    return quoted | escaped


class Secrets:
    """The secret values of one connection, and :meth:`mask` to hide them in text.

    Built once by the transport that was given them (``transport.secrets``) and passed down to
    whatever shows the server's text: the connection (errors, log records), results, the notebook
    model. Never shown itself: its repr counts the values.
    """

    __slots__ = ("_encoded", "_forms", "_in_json", "_values")

    def __init__(self, values: Iterable[str] = ()) -> None:
        kept = sorted({v for v in values if isinstance(v, str) and len(v) >= MIN_SECRET_CHARS})
        self._values: tuple[str, ...] = tuple(kept)
        forms = set().union(*(_forms(v) for v in kept)) if kept else set()
        # Longest first, so a form that contains another is replaced whole.
        self._forms: tuple[str, ...] = tuple(sorted(forms, key=lambda f: (-len(f), f)))
        self._encoded: tuple[bytes, ...] = tuple(f.encode() for f in self._forms)
        #: Each form as it reads inside a JSON string (for the quick check of a whole value).
        in_json = {encode(f)[1:-1] for f in self._forms}  # type: ignore[arg-type]
        self._in_json: tuple[bytes, ...] = tuple(sorted(in_json, key=lambda f: (-len(f), f)))

    def __bool__(self) -> bool:
        return bool(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Secrets(<{len(self._values)} values>)"

    def mask(self, text: str) -> str:
        """``text`` with every secret (in any of its forms) shown as ``***``."""
        for form in self._forms:
            text = text.replace(form, MASK)
        return text

    def mask_bytes(self, data: bytes) -> bytes:
        """The same rule for raw bytes (a frame's head kept for a log line)."""
        for form in self._encoded:
            data = data.replace(form, _MASK_BYTES)
        return data

    def mask_value(self, value: Any) -> Any:
        """A JSON value with every string in it (keys too) masked; the same object when nothing
        was (so a value without secrets is not copied).

        Done on its JSON text, in C (orjson where installed): JSON escapes each character on its
        own, so a string holds a form exactly where its JSON holds the form's JSON. A value with no
        secret in it (nearly always) costs its encoding and a scan; one with a secret, a decoding
        of the masked text too. A value that does not encode or decode back is walked instead.
        """
        if not self._forms:
            return value
        if isinstance(value, str):
            return self.mask(value)
        try:
            text = encode(value)
        except (TypeError, ValueError, RecursionError):
            return self._walk(value)
        masked = text
        for form in self._in_json:
            masked = masked.replace(form, _MASK_BYTES)
        if masked == text:
            return value
        try:
            return json.loads(masked)
        except (ValueError, RecursionError):
            return self._walk(value)

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.mask(value)
        if isinstance(value, list | tuple):
            return [self._walk(item) for item in value]
        if isinstance(value, dict):
            return {self._walk(k): self._walk(v) for k, v in value.items()}
        return value

    def mask_error(self, error: McpError) -> McpError:
        """Mask ``error`` in place (its message, full_message and data), so every later form of it (``str``,
        ``repr``, the notebook's short traceback, a message that quotes it) is masked; returns it."""
        if self._forms:
            error.rewrite(self.mask)
            error.data = self.mask_value(error.data)
        return error


#: A connection that was given no secrets.
NO_SECRETS = Secrets()


def header_secrets(headers: Mapping[str, str]) -> list[str]:
    """The secret values of request headers: each value, and the credentials of a
    ``Scheme credentials`` value (``Bearer abc...``) on their own."""
    values: list[str] = []
    for value in headers.values():
        values.append(value)
        scheme, _, credentials = value.strip().partition(" ")
        if scheme and credentials.strip():
            values.append(credentials.strip())
    return values
