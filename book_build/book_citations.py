"""The References page in the style the citations use, and each entry's way back to the text.

Citations in the text read author-year (``bibtex_reference_style: author_year``): "Vaswani et al.
[2017]". Sphinxcontrib-bibtex's styles label the list with numbers or with alpha keys; the
``course_author_year`` style labels each entry the way it is cited ("Vaswani et al., 2017",
with a, b, ... when two entries would share a label) and keeps plain's order, by author, year
and title. ``cited_in`` adds to every entry the pages that cite it (sphinxcontrib-bibtex links
back only from the page that holds the list).
"""

from __future__ import annotations

from docutils import nodes
from pybtex.plugin import register_plugin
from pybtex.richtext import Text
from pybtex.style.formatting.plain import Style as PlainStyle
from pybtex.style.labels import BaseLabelStyle

STYLE = "course_author_year"
BIBLIOGRAPHY_PAGE = "bibliography"


def author_year(entry) -> str:
    """``Last``, ``Last & Other`` or ``Last et al.``, then the year."""
    persons = entry.persons.get("author") or entry.persons.get("editor") or []
    names = [Text.from_latex(" ".join(p.prelast_names + p.last_names)).render_as("text") for p in persons]
    if not names:
        who = entry.fields.get("organization", entry.key)
    elif len(names) == 1:
        who = names[0]
    elif len(names) == 2:
        who = f"{names[0]} & {names[1]}"
    else:
        who = f"{names[0]} et al."
    return f"{who}, {entry.fields.get('year', 'n.d.')}"


class AuthorYearLabels(BaseLabelStyle):
    def format_labels(self, sorted_entries):
        entries = list(sorted_entries)
        labels = [author_year(entry) for entry in entries]
        for n, label in enumerate(labels):
            same = [m for m, other in enumerate(labels) if other == label]
            yield label if len(same) == 1 else label + "abcdefghijklmnopqrstuvwxyz"[same.index(n)]


class AuthorYearStyle(PlainStyle):
    default_label_style = STYLE


def register() -> None:
    register_plugin("pybtex.style.labels", STYLE, AuthorYearLabels)
    register_plugin("pybtex.style.formatting", STYLE, AuthorYearStyle)


def page_title(env, docname: str) -> str:
    """The page's title as the table of contents shows it, with its chapter number when it has one."""
    title = env.titles[docname].astext() if docname in env.titles else docname
    number = env.toc_secnumbers.get(docname, {}).get("")
    return f"{'.'.join(map(str, number))}. {title}" if number else title


def cited_in(app, doctree, docname) -> None:
    """After each entry of the References page, the pages that cite it, as links."""
    if docname != BIBLIOGRAPHY_PAGE:
        return
    env = app.builder.env
    domain = env.get_domain("cite")
    key_of = {citation.citation_id: citation.key for citation in domain.citations}
    pages: dict[str, list[str]] = {}
    for ref in domain.citation_refs:
        for target in ref.targets:
            pages.setdefault(target.key, [])
            if ref.docname not in pages[target.key]:
                pages[target.key].append(ref.docname)
    order = {name: n for n, name in enumerate(env.toctree_includes.get(env.config.root_doc, []))}
    for citation in doctree.findall(nodes.citation):
        key = next((key_of[i] for i in citation["ids"] if i in key_of), None)
        citing = sorted(pages.get(key, []), key=lambda d: (order.get(d, len(order)), d))
        if not citing:
            continue
        paragraph = nodes.paragraph("", "Cited in ", classes=["cited-in"])
        for n, page in enumerate(citing):
            if n:
                paragraph += nodes.Text("; ")
            paragraph += nodes.reference(
                "", page_title(env, page), internal=True, refuri=app.builder.get_relative_uri(docname, page)
            )
        paragraph += nodes.Text(".")
        citation += paragraph
