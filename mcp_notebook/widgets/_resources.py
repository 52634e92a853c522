"""The resource browser (CSS class ``mcpnb-resources``).

- The server's resources (name, URI, MIME type, size) in a table, kept fresh by its list changes,
  and a Dropdown (``mcpnb-resource-list``) to choose one (each resource is listed once, in the
  table: a Select beside it listed them all twice); Read (``mcpnb-read``) shows the chosen one.
- Its resource templates (``mcpnb-template-list``) with one field per template variable
  (``mcpnb-template-field``; suggestions from the server's completions), the expanded URI
  (``mcpnb-template-uri``, editable) and Read (``mcpnb-template-read``).
- The read view (``mcpnb-resource-view``): text escaped in a ``<pre>``, raster images as images,
  other blobs summarised (type and size), never interpreted.
- Subscribe (``mcpnb-subscribe``, a toggle for the selected resource): ``session.subscribe(uri)``;
  each ``notifications/resources/updated`` for a subscribed URI that is on show re-reads it, live.

URI templates are expanded by :func:`expand_uri_template`, a small RFC 6570 implementation (see
there for why it is not a library).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from ..client._results import ResourceContents, ResourceTemplate
from ..display._html import RASTER_IMAGE_TYPES, base64_size, display_url, escape, html_table, short
from ..display._pictures import contents_table_html
from ..protocol._errors import McpError
from ..protocol._printable import printable
from . import _ui as W
from ._fallback import Fallback, plural
from ._prompts import Completer, spawn
from ._result_view import block_widget, error_widget
from ._result_view import html_widget as _html
from ._window import Window

__all__ = ["ResourcesWidget", "expand_uri_template", "resources_widget", "template_variables"]

logger = logging.getLogger("mcp_notebook.widgets")

# --- RFC 6570 -------------------------------------------------------------------------------------
#
# Why not a library: the ``uritemplate`` package is a fine one, but the browser needs only this
# much (MCP templates are short, mostly ``{name}``), and the result is a convenience, not a rule:
# the expanded URI is shown in an editable field before anything is read, and the server decides
# what it matches. Supported: every operator (none, + # . / ; ? &), several variables per
# expression, the explode (*) and prefix (:n) modifiers, string and list values (a list is
# comma-joined, or exploded); undefined (None) variables are left out, as the RFC says.
# Not supported: associative-array (dict) values (shown as their string).

_EXPRESSION = re.compile(r"\{([^{}]*)\}")
_VARSPEC = re.compile(r"^([A-Za-z0-9_.%]+)(\*|:[0-9]{1,4})?$")
_PCT = re.compile(r"(%[0-9A-Fa-f]{2})")
_RESERVED = ":/?#[]@!$&'()*+,;="

# operator: (first, separator, named, if-empty, allow reserved characters)
_OPERATORS: dict[str, tuple[str, str, bool, str, bool]] = {
    "": ("", ",", False, "", False),
    "+": ("", ",", False, "", True),
    "#": ("#", ",", False, "", True),
    ".": (".", ".", False, "", False),
    "/": ("/", "/", False, "", False),
    ";": (";", ";", True, "", False),
    "?": ("?", "&", True, "=", False),
    "&": ("&", "&", True, "=", False),
}


def _split(expression: str) -> tuple[str, list[tuple[str, str | None]]]:
    operator = expression[:1] if expression[:1] in "+#./;?&" and expression else ""
    specs = []
    for raw in expression[len(operator) :].split(","):
        match = _VARSPEC.match(raw.strip())
        if match:
            specs.append((match.group(1), match.group(2)))
    return operator, specs


def template_variables(template: str) -> list[str]:
    """The variable names in ``template``, in order, each once."""
    names: list[str] = []
    for expression in _EXPRESSION.findall(template or ""):
        for name, _modifier in _split(expression)[1]:
            if name not in names:
                names.append(name)
    return names


def _encode(value: str, allow_reserved: bool) -> str:
    if not allow_reserved:
        return quote(value, safe="")
    # Reserved expansion keeps reserved characters and existing %XX triplets as they are.
    return "".join(
        part if _PCT.fullmatch(part) else quote(part, safe=_RESERVED) for part in _PCT.split(value) if part
    )


def expand_uri_template(template: str, values: Mapping[str, Any]) -> str:
    """Expand an RFC 6570 URI template (levels 1-4 for strings and lists; see the module notes)."""

    def expand(match: re.Match[str]) -> str:
        operator, specs = _split(match.group(1))
        if operator not in _OPERATORS:
            return match.group(0)
        first, separator, named, if_empty, reserved = _OPERATORS[operator]
        parts: list[str] = []
        for name, modifier in specs:
            value = values.get(name)
            if value is None or (isinstance(value, list | tuple) and not value):
                continue
            if isinstance(value, list | tuple):
                items = [_encode(str(v), reserved) for v in value]
                if modifier == "*":
                    if named:
                        parts.extend(f"{name}={item}" if item else f"{name}{if_empty}" for item in items)
                    else:
                        parts.extend(items)
                    continue
                text = ",".join(items)
            else:
                raw = str(value)
                if modifier and modifier.startswith(":"):
                    raw = raw[: int(modifier[1:])]
                text = _encode(raw, reserved)
            if named:
                parts.append(f"{name}={text}" if text else f"{name}{if_empty}")
            else:
                parts.append(text)
        return first + separator.join(parts) if parts else ""

    return _EXPRESSION.sub(expand, template)


# --- the widget -----------------------------------------------------------------------------------


def contents_widget(contents: ResourceContents) -> W.VBox:
    """A resource's contents: a JSON, CSV or TSV text as its table (the same as the repr's), other
    text escaped, raster images shown, other blobs summarised."""
    children: list[W.Widget] = []
    contents = contents._masked()  # secrets the server echoes: *** (protocol/_secrets)
    table = contents_table_html(contents.contents)
    for content in contents.contents:
        mime = content.get("mimeType")
        head = f"<div>📄 {display_url(content.get('uri', ''))} <small>{escape(mime or '')}</small></div>"
        children.append(_html(head, "mcpnb-resource-uri"))
        if table is not None:
            children.append(_html(table, "mcpnb-result-table"))
        elif "text" in content:
            children.append(block_widget({"type": "text", "text": str(content.get("text", ""))}))
        elif isinstance(mime, str) and mime.lower() in RASTER_IMAGE_TYPES:
            children.append(block_widget({"type": "image", "data": content.get("blob"), "mimeType": mime}))
        else:
            blob = content.get("blob")
            size = base64_size(blob)
            children.append(
                _html(f"<em>[blob {escape(mime or '?')}, about {size} bytes, not shown]</em>", "mcpnb-blob")
            )
    if not children:
        children.append(_html("<i>(no contents)</i>"))
    box = W.VBox(children, layout=W.Layout(width="100%"))
    box.add_class("mcpnb-resource-contents")
    return box


class ResourcesWidget(Fallback, W.VBox):
    """The resource browser; see the module's docstring. ``close()`` stops following the session."""

    def __init__(self, session: Any, *, completion_delay: float = 0.3) -> None:
        self.session = session
        self.completion_delay = completion_delay
        # resources: a window of them, searched and paged (a server may list 200,000: issue #35)
        self.resources_window: Window[Any] = Window(
            noun="resource",
            text_of=_resource_text,
            on_window=self._draw_resources,
            css="mcpnb-resource-window",
        )
        self.table = _html("", "mcpnb-resource-table")
        # A chooser, not a second list: the table above lists each resource once (issue #29).
        self.resource_list = W.Dropdown(description="Resource", layout=W.Layout(width="100%"))
        self.resource_list.add_class("mcpnb-resource-list")
        self.read_button = W.Button(description="Read", icon="book-open", button_style="primary")
        self.read_button.add_class("mcpnb-read")
        self.subscribe_toggle = W.ToggleButton(description="Subscribe", icon="bell")
        self.subscribe_toggle.add_class("mcpnb-subscribe")
        # templates
        self.templates_window: Window[ResourceTemplate] = Window(
            noun="template",
            text_of=_template_text,
            on_window=self._draw_templates,
            css="mcpnb-template-window",
            compact=True,
        )
        self.template_list = W.Dropdown(description="Template", layout=W.Layout(width="100%"))
        self.template_list.add_class("mcpnb-template-list")
        self.template_fields = W.VBox()
        self.template_fields.add_class("mcpnb-template-fields")
        self.fields: dict[str, W.Combobox] = {}
        self._field_widgets: list[W.Widget] = []
        self.completers: dict[str, Completer] = {}
        self.template_uri = W.Text(description="URI", layout=W.Layout(width="100%"))
        self.template_uri.add_class("mcpnb-template-uri")
        self.template_read_button = W.Button(description="Read", icon="book-open")
        self.template_read_button.add_class("mcpnb-template-read")
        # the view
        self.view_header = _html("", "mcpnb-resource-view-header")
        self.view = W.VBox(layout=W.Layout(width="100%"))
        self.view.add_class("mcpnb-resource-view")
        self.error = _html("", "mcpnb-resource-error")
        #: The URI on show, its last contents, and how often each subscribed URI was updated.
        self.shown_uri: str | None = None
        self.contents: ResourceContents | None = None
        self.updates: dict[str, int] = {}
        self._quiet = False
        self._last_notification: Any = None
        self._background: list[Any] = []

        templates_box = W.VBox(
            [
                self.templates_window.search,
                self.templates_window.bar,
                self.template_list,
                self.template_fields,
                self.template_uri,
                self.template_read_button,
            ]
        )
        templates_box.add_class("mcpnb-templates")
        super().__init__(
            [
                self.resources_window.search,
                self.resources_window.bar,
                self.table,
                self.resource_list,
                W.HBox([self.read_button, self.subscribe_toggle]),
                templates_box,
                self.error,
                self.view_header,
                self.view,
            ],
            layout=W.Layout(width="100%"),
        )
        self.add_class("mcpnb-resources")
        self.read_button.on_click(lambda _b: self.read(self.resource_list.value))
        self.resource_list.observe(self._selected, names="value")
        self.subscribe_toggle.observe(self._toggled, names="value")
        self.template_list.observe(self._template_selected, names="value")
        self.template_read_button.on_click(lambda _b: self.read(self.template_uri.value))
        model = session.model
        model.observe(self._resources_changed, names="resources")
        model.observe(self._templates_changed, names="resource_templates")
        model.observe(self._notified, names="notifications")
        if model.notifications:
            self._last_notification = model.notifications[-1]
        self._show_resources(model.resources)
        self._show_templates(model.resource_templates)

    # --- resources ------------------------------------------------------------------------------

    def _resources_changed(self, change: Any) -> None:
        self._show_resources(change["new"])

    def _show_resources(self, resources: list[Any]) -> None:
        self.resources_window.set_items(resources)

    def _draw_resources(self, resources: list[Any]) -> None:
        """The window's resources in the table and the chooser (the rest: search, or page)."""
        records = [
            {"name": r.title or r.name, "uri": r.uri, "mime": r.mime_type or "", "size": r.size or ""}
            for r in resources
        ]
        self.table.value = (
            html_table(records, css_class="mcpnb-resource-table", columns=["name", "uri", "mime", "size"])
            if records
            else "<i>No resources.</i>"
        )
        current = self.resource_list.value
        self.resource_list.options = [
            (printable(short(f"{r.title or r.name} — {r.uri}", 200)), r.uri) for r in resources
        ]
        uris = [r.uri for r in resources]
        if current in uris:
            self.resource_list.value = current
        self._sync_toggle()

    def select(self, uri: str) -> None:
        """Choose ``uri`` (paging to it, or clearing a search that hides it)."""
        self.resources_window.reveal(lambda r: r.uri == uri)
        self.resource_list.value = uri

    def _selected(self, change: Any) -> None:
        self._sync_toggle()

    def _sync_toggle(self) -> None:
        uri = self.resource_list.value
        subscribed = bool(uri) and uri in self.session.client.subscriptions
        self._quiet = True
        try:
            self.subscribe_toggle.value = subscribed
            self.subscribe_toggle.description = "Subscribed" if subscribed else "Subscribe"
            self.subscribe_toggle.disabled = not uri
        finally:
            self._quiet = False

    def _toggled(self, change: Any) -> None:
        if self._quiet:
            return
        uri = self.resource_list.value
        if not uri:
            return
        try:
            if change["new"]:
                self.session.subscribe(uri)
                self.read(uri)
            else:
                self.session.unsubscribe(uri)
        except McpError as exc:
            self._show_error(exc)
        self._sync_toggle()

    # --- templates ------------------------------------------------------------------------------

    def _templates_changed(self, change: Any) -> None:
        self._show_templates(change["new"])

    def _show_templates(self, templates: list[ResourceTemplate]) -> None:
        self.templates_window.set_items(templates)

    def _draw_templates(self, templates: list[ResourceTemplate]) -> None:
        """The window's templates in the chooser (the rest: search, or page)."""
        current = self.template_list.value
        self.template_list.options = [
            (printable(short(f"{t.title or t.name} — {t.uri_template}", 200)), t.uri_template)
            for t in templates
        ]
        values = [t.uri_template for t in templates]
        if current in values:
            self.template_list.value = current
        elif values:
            self.template_list.value = values[0]
        self.template_list.layout.display = None if values else "none"
        self.template_read_button.layout.display = None if values else "none"
        self.template_uri.layout.display = None if values else "none"

    @property
    def template(self) -> ResourceTemplate | None:
        chosen = self.template_list.value
        return next((t for t in self.session.model.resource_templates if t.uri_template == chosen), None)

    def select_template(self, uri_template: str) -> None:
        """Choose ``uri_template`` (paging to it, or clearing a search that hides it)."""
        self.templates_window.reveal(lambda t: t.uri_template == uri_template)
        self.template_list.value = uri_template

    def _template_selected(self, change: Any) -> None:
        for completer in self.completers.values():
            completer.close()
        self.completers, self.fields = {}, {}
        for widget in self._field_widgets:  # the last template's: closed, not left behind
            widget.close()
        self._field_widgets = []
        template = self.template
        if template is None:
            self.template_fields.children = ()
            return
        rows = []
        for name in template_variables(template.uri_template):
            field = W.Combobox(ensure_option=False, placeholder=printable(name), layout=W.Layout(width="60%"))
            field.add_class("mcpnb-template-field")
            field.observe(self._expand, names="value")
            label = _html(f"<code>{escape(name)}</code>", "mcpnb-label")
            label.layout = W.Layout(min_width="10em")
            row = W.HBox([label, field])
            rows.append(row)
            self._field_widgets += [row, label, field, row.layout, label.layout, field.layout, field.style]
            self.fields[name] = field
            self.completers[name] = Completer(
                self.session, template, name, field, self.template_values, delay=self.completion_delay
            )
        self.template_fields.children = tuple(rows)
        self._expand()

    def template_values(self) -> dict[str, str]:
        return {name: field.value for name, field in self.fields.items() if field.value}

    def _expand(self, change: Any = None) -> None:
        template = self.template
        if template is not None:
            self.template_uri.value = expand_uri_template(template.uri_template, self.template_values())

    # --- reading --------------------------------------------------------------------------------

    def read(self, uri: str | None) -> ResourceContents | None:
        """Read ``uri`` and show it (blocking); returns the contents, or None after an error."""
        if not uri:
            return None
        try:
            contents: ResourceContents = self.session.read_resource(uri)
        except McpError as exc:
            self._show_error(exc)
            return None
        self._show(uri, contents)
        return contents

    def _show(self, uri: str, contents: ResourceContents, *, live: bool = False) -> None:
        self.error.value = ""
        self.shown_uri = uri
        note = ""
        if uri in self.session.client.subscriptions:
            count = self.updates.get(uri, 0)
            when = time.strftime("%H:%M:%S")
            last = f", last at {when}" if live else ""
            note = f" <small>subscribed; {plural(count, 'update')}{last}</small>"
        self.view_header.value = f"<div>{display_url(uri)}{note}</div>"
        self.view.children = (contents_widget(contents),)
        # Last: ``contents`` says the view is drawn (a cell or an observer waiting on it reads the
        # view next, from another thread).
        self.contents = contents

    def _show_error(self, error: BaseException) -> None:
        self.error.value = ""
        self.view.children = (error_widget(error),)

    # --- live updates ---------------------------------------------------------------------------

    def _notified(self, change: Any) -> None:
        entries = change["new"]
        fresh = []
        for entry in reversed(entries):
            if entry is self._last_notification:
                break
            fresh.append(entry)
        if entries:
            self._last_notification = entries[-1]
        for entry in reversed(fresh):
            if entry.get("method") != "notifications/resources/updated":
                continue
            uri = (entry.get("params") or {}).get("uri")
            if not isinstance(uri, str) or uri not in self.session.client.subscriptions:
                continue
            self.updates[uri] = self.updates.get(uri, 0) + 1
            if uri == self.shown_uri and not getattr(self.session, "_closed", False):
                # Observers run on the engine thread: read there, without blocking it.
                self._background = [f for f in self._background if not f.done()]
                self._background.append(spawn(self.session, self._reread, uri))

    async def _reread(self, uri: str) -> None:
        try:
            contents = await self.session.aread_resource(uri)
        except McpError as exc:
            self._show_error(exc)
            return
        if uri == self.shown_uri:
            self._show(uri, contents, live=True)

    def summary(self) -> str:
        model = self.session.model
        templates = plural(len(model.resource_templates), "template")
        counts = f"{plural(len(model.resources), 'resource')}, {templates}"
        shown = f"; showing {short(printable(self.shown_uri), 120)}" if self.shown_uri else ""
        return f"<MCP resources: {short(getattr(self.session, 'name', ''), 80)}, {counts}{shown}>"

    def close(self) -> None:
        if getattr(self, "_unfollowed", False):
            super().close()
            return
        self._unfollowed = True
        model = self.session.model
        model.unobserve(self._resources_changed, names="resources")
        model.unobserve(self._templates_changed, names="resource_templates")
        model.unobserve(self._notified, names="notifications")
        for completer in self.completers.values():
            completer.close()
        for future in self._background:
            future.cancel()
        super().close()


def _resource_text(resource: Any) -> str:
    """What the resource search looks in: names, URI, MIME type and description."""
    r = resource
    return f"{r.name} {r.title or ''} {r.uri} {r.mime_type or ''} {r.description or ''}"


def _template_text(template: ResourceTemplate) -> str:
    """What the template search looks in: names, the URI template and description."""
    t = template
    return f"{t.name} {t.title or ''} {t.uri_template} {t.description or ''}"


def resources_widget(session: Any, **options: Any) -> ResourcesWidget:
    """The resource browser for ``session`` (CSS class ``mcpnb-resources``)."""
    return ResourcesWidget(session, **options)
