"""book_timing: the baselines are the page as Sphinx wrote it, with only a MathJax head added."""

import json

import pytest

from book_build import book_timing

TEX_PAGE = (
    '<head><script src="x.js"></script>\n</head><body><span class="math notranslate nohighlight">\\(x\\)</span></body>'
)


@pytest.mark.parametrize(
    "version, script",
    [
        ("MathJax 3", '<script defer="defer" src="/_mathjax3/startup.js">'),
        ("MathJax 2", '<script async="async" src="/_mathjax2/MathJax.js?'),
    ],
)
def test_a_mathjax_head_is_added_and_nothing_else_changes(version, script):
    out = book_timing.tex_page(TEX_PAGE, version)
    head, body = out.split("</head>")
    assert head.startswith('<head><script src="x.js"></script>\n') and script in head
    assert body == '<body><span class="math notranslate nohighlight">\\(x\\)</span></body>'


def test_both_baselines_typeset_the_same_elements_the_book_marks_as_math():
    mj3 = book_timing.MATHJAX3_CONFIG["options"]["processHtmlClass"]
    mj2 = book_timing.MATHJAX2_CONFIG["tex2jax"]["processClass"]
    assert mj3 == mj2 and "math" in mj3.split("|")
    assert json.loads(json.dumps(book_timing.MATHJAX3_CONFIG)) == book_timing.MATHJAX3_CONFIG  # goes into the page


def test_a_page_without_one_head_is_refused():
    with pytest.raises(ValueError, match="found 0"):
        book_timing.tex_page("<body></body>", "MathJax 3")
