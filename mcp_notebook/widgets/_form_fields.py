"""The controls of a schema form: one field per JSON Schema shape, and the mapping from schema to field.

Why apart from :class:`._form.SchemaForm`: the form only switches between its root field and a
JSON editor, and judges the value with jsonschema; which control a schema gets (``_plain``), how
``$ref`` resolves and how each control reads and shows a value are this module's. Fields build their
children through the same mapping, so fields and mapping live together; nothing here imports the form.

Every server string (titles, descriptions, enum labels) reaches the page only through text
controls (``Label``, options, placeholders, tooltips) or :func:`mcp_notebook.display._html.escape`.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from ..display._html import escape, short
from ..protocol._schema_walk import MAX_SCHEMA_NODES, NOWHERE, NodeBudget, local_target
from . import _ui as W
from ._lean import lean
from ._shown import HTML, Label, shown

__all__ = [
    "MISSING",
    "Context",
    "Field",
    "ObjectField",
    "choice_label",
    "css_name",
    "expressible_object",
    "join_path",
    "json_problem",
    "schema_kind",
]

MISSING: Any = type("_Missing", (), {"__repr__": lambda self: "<missing>"})()
_MAX_DEPTH = 8
_MAX_CHOICES = 500
#: what :func:`_choices` returns for more entries than a drop-down should hold
_TOO_MANY: list[tuple[str, Any]] = [("", None)]
#: the placeholder of a part shown as JSON because the form reached its node budget
_CUT_NOTE = f"the schema is too large for a form here (over {MAX_SCHEMA_NODES:,} nodes)"
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


def css_name(name: Any) -> str:
    """A property name as a CSS class suffix: ``[A-Za-z0-9_-]`` only."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", str(name)) or "_"


class Context:
    """What every field builder needs: the root schema (for ``$ref``), the change signal, and the
    node budget of the operation under way (:meth:`operation`)."""

    def __init__(self, root: dict[str, Any], notify: Callable[[], None]) -> None:
        self.root = root
        self.notify = notify
        self.budget = NodeBudget()
        #: some part of the form became a JSON editor because an operation ran out of nodes
        self.cut = False
        #: references that leave the document (shown as JSON fields, never fetched), first few
        self.outside: list[str] = []
        self._depth = 0

    @contextlib.contextmanager
    def operation(self) -> Iterator[None]:
        """One build or fill of the form (the first build, a set_value, an "add" click) spends at
        most :data:`MAX_SCHEMA_NODES` nodes; nested operations share the outer one's budget."""
        if self._depth == 0:
            self.budget = NodeBudget()
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            self.cut = self.cut or self.budget.exceeded

    def watch(self, widget: W.Widget, name: str = "value") -> None:
        widget.observe(lambda change: self.notify(), names=name)

    def resolve(self, schema: Any, seen: tuple[str, ...]) -> tuple[dict[str, Any] | None, tuple[str, ...]]:
        """Follow local ``$ref`` (``None`` for a cycle, a reference out of the document, or one
        past the node budget: each reference followed is a node)."""
        if schema is True or schema is None:
            return {}, seen
        if not isinstance(schema, dict):
            return None, seen
        while isinstance(schema.get("$ref"), str):
            ref = schema["$ref"]
            if ref in seen or not self.budget.take():
                return None, seen
            seen = (*seen, ref)
            target = local_target(self.root, ref)
            if not isinstance(target, dict):
                if target is NOWHERE and len(self.outside) < 3 and ref not in self.outside:
                    self.outside.append(ref)
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


# --- fields -------------------------------------------------------------------------------------
#
# A field owns its controls and answers three questions: get() (the JSON value, or MISSING when
# empty), set(value) (MISSING clears it) and problems(path) (what jsonschema cannot see, such as
# text that is not JSON).


class Field:
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


class _TextField(Field):
    def __init__(self, schema: dict[str, Any], ctx: Context, name: str, keep_empty: bool) -> None:
        fmt = schema.get("format")
        max_length = schema.get("maxLength")
        long = (
            name.lower() in _LONG_NAMES
            or (isinstance(max_length, int) and max_length > 200)
            or "contentMediaType" in schema
            or (isinstance(schema.get("default"), str) and "\n" in schema["default"])
        )
        placeholder = shown(_PLACEHOLDERS.get(str(fmt), str(fmt) if fmt else ""))
        layout = {"width": "auto"}  # stretches to the box; "100%" plus the margin overflows it
        if fmt == "password" or schema.get("writeOnly") is True:
            self.control = lean(W.Password, layout, placeholder=placeholder)
        elif long and not fmt:
            self.control = lean(W.Textarea, layout, placeholder=placeholder, rows=3)
        else:
            self.control = lean(W.Text, layout, placeholder=placeholder)
        self.keep_empty = keep_empty
        self.widget = _input(self.control)
        ctx.watch(self.control)

    def get(self) -> Any:
        value = self.control.value
        return value if value or self.keep_empty else MISSING

    def set(self, value: Any) -> None:
        self.control.value = "" if value is MISSING or value is None else str(value)

    def fits(self, value: Any) -> bool:
        return isinstance(value, str)


class _NumberField(Field):
    """A text box, not IntText/FloatText: those cannot be empty, and a silent 0 is a wrong argument."""

    def __init__(self, schema: dict[str, Any], ctx: Context, integer: bool, keep_empty: bool) -> None:
        self.integer = integer
        self.keep_empty = keep_empty
        low = schema.get("minimum", schema.get("exclusiveMinimum"))
        high = schema.get("maximum", schema.get("exclusiveMaximum"))
        hint = "integer" if integer else "number"
        if low is not None or high is not None:
            hint += f" {'' if low is None else low} … {'' if high is None else high}"
        self.control = lean(W.Text, {"width": "16em"}, placeholder=hint)
        self.widget = _input(self.control)
        ctx.watch(self.control)

    def get(self) -> Any:
        text = self.control.value.strip()
        if not text:
            return None if self.keep_empty else MISSING
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
        if value is MISSING or value is None:
            self.control.value = ""
        else:
            self.control.value = value if isinstance(value, str) else json.dumps(value)

    def fits(self, value: Any) -> bool:
        # Text is shown as typed (the user's own unfinished number, coming back from JSON mode).
        return isinstance(value, int | float | str) and not isinstance(value, bool)


class _CheckboxField(Field):
    def __init__(self, ctx: Context, label: str) -> None:
        self.control = W.Checkbox(value=False, indent=False, description=shown(label))
        self.widget = _input(self.control)
        ctx.watch(self.control)

    def get(self) -> Any:
        return bool(self.control.value)

    def set(self, value: Any) -> None:
        self.control.value = bool(value) if value is not MISSING else False

    def fits(self, value: Any) -> bool:
        return isinstance(value, bool)


class _ChoiceField(Field):
    """A Dropdown over any JSON values, by index (1 and True, or 0 and False, stay distinct)."""

    def __init__(self, choices: list[tuple[str, Any]], ctx: Context, blank: bool) -> None:
        self.choices = choices
        options: list[tuple[str, int]] = [(_NOT_SET, -1)] if blank else []
        options += [(shown(short(label, 120)), i) for i, (label, _) in enumerate(choices)]
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
        return MISSING if index is None or index < 0 else self.choices[index][1]

    def set(self, value: Any) -> None:
        index = None if value is MISSING else self._index(value)
        if index is None:
            index = -1 if self.blank else 0
        self.control.value = index

    def fits(self, value: Any) -> bool:
        return self._index(value) is not None


class _MultiChoiceField(Field):
    """An array of choices: a multi-select (ctrl/shift-click)."""

    def __init__(self, choices: list[tuple[str, Any]], ctx: Context, keep_empty: bool) -> None:
        self.choices = choices
        self.keep_empty = keep_empty
        options = [(shown(short(label, 120)), i) for i, (label, _) in enumerate(choices)]
        self.control = W.SelectMultiple(options=options, rows=min(6, max(2, len(options))))
        self.widget = _input(self.control)
        ctx.watch(self.control)

    def get(self) -> Any:
        values = [self.choices[i][1] for i in self.control.value]
        return values if values or self.keep_empty else MISSING

    def set(self, value: Any) -> None:
        wanted = value if isinstance(value, list) else []
        self.control.value = tuple(
            i for i, (_, c) in enumerate(self.choices) if any(type(c) is type(v) and c == v for v in wanted)
        )

    def fits(self, value: Any) -> bool:
        return isinstance(value, list) and all(
            any(type(c) is type(v) and c == v for _, c in self.choices) for v in value
        )


class _JsonField(Field):
    """Raw JSON for a value the form cannot express."""

    def __init__(self, schema: dict[str, Any] | None, ctx: Context, keep_empty: bool, note: str = "") -> None:
        self.keep_empty = keep_empty
        placeholder = f"JSON ({note})" if note else "JSON"
        self.control = W.Textarea(placeholder=placeholder, rows=3, layout=W.Layout(width="100%"))
        self.control.add_class("mcpnb-json-field")
        self.widget = _input(self.control)
        ctx.watch(self.control)

    def _parse(self) -> tuple[Any, str | None]:
        text = self.control.value.strip()
        if not text:
            return (None if self.keep_empty else MISSING), None
        try:
            return json.loads(text), None
        except (ValueError, RecursionError) as exc:
            return MISSING, f"not valid JSON ({json_problem(exc)})"

    def get(self) -> Any:
        return self._parse()[0]

    def problems(self, path: str) -> list[str]:
        problem = self._parse()[1]
        return [f"{path}: {problem}"] if problem else []

    def set(self, value: Any) -> None:
        self.control.value = "" if value is MISSING else json.dumps(value, indent=1, ensure_ascii=False)


def json_problem(exc: BaseException) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno}, column {exc.colno}"
    return "nested too deeply" if isinstance(exc, RecursionError) else str(exc)


class _NullableField(Field):
    """A value that may also be ``null``: the inner field plus a "null" toggle."""

    def __init__(self, inner: Field, ctx: Context) -> None:
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


class _ArrayField(Field):
    """A list editor: one row per item (remove button), an "add" button below."""

    def __init__(self, items: Any, ctx: Context, seen: tuple[str, ...], depth: int, keep_empty: bool) -> None:
        self.items, self.ctx, self.seen, self.depth = items, ctx, seen, depth
        self.keep_empty = keep_empty
        self.rows: list[tuple[Field, W.Widget]] = []
        self._probe: Field | None = None
        self._probe_cut = False
        self.box = W.VBox()
        self.add_button = W.Button(
            description="add", icon="plus", tooltip="add an item", layout=W.Layout(width="7em")
        )
        self.add_button.add_class("mcpnb-add")
        self.add_button.on_click(lambda _: self._click())
        #: the whole list as one JSON editor, when its rows would pass the node budget
        self._json: _JsonField | None = None
        self.widget = W.VBox([self.box, self.add_button])
        self.widget.add_class("mcpnb-array")

    def _click(self) -> None:
        with self.ctx.operation():  # each click builds one item, within its own budget
            self.add()

    def add(self, value: Any = MISSING) -> None:
        field = _build(self.items, self.ctx, "", self.seen, self.depth + 1, keep_empty=True)
        if value is not MISSING:
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
        if self._json is not None:
            return self._json.get()
        if not self.rows and not self.keep_empty:
            return MISSING
        return [_or_none(f.get()) for f, _ in self.rows]

    def set(self, value: Any) -> None:
        items = value if isinstance(value, list) else []
        self.rows = []
        self.box.children = []
        if not self.ctx.budget.take(len(items)):  # each item's row is a node
            self._json = _JsonField(None, self.ctx, self.keep_empty, _CUT_NOTE)
            self._json.set(items)
            self.widget.children = [self._json.widget]
            return
        if self._json is not None:
            self._json = None
            self.widget.children = [self.box, self.add_button]
        for item in items:
            self.add(item)

    def problems(self, path: str) -> list[str]:
        if self._json is not None:
            return self._json.problems(path)
        return [p for i, (f, _) in enumerate(self.rows) for p in f.problems(f"{path}[{i}]")]

    def fits(self, value: Any) -> bool:
        if not isinstance(value, list):
            return False
        if self._json is not None:
            return True
        if self._probe is None:  # one spare item field, built once, answers for every item
            refused = self.ctx.budget.refused
            self._probe = _build(self.items, self.ctx, "", self.seen, self.depth + 1, keep_empty=True)
            self._probe_cut = self.ctx.budget.refused > refused
        # A probe cut by the node budget cannot answer for a full item: the value is shown as JSON.
        return not self._probe_cut and all(self._probe.fits(v) for v in value)


def _or_none(value: Any) -> Any:
    return None if value is MISSING else value


class ObjectField(Field):
    """Named properties, one labelled row each; nested objects sit in a bordered box."""

    def __init__(
        self, schema: dict[str, Any], ctx: Context, seen: tuple[str, ...], depth: int, keep_empty: bool
    ) -> None:
        self.keep_empty = keep_empty
        properties: dict[str, Any] = (
            schema["properties"] if isinstance(schema.get("properties"), dict) else {}
        )
        self.required = {r for r in schema.get("required", []) if isinstance(r, str)}
        self.fields: dict[str, Field] = {}
        rows: list[W.Widget] = []
        for name, spec in properties.items():
            resolved, _ = ctx.resolve(spec, seen)
            required = name in self.required
            field = _build(spec, ctx, name, seen, depth + 1, keep_empty=False, required=required)
            self.fields[name] = field
            rows.append(_row(name, resolved or {}, required, field))
        box = {"width": "100%"}
        if depth > 0:
            box = {"border": "1px solid #ccc", "padding": "4px 8px", "margin": "2px 0", "width": "100%"}
        self.widget = lean(W.VBox, box, children=rows)
        if depth > 0:
            self.widget.add_class("mcpnb-subform")

    def get(self) -> Any:
        out = {}
        for name, field in self.fields.items():
            value = field.get()
            if value is not MISSING:
                out[name] = value
        return out if out or self.keep_empty else MISSING

    def set(self, value: Any) -> None:
        value = value if isinstance(value, dict) else {}
        for name, field in self.fields.items():
            field.set(value.get(name, MISSING))

    def problems(self, path: str) -> list[str]:
        return [p for name, f in self.fields.items() for p in f.problems(join_path(path, name))]

    def fits(self, value: Any) -> bool:
        return (
            isinstance(value, dict)
            and set(value) <= set(self.fields)
            and all(self.fields[k].fits(v) for k, v in value.items())
        )


def join_path(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _row(name: str, schema: dict[str, Any], required: bool, field: Field) -> W.Widget:
    description = schema.get("description") if isinstance(schema.get("description"), str) else ""
    title = schema.get("title") if isinstance(schema.get("title"), str) else ""
    text = f"{title} ({name})" if title and title != name else name
    # Shared layouts and styles (widgets/_lean.py): a form is stored in a saved notebook's state.
    label = lean(Label, value=short(text + (" *" if required else ""), 120), tooltip=_tip(description))
    label.add_class("mcpnb-label")
    if isinstance(field, _CheckboxField):
        field.control.tooltip = _tip(description)
    children: list[W.Widget] = [label, field.widget]
    if description:
        text = escape(short(description, 1000))
        help_text = lean(
            HTML, value=f'<div style="font-size:0.85em;color:#666;white-space:pre-wrap">{text}</div>'
        )
        help_text.add_class("mcpnb-help")
        children.append(help_text)
    row = lean(W.VBox, {"width": "100%", "margin": "0 0 4px 0"}, children=children)
    row.add_class("mcpnb-field")
    row.add_class(f"mcpnb-field-{css_name(name)}")
    return row


# --- choosing a field for a schema --------------------------------------------------------------


def _choices(schema: dict[str, Any], ctx: Context) -> list[tuple[str, Any]] | None:
    """(label, value) pairs for ``enum`` (legacy ``enumNames``), ``const``, ``oneOf``/``anyOf`` of
    consts; :data:`_TOO_MANY` past :data:`_MAX_CHOICES` or the node budget (each entry is a node),
    counted before any label is built."""
    count = _choice_count(schema)
    if count and (count > _MAX_CHOICES or not ctx.budget.take(count)):
        return _TOO_MANY
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        names = schema.get("enumNames")
        values = schema["enum"]
        labels = names if isinstance(names, list) and len(names) == len(values) else None
        return [(str(labels[i]) if labels else choice_label(v), v) for i, v in enumerate(values)]
    if "const" in schema:
        return [(choice_label(schema["const"]), schema["const"])]
    for key in ("oneOf", "anyOf"):
        options = schema.get(key)
        if (
            isinstance(options, list)
            and options
            and all(isinstance(o, dict) and "const" in o for o in options)
        ):
            return [(str(o.get("title") or choice_label(o["const"])), o["const"]) for o in options]
    return None


def _choice_count(schema: dict[str, Any]) -> int:
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return len(enum)
    if "const" in schema:
        return 1
    for key in ("oneOf", "anyOf"):
        options = schema.get(key)
        if (
            isinstance(options, list)
            and options
            and all(isinstance(o, dict) and "const" in o for o in options)
        ):
            return len(options)
    return 0


def choice_label(value: Any) -> str:
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


def schema_kind(schema: dict[str, Any]) -> str | None:
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


def expressible_object(schema: dict[str, Any]) -> bool:
    if any(k in schema for k in ("oneOf", "anyOf", "allOf", "patternProperties", "not", "if")):
        return False
    extra = schema.get("additionalProperties")
    return not (isinstance(extra, dict) and extra) or bool(schema.get("properties"))


def _build(
    spec: Any,
    ctx: Context,
    name: str,
    seen: tuple[str, ...],
    depth: int,
    *,
    keep_empty: bool,
    required: bool = False,
) -> Field:
    schema, seen = ctx.resolve(spec, seen)
    if schema is None or depth > _MAX_DEPTH:
        note = _CUT_NOTE if schema is None and ctx.budget.exceeded else ""
        return _with_default(_JsonField(None, ctx, keep_empty, note), schema or {})
    inner = _nullable(schema)
    if inner is not None:
        # A default of null is not prefilled: leaving the field out means the same, and reads better.
        inner_field = _build(inner, ctx, name, seen, depth, keep_empty=keep_empty, required=required)
        return _NullableField(inner_field, ctx)
    return _with_default(_plain(schema, ctx, name, seen, depth, keep_empty, required), schema)


def _plain(
    schema: dict[str, Any],
    ctx: Context,
    name: str,
    seen: tuple[str, ...],
    depth: int,
    keep_empty: bool,
    required: bool,
) -> Field:
    choices = _choices(schema, ctx)
    kind = schema_kind(schema)
    if choices is _TOO_MANY:
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
        item_choices = _choices(items, ctx) if items is not None else None
        if item_choices is not None and item_choices is not _TOO_MANY:
            return _MultiChoiceField(item_choices, ctx, keep_empty or required)
        return _ArrayField(schema.get("items", {}), ctx, seen, depth, keep_empty or required)
    if kind == "object" and expressible_object(schema) and isinstance(schema.get("properties"), dict):
        if not ctx.budget.take(len(schema["properties"])):  # each property is a node
            return _JsonField(schema, ctx, keep_empty, _CUT_NOTE)
        return ObjectField(schema, ctx, seen, depth, keep_empty or required)
    return _JsonField(schema, ctx, keep_empty)


def _with_default(field: Field, schema: dict[str, Any]) -> Field:
    if "default" in schema and (isinstance(field, _JsonField) or field.fits(schema["default"])):
        field.set(schema["default"])
    return field


def _tip(description: Any) -> str | None:
    """A schema's description as a tooltip (cut, its control and bidi characters made visible)."""
    return shown(short(description, 1000), multiline=True) or None
