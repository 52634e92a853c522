"""Frames drawn readable (issue #38, notebook/_frame_views.py): the notebook HTML of ``%mcp servers``
keeps a row on one line, ``map_tool``'s error column shows the whole reason, every cell stays
escaped, and the frame is otherwise pandas' own (derived frames and pickles are plain frames)."""

from __future__ import annotations

import pickle

import pandas as pd

from mcp_notebook.notebook._frame_views import readable_frame

REASON = "arguments for tool 'sales_records' do not match: region must be one of <b>north</b>"


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "result": ["r" * 80, pd.NA],
            "error": pd.array([pd.NA, REASON], dtype="string"),
        }
    )


def test_a_whole_column_shows_its_text_whole_escaped_and_the_others_stay_cut() -> None:
    html = readable_frame(_frame(), whole=["error"])._repr_html_()
    assert html is not None
    assert "region must be one of &lt;b&gt;north&lt;/b&gt;" in html  # whole, and escaped
    assert "<b>" not in html
    assert "r" * 80 not in html  # pandas' own cut (50 characters) for the others
    assert "r" * 47 + "..." in html
    assert "region must be one of" not in (_frame()._repr_html_() or "")  # what pandas alone shows


def test_one_line_keeps_every_cell_on_one_line() -> None:
    html = readable_frame(_frame(), one_line=True)._repr_html_()
    assert html is not None
    assert "white-space: nowrap" in html


def test_the_data_is_a_plain_frame_once_derived_or_pickled() -> None:
    shown = readable_frame(_frame(), whole=["error"])
    assert isinstance(shown, pd.DataFrame)
    assert shown.equals(_frame())
    assert type(shown[["error"]]) is pd.DataFrame
    back = pickle.loads(pickle.dumps(shown))
    assert type(back) is pd.DataFrame
    assert back.equals(_frame())
