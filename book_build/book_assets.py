"""Sphinx extension: make the HTML book self-contained, light and readable.

* The math is typeset at build time (``math_prerender.py``: MathJax 3 in
  Node.js, both from pinned PyPI packages): pages arrive with their formulas
  drawn, their style sheet inline and their web fonts served from the book's
  own output (``_vendor/mathjax/fonts``). No MathJax runs in the reader's
  browser, so Sphinx's MathJax scripts are left out of every page. Each
  written page is also kept as Sphinx wrote it, with its TeX, in
  ``_build/html-tex`` (``make bench`` times browser-side MathJax on it).
* A code cell that only displays an explorer (``from posenc_course.explorers import X``
  then ``X(...)`` with literal arguments) shows the explorer, live, also on
  pages that are not executed (the exercises): its ``text/html`` twin is
  built here, as executing the cell would, since it needs no kernel.
* The ipywidgets embedding scripts (require.js and the widget manager from a
  CDN) are not loaded: the explorers carry their own browser renderer in
  their ``text/html`` output, which the book shows instead of the widget
  view (see ``_config.yml``: ``nb_mime_priority_overrides``). The widget
  state that myst-nb would embed for them (50-160 KB a page) is dropped too.
* Font Awesome's 1.5 MB SVG-replacement script, which pydata-sphinx-theme
  loads render-blocking on every page, is removed from the written pages: the
  theme's style sheet already draws the same icons with its web fonts.
* No general index: the book has no index entries, so the page was empty.
* The bibliography's entries are list items: Sphinx writes them as
  ``role="doc-biblioentry"`` inside a ``role="list"``, which screen readers
  cannot announce as a list (axe: aria-required-children).
* The book's own ``_static/`` files reach the output whenever they change,
  also in a build that rewrites no page (Sphinx skips copying then).
* The book hands out what practice needs (``book_kit.py``): the course wheel and the practice kit
  under ``_downloads/``, the kit in every practice page's download menu.
* Solution pages show answers, not authoring markers: the ``# BEGIN SOLUTION``
  and ``# END SOLUTION`` lines (which ``make exercises`` needs in the source)
  are dropped from the code shown in ``solutions/``.

* Notebooks are executed one per core before Sphinx reads them (the
  jupyter-cache parallel executor, into the same cache myst-nb reads), which
  roughly halves a cold build on two cores; each kernel gets one thread, so
  that the kernels do not compete for the cores (``one_thread_per_kernel``).
* The execution cache is emptied when the learner-facing code the notebooks
  import changes (``learner_code``: the files of the wheel, read from
  ``pyproject.toml``), and by nothing else: jupyter-cache only looks at a
  notebook's own cells, so a fix in ``posenc``, the grader or an explorer
  would otherwise leave stale outputs in the book.

Enabled in ``_config.yml`` under ``sphinx: local_extensions``.
"""

from __future__ import annotations

import ast
import contextlib
import logging
import os
import re
import shutil
import tempfile
from fnmatch import fnmatch
from pathlib import Path

from docutils import nodes
from sphinx.util import logging as sphinx_logging

from book_build import book_figures, icon_fonts
from book_build.learner_sources import cache_stamp, code_changed_since_build, sources_digest

TEX_PAGES = "html-tex"  # next to the output directory: the pages before typesetting, for make bench
FONTAWESOME_SCRIPT = re.compile(
    r'[ \t]*<script\b[^>]*\bsrc="[^"]*_static/scripts/fontawesome\.js[^"]*"[^>]*>'
    r"</script>\n?"
)
SOLUTION_MARKER = re.compile(r"^[ \t]*# (BEGIN|END) SOLUTION[ \t]*\n?", re.M)
SOLUTION_PAGES = "solutions/"


def configure(app, config) -> None:
    config.nb_ipywidgets_js = {}
    config.html_use_index = False
    private_progress()


def private_progress() -> None:
    """The build's kernels record the solutions' answers in a fresh file of the build's own, never in the progress
    file of whoever builds the book, and its pages then name it by its variable, not by a path of this machine
    (grading.store.Store.shown_path)."""
    os.environ["POSENC_PROGRESS"] = str(Path(tempfile.mkdtemp(prefix="posenc-book-progress-")) / "progress.json")


def invalidate_stale_cache(app, config) -> None:
    root = Path(app.srcdir)
    cache = root / (config.nb_execution_cache_path or "_build/.jupyter_cache")
    app.posenc_sources_changed = code_changed_since_build(root, config.nb_execution_cache_path)
    app.posenc_sources_stamp = (cache_stamp(root, config.nb_execution_cache_path), sources_digest(root))
    if app.posenc_sources_changed and cache.exists():
        shutil.rmtree(cache)


def record_sources(app, exception) -> None:
    """Only a build that finished marks the cache as matching the sources."""
    if exception is None and hasattr(app, "posenc_sources_stamp"):
        stamp, digest = app.posenc_sources_stamp
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(digest)


def reread_notebooks(app, env, added, changed, removed) -> list:
    """After a change in the learner-facing code, every notebook must be read (and so executed) again."""
    if not getattr(app, "posenc_sources_changed", False):
        return []
    return [doc for doc in env.found_docs if str(env.doc2path(doc)).endswith(".ipynb")]


def preexecute_in_parallel(app, config) -> None:
    """Fill the execution cache with every stale notebook, in parallel.

    myst-nb executes the notebooks one after another while Sphinx reads them.
    Here the ones of the table of contents that would be executed go first,
    over a process pool, into the cache myst-nb then reads from. A notebook
    that fails here is simply not cached: myst-nb runs it again itself and
    reports the error as usual, so failures still fail the build.
    """
    if config.nb_execution_mode != "cache" or (os.cpu_count() or 1) < 2:
        return
    from jupyter_cache import get_cache
    from jupyter_cache.executors import load_executor
    from sphinx_external_toc.parsing import parse_toc_yaml

    root = Path(app.srcdir)
    toc = Path(config.external_toc_path)
    toc = toc if toc.is_absolute() else root / toc
    skip = list(config.nb_execution_excludepatterns or [])
    notebooks = [root / f"{doc}.ipynb" for doc in parse_toc_yaml(str(toc))]  # the docnames
    notebooks = [
        p for p in notebooks if p.exists() and not any(fnmatch(p.relative_to(root).as_posix(), pat) for pat in skip)
    ]
    if not notebooks:
        return
    cache = get_cache(str(root / (config.nb_execution_cache_path or "_build/.jupyter_cache")))
    records = [cache.add_nb_to_project(str(p)) for p in notebooks]
    executor = load_executor("local-parallel", cache, logger=logging.getLogger(__name__))
    with one_thread_per_kernel():
        executor.run_and_cache(filter_pks=[r.pk for r in records], timeout=config.nb_execution_timeout)


# The thread pools of torch (OpenMP) and numpy's BLAS; a kernel started while they are set inherits them.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


@contextlib.contextmanager
def one_thread_per_kernel():
    """Kernels started inside use one thread each for torch and BLAS: the pool runs as many kernels as there are
    cores, and a kernel that also spread its work over every core would make them compete (the toy trainings,
    small matrices, gain nothing from threads). Of what the notebooks print, only measured times depend on it
    (Appendix A prints the number it had)."""
    saved = {name: os.environ.get(name) for name in THREAD_VARIABLES}
    os.environ.update(dict.fromkeys(THREAD_VARIABLES, "1"))
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def prune_scripts(app, pagename, templatename, context, doctree) -> None:
    """sphinx-thebe registers its inline config once per read (twice is a page error); widget state is unused;
    MathJax is not needed in the browser (the math is typeset at build time)."""
    seen, unique = set(), []
    for script in context.get("script_files", []):
        if script.attributes.get("type") == "application/vnd.jupyter.widget-state+json":
            continue
        if "mathjax" in str(script.filename or "").lower() or script.attributes.get("body", "").startswith(
            "window.MathJax"
        ):
            continue
        key = (str(script.filename or ""), tuple(sorted((k, str(v)) for k, v in script.attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def list_citations_as_list_items(app, pagename, templatename, context, doctree) -> None:
    """Sphinx's citation list is ``role="list"`` but its entries are ``doc-biblioentry`` (deprecated in
    DPUB-ARIA 1.1 in favour of ``listitem``); a list needs list items."""
    if "body" in context:
        context["body"] = context["body"].replace('role="doc-biblioentry"', 'role="listitem"')


def hide_solution_markers(app, doctree, docname) -> None:
    """On solution pages, show the answer code without its # BEGIN/END SOLUTION lines."""
    if not docname.startswith(SOLUTION_PAGES):
        return
    for block in list(doctree.findall(nodes.literal_block)):
        text = block.astext()
        if not SOLUTION_MARKER.search(text):
            continue
        shown = SOLUTION_MARKER.sub("", text)
        # rawsource must equal the text, or Sphinx treats the block as parsed-literal and skips highlighting
        clean = nodes.literal_block(shown, shown, **block.attributes)
        block.replace_self(clean)


def explorer_call(source: str) -> tuple[str, dict] | None:
    """(class name, keyword arguments) if ``source`` is exactly ``from posenc_course.explorers import X``
    then ``X(k=literal, ...)``."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return None
    if len(body) != 2 or not isinstance(body[0], ast.ImportFrom) or body[0].module != "posenc_course.explorers":
        return None
    names = [alias.name for alias in body[0].names if alias.asname is None]
    call = body[1].value if isinstance(body[1], ast.Expr) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in names and not call.args):
        return None
    try:
        return call.func.id, {k.arg: ast.literal_eval(k.value) for k in call.keywords}
    except ValueError:
        return None


def show_unexecuted_explorers(app, doctree) -> None:
    """Give a cell that displays an explorer, and has no output (its page is not executed), the explorer."""
    from posenc_course import explorers

    for cell in list(doctree.findall(nodes.container)):
        if cell.get("nb_element") != "cell_code" or any(
            c.get("nb_element") == "cell_code_output" for c in cell.children
        ):
            continue
        block = next(cell.findall(nodes.literal_block), None)
        found = explorer_call(block.astext()) if block is not None else None
        if found is None:
            continue
        name, kwargs = found
        twin = getattr(explorers, name)(**kwargs).static_html()
        output = nodes.container(nb_element="cell_code_output", classes=["cell_output"])
        output += nodes.raw("", twin, format="html", classes=["output", "text_html"])
        cell += output


VERSIONS_PAGE = "changelog"  # what changed in each version of the course, for learners


def course_version_in_footer(app, pagename, templatename, context, doctree) -> None:
    """The course's version (pyproject.toml, as the wheel and the kit are named) at the foot of every page, linked
    to the page that says what each version changed."""
    from book_build import book_kit

    version = book_kit.distribution()[1]
    link = context["pathto"](VERSIONS_PAGE)
    context["theme_extra_footer"] = f'<p class="course-version">Course version <a href="{link}">{version}</a></p>'


def one_renderer_per_page(app, doctree, docname) -> None:
    """Keep explorers.js once on a page that shows several explorers.

    Each explorer's static twin carries the module inline, so that an output stands alone (a notebook exported to
    HTML, a viewer without Jupyter's widgets); on a page the first copy mounts every explorer there (a module runs
    once the page is parsed), so the others go.
    """
    from posenc_course import explorers

    script = re.compile(re.escape(explorers.RENDERER_SCRIPT) + r".*?</script>", re.S)
    kept = False
    for raw in list(doctree.findall(nodes.raw)):
        text = raw.astext()
        if raw.get("format") != "html" or not script.search(text):
            continue
        if kept:
            raw.replace_self(nodes.raw(raw.rawsource, script.sub("", text), **raw.attributes))
        kept = True


def refresh_own_static_files(app, exception) -> None:
    """Copy the book's own _static/ files into the output when they changed.

    Sphinx copies static files only when some page is rewritten, so an edit of
    _static/book.css alone would otherwise leave the old file in the build.
    """
    if exception is not None or app.builder.format != "html":
        return
    source, target = Path(app.srcdir) / "_static", Path(app.outdir) / "_static"
    for path in source.rglob("*"):
        out = target / path.relative_to(source)
        if path.is_file() and (not out.exists() or out.read_bytes() != path.read_bytes()):
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, out)


def drop_fontawesome_script(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        lighter = FONTAWESOME_SCRIPT.sub("", text)
        if lighter != text:
            page.write_text(lighter, encoding="utf-8")


def typeset_math(app, exception) -> None:
    """Typeset every written page's math (math_prerender.py); keep each page's TeX version for make bench."""
    if exception is not None or app.builder.format != "html":
        return
    from book_build import math_prerender

    out, tex = Path(app.outdir), Path(app.outdir).parent / TEX_PAGES
    for page in out.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        if math_prerender.formulas(text):  # written by this build: not typeset yet
            kept = tex / page.relative_to(out)
            kept.parent.mkdir(parents=True, exist_ok=True)
            kept.write_text(text, encoding="utf-8")
    counts = math_prerender.prerender_book(out)
    sphinx_logging.getLogger(__name__).info(
        "typeset %d formulas on %d pages in %.1f s", counts["formulas"], counts["pages"], counts["seconds"]
    )


# What Jupyter Book 1 puts in repository_url when _config.yml names no repository.
JUPYTER_BOOK_DEFAULT_REPOSITORY = "https://github.com/executablebooks/jupyter-book"
REPOSITORY_BUTTONS = ("use_repository_button", "use_issues_button", "use_edit_page_button")


def repository_links(app, config) -> None:
    """Launch buttons (Binder, Colab) and the repository button only for a configured repository.

    ``repository.url`` in ``_config.yml`` is the one setting. Empty or absent (then Jupyter Book
    fills in its own repository), the pages get no launch buttons and no repository, issues or
    edit button: none of them would lead anywhere. Set, the repository button is shown and the
    launch buttons of ``launch_buttons`` open the notebooks from that repository.
    """
    options = dict(config.html_theme_options or {})
    url = str(options.get("repository_url") or "").strip()
    if url.rstrip("/") in ("", JUPYTER_BOOK_DEFAULT_REPOSITORY):
        options["repository_url"] = ""
        options["launch_buttons"] = {}
        options.update(dict.fromkeys(REPOSITORY_BUTTONS, False))
    else:
        options["use_repository_button"] = True
    config.html_theme_options = options


def setup(app):
    from book_build import book_citations, book_kit

    book_citations.register()  # before any bibliography is read: the style _config.yml names
    app.connect("doctree-resolved", book_citations.cited_in)
    app.connect("config-inited", configure, priority=900)
    app.connect("config-inited", invalidate_stale_cache, priority=901)
    app.connect("config-inited", preexecute_in_parallel, priority=902)
    app.connect("config-inited", repository_links)
    app.connect("env-get-outdated", reread_notebooks)
    app.connect("build-finished", record_sources)
    app.connect("html-page-context", prune_scripts, priority=999)
    app.connect("html-page-context", list_citations_as_list_items)
    app.connect("html-page-context", course_version_in_footer)
    app.connect("doctree-resolved", hide_solution_markers)
    app.connect("doctree-read", show_unexecuted_explorers)
    app.connect("doctree-resolved", one_renderer_per_page)
    app.connect("build-finished", drop_fontawesome_script)
    app.connect("build-finished", icon_fonts.subset_icon_fonts)
    app.connect("build-finished", typeset_math)
    app.connect("build-finished", refresh_own_static_files)
    app.connect("build-finished", book_figures.dark_twins)
    app.connect("build-finished", book_kit.hand_out)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
