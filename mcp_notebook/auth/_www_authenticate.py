"""Parse ``WWW-Authenticate`` (RFC 9110 §11.6.1) into challenges, and pick the Bearer one.

A header may carry several challenges (``Bearer ..., DPoP algs="ES256"``), values may be quoted
strings with escapes or bare tokens, and a scheme may carry a token68 instead of parameters. Naive
regular expressions get commas inside quoted values wrong; this small scanner does not. It is pure:
strings in, :class:`Challenge` objects out, and it never raises on malformed input (a server's header
is untrusted; what cannot be parsed is skipped).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

__all__ = ["Challenge", "bearer_challenge", "oauth_challenge", "parse_challenges"]

_TCHAR = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_SPACE = " \t"


@dataclass(frozen=True)
class Challenge:
    scheme: str  # lowercased
    params: dict[str, str] = field(default_factory=dict)  # names lowercased
    token68: str | None = None

    def get(self, name: str) -> str | None:
        return self.params.get(name.lower())

    @property
    def scope(self) -> str | None:
        value = self.get("scope")
        return " ".join(value.split()) if value and value.strip() else None

    @property
    def resource_metadata(self) -> str | None:
        return self.get("resource_metadata") or None

    @property
    def error(self) -> str | None:
        return self.get("error") or None


def _skip(s: str, i: int, chars: str) -> int:
    while i < len(s) and s[i] in chars:
        i += 1
    return i


def _quoted(s: str, i: int) -> tuple[str, int]:
    """Read a quoted-string starting at ``s[i] == '"'``; an unterminated one runs to the end."""
    out: list[str] = []
    i += 1
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            out.append(s[i + 1])
            i += 2
            continue
        if c == '"':
            return "".join(out), i + 1
        out.append(c)
        i += 1
    return "".join(out), i


def _parse_one(s: str, out: list[Challenge]) -> None:
    current: Challenge | None = None
    i = 0
    while True:
        i = _skip(s, i, _SPACE + ",")
        if i >= len(s):
            return
        m = _TCHAR.match(s, i)
        if m is None:
            i += 1  # garbage: skip a character and resynchronise
            continue
        name = m.group()
        j = _skip(s, m.end(), _SPACE)
        if j < len(s) and s[j] == "=" and current is not None:
            # auth-param: name = token / quoted-string
            j = _skip(s, j + 1, _SPACE)
            if j < len(s) and s[j] == '"':
                value, i = _quoted(s, j)
            else:
                v = _TCHAR.match(s, j)
                value, i = (v.group(), v.end()) if v else ("", j)
            current.params.setdefault(name.lower(), value)
            continue
        # A new challenge: the scheme, then maybe a token68 that runs to the next comma.
        current = Challenge(scheme=name.lower())
        out.append(current)
        i = j
        t = _TOKEN68.match(s, i)
        if t is not None:
            after = _skip(s, t.end(), _SPACE)
            if after >= len(s) or s[after] == ",":
                out[-1] = current = Challenge(scheme=current.scheme, token68=t.group())
                i = after


def parse_challenges(values: str | Iterable[str]) -> list[Challenge]:
    """Every challenge in one header value or in several (repeated ``WWW-Authenticate`` fields)."""
    out: list[Challenge] = []
    for value in [values] if isinstance(values, str) else values:
        _parse_one(value, out)
    return out


def bearer_challenge(values: str | Iterable[str]) -> Challenge | None:
    """The first ``Bearer`` challenge, or None."""
    for challenge in parse_challenges(values):
        if challenge.scheme == "bearer":
            return challenge
    return None


def oauth_challenge(challenges: list[Challenge]) -> Challenge | None:
    """The challenge an OAuth client answers: ``Bearer``, else ``DPoP`` (RFC 9449 §7.1), else None."""
    for scheme in ("bearer", "dpop"):
        for challenge in challenges:
            if challenge.scheme == scheme:
                return challenge
    return None
