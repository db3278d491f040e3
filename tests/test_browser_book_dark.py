"""The built book in a real browser: the dark half of the visits (dark mode, and printed pages).

The same checks of every page as ``test_browser_book.py`` makes on the laptop and the phone
(``support/book_checks.py``), here in dark mode, and what only dark mode and paper show: no figure or table on a
light panel, no figure that shows mostly light (its pixels as drawn on screen), nothing cut off on paper. A module of
its own so that under pytest-xdist (``make test``: each file is one unit of work) the two halves of the visits run side
by side on two workers. Run alone: ``.venv/bin/python -m pytest tests/test_browser_book_dark.py -q``.
"""

from __future__ import annotations

import base64
import io

import pytest

from book_build.book_figures import dark_svg
from book_build.book_visits import (
    FIGURE_SHADES,
    MAX_LIGHT_NEUTRAL,
    PAGES,
    PRINT_PAGES,
    READ_IMAGES,
    SHADE_ARGS,
    light_share,
)
from tests.support.book_checks import EveryPageInEachMode
from tests.support.book_visits import dark_twin_failures, luminance


class TestEveryPageInDarkMode(EveryPageInEachMode):
    modes = ("dark",)


@pytest.mark.parametrize("page", PAGES)
def test_dark_mode_puts_no_figure_or_table_on_a_light_panel(site, page):
    v = site(page, "dark")
    light = [
        f"{p['what']} on {p['backdrop']}" for p in v.audit["panels"] if p["backdrop"] and luminance(p["backdrop"]) > 0.1
    ]
    assert not light, "light panels in dark mode:\n" + "\n".join(light)


@pytest.mark.parametrize("page", PAGES)
def test_dark_mode_shows_no_figure_mostly_light(site, page):
    """Every figure shown in dark mode, as its pixels come out on screen: not mostly white or light grey (a dark
    twin keeps an embedded image as drawn: an image of mostly white is a white square on the dark page)."""
    v = site(page, "dark")
    assert len(v.shades) == len(v.audit["figures"]), f"{len(v.shades)} figures measured of {len(v.audit['figures'])}"
    failures = dark_twin_failures(v.shades)
    assert not failures, "\n".join(failures)


def test_the_figures_of_the_book_are_measured_in_dark_mode(site):
    """The check above looks at the book's figures: every SVG one shown in dark mode is its dark twin."""
    shades = [f for page in PAGES for f in site(page, "dark").shades]
    assert shades, "no figure measured in dark mode"
    svg = [f["src"] for f in shades if f["src"].endswith(".svg")]
    assert svg and all(src.endswith(".dark.svg") for src in svg), svg


def _planted_figures() -> dict[str, str]:
    """Figures drawn in the course's style as the book would show them in dark mode: ``data:`` URLs of their dark
    twins (``dark_svg``, as the build makes them), or of the image itself where it has none (a PNG)."""
    import matplotlib as mpl
    import matplotlib.pyplot as plt
    import numpy as np

    import posenc
    from posenc_course.plotting import apply_style

    def drawn(fig, kind: str = "svg") -> str:
        out = io.BytesIO()
        fig.savefig(out, format=kind, bbox_inches="tight")
        plt.close(fig)
        if kind == "png":  # no dark twin: shown as drawn
            return "data:image/png;base64," + base64.b64encode(out.getvalue()).decode()
        twin = dark_svg(out.getvalue().decode())
        return "data:image/svg+xml;base64," + base64.b64encode(twin.encode()).decode()

    figures = {}
    with mpl.rc_context():
        apply_style()
        # chapter 7's permutation matrix as it once was: imshow of a 0/1 matrix in greys (a white square in dark mode)
        P = np.zeros((16, 16))
        P[posenc.layout_permutation(16), np.arange(16)] = 1
        fig, ax = plt.subplots(figsize=(4.2, 4.2))
        ax.imshow(P, cmap="Greys", interpolation="nearest")
        ax.grid(False)
        figures["imshow of a 0/1 matrix in greys"] = drawn(fig)
        # a heatmap whose values are mostly high: mostly light, and yellow
        fig, ax = plt.subplots(figsize=(4.2, 4.2))
        ax.imshow(np.random.default_rng(0).random((16, 16)), cmap="viridis", vmin=-3, vmax=1)
        ax.grid(False)
        figures["viridis heatmap of high values"] = drawn(fig)
        for kind in ("svg", "png"):
            fig, ax = plt.subplots()
            ax.plot(np.sin(np.linspace(0, 6, 50)))
            figures[f"line plot, {kind}"] = drawn(fig, kind)  # as a PNG: on its white background
    return figures


def test_the_dark_mode_check_fails_a_figure_that_shows_light(chromium):
    """Planted figures, measured as the pages' figures are: those that show light fail, a light heatmap does not."""
    figures = _planted_figures()
    images = "".join(f'<img alt="{name}" src="{url}">' for name, url in figures.items())
    context = chromium.new_context(viewport={"width": 1280, "height": 900}, color_scheme="dark")
    try:
        tab = context.new_page()
        tab.set_content(f'<body style="background: #121212"><article>{images}</article></body>')
        tab.evaluate(READ_IMAGES)
        shades = dict(zip(figures, tab.evaluate(FIGURE_SHADES, SHADE_ARGS), strict=True))
    finally:
        context.close()
    failed = {name for name, f in shades.items() if dark_twin_failures([f])}
    assert failed == {"imshow of a 0/1 matrix in greys", "line plot, png"}, {
        name: light_share(f["hist"]) for name, f in shades.items()
    }
    # the heatmap is light over more than the bound: it passes as its light pixels are coloured
    heatmap = shades["viridis heatmap of high values"]["hist"]
    light = sum(map(sum, heatmap[len(heatmap) // 2 :])) / sum(map(sum, heatmap))
    assert light > MAX_LIGHT_NEUTRAL > light_share(heatmap), light


@pytest.mark.parametrize("page", PRINT_PAGES)
def test_printed_page_cuts_nothing_and_quizzes_carry_answers(site, page):
    """On paper nothing scrolls: code, outputs, tables and math wrap or fit; every quiz prints its answers."""
    v = site(page, "print")
    cut = [
        f"{c['kind']}: {c['what']} ({c['content']} px in {c['width']} px)"
        for c in v.audit["clipped"] + v.audit["scrolled"]
    ]
    assert not cut, "cut off on paper:\n" + "\n".join(cut)
    assert v.audit["quizzes"]["answers"] == v.audit["quizzes"]["count"], v.audit["quizzes"]
