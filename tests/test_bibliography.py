"""references.bib and the citations in the book's sources agree.

Every ``{cite}`` key used in a page is an entry of references.bib, every entry
is cited somewhere (the bibliography page lists only cited entries), and each
entry says who, what, when and where. That the built pages link each citation
to its entry is checked on the build in tests/test_book.py.
"""

import re
from pathlib import Path

import nbformat
import pytest
from pybtex.database import parse_file

ROOT = Path(__file__).resolve().parent.parent
BIB = ROOT / "references.bib"

# {cite}`a,b`, {cite:p}`a`, {cite:t}`a`, {cite:ps}`a` ...
CITE = re.compile(r"\{cite(?::[a-z]+)?\}`([^`]*)`")


def cited_keys(text: str) -> list[str]:
    return [key.strip() for group in CITE.findall(text) for key in group.split(",") if key.strip()]


def sources() -> dict[str, str]:
    """The text of every page the book is built from: markdown files and notebook markdown cells."""
    pages = [*ROOT.glob("*.md"), *ROOT.glob("appendix/*.md")]
    texts = {str(p.relative_to(ROOT)): p.read_text() for p in pages if p.name != "README.md"}
    for folder in ("chapters", "appendix", "solutions", "exercises"):
        for path in sorted((ROOT / folder).glob("*.ipynb")):
            nb = nbformat.read(path, as_version=4)
            texts[str(path.relative_to(ROOT))] = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    return texts


@pytest.fixture(scope="module")
def bib():
    return parse_file(str(BIB), bib_format="bibtex")


@pytest.fixture(scope="module")
def citations():
    return {page: cited_keys(text) for page, text in sources().items()}


def test_cite_pattern_reads_every_role_form():
    text = "as {cite}`a2017` and {cite:t}`b2019, c2020` showed; not `d2021` or {ref}`e`"
    assert cited_keys(text) == ["a2017", "b2019", "c2020"]


def test_every_cited_key_is_in_references_bib(bib, citations):
    missing = {page: sorted(set(keys) - set(bib.entries)) for page, keys in citations.items()}
    missing = {page: keys for page, keys in missing.items() if keys}
    assert not missing, f"cited but not in references.bib: {missing}"


def test_every_entry_is_cited(bib, citations):
    used = {key for keys in citations.values() for key in keys}
    assert used, "no page cites anything"
    unused = sorted(set(bib.entries) - used)
    assert not unused, f"entries of references.bib no page cites (cite them or remove them): {unused}"


def test_every_chapter_cites_its_sources(citations):
    for page, keys in citations.items():
        if page.startswith("chapters/"):
            assert keys, f"{page} cites nothing"


def test_every_entry_says_who_what_when_where(bib):
    for key, entry in bib.entries.items():
        fields = entry.fields
        assert entry.persons.get("author"), f"{key}: no author"
        assert fields.get("title"), f"{key}: no title"
        assert re.fullmatch(r"(19|20)\d\d", fields.get("year", "")), f"{key}: year {fields.get('year')!r}"
        where = {"journal", "booktitle", "institution", "howpublished", "url", "note"} & set(fields)
        assert where, f"{key}: nowhere to find it (journal, booktitle, url ...)"
        if "url" in fields:
            assert fields["url"].startswith("https://"), f"{key}: url {fields['url']!r}"


def test_a_key_that_names_a_year_names_the_entrys_year(bib):
    """A key such as ``vaswani2017`` promises the year; a reader citing by key should not meet another one."""
    wrong = {
        key: entry.fields.get("year")
        for key, entry in bib.entries.items()
        if (named := re.search(r"(?<!\d)(?:19|20)\d\d(?!\d)", key)) and named.group(0) != entry.fields.get("year")
    }
    assert not wrong, f"keys whose year is not the entry's year (rename the key and its citations): {wrong}"
