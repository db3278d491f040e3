"""The whole book as one PDF: the single-page build of the book, printed by Chromium.

    make pdf      # jupyter-book build . --builder singlehtml, then: python -m book_build.book_pdf

The single-page build holds every page of the table of contents in order (the
introduction with its contents list, the chapters, practice and answers, the
appendix, the references), typeset and with the figures of the HTML book. It is
served on 127.0.0.1 and printed with the book's print style sheets (book.css:
code and outputs wrap, quizzes carry their answers) after a cover page is put
in front. The PDF goes to ``_build/html/_downloads/``, and every page of the
HTML book gets an entry for it in its download menu, next to the theme's
"print this page".
"""

from __future__ import annotations

import datetime
import html
import os
import re
import shutil
import sys
from pathlib import Path

from book_build import download_menu
from book_build.book_server import CHROMIUM_ARGS, serve

ROOT = Path(__file__).resolve().parent.parent
SINGLE = ROOT / "_build" / "singlehtml"
HTML = ROOT / "_build" / "html"
PDF_NAME = "positional-encoding-in-transformers.pdf"
TARGET = HTML / "_downloads" / PDF_NAME

COVER = """([title, author, date]) => {
  const cover = document.createElement('section');
  cover.id = 'book-cover';
  cover.style.cssText = 'break-after: page; padding-top: 30vh; text-align: center';
  // (no h1 here: the book theme's print style hides an article's first h1, taken for the page's title)
  cover.innerHTML = `<p style="font-size: 2.4em; font-weight: 600">${title}</p>`
                  + `<p style="font-size: 1.2em">${author}</p><p>${date}</p>`;
  // the contents: every page of the book (its first heading), linked
  const contents = document.createElement('nav');
  contents.id = 'book-contents';
  contents.style.cssText = 'break-after: page';
  // (each page of the book starts at a marker <span id="document-NAME"> followed by its section)
  const items = [...document.querySelectorAll('span[id^="document-"] + section')].map(section => {
    const h = section.querySelector('h1, h2'), text = h ? h.textContent.replace(/#$/, '').trim() : section.id;
    return `<li><a href="#${section.id}">${text}</a></li>`;
  });
  contents.innerHTML = '<h2>Contents</h2><ol style="list-style: none; padding-left: 0; line-height: 1.8">'
                     + items.join('') + '</ol>';
  const article = document.querySelector('main#main-content article') || document.body;
  article.prepend(contents);
  article.prepend(cover);
  return items.length;
}"""

# figures load lazily (book_figures.py): on paper every one must be there
EVERY_FIGURE = """async () => {
  const figures = [...document.images].filter(img => !img.classList.contains('only-dark'));
  for (const img of figures) img.loading = 'eager';
  await Promise.all(figures.map(img => img.decode().catch(() => null)));
}"""

FOOTER = (
    '<div style="font-size: 8px; width: 100%; text-align: center; color: #555">'
    '<span class="pageNumber"></span> / <span class="totalPages"></span></div>'
)


def book_title() -> tuple[str, str]:
    import yaml

    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    return str(config.get("title", "")), str(config.get("author", ""))


def print_book(source: Path = SINGLE, target: Path = TARGET, style: str = "") -> dict:
    """Print ``source/intro.html`` (the root page, holding the whole book) to ``target``; returns {"pages", "bytes"}.
    ``style``: CSS added to the page before it is printed (the tests print the book without a print rule)."""
    from playwright.sync_api import sync_playwright

    if not (source / "intro.html").is_file():
        raise FileNotFoundError(
            f"{source / 'intro.html'} is missing: build it first (jupyter-book build . --builder singlehtml)"
        )
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        raise RuntimeError("Chromium is needed to print the book (Debian: apt-get install chromium)")
    target.parent.mkdir(parents=True, exist_ok=True)
    title, author = book_title()
    built = int(os.environ.get("SOURCE_DATE_EPOCH", (source / "intro.html").stat().st_mtime))
    date = datetime.date.fromtimestamp(built)
    with serve(source) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 794, "height": 1123})
        page.emulate_media(media="print")
        page.goto(base + "intro.html", wait_until="load", timeout=120_000)
        page.evaluate("() => document.fonts.ready.then(() => true)")
        page.evaluate(EVERY_FIGURE)
        if style:
            page.add_style_tag(content=style)
        chapters = page.evaluate(COVER, [html.escape(title), html.escape(author), date.isoformat()])
        # (no outline: Chromium writes one only for a tagged PDF, 3.4 times the size, and from h1 headings only,
        # which the single-page build gives to the book's title alone; the contents page links every page)
        page.pdf(
            path=str(target),
            format="A4",
            print_background=True,
            display_header_footer=True,
            header_template="<span></span>",
            footer_template=FOOTER,
            margin={"top": "16mm", "bottom": "18mm", "left": "14mm", "right": "14mm"},
        )
        browser.close()
    data = target.read_bytes()
    return {"pages": len(re.findall(rb"/Type\s*/Page[^s]", data)), "bytes": len(data), "contents": chapters}


# A printed page is scanned at this resolution: enough to tell a shaded frame, text and white paper apart.
SCAN_DPI = 20
FOOTER_SHARE = 0.05  # the bottom of a page that holds its number, below the content
SHADED = (225, 252)  # grey levels of a code frame's background (white paper is 255, text darker than 215)
EMPTY_LIMIT = 0.10  # an empty frame taller than this share of the page is reported


def empty_frame_share(gray) -> float:
    """How much of a printed page (``gray``: its pixels, 0 black to 255 white, one row per line of pixels) is an
    empty frame at the foot of its content: rows of shaded background with no text, from the last inked row up.

    A cell broken before its first line leaves such a frame; the bottom padding of a frame with lines in it is
    a few rows, well under a tenth of the page."""
    import numpy as np

    gray = np.asarray(gray)
    body = gray[: int(len(gray) * (1 - FOOTER_SHARE))]
    inked = np.flatnonzero((body < SHADED[1]).any(axis=1))
    if inked.size == 0:
        return 0.0
    width, rows = body.shape[1], 0
    for row in body[inked[-1] :: -1]:
        shaded = np.count_nonzero((row >= SHADED[0]) & (row < SHADED[1]))
        text = np.count_nonzero(row < 215)
        if shaded < width / 2 or text > 2:  # (2: the frame's own left border)
            break
        rows += 1
    return rows / len(gray)


def empty_frames(pdf: Path, limit: float = EMPTY_LIMIT) -> list[tuple[int, float]]:
    """The pages of ``pdf`` (numbered from 1) that end in an empty frame taller than ``limit`` of the page, with
    its share of the page."""
    import numpy as np
    import pypdfium2

    document = pypdfium2.PdfDocument(str(pdf))
    try:
        found = []
        for n in range(len(document)):
            image = document[n].render(scale=SCAN_DPI / 72).to_pil().convert("L")
            share = empty_frame_share(np.asarray(image))
            if share > limit:
                found.append((n + 1, round(share, 3)))
        return found
    finally:
        document.close()


def offer_in_menus(html_dir: Path = HTML, pdf: Path = TARGET) -> int:
    """Add the whole-book PDF to the download menu of every page of the HTML book; returns how many pages."""
    return sum(
        download_menu.offer(page, href=os.path.relpath(pdf, page.parent).replace(os.sep, "/"), **download_menu.PDF)
        for page in html_dir.rglob("*.html")
    )


def main(argv: list[str]) -> int:
    result = print_book()
    pages = offer_in_menus()
    for page, share in empty_frames(TARGET):
        print(f"warning: page {page} ends in an empty code frame ({share:.0%} of the page)")
    print(
        f"The whole book: {TARGET} ({result['pages']} pages, {result['bytes'] / 1e6:.1f} MB, "
        f"{result['contents']} entries in its contents); "
        f"offered in the download menu of {pages} pages"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
