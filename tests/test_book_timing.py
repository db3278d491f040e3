"""book_timing: the MathJax 2 baseline is the same page with only its MathJax head swapped."""

import json

import pytest

import book_assets
import book_timing

MATHJAX3_PAGE = (
    '<head><script src="x.js"></script>\n'
    f'    <script>window.MathJax = {json.dumps(book_assets.MATHJAX3_CONFIG)}</script>\n'
    '    <script defer="defer" src="../_static/../_vendor/mathjax/startup.js?v=4ba68244"></script>\n'
    '</head><body><span class="math">\\(x\\)</span></body>'
)


def test_mathjax3_head_is_replaced_by_mathjax2_and_nothing_else_changes():
    out = book_timing.with_mathjax2(MATHJAX3_PAGE)
    assert "window.MathJax" not in out and "startup.js" not in out
    assert 'src="../_static/../_mathjax2/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"' in out
    assert "MathJax.Hub.Config(" in out
    config = json.loads(out.split("MathJax.Hub.Config(", 1)[1].split(")</script>", 1)[0])
    assert config["tex2jax"]["processClass"] == book_assets.MATHJAX3_CONFIG["options"]["processHtmlClass"]
    assert out.startswith('<head><script src="x.js"></script>')
    assert out.endswith('</head><body><span class="math">\\(x\\)</span></body>')


def test_a_page_without_mathjax3_is_refused():
    with pytest.raises(ValueError, match="found 0"):
        book_timing.with_mathjax2("<head></head>")
