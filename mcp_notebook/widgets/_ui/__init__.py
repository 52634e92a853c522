"""The panels' controls: ipywidgets' Python objects, drawn by one anywidget per panel.

Why: a panel built from ipywidgets core controls was hundreds of widget models, and marimo runs
none of them (only anywidgets). Here every control is ipywidgets' own class on a virtual comm
(:mod:`._controls`), so a panel keeps its code, and :class:`Panel` (:mod:`._root`), one anywidget,
draws the whole tree with one ES module shipped in the package (``widgets/panel.js``): one model
per panel in a saved notebook, the same panel in JupyterLab, Notebook 7, VS Code, Colab and marimo.
The messages between the panel and its view are in docs/panel-messages.md.
"""

from ._comm import open_controls
from ._controls import (
    HTML,
    Accordion,
    Audio,
    Box,
    Button,
    Checkbox,
    Combobox,
    DOMWidget,
    Dropdown,
    FloatProgress,
    FloatSlider,
    HBox,
    HTMLMath,
    Image,
    IntProgress,
    IntSlider,
    Label,
    Layout,
    Output,
    Password,
    RadioButtons,
    Select,
    SelectMultiple,
    Tab,
    Text,
    Textarea,
    ToggleButton,
    ToggleButtons,
    VBox,
    Virtual,
    Widget,
)
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
    "Panel",
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
    "open_controls",
]
