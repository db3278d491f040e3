"""The built book in a real browser: the dark half of the visits (dark mode, and printed pages).

The same checks of every page as ``test_browser_book.py`` makes on the laptop and the phone
(``support/book_checks.py``), here in dark mode, and what only dark mode and paper show: no figure or table on a
light panel, nothing cut off on paper. A module of its own so that under pytest-xdist (``make test``: each file is
one unit of work) the two halves of the visits run side by side on two workers. Run alone:
``.venv/bin/python -m pytest tests/test_browser_book_dark.py -q``.
"""

from __future__ import annotations

import pytest

from tests.support.book_checks import EveryPageInEachMode
from tests.support.book_visits import PAGES, PRINT_PAGES, luminance


class TestEveryPageInDarkMode(EveryPageInEachMode):
    modes = ("dark",)


@pytest.mark.parametrize("page", PAGES)
def test_dark_mode_puts_no_figure_or_table_on_a_light_panel(site, page):
    v = site(page, "dark")
    light = [
        f"{p['what']} on {p['backdrop']}" for p in v.audit["panels"] if p["backdrop"] and luminance(p["backdrop"]) > 0.1
    ]
    assert not light, "light panels in dark mode:\n" + "\n".join(light)


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
