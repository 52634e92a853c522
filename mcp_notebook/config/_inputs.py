"""VS Code's ``inputs``: values asked of the user once per session, then remembered.

A file declares ``"inputs": [{"type": "promptString", "id": "api-key", "description": "...",
"password": true}]`` and a server uses ``${input:api-key}``. VS Code asks the first time a server
that uses it starts and keeps the answer for the session; we do the same, process-wide: answers
are cached by (resolved file path, input id), asked only when a server being resolved uses the
input, and at most once. :func:`forget_inputs` empties the cache (a wrong answer, a new token).

The answers are secrets: kept in this module's memory only, never logged, never in a message.
A config given as a dict has no file to key the cache by, so its answers last one load only.
"""

from __future__ import annotations

import getpass
import threading
from collections.abc import Callable, Mapping
from typing import Any

from ._variables import VariableError

__all__ = ["Inputs", "default_ask", "forget_inputs"]

Ask = Callable[[dict[str, Any]], str]

_CACHE: dict[tuple[str, str], str] = {}
_LOCK = threading.Lock()


def forget_inputs() -> None:
    """Forget every remembered ``${input:...}`` answer; the next load that needs one asks again."""
    with _LOCK:
        _CACHE.clear()


def default_ask(spec: dict[str, Any]) -> str:
    """Asks with :func:`getpass.getpass`: the answer is not echoed, and in a Jupyter kernel it is a
    password field under the cell (inputs are mostly tokens, so every input is asked this way)."""
    return getpass.getpass(_prompt(spec))


def _prompt(spec: dict[str, Any]) -> str:
    label = spec.get("description") or spec.get("id") or "input"
    prompt = f"MCP config input {spec.get('id')!r}: {label}"
    options = spec.get("options")
    if isinstance(options, list) and options:
        values = [str(o.get("value", o) if isinstance(o, dict) else o) for o in options]
        prompt += f" (one of: {', '.join(values)})"
    default = spec.get("default")
    if isinstance(default, str) and default and not spec.get("password"):
        prompt += f" [{default}]"
    return prompt + ": "


class Inputs:
    """The answers for one load: ``given`` first, then the process-wide cache, then ``ask``.

    ``specs`` maps an input id to its declaration (an id used but not declared is asked with a
    bare ``{"id": ..., "type": "promptString"}``: tolerant, as the answer may well be given).
    A failed ask is remembered for the rest of this load, so one bad input is asked once and
    reported for each server that uses it.
    """

    def __init__(
        self,
        specs: Mapping[str, dict[str, Any]],
        *,
        key: str | None,
        given: Mapping[str, str] | None,
        ask: Ask | None,
    ) -> None:
        self._specs = specs
        self._key = key
        self._given = dict(given or {})
        self._ask = ask or default_ask
        self._local: dict[str, str] = {}
        self._failed: dict[str, str] = {}

    def answer(self, input_id: str) -> str:
        if input_id in self._given:
            return str(self._given[input_id])
        if input_id in self._local:
            return self._local[input_id]
        if input_id in self._failed:
            raise VariableError(self._failed[input_id])
        if self._key is not None:
            with _LOCK:
                cached = _CACHE.get((self._key, input_id))
            if cached is not None:
                return cached
        try:
            value = self._asked(input_id)
        except VariableError as exc:
            self._failed[input_id] = str(exc)
            raise
        self._local[input_id] = value
        if self._key is not None:
            with _LOCK:
                _CACHE[(self._key, input_id)] = value
        return value

    def _asked(self, input_id: str) -> str:
        spec = dict(self._specs.get(input_id) or {"id": input_id, "type": "promptString"})
        kind = spec.get("type", "promptString")
        if kind == "command":
            raise VariableError(f"input {input_id!r} runs a VS Code command, which only VS Code can answer")
        try:
            value: Any = self._ask(spec)
        except Exception as exc:  # EOFError from getpass without a terminal, a callback's bug
            raise VariableError(f"input {input_id!r} has no answer ({type(exc).__name__})") from None
        if not isinstance(value, str):
            raise VariableError(f"input {input_id!r} has no answer (the ask callback returned no string)")
        default = spec.get("default")
        if not value and isinstance(default, str):
            return default
        return value
