"""Cross-references in the book's text are links the strict build checks, never typed numbers.

A reference to another part of the book is a MyST role (``{ref}``, ``{numref}``, ``{eq}``)
or, in the practice notebooks that learners open in Jupyter, a Markdown link to the
chapter's notebook. The numbers themselves come from Sphinx: the Chapters part of the
table of contents is numbered, so headings carry no typed numbers that could drift.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted([*ROOT.glob("chapters/*.ipynb"), *ROOT.glob("appendix/*.ipynb"), *ROOT.glob("solutions/*.ipynb")])
PAGES = [ROOT / "intro.md", ROOT / "how_to_take_this_course.md", ROOT / "bibliography.md", *ROOT.glob("appendix/*.md")]

# What is not prose: code, math, roles, links, comments, labels, headings and directive lines.
NOT_PROSE = re.compile(
    r"```.*?```|\{[a-z:-]+\}`[^`]*`|`[^`]*`|\$\$.*?\$\$|\$[^$\n]*\$|\[[^\]]*\]\([^)]*\)"
    r"|<!--.*?-->|^\([\w-]+\)=$|^#+ .*?$|^:::.*?$",
    re.S | re.M,
)
PLAIN_REFERENCE = re.compile(
    r"\b(?:chapters?|sections?|figures?|fig\.|equations?|eq\.|appendix)\s+(?:\d|[A-Z]\b)", re.I
)
ROLE_TARGET = re.compile(r"\{(ref|numref|eq)\}`(?:[^`<]*<)?([^`<>]+)>?`")


def markdown(path: Path) -> list[tuple[str, str]]:
    """(where, text) of every Markdown cell of a notebook, or of a page."""
    if path.suffix == ".md":
        return [(path.name, path.read_text(encoding="utf-8"))]
    cells = nbformat.read(path, as_version=4).cells
    return [(f"{path.relative_to(ROOT)} cell {n}", c.source) for n, c in enumerate(cells) if c.cell_type == "markdown"]


def prose(text: str) -> str:
    return NOT_PROSE.sub(" ", text)


def all_text():
    for path in [*NOTEBOOKS, *PAGES]:
        yield from markdown(path)


def targets() -> set[str]:
    """Every label, figure name and equation label the book defines."""
    found = set()
    for path in [*NOTEBOOKS, *PAGES, *ROOT.glob("*.md")]:
        for _, text in markdown(path):
            found |= set(re.findall(r"^\(([\w-]+)\)=$", text, re.M))
            found |= set(re.findall(r"^\$\$\s*\(([\w-]+)\)\s*$", text, re.M))
            found |= set(re.findall(r"^:name:\s*([\w-]+)\s*$", text, re.M))
        if path.suffix == ".ipynb":
            for cell in nbformat.read(path, as_version=4).cells:
                name = cell.get("metadata", {}).get("mystnb", {}).get("figure", {}).get("name")
                if name:
                    found.add(name)
    return found


def test_the_pattern_finds_plain_references_and_spares_links():
    assert PLAIN_REFERENCE.search(prose("as chapter 4 shows")) and PLAIN_REFERENCE.search(prose("see Section 6.1"))
    assert PLAIN_REFERENCE.search(prose("Figure 2 shows")) and PLAIN_REFERENCE.search(prose("Appendix A says"))
    for linked in [
        "{ref}`chapter 4 <ch-4>`",
        "[chapter 4](../chapters/04_linearity.ipynb)",
        "{numref}`Figure %s <fig-4-1>`",
        "`chapter 4`",
        "$section 2$",
    ]:
        assert not PLAIN_REFERENCE.search(prose(linked)), linked


@pytest.mark.parametrize("path", [*NOTEBOOKS, *PAGES], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_plain_text_reference(path):
    found = [
        f"{where}: {m.group(0)!r}" for where, text in markdown(path) for m in PLAIN_REFERENCE.finditer(prose(text))
    ]
    assert not found, "make these {ref}/{numref}/{eq} links (or Markdown links to the notebook):\n" + "\n".join(found)


def test_every_role_points_at_a_target_the_book_defines():
    known = targets()
    missing = [
        f"{where}: {kind} {target}"
        for where, text in all_text()
        for kind, target in ROLE_TARGET.findall(text)
        if target not in known
    ]
    assert not missing, "\n".join(missing)


def test_the_chapters_are_numbered_by_sphinx_not_by_hand():
    parts = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))["parts"]
    chapters = next(part for part in parts if part["caption"] == "Chapters")
    assert chapters.get("numbered") is True
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["sphinx"]["config"]
    assert config["numfig"] is True and config["math_numfig"] is True
    for path in ROOT.glob("chapters/*.ipynb"):
        for where, text in markdown(path):
            typed = re.findall(r"^#+ \d+(?:\.\d+)*\.? .*$", text, re.M)
            assert not typed, f"{where}: {typed} (Sphinx numbers headings)"
