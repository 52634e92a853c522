"""SchemaForm: one test per schema kind, driven like a user would (set controls, read value, errors).

No server and no kernel needed: ipywidgets objects work without a frontend.
"""

from __future__ import annotations

import ipywidgets as W
import pytest

from mcp_notebook.widgets import SchemaForm, form_for
from mcp_notebook.widgets._form import css_name, schema_errors

from .widget_helpers import find, walk

HOSTILE = "<img src=x onerror=alert(1)><script>alert(2)</script>"


def control(form, name):
    """The input control of a field, found the way a browser test would: by CSS class."""
    (row,) = find(form.widget, f"mcpnb-field-{css_name(name)}")
    return find(row, "mcpnb-input")[0]


def obj(properties, required=(), **extra):
    return {"type": "object", "properties": properties, "required": list(required), **extra}


# --- structure ------------------------------------------------------------------------------------


def test_form_container_has_class_and_field_classes():
    form = SchemaForm(obj({"a": {"type": "string"}, "weird name/ü": {"type": "string"}}))
    assert "mcpnb-form" in form.widget._dom_classes
    assert find(form.widget, "mcpnb-field-a")
    assert find(form.widget, "mcpnb-field-weird_name__")
    assert css_name("a<b>\"c'") == "a_b__c_"


def test_required_marks_and_titles_in_labels():
    form = SchemaForm(obj({"a": {"type": "string", "title": "First"}, "b": {"type": "string"}}, ["a"]))
    labels = [w.value for w in find(form.widget, "mcpnb-label")]
    assert labels == ["First (a) *", "b"]


def test_descriptions_are_escaped_help_text_and_plain_tooltips():
    form = SchemaForm(obj({"a": {"type": "string", "description": HOSTILE}}))
    (help_text,) = find(form.widget, "mcpnb-help")
    assert "<img" not in help_text.value
    assert "<script" not in help_text.value
    assert "&lt;img src=x onerror=alert(1)&gt;" in help_text.value
    (label,) = find(form.widget, "mcpnb-label")
    assert label.tooltip == HOSTILE  # a tooltip is a title attribute: text, never markup


def test_no_arguments():
    form = SchemaForm({"type": "object"})
    assert form.value == {}
    assert form.errors() == []
    assert "No arguments" in form.widget.children[1].value


def test_none_schema_is_an_empty_object():
    assert SchemaForm(None).value == {}


# --- strings ----------------------------------------------------------------------------------------


def test_string_text_and_empty_optional_is_left_out():
    form = SchemaForm(obj({"a": {"type": "string"}, "b": {"type": "string"}}, ["a"]))
    assert isinstance(control(form, "a"), W.Text)
    assert form.value == {}
    assert form.errors() == ["a: is required"]
    control(form, "a").value = "hello"
    assert form.value == {"a": "hello"}
    assert form.errors() == []


def test_long_text_is_a_textarea_and_password_is_hidden():
    form = SchemaForm(
        obj(
            {
                "text": {"type": "string"},
                "essay": {"type": "string", "maxLength": 5000},
                "secret": {"type": "string", "format": "password"},
                "token": {"type": "string", "writeOnly": True},
            }
        )
    )
    assert isinstance(control(form, "text"), W.Textarea)
    assert isinstance(control(form, "essay"), W.Textarea)
    assert isinstance(control(form, "secret"), W.Password)
    assert isinstance(control(form, "token"), W.Password)


@pytest.mark.parametrize(
    ("fmt", "good", "bad", "placeholder"),
    [
        ("email", "ann@example.com", "not an email", "name@example.com"),
        ("date", "2025-01-31", "31/01/2025", "YYYY-MM-DD"),
        ("ipv4", "192.0.2.7", "999.1.1.1", "192.0.2.1"),
    ],
)
def test_string_formats_hint_and_check(fmt, good, bad, placeholder):
    form = SchemaForm(obj({"x": {"type": "string", "format": fmt}}))
    assert control(form, "x").placeholder == placeholder
    control(form, "x").value = good
    assert form.errors() == []
    control(form, "x").value = bad
    assert form.errors() == [f"x: is not a valid {fmt}"]


def test_string_length_and_pattern():
    form = SchemaForm(
        obj({"name": {"type": "string", "minLength": 2, "maxLength": 4, "pattern": "^[a-z]+$"}})
    )
    form.set_value({"name": "a"})
    assert form.errors() == ["name: must be at least 2 characters long"]
    form.set_value({"name": "abcdef"})
    assert form.errors() == ["name: must be at most 4 characters long"]
    form.set_value({"name": "AB"})
    assert form.errors() == ["name: must match the pattern ^[a-z]+$"]


def test_errors_never_show_the_value():
    form = SchemaForm(obj({"pin": {"type": "string", "maxLength": 2}}))
    form.set_value({"pin": "s3cr3t-value"})
    assert form.errors()
    assert not any("s3cr3t" in e for e in form.errors())


# --- numbers ----------------------------------------------------------------------------------------


def test_number_parses_and_rejects_text():
    form = SchemaForm(obj({"a": {"type": "number"}, "b": {"type": "number"}}, ["a", "b"]))
    control(form, "a").value = "2"
    control(form, "b").value = "3.5"
    assert form.value == {"a": 2, "b": 3.5}
    assert form.errors() == []
    control(form, "a").value = "two"
    assert form.errors() == ["a: not a number"]
    control(form, "a").value = "nan"
    assert form.errors() == ["a: not a number"]


def test_integer_bounds_and_type():
    form = SchemaForm(obj({"n": {"type": "integer", "minimum": 1, "maximum": 10}}, ["n"]))
    assert control(form, "n").placeholder == "integer 1 … 10"
    control(form, "n").value = "5"
    assert form.value == {"n": 5}
    assert form.errors() == []
    control(form, "n").value = "11"
    assert form.errors() == ["n: must be ≤ 10"]
    control(form, "n").value = "0"
    assert form.errors() == ["n: must be ≥ 1"]
    control(form, "n").value = "2.5"
    assert form.errors() == ["n: must be an integer"]
    control(form, "n").value = "4.0"
    assert form.value == {"n": 4}


def test_exclusive_bounds_and_multiple_of():
    form = SchemaForm(obj({"x": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5}}))
    form.set_value({"x": 0})
    assert form.errors() == ["x: must be > 0"]
    form.set_value({"x": 0.7})
    assert form.errors() == ["x: must be a multiple of 0.5"]


# --- booleans and enums -----------------------------------------------------------------------------


def test_boolean_with_default_is_a_checkbox():
    form = SchemaForm(obj({"flag": {"type": "boolean", "default": True}}))
    box = control(form, "flag")
    assert isinstance(box, W.Checkbox)
    assert form.value == {"flag": True}
    box.value = False
    assert form.value == {"flag": False}


def test_optional_boolean_without_default_can_stay_unset():
    form = SchemaForm(obj({"flag": {"type": "boolean"}}))
    choice = control(form, "flag")
    assert isinstance(choice, W.Dropdown)
    assert form.value == {}
    form.set_value({"flag": False})
    assert form.value == {"flag": False}


def test_string_enum_is_a_dropdown_with_default():
    form = SchemaForm(obj({"region": {"type": "string", "enum": ["all", "north"], "default": "all"}}))
    dropdown = control(form, "region")
    assert isinstance(dropdown, W.Dropdown)
    assert [label for label, _ in dropdown.options] == ["all", "north"]
    assert form.value == {"region": "all"}
    form.set_value({"region": "north"})
    assert form.value == {"region": "north"}


def test_required_enum_without_default_starts_unset():
    form = SchemaForm(obj({"mode": {"enum": ["a", "b"]}}, ["mode"]))
    assert form.value == {}
    assert form.errors() == ["mode: is required"]


def test_enum_of_mixed_types_keeps_1_and_true_apart():
    form = SchemaForm(obj({"v": {"enum": [1, True, "1", None, 2.5]}}))
    for value in (1, True, "1", None, 2.5):
        form.set_value({"v": value})
        assert form.value == {"v": value}
        assert type(form.value["v"]) is type(value)
        assert form.errors() == []


def test_enum_labels_from_titles_and_enum_names():
    form = SchemaForm(
        obj(
            {
                "size": {"oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
                "legacy": {"type": "string", "enum": ["x", "y"], "enumNames": ["Ex", "Why"]},
                "fixed": {"const": 3},
            }
        )
    )
    assert [label for label, _ in control(form, "size").options][1:] == ["Small", "Large"]
    assert [label for label, _ in control(form, "legacy").options][1:] == ["Ex", "Why"]
    form.set_value({"size": "l", "legacy": "y", "fixed": 3})
    assert form.value == {"size": "l", "legacy": "y", "fixed": 3}


def test_huge_enum_is_typed_text():
    form = SchemaForm(obj({"country": {"type": "string", "enum": [f"c{i}" for i in range(5000)]}}))
    assert isinstance(control(form, "country"), W.Text)
    control(form, "country").value = "c42"
    assert form.errors() == []
    control(form, "country").value = "nope"
    assert form.errors()[0].startswith("country: must be one of c0, c1")


def test_hostile_enum_labels_stay_text():
    form = SchemaForm(obj({"v": {"enum": [HOSTILE]}}))
    assert [label for label, _ in control(form, "v").options] == ["—", HOSTILE]  # option text, not markup
    for widget in walk(form.widget):
        if isinstance(widget, W.HTML):
            assert "<script" not in widget.value


# --- arrays -----------------------------------------------------------------------------------------


def test_array_of_primitives_add_and_remove_rows():
    form = SchemaForm(obj({"tags": {"type": "array", "items": {"type": "string"}}}))
    assert form.value == {}
    (add,) = find(form.widget, "mcpnb-add")
    add.click()
    add.click()
    inputs = [w for w in find(form.widget, "mcpnb-input") if isinstance(w, W.Text)]
    inputs[0].value, inputs[1].value = "x", ""
    assert form.value == {"tags": ["x", ""]}
    find(form.widget, "mcpnb-remove")[1].click()
    assert form.value == {"tags": ["x"]}
    find(form.widget, "mcpnb-remove")[0].click()
    assert form.value == {}


def test_array_of_numbers_with_limits():
    form = SchemaForm(
        obj({"xs": {"type": "array", "items": {"type": "integer"}, "minItems": 2, "uniqueItems": True}})
    )
    form.set_value({"xs": [1]})
    assert form.errors() == ["xs: needs at least 2 items"]
    form.set_value({"xs": [1, 1]})
    assert form.errors() == ["xs: must not repeat items"]
    form.set_value({"xs": [1, 2]})
    assert form.value == {"xs": [1, 2]}
    assert form.errors() == []
    find(form.widget, "mcpnb-item")[1].children[0].value = "zwei"
    assert form.errors() == ["xs[1]: not an integer"]


def test_array_of_objects_uses_nested_forms():
    schema = obj(
        {
            "people": {
                "type": "array",
                "items": obj(
                    {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}}, ["name"]
                ),
            }
        }
    )
    form = SchemaForm(schema)
    form.set_value({"people": [{"name": "Ann", "age": 3}, {"name": "Bob"}]})
    assert form.value == {"people": [{"name": "Ann", "age": 3}, {"name": "Bob"}]}
    assert len(find(form.widget, "mcpnb-subform")) == 2
    (first_age,) = find(find(form.widget, "mcpnb-item")[0], "mcpnb-field-age")
    find(first_age, "mcpnb-input")[0].value = "-1"
    (second_name,) = find(find(form.widget, "mcpnb-item")[1], "mcpnb-field-name")
    find(second_name, "mcpnb-input")[0].value = ""
    assert form.errors() == ["people[0].age: must be ≥ 0", "people[1].name: is required"]


def test_array_of_choices_is_a_multi_select():
    form = SchemaForm(obj({"colours": {"type": "array", "items": {"enum": ["red", "green", "blue"]}}}))
    select = control(form, "colours")
    assert isinstance(select, W.SelectMultiple)
    select.value = (0, 2)
    assert form.value == {"colours": ["red", "blue"]}
    form.set_value({"colours": ["green"]})
    assert form.value == {"colours": ["green"]}


# --- objects, nullables, defaults, refs -------------------------------------------------------------


def test_nested_object_is_a_bordered_subform():
    schema = obj(
        {"address": obj({"street": {"type": "string"}, "zip": {"type": "string"}}, ["street"])}, ["address"]
    )
    form = SchemaForm(schema)
    (sub,) = find(form.widget, "mcpnb-subform")
    assert sub.layout.border
    assert find(sub, "mcpnb-field-street")
    assert form.value == {"address": {}}
    assert form.errors() == ["address.street: is required"]
    form.set_value({"address": {"street": "Main St"}})
    assert form.value == {"address": {"street": "Main St"}}
    assert form.errors() == []


def test_optional_empty_nested_object_is_left_out():
    form = SchemaForm(obj({"opts": obj({"x": {"type": "string"}})}))
    assert form.value == {}


@pytest.mark.parametrize(
    "spec",
    [
        {"type": ["string", "null"]},
        {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
    ],
)
def test_nullable_has_a_null_toggle(spec):
    form = SchemaForm(obj({"note": spec}))
    (toggle,) = find(form.widget, "mcpnb-null")
    assert form.value == {}
    control(form, "note").value = "hi"
    assert form.value == {"note": "hi"}
    toggle.value = True
    assert form.value == {"note": None}
    assert control(form, "note").disabled
    assert form.errors() == []
    form.set_value({"note": "back"})
    assert not toggle.value
    assert form.value == {"note": "back"}


def test_defaults_are_prefilled():
    form = SchemaForm(
        obj(
            {
                "s": {"type": "string", "default": "x"},
                "n": {"type": "integer", "default": 20},
                "f": {"type": "number", "default": 0.2},
                "b": {"type": "boolean", "default": False},
                "l": {"type": "array", "items": {"type": "string"}, "default": ["a"]},
                "o": {"type": "object", "properties": {"k": {"type": "string", "default": "v"}}},
            }
        )
    )
    assert form.value == {"s": "x", "n": 20, "f": 0.2, "b": False, "l": ["a"], "o": {"k": "v"}}


def test_initial_values_override_defaults():
    form = SchemaForm(obj({"n": {"type": "integer", "default": 20}}), values={"n": 3})
    assert form.value == {"n": 3}
    assert form_for(obj({"n": {"type": "integer"}}), n=7).value == {"n": 7}


def test_local_refs_are_followed():
    schema = {
        "type": "object",
        "$defs": {"Point": obj({"x": {"type": "number"}, "y": {"type": "number"}}, ["x", "y"])},
        "properties": {"p": {"$ref": "#/$defs/Point"}},
        "required": ["p"],
    }
    form = SchemaForm(schema)
    assert find(form.widget, "mcpnb-field-x")
    form.set_value({"p": {"x": 1}})
    assert form.errors() == ["p.y: is required"]


def test_ref_cycle_becomes_a_json_field():
    schema = {
        "type": "object",
        "$defs": {"Node": obj({"name": {"type": "string"}, "child": {"$ref": "#/$defs/Node"}})},
        "properties": {"tree": {"$ref": "#/$defs/Node"}},
    }
    form = SchemaForm(schema)
    assert find(form.widget, "mcpnb-json-field")
    form.set_value({"tree": {"name": "a", "child": {"name": "b", "child": {"name": "c"}}}})
    assert form.value["tree"]["child"] == {"name": "b", "child": {"name": "c"}}
    assert form.errors() == []


def test_remote_ref_is_never_fetched(monkeypatch):
    import urllib.request

    # Recorded, not raised: an error raised inside the fetch was swallowed as "unresolvable", so a
    # form that did fetch passed this test before (issue #35).
    fetched: list[object] = []
    monkeypatch.setattr(urllib.request, "urlopen", lambda *args, **kwargs: fetched.append(args))
    schema = obj({"x": {"$ref": "https://example.com/schema.json"}})
    form = SchemaForm(schema)
    (field,) = find(form.widget, "mcpnb-json-field")
    field.value = '{"a": 1}'
    assert form.value == {"x": {"a": 1}}
    # the call would be refused for it: the form says so, naming the reference
    assert form.errors() == [
        "(schema): refers outside itself, to 'https://example.com/schema.json', which is never fetched"
    ]
    assert fetched == []


# --- what a form cannot express: JSON -----------------------------------------------------------------


def test_one_of_objects_is_a_json_field():
    spec = {"oneOf": [obj({"a": {"type": "string"}}, ["a"]), obj({"b": {"type": "integer"}}, ["b"])]}
    form = SchemaForm(obj({"choice": spec}))
    (field,) = find(form.widget, "mcpnb-json-field")
    field.value = '{"b": 2}'
    assert form.value == {"choice": {"b": 2}}
    assert form.errors() == []
    field.value = '{"b": '
    assert form.errors()[0].startswith("choice: not valid JSON")
    field.value = "[" * 100_000
    assert form.errors()[0].startswith("choice: not valid JSON")
    field.value = '{"c": 1}'
    assert form.errors() == ["choice: must be one of: an object with a; an object with b"]


def test_pattern_properties_root_is_json_only():
    schema = {
        "type": "object",
        "patternProperties": {"^x-": {"type": "string"}},
        "additionalProperties": False,
    }
    form = SchemaForm(schema)
    assert form.json_mode
    assert form.json_toggle.disabled
    (editor,) = find(form.widget, "mcpnb-json")
    editor.value = '{"x-a": "1"}'
    assert form.value == {"x-a": "1"}
    assert form.errors() == []
    editor.value = '{"y": 1}'
    assert form.errors()
    assert "y" in form.errors()[0]
    editor.value = "[1]"
    assert form.errors() == ["JSON: the arguments must be a JSON object ({...})"]


def test_json_switch_round_trip():
    form = SchemaForm(obj({"a": {"type": "string"}, "n": {"type": "integer"}}))
    form.set_value({"a": "x", "n": 1})
    form.json_toggle.value = True
    (editor,) = find(form.widget, "mcpnb-json")
    assert '"a": "x"' in editor.value
    editor.value = '{"a": "y", "n": 2}'
    assert form.value == {"a": "y", "n": 2}
    editor.value = "{broken"
    assert form.errors()[0].startswith("JSON: not valid")
    editor.value = '{"a": "z"}'
    form.json_toggle.value = False
    assert not form.json_mode
    assert control(form, "a").value == "z"
    assert form.value == {"a": "z"}


def test_set_value_with_unknown_keys_switches_to_json():
    form = SchemaForm(obj({"a": {"type": "string"}}))
    form.set_value({"a": "x", "extra": [1, 2]})
    assert form.json_mode
    assert form.value == {"a": "x", "extra": [1, 2]}


# --- events ---------------------------------------------------------------------------------------------


def test_on_change_reports_each_edit_and_set_value_once():
    form = SchemaForm(obj({"a": {"type": "string"}, "b": {"type": "integer"}}))
    seen = []
    form.on_change(seen.append)
    control(form, "a").value = "x"
    assert seen == [{"a": "x"}]
    form.set_value({"a": "y", "b": 2})
    assert seen[-1] == {"a": "y", "b": 2}
    assert len(seen) == 2


def test_on_change_callback_errors_are_contained():
    form = SchemaForm(obj({"a": {"type": "string"}}))
    form.on_change(lambda value: 1 / 0)
    control(form, "a").value = "x"  # must not raise
    assert form.value == {"a": "x"}


def test_schema_errors_tolerates_broken_schema():
    assert schema_errors({"type": "no-such-type"}, {}) == []
