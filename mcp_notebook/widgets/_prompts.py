"""The prompt panel: pick a prompt, fill its arguments (with the server's completions), get it.

``prompts_widget(session)`` (CSS class ``mcpnb-prompts``): a Dropdown of the server's prompts (kept
fresh by its list changes), one Combobox per argument whose suggestions come from
``completion/complete`` as the user types (debounced, on the engine thread), a Get button, and the
messages the server returned: each with its role, text escaped, images as raster data only,
embedded resources as text (rendering: :func:`._result_view.block_widget`).

Also here, for the resource browser and the sampling dialog: :class:`Completer` and
:func:`messages_widget`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio

from ..client._results import Prompt
from ..display._html import escape, short
from ..protocol._errors import McpError
from ..protocol._printable import printable
from . import _ui as W
from ._fallback import Fallback, plural
from ._result_view import block_widget, error_widget
from ._result_view import html_widget as _html
from ._shown import shown
from ._window import Window

__all__ = ["Completer", "PromptsWidget", "messages_widget", "prompts_widget", "spawn"]

logger = logging.getLogger("mcp_notebook.widgets")

_MAX_SUGGESTIONS = 100


def spawn(session: Any, fn: Callable[..., Awaitable[Any]], *args: Any) -> Any:
    """Start ``await fn(*args)`` on the session's engine, from any thread; returns a cancellable handle.

    Failures other than cancellation are logged: nobody awaits a widget's background work.
    """

    async def guarded() -> None:
        try:
            await fn(*args)
        except Exception:
            logger.exception("a widget's background work on the engine failed")

    return session.spawn(guarded)


def messages_widget(messages: list[Any]) -> W.VBox:
    """Chat messages (``{role, content}``, content one block or a list of blocks) as a widget."""
    rows: list[W.Widget] = []
    for message in messages:
        message = message if isinstance(message, Mapping) else {"role": "?", "content": message}
        content = message.get("content")
        blocks = content if isinstance(content, list) else [content]
        role = _html(f"<b>{escape(short(message.get('role', '?'), 40))}</b>", "mcpnb-role")
        role.layout = W.Layout(min_width="6em")
        body = W.VBox([block_widget(block) for block in blocks], layout=W.Layout(width="100%"))
        row = W.HBox([role, body], layout=W.Layout(width="100%"))
        row.add_class("mcpnb-message")
        rows.append(row)
    box = W.VBox(rows, layout=W.Layout(width="100%"))
    box.add_class("mcpnb-messages")
    return box


class Completer:
    """Suggestions for one argument field from the server's ``completion/complete``, as one types.

    Each edit of ``field.value`` (re)starts a request on the engine thread after ``delay``
    seconds; an edit before it ends cancels it. The values go into ``field.options`` (a
    Combobox's suggestion list: plain text, never markup) and :attr:`suggestions`. Servers
    without the ``completions`` capability are not asked.
    """

    def __init__(
        self,
        session: Any,
        ref: Any,
        argument: str,
        field: W.Combobox,
        context: Callable[[], Mapping[str, str]] | None = None,
        *,
        delay: float = 0.3,
    ) -> None:
        self.session = session
        self.ref = ref
        self.argument = argument
        self.field = field
        self.context = context
        self.delay = delay
        self.suggestions: list[str] = []
        #: How many answers arrived (for tests and for the curious).
        self.answers = 0
        self._future: Any = None
        field.observe(self._typed, names="value")

    @property
    def enabled(self) -> bool:
        return "completions" in (self.session.model.capabilities or {})

    def _typed(self, change: Any) -> None:
        self.request(change["new"])

    def request(self, value: str) -> None:
        """Ask for suggestions for ``value`` (after the delay), replacing a request still waiting."""
        if not self.enabled or getattr(self.session, "_closed", False):
            return
        if self._future is not None:
            self._future.cancel()
        self._future = spawn(self.session, self._complete, str(value or ""))

    async def _complete(self, value: str) -> None:
        await anyio.sleep(self.delay)
        context = {k: v for k, v in (self.context() if self.context else {}).items() if v}
        context.pop(self.argument, None)
        try:
            completion = await self.session.acomplete(self.ref, (self.argument, value), context or None)
        except McpError as exc:
            logger.debug("completion of %s failed: %s", self.argument, exc)
            return
        self.suggestions = [str(v) for v in completion.values[:_MAX_SUGGESTIONS]]
        self.field.options = tuple(shown(s) for s in self.suggestions)
        self.answers += 1

    def close(self) -> None:
        self.field.unobserve(self._typed, names="value")
        if self._future is not None:
            self._future.cancel()


class PromptsWidget(Fallback, W.VBox):
    """The prompt panel; see the module's docstring. ``close()`` stops following the session."""

    def __init__(self, session: Any, *, completion_delay: float = 0.3) -> None:
        self.session = session
        self.completion_delay = completion_delay
        # a window of prompts, searched and paged (a server may list 200,000: issue #35)
        self.prompts_window: Window[Prompt] = Window(
            noun="prompt", text_of=_prompt_text, on_window=self._draw_prompts, css="mcpnb-prompt-window"
        )
        self.prompt_list = W.Dropdown(description="Prompt", layout=W.Layout(width="100%"))
        self.prompt_list.add_class("mcpnb-prompt-list")
        self.description = _html("", "mcpnb-prompt-description")
        self.arguments_box = W.VBox(layout=W.Layout(width="100%"))
        self.arguments_box.add_class("mcpnb-prompt-arguments")
        self._no_arguments = _html("<i>No arguments.</i>")
        self._argument_widgets: list[W.Widget] = []
        self.fields: dict[str, W.Combobox] = {}
        self.completers: dict[str, Completer] = {}
        self.get_button = W.Button(description="Get", icon="play", button_style="primary")
        self.get_button.add_class("mcpnb-get-prompt")
        self.error = _html("", "mcpnb-prompt-error")
        self.messages = W.VBox(layout=W.Layout(width="100%"))
        self.messages.add_class("mcpnb-prompt-messages")
        #: The last PromptResult (or None).
        self.result: Any = None
        self._shown: Prompt | None = None
        super().__init__(
            [
                self.prompts_window.search,
                self.prompts_window.bar,
                self.prompt_list,
                self.description,
                self.arguments_box,
                self.get_button,
                self.error,
                self.messages,
            ],
            layout=W.Layout(width="100%"),
        )
        self.add_class("mcpnb-prompts")
        self.prompt_list.observe(self._selected, names="value")
        self.get_button.on_click(lambda _button: self.get())
        session.model.observe(self._prompts_changed, names="prompts")
        self._show_prompts(session.model.prompts)

    # --- the list -------------------------------------------------------------------------------

    @property
    def prompt(self) -> Prompt | None:
        name = self.prompt_list.value
        return next((p for p in self.session.model.prompts if p.name == name), None)

    def _prompts_changed(self, change: Any) -> None:
        self._show_prompts(change["new"])

    def _show_prompts(self, prompts: list[Prompt]) -> None:
        self.prompts_window.set_items(prompts)

    def _draw_prompts(self, prompts: list[Prompt]) -> None:
        """The window's prompts in the chooser (the rest: search, or page)."""
        current = self.prompt_list.value
        options = [
            (printable(short(f"{p.title} ({p.name})" if p.title else p.name, 120)), p.name) for p in prompts
        ]
        self.prompt_list.options = options
        names = [name for _, name in options]
        if current in names:
            self.prompt_list.value = current
        elif names:
            self.prompt_list.value = names[0]
        self._show_prompt()

    def select(self, name: str) -> None:
        """Choose the prompt ``name`` (paging to it, or clearing a search that hides it)."""
        self.prompts_window.reveal(lambda p: p.name == name)
        self.prompt_list.value = name

    def _selected(self, change: Any) -> None:
        self._show_prompt()

    def _show_prompt(self) -> None:
        prompt = self.prompt
        if prompt is not None and prompt is self._shown:
            return
        typed = (
            self.values()
            if prompt is not None and self._shown is not None and prompt.name == self._shown.name
            else {}
        )
        self._shown = prompt
        for completer in self.completers.values():
            completer.close()
        self.completers = {}
        self.fields = {}
        for widget in self._argument_widgets:  # the last prompt's: closed, not left behind
            widget.close()
        self._argument_widgets = []
        if prompt is None:
            self.description.value = "<i>This server offers no prompts.</i>"
            self.arguments_box.children = ()
            return
        self.description.value = f"<div>{escape(short(prompt.description or '', 2000))}</div>"
        rows = []
        for argument in prompt.arguments:
            name = str(argument.get("name", ""))
            if not name:
                continue
            required = argument.get("required") is True
            field = W.Combobox(
                placeholder=short(argument.get("description") or "", 200),
                ensure_option=False,
                layout=W.Layout(width="60%"),
            )
            field.add_class("mcpnb-input")
            label = _html(f"<code>{escape(name)}</code>{' *' if required else ''}", "mcpnb-label")
            label.layout = W.Layout(min_width="10em")
            row = W.HBox([label, field])
            row.add_class("mcpnb-field")
            rows.append(row)
            self._argument_widgets += [row, label, field, row.layout, label.layout, field.layout, field.style]
            self.fields[name] = field
            if name in typed:
                field.value = typed[name]
            self.completers[name] = Completer(
                self.session, prompt, name, field, self.values, delay=self.completion_delay
            )
        self.arguments_box.children = tuple(rows) if rows else (self._no_arguments,)

    # --- getting --------------------------------------------------------------------------------

    def values(self) -> dict[str, str]:
        """The arguments typed so far (empty ones left out)."""
        return {name: field.value for name, field in self.fields.items() if field.value}

    def get(self) -> Any:
        """Get the selected prompt with the arguments typed; shows and returns the result (or None)."""
        prompt = self.prompt
        if prompt is None:
            return None
        given = self.values()
        missing = [
            str(a.get("name"))
            for a in prompt.arguments
            if a.get("required") is True and not given.get(str(a.get("name")))
        ]
        if missing:
            self.error.value = f"<span style='color:#b00020'>Missing: {escape(', '.join(missing))}</span>"
            return None
        self.error.value = ""
        self.get_button.disabled = True
        try:
            result = self.session.get_prompt(prompt.name, self.values())
        except McpError as exc:
            self.result = None
            self.messages.children = (error_widget(exc),)
            return None
        finally:
            self.get_button.disabled = False
        self.result = result
        children: list[W.Widget] = []
        shown = result._masked()  # secrets the server echoes: *** (protocol/_secrets)
        if shown.description:
            children.append(_html(f"<i>{escape(short(shown.description, 2000))}</i>"))
        children.append(messages_widget(shown.messages))
        self.messages.children = tuple(children)
        return result

    def summary(self) -> str:
        prompts = plural(len(self.session.model.prompts), "prompt")
        chosen = f"; selected {short(self.prompt_list.label, 80)}" if self.prompt_list.label else ""
        return f"<MCP prompts: {short(getattr(self.session, 'name', ''), 80)}, {prompts}{chosen}>"

    def close(self) -> None:
        if getattr(self, "_unfollowed", False):
            super().close()
            return
        self._unfollowed = True
        self.session.model.unobserve(self._prompts_changed, names="prompts")
        for completer in self.completers.values():
            completer.close()
        super().close()


def _prompt_text(prompt: Prompt) -> str:
    """What the prompt search looks in: its names and description."""
    return f"{prompt.name} {prompt.title or ''} {prompt.description or ''}"


def prompts_widget(session: Any, **options: Any) -> PromptsWidget:
    """The prompt panel for ``session`` (CSS class ``mcpnb-prompts``)."""
    return PromptsWidget(session, **options)
