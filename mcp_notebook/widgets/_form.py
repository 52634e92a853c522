"""Forms generated from a JSON Schema (a tool's inputSchema, a prompt's arguments, an elicitation).

Why a generated form: the user should not have to type JSON to call a tool, and should see what a
tool expects (types, choices, required marks, descriptions) before sending. The form covers what
tool schemas commonly use: strings (with format hints, long text, passwords), numbers, integers,
booleans, enums of any type (``enum``, ``const`` and ``oneOf`` of ``const`` with titles), nullable
values (a "null" toggle), arrays (a row editor; a multi-select for arrays of choices), nested
objects (a bordered sub-form) and local ``$ref``. What a form cannot express (``oneOf`` of objects,
``patternProperties``, ``$ref`` cycles, several types) becomes a JSON text field, and a "JSON"
switch turns the whole form into one JSON editor for users who prefer it. So does whatever lies
past the node budget of one build or fill of the form (``MAX_SCHEMA_NODES``: definitions that
refer to each other several times expand exponentially), with a note above the form saying so.

The final judgement is jsonschema's (:meth:`SchemaForm.errors`), by the client's own rule
(:mod:`mcp_notebook.protocol._json_schema`: references only inside the schema, never fetched, and
patterns by RE2); a reference out of the document is one message naming it, as the call would be
refused for it. The messages name the field and the rule, never the value (arguments may be
secret). Empty optional fields are left out of :attr:`SchemaForm.value`, so the server applies its
own defaults. The controls, and which control a schema gets, live in :mod:`._form_fields`; this
module is the form.

Every server string (titles, descriptions, enum labels) reaches the page only through text
controls (``Label``, options, placeholders, tooltips) or :func:`mcp_notebook.display._html.escape`.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from typing import Any

from ..display._html import escape, short
from ..protocol._defaults import required_defaults
from ..protocol._json_schema import UnresolvableRef, schema_validator, validation_errors
from ..protocol._schema_walk import MAX_SCHEMA_NODES
from ..protocol._schema_words import branches_words
from . import _ui as W
from ._form_fields import (
    Context,
    Field,
    ObjectField,
    choice_label,
    css_name,
    expressible_object,
    join_path,
    json_problem,
    schema_kind,
)
from ._lean import close_tree, lean
from ._shown import HTML

__all__ = ["SchemaForm", "css_name", "form_for", "schema_errors"]

logger = logging.getLogger("mcp_notebook.widgets")

OnChange = Callable[[dict[str, Any]], Any]


def _one_operation(method: Callable[..., None]) -> Callable[..., None]:
    """Run a form method as one operation of its node budget (see ``Context.operation``)."""

    @functools.wraps(method)
    def run(self: SchemaForm, *args: Any, **kwargs: Any) -> None:
        with self._ctx.operation():
            method(self, *args, **kwargs)

    return run


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
        self._ctx = Context(self.schema, self._changed)
        self._quiet += 1
        try:
            with self._ctx.operation():  # the whole build, defaults included, within one node budget
                root, _ = self._ctx.resolve(self.schema, ())
                expressible = (
                    root is not None and expressible_object(root) and schema_kind(root) in ("object", None)
                )
                properties = root.get("properties") if root is not None else None
                affordable = self._ctx.budget.take(len(properties) if isinstance(properties, dict) else 0)
                self._root: Field | None = (
                    ObjectField(root, self._ctx, (), 0, keep_empty=True)
                    if expressible and affordable and root is not None
                    else None
                )
        finally:
            self._quiet -= 1
        # Shared layouts and styles (widgets/_lean.py): every form opened stays in a saved notebook.
        self._json = lean(W.Textarea, {"width": "100%"}, placeholder="{}", rows=6)
        self._json.add_class("mcpnb-json")
        self._json.observe(lambda change: self._changed(), names="value")
        self.json_toggle = lean(
            W.ToggleButton,
            {"width": "6em"},
            value=self._root is None,
            description="JSON",
            icon="code",
            tooltip="edit the arguments as JSON",
            disabled=self._root is None,
        )
        self.json_toggle.add_class("mcpnb-json-toggle")
        self.json_toggle.observe(self._switch, names="value")
        self._empty = self._root is not None and not getattr(self._root, "fields", None)
        self._note = lean(HTML, value="")
        self._toolbar = lean(W.HBox, {"justify_content": "flex-end"}, children=[self.json_toggle])
        self.widget = lean(W.VBox, {"width": "100%"})
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

    @_one_operation
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
            return None, f"JSON: not valid ({json_problem(exc)})"
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
        # Judged as a call would send it: a required field left empty that has a default gets it
        # (the client's one rule), so the form refuses no more than call_tool() does.
        parsed = {**parsed, **required_defaults(self.schema, parsed)}
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

    @_one_operation
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

    def _cut_note(self) -> str:
        """Why parts of the form are JSON editors, when the schema is to blame (escaped)."""
        notes = []
        if self._ctx.cut:
            notes.append(
                f"The schema expands past {MAX_SCHEMA_NODES:,} nodes: the rest of it is edited as JSON."
            )
        if self._ctx.outside:
            refs = ", ".join(escape(short(ref, 80)) for ref in self._ctx.outside)
            notes.append(f"It refers outside itself ({refs}): never fetched; those fields take JSON.")
        return "<br>".join(f"<i>{note}</i>" for note in notes)

    def _layout(self) -> None:
        self._note.value = "<i>No arguments.</i>" if self._empty else self._cut_note()
        toolbar = self._toolbar
        body = self._json if self.json_mode or self._root is None else self._root.widget
        self.widget.children = [toolbar, self._note, body] if self._note.value else [toolbar, body]

    def close(self) -> None:
        """Close every widget of the form, shown or not (the fields while in JSON mode, the JSON
        editor while not): a form replaced by another tool's would otherwise stay a live model in
        the kernel and the browser, and in a saved notebook."""
        parts = [self.widget, self._toolbar, self._note, self._json]
        if self._root is not None:
            parts.append(self._root.widget)
        close_tree(*parts)

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

    A schema that is itself broken is not the user's fault: it yields no messages, and the server
    decides. One whose reference cannot be resolved inside it yields one message naming it (the
    call would be refused for it unless sent with ``validate=False``).
    """
    try:
        validator = schema_validator(schema, formats=True)
        errors = sorted(validation_errors(validator, value), key=lambda e: list(e.absolute_path))
    except UnresolvableRef as exc:
        return [f"(schema): {short(str(exc), 300)}"]
    except Exception as exc:  # SchemaError: the schema's problem
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
        return [f"{join_path(where, n)}: is required" for n in expected if n not in instance]
    label = where or "(arguments)"
    if rule == "type":
        names = expected if isinstance(expected, list) else [expected]
        text = " or ".join(f"{'an' if str(n)[0] in 'aeiou' else 'a'} {n}" for n in names)
        return [f"{label}: must be {text}"]
    words: dict[str, Callable[[], str]] = {
        "enum": lambda: "must be one of " + ", ".join(choice_label(v) for v in expected[:20]),
        "const": lambda: f"must be {choice_label(expected)}",
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
    if rule in ("anyOf", "oneOf"):  # the branches in the client's words (protocol/_schema_words.py)
        said = branches_words(expected)
        if rule == "oneOf" and not error.context:
            return [f"{label}: {short(f'must match exactly one of: {said}, but matches several', 400)}"]
        return [f"{label}: {short(f'must be one of: {said}', 400)}"]
    if rule in ("additionalProperties", "unevaluatedProperties", "dependentRequired"):
        return [f"{label}: {short(error.message, 300)}"]  # names keys, never values
    return [f"{label}: does not match the schema ({rule})"]
