"""Sphinx extension: make the HTML book self-contained (no CDN at read time).

* MathJax is served from the book's own output, copied at build time from
  the pinned PyPI package ``jupyter-server-mathjax`` (MathJax 2.7) into
  ``_build/html/_vendor/mathjax`` -- outside ``_static``, which Jupyter Book
  would otherwise inject into every page.
* The ipywidgets embedding scripts (require.js and the widget manager from a
  CDN) are not loaded: the explorers carry their own browser renderer in
  their ``text/html`` output, which the book shows instead of the widget
  view (see ``_config.yml``: ``nb_mime_priority_overrides``).

Enabled in ``_config.yml`` under ``sphinx: local_extensions``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import jupyter_server_mathjax

MATHJAX_SOURCE = Path(jupyter_server_mathjax.__file__).parent / "static"
VENDOR = "_vendor"
MATHJAX_DIR = f"{VENDOR}/mathjax"
# Sphinx resolves a relative mathjax_path against _static/, hence the "../".
MATHJAX_PATH = f"../{MATHJAX_DIR}/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"
MATHJAX2_CONFIG = {
    "tex2jax": {
        "inlineMath": [["\\(", "\\)"]],
        "displayMath": [["\\[", "\\]"]],
        "processRefs": False,
        "processEnvironments": True,
        # only the math that myst marks, never code cells
        "processClass": "tex2jax_process|mathjax_process|math|output_area",
        "ignoreClass": "tex2jax_ignore|mathjax_ignore|document",
    },
    "messageStyle": "none",
    # the package ships the STIX web fonts only; never fall back to a font CDN
    "HTML-CSS": {"availableFonts": [], "webFont": "STIX-Web", "imageFont": None,
                 "preferredFont": None, "linebreaks": {"automatic": True}},
    "menuSettings": {"zoom": "None"},
}


def configure(app, config) -> None:
    config.mathjax_path = MATHJAX_PATH
    config.mathjax2_config = MATHJAX2_CONFIG
    config.mathjax3_config = None
    config.nb_ipywidgets_js = {}


def copy_mathjax(app) -> None:
    if app.builder.format != "html":
        return
    target = Path(app.outdir) / MATHJAX_DIR
    stamp = target / ".source"
    if stamp.exists() and stamp.read_text() == str(MATHJAX_SOURCE):
        return  # already there: keep no-change rebuilds fast
    shutil.copytree(MATHJAX_SOURCE, target, dirs_exist_ok=True)
    stamp.write_text(str(MATHJAX_SOURCE))


def drop_duplicate_scripts(app, pagename, templatename, context, doctree) -> None:
    """sphinx-thebe registers its inline config once per read; twice is a page error."""
    seen, unique = set(), []
    for script in context.get("script_files", []):
        key = (str(script.filename or ""), tuple(sorted((k, str(v)) for k, v in script.attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def setup(app):
    app.connect("config-inited", configure, priority=900)
    app.connect("builder-inited", copy_mathjax)
    app.connect("html-page-context", drop_duplicate_scripts, priority=999)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
