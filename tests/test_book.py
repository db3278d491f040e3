"""The whole book builds with warnings as errors, and every page is there.

The strict build is made before the tests (``make book-strict``: book_build/strict_build.py); they read its outcome.
"""

import html
import re
import unicodedata
from pathlib import Path

import pytest

from book_build.strict_build import HTML, ROOT, toc_pages
from posenc_course import explorers
from tests.support.book import strict_build


def toc_files():
    return toc_pages()


@pytest.fixture(scope="module")
def build():
    return strict_build()


def test_book_builds_without_warnings(build):
    assert build["returncode"] == 0, build["stdout"][-4000:] + build["stderr"][-4000:]


@pytest.mark.parametrize("page", toc_files())
def test_every_toc_page_is_built(build, page):
    path = HTML / f"{page}.html"
    assert path.exists(), f"{path} missing"
    html = path.read_text()
    assert "Traceback (most recent call last)" not in html


@pytest.mark.parametrize(
    "page", [p for p in toc_files() if p.startswith(("chapters/", "appendix/")) and (ROOT / f"{p}.ipynb").exists()]
)
def test_chapter_figures_are_rendered(build, page):
    """Figures are vector graphics (SVG), each with its dark twin (book_build/book_figures.py), no raster; every
    notebook page has one (Appendix B, a Markdown table of claims, has none to render)."""
    html = (HTML / f"{page}.html").read_text()
    images = re.findall(r'<img[^>]+src="([^"]*_images/[^"]+)"', html)
    light = [s for s in images if s.endswith(".svg") and not s.endswith(".dark.svg")]
    assert light, f"{page} has no rendered figure"
    assert not [s for s in images if not s.endswith(".svg")], f"raster figures on {page}"
    assert sorted(images) == sorted(light + [s.removesuffix(".svg") + ".dark.svg" for s in light])
    for src in images:
        assert (HTML / page).parent.joinpath(src).resolve().exists(), src


@pytest.mark.parametrize("page", [p for p in toc_files() if p.startswith("chapters/")])
def test_chapter_links_to_its_exercises_and_solutions(build, page):
    html = (HTML / f"{page}.html").read_text()
    name = page.split("/")[1]
    assert f'href="../exercises/{name}_exercises.html"' in html
    assert f'href="../solutions/{name}_solutions.html"' in html
    assert (HTML / "exercises" / f"{name}_exercises.html").exists()


PAGES_WITHOUT_MATH = {"bibliography", "how_to_take_this_course", "changelog"}


@pytest.mark.parametrize("page", toc_files())
def test_page_arrives_typeset_and_loads_nothing_it_does_not_use(build, page):
    """book_assets.py: math typeset at build time, no MathJax script, no Font Awesome script, no widget
    state, no link to an index."""
    html = (HTML / f"{page}.html").read_text()
    assert "mathjax" not in " ".join(re.findall(r"<script\b[^>]*>", html)).lower()
    assert "window.MathJax =" not in html
    math = re.findall(r'<(?:span|div) class="math notranslate nohighlight">(.{0,40})', html, re.S)
    assert bool(math) == (page not in PAGES_WITHOUT_MATH), f"{page}: {len(math)} formulas"
    # (an opening bracket before an inline formula is kept in its span: math_prerender.py)
    unrendered = [m for m in math if not re.match(r"[(\[]?<mjx-container", m)]
    assert not unrendered, unrendered[:3]
    assert "<mjx-merror" not in html
    head = html.split("</head>")[0]
    assert head.count('<style id="mathjax-chtml">') == bool(math)  # a page without math gets no math CSS
    for font in re.findall(r'url\("([^"]+\.woff)"\)', head):
        assert (HTML / page).parent.joinpath(font).resolve().exists(), font
    assert "fontawesome.js" not in html
    assert "application/vnd.jupyter.widget-state+json" not in html
    assert "genindex.html" not in html
    if math:
        kept = ROOT / "_build" / "html-tex" / f"{page}.html"  # what make bench times browser-side MathJax on
        assert '<span class="math notranslate nohighlight">\\(' in kept.read_text()


@pytest.mark.parametrize("page", [p for p in toc_files() if p.startswith("solutions/")])
def test_answers_page_code_has_no_solution_markers(build, page):
    html = re.sub(r"<!--.*?-->", "", (HTML / f"{page}.html").read_text(), flags=re.S)  # comments are not shown
    assert "BEGIN SOLUTION" not in html and "END SOLUTION" not in html
    assert "assert_all_correct" not in html  # the maintainers' final check is hidden (remove-cell)
    source = (ROOT / f"{page}.ipynb").read_text()
    assert "# BEGIN SOLUTION" in source  # the generator still has its markers


def explorer_cells(page: str) -> int:
    """How many code cells of the page's notebook display an explorer (book_assets.explorer_call)."""
    import json

    from book_build import book_assets

    path = ROOT / f"{page}.ipynb"
    if not path.exists():
        return 0
    cells = json.loads(path.read_text())["cells"]
    return sum(c["cell_type"] == "code" and book_assets.explorer_call("".join(c["source"])) is not None for c in cells)


@pytest.mark.parametrize("page", [p for p in toc_files() if explorer_cells(p)])
def test_every_explorer_cell_shows_its_explorer(build, page):
    """Executed or not (the exercises are not), a cell displaying an explorer shows it live on its page."""
    html = (HTML / f"{page}.html").read_text()
    shown = len(re.findall(r'<div class="posenc-explorer" data-spec=', html))
    assert shown == explorer_cells(page), f"{page}: {shown} explorers for {explorer_cells(page)} explorer cells"
    assert html.count(explorers.RENDERER_SCRIPT) == 1  # one copy of the module mounts every explorer of the page


def test_every_page_shows_the_course_version_linked_to_the_page_of_versions(build):
    """book_assets.course_version_in_footer: the version of pyproject.toml at the foot of every page."""
    import tomllib

    from book_build import book_assets

    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    for page in toc_files():
        html = (HTML / f"{page}.html").read_text()
        # (Sphinx's link from a page to itself is "#": on the page of versions, the version points at its top)
        versions = "../" * page.count("/") + f"{book_assets.VERSIONS_PAGE}.html"
        link = "#" if page == book_assets.VERSIONS_PAGE else versions
        assert f'<p class="course-version">Course version <a href="{link}">{version}</a></p>' in html, page


def test_every_citation_links_to_its_entry(build):
    """Each {cite} became a link to an entry on the bibliography page, and that page lists every entry."""
    from pybtex.database import parse_file

    entries = parse_file(str(ROOT / "references.bib"), bib_format="bibtex").entries
    bibliography = (HTML / "bibliography.html").read_text()
    listed = re.findall(r'<div class="citation" id="(id\d+)"', bibliography)
    assert len(re.findall(r'<div class="citation" id="id\d+" role="listitem">', bibliography)) == len(listed)
    assert len(listed) == len(entries), f"{len(listed)} entries listed, {len(entries)} in references.bib"
    links = 0
    for page in toc_files():
        html = (HTML / f"{page}.html").read_text()
        assert "{cite" not in html, f"{page}: a citation role was not parsed"
        for anchor in re.findall(r'href="(?:\.\./)?bibliography\.html#(id\d+)"', html):
            assert anchor in listed, f"{page}: citation points at #{anchor}, not an entry"
            links += 1
    assert links >= len(entries)


@pytest.mark.parametrize("page", [p for p in toc_files() if (ROOT / f"{p}.ipynb").exists()])
def test_the_colab_install_cell_is_not_shown(build, page):
    """Readers of the book need no install: the first cell (tools/colab_cell.py) is tagged remove-cell. (Its title
    line, as the page would show it; the quizzes' script names google.colab for a reason of its own.)"""
    import html

    from tools.colab_cell import HEADER

    title = HEADER.splitlines()[0].removeprefix("#@title ")
    assert title not in html.unescape((HTML / f"{page}.html").read_text())


# --------------------------------------------------------------------------
# The whole-book PDF (make pdf: book_build/book_pdf.py)
# --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def whole_book(build, tmp_path_factory):
    """The single-page build (after the strict HTML build: its execution cache is warm), printed to a PDF."""
    import concurrent.futures
    import subprocess
    import sys

    from book_build import book_pdf

    assert build["returncode"] == 0, "the HTML book did not build"
    single = subprocess.run(
        [str(Path(sys.executable).parent / "jupyter-book"), "build", str(ROOT), "--builder", "singlehtml"],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert single.returncode == 0, single.stdout[-3000:] + single.stderr[-3000:]
    target = tmp_path_factory.mktemp("pdf") / book_pdf.PDF_NAME
    # in a thread of its own: where the browser tests ran first in this process, their session's Chromium
    # (Playwright's sync API) holds an event loop in this thread, and a second sync Playwright refuses to start
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        result = pool.submit(book_pdf.print_book, target=target).result()
    return {**result, "path": target}


def test_the_whole_book_prints_with_a_cover_contents_and_every_page(whole_book):
    from pypdf import PdfReader

    reader = PdfReader(whole_book["path"])
    pages = toc_files()
    assert len(reader.pages) == whole_book["pages"] >= 5 * len(pages)
    assert whole_book["contents"] == len(pages) - 1  # every page after the introduction, which opens the book
    first = " ".join(reader.pages[0].extract_text().split())
    assert "Positional Encoding in Transformers" in first and "Contents" not in first  # the cover
    # (NFKC: the PDF's text has the font's ligatures, "ﬁ" for "fi")
    contents = unicodedata.normalize("NFKC", " ".join(" ".join(reader.pages[n].extract_text().split()) for n in (1, 2)))
    assert contents.startswith("Contents")
    # each page's own title, as its <title> gives it ("<title> &#8212; <book>")
    titles = [
        html.unescape(re.search(r"<title>(.*?)</title>", (HTML / f"{p}.html").read_text(), re.S).group(1))
        .split(" \u2014 ")[0]
        .strip()
        for p in pages[1:]
    ]
    assert len(titles) == len(pages) - 1
    missing = [t for t in titles if t.split(":")[0][:30] not in contents]
    assert not missing, f"pages missing from the PDF's contents: {missing}"
    print(f"whole-book PDF: {len(reader.pages)} pages, {whole_book['bytes'] / 1e6:.1f} MB")


def _print_with_a_long_line(page_path: str, line: str, target: Path) -> str:
    """Chapter ``page_path`` of the HTML book, its first code cell given ``line`` as one more line, printed to
    ``target`` as the whole book is (A4, its margins, the print style sheets); the PDF's text."""
    import shutil

    from playwright.sync_api import sync_playwright
    from pypdf import PdfReader

    from book_build.book_server import CHROMIUM_ARGS, serve

    with serve(HTML) as base, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 794, "height": 1123})
        page.emulate_media(media="print")
        page.goto(base + page_path, wait_until="load")
        page.evaluate("line => document.querySelector('.cell_input pre').append('\\n' + line)", line)
        page.pdf(path=str(target), format="A4", margin={"left": "14mm", "right": "14mm"})
        browser.close()
    return "".join(printed.extract_text() for printed in PdfReader(target).pages)


def test_printed_code_wraps_instead_of_being_cut(build, tmp_path):
    """Every code line of the book fits the screen's column (tests/test_code_width.py), so none needs wrapping on
    paper today; a longer one, planted in chapter 4's page, is printed whole, wrapped, not cut at the margin."""
    import concurrent.futures

    assert build["returncode"] == 0, "the HTML book did not build"
    line = "print(" + " + ".join(f"offset_{n:02d}" for n in range(16)) + ")  # longer than any column"
    assert len(line) > 120
    # in a thread of its own: a browser test may hold Playwright's sync event loop in this one
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        text = pool.submit(_print_with_a_long_line, "chapters/04_linearity.html", line, tmp_path / "04.pdf").result()
    printed = text[text.index("print(offset_00") :]
    assert re.sub(r"\s+", "", line) in re.sub(r"\s+", "", text)  # whole
    assert "\n" in printed[: printed.index("column")]  # on more than one line: wrapped


def test_the_download_menu_offers_the_whole_book(build, tmp_path):
    from book_build import book_pdf

    page = tmp_path / "chapters" / "04.html"
    page.parent.mkdir()
    page.write_text((HTML / "chapters" / "04_linearity.html").read_text())
    pdf = tmp_path / "_downloads" / book_pdf.PDF_NAME
    assert book_pdf.offer_in_menus(tmp_path, pdf) == 1
    assert 'href="../_downloads/positional-encoding-in-transformers.pdf" download' in page.read_text()
    assert book_pdf.offer_in_menus(tmp_path, pdf) == 0  # once


def test_the_book_hands_out_the_kit_and_the_wheel_where_its_pages_link_them(build):
    import zipfile

    from book_build import book_kit

    kit, wheel = HTML / book_kit.DOWNLOADS / book_kit.KIT_ZIP, HTML / book_kit.DOWNLOADS / book_kit.wheel_name()
    with zipfile.ZipFile(kit) as z:
        assert z.read(f"{book_kit.KIT}/{wheel.name}") == wheel.read_bytes()
    page = HTML / "how_to_take_this_course.html"
    links = set(re.findall(r'href="(_downloads/[^"]+)"', page.read_text()))
    assert links == {f"_downloads/{kit.name}", f"_downloads/{wheel.name}"}
    for link in links:
        assert (page.parent / link).is_file(), link
    for folder in ("exercises", "solutions"):
        for practice in sorted((HTML / folder).glob("*.html")):
            assert f'href="../_downloads/{kit.name}" download' in practice.read_text(), practice.name


def test_each_pages_download_menu_gives_its_own_name_the_one_the_kit_has(build):
    """The theme's entry for a page's source (``.ipynb``, ``.md``): no two pages give one file name, and a
    notebook's is the name of the kit's copy, at the page's path."""
    import zipfile

    from book_build import book_kit

    with zipfile.ZipFile(HTML / book_kit.DOWNLOADS / book_kit.KIT_ZIP) as z:
        in_kit = {name.removeprefix(f"{book_kit.KIT}/") for name in z.namelist()}
    names = {}
    for page in toc_files():
        found = re.findall(r'<a href="(?:\.\./)*_sources/([^"]+)"', (HTML / f"{page}.html").read_text())
        assert len(found) == 1, (page, found)
        names[page] = found[0].rsplit("/", 1)[-1]
        if found[0].endswith(".ipynb"):
            assert found[0] == f"{page}.ipynb" and found[0] in in_kit, (page, found[0])
    assert len(set(names.values())) == len(names), sorted(names.values())


# the theme's print look, which book.css replaces: the frame on the cell, its code kept in one piece
FRAME_ON_THE_CELL = """@media print {
  .bd-content div.cell > div.cell_input { border: 1px solid #ccc !important; border-left: 3px solid green !important;
                                          background: #f7f7f7 !important; }
  .bd-content div.cell > div.cell_input div.highlight { break-inside: avoid !important; }
  .bd-content div.cell > div.cell_input pre { border: none !important; background: none !important; }
}"""


def test_no_printed_page_ends_in_an_empty_code_frame(whole_book, tmp_path):
    """A code cell that starts near the foot of a page keeps its frame with its first lines (book.css, print);
    with the frame on the cell, as the theme draws it, the scan finds the empty frames it leaves."""
    import concurrent.futures

    from book_build import book_pdf

    assert book_pdf.empty_frames(whole_book["path"]) == []
    theirs = tmp_path / "frame-on-the-cell.pdf"
    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # (see whole_book)
        pool.submit(book_pdf.print_book, book_pdf.SINGLE, theirs, FRAME_ON_THE_CELL).result()
    found = book_pdf.empty_frames(theirs)
    assert len(found) >= 5, found
    print(f"whole-book PDF: no empty code frame; with the frame on the cell, {len(found)} pages end in one")


def machine_paths(text: str) -> list[str]:
    """The places in ``text`` that name a folder of the machine that built the book: the repository, the home
    folder, the temporary folder (a warning's file name, a progress file's path)."""
    import tempfile

    folders = {str(ROOT), str(Path.home()), tempfile.gettempdir()}
    return sorted({m.group(0) for folder in folders for m in re.finditer(re.escape(folder) + r"/[^\s<\"']*", text)})


def test_the_path_scan_finds_planted_paths():
    planted = f"<pre>{ROOT}/src/posenc_course/plotting.py:59: UserWarning</pre> saved in {Path.home()}/x.json"
    assert machine_paths(planted) == sorted([f"{ROOT}/src/posenc_course/plotting.py:59:", f"{Path.home()}/x.json"])
    assert machine_paths("~/.posenc-course/progress.json, the file $POSENC_PROGRESS names") == []


@pytest.mark.parametrize("page", toc_files())
def test_no_page_names_a_folder_of_the_machine_that_built_it(build, page):
    assert machine_paths((HTML / f"{page}.html").read_text()) == []
