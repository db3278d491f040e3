"""Time from navigation until a page's math is on screen, as built and against browser-side MathJax.

Part of ``make bench``. Each chapter page of the built book is opened in
headless Chromium, one page at a time, in three versions that alternate in the
same run so that machine noise hits all alike:

* ``build time``: the page as the book ships it, math typeset when the book
  was built (``math_prerender.py``);
* ``MathJax 3``: the same page as Sphinx wrote it (with its TeX, kept in
  ``_build/html-tex``) typeset in the browser by MathJax 3 -- the same files,
  the configuration the book used before (``MATHJAX3_CONFIG``);
* ``MathJax 2``: that TeX page typeset by MathJax 2.7 (``jupyter-server-mathjax``,
  HTML-CSS output with STIX fonts), as the book first did.

A visit is a cold load (nothing cached). Its time, in milliseconds since the
navigation started, is when the math is on screen as the reader sees it: the
latest of the math typeset (the page parsed, for the version that arrives
typeset), the page's first paint and the last math font received.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import statistics
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HTML = ROOT / "_build" / "html"
TEX_PAGES = ROOT / "_build" / "html-tex"
VERSIONS = ("build time", "MathJax 3", "MathJax 2")

MATHJAX3_CONFIG = {  # what the book used when it typeset its math in the browser
    "loader": {"load": ["input/tex", "output/chtml", "a11y/assistive-mml"]},
    "tex": {
        "inlineMath": [["\\(", "\\)"]],
        "displayMath": [["\\[", "\\]"]],
        "processRefs": False,
        "processEnvironments": True,
    },
    "options": {
        "processHtmlClass": "tex2jax_process|mathjax_process|math|output_area",
        "ignoreHtmlClass": "tex2jax_ignore|mathjax_ignore|document",
    },
}
MATHJAX2_CONFIG = {  # what the book used before MathJax 3
    "tex2jax": {
        "inlineMath": [["\\(", "\\)"]],
        "displayMath": [["\\[", "\\]"]],
        "processRefs": False,
        "processEnvironments": True,
        "processClass": "tex2jax_process|mathjax_process|math|output_area",
        "ignoreClass": "tex2jax_ignore|mathjax_ignore|document",
    },
    "HTML-CSS": {"availableFonts": [], "webFont": "STIX-Web", "imageFont": None, "preferredFont": None},
    "messageStyle": "none",
    "showMathMenu": False,
}
HEADS = {
    "MathJax 3": f"<script>window.MathJax = {json.dumps(MATHJAX3_CONFIG)}</script>\n"
    '<script defer="defer" src="/_mathjax3/startup.js"></script>\n',
    "MathJax 2": f'<script type="text/x-mathjax-config">MathJax.Hub.Config({json.dumps(MATHJAX2_CONFIG)})</script>\n'
    '<script async="async" src="/_mathjax2/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"></script>\n',
}

# Installed before the page's own scripts: window.__mathReady resolves with the time (ms since navigation
# started) at which the page's math is on screen, typeset, in its own fonts: the latest of
#   - the math typeset: the page parsed (domInteractive) when it arrives typeset; the end of typesetting
#     by the MathJax in the page otherwise;
#   - the page first painted (first-contentful-paint);
#   - the last math font received (resource timing: MathJax 3's MJX*, MathJax 2's STIX fonts).
MATH_READY = """(() => {
  const version = %s;
  const until = async test => { while (!test()) await new Promise(r => setTimeout(r, 5)); };
  const typeset = async () => {
    if (version === 'MathJax 3') {
      await until(() => window.MathJax && MathJax.startup && MathJax.startup.promise);
      await MathJax.startup.promise;
    } else if (version === 'MathJax 2') {
      await until(() => window.MathJax && MathJax.Hub && MathJax.Hub.Register);
      // (the hook must not return the queue's callback: MathJax 2 would wait for it and never end)
      await new Promise(r => MathJax.Hub.Register.StartupHook('End', () => { MathJax.Hub.Queue(r); }));
    } else {
      return performance.getEntriesByType('navigation')[0].domInteractive;
    }
    return performance.now();
  };
  const painted = () => new Promise(r => new PerformanceObserver((list, observer) => {
    const fcp = list.getEntriesByName('first-contentful-paint')[0];
    if (fcp) { observer.disconnect(); r(fcp.startTime); }
  }).observe({type: 'paint', buffered: true}));
  window.__mathReady = new Promise(resolve => document.addEventListener('DOMContentLoaded', async () => {
    const typesetAt = await typeset();
    void document.body.offsetHeight;          // lay the page out: the math fonts it uses start loading
    await Promise.all([...document.fonts].filter(f => /^(MJX|STIX)/.test(f.family) && f.status === 'loading')
                                         .map(f => f.loaded.catch(() => null)));
    const fonts = performance.getEntriesByType('resource')
                             .filter(e => /MathJax_[^/]*[.]woff/.test(e.name.split('/').pop()));
    resolve(Math.max(typesetAt, await painted(), ...fonts.map(e => e.responseEnd)));
  }));
})();"""


def tex_page(html: str, version: str) -> str:
    """A page as Sphinx wrote it (TeX in place) with ``version``'s MathJax added to its head."""
    if html.count("</head>") != 1:
        raise ValueError(f"expected one </head> in the page, found {html.count('</head>')}")
    return html.replace("</head>", HEADS[version] + "</head>")


async def _visit(browser, base: str, page: str, version: str) -> float:
    import jupyter_server_mathjax

    from book_build.math_prerender import MATHJAX

    assets = {"_mathjax3": MATHJAX, "_mathjax2": Path(jupyter_server_mathjax.__file__).parent / "static"}
    context = await browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
    await context.add_init_script(script=MATH_READY % json.dumps(version))
    html = (HTML if version == "build time" else TEX_PAGES) / f"{page}.html"
    body = html.read_text(encoding="utf-8")
    body = body if version == "build time" else tex_page(body, version)

    async def fulfil_page(route):  # every version is delivered the same way
        await route.fulfill(body=body, content_type="text/html; charset=utf-8")

    async def asset(route):
        top, rel = re.match(r"[^:]+://[^/]+/(_mathjax[23])/([^?]*)", route.request.url).groups()
        path = assets[top] / rel
        # MathJax 2.7 asks for font formats the package does not ship (OpenType) before the ones it does (WOFF):
        # answered as a static host would, 404, it moves on to the next
        await (route.fulfill(path=str(path)) if path.is_file() else route.fulfill(status=404))

    await context.route(f"{base}{page}.html", fulfil_page)
    await context.route(re.compile(r".*/_mathjax[23]/.*"), asset)
    tab = await context.new_page()
    await tab.goto(f"{base}{page}.html", wait_until="load")
    ms = await tab.evaluate("() => window.__mathReady")
    await context.close()
    return ms


async def _measure(pages: list[str], repeats: int) -> dict:
    from playwright.async_api import async_playwright

    from book_build.book_server import CHROMIUM_ARGS, serve

    times = {page: {v: [] for v in VERSIONS} for page in pages}
    with serve(HTML) as base:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
            await _visit(browser, base, pages[0], VERSIONS[0])  # warm-up: the browser's own start
            for _ in range(repeats):
                for page in pages:
                    for version in VERSIONS:
                        times[page][version].append(await _visit(browser, base, page, version))
            await browser.close()
    return times


def bench_typesetting(pages: list[str] | None = None, repeats: int = 3) -> dict:
    """Print, per page, the median time until its math is on screen in each version; return the medians."""
    if not (HTML / "index.html").exists():
        raise SystemExit("no built book in _build/html: run `make book` first")
    if shutil.which("chromium") is None:
        raise SystemExit("chromium is not installed (apt-get install chromium)")
    if pages is None:
        toc = (ROOT / "_toc.yml").read_text()
        pages = ["intro"] + re.findall(r"file: ((?:chapters|appendix)/\S+)", toc)
    missing = [p for p in pages if not (TEX_PAGES / f"{p}.html").exists()]
    if missing:
        raise SystemExit(f"no TeX version of {missing} in {TEX_PAGES}: run `make clean book`")
    times = asyncio.run(_measure(pages, repeats))
    print(
        "\nBook: navigation -> math on screen (typeset, painted, fonts loaded), headless Chromium, "
        f"one page at a time, median of {repeats}"
    )
    print(f"  {'page':36s} " + " ".join(f"{v:>12s}" for v in VERSIONS) + "   MJ3 / built   MJ2 / built")
    medians = {page: {v: statistics.median(t[v]) for v in VERSIONS} for page, t in times.items()}
    for page, m in medians.items():
        print(
            f"  {page:36s} "
            + " ".join(f"{m[v]:9.0f} ms" for v in VERSIONS)
            + f"   {m['MathJax 3'] / m['build time']:10.1f}x   {m['MathJax 2'] / m['build time']:10.1f}x"
        )
    slowest = {v: max(medians, key=lambda page: medians[page][v]) for v in VERSIONS}
    print("  slowest page: " + "; ".join(f"{v} {medians[slowest[v]][v]:.0f} ms ({slowest[v]})" for v in VERSIONS))
    print(
        f"  ratio of the slowest pages: MathJax 3 / build time "
        f"{medians[slowest['MathJax 3']]['MathJax 3'] / medians[slowest['build time']]['build time']:.1f}x, "
        f"MathJax 2 / build time "
        f"{medians[slowest['MathJax 2']]['MathJax 2'] / medians[slowest['build time']]['build time']:.1f}x"
    )
    return medians


if __name__ == "__main__":
    bench_typesetting()
