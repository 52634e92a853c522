"""Human in the loop: the server asks the person at the notebook, through dialogs in the cell.

:class:`NotebookDialogs` provides async handlers for a :class:`~mcp_notebook.Client`'s
``elicitation=`` and ``sampling=``: ``Client(..., elicitation=dialogs.elicit,
sampling=dialogs.sample)``. A notebook :class:`~mcp_notebook.notebook.Session` installs them by
itself inside a kernel (``dialogs=False`` turns that off; a handler you pass always wins). They run
on the engine thread, for legacy JSON-RPC requests and modern ``input_required`` rounds alike, show
a dialog in the cell that is running (``IPython.display.display`` from the engine thread goes there,
or into ``dialogs.output`` when that is an Output widget), and wait for a button:

- elicitation, form mode (class ``mcpnb-elicitation``): the server's message, escaped; a form for
  ``requestedSchema`` with its defaults; Accept (``mcpnb-accept``, only once the form is valid),
  Decline (``mcpnb-decline``), Cancel (``mcpnb-cancel-dialog``).
- elicitation, URL mode (class ``mcpnb-url-consent``): the message and the full URL, its host
  emphasised (:func:`display._html.display_url`). Open (``mcpnb-open``) consents and only then shows a
  normal link the user clicks (``target=_blank``, ``rel=noopener noreferrer``; https only): nothing
  is opened or run for them. Refuse (``mcpnb-refuse``) declines.
- sampling (class ``mcpnb-sampling``): the messages (role, escaped text, raster images), the system
  prompt, maxTokens; a Textarea (``mcpnb-sampling-reply``) for the reply, prefilled by
  ``dialogs.sampler`` when set; Send (``mcpnb-sampling-send``) or Reject
  (``mcpnb-sampling-reject``: the server gets an error, code -1). With ``dialogs.auto_sample =
  True`` the sampler answers without a dialog. A model object given as ``sampling=`` (pydantic-ai,
  LangChain: :meth:`~mcp_notebook.notebook._dialogs.Dialogs.ask_model`) is asked only after this
  dialog is approved: it then has no reply to write, and Send reads "Ask <model>".

- sign-in (class ``mcpnb-sign-in``), a paste-back sign-in of the session's ``OAuth``
  (:meth:`Dialogs.sign_in <mcp_notebook.notebook._dialogs.Dialogs.sign_in>`): the server and a
  link to the sign-in page (``mcpnb-sign-in-link``, its host emphasised; opened by the person, in
  any browser), the redirect address the browser will land on, a password field
  (``mcpnb-sign-in-paste``) for the address it landed on (or the code), Sign in
  (``mcpnb-sign-in-submit``) and Cancel (``mcpnb-cancel-dialog``). The pasted text is read once
  and the field cleared at once, so neither the widget's state nor a saved notebook keeps it;
  the dialog's text says only that an address was pasted.

Once answered, a dialog is disabled and says what was answered; one the server stopped waiting for
(timeout, cancellation) says so. While any dialog is open, a cell blocked in a session call keeps
handling widget messages (:mod:`mcp_notebook.notebook._uipoll`), so the buttons work.

A dialog asked for by a call started from a widget (the explorer, an App view) shows in that
widget's :class:`DialogArea` (class ``mcpnb-dialog-area``), the view of its
:class:`~mcp_notebook.notebook._dialogs.DialogPlace`, and leaves it once answered, cancelled or
when its call ends. With no kernel, no place and no ``output`` the handler fails at once with an
error that says what to do (pass a handler, or set ``output``).

For tests and automation: ``dialogs.open_dialogs`` lists the dialogs waiting for an answer and
``dialogs.on_open(callback)`` calls ``callback(dialog)`` (on the engine thread) as each opens.

Roots: :class:`RootsList` is an editable list of roots usable as ``roots=``; :func:`roots_widget`
edits it. The client asks its handler at every ``roots/list``, so edits reach the server the next
time it asks; telling a legacy server at once needs core support (see :class:`RootsList`).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import Any
from urllib.parse import SplitResult, urlsplit

import anyio
import anyio.to_thread
import ipywidgets

from ..auth._discovery import is_loopback_host
from ..display._html import display_url, escape, short
from ..notebook import _host
from ..notebook._dialogs import DialogPlace, Dialogs, sampler_name, sampling_result
from ..notebook._roots import RootsList, root_entry
from ..protocol._errors import McpError
from ..protocol._printable import printable
from ..protocol._secrets import MASK
from . import _ui as W
from ._fallback import Fallback, plural
from ._form import SchemaForm
from ._prompts import messages_widget
from ._result_view import html_widget as _html

__all__ = ["Dialog", "DialogArea", "NotebookDialogs", "RootsList", "RootsWidget", "roots_widget"]

logger = logging.getLogger("mcp_notebook.widgets")

#: The JSON-RPC code the spec's examples use for "the user rejected the sampling request".
USER_REJECTED = -1
_MAX_SHOWN = 2000


def _button(description: str, css: str, style: str = "", icon: str = "") -> W.Button:
    button = W.Button(description=description, button_style=style, icon=icon)
    button.add_class(css)
    return button


def _disable(widget: W.Widget) -> None:
    if hasattr(widget, "disabled"):
        widget.disabled = True
    for child in getattr(widget, "children", ()):
        _disable(child)


def _plain_url(url: str) -> SplitResult | None:
    """``url``'s parts if nothing is hidden in it (no space, control or quoting character), else None."""
    if not isinstance(url, str) or any(c.isspace() or ord(c) < 32 or c in "\"'<>\\`" for c in url):
        return None
    try:
        return urlsplit(url)
    except ValueError:
        return None


def _link_target(url: str) -> str | None:
    """``url`` if it is safe as a link's href (an https URL with nothing hidden in it), else None."""
    parts = _plain_url(url)
    return url if parts is not None and parts.scheme.lower() == "https" and parts.hostname else None


def _sign_in_target(url: str) -> str | None:
    """``url`` if it may be a sign-in link: https, or http on loopback (an authorization server on
    this machine, which discovery allows too); never anything that could run."""
    parts = _plain_url(url)
    if parts is None or _link_target(url) is not None:
        return None if parts is None else url
    return url if parts.scheme.lower() == "http" and is_loopback_host(parts.hostname) else None


class _DialogBox(Fallback, W.VBox):
    """A dialog's widget. Its text form (a terminal, a saved notebook: ``text/plain``) is what was
    asked and what was answered (:meth:`Dialog.text`), not ipywidgets' ``VBox(children=...)``."""

    snapshot_note = "A snapshot of the dialog, taken when it was shown or answered."

    def __init__(self, dialog: Dialog, children: list[W.Widget], **kwargs: Any) -> None:
        super().__init__(children, **kwargs)
        self._dialog = dialog
        #: The IPython display of it under a cell (None: shown elsewhere, or not yet).
        self.display_handle: Any = None

    def summary(self) -> str:
        return self._dialog.text()


class Dialog:
    """One question to the user: its widget, its buttons, and, once given, the answer.

    ``kind`` is "elicitation", "url" or "sampling". ``widget`` is what is displayed; the buttons
    are attributes (``accept_button``, ``open_button``, ``send_button``, ...). ``result`` is the
    handler's result once answered, ``error`` the McpError for a rejection. ``repr(widget)`` (and
    its ``text/plain``) is :meth:`text`.
    """

    # Set by the builder of each kind (absent on the other kinds):
    form: SchemaForm  # elicitation, form mode
    accept_button: W.Button
    decline_button: W.Button
    cancel_button: W.Button
    url: str  # elicitation, URL mode
    open_button: W.Button
    refuse_button: W.Button
    reply: W.Textarea  # sampling
    send_button: W.Button
    reject_button: W.Button
    paste: W.Password  # sign-in (with url and cancel_button)
    sign_in_button: W.Button

    def __init__(self, kind: str, title: str, session_name: str) -> None:
        self.kind = kind
        self.title = title
        self.session_name = session_name
        #: What is asked, as plain text (the builder of each kind sets it).
        self.question = ""
        #: The answer in words, as plain text, once given ("" before).
        self.answer_text = ""
        self.result: dict[str, Any] | None = None
        self.error: McpError | None = None
        self._done = threading.Event()
        self._lock = threading.Lock()
        self.header = _html(
            f"<b>{escape(session_name)}</b> {escape(title)}",
            "mcpnb-dialog-title",
        )
        self.body = W.VBox(layout=W.Layout(width="100%"))
        self.buttons = W.HBox()
        self.buttons.add_class("mcpnb-dialog-buttons")
        self.problems = _html("", "mcpnb-dialog-problems")
        self.answer = _html("", "mcpnb-dialog-answer")
        self.widget = _DialogBox(
            self,
            [self.header, self.body, self.problems, self.buttons, self.answer],
            layout=W.Layout(width="100%", border="1px solid #888", padding="4px 8px"),
        )
        self.widget.add_class("mcpnb-dialog")

    @property
    def answered(self) -> bool:
        return self._done.is_set()

    def text(self) -> str:
        """The dialog in words: who asked what, and the answer (or that none came yet).

        Every string in it is printable (control and bidi characters as visible escapes) and cut
        short; a secret the user typed (a password field) is never in it."""
        asked = f"MCP {printable(short(self.session_name, 80))} {self.title}"
        if self.question:
            asked += f": {printable(short(self.question, 300))}"
        answer = printable(short(self.answer_text, 300)) if self.answered else "(waiting for an answer)"
        return f"{asked}\n  {answer}"

    def finish(
        self,
        summary: str,
        result: dict[str, Any] | None = None,
        error: McpError | None = None,
        *,
        html: str | None = None,
    ) -> bool:
        """Record the answer (once; later calls do nothing), disable the dialog, wake the handler.

        ``summary`` is the answer in words (plain text); the dialog shows ``html`` instead where
        given (a link), else ``summary`` escaped."""
        with self._lock:
            if self._done.is_set():
                return False
            self.result, self.error = result, error
            self.answer_text = summary
            self._done.set()
        _disable(self.body)
        _disable(self.buttons)
        self.problems.value = ""
        self.answer.value = f"<div><i>{html if html is not None else escape(summary)}</i></div>"
        self._redisplay()
        return True

    def _redisplay(self) -> None:
        """Put the answered dialog's text and snapshot in its cell's output (a saved notebook
        keeps what a display sent, which was the unanswered question)."""
        handle = self.widget.display_handle
        if handle is None:
            return
        try:
            handle.update(self.widget)
        except Exception:  # the live dialog is answered either way
            logger.debug("could not update the dialog's display", exc_info=True)

    async def wait(self) -> None:
        # A thread waits on the threading.Event: clicks arrive on any thread, on any event loop.
        await anyio.to_thread.run_sync(self._done.wait, abandon_on_cancel=True)

    def expire(self, why: str) -> None:
        """The server stopped waiting (timeout, cancellation, closed connection)."""
        self.finish(why, error=McpError("cancelled", why))


class NotebookDialogs(Dialogs):
    """Elicitation and sampling handlers that ask the person at the notebook; see the module doc.

    The waiting, ``open_dialogs``, ``history`` and ``on_open`` are the notebook layer's
    :class:`~mcp_notebook.notebook._dialogs.Dialogs`; this class draws the dialogs.
    ``output``: where dialogs appear: None (``IPython.display.display``: the running cell), an
    ``ipywidgets.Output``, or any callable taking the widget. ``sampler``: a function ``(params)
    -> str | dict`` (sync or async) that drafts the sampling reply; with ``auto_sample`` it
    answers without asking.
    """

    def __init__(
        self,
        session_name: str = "MCP server",
        *,
        output: Any = None,
        sampler: Callable[[dict[str, Any]], Any] | None = None,
        auto_sample: bool = False,
    ) -> None:
        super().__init__(session_name, sampler=sampler, auto_sample=auto_sample)
        self.output = output
        #: Dialogs waiting for an answer, oldest first.
        self.open_dialogs: list[Dialog] = []
        #: Every dialog shown, oldest first (bounded).
        self.history: list[Dialog] = []

    def _nowhere(self, dialog: Any) -> str | None:
        if self.output is not None or _host.in_notebook():
            return None
        if dialog.kind == "sign-in":
            return (
                f"{self.session_name}: a sign-in by paste-back has nowhere to show its link here "
                "(no notebook kernel, no dialogs.output)"
            )
        what, option = (
            ("a model reply (sampling)", "sampling")
            if dialog.kind == "sampling"
            else ("the user's input (elicitation)", "elicitation")
        )
        return (
            f"{self.session_name}: the server asked for {what}, but there is nowhere to show a dialog "
            f"here (no notebook kernel, no dialogs.output): pass {option}=a_handler to connect(), "
            "or run this in a notebook"
        )

    def _show(self, widget: W.Widget) -> None:
        output = self.output
        if output is None:
            from IPython.display import display

            # with a display id, so that the answered dialog can update what the cell keeps
            handle = display(widget, display_id=True)
            if isinstance(widget, _DialogBox):
                widget.display_handle = handle
        elif isinstance(output, ipywidgets.Output):  # the user's, or one of ours
            output.append_display_data(widget)
        else:
            output(widget)

    # --- elicitation: form ----------------------------------------------------------------------

    def _form_dialog(self, params: dict[str, Any]) -> Dialog:
        dialog = Dialog("elicitation", "asks for input", self.session_name)
        dialog.widget.add_class("mcpnb-elicitation")
        dialog.question = _message_text(params.get("message"))
        schema = params.get("requestedSchema")
        schema = schema if isinstance(schema, dict) else {"type": "object", "properties": {}}
        secret = _secret_fields(schema)
        form = SchemaForm(schema)
        dialog.form = form
        message = _html(_message_html(params.get("message")), "mcpnb-dialog-message")
        dialog.body.children = (message, form.widget)
        accept = _button("Accept", "mcpnb-accept", "success", "check")
        decline = _button("Decline", "mcpnb-decline", "warning", "times")
        cancel = _button("Cancel", "mcpnb-cancel-dialog", "", "ban")
        dialog.accept_button, dialog.decline_button, dialog.cancel_button = accept, decline, cancel
        dialog.buttons.children = (accept, decline, cancel)

        def on_accept(_button: Any) -> None:
            problems = form.errors()
            if problems:
                dialog.problems.value = (
                    "<div style='color:#b00020'>"
                    + "<br>".join(escape(short(p, 300)) for p in problems[:20])
                    + "</div>"
                )
                return
            content = form.value
            shown = {key: MASK if key in secret else value for key, value in content.items()}
            dialog.finish(
                f"Accepted; sent {short(_json(shown), _MAX_SHOWN)}",
                {"action": "accept", "content": content},
            )

        accept.on_click(on_accept)
        decline.on_click(lambda _b: dialog.finish("Declined.", {"action": "decline"}))
        cancel.on_click(lambda _b: dialog.finish("Cancelled.", {"action": "cancel"}))
        return dialog

    # --- elicitation: URL -----------------------------------------------------------------------

    def _url_dialog(self, params: dict[str, Any]) -> Dialog:
        dialog = Dialog("url", "asks you to open a web page", self.session_name)
        dialog.widget.add_class("mcpnb-url-consent")
        url = params.get("url")
        url = url if isinstance(url, str) else ""
        dialog.url = url
        dialog.question = f"{_message_text(params.get('message'))} (the page: {url})"
        message = _html(_message_html(params.get("message")), "mcpnb-dialog-message")
        address = _html(
            f"<div>The page: {display_url(url)}</div>"
            "<div><small>Check the site (in bold) before you open it; nothing opens by itself."
            "</small></div>",
            "mcpnb-url",
        )
        elicitation_id = params.get("elicitationId")
        identifier = _html(
            f"<small>request {escape(short(elicitation_id, 200))}</small>" if elicitation_id else "",
            "mcpnb-elicitation-id",
        )
        dialog.body.children = (message, address, identifier)
        open_button = _button("Open", "mcpnb-open", "success", "external-link")
        refuse = _button("Refuse", "mcpnb-refuse", "warning", "times")
        dialog.open_button, dialog.refuse_button = open_button, refuse
        dialog.buttons.children = (open_button, refuse)
        target = _link_target(url)
        if target is None:
            open_button.disabled = True
            open_button.tooltip = "only https addresses can be opened from here"

        def on_open(_button: Any) -> None:
            if target is None:  # the button is disabled; a programmatic click changes nothing
                return
            link = (
                f'<a href="{escape(target)}" target="_blank" rel="noopener noreferrer" '
                f'class="mcpnb-url-link">Open {display_url(target)} in a new tab</a>'
            )
            dialog.finish(
                f"You agreed to open the page: {target}",
                {"action": "accept"},
                html=f"You agreed to open the page: {link}",
            )

        open_button.on_click(on_open)
        refuse.on_click(lambda _b: dialog.finish("Refused.", {"action": "decline"}))
        return dialog

    # --- sign-in (paste-back) ------------------------------------------------------------------

    def _sign_in_dialog(self, params: dict[str, Any]) -> Dialog:
        dialog = Dialog("sign-in", "asks you to sign in", self.session_name)
        dialog.widget.add_class("mcpnb-sign-in")
        url, redirect = str(params.get("url", "")), str(params.get("redirect_uri", ""))
        dialog.url = url
        host = urlsplit(url).hostname or "?"
        dialog.question = f"sign in at {host} for {params.get('server_url', '')}"
        target = _sign_in_target(url)
        link = (
            f'<a href="{escape(target)}" target="_blank" rel="noopener noreferrer" '
            f'class="mcpnb-sign-in-link">Open the sign-in page at {display_url(target)}</a>'
            if target is not None
            else f"The sign-in page (copy it into a browser): <code>{escape(short(url, 2000))}</code>"
        )
        message = _html(
            f"<div>To use <b>{escape(short(params.get('server_url', ''), 300))}</b>, sign in.</div>"
            f"<div>1. {link} (in any browser, on any machine).</div>"
            f"<div>2. After you sign in, the browser goes to <code>{escape(short(redirect, 300))}</code>"
            "…, a page that may not load. Copy its whole address from the address bar (or just the "
            "code) and paste it here; it is not shown.</div>",
            "mcpnb-sign-in-message",
        )
        paste = W.Password(placeholder="the address the browser landed on", layout=W.Layout(width="100%"))
        paste.add_class("mcpnb-sign-in-paste")
        dialog.body.children = (message, paste)
        submit = _button("Sign in", "mcpnb-sign-in-submit", "success", "sign-in")
        cancel = _button("Cancel", "mcpnb-cancel-dialog", "", "ban")
        dialog.paste, dialog.sign_in_button, dialog.cancel_button = paste, submit, cancel
        dialog.buttons.children = (submit, cancel)

        def on_submit(_button: Any) -> None:
            pasted, paste.value = paste.value, ""  # read once; the widget keeps no copy
            if not pasted.strip():
                dialog.problems.value = "<div style='color:#b00020'>Paste the address first.</div>"
                return
            dialog.finish("Pasted the address the browser landed on (not shown).", {"pasted": pasted})

        def on_cancel(_button: Any) -> None:
            paste.value = ""
            dialog.finish("Cancelled.", error=McpError("auth", "the sign-in was cancelled at the notebook"))

        submit.on_click(on_submit)
        cancel.on_click(on_cancel)
        return dialog

    # --- sampling -------------------------------------------------------------------------------

    def _sampling_dialog(self, params: dict[str, Any], draft: Any, *, asking: str | None = None) -> Dialog:
        dialog = Dialog("sampling", "asks for a model reply (sampling)", self.session_name)
        dialog.widget.add_class("mcpnb-sampling")
        messages = params.get("messages")
        messages = messages if isinstance(messages, list) else []
        dialog.question = _last_message_text(messages)
        details = []
        system = params.get("systemPrompt")
        if system:
            details.append(
                f"<div><b>System prompt</b><pre style='white-space:pre-wrap;margin:0.2em 0'>"
                f"{escape(short(system, 20_000))}</pre></div>"
            )
        limits = [f"maxTokens {escape(params.get('maxTokens'))}"]
        if params.get("temperature") is not None:
            limits.append(f"temperature {escape(params.get('temperature'))}")
        hints = (
            (params.get("modelPreferences") or {}).get("hints")
            if isinstance(params.get("modelPreferences"), dict)
            else None
        )
        if isinstance(hints, list) and hints:
            names = ", ".join(str(h.get("name")) for h in hints if isinstance(h, dict) and h.get("name"))
            if names:
                limits.append(f"model hints {escape(short(names, 300))}")
        details.append(f"<div><small>{'; '.join(limits)}</small></div>")
        if asking is not None:
            return self._approval(dialog, messages, details, asking)
        reply = W.Textarea(
            placeholder="Write the assistant's reply here",
            rows=6,
            layout=W.Layout(width="100%"),
        )
        reply.add_class("mcpnb-sampling-reply")
        drafted_model = None
        if isinstance(draft, dict):
            content = draft.get("content")
            if isinstance(content, dict) and content.get("type") == "text":
                reply.value = str(content.get("text", ""))
            drafted_model = draft.get("model")
        elif draft is not None:
            reply.value = str(draft)
        if self.sampler is not None and drafted_model is None:
            drafted_model = sampler_name(self.sampler)
        drafted_text = reply.value
        dialog.reply = reply
        dialog.body.children = (
            messages_widget(messages),
            _html("".join(details), "mcpnb-sampling-details"),
            reply,
        )
        send = _button("Send", "mcpnb-sampling-send", "success", "paper-plane")
        reject = _button("Reject", "mcpnb-sampling-reject", "danger", "times")
        dialog.send_button, dialog.reject_button = send, reject
        dialog.buttons.children = (send, reject)

        def on_send(_button: Any) -> None:
            text = reply.value
            model = drafted_model if drafted_model and text == drafted_text else "notebook-user"
            dialog.finish(
                f"Sent the reply ({len(text)} characters).",
                sampling_result(text, model),
            )

        send.on_click(on_send)
        reject.on_click(lambda _b: _reject_sampling(dialog))
        return dialog

    def _approval(self, dialog: Dialog, messages: list[Any], details: list[str], model: str) -> Dialog:
        """The sampling request shown for approval before ``model`` is asked (a model given as
        ``sampling=``): Ask (``mcpnb-sampling-send``) asks it and sends its answer; Reject
        (``mcpnb-sampling-reject``) sends the server an error and the model is never asked."""
        details.append(
            f"<div>Approve to ask <b>{escape(short(model, 200))}</b>; its answer goes to the server.</div>"
        )
        dialog.body.children = (messages_widget(messages), _html("".join(details), "mcpnb-sampling-details"))
        send = _button(f"Ask {short(model, 60)}", "mcpnb-sampling-send", "success", "paper-plane")
        reject = _button("Reject", "mcpnb-sampling-reject", "danger", "times")
        dialog.send_button, dialog.reject_button = send, reject
        dialog.buttons.children = (send, reject)
        send.on_click(lambda _b: dialog.finish(f"Approved: {model} was asked.", {"approved": model}))
        reject.on_click(lambda _b: _reject_sampling(dialog))
        return dialog


def _reject_sampling(dialog: Dialog) -> None:
    """The user's no to a sampling request: the server gets an error (code -1)."""
    dialog.finish(
        "Rejected.", error=McpError("cancelled", "the user rejected the sampling request", code=USER_REJECTED)
    )


class DialogArea(W.VBox):
    """The dialogs of one :class:`DialogPlace`, drawn inside the widget that owns the place
    (class ``mcpnb-dialog-area``; empty, it takes no room). The widget starts its calls through
    ``place.placed(session, fn)``; each dialog those calls ask for appears here and goes once it
    is answered, cancelled or its call ends."""

    def __init__(self, place: DialogPlace | None = None, *, label: str = "") -> None:
        super().__init__(layout=W.Layout(width="100%"))
        self.add_class("mcpnb-dialog-area")
        self.place = place if place is not None else DialogPlace(label)
        self._unhook = self.place.on_change(self._redraw)

    def _redraw(self, place: DialogPlace) -> None:
        # On the engine thread: only the children trait is set (ipywidgets syncs it).
        self.children = tuple(dialog.widget for dialog in list(place.open_dialogs))

    def close(self) -> None:
        self._unhook()
        self.children = ()
        super().close()


def _message_html(message: Any) -> str:
    text = short(message if isinstance(message, str) else "", 20_000)
    return f"<div style='white-space:pre-wrap'>{escape(text)}</div>"


def _message_text(message: Any) -> str:
    return message if isinstance(message, str) else ""


def _last_message_text(messages: list[Any]) -> str:
    """A sampling request in words: how many messages, and the last one's text."""
    last = messages[-1] if messages else None
    content = last.get("content") if isinstance(last, dict) else None
    text = content.get("text") if isinstance(content, dict) and content.get("type") == "text" else None
    count = plural(len(messages), "message")
    return f"{count}, the last: {text}" if isinstance(text, str) else count


def _secret_fields(schema: dict[str, Any]) -> set[str]:
    """The fields a form shows as a password (``format: password`` or ``writeOnly``): what the
    user types there never reaches an answer's summary."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return set()
    return {
        name
        for name, field in properties.items()
        if isinstance(field, dict) and (field.get("format") == "password" or field.get("writeOnly") is True)
    }


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return repr(value)


# --- roots ----------------------------------------------------------------------------------------


class RootsWidget(Fallback, W.VBox):
    """Shows a session's roots; edits them when they are a :class:`RootsList` (class ``mcpnb-roots``)."""

    def __init__(self, session: Any) -> None:
        self.session = session
        option = getattr(session, "roots", None)
        self.roots: RootsList | None = option if isinstance(option, RootsList) else None
        self._static: list[dict[str, Any]] = []
        if self.roots is None and option is not None and not callable(option):
            try:
                self._static = [root_entry(r) for r in ([option] if isinstance(option, str) else option)]
            except (TypeError, ValueError):
                self._static = []
        self.listing = _html("", "mcpnb-roots-list")
        self.uri = W.Text(placeholder="a path or file:// URI", layout=W.Layout(width="60%"))
        self.uri.add_class("mcpnb-root-uri")
        self.add_button = _button("Add", "mcpnb-root-add", "", "plus")
        self.remove_select = W.Dropdown(description="Remove")
        self.remove_select.add_class("mcpnb-root-remove-choice")
        self.remove_button = _button("Remove", "mcpnb-root-remove", "", "minus")
        self.problem = _html("", "mcpnb-roots-problem")
        self.note = _html("", "mcpnb-roots-note")
        children: list[W.Widget] = [self.listing]
        if self.roots is not None:
            children += [
                W.HBox([self.uri, self.add_button]),
                W.HBox([self.remove_select, self.remove_button]),
                self.problem,
            ]
            self.add_button.on_click(lambda _b: self._add())
            self.remove_button.on_click(lambda _b: self._remove())
            self.roots.on_change(lambda _roots: self._render())
            self.note.value = (
                "<small>The server sees changes the next time it asks for the roots (a legacy "
                "server may ask only once).</small>"
            )
        elif callable(option):
            self.note.value = "<small>A function answers the server's roots requests.</small>"
        else:
            self.note.value = (
                "<small>These roots were fixed when the session was created; connect with "
                "<code>roots=RootsList([...])</code> to edit them here.</small>"
            )
        children.append(self.note)
        super().__init__(children, layout=W.Layout(width="100%"))
        self.add_class("mcpnb-roots")
        self._render()

    def _current(self) -> list[dict[str, Any]]:
        if self.roots is not None:
            return self.roots.roots
        return list(self._static)

    def summary(self) -> str:
        roots = self._current()
        lines = [f"<MCP roots: {short(getattr(self.session, 'name', ''), 80)}, {plural(len(roots), 'root')}>"]
        lines += [f"  {short(r.get('uri', ''), 200)}" for r in roots[:5]]
        return "\n".join(lines)

    def _render(self) -> None:
        roots = self._current()
        if roots:
            items = "".join(
                f"<li><code>{escape(r.get('uri', ''))}</code> {escape(r.get('name') or '')}</li>"
                for r in roots
            )
            self.listing.value = f"<ul>{items}</ul>"
        else:
            self.listing.value = "<i>No roots.</i>"
        self.remove_select.options = [str(r.get("uri")) for r in roots]

    def _add(self) -> None:
        assert self.roots is not None
        try:
            self.roots.add(self.uri.value.strip())
        except (TypeError, ValueError) as exc:
            self.problem.value = f"<span style='color:#b00020'>{escape(exc)}</span>"
            return
        self.problem.value = ""
        self.uri.value = ""

    def _remove(self) -> None:
        assert self.roots is not None
        if self.remove_select.value:
            self.roots.remove(self.remove_select.value)


def roots_widget(session: Any) -> RootsWidget:
    """The session's roots (class ``mcpnb-roots``), editable when they are a :class:`RootsList`."""
    return RootsWidget(session)
