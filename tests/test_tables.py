"""tables.Table: a real HTML table (caption, header, right-aligned numbers, escaped
cells), an aligned plain-text fallback, and clear errors for bad input."""

import re

import numpy as np
import pytest

from posenc_course.tables import Table, show


def test_html_has_caption_header_and_one_row_per_row():
    t = Table(
        [(0, 1.0, "fast"), (255, 1.0366e-4, "slow")],
        ["i", "omega_i", "kind"],
        caption="Frequencies, d = 512",
        formats={"omega_i": ".4e"},
    )
    text = t._repr_html_()
    assert text.startswith('<div class="pe-table-wrap" style="overflow-x:auto;max-width:100%">')
    assert text.count('<table class="pe-table"') == 1 and text.endswith("</table></div>")
    assert re.search(r"<caption[^>]*>Frequencies, d = 512</caption>", text)
    assert text.index("<caption") < text.index("<thead>") < text.index("<tbody>")
    head = re.search(r"<thead>(.*)</thead>", text).group(1)
    assert re.findall(r"<th [^>]*>([^<]*)</th>", head) == ["i", "omega_i", "kind"]
    rows = re.findall(r"<tr>(.*?)</tr>", re.search(r"<tbody>(.*)</tbody>", text, re.S).group(1))
    assert len(rows) == 2
    cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td [^>]*>(.*?)</td>", rows[1])]
    assert cells == ["255", "1.0366e-04", "slow"]


def test_numbers_do_not_break_inside_but_ranges_break_at_their_space():
    text = Table(
        [(1.1e-14, "0.155 (0.148–0.167)", "a b")], ["x", "range", "words"], formats={0: ".1e"}, align="rrl"
    )._repr_html_()
    nowrap = '<span style="white-space:nowrap">'
    assert f"{nowrap}1.1e-14</span>" in text
    assert f"{nowrap}0.155</span> {nowrap}(0.148–0.167)</span>" in text
    assert ">a b</td>" in text  # text columns wrap freely


def test_numbers_are_right_aligned_and_text_left_aligned():
    t = Table([(1, "a", np.float32(0.5)), (2, "b", None)], ["n", "name", "x"])
    assert t.align == "rlr"
    cells = re.findall(r'<td style="[^"]*text-align:(\w+)">', t._repr_html_())
    assert cells[:3] == ["right", "left", "right"]
    assert Table([(1, "a")], ["n", "s"], align="ll").align == "ll"


def test_cells_and_caption_are_escaped():
    t = Table([("<script>alert(1)</script>", "a & b")], ["<b>x</b>", "y"], caption="p < q")
    text = t._repr_html_()
    assert "<script>" not in text and "<b>x</b>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text and "a &amp; b" in text
    assert "&lt;b&gt;x&lt;/b&gt;" in text and "p &lt; q" in text


def test_default_and_explicit_formats():
    t = Table([(16777216, 2 / 3, None, True)], ["n", "x", "empty", "flag"])
    assert t.text_rows() == [["16,777,216", "0.6667", "", "True"]]
    assert t.align == "rrll"  # booleans are not numbers; an all-None column is text
    t = Table([(3, 0.001234)], ["n", "x"], formats=[lambda v: f"#{v}", ".1e"])
    assert t.text_rows() == [["#3", "1.2e-03"]]
    assert Table([(1, 2.0)], ["a", "b"], formats={1: ".2f"}).text_rows() == [["1", "2.00"]]


def test_plain_text_is_aligned_with_caption_and_rule():
    t = Table([(1, 1.5), (1000, 22.25)], ["n", "value"], caption="Two rows", formats={"value": ".2f"})
    lines = repr(t).splitlines()
    assert lines == ["Two rows", "    n  value", "-----  -----", "    1   1.50", "1,000  22.25"]
    assert str(t) == repr(t)


@pytest.mark.parametrize(
    "rows, headers, kwargs, message",
    [
        ([(1, 2), (3,)], ["a", "b"], {}, r"rows\[1\] has 1 cells but there are 2 headers"),
        ([(1, 2)], [], {}, "headers must be a non-empty list"),
        ([(1, 2)], None, {}, "headers must be a non-empty list"),
        ([(1, 2)], "ab", {}, "headers must be a non-empty list"),
        (5, ["a"], {}, "rows must be a list of rows"),
        ([(1, 2)], ["a", "b"], {"formats": {"c": ".2f"}}, "formats names an unknown column 'c'"),
        ([(1, 2)], ["a", "b"], {"formats": [".2f"]}, "formats must be a mapping or have one entry per column"),
        ([(1, 2)], ["a", "b"], {"align": "lx"}, "align must be one 'l' or 'r' per column"),
    ],
)
def test_bad_input_names_the_argument(rows, headers, kwargs, message):
    with pytest.raises(ValueError, match=message):
        Table(rows, headers, **kwargs)


def test_empty_table_and_show(capsys):
    assert "<tbody>\n</tbody>" in Table([], ["a"])._repr_html_()
    t = show([(1, 2)], ["a", "b"], caption="shown")
    assert isinstance(t, Table) and t.caption == "shown"
    assert "shown" in capsys.readouterr().out  # outside a notebook, display() prints the text form


# --------------------------------------------------------------------------
# In a browser (skipped where no Chromium is installed)
# --------------------------------------------------------------------------


def test_a_wide_table_stays_inside_a_phone_column(chromium):
    wide = Table(
        [("float64", 53, 1.1e-16, 9007199254740992, 1.8e308)] * 3,
        ["dtype", "bits", "unit roundoff u", "all integers up to", "largest value"],
    )
    page = chromium.new_page(viewport={"width": 390, "height": 800})
    page.set_content(
        '<!doctype html><html><body style="margin:16px">'
        f'<div id="col" style="width:358px;overflow:hidden">{wide._repr_html_()}</div></body></html>'
    )
    col = page.locator("#col").bounding_box()
    wrap = page.locator(".pe-table-wrap").bounding_box()
    assert wrap["x"] >= col["x"] and wrap["x"] + wrap["width"] <= col["x"] + col["width"] + 0.5
    # whatever does not fit scrolls inside the wrapper instead of being cut off by the column
    fits = page.evaluate(
        "(() => { const w = document.querySelector('.pe-table-wrap');"
        " return w.scrollWidth <= w.clientWidth || getComputedStyle(w).overflowX === 'auto'; })()"
    )
    assert fits
    font_size = page.evaluate("getComputedStyle(document.querySelector('table.pe-table')).fontSize")
    assert font_size == "12.8px"  # 0.8em of 16px
    page.close()
