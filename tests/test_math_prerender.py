"""math_prerender: formulas typeset at build time, with their style sheet, fonts and hidden MathML."""

import re

import pytest

from book_build import math_prerender as mp

PAGE = """<!DOCTYPE html><html><head><title>t</title>
</head><body><p>Inline <span class="math notranslate nohighlight">\\(\\omega_i = b^{-2i/d}\\)</span> and
<span class="math notranslate nohighlight">\\(a &lt; b\\)</span>.</p>
<div class="math notranslate nohighlight">
\\[\\begin{aligned} x &amp;= \\mathtt{max\\_len} \\end{aligned}\\]</div>
<pre>\\(not math: a code block\\)</pre>
</body></html>"""


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    out = tmp_path_factory.mktemp("html")
    (out / "chapters").mkdir()
    (out / "chapters" / "page.html").write_text(PAGE)
    (out / "plain.html").write_text("<html><head></head><body>no math</body></html>")
    counts = mp.prerender_book(out)
    return out, counts


def test_formulas_are_read_with_their_kind_and_unescaped():
    assert mp.formulas(PAGE) == [
        ("\\omega_i = b^{-2i/d}", False),
        ("a < b", False),
        ("\\begin{aligned} x &= \\mathtt{max\\_len} \\end{aligned}", True),
    ]


def test_every_formula_is_typeset_in_its_own_element(book):
    out, counts = book
    html = (out / "chapters" / "page.html").read_text()
    assert counts["pages"] == 1 and counts["formulas"] == 3
    spans = re.findall(
        r'<span class="math notranslate nohighlight">(<mjx-container.*?</mjx-container>)\.?</span>', html
    )
    assert len(spans) == 2 and all('jax="CHTML"' in s for s in spans)
    assert re.search(r'<div class="math notranslate nohighlight"><mjx-container[^>]*display="true"', html)
    assert "\\(" not in html.split("<pre>")[0] and "\\omega" not in html  # no TeX left in the prose...
    assert "<pre>\\(not math: a code block\\)</pre>" in html  # ...and code untouched


def test_punctuation_after_inline_math_moves_inside_its_span(book):
    """So that no line starts with the period after a formula (the span is an inline flex box)."""
    out, _ = book
    html = (out / "chapters" / "page.html").read_text()
    assert re.search(r"</mjx-container>\.</span></p>", html)  # "... and $a < b$." ends inside the span
    assert "</mjx-container></span> and" in html  # no punctuation: nothing moves
    assert re.search(r"</mjx-container></div>\s*<pre>", html)  # display math keeps its own box


def test_an_opening_bracket_before_inline_math_moves_inside_its_span(tmp_path):
    """So that no line ends with the bracket whose formula starts the next ("of $r$ ($0 \\le b$) are")."""
    page = (
        '<html><head></head><body><p>of (<span class="math notranslate nohighlight">\\(0 \\le b\\)</span>) and '
        '[<span class="math notranslate nohighlight">\\(x\\)</span>]</p>\n'
        '(<div class="math notranslate nohighlight">\n\\[y\\]</div>)</body></html>'
    )
    (tmp_path / "page.html").write_text(page)
    mp.prerender_book(tmp_path)
    html = (tmp_path / "page.html").read_text()
    assert re.search(
        r'of <span class="math notranslate nohighlight">\(<mjx-container.*?</mjx-container>\)</span> and', html, re.S
    )
    assert re.search(
        r'and <span class="math notranslate nohighlight">\[<mjx-container.*?</mjx-container>\]</span>', html, re.S
    )
    assert re.search(
        r'\(<div class="math notranslate nohighlight"><mjx-container.*?</mjx-container></div>\)', html, re.S
    )  # display math keeps its own box: the brackets stay outside


def test_screen_readers_get_mathml_with_the_right_symbols(book):
    out, _ = book
    html = (out / "chapters" / "page.html").read_text()
    mathml = re.findall(r"<mjx-assistive-mml[^>]*>(.*?)</mjx-assistive-mml>", html)
    assert len(mathml) == 3
    assert "<mi>ω</mi>" in mathml[0] and "<mo>&lt;</mo>" in mathml[1]
    assert re.sub(r"<[^>]+>", "", mathml[2]) == "x=max_len"  # \_ is an underscore, not a backslash


def test_the_page_gets_its_style_sheet_and_font_preloads_relative_to_itself(book):
    out, _ = book
    html = (out / "chapters" / "page.html").read_text()
    head = html.split("</head>")[0]
    assert head.count('<style id="mathjax-chtml">') == 1
    fonts = re.findall(r'url\("([^"]+)"\)', head)
    assert fonts and all(f.startswith("../_vendor/mathjax/fonts/MathJax_") for f in fonts)
    assert all((out / "chapters" / f).resolve().exists() for f in fonts)
    preloads = re.findall(r'<link rel="preload" as="font"[^>]*href="([^"]+)"', head)
    # the main fonts, the italic of omega, the typewriter of \mathtt; not the fonts nothing here uses
    names = {p.rsplit("/", 1)[1] for p in preloads}
    assert {
        "MathJax_Zero.woff",
        "MathJax_Main-Regular.woff",
        "MathJax_Math-Italic.woff",
        "MathJax_Typewriter-Regular.woff",
    } <= names
    assert "MathJax_Fraktur-Regular.woff" not in names


def test_a_page_without_math_and_a_second_run_change_nothing(book):
    out, _ = book
    before = {p: p.read_text() for p in out.rglob("*.html")}
    assert before[out / "plain.html"] == "<html><head></head><body>no math</body></html>"
    again = mp.prerender_book(out)
    assert again["pages"] == 0 and again["formulas"] == 0
    assert {p: p.read_text() for p in out.rglob("*.html")} == before


@pytest.mark.parametrize(
    "tex, message",
    [("\\badmacro x", "Undefined control sequence \\\\badmacro"), ("\\frac{1}{2", "Missing close brace")],
)
def test_tex_errors_fail_and_name_the_page_and_formula(tmp_path, tex, message):
    page = PAGE.replace("a &lt; b", tex)
    (tmp_path / "bad.html").write_text(page)
    with pytest.raises(mp.MathError, match=rf"1 formulas could not be typeset:\n  bad\.html: {message}, in \$"):
        mp.prerender_book(tmp_path)
    assert (tmp_path / "bad.html").read_text() == page  # nothing half-done is written


def test_math_markup_it_cannot_read_fails_the_build(tmp_path):
    # e.g. some other element inside the div, before the TeX
    page = PAGE.replace(
        '<div class="math notranslate nohighlight">\n',
        '<div class="math notranslate nohighlight">\n<span class="note">(1)</span>',
    )
    (tmp_path / "label.html").write_text(page)
    with pytest.raises(mp.MathError, match=r"label\.html: math that could not be read: .*note"):
        mp.prerender_book(tmp_path)


def test_a_numbered_equation_keeps_its_id_number_and_permalink(tmp_path):
    # what Sphinx writes for a labelled equation ($$ ... $$ (label)), the target of {eq}
    eqno = (
        '<span class="eqno">(4.3)<a class="headerlink" href="#equation-dot" title="Link to this equation">#</a></span>'
    )
    page = PAGE.replace(
        '<div class="math notranslate nohighlight">\n',
        f'<div class="math notranslate nohighlight" id="equation-dot">\n{eqno}',
    )
    (tmp_path / "numbered.html").write_text(page)
    assert mp.prerender_book(tmp_path)["formulas"] == 3
    html = (tmp_path / "numbered.html").read_text()
    assert re.search(
        r'<div class="math notranslate nohighlight" id="equation-dot">'
        + re.escape(eqno)
        + r'<mjx-container[^>]*display="true"',
        html,
    )
    assert "\\begin{aligned}" not in html


def test_stretched_delimiters_preload_every_font_they_fall_back_to(tmp_path):
    # taller than any one glyph
    tall = "\\left(\\begin{array}{c} a \\\\ b \\\\ c \\\\ d \\\\ e \\\\ f \\end{array}\\right)"
    page = PAGE.replace("a &lt; b", tall)
    (tmp_path / "p.html").write_text(page)
    mp.prerender_book(tmp_path)
    html = (tmp_path / "p.html").read_text()
    assert "<mjx-stretchy" in html
    names = set(re.findall(r'<link rel="preload" as="font"[^>]*href="[^"]*/(MathJax_[^"]+)"', html))
    assert {"MathJax_Size1-Regular.woff", "MathJax_Size4-Regular.woff", "MathJax_AMS-Regular.woff"} <= names


def test_the_fonts_are_copied_and_nothing_left_from_older_builds_stays(tmp_path):
    stale = tmp_path / "_vendor" / "mathjax"
    (stale / "fonts" / "HTML-CSS").mkdir(parents=True)  # e.g. MathJax 2's font folder
    (stale / "startup.js").write_text("old")
    (tmp_path / "p.html").write_text(PAGE)
    mp.prerender_book(tmp_path)
    assert sorted(p.name for p in stale.iterdir()) == ["fonts"]
    assert sorted(p.name for p in (stale / "fonts").iterdir()) == sorted(p.name for p in mp.FONTS_SOURCE.iterdir())
