"""Human in the loop, as state: the dialogs a session's server asked for, and handlers that wait.

:class:`Dialogs` is what a client's ``elicitation=`` and ``sampling=`` handlers are: each request
opens a dialog, is listed in ``open_dialogs`` and ``history``, tells the ``on_open`` callbacks and
waits (on the engine thread) for its answer, while a cell blocked in a session call keeps handling
widget messages (:mod:`._uipoll`). How a dialog looks is not this layer's business: the widgets'
``NotebookDialogs`` draws them (its ``_form_dialog``, ``_url_dialog``, ``_sampling_dialog`` and
``_show``), and the top layer's ``Session`` hands in the factory that makes one
(:func:`dialogs_for`), so the notebook layer never imports widgets.
"""

from __future__ import annotations

import inspect
import logging
import sys
import threading
from collections.abc import Callable
from typing import Any, Protocol

import anyio
import anyio.to_thread

from ..protocol._errors import McpError
from . import _uipoll

__all__ = ["DialogView", "Dialogs", "DialogsFactory", "dialogs_for", "sampler_name", "sampling_result"]

logger = logging.getLogger("mcp_notebook.notebook")

#: Makes a session's dialogs from its name (the top layer's ``Session.dialogs_factory``).
DialogsFactory = Callable[[str], Any]


class DialogView(Protocol):
    """One question on show: filled in by its buttons, waited for by the handler."""

    result: dict[str, Any] | None
    error: McpError | None
    widget: Any

    async def wait(self) -> None: ...

    def expire(self, why: str) -> None: ...


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

    def _sampling_dialog(self, params: dict[str, Any], draft: Any) -> DialogView:
        raise NotImplementedError

    def _show(self, widget: Any) -> None:
        raise NotImplementedError

    # --- handlers -------------------------------------------------------------------------------

    async def elicit(self, params: dict[str, Any]) -> dict[str, Any]:
        """The ``elicitation=`` handler: form or URL mode."""
        url_mode = params.get("mode") == "url"
        return await self._ask(self._url_dialog(params) if url_mode else self._form_dialog(params))

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

    async def _draft(self, params: dict[str, Any]) -> Any:
        sampler = self.sampler
        assert sampler is not None
        if inspect.iscoroutinefunction(sampler):
            return await sampler(params)
        draft = await anyio.to_thread.run_sync(sampler, params, abandon_on_cancel=True)
        return await draft if inspect.isawaitable(draft) else draft

    async def _ask(self, dialog: DialogView) -> dict[str, Any]:
        with self._lock:
            self.open_dialogs.append(dialog)
            self.history = [*self.history[-99:], dialog]
        _uipoll.dialog_opened()
        try:
            self._show(dialog.widget)
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
            _uipoll.dialog_closed()
        if dialog.error is not None:
            raise dialog.error
        assert dialog.result is not None
        return dialog.result


def sampling_result(text: str, model: str) -> dict[str, Any]:
    """A ``sampling/createMessage`` result with one text reply."""
    return {
        "role": "assistant",
        "content": {"type": "text", "text": text},
        "model": model,
        "stopReason": "endTurn",
    }


def sampler_name(sampler: Any) -> str:
    """The model name a sampler's reply is given (its function's name)."""
    return str(getattr(sampler, "__name__", None) or type(sampler).__name__)


def dialogs_for(dialogs: Any, options: dict[str, Any], name: str, factory: DialogsFactory | None) -> Any:
    """The dialogs to install (setting ``options``' missing handlers to theirs), or None.

    ``None`` installs them only inside a Jupyter kernel with ipywidgets available: a script has no
    one to click, so there the server learns the client cannot elicit or sample. ``factory`` makes
    them (the top layer's sessions have one); without it only the caller's own dialogs are used.
    """
    if dialogs is False:
        return None
    wants = [kind for kind in ("elicitation", "sampling") if options.get(kind) is None]
    if not wants:
        return None
    if dialogs is None or dialogs is True:
        if dialogs is None:
            # No IPython, no kernel: nobody to click, and no widgets to import.
            if "IPython" not in sys.modules or not _uipoll.in_kernel():
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
