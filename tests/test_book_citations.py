"""book_citations: the References page labelled author-year, as the text cites."""

import pybtex.plugin
from pybtex.database import Entry, Person

from book_build import book_citations as bc


def entry(key, year, *authors):
    e = Entry("article", fields={"title": key, "year": str(year), "journal": "J"})
    e.persons["author"] = [Person(a) for a in authors]
    e.key = key
    return e


def test_labels_read_like_the_citations():
    assert bc.author_year(entry("a", 1991, "Goldberg, David")) == "Goldberg, 1991"
    assert bc.author_year(entry("b", 1997, "Hochreiter, Sepp", "Schmidhuber, J.")) == "Hochreiter & Schmidhuber, 1997"
    assert bc.author_year(entry("c", 2017, "Vaswani, A.", "Shazeer, N.", "Parmar, N.")) == "Vaswani et al., 2017"
    assert bc.author_year(entry("d", 2023, "Rozi{\\`e}re, B.", "Gehring, J.", "X, Y")) == "Rozière et al., 2023"


def test_the_style_is_registered_and_labels_are_unique():
    bc.register()
    style = pybtex.plugin.find_plugin("pybtex.style.formatting", bc.STYLE)()
    entries = [
        entry("x1", 2019, "Radford, A.", "Wu, J.", "Child, R."),
        entry("x2", 2019, "Radford, A.", "Kim, J.", "L, M"),
    ]
    labels = list(style.format_labels(style.sort(entries)))
    assert sorted(labels) == ["Radford et al., 2019a", "Radford et al., 2019b"]
