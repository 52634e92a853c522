"""One session per name: what ``connect()`` does when the cell that called it runs again.

A notebook's connect cell (``demo = mcp_notebook.connect(...)``) is run again all the time: Run
All, a restarted section, a changed option. Opening a second session each time would leave the
first one's server running, unreachable (its variable now names the new one), under a name that
``%mcp`` shows as ``demo-2``. So ``connect()`` looks for the session it opened before
(:meth:`~._registry.Registry.opened_with`: the one named ``name=``, else the last one ``connect()``
opened for the same target from the same cell) and

* returns it, when the target and the options are the same and it is still open;
* otherwise closes it, says so in one line, and connects anew under the same name.

Only the same cell (or an explicit ``name=``) means the same session: another cell connecting to
the same server, with other options or inside ``with connect(...) as s:``, gets a session of its
own, as before, and never closes (or borrows) the first. Two sessions of one server from one cell
need two names (``name="a"``, ``name="b"``). Outside a kernel that sends cell ids (a script, the
terminal IPython, whose cells' files carry their execution count) the cell is the calling line.
The options' values are compared, never shown (they may hold tokens): the note names the
options that differ, not what they hold.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any

from ._registry import REGISTRY, Entry, Given, same_value
from ._session import Session

__all__ = ["call_site", "connect_once"]


def connect_once(open_session: Callable[..., Session], target: Any, options: Mapping[str, Any]) -> Session:
    """``open_session(target, **options)`` (the notebook layer's ``connect``), once per name.

    ``options`` holds ``name`` and ``register`` too; ``register=False`` opens a session of its own,
    always (it never joins the notebook's set, so it has no name to be found by).
    """
    options = dict(options)
    if options.get("register", True) is False:
        return open_session(target, **options)
    name = options.pop("name", None)
    options.pop("register", None)
    site = call_site()
    found = REGISTRY.opened_with(name, target, site)
    if found is not None:
        old_name, entry = found
        given = entry.given
        if entry.session.model.status != "closed" and given is not None and given.same_call(target, options):
            return entry.session  # type: ignore[return-value]
        note = _replaced_note(old_name, entry, target, options)
        entry.session.close()
        print(note)
        name = old_name
    session = open_session(target, name=name, register=False, **options)
    session._register("connect()")
    REGISTRY.note_given(session, Given(target, dict(options), site))
    return session


def call_site() -> Any:
    """Where ``connect()`` is called from: the notebook cell (the id the front end sends with
    each execution: JupyterLab, Notebook 7), else the calling code's file and
    line (ipykernel names a cell's file after its source: the same cell, unchanged, is one site)."""
    ipython = sys.modules.get("IPython")  # never imported here: only if it is running
    get_ipython = getattr(ipython, "get_ipython", None)
    shell = get_ipython() if callable(get_ipython) else None
    get_parent = getattr(getattr(shell, "kernel", None), "get_parent", None)
    if callable(get_parent):
        try:
            parent = get_parent()
        except Exception:  # an older kernel's signature: fall back to the code's line
            parent = None
        metadata = parent.get("metadata") if isinstance(parent, dict) else None
        cell = metadata.get("cellId") if isinstance(metadata, dict) else None
        if isinstance(cell, str) and cell:
            return ("cell", cell)
    frame = sys._getframe(1)
    while frame.f_back is not None and str(frame.f_globals.get("__name__", "")).startswith("mcp_notebook."):
        frame = frame.f_back
    return ("line", frame.f_code.co_filename, frame.f_lineno)


def _replaced_note(name: str, entry: Entry, target: Any, options: Mapping[str, Any]) -> str:
    """One line: which session was closed, and why (what differs; option names, never values)."""
    given = entry.given
    if given is None:
        why = f"it was opened by {entry.opened}, not by connect()"
    elif entry.session.model.status == "closed":
        why = "its connection had closed"
    elif not same_value(given.target, target):
        why = "the target differs"
    else:
        old, missing = given.options, object()
        keys = {*old, *options}
        changed = sorted(k for k in keys if not same_value(old.get(k, missing), options.get(k, missing)))
        why = f"the options differ ({', '.join(changed)})"
    return f"mcp-notebook: closed the session {name!r} ({entry.target}) and connected again: {why}"
