"""One session per name: what ``connect()`` does when the cell that called it runs again.

A notebook's connect cell (``demo = mcp_notebook.connect(...)``) is run again all the time: Run
All, a restarted section, a changed option. Opening a second session each time would leave the
first one's server running, unreachable (its variable now names the new one), under a name that
``%mcp`` shows as ``demo-2``. So ``connect()`` looks for the session it opened before
(:meth:`~._registry.Registry.opened_with`: the one named ``name=``, else the last one ``connect()``
opened for the same target from the same cell) and

* returns it, when the target and the options are the same and it is still open;
* otherwise closes it, says so in one line, and connects anew under the same name.

Only an earlier run of the same cell (or an explicit ``name=``) means the same session: another
cell connecting to the same server, with other options or inside ``with connect(...) as s:``, gets
a session of its own, as before, and never closes (or borrows) the first. The calls of one run
never mean each other (``[connect(t) for t in targets]`` opens one session per target); a cell
run again pairs its k-th ``connect()`` with the k-th of the cell's previous run. Outside a kernel
(a script) there are no runs, so only ``name=`` finds a session; in a kernel whose front end
sends no cell id (nbclient) the cell is the calling line. In marimo the cell is marimo's cell id and
the run is that run's execution context (:func:`._host.cell_run`): a cell that marimo runs again
reactively, because a cell it reads from ran, gets its session back the same way.
The options' values are compared, never shown (they may hold tokens): the note names the
options that differ, not what they hold.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any

from . import _host
from ._registry import REGISTRY, Entry, Given, same_value
from ._session import Session
from ._uipoll import running_kernel

__all__ = ["call_site", "connect_once", "current_run"]


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
    site, run = _site_and_run()
    ordinal = _next_ordinal(site, run)
    found = REGISTRY.opened_with(name, site, run, ordinal) if run is not None or name is not None else None
    if found is not None:
        old_name, entry = found
        given = entry.given
        if entry.session.model.status != "closed" and given is not None and given.same_call(target, options):
            REGISTRY.note_given(entry.session, Given(target, dict(options), site, run, ordinal))
            return entry.session  # type: ignore[return-value]
        note = _replaced_note(old_name, entry, target, options)
        entry.session.close()
        print(note)
        name = old_name
    session = open_session(target, name=name, register=False, **options)
    session._register("connect()")
    REGISTRY.note_given(session, Given(target, dict(options), site, run, ordinal))
    return session


#: The last run seen of each site and how many ``connect()`` calls it made so far.
_ordinals: dict[Any, tuple[Any, int]] = {}


def _next_ordinal(site: Any, run: Any) -> int:
    """Which ``connect()`` of this run of ``site`` this is: 0 for the first, 1 for the next..."""
    last_run, count = _ordinals.get(site, (None, 0))
    ordinal = count if last_run == run and run is not None else 0
    _ordinals[site] = (run, ordinal + 1)
    return ordinal


def _site_and_run() -> tuple[Any, Any]:
    """``(call_site(), current_run())``: marimo's cell and run when a marimo cell runs, else the
    Jupyter kernel's (or the calling line and no run, outside any notebook)."""
    marimo_cell = _host.cell_run()
    if marimo_cell is not None:
        return marimo_cell
    return call_site(), current_run()


def current_run() -> Any:
    """The kernel's execute request being served (its message id), or None outside a kernel."""
    parent = _parent_message()
    header = parent.get("header") if isinstance(parent, dict) else None
    run = header.get("msg_id") if isinstance(header, dict) else None
    return run if isinstance(run, str) and run else None


def _parent_message() -> Any:
    get_parent = getattr(running_kernel(), "get_parent", None)
    if not callable(get_parent):
        return None
    try:
        return get_parent()
    except Exception:  # an older kernel's signature: no run, no cell
        return None


def call_site() -> Any:
    """Where ``connect()`` is called from: the notebook cell (the id the front end sends with
    each execution: JupyterLab, Notebook 7), else the calling code's file and
    line (ipykernel names a cell's file after its source: the same cell, unchanged, is one site)."""
    parent = _parent_message()
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
