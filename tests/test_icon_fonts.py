"""book_build/icon_fonts.py: which icons the book uses, and fonts cut down to them.

The built book's icons are checked where they are seen (the browser tests of the book find every icon on screen and
look its code point up in the font file the page draws it from, with ``glyph_code_points``); here, the parts on
small inputs and on the theme's own files.
"""

from __future__ import annotations

import io

import pytest
from fontTools.ttLib import TTFont

from book_build import icon_fonts

THEME_CSS = icon_fonts.theme_webfonts().parents[2] / "styles" / "pydata-sphinx-theme.css"


def test_class_code_points_reads_every_name_of_a_rule():
    css = (
        '.fa-a:before{content:"\\f001"}.fa-bars:before,.fa-navicon:before{content:"\\f0c9"}.fa-at:before{content:"\\@"}'
    )
    assert icon_fonts.class_code_points(css) == {
        "fa-a": 0xF001,
        "fa-bars": 0xF0C9,
        "fa-navicon": 0xF0C9,
        "fa-at": ord("@"),
    }


def test_css_code_points_are_the_ones_outside_the_class_list():
    css = (
        '.fa-bars:before{content:"\\f0c9"}:root{--pst-icon-bell:"\\f0f3"}'
        '.admonition-title:after{content:"\ue001"}.plain:before{content:"\\201c"}'
    )
    assert icon_fonts.css_code_points(css) == {0xF0F3, 0xE001}  # not U+F0C9 (a class), not U+201C (not an icon)


def test_the_theme_style_sheet_maps_the_header_icons():
    names = icon_fonts.class_code_points(THEME_CSS.read_text(encoding="utf-8"))
    assert len(names) > 1000  # Font Awesome's whole class list
    assert names["fa-bars"] == 0xF0C9 and names["fa-magnifying-glass"] == 0xF002 and names["fa-moon"] == 0xF186


def test_code_points_used_finds_classes_in_pages_and_scripts_and_icons_in_style_sheets(tmp_path):
    (tmp_path / "_static" / "styles").mkdir(parents=True)
    (tmp_path / "_static" / "styles" / "theme.css").write_text(
        '.fa-bars:before{content:"\\f0c9"}.fa-moon:before{content:"\\f186"}.fa-sun:before{content:"\\f185"}'
        ':root{--pst-icon-bell:"\\f0f3"}'
    )
    (tmp_path / "_static" / "switch.js").write_text("button.className = 'fa-solid fa-sun';")
    (tmp_path / "_static" / "fontawesome.js").write_text("'fa-moon'")  # the build removes it: not counted
    (tmp_path / "page.html").write_text('<i class="fa-solid fa-bars"></i>')
    assert icon_fonts.code_points_used(tmp_path) == {0xF0C9, 0xF185, 0xF0F3}


def test_the_icons_of_our_download_menu_entries_are_kept_though_they_arrive_after_the_cut(tmp_path):
    from book_build import download_menu

    (tmp_path / "_static").mkdir()
    (tmp_path / "_static" / "theme.css").write_text(THEME_CSS.read_text(encoding="utf-8"))
    (tmp_path / "page.html").write_text("<p>a page whose menu gets its entries later</p>")
    names = icon_fonts.class_code_points(THEME_CSS.read_text(encoding="utf-8"))
    wanted = {names[c] for entry in (download_menu.KIT, download_menu.PDF) for c in entry["icon"].split() if c in names}
    assert len(wanted) == 2  # the kit's file-zipper and the PDF's book, both Font Awesome icons
    assert wanted <= icon_fonts.code_points_used(tmp_path)


@pytest.mark.parametrize("name", icon_fonts.FONTS)
@pytest.mark.parametrize("suffix, flavor", [(".woff2", "woff2"), (".ttf", None)])
def test_subset_keeps_exactly_the_glyphs_asked_for_that_the_font_has(name, suffix, flavor):
    original = (icon_fonts.theme_webfonts() / (name + suffix)).read_bytes()
    whole = set(TTFont(io.BytesIO(original)).getBestCmap())
    asked = {0xF0C9, 0xF002, 0xF09B, 0xF15B, 0x10FFFF}  # solid, solid, brands (GitHub), regular, none
    cut = icon_fonts.subset(original, asked, flavor)
    font = TTFont(io.BytesIO(cut))
    assert font.flavor == flavor
    assert set(font.getBestCmap()) == asked & whole
    assert len(cut) < len(original) / 10


def test_glyph_code_points_are_the_character_map_of_any_flavour():
    original = (icon_fonts.theme_webfonts() / "fa-solid-900.woff2").read_bytes()
    assert 0xF0C9 in icon_fonts.glyph_code_points(original)
    for flavor in ("woff2", None):
        assert icon_fonts.glyph_code_points(icon_fonts.subset(original, {0xF0C9, 0xF186}, flavor)) == {0xF0C9, 0xF186}
