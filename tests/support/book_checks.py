"""The checks every page of the book gets in each mode of a visit group: shared by the browser test modules of the
book, one per group (test_browser_book.py: laptop and phone; test_browser_book_dark.py: dark).

A module subclasses :class:`EveryPageInEachMode` as a ``Test*`` class and sets ``modes`` to its group's screen
modes; the class's ``pytest_generate_tests`` gives each test those modes (``mode``), those of them axe-core runs
in (``axe_mode``). The
visits come from the ``site`` fixture (support/book_site.py).
"""

from __future__ import annotations

import pytest

from book_build.book_visits import AXE_MODES, EXPLORER_PAGES, MODES, PAGES
from tests.support.book_visits import (
    baseline_failures,
    describe,
    figure_failures,
    icon_failures,
    layout_failures,
    math_failures,
    rgb,
)
from tests.support.browser import explorer_layout_failures

ICON_FONT_BUDGET = 10_000  # bytes of icon fonts a page may load (the theme's solid font alone was 156 KB)


class EveryPageInEachMode:
    """The checks of every page, once in each of ``modes`` (names of ``MODES``)."""

    modes: tuple[str, ...] = ()

    def pytest_generate_tests(self, metafunc):
        if "mode" in metafunc.fixturenames:
            metafunc.parametrize("mode", self.modes)
        if "axe_mode" in metafunc.fixturenames:
            metafunc.parametrize("axe_mode", [m for m in self.modes if m in AXE_MODES])

    @pytest.mark.parametrize("page", PAGES)
    def test_page_makes_no_external_request_and_no_error(self, site, page, mode):
        v = site(page, mode)
        assert not any(v.problems.values()), describe(v.problems)

    @pytest.mark.parametrize("page", PAGES)
    def test_page_math_is_rendered(self, site, page, mode):
        v = site(page, mode)
        failures = math_failures(v) + baseline_failures(v)
        assert not failures, "\n".join(failures)

    @pytest.mark.parametrize("page", PAGES)
    def test_page_content_is_never_cut_off_and_never_pans(self, site, page, mode):
        """Everything wider than its box scrolls within that box; the page itself never scrolls sideways."""
        v = site(page, mode)
        failures = layout_failures(v)
        assert not failures, "\n".join(failures)

    @pytest.mark.parametrize("page", PAGES)
    def test_math_glyphs_sit_inside_the_boxes_that_clip_them(self, site, page, mode):
        """No glyph of a formula is cut at the top or bottom of a box that scrolls (the transpose sign's crossbar)."""
        v = site(page, mode)
        assert not v.audit["glyphsCut"], "\n".join(v.audit["glyphsCut"])

    @pytest.mark.parametrize("page", PAGES)
    def test_boxes_that_scroll_sideways_show_that_they_do(self, site, page, mode):
        """Every box whose content reaches beyond its edge fades out at that edge (book.js, book.css)."""
        v = site(page, mode)
        assert not v.audit["uncued"], "scrolls with no cue:\n" + "\n".join(v.audit["uncued"])

    @pytest.mark.parametrize("page", PAGES)
    def test_no_line_starts_with_the_punctuation_after_a_formula(self, site, page, mode):
        v = site(page, mode)
        assert not v.audit["punctuationAlone"], "\n".join(v.audit["punctuationAlone"])

    @pytest.mark.parametrize("page", PAGES)
    def test_no_line_ends_with_the_bracket_before_a_formula(self, site, page, mode):
        """ "of $r$ ($0 \\le b, r < 64$)" once left its "(" at the end of a line on a phone (appendix A)."""
        v = site(page, mode)
        assert not v.audit["bracketAlone"], "\n".join(v.audit["bracketAlone"])

    @pytest.mark.parametrize("page", PAGES)
    def test_figures_are_whole_and_crisp(self, site, page, mode):
        v = site(page, mode)
        failures = figure_failures(v)
        assert not failures, "\n".join(failures)

    @pytest.mark.parametrize("page", PAGES)
    def test_page_has_no_serious_accessibility_violation(self, site, page, axe_mode):
        """axe-core: every rule in dark mode; colour contrast again in light mode."""
        v = site(page, axe_mode)
        assert "axe" in v.seconds, "axe did not run on this page"
        assert not v.axe, "axe-core:\n" + "\n".join(v.axe)

    def test_one_search_control_per_page(self, site, mode):
        counts = {page: site(page, mode).audit["searchBoxes"] for page in PAGES}
        assert all(n == 1 for n in counts.values()), counts

    def test_every_icon_is_in_its_font_and_the_fonts_are_small(self, site, mode):
        """Every icon glyph on screen is in the icon font it is drawn from (icon_fonts.py keeps only those), and the
        fonts are small."""
        visits = [site(page, mode) for page in PAGES]
        assert sum(len(v.icons) for v in visits) >= len(PAGES), "no icons found: is ICONS_SHOWN still finding them?"
        missing = [failure for v in visits for failure in icon_failures(v)]
        assert not missing, "icons not in their font:\n" + "\n".join(missing)
        heavy = [f"{v.page}: {v.bytes['iconFonts']} B" for v in visits if v.bytes["iconFonts"] > ICON_FONT_BUDGET]
        assert not heavy, f"icon fonts over {ICON_FONT_BUDGET} B: {heavy}"

    @pytest.mark.parametrize("page", EXPLORER_PAGES)
    def test_explorers_fit_and_follow_the_theme(self, site, page, mode):
        """Every explorer fits the page with no text overlapping text or data, draws crisply, and takes the
        theme's background (in dark mode: dark, like the page around it)."""
        v = site(page, mode)
        assert v.drawn, f"no explorer drawn on {page}"
        failures = []
        for n, e in enumerate(v.drawn):
            if e["boxes"] is None:
                failures.append(f"explorer {n}: not drawn by explorers.js")
                continue
            failures += [f"explorer {n}: {f}" for f in explorer_layout_failures(e["boxes"], MODES[mode][0])]
            if not e["crisp"]:
                failures.append(f"explorer {n}: the canvas has fewer pixels than the screen")
            if e["pixel"] != rgb(e["background"]) or (
                rgb(e["page"]) and "rgba(0, 0, 0, 0)" not in e["page"] and rgb(e["page"]) != rgb(e["background"])
            ):
                failures.append(f"explorer {n}: canvas {e['pixel']}, explorer {e['background']}, page {e['page']}")
            if e["frame"] and rgb(e["frame"]) != rgb(e["background"]):
                failures.append(f"explorer {n}: drawn on {e['background']} inside a {e['frame']} panel")
            if mode == "dark" and sum(e["pixel"]) > 3 * 80:
                failures.append(f"explorer {n}: a light canvas {e['pixel']} on the dark page")
        assert not failures, "\n".join(failures)
