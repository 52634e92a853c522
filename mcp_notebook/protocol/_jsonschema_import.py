"""jsonschema imported with the libraries of its format checkers loaded when a format needs them.

Why: jsonschema's format module imports, at its own import, every format library that is installed,
and the ``format-nongpl`` extra that JupyterLab brings installs them all: ``rfc3987_syntax`` builds an
Earley grammar with lark (about a second), ``webcolors``, ``uri_template``, ``fqdn`` and the RFC 3339
and 3986 validators compile their tables. The first call of a tool whose arguments need jsonschema
paid that (0.94 s, against 0.04 s for the official SDK client, which checks nothing), although
arguments never assert ``format`` (an annotation in 2020-12) and a form asserts only the formats its
schema names.

How: while jsonschema is first imported (by :func:`import_jsonschema`, which every validator of the
package goes through), each of those libraries that is installed and not yet imported is a stand-in
module holding, under the names jsonschema takes from it, small functions that import the real
library on their first call and hand over to it. The stand-ins leave ``sys.modules`` as soon as
jsonschema is imported, so any later ``import webcolors`` gets the real library. jsonschema keeps its
own checkers, for every format it had, with the same verdicts: for our forms and for any other code
in the process that uses ``jsonschema.FormatChecker``. Only a library whose names jsonschema uses
inside its checkers can wait; those it reads while importing (``idna``, ``jsonpointer`` and
``isoduration``, for the exception classes it catches) are imported then, as before. A library not
installed gets no stand-in, so jsonschema sees it missing, as before.

Another thread that imports one of these libraries in the moment jsonschema is being imported gets
the stand-in: its functions work; any other name it asks for raises ``AttributeError`` until the
import is over.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from collections.abc import Callable
from typing import Any

__all__ = ["DEFERRED", "import_jsonschema"]

#: The format libraries jsonschema imports with its format module and uses only inside its
#: checkers, with the names it takes from each (jsonschema/_format.py).
DEFERRED: dict[str, tuple[str, ...]] = {
    "rfc3987_syntax": ("is_valid_syntax",),
    "rfc3986_validator": ("validate_rfc3986",),
    "rfc3339_validator": ("validate_rfc3339",),
    "fqdn": ("FQDN",),
    "webcolors": ("name_to_hex", "normalize_hex"),
    "uri_template": ("validate",),
}


def import_jsonschema() -> None:
    """Import jsonschema, the first time with its format libraries deferred (see the module)."""
    if "jsonschema" in sys.modules:
        return
    # No lock (this layer has no threads): two threads here at once each install stand-ins only
    # where none is, Python's import lock makes one of them import jsonschema while the other
    # waits for it, and each removes only its own stand-ins; whichever jsonschema got hand over.
    stand_ins = {
        name: _StandIn(name, names)
        for name, names in DEFERRED.items()
        if name not in sys.modules and importlib.util.find_spec(name) is not None
    }
    sys.modules.update(stand_ins)
    try:
        import jsonschema  # noqa: F401
    finally:
        for name, stand_in in stand_ins.items():
            if sys.modules.get(name) is stand_in:
                del sys.modules[name]


class _StandIn(types.ModuleType):
    """A library's place in ``sys.modules`` while jsonschema is imported: ``names`` hand over to
    the real library, imported on the first call."""

    def __init__(self, name: str, names: tuple[str, ...]) -> None:
        super().__init__(name)
        for attribute in names:
            setattr(self, attribute, _handing_over(name, attribute))

    def __getattr__(self, attribute: str) -> Any:
        if attribute.startswith("__") or sys.modules.get(self.__name__) is self:
            raise AttributeError(attribute)
        return getattr(importlib.import_module(self.__name__), attribute)


def _handing_over(module: str, attribute: str) -> Callable[..., Any]:
    def hand_over(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), attribute)(*args, **kwargs)

    hand_over.__name__ = hand_over.__qualname__ = attribute
    hand_over.__doc__ = f"{module}.{attribute}, imported on the first call."
    return hand_over
