"""Human in the loop, as state: the dialogs a session's server asked for, and handlers that wait.

:class:`Dialogs` is what a client's ``elicitation=`` and ``sampling=`` handlers are: each request
opens a dialog, is listed in ``open_dialogs`` and ``history``, tells the ``on_open`` callbacks and
waits (on the engine thread) for its answer, while a cell blocked in a session call keeps handling
widget messages (:mod:`._uipoll`). How a dialog looks is not this layer's business: the widgets'
``NotebookDialogs`` draws them (its ``_form_dialog``, ``_url_dialog``, ``_sampling_dialog`` and
``_show``), and the top layer's ``Session`` hands in the factory that makes one
(:func:`dialogs_for`), so the notebook layer never imports widgets.

Where a dialog appears is state too. A widget that starts calls (the explorer, an App view) owns a
:class:`DialogPlace` and runs each call through :meth:`DialogPlace.placed`, which marks the call's
task with the place (a context variable) and counts it as in flight there; a session's own calls (a
cell's) are marked with the cell's place (:func:`from_cell`), whose view is the running cell: in
Jupyter the kernel's ``display()`` finds it; in marimo, which has no such notion on the engine
thread, the place holds a writer to the cell that made the call (:func:`._host.cell_writer`), taken
as the call starts. A dialog asked for inside a marked task (a modern server's ``input_required``
round) goes to that place. One whose origin is not in the context (a legacy server's JSON-RPC
request, a task's input request answered by the poller) goes to every place with a call in flight on
that session; when there is none, to the places that watch the session (the tasks panel:
:meth:`DialogPlace.watch`) and under the running cell, as before. A dialog area draws its place's
open dialogs and drops each when it is answered, cancelled or its call ends. Where there is nowhere
to show one (no kernel, no place, no ``output``) the handler fails at once with an error that says
what to do: never a silent wait.

Signing in is a dialog too: a session whose ``auth=`` is an ``OAuth`` hands it
:meth:`Dialogs.sign_in` (:func:`offer_sign_in`), so a paste-back sign-in shows its link under the
running cell and waits for the address the person pastes, as the other dialogs wait.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

import anyio
import anyio.to_thread

from ..connection._model_sampling import framework_of, model_name, model_sampler
from ..protocol._errors import McpError
from ..protocol._sampling import sampling_answer
from . import _host, _uipoll

__all__ = [
    "DialogPlace",
    "DialogView",
    "Dialogs",
    "DialogsFactory",
    "current_place",
    "dialogs_for",
    "from_cell",
    "offer_sign_in",
    "sampler_name",
    "sampling_result",
]

logger = logging.getLogger("mcp_notebook.notebook")

_T = TypeVar("_T")

#: Makes a session's dialogs from its name (the top layer's ``Session.dialogs_factory``).
DialogsFactory = Callable[[str], Any]


class DialogView(Protocol):
    """One question on show: filled in by its buttons, waited for by the handler."""

    result: dict[str, Any] | None
    error: McpError | None
    widget: Any

    async def wait(self) -> None: ...

    def expire(self, why: str) -> None: ...


class DialogPlace:
    """Where the dialogs of the calls started from one widget appear: that widget's dialog area.

    State only: ``open_dialogs`` (oldest first) and ``on_change`` callbacks, called with the place
    (on the engine thread) when a dialog arrives or leaves; the widget layer's ``DialogArea``
    draws it. ``label`` names the widget (for reprs and errors).
    """

    def __init__(self, label: str = "") -> None:
        self.label = label
        self.open_dialogs: list[Any] = []
        self._callbacks: list[Callable[[DialogPlace], Any]] = []
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<DialogPlace {self.label!r}: {len(self.open_dialogs)} open>"

    def on_change(self, callback: Callable[[DialogPlace], Any]) -> Callable[[], None]:
        """Call ``callback(place)`` when a dialog arrives here or leaves; returns an undo."""
        self._callbacks.append(callback)
        return lambda: self._callbacks.remove(callback) if callback in self._callbacks else None

    def placed(self, session: Any, fn: Callable[..., Awaitable[_T]]) -> Callable[..., Awaitable[_T]]:
        """``fn`` run as a call started here: what ``session.spawn(place.placed(session, fn), ...)``
        runs. While it runs, the dialogs ``session``'s server asks for show in this place."""

        async def run(*args: Any) -> _T:
            token = _CURRENT.set(self)
            entry = (self, getattr(session, "dialogs", None))
            with _IN_FLIGHT_LOCK:
                _IN_FLIGHT.append(entry)
            try:
                return await fn(*args)
            finally:
                with _IN_FLIGHT_LOCK:
                    _IN_FLIGHT.remove(entry)
                _CURRENT.reset(token)

        return run

    def watch(self, session: Any) -> Callable[[], None]:
        """Also show here the dialogs of ``session`` that no running call claims (a task's question
        that comes while nothing runs: the tasks panel watches); returns an undo."""
        entry = (self, getattr(session, "dialogs", None))
        with _IN_FLIGHT_LOCK:
            _WATCHING.append(entry)

        def unwatch() -> None:
            with _IN_FLIGHT_LOCK:
                if entry in _WATCHING:
                    _WATCHING.remove(entry)

        return unwatch

    def _add(self, dialog: Any) -> None:
        with self._lock:
            self.open_dialogs.append(dialog)
        self._changed()

    def _remove(self, dialog: Any) -> None:
        with self._lock:
            if dialog not in self.open_dialogs:
                return
            self.open_dialogs.remove(dialog)
        self._changed()

    def _changed(self) -> None:
        for callback in list(self._callbacks):
            try:
                callback(self)
            except Exception:
                logger.exception("an on_change callback of a dialog place raised; ignored")


#: The place of the call the current task runs (set by :meth:`DialogPlace.placed`).
_CURRENT: contextvars.ContextVar[DialogPlace | None] = contextvars.ContextVar(
    "mcp_notebook_dialog_place", default=None
)
#: Every placed call in flight: (place, the session's dialogs), for requests with no context.
_IN_FLIGHT: list[tuple[DialogPlace, Any]] = []
#: The places that watch a session (:meth:`DialogPlace.watch`): (place, the session's dialogs).
_WATCHING: list[tuple[DialogPlace, Any]] = []
_IN_FLIGHT_LOCK = threading.Lock()


class _CellPlace(DialogPlace):
    """The place of a session's own calls (a cell's): the cell. ``write`` puts a dialog under the
    cell that made the call (marimo's, see :func:`._host.cell_writer`); None: the subclass's
    ``Dialogs._show`` (Jupyter's ``display()``, which goes to the running cell by itself)."""

    def __init__(self, write: Callable[[Any], None] | None = None) -> None:
        super().__init__("cell")
        self.write = write


#: The place of a session's own calls where the front end finds the running cell itself (Jupyter).
_CELL = _CellPlace()


def current_place() -> DialogPlace | None:
    """The place of the call this task runs for (a widget's), or None (a cell, a script, no call)."""
    place = _CURRENT.get()
    return None if isinstance(place, _CellPlace) else place


def from_cell(session: Any, fn: Callable[..., Awaitable[_T]]) -> Callable[..., Awaitable[_T]]:
    """``fn`` as a session's own call: its dialogs go under the running cell, unless it already
    runs inside a widget's placed call (the explorer calls ``session.acall_tool`` on the engine).
    Called on the cell's thread, where marimo tells which cell runs."""
    write = _host.cell_writer()
    place = _CELL if write is None else _CellPlace(write)

    @functools.wraps(fn)  # its name stays the call's (an interrupted cell names it)
    async def run(*args: Any) -> _T:
        if _CURRENT.get() is not None:
            return await fn(*args)
        return await place.placed(session, fn)(*args)

    return run


class Dialogs:
    """Elicitation and sampling handlers that ask the person at the notebook and wait for the answer.

    ``sampler``: a function ``(params) -> str | dict`` (sync or async) that drafts the sampling
    reply; with ``auto_sample`` it answers without asking. Subclasses draw the dialogs.
    """

    def __init__(
        self,
        session_name: str = "MCP server",
        *,
        sampler: Callable[[dict[str, Any]], Any] | None = None,
        auto_sample: bool = False,
    ) -> None:
        self.session_name = session_name
        self.sampler = sampler
        self.auto_sample = auto_sample
        #: Dialogs waiting for an answer, oldest first.
        self.open_dialogs: list[Any] = []
        #: Every dialog shown, oldest first (bounded).
        self.history: list[Any] = []
        self._callbacks: list[Callable[[Any], Any]] = []
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} for {self.session_name!r}: {len(self.open_dialogs)} open>"

    def on_open(self, callback: Callable[[Any], Any]) -> Callable[[], None]:
        """Call ``callback(dialog)`` as each dialog opens (on the engine thread); returns an undo."""
        self._callbacks.append(callback)
        return lambda: self._callbacks.remove(callback) if callback in self._callbacks else None

    # --- what a subclass draws --------------------------------------------------------------------

    def _form_dialog(self, params: dict[str, Any]) -> DialogView:
        raise NotImplementedError

    def _url_dialog(self, params: dict[str, Any]) -> DialogView:
        raise NotImplementedError

    def _sampling_dialog(
        self, params: dict[str, Any], draft: Any, *, asking: str | None = None
    ) -> DialogView:
        """The sampling request shown: with a reply to write (prefilled by ``draft``), or, given
        ``asking`` (a model's name), for approval before that model is asked."""
        raise NotImplementedError

    def _sign_in_dialog(self, params: dict[str, Any]) -> DialogView:
        raise NotImplementedError

    def _show(self, widget: Any) -> None:
        raise NotImplementedError

    def _show_in_cell(self, place: _CellPlace, widget: Any) -> None:
        """Under the cell of the call (marimo: the place's writer), unless the dialogs were given an
        ``output`` of their own; else as the subclass shows a dialog (Jupyter's running cell)."""
        if place.write is not None and getattr(self, "output", None) is None:
            place.write(widget)
        else:
            self._show(widget)

    def _nowhere(self, dialog: DialogView) -> str | None:
        """Why ``dialog``, which has no place, cannot be shown (None: it can be); subclasses say."""
        return None

    # --- handlers -------------------------------------------------------------------------------

    async def elicit(self, params: dict[str, Any]) -> dict[str, Any]:
        """The ``elicitation=`` handler: form or URL mode."""
        url_mode = params.get("mode") == "url"
        return await self._ask(self._url_dialog(params) if url_mode else self._form_dialog(params))

    async def sign_in(self, link: Any) -> str:
        """The paste-back prompt an ``OAuth`` asks through (``OAuth.paste_with``): shows the sign-in
        link (``link.url``) and returns what the person pasted. The dialog keeps no copy of it: the
        answer is taken out of the dialog's result as it is read."""
        params = {"server_url": link.server_url, "url": link.url, "redirect_uri": link.redirect_uri}
        result = await self._ask(self._sign_in_dialog(params))
        return str(result.pop("pasted", ""))

    async def sample(self, params: dict[str, Any]) -> dict[str, Any]:
        """The ``sampling=`` handler."""
        draft: Any = None
        if self.sampler is not None:
            try:
                draft = await self._draft(params)
            except Exception:
                if self.auto_sample:
                    raise
                # A failing draft must not cost the user the question: ask with an empty reply.
                logger.exception("the sampler raised; asking without a draft")
            if self.auto_sample:
                if isinstance(draft, dict):
                    return draft
                return sampling_result(str(draft or ""), sampler_name(self.sampler))
        return await self._ask(self._sampling_dialog(params, draft))

    def ask_model(self, model: Any) -> Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]:
        """The ``sampling=`` handler for a model object (a pydantic-ai ``Model``, a LangChain chat
        model): each request is shown for approval first, and only once approved is ``model``
        asked; its answer goes to the server. Rejected, the server gets an error and the model is
        never asked (it may cost money, and it reads what the server wrote)."""
        ask = model_sampler(model)
        if ask is None:
            raise TypeError(f"{type(model).__name__} is no pydantic-ai or LangChain chat model")
        name = model_name(model) or type(model).__name__

        async def approve_then_ask(params: dict[str, Any]) -> dict[str, Any]:
            await self._ask(self._sampling_dialog(params, None, asking=name))
            return await ask(params)

        return approve_then_ask

    async def _draft(self, params: dict[str, Any]) -> Any:
        sampler = self.sampler
        assert sampler is not None
        if inspect.iscoroutinefunction(sampler):
            return await sampler(params)
        draft = await anyio.to_thread.run_sync(sampler, params, abandon_on_cancel=True)
        return await draft if inspect.isawaitable(draft) else draft

    def _places(self, dialog: DialogView) -> list[DialogPlace]:
        """Where a dialog asked for now goes: the place of the call in this task's context, else
        every place with a call in flight on this session (the request's origin is unknown), else
        the places watching this session and the running cell. Empty: nowhere to show it."""
        place = _CURRENT.get()
        with _IN_FLIGHT_LOCK:
            running = [p for p, dialogs in _IN_FLIGHT if dialogs is self]
            watching = [p for p, dialogs in _WATCHING if dialogs is self]
        if place is not None:
            places = [place]
        elif running:
            places = list(dict.fromkeys(running))
        else:
            places = [*dict.fromkeys(watching), _CELL]
        shown_by_kernel = [p for p in places if isinstance(p, _CellPlace) and p.write is None]
        if shown_by_kernel and self._nowhere(dialog) is not None:
            # no kernel and no output: nobody would see it there (a marimo cell's place writes itself)
            places = [p for p in places if p not in shown_by_kernel]
        return places

    async def _ask(self, dialog: DialogView) -> dict[str, Any]:
        places = self._places(dialog)
        why = None if places else self._nowhere(dialog)
        with self._lock:
            if why is None:
                self.open_dialogs.append(dialog)
            self.history = [*self.history[-99:], dialog]
        if why is not None:
            dialog.expire(why)  # in the history, saying why it was never shown
            raise McpError("cancelled", why)
        _uipoll.dialog_opened()
        try:
            for place in places:
                if isinstance(place, _CellPlace):
                    self._show_in_cell(place, dialog.widget)
                else:
                    place._add(dialog)
            for callback in list(self._callbacks):
                try:
                    callback(dialog)
                except Exception:
                    logger.exception("an on_open callback of the dialogs raised; ignored")
            await dialog.wait()
        except BaseException:
            dialog.expire("The server stopped waiting for this answer.")
            raise
        finally:
            with self._lock:
                if dialog in self.open_dialogs:
                    self.open_dialogs.remove(dialog)
            for place in places:
                place._remove(dialog)
            _uipoll.dialog_closed()
        if dialog.error is not None:
            raise dialog.error
        assert dialog.result is not None
        return dialog.result


def sampling_result(text: str, model: str) -> dict[str, Any]:
    """A ``sampling/createMessage`` result with one text reply (the user's, or a sampler's)."""
    return sampling_answer(text, model, "endTurn")


def sampler_name(sampler: Any) -> str:
    """The model name a sampler's reply is given (its function's name)."""
    return str(getattr(sampler, "__name__", None) or type(sampler).__name__)


def offer_sign_in(auth: Any, dialogs: Any) -> Callable[[], None]:
    """Let ``auth`` (an ``OAuth``) ask for a paste-back sign-in through ``dialogs``, under the
    running cell, instead of the terminal's prompt; returns the undo (a no-op when either side
    cannot: another kind of auth, no dialogs)."""
    hook = getattr(auth, "paste_with", None)
    prompt = getattr(dialogs, "sign_in", None)
    if dialogs is None or not callable(hook) or not callable(prompt):
        return lambda: None
    undo: Callable[[], None] = hook(prompt)
    return undo


def dialogs_for(
    dialogs: Any,
    options: dict[str, Any],
    name: str,
    factory: DialogsFactory | None,
    *,
    sampling_approval: bool = True,
) -> Any:
    """The dialogs to install (setting ``options``' missing handlers to theirs), or None.

    ``None`` installs them only inside a notebook kernel (Jupyter's or marimo's, :func:`._host.in_notebook`)
    with ipywidgets available: a script has no
    one to click, so there the server learns the client cannot elicit or sample. ``factory`` makes
    them (the top layer's sessions have one); without it only the caller's own dialogs are used.

    A model object given as ``sampling=`` (pydantic-ai, LangChain) is asked only once the person
    approves each request in a dialog (:meth:`Dialogs.ask_model`), unless ``sampling_approval`` is
    False (then it answers alone, as under the core ``Client``). Where no dialog can be installed
    (no kernel, ``dialogs=False``), asking for approval raises ValueError at once, saying what to do.
    """
    model = options.get("sampling")
    approve = sampling_approval and model is not None and framework_of(model) is not None
    if approve:
        options["sampling"] = None
    try:
        made = _dialogs_for(dialogs, options, name, factory)
    finally:
        if approve:
            options["sampling"] = model
    if approve:
        if made is None:
            raise ValueError(
                f"{name}: sampling={type(model).__name__}(...) is asked only after you approve each "
                "request in a dialog, and no dialog can show here (no notebook kernel, or dialogs=False): "
                "pass sampling_approval=False to let the model answer without asking, or dialogs=True"
            )
        options["sampling"] = made.ask_model(model)
    return made


def _dialogs_for(dialogs: Any, options: dict[str, Any], name: str, factory: DialogsFactory | None) -> Any:
    if dialogs is False:
        return None
    wants = [kind for kind in ("elicitation", "sampling") if options.get(kind) is None]
    if not wants:
        return None
    if dialogs is None or dialogs is True:
        if dialogs is None:
            # No notebook kernel: nobody to click, and no widgets to import.
            if not _host.in_notebook():
                return None
            try:
                import ipywidgets  # noqa: F401  (the dialogs are widgets)
            except ImportError:
                return None
        if factory is None:
            if dialogs is None:
                return None  # the notebook layer's own Session draws nothing
            raise ValueError("dialogs=True needs mcp_notebook.Session: the notebook layer's draws no dialogs")
        dialogs = factory(name)
    if "elicitation" in wants:
        options["elicitation"] = dialogs.elicit
    if "sampling" in wants:
        options["sampling"] = dialogs.sample
    return dialogs  # ours, or the caller's own dialogs object
