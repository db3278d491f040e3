"""The built book in a real browser (Debian's Chromium driven by Playwright): the light half of the visits.

Every page of the book is opened from a local HTTP server with every request
to another host blocked, in three modes: a phone (390 px), a laptop (1280 px)
and the laptop in dark mode; the chapters, appendix and answers are printed too. This module makes the
phone and laptop visits; ``test_browser_book_dark.py`` the dark and printed ones, with the same checks of
every page in each mode (``support/book_checks.py``). Each visit checks what a reader gets:

* math typeset (at build time, by MathJax 3: no raw TeX left, in the prose or
  inside the rendered math; no TeX error), inline math on the text's baseline, no line that starts with
  the punctuation after a formula or ends with the bracket before one;
* geometry, measured from the rendered boxes (``support/page_audit.js``): no content
  wider than its box without a scrollbar that reaches it (display math,
  tables, code, outputs, images), no sideways pan of the page;
* on the phone, the visible menu button opens the chapter list and the
  "On this page" button opens the page's contents; Escape closes each again;
* answers pages show no authoring markers and have titles of their own;
* axe-core (``axe-playwright-python``) finds no serious or critical problem;
* every image loaded, with alt text; no missing local file, no page or
  console error, no external request; each page's weight;
* every icon on screen is in the icon font the page draws it from (looked up in the font file itself,
  so that a system font with a glyph at the icon's code point cannot stand in), and the icon fonts are small;
* every slider alive (moving it redraws its explorer's canvas), each redraw
  within one frame (<= 16 ms).

The tests take no screenshot: ``make screenshots`` (``tools/book_report.py``) makes the same visits with a
full-page screenshot of every page in every mode, for people to look at. Search works offline. The browser
explorers compute the same numbers as ``explorers.py``.

The harness checks itself on small local fixtures first (a live and a dead
slider, an external request, a missing file, raw TeX, a page error, cut and
panning content, a dead menu button, a menu that does not close, an icon left out of its font), so a green run
means the checks can fail.

Pages are visited concurrently (Playwright's async API in a thread; ``book_build/book_visits.py``), then the
sliders are moved one page at a time so that no other tab competes for the CPU
while update times are measured. The visits come in two groups (``VISIT_GROUPS``:
laptop and phone here; dark and print in ``test_browser_book_dark.py``), which under pytest-xdist two workers
make side by side. Typesetting time is not asserted (tabs share two cores): ``make screenshots`` reports it,
``make bench`` measures it one page at a time.

Run alone: ``make book-strict`` then ``.venv/bin/python -m pytest tests/test_browser_book.py -q``
(``POSENC_REUSE_BUILD=1``: use the existing build as it is, stale or not).
"""

from __future__ import annotations

import inspect
import math
import re

import numpy as np
import pytest

from book_build import icon_fonts
from book_build.book_server import serve
from book_build.book_visits import (
    AXE_MODE,
    EXPLORER_PAGES,
    FRAME_MS,
    MENU_PAGES,
    PAGES,
    STEPS_PER_SLIDER,
    VISIT_GROUPS,
    icon_face,
    visit_all,
)
from book_build.page_guard import Guard
from tests.support.book_checks import EveryPageInEachMode
from tests.support.book_visits import (
    alt_failures,
    baseline_failures,
    describe,
    figure_failures,
    icon_failures,
    image_failures,
    layout_failures,
    luminance,
    math_failures,
    menu_failures,
)
from tests.support.browser import compare_numbers, new_context

# Display formulas that may be wider than their room on a phone, where they scroll sideways with only a fade at the
# edge to say so: {wide_formula_key: why it cannot be split into lines, shortened, or have a definition moved out}.
WIDE_FORMULAS_ALLOWED: dict[str, str] = {}


def wide_formula_key(page: str, formula: dict) -> str:
    """``page#equation-label`` for a numbered formula, else ``page: `` and the start of what a screen reader reads."""
    return f"{page}#{formula['id']}" if formula["id"] else f"{page}: {formula['text'][:40]}"


def test_display_formulas_fit_a_phone_column(site):
    """At 390 px every display formula fits the room its column leaves it beside its number: split into lines
    at its relations, or with a definition moved out, rather than scrolling sideways behind a fade. The few
    that cannot be are in WIDE_FORMULAS_ALLOWED, each with its reason; an entry that fits again is removed."""
    wide, seen = [], set()
    for page in PAGES:
        for formula in site(page, "phone").audit["wideMath"]:
            key = wide_formula_key(page, formula)
            seen.add(key)
            if key not in WIDE_FORMULAS_ALLOWED:
                wide.append(f"{key}: {formula['content']} px in {formula['room']} px ({formula['text']})")
    stale = sorted(set(WIDE_FORMULAS_ALLOWED) - seen)
    assert not wide, f"{len(wide)} display formulas wider than a phone's column:\n" + "\n".join(wide)
    assert not stale, f"allowed to be wide but no longer are (remove them from WIDE_FORMULAS_ALLOWED): {stale}"


# The pages whose code cells must fit the text column at 1280 px (tests/test_code_width.py holds their notebooks'
# lines to the width that fits): every page with code cells. (exercises/ are not pages of the book.)
CODE_FITS_FOLDERS = ("chapters/", "appendix/", "solutions/")


def test_code_fits_the_column_on_a_laptop(site):
    """At 1280 px no code cell scrolls sideways: every line of code fits the text column, so that a reader on a
    laptop reads each cell whole."""
    pages = [page for page in PAGES if page.startswith(CODE_FITS_FOLDERS)]
    assert pages, f"no page in {CODE_FITS_FOLDERS}"
    wide = [
        f"{page}: the cell starting {cell['first']!r} is {cell['scroll']} px wide in a {cell['client']} px column"
        for page in pages
        for cell in site(page, "laptop").audit["codeScrolls"]
    ]
    assert not wide, f"{len(wide)} code cells scroll sideways at 1280 px:\n" + "\n".join(wide)


PAGE_BUDGET = 1.5e6  # bytes a chapter page may load, everything included
AUTHORING = ["BEGIN SOLUTION", "END SOLUTION", "For maintainers", "make exercises", "Replace each"]


# --------------------------------------------------------------------------
# The harness checks itself: a page with every fault, and a healthy one
# --------------------------------------------------------------------------

FAKE_EXPLORER = """
<div class="posenc-explorer" id="%(id)s" data-updates="0">
  <label>value <input type="range" min="0" max="%(max)s" value="%(value)s" id="%(id)s-s"></label>
  <canvas width="200" height="60"></canvas>
</div>
<script>
(function () {
  const root = document.getElementById('%(id)s');
  const slider = root.querySelector('input'), canvas = root.querySelector('canvas');
  function draw() {
    const t0 = performance.now();
    const ctx = canvas.getContext('2d');
    ctx.clearRect(0, 0, 200, 60);
    ctx.fillRect(0, 0, 2 * Number(slider.value), 60);
    while (performance.now() - t0 < %(busy_ms)s) {}       // simulated cost of one update
    root.dataset.lastUpdateMs = (performance.now() - t0).toFixed(3);
    root.dataset.updates = Number(root.dataset.updates) + 1;
  }
  if (%(live)s) slider.addEventListener('input', draw);
  draw();
})();
</script>
"""


def fake_explorer(id, live=True, busy_ms=0, value=10, max=100):
    return FAKE_EXPLORER % dict(id=id, live="true" if live else "false", busy_ms=busy_ms, value=value, max=max)


MENU = """
<nav id="menu" class="bd-docs-nav" hidden>
<a class="reference" href="chapters/01_order_problem.html">The order problem</a></nav>
<button class="primary-toggle" aria-label="Open the menu"%s>menu</button>
"""

# inline math in a flex container aligning its items (%s), with a taller item beside the formula, as
# MathJax 2's preview and rendering sat side by side in the theme's span.math
INLINE_MATH = """<p>Words and <span class="math" style="display: inline-flex; align-items: %s">
<span style="font-size: 60px">&nbsp;</span><mjx-container style="display: inline-block">x</mjx-container></span>
words.</p>"""
# a formula filling its line, then a period: after the span (the third %s) the period may start the next
# line; inside an inline flex span (the first %s: its style, the second: the period) it cannot
PERIOD_AFTER_MATH = """<div style="width: 60px">words <span class="math" %s><mjx-container
style="display: inline-block; width: 58px">x</mjx-container>%s</span>%s</div>"""
# A stretched brace as MathJax builds it (table cells: end, bar, tip, bar, end), the ends' glyphs reaching 2 px
# into the bars; the tip's glyph reaches into them by the margin given (the good page's) or only touches them.
BRACE = """<div><mjx-stretchy-h style="display: inline-table; width: 200px; height: 8px">
<mjx-beg style="display: table-cell; width: 0"><mjx-c style="display: inline-block; width: 10px; margin-right: -2px;
background: #333"></mjx-c></mjx-beg><mjx-ext style="display: table-cell; width: 50%%; overflow: clip; background: #333">
</mjx-ext><mjx-mid style="display: table-cell; width: 0"><mjx-c style="display: inline-block; width: 20px; margin: 0 %s;
background: #333"></mjx-c></mjx-mid><mjx-ext style="display: table-cell; width: 50%%; overflow: clip; background: #333">
</mjx-ext><mjx-end style="display: table-cell; width: 0"><mjx-c style="display: inline-block; width: 10px;
margin-left: -2px; background: #333"></mjx-c></mjx-end></mjx-stretchy-h></div>"""
# an opening bracket, then a formula that does not fit on the bracket's line: inside the inline flex span (the first
# %s: its style, the second: the bracket) it moves with the formula; before the span (the third %s) it stays behind
BRACKET_BEFORE_MATH = """<div style="width: 60px">words %s<span class="math" %s>%s<mjx-container
style="display: inline-block; width: 50px">x</mjx-container></span></div>"""
OPENS = ''' onclick="document.getElementById('menu').hidden = false"'''
# the menu closes on Escape, as the theme's dialogs do (the bad page has no such handler)
CLOSES = """<script>document.addEventListener('keydown', e => {
  if (e.key === 'Escape') document.getElementById('menu').hidden = true; })</script>"""
WIDE_LINE = "a wide line that scrolls " * 8
# a code cell's code (its input), %s its second line; the first line names the cell
CODE_CELL = "\n# the first line of a cell\n%s"
# a display formula as MathJax draws it (the formula inside the box that scrolls), %s px wide in a 200 px column
DISPLAY_MATH = """<div class="math" id="equation-%s" style="width: 200px"><mjx-container display="true"
style="display: block; overflow-x: auto"><mjx-math style="display: inline-block; width: %spx">x</mjx-math>
</mjx-container></div>"""

# An icon font holding one glyph (the menu's bars, U+F0C9; cut from the theme's font by icon_fonts.subset, where
# the theme keeps it) and an icon drawn from it: the bars on the good page, the magnifier (U+F002) on the bad one.
ICON = """<style>@font-face {font-family: "Font Awesome 6 Free"; font-weight: 900;
                          src: url(vendor/fontawesome/webfonts/fa-solid-900.woff2)}
.icon::before {font-family: "Font Awesome 6 Free"; font-weight: 900; content: "\\%x"}</style>
<p><i class="icon"></i> an icon</p>"""
ICON_KEPT, ICON_LEFT_OUT = 0xF0C9, 0xF002

GOOD_PAGE = f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>good</title></head><body>
<main id="main-content"><article>
<h1>Good</h1>
<p>Plain text.</p><img src="dot.png" alt="a small red dot">
<pre style="overflow-x: auto; width: 200px; mask-image: linear-gradient(to right, #000 80%, transparent)"
     data-more="right" tabindex="0">{WIDE_LINE}</pre>
{MENU % OPENS}{CLOSES}
{INLINE_MATH % "baseline"}
{PERIOD_AFTER_MATH % ('style="display: inline-flex"', ".", "")}
{BRACKET_BEFORE_MATH % ("", 'style="display: inline-flex"', "(")}
{BRACE % "-2px"}
{DISPLAY_MATH % ("fits", 190)}
{ICON % ICON_KEPT}
<div class="highlight"><pre>{'<span class="n">x</span> + ' * 4}<span class="n">y</span></pre></div>
<div class="cell_input"><pre style="overflow-x: auto">{CODE_CELL % "x = 1"}</pre></div>
{fake_explorer("fast")}
{fake_explorer("at-max", value=100)}
</article></main>
</body></html>"""

BAD_PAGE = f"""<!doctype html><html><head><meta charset="utf-8"><title>bad</title></head><body>
<main id="main-content"><article>
<p>Raw TeX: <span class="math">\\(\\omega_i\\)</span> and $$x$$; typeset, but showing a backslash:
<span class="math"><mjx-container>max\\_len<mjx-assistive-mml><math><mtext>max\\_len</mtext></math>
</mjx-assistive-mml></mjx-container></span>.</p>
<img src="missing.png" alt="missing"><img src="http://example.com/x.png" alt="">
<script>undefinedFunctionCall();</script>
<script>console.error('something broke');</script>
<div class="math" style="overflow: hidden; width: 120px">
<span style="display: inline-block; width: 300px">cut</span></div>
<div style="width: 2000px">pans</div>
{MENU % ""}
<button class="primary-toggle" aria-label="Open the menu too"{OPENS}>menu</button>
{INLINE_MATH % "center"}
{PERIOD_AFTER_MATH % ("", "", ".")}
{BRACKET_BEFORE_MATH % ("(", "", "")}
{BRACE % "0"}
{DISPLAY_MATH % ("wide", 300)}
{ICON % ICON_LEFT_OUT}
<p>A fraction in the text: <span class="math"><mjx-container><mjx-math><mjx-mfrac><mjx-c>1/2</mjx-c></mjx-mfrac>
</mjx-math></mjx-container></span> is squeezed.</p>
<div data-scroll-stop tabindex="0" style="overflow-x: auto; width: 200px">short</div>
<div class="math"><mjx-container display="true" style="display: block; overflow-x: auto; height: 20px">
<mjx-c style="display: inline-block; width: 10px; height: 24px; margin-top: -3px"></mjx-c></mjx-container></div>
<div style="overflow-x: auto; width: 120px">
<span style="display: inline-block; width: 300px">scrolls, no cue</span></div>
<div class="cell_output" style="width: 100px">
<img src="_images/dot.png" alt="a red dot, stretched" style="width: 150px">
<table style="background: #fff"><tr><td>a light panel</td></tr></table></div>
<div class="highlight"><pre style="overflow-x: auto; width: 200px" tabindex="0">{"&nbsp;" * 80}\
<span class="faint" style="color: #ccc">far right</span>
<span class="faint" style="color: #ccc">faint</span> <span class="faint" style="color: #ccc">faint</span></pre></div>
<div class="cell_input"><pre style="overflow-x: auto; width: 200px">{CODE_CELL % WIDE_LINE}</pre></div>
{fake_explorer("dead", live=False)}
{fake_explorer("slow", busy_ms=40)}
<input type="range" min="0" max="10" value="3">
</article></main>
</body></html>"""

RED_DOT_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c4944415408d763f8cfc000"
    "0003010100c9fe92ef0000000049454e44ae426082"
)


@pytest.fixture(scope="module")
def fixture_visits(tmp_path_factory):
    """Both fixture pages visited by the same machinery as the book's pages, in every mode."""
    root = tmp_path_factory.mktemp("fixture_site")
    (root / "good.html").write_text(GOOD_PAGE)
    (root / "bad.html").write_text(BAD_PAGE)
    (root / "dot.png").write_bytes(RED_DOT_PNG)
    solid = (icon_fonts.theme_webfonts() / "fa-solid-900.woff2").read_bytes()
    (root / icon_fonts.WEBFONTS).mkdir(parents=True)
    (root / icon_fonts.WEBFONTS / "fa-solid-900.woff2").write_bytes(icon_fonts.subset(solid, {ICON_KEPT}, "woff2"))
    (root / "_images").mkdir()
    (root / "_images" / "dot.png").write_bytes(RED_DOT_PNG)
    with serve(root) as base:
        return visit_all(base, ["good", "bad"], shot_dir=None)


def test_harness_passes_a_healthy_page(fixture_visits):
    v, phone = fixture_visits["good", "laptop"], fixture_visits["good", "phone"]
    assert not any(v.problems.values()), describe(v.problems)
    assert not math_failures(v) and not image_failures(v) and not alt_failures(v)
    assert v.explorers == 2 and len(v.sliders) == 2
    assert all(s.live and s.labelled for s in v.sliders), v.sliders
    # the slider at its maximum is moved down instead
    assert all(step.changed_value for s in v.sliders for step in s.steps)
    ms = [step.last_ms for s in v.sliders for step in s.steps]
    assert len(ms) == 2 * STEPS_PER_SLIDER and max(ms) <= FRAME_MS, ms
    assert all(step.latency_ms is not None for s in v.sliders for step in s.steps)
    for visit in (v, phone):
        assert not layout_failures(visit), layout_failures(visit)
        assert [c["kind"] for c in visit.audit["scrolled"]] == ["code"], visit.audit["scrolled"]
        assert not visit.audit["uncued"] and not visit.audit["glyphsCut"] and not figure_failures(visit)
        assert not visit.audit["wideMath"], visit.audit["wideMath"]
        assert 0 < visit.bytes["sent"] <= visit.bytes["decoded"] and visit.audit["heading"] == "Good"
    assert phone.menus["menu"] == {"buttons": 1, "opened": True, "closed": True, "detail": ""}
    assert "axe" in fixture_visits["good", AXE_MODE].seconds and not fixture_visits["good", AXE_MODE].axe
    # the five spans of one token kind: four unwrapped, one left for axe's colour contrast
    assert fixture_visits["good", AXE_MODE].axe_code_spans == [4, 1]
    assert len(v.baselines) == 1 and not baseline_failures(v), v.baselines
    assert not v.audit["punctuationAlone"] and not phone.audit["punctuationAlone"], v.audit["punctuationAlone"]
    assert not v.audit["bracketAlone"] and not phone.audit["bracketAlone"], v.audit["bracketAlone"]
    assert [(i["icon"], i["in_font"]) for i in v.icons] == [(f"{ICON_KEPT:x}", True)], v.icons
    assert not icon_failures(v) and v.icons[0]["file"].endswith("fa-solid-900.woff2"), v.icons
    assert v.audit["squeezed"] == [], v.audit["squeezed"]
    assert v.audit["seams"] == [], v.audit["seams"]
    assert v.audit["codeScrolls"] == [] and phone.audit["codeScrolls"] == [], v.audit["codeScrolls"]
    assert 0 < v.bytes["iconFonts"] < 2000  # the fixture's one-glyph font is all that loaded of icon fonts


def test_harness_catches_every_fault(fixture_visits):
    v, phone = fixture_visits["bad", "laptop"], fixture_visits["bad", "phone"]
    assert v.problems["external requests"] == ["http://example.com/x.png"], v.problems
    assert any("missing.png" in m for m in v.problems["missing local files"]), v.problems
    assert any("undefinedFunctionCall" in e for e in v.problems["page errors"]), v.problems
    assert any("something broke" in e for e in v.problems["console errors"]), v.problems
    failures = math_failures(v)
    assert any(f.startswith("unrendered") for f in failures), failures
    assert any("$$" in f for f in failures), failures
    assert any(f.startswith("raw TeX shown (math: max") for f in failures), failures
    assert len(image_failures(v)) == 2 and len(alt_failures(v)) == 1
    dead, slow, loose = v.sliders
    assert not dead.live and slow.live and not loose.live and not loose.labelled
    assert all(step.last_ms >= 40 for step in slow.steps)
    layout = layout_failures(phone)
    assert any(f.startswith("cut off (math, 300 px of content in a 120 px box") for f in layout), layout
    assert any("pans sideways" in f and "pans" in f.split("sticking out:")[1] for f in layout), layout
    # two menu buttons: the first opens nothing, the second a menu that Escape does not close
    menu = phone.menus["menu"]
    assert menu["buttons"] == 2 and not menu["opened"] and not menu["closed"], menu
    assert "button 0 of '.primary-toggle': no " in menu["detail"], menu
    assert "button 1 of '.primary-toggle': the menu is still open after Escape" in menu["detail"], menu
    assert [f.split(":")[0] for f in menu_failures(phone)] == [
        "the menu button opens nothing",
        "the menu does not close with Escape",
    ], menu_failures(phone)
    assert any("tab stop for scrolling" in f for f in layout), layout
    assert baseline_failures(v) and max(map(abs, v.baselines)) > 5, v.baselines  # centred, not on the baseline
    assert v.audit["glyphsCut"] and "in a 20 px box" in v.audit["glyphsCut"][0], v.audit["glyphsCut"]
    wide = [(f["id"], f["content"], f["room"]) for f in phone.audit["wideMath"]]
    assert wide == [("equation-wide", 300, 200)], phone.audit["wideMath"]
    assert any("scrolls, no cue" in u for u in v.audit["uncued"]), v.audit["uncued"]
    assert any(p.startswith('"." after') for p in v.audit["punctuationAlone"]), v.audit["punctuationAlone"]
    brackets = [b.split(" ends a line")[0] for b in v.audit["bracketAlone"]]
    assert brackets == ['"(" before span.math: "x"'], v.audit["bracketAlone"]
    # left out of the cut font: missing, whether or not a system font has a glyph at that code point
    assert [(i["icon"], i["in_font"]) for i in v.icons] == [(f"{ICON_LEFT_OUT:x}", False)], v.icons
    assert icon_failures(v) == [f'bad: U+F002 ("Font Awesome 6 Free" 900) in i.icon: not in {v.icons[0]["file"]}']
    assert len(v.audit["squeezed"]) == 1 and "1/2" in v.audit["squeezed"][0], v.audit["squeezed"]
    assert [c["first"] for c in v.audit["codeScrolls"]] == ["# the first line of a cell"], v.audit["codeScrolls"]
    assert v.audit["codeScrolls"][0]["client"] < v.audit["codeScrolls"][0]["scroll"], v.audit["codeScrolls"]
    seams = v.audit["seams"]
    assert len(seams) == 1 and seams[0].endswith("pieces 2 and 3 overlap by 0.00 px"), seams
    figures = figure_failures(v)
    assert any("150 px wide in a 100 px column" in f for f in figures), figures
    assert any("soft on a 2x screen" in f for f in figures), figures
    dark = fixture_visits["bad", "dark"].audit["panels"]
    assert any(p["backdrop"] and luminance(p["backdrop"]) > 0.9 for p in dark), dark
    axe = fixture_visits["bad", AXE_MODE].axe
    assert any(a.startswith("critical: label") for a in axe), axe  # the range input without a label
    assert any("html-has-lang" in a for a in axe), axe
    # a faint token kind is caught in both themes although one span of it stands for all (the one on screen:
    # the first is scrolled out of view)
    for mode in (AXE_MODE, "laptop"):
        visit = fixture_visits["bad", mode]
        assert visit.axe_code_spans == [2, 1], visit.axe_code_spans
        assert any(a.startswith("serious: color-contrast") for a in visit.axe), visit.axe


def test_an_icon_is_looked_up_in_the_face_of_its_family_and_weight():
    """The first family of the icon's list that has @font-face rules, and its face of the icon's weight (or of a
    range holding it); none when that family has no face of that weight, as another weight holds other icons."""
    faces = [
        {"family": "Icons", "weight": "normal", "url": "regular"},
        {"family": "Icons", "weight": "900", "url": "solid"},
        {"family": "Brands", "weight": "100 900", "url": "brands"},
    ]

    def url(families, weight):
        face = icon_face({"families": families, "weight": weight, "faces": faces})
        return face and face["url"]

    assert url(["Icons"], "900") == "solid" and url(["Icons", "Brands"], "400") == "regular"
    assert url(["Unknown", "Brands", "Icons"], "700") == "brands"
    assert url(["Icons", "Brands"], "700") is None and url(["Unknown"], "400") is None


# --------------------------------------------------------------------------
# The book, page by page
# --------------------------------------------------------------------------


class TestEveryPageOnLaptopAndPhone(EveryPageInEachMode):
    modes = VISIT_GROUPS["light"]


def test_every_built_page_is_in_the_toc(book):
    """The per-page tests below cover every page a reader can reach."""
    skip = {"genindex", "search", "index"}  # Sphinx's generated pages; search is tested on its own
    built = {
        str(p.relative_to(book).with_suffix(""))
        for p in book.rglob("*.html")
        if not p.relative_to(book).parts[0].startswith("_")
    }
    assert built - skip == set(PAGES), (
        f"pages outside the toc: {sorted(built - skip - set(PAGES))}, missing: {sorted(set(PAGES) - built)}"
    )


@pytest.mark.parametrize("page", PAGES)
def test_every_stretched_brace_is_drawn_without_a_seam(site, page):
    """The pieces of an underbrace or overbrace overlap (ch04's showed a hairline between tip and bar at 1.25x to
    2x zoom, where the joint fell mid-pixel)."""
    v = site(page)
    assert not v.audit["seams"], "\n".join(v.audit["seams"])


@pytest.mark.parametrize("page", PAGES)
def test_no_fraction_or_matrix_is_squeezed_into_a_line_of_text(site, page):
    """Inline math holds no fraction or matrix: in text style their parts are at script size (ch04, ch05 §5.6
    had ~7 px ones); display math shows them at full size."""
    v = site(page)
    assert not v.audit["squeezed"], "fractions or matrices in running text:\n" + "\n".join(v.audit["squeezed"])


def svg_text_pt(svg: str) -> tuple[float, float]:
    """(width of the SVG in pt, smallest font size of its text in pt). Text is drawn as paths, each run
    scaled by fontsize / 100 (matplotlib's text-to-path scale)."""
    width = float(re.search(r'<svg[^>]*\bwidth="([\d.]+)pt"', svg).group(1))
    sizes = [100 * float(a) for a, b in re.findall(r"scale\(([\d.]+) -([\d.]+)\)", svg) if a == b]
    return width, min(sizes, default=math.inf)


@pytest.mark.parametrize("page", PAGES)
def test_figure_text_is_legible_on_a_phone(site, book, page):
    """At 390 px every figure fits the column, and the smallest text of each is at least 8 CSS px there."""
    from posenc_course import plotting

    v = site(page, "phone")
    small = []
    for f in v.audit["figures"]:
        if "_images/" not in f["src"] or not f["src"].endswith(".svg"):
            continue
        width_pt, text_pt = svg_text_pt((book / page).parent.joinpath(f["src"]).resolve().read_text())
        px = text_pt * f["shown"] / width_pt  # the text's share of the figure's width, times the shown width
        if px < plotting.MIN_TEXT_PX - 0.05:
            small.append(f"{f['src']}: smallest text {px:.1f} px at {f['shown']} px wide")
    assert not small, "\n".join(small)


@pytest.mark.parametrize("page", MENU_PAGES)
def test_phone_menu_and_contents_buttons_open(site, page):
    """At 390 px the visible menu button shows the chapter list; "On this page" shows the contents."""
    v = site(page, "phone")
    assert "menu" in v.menus
    failures = menu_failures(v)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("page", [p for p in PAGES if p.startswith("solutions/")])
def test_answers_page_shows_answers_not_authoring(site, page):
    v = site(page)
    exercise = site(page.replace("solutions/", "exercises/").removesuffix("_solutions") + "_exercises")
    shown = [marker for marker in AUTHORING if marker in v.audit["text"]]
    assert not shown, f"authoring text on the answers page: {shown}"
    assert v.audit["heading"].startswith("Answers: "), v.audit["heading"]
    assert v.audit["title"] != exercise.audit["title"], (v.audit["title"], exercise.audit["title"])
    assert v.audit["heading"].removeprefix("Answers: ") == exercise.audit["heading"].removeprefix("Practice: ")


@pytest.mark.parametrize("page", [p for p in PAGES if p.startswith(("chapters/", "appendix/"))])
def test_chapter_page_weight(site, page):
    v = site(page)
    assert v.bytes["sent"] <= PAGE_BUDGET, (
        f"{page} loads {v.bytes['sent'] / 1e6:.2f} MB ({v.bytes['decoded'] / 1e6:.2f} MB decoded), "
        f"budget {PAGE_BUDGET / 1e6:.1f} MB"
    )


ICON_FONT_BUDGET = 10_000  # bytes of icon fonts a page may load (the theme's solid font alone was 156 KB)


@pytest.mark.parametrize("page", PAGES)
def test_page_images_load(site, page):
    v = site(page)
    failures = image_failures(v)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("page", PAGES)
def test_page_images_have_alt_text(site, page):
    """A separate test: alt text describing the figure (not Sphinx's default, the file name)."""
    v = site(page)
    failures = alt_failures(v)
    assert not failures, f"{len(failures)} of {len(v.images)} images lack alt text:\n" + "\n".join(failures)


@pytest.mark.parametrize("page", PAGES)
def test_page_sliders_are_live(site, page):
    v = site(page)
    dead = [s.label for s in v.sliders if not s.live]
    unlabelled = [s.label for s in v.sliders if not s.labelled]
    assert not dead, f"sliders that do not change the page when moved: {dead}"
    assert not unlabelled, f"sliders without a label: {unlabelled}"


@pytest.mark.parametrize("page", EXPLORER_PAGES)
def test_chapter_has_an_explorer(site, page):
    v = site(page)
    assert v.explorers >= 1, f"no div.posenc-explorer on {page}"
    assert any(s.in_explorer for s in v.sliders), f"no slider inside an explorer on {page}"


def test_every_slider_step_reports_its_update_time(site):
    """Each explorer step times itself (data-last-update-ms). The one-frame budget is asserted by make bench,
    one page at a time on a quiet machine (tools/benchmarks.py); here the tabs share two cores with the other
    worker's tests, which push some steps past a frame, so the times are reported, not asserted."""
    steps = [step for page in PAGES for s in site(page).sliders for step in s.steps if s.in_explorer]
    assert steps, "no explorer slider in the book"
    reported = [s.last_ms for s in steps if s.last_ms is not None]
    assert len(reported) == len(steps), "an explorer did not set data-last-update-ms"
    assert all(ms > 0 for ms in reported), reported


def test_search_works_offline(site):
    """search.html?q=rotation lists pages (the index is the book's own searchindex.js), with other hosts blocked."""
    context = new_context(site.chromium)
    guard = Guard(context)
    try:
        tab = guard.watch(context.new_page())
        tab.goto(f"{site.base}search.html?q=rotation", wait_until="load")
        tab.locator("#search-results ul.search li").first.wait_for(timeout=15000)
        hrefs = [a.get_attribute("href") for a in tab.locator("#search-results ul.search li a").all()]
        tab.wait_for_timeout(50)
    finally:
        context.close()
    assert not any(guard.problems().values()), describe(guard.problems())
    assert hrefs and all(h and not re.match(r"(https?:)?//", h) for h in hrefs), hrefs
    assert any("chapters/04_linearity" in h for h in hrefs), hrefs


# Where the first typed letter of a visible search field starts, against the right edge of its magnifier icon.
SEARCH_FIELD = """() => {
  const form = [...document.querySelectorAll('form.bd-search')].find(f => f.checkVisibility());
  const input = form.querySelector('input'), icon = form.querySelector('i, svg');
  const text = input.getBoundingClientRect().left + input.clientLeft + parseFloat(getComputedStyle(input).paddingLeft);
  return {text, icon: icon.getBoundingClientRect().right};
}"""


@pytest.mark.parametrize("width", [390, 1280])
def test_search_field_magnifier_leaves_the_typed_text_alone(site, width):
    context = new_context(site.chromium, viewport={"width": width, "height": 800})
    try:
        tab = context.new_page()
        tab.goto(f"{site.base}chapters/04_linearity.html", wait_until="load")
        tab.keyboard.press("Control+k")
        tab.locator("form.bd-search input:visible").first.wait_for(timeout=5000)
        tab.keyboard.type("Rotation")
        where = tab.evaluate(SEARCH_FIELD)
    finally:
        context.close()
    assert where["text"] >= where["icon"] + 2, (
        f"the magnifier ends at {where['icon']:.1f} px, the text starts at {where['text']:.1f} px"
    )


def test_built_pages_reference_no_other_host(book):
    """Static check: no page loads a script, style sheet, image or frame from another host."""
    pattern = re.compile(
        r"<(script|img|iframe|source|audio|video)\b[^>]*\bsrc=[\"'](https?:)?//"
        r"|<link\b[^>]*\brel=[\"'](stylesheet|preload|icon|modulepreload)[^>]*\bhref=[\"'](https?:)?//"
        r"|<link\b[^>]*\bhref=[\"'](https?:)?//[^>]*\brel=[\"'](stylesheet|preload|icon|modulepreload)"
    )
    css = re.compile(r"url\(\s*[\"']?(https?:)?//|@import\s+[\"'](https?:)?//")
    offenders = []
    for path in book.rglob("*.html"):
        for m in pattern.finditer(path.read_text(errors="replace")):
            offenders.append(f"{path.relative_to(book)}: {m.group(0)[:120]}")
    for path in book.rglob("*.css"):
        for m in css.finditer(path.read_text(errors="replace")):
            offenders.append(f"{path.relative_to(book)}: {m.group(0)[:120]}")
    assert not offenders, "\n".join(offenders)


# --------------------------------------------------------------------------
# The browser explorers compute what explorers.py computes
# --------------------------------------------------------------------------


def explorer_kinds() -> dict:
    """{kind: (slider specs, couplings, data function, constants)} for every explorer class in explorers.py.

    The sliders come from each explorer's own ``browser_spec()`` (what the browser renderer gets);
    the data function is ``<kind>_data``, or else the ``*_data`` function whose parameters are
    exactly the slider names.
    """
    from posenc_course import explorers

    functions = {name: f for name, f in vars(explorers).items() if name.endswith("_data") and callable(f)}
    kinds = {}
    for cls in vars(explorers).values():
        if not (isinstance(cls, type) and issubclass(cls, explorers.Explorer) and cls.kind):
            continue
        spec = cls().browser_spec()
        names = {c["name"] for c in spec["controls"]}

        def required(f):
            return {p.name for p in inspect.signature(f).parameters.values() if p.default is inspect.Parameter.empty}

        fn = functions.get(f"{cls.kind}_data") or next((f for f in functions.values() if required(f) == names), None)
        kinds[cls.kind] = (spec["controls"], spec.get("couple") or {}, fn, spec["constants"])
    return kinds


def slider_settings(controls, couple, fn, rng, n=40) -> list[dict]:
    """Slider values on each slider's grid: all at min, all at max, each alone at its extremes, n random."""

    def grid(c, x):
        k = round((x - c["min"]) / c["step"])
        x = min(c["max"], c["min"] + k * c["step"])
        x = round(x, 10)
        return float(10**x) if c["log"] else (int(x) if float(x).is_integer() else x)

    def finish(values):
        for name, parent in couple.items():  # e.g. pair i <= ceil(d_model / 2) - 1, as explorers.js does
            values[name] = min(values[name], math.ceil(values[parent] / 2) - 1)
        hints = {p.name: p.annotation for p in inspect.signature(fn).parameters.values()}
        for name in values:  # a parameter typed int gets the rounded slider value (as the explorer's redraw does)
            if hints.get(name) in (int, "int"):
                values[name] = int(round(values[name]))
        return values

    default = {c["name"]: grid(c, math.log10(c["value"]) if c["log"] else c["value"]) for c in controls}
    settings = [finish({c["name"]: grid(c, c[end]) for c in controls}) for end in ("min", "max")]
    for c in controls:
        for end in ("min", "max"):
            settings.append(finish({**default, c["name"]: grid(c, c[end])}))
    for _ in range(n):
        settings.append(finish({c["name"]: grid(c, float(rng.uniform(c["min"], c["max"]))) for c in controls}))
    return settings


def test_browser_explorers_compute_what_python_draws(site):
    """window.posencExplorers.compute(kind, values, constants) equals explorers.<kind>_data(**values), every
    kind (constants: what the explorer's spec sends besides the slider values)."""
    rng = np.random.default_rng(20260)
    kinds = explorer_kinds()
    assert {"formula", "base", "offset"} <= set(kinds), sorted(kinds)
    missing = [kind for kind, (_, _, fn, _) in kinds.items() if fn is None]
    assert not missing, f"no *_data function in explorers.py for the explorers {missing}"
    settings = {kind: slider_settings(controls, couple, fn, rng) for kind, (controls, couple, fn, _) in kinds.items()}
    constants = {kind: kinds[kind][3] for kind in kinds}
    context = new_context(site.chromium)
    try:
        tab = context.new_page()
        tab.goto(f"{site.base}{EXPLORER_PAGES[0]}.html", wait_until="domcontentloaded")
        tab.wait_for_function("() => !!(window.posencExplorers && window.posencExplorers.compute)", timeout=15000)
        results = tab.evaluate(
            """([settings, constants]) => {
                 const out = {};
                 for (const [kind, list] of Object.entries(settings))
                   out[kind] = list.map(values => {
                     try { return {ok: window.posencExplorers.compute(kind, values, constants[kind])}; }
                     catch (e) { return {error: String(e)}; }
                   });
                 return out;
               }""",
            [settings, constants],
        )
    finally:
        context.close()
    failures, per_kind = [], {}
    for kind, cases in settings.items():
        fn = kinds[kind][2]
        before = len(failures)
        for values, result in zip(cases, results[kind]):
            label = f"{kind}({', '.join(f'{k}={x:g}' for k, x in values.items())})"
            if "error" in result:
                failures.append(f"{label}: {result['error']}")
                continue
            compare_numbers(label, fn(**values), result["ok"], failures)
        per_kind[kind] = f"{len(failures) - before} mismatches over {len(cases)} settings"
    assert not failures, f"{per_kind}\n" + "\n".join(failures[:30])
