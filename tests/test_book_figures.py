"""book_figures: the dark twins of the book's SVG figures."""

from __future__ import annotations

import re

from book_build import book_figures

SVG = (
    '<svg width="100pt" height="50pt" viewBox="0 0 100 50" xmlns="http://www.w3.org/2000/svg">'
    '<rect style="fill: #ffffff"/><path style="stroke: #000000"/><path style="stroke: #b0b0b0"/>'
    '<path style="fill: #0072b2"/><g transform="scale(0.12 -0.12)"><use href="#glyph"/></g>'
    '<image xlink:href="data:image/png;base64,AAAA#ffffffBBBB"/></svg>'
)


def luminance(hex6: str) -> float:
    r, g, b = (int(hex6[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_neutral_colours_turn_around_and_data_colours_stay():
    assert book_figures.dark_colour("ffffff") == "#121212"  # the dark page's background
    assert book_figures.dark_colour("000000") == "#ced6dd"  # the dark theme's text
    assert book_figures.dark_colour("0072B2") == "#0072b2"  # Okabe-Ito blue: data, kept
    greys = [book_figures.dark_colour(f"{v:02x}" * 3) for v in (0, 64, 128, 192, 255)]
    assert [luminance(g) for g in greys] == sorted((luminance(g) for g in greys), reverse=True)


def test_the_dark_twin_keeps_embedded_images_and_colours_the_default_fill():
    dark = book_figures.dark_svg(SVG)
    assert "fill: #121212" in dark and "stroke: #ced6dd" in dark and "fill: #0072b2" in dark
    assert "AAAA#ffffffBBBB" in dark  # a heatmap's pixels are data
    assert re.match(r'<svg fill="#ced6dd"', dark)  # text drawn in SVG's default black
    assert "#ffffff" not in dark.replace("AAAA#ffffffBBBB", "")


def test_a_page_gets_both_images_once(tmp_path):
    images = tmp_path / "_images"
    images.mkdir()
    (images / "fig.svg").write_text(SVG)
    page = tmp_path / "chapters" / "page.html"
    page.parent.mkdir()
    html = '<p><img alt="A plot of x." src="../_images/fig.svg" /></p><img src="../_static/logo.svg" />'
    new, count = book_figures.add_dark_twins(html, page)
    assert count == 1 and (images / "fig.dark.svg").read_text() == book_figures.dark_svg(SVG)
    assert '<img alt="A plot of x." class="only-light" loading="lazy" src="../_images/fig.svg" />' in new
    assert '<img alt="A plot of x." class="only-dark" loading="lazy" src="../_images/fig.dark.svg" />' in new
    assert '<img src="../_static/logo.svg" />' in new  # not a figure of a notebook
    again, count = book_figures.add_dark_twins(new, page)
    assert (again, count) == (new, 0)
