"""ipywidgets' controls, made virtual: the same Python objects, drawn by one panel's anywidget.

Each class here is the ipywidgets control of the same name with :class:`Virtual` mixed in before
it, and a virtual layout and style in place of ipywidgets' own (whose defaults would open real
comms). Panels import this package as ``W`` and keep their code: ``W.Button(description=...)``,
``on_click``, ``observe(..., "value")``, ``Output.append_display_data`` all behave as in ipywidgets,
because they are ipywidgets. Only where the state goes differs (see :mod:`._comm`).

Displayed on its own (``display(box)``, a cell's last value, marimo's output), a control shows the
:class:`~._root.Panel` made for it; inside another control's children it is drawn by that panel.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import ipywidgets as W
from ipywidgets import DOMWidget, Widget  # for annotations and isinstance: every control is one
from ipywidgets.widgets import widget_bool, widget_description, widget_int, widget_selection, widget_string
from ipywidgets.widgets.trait_types import InstanceDict
from ipywidgets.widgets.widget import widget_serialization
from traitlets import HasTraits, observe

from ._comm import VirtualComm

if TYPE_CHECKING:
    from ._root import Panel

__all__ = [
    "HTML",
    "Accordion",
    "Audio",
    "Box",
    "Button",
    "Checkbox",
    "Combobox",
    "DOMWidget",
    "Dropdown",
    "FloatProgress",
    "FloatSlider",
    "HBox",
    "HTMLMath",
    "Image",
    "IntProgress",
    "IntSlider",
    "Label",
    "Layout",
    "Output",
    "Password",
    "RadioButtons",
    "Select",
    "SelectMultiple",
    "Tab",
    "Text",
    "Textarea",
    "ToggleButton",
    "ToggleButtons",
    "VBox",
    "Virtual",
    "Widget",
]


_panels_lock = threading.Lock()


def _refs(value: Any) -> Any:
    """ipywidgets' references to controls (``IPY_MODEL_<id>``), by their ids inside the panel."""
    if isinstance(value, Virtual):
        return "IPY_MODEL_" + value.comm.comm_id if value.comm is not None else None
    if isinstance(value, Widget):
        return "IPY_MODEL_" + value.model_id
    if isinstance(value, list | tuple):
        return [_refs(item) for item in value]
    if isinstance(value, dict):
        return {key: _refs(item) for key, item in value.items()}
    return value


def _linked_names(cls: type) -> frozenset[str]:
    """The synced traits of ``cls`` that hold controls (children, layout, style...)."""
    found = _linked.get(cls)
    if found is None:
        to_json = widget_serialization["to_json"]
        found = frozenset(
            name
            for name, trait in cls.class_traits(sync=True).items()  # type: ignore[attr-defined]
            if trait.metadata.get("to_json") is to_json
        )
        _linked[cls] = found
    return found


_linked: dict[type, frozenset[str]] = {}


def _keep_hosts_away() -> None:
    """Make ipywidgets' construction hook pass virtual controls by.

    Why: a host may hook every ipywidgets control as it is made (``Widget.on_widget_constructed``)
    and give it a comm of its own; marimo does, making each control a model of its page, which is
    what a panel exists to avoid (and what it would then draw twice). The hook is wrapped once, here,
    when the first control is made after a host set it; every other control still reaches it.
    """
    hook = Widget._widget_construction_callback
    if hook is None or getattr(hook, "passes_virtual_controls", False):
        return

    def constructed(widget: Any) -> None:
        if not isinstance(widget, Virtual):
            hook(widget)

    constructed.passes_virtual_controls = True  # type: ignore[attr-defined]
    Widget._widget_construction_callback = constructed


class Virtual(HasTraits):
    """Mixed in before an ipywidgets class: a :class:`VirtualComm` instead of a kernel comm.

    Inside a panel a control is known by its comm's id. Outside, to a real ipywidgets container
    (``ipywidgets.HBox([explorer, log])``) or anything else that asks for ``model_id``, it is its
    panel (an anywidget), which such a container can show.
    """

    comm: Any
    keys: Any

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        _keep_hosts_away()
        super().__init__(*args, **kwargs)

    def open(self) -> None:
        if self.comm is None:
            comm = VirtualComm()
            comm.on_msg(self._handle_msg)  # type: ignore[attr-defined]
            self._model_id = comm.comm_id
            self.comm = comm
            # The controls it holds now, as ipywidgets' own open (which sends its whole state)
            # makes them: a default layout or style made later, when a panel first follows the
            # tree to it, was a control born after the panel was built (a log's chunks: 17 layouts
            # and 17 styles during a log flood, issue #38's benchmark), not a flat count.
            for name in _linked_names(type(self)):
                getattr(self, name)

    @observe("comm")
    def _comm_changed(self, change: Any) -> None:
        """Replaces ipywidgets' handler, which registers a live model of the front end: a virtual
        control is none (and ``model_id`` would make it a panel)."""

    @property
    def model_id(self) -> str:
        return str(self.as_panel().model_id)

    def get_state(self, key: Any = None, drop_defaults: bool = False) -> dict[str, Any]:
        """ipywidgets' state, with the controls it holds named by their ids inside the panel."""
        keys = list(self.keys) if key is None else [key] if isinstance(key, str) else list(key)
        linked = _linked_names(type(self))
        plain = [name for name in keys if name not in linked]
        state: dict[str, Any] = super().get_state(plain, drop_defaults) if plain else {}  # type: ignore[misc]
        for name in keys:
            if name in linked:
                state[name] = _refs(getattr(self, name))
        return state

    def close(self) -> None:
        comm, self.comm = self.comm, None
        if comm is not None:
            comm.close()
            self._repr_mimebundle_ = None  # type: ignore[assignment]  # ipywidgets: a closed one shows its repr

    def as_panel(self) -> Panel:
        """The anywidget that shows this control as the top of its tree (made once, on first use)."""
        from ._root import Panel

        with _panels_lock:
            panel: Panel | None = self.__dict__.get("_mcpnb_panel")
            if panel is None or panel.comm is None:
                panel = Panel(self)
                self.__dict__["_mcpnb_panel"] = panel
            return panel

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """The panel's bundle, as a dict (ipywidgets' shape, which callers of ours index)."""
        if self.comm is None:
            return None
        bundle = self.as_panel()._repr_mimebundle_(**kwargs)
        return bundle[0] if isinstance(bundle, tuple) else bundle

    def _display_(self) -> Any:
        """marimo shows what this returns: the panel, an anywidget it runs."""
        return self.as_panel()


def _layout() -> Any:
    return InstanceDict(Layout).tag(sync=True, **widget_serialization)


def _style(klass: type) -> Any:
    return InstanceDict(klass).tag(sync=True, **widget_serialization)


class Layout(Virtual, W.Layout):
    pass


class HTMLStyle(Virtual, widget_string.HTMLStyle):
    pass


class HTMLMathStyle(Virtual, widget_string.HTMLMathStyle):
    pass


class LabelStyle(Virtual, widget_string.LabelStyle):
    pass


class ButtonStyle(Virtual, W.ButtonStyle):
    pass


class ToggleButtonStyle(Virtual, widget_bool.ToggleButtonStyle):
    pass


class ToggleButtonsStyle(Virtual, widget_selection.ToggleButtonsStyle):
    pass


class TextStyle(Virtual, widget_string.TextStyle):
    pass


class CheckboxStyle(Virtual, widget_bool.CheckboxStyle):
    pass


class DescriptionStyle(Virtual, widget_description.DescriptionStyle):
    pass


class SliderStyle(Virtual, widget_int.SliderStyle):
    pass


class ProgressStyle(Virtual, widget_int.ProgressStyle):
    pass


class Box(Virtual, W.Box):
    layout = _layout()


class VBox(Virtual, W.VBox):
    layout = _layout()


class HBox(Virtual, W.HBox):
    layout = _layout()


class Tab(Virtual, W.Tab):
    layout = _layout()


class Accordion(Virtual, W.Accordion):
    layout = _layout()


class HTML(Virtual, W.HTML):
    layout = _layout()
    style = _style(HTMLStyle)


class HTMLMath(Virtual, W.HTMLMath):
    layout = _layout()
    style = _style(HTMLMathStyle)


class Label(Virtual, W.Label):
    layout = _layout()
    style = _style(LabelStyle)


class Button(Virtual, W.Button):
    layout = _layout()
    style = _style(ButtonStyle)


class ToggleButton(Virtual, W.ToggleButton):
    layout = _layout()
    style = _style(ToggleButtonStyle)


class Text(Virtual, W.Text):
    layout = _layout()
    style = _style(TextStyle)


class Password(Virtual, W.Password):
    layout = _layout()
    style = _style(TextStyle)


class Textarea(Virtual, W.Textarea):
    layout = _layout()
    style = _style(TextStyle)


class Combobox(Virtual, W.Combobox):
    layout = _layout()
    style = _style(TextStyle)


class Checkbox(Virtual, W.Checkbox):
    layout = _layout()
    style = _style(CheckboxStyle)


class Dropdown(Virtual, W.Dropdown):
    layout = _layout()
    style = _style(DescriptionStyle)


class Select(Virtual, W.Select):
    layout = _layout()
    style = _style(DescriptionStyle)


class SelectMultiple(Virtual, W.SelectMultiple):
    layout = _layout()
    style = _style(DescriptionStyle)


class RadioButtons(Virtual, W.RadioButtons):
    layout = _layout()
    style = _style(DescriptionStyle)


class ToggleButtons(Virtual, W.ToggleButtons):
    layout = _layout()
    style = _style(ToggleButtonsStyle)


class IntSlider(Virtual, W.IntSlider):
    layout = _layout()
    style = _style(SliderStyle)


class FloatSlider(Virtual, W.FloatSlider):
    layout = _layout()
    style = _style(SliderStyle)


class IntProgress(Virtual, W.IntProgress):
    layout = _layout()
    style = _style(ProgressStyle)


class FloatProgress(Virtual, W.FloatProgress):
    layout = _layout()
    style = _style(ProgressStyle)


class Image(Virtual, W.Image):
    layout = _layout()


class Audio(Virtual, W.Audio):
    layout = _layout()


class Output(Virtual, W.Output):
    """``append_display_data``, ``append_stdout`` and ``clear_output`` work; ``with output:`` does
    not capture (that needs the front end to follow a cell's messages), and no panel uses it."""

    layout = _layout()
