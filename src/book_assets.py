"""Sphinx extension: make the HTML book self-contained, light and readable.

* MathJax 3 (TeX input, CommonHTML output, assistive MathML; no context
  menu) is served from the book's own output, copied
  at build time from the pinned PyPI package ``sphinx-mathjax-offline`` into
  ``_build/html/_vendor/mathjax`` -- outside ``_static``, which Jupyter Book
  would otherwise inject into every page. Only its files are used; its own
  Sphinx hook (copying into ``_static`` after the build) is not.
* The ipywidgets embedding scripts (require.js and the widget manager from a
  CDN) are not loaded: the explorers carry their own browser renderer in
  their ``text/html`` output, which the book shows instead of the widget
  view (see ``_config.yml``: ``nb_mime_priority_overrides``). The widget
  state that myst-nb would embed for them (50-160 KB a page) is dropped too.
* Font Awesome's 1.5 MB SVG-replacement script, which pydata-sphinx-theme
  loads render-blocking on every page, is removed from the written pages: the
  theme's style sheet already draws the same icons with its web fonts.
* No general index: the book has no index entries, so the page was empty.
* The book's own ``_static/`` files reach the output whenever they change,
  also in a build that rewrites no page (Sphinx skips copying then).
* Solution pages show answers, not authoring markers: the ``# BEGIN SOLUTION``
  and ``# END SOLUTION`` lines (which ``make exercises`` needs in the source)
  are dropped from the code shown in ``solutions/``.

* Notebooks are executed two at a time before Sphinx reads them (the
  jupyter-cache parallel executor, into the same cache myst-nb reads), which
  roughly halves a cold build on two cores.
* The execution cache is emptied when the course's code (``src/``) changes:
  jupyter-cache only looks at a notebook's own cells, so a fix in ``posenc``
  or in an explorer would otherwise leave stale outputs in the book.

Enabled in ``_config.yml`` under ``sphinx: local_extensions``.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
from fnmatch import fnmatch
from importlib.metadata import distribution
from pathlib import Path

from docutils import nodes

MATHJAX_SOURCE = Path(distribution("sphinx-mathjax-offline").locate_file("sphinx-mathjax-offline/static/mathjax"))
VENDOR = "_vendor"
MATHJAX_DIR = f"{VENDOR}/mathjax"
# Sphinx resolves a relative mathjax_path against _static/, hence the "../".
MATHJAX_PATH = f"../{MATHJAX_DIR}/startup.js"
MATHJAX3_CONFIG = {
    # TeX in, CommonHTML out, and the hidden MathML that screen readers read. Not the combined
    # tex-chtml.js: it bundles the 426 KB context menu, which would be 40 % of MathJax's weight.
    "loader": {"load": ["input/tex", "output/chtml", "a11y/assistive-mml"]},
    "tex": {
        "inlineMath": [["\\(", "\\)"]],
        "displayMath": [["\\[", "\\]"]],
        "processRefs": False,
        "processEnvironments": True,
    },
    "options": {
        # only the math that myst marks (and the quizzes' math spans), never code cells
        "processHtmlClass": "tex2jax_process|mathjax_process|math|output_area",
        "ignoreHtmlClass": "tex2jax_ignore|mathjax_ignore|document",
    },
    # the fonts are found next to tex-chtml.js (output/chtml/fonts/woff-v2)
}
# What MathJax fetches on every page, one step after another (startup.js loads the components, which
# load the font data, whose web fonts the typeset math then asks for): announced in the page's head so
# the browser fetches them while it is still parsing the page.
MATHJAX_PRELOAD = {
    "script": ["core.js", "input/tex.js", "output/chtml.js", "a11y/assistive-mml.js", "output/chtml/fonts/tex.js"],
    "font": [f"output/chtml/fonts/woff-v2/MathJax_{name}.woff" for name in ("Zero", "Main-Regular", "Math-Italic",
                                                                         "Size1-Regular")],
}
MATHJAX_TYPEWRITER = "output/chtml/fonts/woff-v2/MathJax_Typewriter-Regular.woff"  # for \mathtt
FONTAWESOME_SCRIPT = re.compile(r'[ \t]*<script\b[^>]*\bsrc="[^"]*_static/scripts/fontawesome\.js[^"]*"[^>]*></script>\n?')
SOLUTION_MARKER = re.compile(r"^[ \t]*# (BEGIN|END) SOLUTION[ \t]*\n?", re.M)
SOLUTION_PAGES = "solutions/"


def configure(app, config) -> None:
    config.mathjax_path = MATHJAX_PATH
    config.mathjax2_config = None
    config.mathjax3_config = MATHJAX3_CONFIG
    config.nb_ipywidgets_js = {}
    config.html_use_index = False


SOURCES = Path(__file__).resolve().parent


def sources_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted(SOURCES.glob("*.py")) + sorted(SOURCES.glob("*.js")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def invalidate_stale_cache(app, config) -> None:
    cache = Path(app.srcdir) / (config.nb_execution_cache_path or "_build/.jupyter_cache")
    stamp = cache.parent / ".jupyter_cache.src-digest"
    digest = sources_digest()
    app.posenc_sources_changed = not stamp.exists() or stamp.read_text() != digest
    app.posenc_sources_stamp = (stamp, digest)
    if app.posenc_sources_changed and cache.exists():
        shutil.rmtree(cache)


def record_sources(app, exception) -> None:
    """Only a build that finished marks the cache as matching the sources."""
    if exception is None and hasattr(app, "posenc_sources_stamp"):
        stamp, digest = app.posenc_sources_stamp
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(digest)


def reread_notebooks(app, env, added, changed, removed) -> list:
    """After a change in src/, every notebook must be read (and so executed) again."""
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
    notebooks = [p for p in notebooks if p.exists() and not any(fnmatch(p.relative_to(root).as_posix(), pat) for pat in skip)]
    if not notebooks:
        return
    cache = get_cache(str(root / (config.nb_execution_cache_path or "_build/.jupyter_cache")))
    records = [cache.add_nb_to_project(str(p)) for p in notebooks]
    executor = load_executor("local-parallel", cache, logger=logging.getLogger(__name__))
    executor.run_and_cache(filter_pks=[r.pk for r in records], timeout=config.nb_execution_timeout)


def copy_mathjax(app) -> None:
    if app.builder.format != "html":
        return
    target = Path(app.outdir) / MATHJAX_DIR
    stamp = target / ".source"
    if stamp.exists() and stamp.read_text() == str(MATHJAX_SOURCE):
        return  # already there: keep no-change rebuilds fast
    shutil.copytree(MATHJAX_SOURCE, target, dirs_exist_ok=True)
    stamp.write_text(str(MATHJAX_SOURCE))


def prune_scripts(app, pagename, templatename, context, doctree) -> None:
    """sphinx-thebe registers its inline config once per read (twice is a page error); widget state is unused."""
    seen, unique = set(), []
    for script in context.get("script_files", []):
        if script.attributes.get("type") == "application/vnd.jupyter.widget-state+json":
            continue
        key = (str(script.filename or ""), tuple(sorted((k, str(v)) for k, v in script.attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def preload_mathjax(app, pagename, templatename, context, doctree) -> None:
    """<link rel="preload"> for MathJax's components and the fonts its math will ask for, on pages with math."""
    if doctree is None:
        return
    tex = " ".join(node.astext() for node in doctree.findall(lambda n: isinstance(n, (nodes.math, nodes.math_block))))
    if not tex:
        return
    fonts = MATHJAX_PRELOAD["font"] + [MATHJAX_TYPEWRITER] * ("\\mathtt" in tex or "\\texttt" in tex)
    pathto = context["pathto"]
    links = [f'<link rel="preload" as="script" href="{pathto(f"{MATHJAX_DIR}/{name}", 1)}" />'
             for name in MATHJAX_PRELOAD["script"]]
    links += [f'<link rel="preload" as="font" type="font/woff" crossorigin href="{pathto(f"{MATHJAX_DIR}/{name}", 1)}" />'
              for name in fonts]
    context["metatags"] = context.get("metatags", "") + "\n".join(links) + "\n"


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


def setup(app):
    app.connect("config-inited", configure, priority=900)
    app.connect("config-inited", invalidate_stale_cache, priority=901)
    app.connect("config-inited", preexecute_in_parallel, priority=902)
    app.connect("env-get-outdated", reread_notebooks)
    app.connect("build-finished", record_sources)
    app.connect("builder-inited", copy_mathjax)
    app.connect("html-page-context", prune_scripts, priority=999)
    app.connect("doctree-resolved", hide_solution_markers)
    app.connect("html-page-context", preload_mathjax)
    app.connect("build-finished", drop_fontawesome_script)
    app.connect("build-finished", refresh_own_static_files)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
