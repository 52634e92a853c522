"""Long lists stay usable (issue #35): the explorer, the resource browser and the prompt panel show a
window of a server's list (a search box and paging over the rest), reusing their widgets.

A real stdio server of ours (``tests/servers/many_server.py``) lists 20,000 tools, resources and
prompts. Before, the explorer drew every tool (60,000 widget models, 11.7 s) and the choosers held
every item. Nothing here asserts a time: the bound is the number of live widget models, which must
not grow with the list nor as one pages or searches (DESIGN.md: views reuse their row widgets).
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("ipywidgets")

from ipywidgets.widgets import widget as _registry

import mcp_notebook
from mcp_notebook.widgets._window import PAGE_SIZE

from .conftest import python_server
from .widget_helpers import find, wait_for

pytestmark = pytest.mark.usefixtures("no_leaked_processes")

N = 20_000
#: Widget models a panel may make, whatever the list's length: a window of rows and its controls.
MODELS = 4 * PAGE_SIZE + 100


def _live() -> int:
    """Live widget models (ipywidgets' registry, what ``Widget.widgets`` reads)."""
    return len(_registry._instances)


@pytest.fixture(scope="module")
def session() -> Any:
    argv = python_server("many_server.py", str(N), str(N), str(N), str(N))
    with mcp_notebook.connect(argv, show_progress=False, dialogs=False) as s:
        model = s.model
        wait_for(
            lambda: (
                (len(model.tools), len(model.resources), len(model.prompts), len(model.resource_templates))
                == (N, N, N, N)
            ),
            60,
            "the four lists of 20,000",
        )
        yield s


def _click(panel: Any, css: str) -> None:
    (button,) = find(panel, css)
    button.click()


def test_the_explorer_draws_a_window_of_twenty_thousand_tools_and_pages_with_the_same_widgets(
    session: Any,
) -> None:
    before = _live()
    ex = session.explorer()
    try:
        made = _live() - before
        assert made <= MODELS, f"{made} widget models for {N:,} tools"
        assert ex.tool_names == [f"tool_{i:06d}" for i in range(PAGE_SIZE)]
        assert ex.tools_window.label.value == f"1–{PAGE_SIZE} of 20,000 tools"

        _click(ex, "mcpnb-tool-window-next")
        assert ex.tool_names[0] == f"tool_{PAGE_SIZE:06d}"
        assert ex.tools_window.label.value == f"{PAGE_SIZE + 1}–{2 * PAGE_SIZE} of 20,000 tools"
        # a row on the second page calls up its own tool
        (row,) = [b for b in find(ex, "mcpnb-tool") if b.description == f"tool_{PAGE_SIZE + 3:06d}"]
        row.click()
        assert ex.selected is not None
        assert ex.selected.name == f"tool_{PAGE_SIZE + 3:06d}"
        assert "mcpnb-tool-selected" in row._dom_classes
        settled = _live()  # the list's rows, and the form of the tool chosen
        _click(ex, "mcpnb-tool-window-previous")
        assert ex.tool_names[0] == "tool_000000"

        ex.search.value = "tool_012345"
        assert ex.tool_names == ["tool_012345"]
        ex.search.value = "ODD number"  # every word, any case, in the name or the description
        assert ex.tools_window.label.value == f"1–{PAGE_SIZE} of 10,000 matching"
        assert ex.tool_names[:2] == ["tool_000001", "tool_000003"]
        for _ in range(3):
            _click(ex, "mcpnb-tool-window-next")
        assert ex.tool_names[0] == f"tool_{6 * PAGE_SIZE + 1:06d}"
        ex.search.value = "no such tool"
        assert ex.tool_names == []
        assert ex.tools_window.label.value == "no matching tools"
        ex.search.value = ""
        assert len(ex.tool_names) == PAGE_SIZE
        assert _live() == settled, "paging and searching made new widget models"

        # a tool chosen from code shows on its page
        ex.select("tool_019999")
        assert ex.tool_names[-1] == "tool_019999"
        assert ex.tools_window.label.value == "19,951–20,000 of 20,000 tools"
        assert "1–50" not in ex.snapshot_html()
        assert "tool_019999" in ex.snapshot_html()
        assert ex.snapshot_html().count("<tr>") <= PAGE_SIZE + 1
    finally:
        ex.close()


def test_the_resource_browser_shows_a_window_of_twenty_thousand_resources(session: Any) -> None:
    before = _live()
    panel = session.resources_widget()
    try:
        made = _live() - before
        assert made <= MODELS
        assert len(panel.resource_list.options) == PAGE_SIZE
        assert panel.table.value.count("<tr>") <= PAGE_SIZE + 1  # the header and the window
        assert panel.resources_window.label.value == f"1–{PAGE_SIZE} of 20,000 resources"
        _click(panel, "mcpnb-resource-window-next")
        assert panel.resource_list.options[0][1] == f"mem://r/{PAGE_SIZE}"
        assert f"mem://r/{PAGE_SIZE}<" in panel.table.value
        panel.resources_window.search.value = "r/12345"
        assert [uri for _, uri in panel.resource_list.options] == ["mem://r/12345"]
        panel.select("mem://r/19000")  # hidden by the search: cleared, and paged to
        assert panel.resource_list.value == "mem://r/19000"
        assert panel.resources_window.search.value == ""
        contents = panel.read(panel.resource_list.value)
        assert contents is not None
        assert contents.text == "read mem://r/19000"
        assert _live() - before <= made + 10  # the read view only

        # the templates too: a window of them, each chosen one's fields made and closed
        assert len(panel.template_list.options) == PAGE_SIZE
        assert panel.templates_window.label.value == f"1–{PAGE_SIZE} of 20,000 templates"
        settled = _live()
        _click(panel, "mcpnb-template-window-next")
        assert panel.template_list.value == f"mem://t/{PAGE_SIZE}/{{id}}"
        panel.select_template("mem://t/19999/{id}")
        assert [uri for _, uri in panel.template_list.options][-1] == "mem://t/19999/{id}"
        panel.fields["id"].value = "x"
        assert panel.template_uri.value == "mem://t/19999/x"
        panel.templates_window.search.value = "tpl_01234"
        assert len(panel.template_list.options) == 10
        assert _live() == settled, "paging the templates made new widget models"
    finally:
        panel.close()


def test_the_prompt_panel_shows_a_window_of_twenty_thousand_prompts(session: Any) -> None:
    before = _live()
    panel = session.prompts_widget()
    try:
        made = _live() - before
        assert made <= MODELS
        assert [name for _, name in panel.prompt_list.options] == [
            f"prompt_{i:06d}" for i in range(PAGE_SIZE)
        ]
        _click(panel, "mcpnb-prompt-window-next")
        assert panel.prompt_list.value == f"prompt_{PAGE_SIZE:06d}"
        panel.prompts_window.search.value = "number 17777."
        assert [name for _, name in panel.prompt_list.options] == ["prompt_017777"]
        panel.select("prompt_019998")
        assert panel.prompt_list.value == "prompt_019998"
        assert len(panel.prompt_list.options) <= PAGE_SIZE
        assert _live() - before == made
    finally:
        panel.close()
