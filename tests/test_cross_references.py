"""Cross-references in the book's text are links the strict build checks, never typed numbers.

A reference to another part of the book is a MyST role (``{ref}``, ``{numref}``, ``{eq}``)
or, in the practice notebooks that learners open in Jupyter, a Markdown link to the
chapter's notebook. The numbers themselves come from Sphinx: the Chapters part of the
table of contents is numbered, so headings carry no typed numbers that could drift.
"""

from __future__ import annotations

import ast
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


LINKED_NUMBER = re.compile(r"\[[^\]]*\b(?:sections?|figures?|fig\.|equations?|eq\.)\s+\d[^\]]*\]\(", re.I)


def test_no_link_types_the_number_of_a_section_figure_or_equation():
    """A Markdown link to a notebook opens the notebook, not one of its sections, and its text is typed: a
    section's number in it goes stale when sections move ("[section 10.3.3](...)" after a split). Name the
    section in words, or use {ref}."""
    assert LINKED_NUMBER.search("as [section 10.3.3](../chapters/10_rope_in_practice.ipynb) derives")
    assert not LINKED_NUMBER.search("as [chapter 10](../chapters/10_rope_in_practice.ipynb) derives")
    found = [f"{where}: {m.group(0)}" for where, text in all_text() for m in LINKED_NUMBER.finditer(text)]
    assert not found, "typed numbers in link texts:\n" + "\n".join(found)


def test_every_role_points_at_a_target_the_book_defines():
    known = targets()
    missing = [
        f"{where}: {kind} {target}"
        for where, text in all_text()
        for kind, target in ROLE_TARGET.findall(text)
        if target not in known
    ]
    assert not missing, "\n".join(missing)


LINK = re.compile(r"\{ref\}`([^`<>]*?)\s*<([\w-]+)>`")


def misnumbered(text: str, sections: dict[str, dict]) -> list[str]:
    """The links of ``text`` whose shown number is not the number of the chapter heading they link."""
    wrong = []
    for shown, label in LINK.findall(text):
        numbers = re.findall(r"\d+(?:\.\d+)*", shown)
        if label in sections and numbers and numbers != [sections[label]["number"]]:
            wrong.append(
                f"{shown!r} links {label!r}, which is {sections[label]['number']} ({sections[label]['heading']!r})"
            )
    return wrong


def test_a_link_shows_the_number_of_the_section_it_links():
    """A link that shows a number, {ref}`section 4.9.1 <sec-4-9-1>`, shows the one Sphinx gives that heading or
    chapter, in the Markdown and in figure captions: splitting or moving a section cannot leave a link that names
    another one. (tests/test_quizzes.py checks the quizzes' links the same way.)"""
    from tests.test_quizzes import chapter_sections

    sections = chapter_sections()
    planted = "as {ref}`section 4.8.1 <sec-4-9-1>` and {ref}`chapter 4 <ch-4>` show"
    assert len(misnumbered(planted, sections)) == 1
    captions = [
        (f"{path.relative_to(ROOT)} cell {n}", text)
        for path in NOTEBOOKS
        for n, text in seen_outside_markdown(nbformat.read(path, as_version=4).cells)
    ]
    texts = [*all_text(), *captions]
    wrong = [f"{where}: {w}" for where, text in texts for w in misnumbered(text, sections)]
    assert not wrong, "\n".join(wrong)
    numbered = [s for _, text in texts for s, label in LINK.findall(text) if label in sections and re.search(r"\d", s)]
    assert len(numbered) >= 100  # the scan sees the book's links


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


# What a reader sees besides the Markdown: figure captions and alt texts, the strings code cells print, and the
# grader's texts (feedback, option explanations, nudges). Alt texts, printed strings and feedback cannot hold a link:
# there a part of the book is named by what it is ("the chapter's count of collisions"), not by a typed number.
PARENTHESISED = re.compile(r"\((?:[1-9]|1[01])\.\d{1,2}(?:\.\d{1,2})?\)")  # "(6.1)", "(9.3.3)"


def typed_references(text: str) -> list[str]:
    text = re.sub(r"\{[a-z:-]+\}`[^`]*`", " ", text)  # a caption's roles are links
    return [m.group(0) for pattern in (PLAIN_REFERENCE, PARENTHESISED) for m in pattern.finditer(text)]


def code_strings(source: str) -> list[str]:
    """The string constants of a code cell (f-strings' literal parts included); magics are skipped."""
    lines = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        return []
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def seen_outside_markdown(cells) -> list[tuple[int, str]]:
    found = []
    for n, cell in enumerate(cells):
        if cell.cell_type != "code":
            continue
        shown = cell.get("metadata", {}).get("mystnb", {})
        texts = [shown.get("figure", {}).get("caption", ""), shown.get("image", {}).get("alt", "")]
        found += [(n, text) for text in texts + code_strings(cell.source) if text]
    return found


def strings_in(obj, seen=None) -> list[str]:
    """Every string held by ``obj``, a question of the bank, through its attributes, lists and dicts."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return []
    seen.add(id(obj))
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [s for value in obj.values() for s in strings_in(value, seen)]
    if isinstance(obj, (list, tuple)):
        return [s for value in obj for s in strings_in(value, seen)]
    if type(obj).__module__.startswith(("grading", "posenc_course")) and hasattr(obj, "__dict__"):
        return [s for value in vars(obj).values() for s in strings_in(value, seen)]
    return []


def test_the_scan_finds_typed_numbers_in_captions_printed_strings_and_feedback():
    cell = nbformat.v4.new_code_cell('print(f"the raised base of (9.3.3) is {b}")')
    cell.metadata["mystnb"] = {"figure": {"caption": "the tiny model of section 9.3"}, "image": {"alt": "ok"}}
    linked = nbformat.v4.new_code_cell("x = 1", metadata={"mystnb": {"figure": {"caption": "{ref}`9.3 <sec-9-3>`"}}})
    found = [r for _, text in seen_outside_markdown([cell, linked]) for r in typed_references(text)]
    assert sorted(found) == ["(9.3.3)", "section 9"]
    from grading import QUESTIONS

    # the walk reaches what a question prints: an option's explanation, a known mistake's hint
    texts = strings_in(QUESTIONS["06.6"])
    assert any(t.startswith("bfloat16 has float32's range") for t in texts)
    assert any(t.startswith("that uses the machine epsilon") for t in strings_in(QUESTIONS["06.5"]))
    assert typed_references("as figure 8.2 shows; a value (0.5) or (12.5) is not a section") == ["figure 8"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_typed_reference_in_captions_or_printed_strings(path):
    cells = nbformat.read(path, as_version=4).cells
    found = [
        f"cell {n}: {r!r} in {text[:80]!r}" for n, text in seen_outside_markdown(cells) for r in typed_references(text)
    ]
    assert not found, "name the part of the book (or link it from a caption):\n" + "\n".join(found)


def test_no_typed_reference_in_the_graders_texts():
    from grading import QUESTIONS

    found = [
        f"{qid}: {r!r} in {s[:80]!r}"
        for qid, q in QUESTIONS.items()
        for s in strings_in(q)
        for r in typed_references(s)
    ]
    assert QUESTIONS and not found, "name the part of the book instead:\n" + "\n".join(found)
