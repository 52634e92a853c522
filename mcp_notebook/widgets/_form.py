"""Forms generated from a JSON Schema (a tool's inputSchema, a prompt's arguments, an elicitation).

Why a generated form: the user should not have to type JSON to call a tool, and should see what a
tool expects (types, choices, required marks, descriptions) before sending. The form covers what
tool schemas commonly use: strings (with format hints, long text, passwords), numbers, integers,
booleans, enums of any type (``enum``, ``const`` and ``oneOf`` of ``const`` with titles), nullable
values (a "null" toggle), arrays (a row editor; a multi-select for arrays of choices), nested
objects (a bordered sub-form) and local ``$ref``. What a form cannot express (``oneOf`` of objects,
``patternProperties``, ``$ref`` cycles, several types) becomes a JSON text field, and a "JSON"
switch turns the whole form into one JSON editor for users who prefer it.

The final judgement is jsonschema's (:meth:`SchemaForm.errors`), never fetching a remote ``$ref``;
the messages name the field and the rule, never the value (arguments may be secret). Empty optional
fields are left out of :attr:`SchemaForm.value`, so the server applies its own defaults.

Every server string (titles, descriptions, enum labels) reaches the page only through text
controls (``Label``, options, placeholders, tooltips) or :func:`mcp_notebook._html.escape`.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from typing import Any

import ipywidgets as W

from .._html import escape, short

__all__ = ["SchemaForm", "form_for"]

logger = logging.getLogger("mcp_notebook.widgets")

_MISSING: Any = type("_Missing", (), {"__repr__": lambda self: "<missing>"})()
_MAX_DEPTH = 8
_MAX_CHOICES = 500
_LONG_NAMES = frozenset(
    {"text", "body", "content", "prompt", "message", "code", "query", "sql", "script", "note"}
)
_PLACEHOLDERS = {
    "date": "YYYY-MM-DD",
    "date-time": "YYYY-MM-DDTHH:MM:SSZ",
    "time": "HH:MM:SS",
    "email": "name@example.com",
    "uri": "https://…",
    "url": "https://…",
    "uuid": "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
}
_NOT_SET = "—"

OnChange = Callable[[dict[str, Any]], Any]


def css_name(name: Any) -> str:
    """A property name as a CSS class suffix: ``[A-Za-z0-9_-]`` only."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", str(name)) or "_"


class _Context:
    """What every field builder needs: the root schema (for ``$ref``) and the change signal."""

    def __init__(self, root: dict[str, Any], notify: Callable[[], None]) -> None:
        self.root = root
        self.notify = notify

    def watch(self, widget: W.Widget, name: str = "value") -> None:
        widget.observe(lambda change: self.notify(), names=name)

    def resolve(self, schema: Any, seen: tuple[str, ...]) -> tuple[dict[str, Any] | None, tuple[str, ...]]:
        """Follow local ``$ref`` (``None`` for a cycle or a reference out of the document)."""
        if schema is True or schema is None:
            return {}, seen
        if not isinstance(schema, dict):
            return None, seen
        while isinstance(schema.get("$ref"), str):
            ref = schema["$ref"]
            if not ref.startswith("#") or ref in seen:
                return None, seen
            seen = (*seen, ref)
            target = _pointer(self.root, ref[1:])
            if not isinstance(target, dict):
                return None, seen
            siblings = {k: v for k, v in schema.items() if k != "$ref"}
            schema = {**target, **siblings}
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1:
            inner, seen = self.resolve(all_of[0], seen)
            if inner is None:
                return None, seen
            schema = {**inner, **{k: v for k, v in schema.items() if k != "allOf"}}
        return schema, seen


def _pointer(document: Any, pointer: str) -> Any:
    node = document
    for raw in pointer.split("/")[1:] if pointer else []:
        key = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return None
    return node


# --- fields -------------------------------------------------------------------------------------
#
# A field owns its controls and answers three questions: get() (the JSON value, or _MISSING when
# empty), set(value) (_MISSING clears it) and problems(path) (what jsonschema cannot see, such as
# text that is not JSON).


class _Field:
    widget: W.Widget

    def get(self) -> Any:
        raise NotImplementedError

    def set(self, value: Any) -> None:
        raise NotImplementedError

    def problems(self, path: str) -> list[str]:
        return []

    def fits(self, value: Any) -> bool:
        """Whether set(value) can show ``value`` faithfully (else the form falls back to JSON)."""
        return True


def _input(widget: W.Widget) -> W.Widget:
    widget.add_class("mcpnb-input")
    return widget


class _TextField(_Field):
    def __init__(self, schema: dict[str, Any], ctx: _Context, name: str, keep_empty: bool) -> None:
        fmt = schema.get("format")
        max_length = schema.get("maxLength")
        long = (
            name.lower() in _LONG_NAMES
            or (isinstance(max_length, int) and max_length > 200)
            or "contentMediaType" in schema
            or (isinstance(schema.get("default"), str) and "\n" in schema["default"])
        )
        placeholder = _PLACEHOLDERS.get(str(fmt), str(fmt) if fmt else "")
        layout = W.Layout(width="auto")  # stretches to the box; "100%" plus the margin overflows it
        if fmt == "password" or schema.get("writeOnly") is True:
            self.control = W.Password(placeholder=placeholder, layout=layout)
        elif long and not fmt:
            self.control = W.Textarea(placeholder=placeholder, rows=3, layout=layout)
        else:
            self.control = W.Text(placeholder=placeholder, layout=layout)
        self.keep_empty = keep_empty
        self.widget = _input(self.control)
        ctx.watch(self.control)

    def get(self) -> Any:
        value = self.control.value
        return value if value or self.keep_empty else _MISSING

    def set(self, value: Any) -> None:
        self.control.value = "" if value is _MISSING or value is None else str(value)

    def fits(self, value: Any) -> bool:
        return isinstance(value, str)


class _NumberField(_Field):
    """A text box, not IntText/FloatText: those cannot be empty, and a silent 0 is a wrong argument."""

    def __init__(self, schema: dict[str, Any], ctx: _Context, integer: bool, keep_empty: bool) -> None:
        self.integer = integer
        self.keep_empty = keep_empty
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        high = schema.get("maximum", schema.get("exclusiveMaximum"))
        hint = "integer" if integer else "number"
        if low is not None or high is not None:
            hint += f" {'' if low is None else low} … {'' if high is None else high}"
        self.control = W.Text(placeholder=hint, layout=W.Layout(width="16em"))
        self.widget = _input(self.control)
        ctx.watch(self.control)

    def get(self) -> Any:
        text = self.control.value.strip()
        if not text:
            return None if self.keep_empty else _MISSING
        try:
            return int(text)
        except ValueError:
            pass
        try:
            number = float(text)
        except ValueError:
            return text  # jsonschema reports the type; problems() says it plainly
        if number != number or number in (float("inf"), float("-inf")):
            return text
        return int(number) if self.integer and number.is_integer() else number

    def problems(self, path: str) -> list[str]:
        value = self.get()
        if isinstance(value, str):
            return [f"{path}: not {'an integer' if self.integer else 'a number'}"]
        return []

    def set(self, value: Any) -> None:
        if value is _MISSING or value is None:
            self.control.value = ""
        else:
            self.control.value = value if isinstance(value, str) else json.dumps(value)

    def fits(self, value: Any) -> bool:
        # Text is shown as typed (the user's own unfinished number, coming back from JSON mode).
        return isinstance(value, int | float | str) and not isinstance(value, bool)


class _CheckboxField(_Field):
    def __init__(self, ctx: _Context, label: str) -> None:
        self.control = W.Checkbox(value=False, indent=False, description=label)
        self.widget = _input(self.control)
        ctx.watch(self.control)

    def get(self) -> Any:
        return bool(self.control.value)

    def set(self, value: Any) -> None:
        self.control.value = bool(value) if value is not _MISSING else False

    def fits(self, value: Any) -> bool:
        return isinstance(value, bool)


class _ChoiceField(_Field):
    """A Dropdown over any JSON values, by index (1 and True, or 0 and False, stay distinct)."""

    def __init__(self, choices: list[tuple[str, Any]], ctx: _Context, blank: bool) -> None:
        self.choices = choices
        options: list[tuple[str, int]] = [(_NOT_SET, -1)] if blank else []
        options += [(short(label, 120), i) for i, (label, _) in enumerate(choices)]
        self.control = W.Dropdown(options=options, value=options[0][1] if options else None)
        self.blank = blank
        self.widget = _input(self.control)
        ctx.watch(self.control)

    def _index(self, value: Any) -> int | None:
        for i, (_, choice) in enumerate(self.choices):
            if type(choice) is type(value) and choice == value:
                return i
        return None

    def get(self) -> Any:
        index = self.control.value
        return _MISSING if index is None or index < 0 else self.choices[index][1]

    def set(self, value: Any) -> None:
        index = None if value is _MISSING else self._index(value)
        if index is None:
            index = -1 if self.blank else 0
        self.control.value = index

    def fits(self, value: Any) -> bool:
        return self._index(value) is not None


class _MultiChoiceField(_Field):
    """An array of choices: a multi-select (ctrl/shift-click)."""

    def __init__(self, choices: list[tuple[str, Any]], ctx: _Context, keep_empty: bool) -> None:
        self.choices = choices
        self.keep_empty = keep_empty
        options = [(short(label, 120), i) for i, (label, _) in enumerate(choices)]
        self.control = W.SelectMultiple(options=options, rows=min(6, max(2, len(options))))
        self.widget = _input(self.control)
        ctx.watch(self.control)

    def get(self) -> Any:
        values = [self.choices[i][1] for i in self.control.value]
        return values if values or self.keep_empty else _MISSING

    def set(self, value: Any) -> None:
        wanted = value if isinstance(value, list) else []
        self.control.value = tuple(
            i for i, (_, c) in enumerate(self.choices) if any(type(c) is type(v) and c == v for v in wanted)
        )

    def fits(self, value: Any) -> bool:
        return isinstance(value, list) and all(
            any(type(c) is type(v) and c == v for _, c in self.choices) for v in value
        )


class _JsonField(_Field):
    """Raw JSON for a value the form cannot express."""

    def __init__(self, schema: dict[str, Any] | None, ctx: _Context, keep_empty: bool) -> None:
        self.keep_empty = keep_empty
        self.control = W.Textarea(placeholder="JSON", rows=3, layout=W.Layout(width="100%"))
        self.control.add_class("mcpnb-json-field")
        self.widget = _input(self.control)
        ctx.watch(self.control)

    def _parse(self) -> tuple[Any, str | None]:
        text = self.control.value.strip()
        if not text:
            return (None if self.keep_empty else _MISSING), None
        try:
            return json.loads(text), None
        except (ValueError, RecursionError) as exc:
            return _MISSING, f"not valid JSON ({_json_problem(exc)})"

    def get(self) -> Any:
        return self._parse()[0]

    def problems(self, path: str) -> list[str]:
        problem = self._parse()[1]
        return [f"{path}: {problem}"] if problem else []

    def set(self, value: Any) -> None:
        self.control.value = "" if value is _MISSING else json.dumps(value, indent=1, ensure_ascii=False)


def _json_problem(exc: BaseException) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno}, column {exc.colno}"
    return "nested too deeply" if isinstance(exc, RecursionError) else str(exc)


class _NullableField(_Field):
    """A value that may also be ``null``: the inner field plus a "null" toggle."""

    def __init__(self, inner: _Field, ctx: _Context) -> None:
        self.inner = inner
        self.toggle = W.ToggleButton(
            value=False, description="null", tooltip="send null", layout=W.Layout(width="5em")
        )
        self.toggle.add_class("mcpnb-null")
        self.toggle.observe(lambda change: self._show(), names="value")
        ctx.watch(self.toggle)
        self.widget = W.HBox([inner.widget, self.toggle], layout=W.Layout(width="100%"))

    def _show(self) -> None:
        for child in _controls(self.inner.widget):
            child.disabled = self.toggle.value

    def get(self) -> Any:
        return None if self.toggle.value else self.inner.get()

    def set(self, value: Any) -> None:
        self.toggle.value = value is None
        if value is not None:
            self.inner.set(value)

    def problems(self, path: str) -> list[str]:
        return [] if self.toggle.value else self.inner.problems(path)

    def fits(self, value: Any) -> bool:
        return value is None or self.inner.fits(value)


def _controls(widget: W.Widget) -> list[W.Widget]:
    children = getattr(widget, "children", None)
    if children is None:
        return [widget] if hasattr(widget, "disabled") else []
    return [c for child in children for c in _controls(child)]


class _ArrayField(_Field):
    """A list editor: one row per item (remove button), an "add" button below."""

    def __init__(
        self, items: Any, ctx: _Context, seen: tuple[str, ...], depth: int, keep_empty: bool
    ) -> None:
        self.items, self.ctx, self.seen, self.depth = items, ctx, seen, depth
        self.keep_empty = keep_empty
        self.rows: list[tuple[_Field, W.Widget]] = []
        self._probe: _Field | None = None
        self.box = W.VBox()
        self.add_button = W.Button(
            description="add", icon="plus", tooltip="add an item", layout=W.Layout(width="7em")
        )
        self.add_button.add_class("mcpnb-add")
        self.add_button.on_click(lambda _: self.add())
        self.widget = W.VBox([self.box, self.add_button])
        self.widget.add_class("mcpnb-array")

    def add(self, value: Any = _MISSING) -> None:
        field = _build(self.items, self.ctx, "", self.seen, self.depth + 1, keep_empty=True)
        if value is not _MISSING:
            field.set(value)
        remove = W.Button(icon="trash", tooltip="remove this item", layout=W.Layout(width="3em"))
        remove.add_class("mcpnb-remove")
        row = W.HBox([field.widget, remove], layout=W.Layout(width="100%"))
        row.add_class("mcpnb-item")
        remove.on_click(lambda _: self.remove(row))
        self.rows.append((field, row))
        self.box.children = [r for _, r in self.rows]
        self.ctx.notify()

    def remove(self, row: W.Widget) -> None:
        self.rows = [(f, r) for f, r in self.rows if r is not row]
        self.box.children = [r for _, r in self.rows]
        self.ctx.notify()

    def get(self) -> Any:
        if not self.rows and not self.keep_empty:
            return _MISSING
        return [_or_none(f.get()) for f, _ in self.rows]

    def set(self, value: Any) -> None:
        self.rows = []
        self.box.children = []
        for item in value if isinstance(value, list) else []:
            self.add(item)

    def problems(self, path: str) -> list[str]:
        return [p for i, (f, _) in enumerate(self.rows) for p in f.problems(f"{path}[{i}]")]

    def fits(self, value: Any) -> bool:
        if not isinstance(value, list):
            return False
        if self._probe is None:  # one spare item field, built once, answers for every item
            self._probe = _build(self.items, self.ctx, "", self.seen, self.depth + 1, keep_empty=True)
        return all(self._probe.fits(v) for v in value)


def _or_none(value: Any) -> Any:
    return None if value is _MISSING else value


class _ObjectField(_Field):
    """Named properties, one labelled row each; nested objects sit in a bordered box."""

    def __init__(
        self, schema: dict[str, Any], ctx: _Context, seen: tuple[str, ...], depth: int, keep_empty: bool
    ) -> None:
        self.keep_empty = keep_empty
        properties: dict[str, Any] = (
            schema["properties"] if isinstance(schema.get("properties"), dict) else {}
        )
        self.required = {r for r in schema.get("required", []) if isinstance(r, str)}
        self.fields: dict[str, _Field] = {}
        rows: list[W.Widget] = []
        for name, spec in properties.items():
            resolved, _ = ctx.resolve(spec, seen)
            required = name in self.required
            field = _build(spec, ctx, name, seen, depth + 1, keep_empty=False, required=required)
            self.fields[name] = field
            rows.append(_row(name, resolved or {}, required, field))
        self.widget = W.VBox(rows, layout=W.Layout(width="100%"))
        if depth > 0:
            self.widget.layout = W.Layout(
                border="1px solid #ccc", padding="4px 8px", margin="2px 0", width="100%"
            )
            self.widget.add_class("mcpnb-subform")

    def get(self) -> Any:
        out = {}
        for name, field in self.fields.items():
            value = field.get()
            if value is not _MISSING:
                out[name] = value
        return out if out or self.keep_empty else _MISSING

    def set(self, value: Any) -> None:
        value = value if isinstance(value, dict) else {}
        for name, field in self.fields.items():
            field.set(value.get(name, _MISSING))

    def problems(self, path: str) -> list[str]:
        return [p for name, f in self.fields.items() for p in f.problems(_join(path, name))]

    def fits(self, value: Any) -> bool:
        return (
            isinstance(value, dict)
            and set(value) <= set(self.fields)
            and all(self.fields[k].fits(v) for k, v in value.items())
        )


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _row(name: str, schema: dict[str, Any], required: bool, field: _Field) -> W.Widget:
    description = schema.get("description") if isinstance(schema.get("description"), str) else ""
    title = schema.get("title") if isinstance(schema.get("title"), str) else ""
    text = f"{title} ({name})" if title and title != name else name
    label = W.Label(
        value=short(text + (" *" if required else ""), 120), tooltip=short(description, 1000) or None
    )
    label.add_class("mcpnb-label")
    if isinstance(field, _CheckboxField):
        field.control.tooltip = short(description, 1000) or None
    children: list[W.Widget] = [label, field.widget]
    if description:
        text = escape(short(description, 1000))
        help_text = W.HTML(
            value=f'<div style="font-size:0.85em;color:#666;white-space:pre-wrap">{text}</div>'
        )
        help_text.add_class("mcpnb-help")
        children.append(help_text)
    row = W.VBox(children, layout=W.Layout(width="100%", margin="0 0 4px 0"))
    row.add_class("mcpnb-field")
    row.add_class(f"mcpnb-field-{css_name(name)}")
    return row


# --- choosing a field for a schema --------------------------------------------------------------


def _choices(schema: dict[str, Any]) -> list[tuple[str, Any]] | None:
    """(label, value) pairs for ``enum`` (legacy ``enumNames``), ``const``, ``oneOf``/``anyOf`` of consts."""
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        names = schema.get("enumNames")
        values = schema["enum"]
        labels = names if isinstance(names, list) and len(names) == len(values) else None
        return [(str(labels[i]) if labels else _label(v), v) for i, v in enumerate(values)]
    if "const" in schema:
        return [(_label(schema["const"]), schema["const"])]
    for key in ("oneOf", "anyOf"):
        options = schema.get(key)
        if (
            isinstance(options, list)
            and options
            and all(isinstance(o, dict) and "const" in o for o in options)
        ):
            return [(str(o.get("title") or _label(o["const"])), o["const"]) for o in options]
    return None


def _label(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _nullable(schema: dict[str, Any]) -> dict[str, Any] | None:
    """The non-null schema of ``type: [x, "null"]`` or ``anyOf: [X, {type: null}]``, else ``None``."""
    kinds = schema.get("type")
    if isinstance(kinds, list) and "null" in kinds:
        rest = [k for k in kinds if k != "null"]
        if len(rest) == 1:
            return {**schema, "type": rest[0]}
        return None
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and len(options) == 2:
            nulls = [o for o in options if isinstance(o, dict) and o.get("type") == "null"]
            if len(nulls) == 1:
                other = next(o for o in options if o is not nulls[0])
                if isinstance(other, dict):
                    siblings = {k: v for k, v in schema.items() if k != key}
                    return {**other, **siblings}
    return None


def _kind(schema: dict[str, Any]) -> str | None:
    kinds = schema.get("type")
    if isinstance(kinds, str):
        return kinds
    if isinstance(kinds, list):
        return kinds[0] if len(kinds) == 1 and isinstance(kinds[0], str) else None
    if isinstance(schema.get("properties"), dict):
        return "object"
    if "items" in schema:
        return "array"
    return None


def _expressible_object(schema: dict[str, Any]) -> bool:
    if any(k in schema for k in ("oneOf", "anyOf", "allOf", "patternProperties", "not", "if")):
        return False
    extra = schema.get("additionalProperties")
    return not (isinstance(extra, dict) and extra) or bool(schema.get("properties"))


def _build(
    spec: Any,
    ctx: _Context,
    name: str,
    seen: tuple[str, ...],
    depth: int,
    *,
    keep_empty: bool,
    required: bool = False,
) -> _Field:
    schema, seen = ctx.resolve(spec, seen)
    if schema is None or depth > _MAX_DEPTH:
        return _with_default(_JsonField(None, ctx, keep_empty), schema or {})
    inner = _nullable(schema)
    if inner is not None:
        # A default of null is not prefilled: leaving the field out means the same, and reads better.
        inner_field = _build(inner, ctx, name, seen, depth, keep_empty=keep_empty, required=required)
        return _NullableField(inner_field, ctx)
    return _with_default(_plain(schema, ctx, name, seen, depth, keep_empty, required), schema)


def _plain(
    schema: dict[str, Any],
    ctx: _Context,
    name: str,
    seen: tuple[str, ...],
    depth: int,
    keep_empty: bool,
    required: bool,
) -> _Field:
    choices = _choices(schema)
    kind = _kind(schema)
    if choices is not None and len(choices) > _MAX_CHOICES:
        choices = None  # a drop-down of thousands helps nobody: typed text, checked by jsonschema
        kind = kind if kind in ("string", "number", "integer") else None
    if choices is not None:
        return _ChoiceField(choices, ctx, blank="default" not in schema)
    if kind == "string" and not any(k in schema for k in ("oneOf", "anyOf", "allOf")):
        return _TextField(schema, ctx, name, keep_empty)
    if kind in ("number", "integer"):
        return _NumberField(schema, ctx, kind == "integer", keep_empty)
    if kind == "boolean":
        if keep_empty or required or "default" in schema:
            return _CheckboxField(ctx, "")
        return _ChoiceField([("true", True), ("false", False)], ctx, blank=True)
    if kind == "array" and isinstance(schema.get("items"), dict | bool) and "prefixItems" not in schema:
        items, _ = ctx.resolve(schema.get("items", {}), seen)
        item_choices = _choices(items) if items is not None else None
        if item_choices is not None:
            return _MultiChoiceField(item_choices, ctx, keep_empty or required)
        return _ArrayField(schema.get("items", {}), ctx, seen, depth, keep_empty or required)
    if kind == "object" and _expressible_object(schema) and isinstance(schema.get("properties"), dict):
        return _ObjectField(schema, ctx, seen, depth, keep_empty or required)
    return _JsonField(schema, ctx, keep_empty)


def _with_default(field: _Field, schema: dict[str, Any]) -> _Field:
    if "default" in schema and (isinstance(field, _JsonField) or field.fits(schema["default"])):
        field.set(schema["default"])
    return field


# --- the form -----------------------------------------------------------------------------------


class SchemaForm:
    """An ipywidgets form for one JSON Schema (normally ``type: object``).

    ``.widget`` is the container to show (CSS class ``mcpnb-form``); ``.value`` the arguments as a
    dict; ``.errors()`` what is wrong with them, in words; ``.on_change(callback)`` calls
    ``callback(value)`` after every edit. Each property's row has the CSS class
    ``mcpnb-field-<name>`` (and ``mcpnb-field``); its control has ``mcpnb-input``.
    """

    def __init__(self, schema: dict[str, Any] | None, *, values: dict[str, Any] | None = None) -> None:
        self.schema: dict[str, Any] = schema if isinstance(schema, dict) else {"type": "object"}
        self._callbacks: list[OnChange] = []
        self._quiet = 0
        self._ctx = _Context(self.schema, self._changed)
        self._quiet += 1
        try:
            root, _ = self._ctx.resolve(self.schema, ())
            expressible = root is not None and _expressible_object(root) and _kind(root) in ("object", None)
            self._root: _Field | None = (
                _ObjectField(root, self._ctx, (), 0, keep_empty=True)
                if expressible and root is not None
                else None
            )
        finally:
            self._quiet -= 1
        self._json = W.Textarea(placeholder="{}", rows=6, layout=W.Layout(width="100%"))
        self._json.add_class("mcpnb-json")
        self._json.observe(lambda change: self._changed(), names="value")
        self.json_toggle = W.ToggleButton(
            value=self._root is None,
            description="JSON",
            icon="code",
            tooltip="edit the arguments as JSON",
            disabled=self._root is None,
            layout=W.Layout(width="6em"),
        )
        self.json_toggle.add_class("mcpnb-json-toggle")
        self.json_toggle.observe(self._switch, names="value")
        empty = self._root is not None and not getattr(self._root, "fields", None)
        self._note = W.HTML(value="<i>No arguments.</i>" if empty else "")
        self.widget = W.VBox(layout=W.Layout(width="100%"))
        self.widget.add_class("mcpnb-form")
        self._layout()
        if values:
            self.set_value(values)
        elif self._root is None:
            self._json.value = "{}"

    # --- value --------------------------------------------------------------------------------

    @property
    def json_mode(self) -> bool:
        return bool(self.json_toggle.value)

    @property
    def value(self) -> dict[str, Any]:
        """The current arguments; empty optional fields are left out."""
        if self.json_mode:
            parsed, _ = self._parse_json()
            return parsed if isinstance(parsed, dict) else {}
        assert self._root is not None
        value = self._root.get()
        return value if isinstance(value, dict) else {}

    def set_value(self, values: dict[str, Any] | None) -> None:
        """Show ``values`` (fields not named are cleared). Values the form cannot show switch it to JSON."""
        values = dict(values or {})
        self._quiet += 1
        try:
            if self._root is not None and not self.json_mode and self._root.fits(values):
                self._root.set(values)
            else:
                if self._root is not None and not self._root.fits(values):
                    self.json_toggle.value = True
                self._json.value = json.dumps(values, indent=2, ensure_ascii=False)
        finally:
            self._quiet -= 1
        self._changed()

    def _parse_json(self) -> tuple[Any, str | None]:
        text = self._json.value.strip() or "{}"
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError) as exc:
            return None, f"JSON: not valid ({_json_problem(exc)})"
        if not isinstance(parsed, dict):
            return None, "JSON: the arguments must be a JSON object ({...})"
        return parsed, None

    # --- checking -----------------------------------------------------------------------------

    def errors(self) -> list[str]:
        """What is wrong with :attr:`value`, one message per problem (empty when it may be sent)."""
        if self.json_mode:
            parsed, problem = self._parse_json()
            if problem:
                return [problem]
            local: list[str] = []
        else:
            assert self._root is not None
            local = self._root.problems("")
            parsed = self.value
        return local + [e for e in schema_errors(self.schema, parsed) if e.split(":")[0] not in _paths(local)]

    # --- events -------------------------------------------------------------------------------

    def on_change(self, callback: OnChange) -> None:
        """Call ``callback(value)`` after every edit (exceptions are logged, not raised)."""
        self._callbacks.append(callback)

    def _changed(self) -> None:
        if self._quiet:
            return
        value = self.value
        for callback in list(self._callbacks):
            try:
                callback(value)
            except Exception:
                logger.exception("a SchemaForm on_change callback raised; ignored")

    def _switch(self, change: dict[str, Any]) -> None:
        self._quiet += 1
        try:
            if change["new"]:
                assert self._root is not None
                self._json.value = json.dumps(self._root.get(), indent=2, ensure_ascii=False)
            else:
                parsed, problem = self._parse_json()
                if problem is None and self._root is not None and self._root.fits(parsed):
                    self._root.set(parsed)
                elif problem is None or self._json.value.strip():
                    # The JSON holds what the form cannot show (or is broken): stay in JSON mode.
                    self._quiet -= 1
                    try:
                        self.json_toggle.value = True
                    finally:
                        self._quiet += 1
        finally:
            self._quiet -= 1
        self._layout()
        self._changed()

    def _layout(self) -> None:
        toolbar = W.HBox([self.json_toggle], layout=W.Layout(justify_content="flex-end"))
        body = self._json if self.json_mode or self._root is None else self._root.widget
        self.widget.children = [toolbar, self._note, body] if self._note.value else [toolbar, body]

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


def _paths(messages: list[str]) -> set[str]:
    return {m.split(":")[0] for m in messages}


def form_for(schema: dict[str, Any] | None, **values: Any) -> SchemaForm:
    """A :class:`SchemaForm` for ``schema``, prefilled with ``values``."""
    return SchemaForm(schema, values=values or None)


# --- jsonschema's judgement, in words -----------------------------------------------------------


def schema_errors(schema: dict[str, Any], value: Any) -> list[str]:
    """``value`` checked against ``schema`` by jsonschema (local ``$ref`` only), as messages.

    A schema that is itself broken or refers outside the document is not the user's fault: it
    yields no messages, and the server decides.
    """
    import jsonschema
    import jsonschema.exceptions
    import jsonschema.validators

    try:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        cls.check_schema(schema)
        validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
        errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    except Exception as exc:  # SchemaError, unresolvable $ref: the schema's problem
        logger.debug("could not check a form against its schema: %s", type(exc).__name__)
        return []
    messages: list[str] = []
    for error in errors:
        for message in _describe(error):
            if message not in messages:
                messages.append(message)
    return messages


def _path(parts: Any) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _describe(error: Any) -> list[str]:
    """One ValidationError as messages "<field>: <rule>", never showing the value."""
    where = _path(error.absolute_path)
    rule, expected = error.validator, error.validator_value
    if rule == "required":
        instance = error.instance if isinstance(error.instance, dict) else {}
        return [f"{_join(where, n)}: is required" for n in expected if n not in instance]
    label = where or "(arguments)"
    if rule == "type":
        names = expected if isinstance(expected, list) else [expected]
        text = " or ".join(f"{'an' if str(n)[0] in 'aeiou' else 'a'} {n}" for n in names)
        return [f"{label}: must be {text}"]
    words: dict[str, Callable[[], str]] = {
        "enum": lambda: "must be one of " + ", ".join(_label(v) for v in expected[:20]),
        "const": lambda: f"must be {_label(expected)}",
        "minimum": lambda: f"must be ≥ {expected}",
        "maximum": lambda: f"must be ≤ {expected}",
        "exclusiveMinimum": lambda: f"must be > {expected}",
        "exclusiveMaximum": lambda: f"must be < {expected}",
        "multipleOf": lambda: f"must be a multiple of {expected}",
        "minLength": lambda: f"must be at least {expected} characters long",
        "maxLength": lambda: f"must be at most {expected} characters long",
        "pattern": lambda: f"must match the pattern {expected}",
        "format": lambda: f"is not a valid {expected}",
        "minItems": lambda: f"needs at least {expected} items",
        "maxItems": lambda: f"takes at most {expected} items",
        "uniqueItems": lambda: "must not repeat items",
        "minProperties": lambda: f"needs at least {expected} properties",
        "maxProperties": lambda: f"takes at most {expected} properties",
    }
    if rule in words:
        return [f"{label}: {short(words[rule](), 300)}"]
    if rule in ("additionalProperties", "unevaluatedProperties", "dependentRequired"):
        return [f"{label}: {short(error.message, 300)}"]  # names keys, never values
    return [f"{label}: does not match the schema ({rule})"]
