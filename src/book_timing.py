"""Time from navigation to typeset math, for the built book, against MathJax 2.

Part of ``make bench``. Each page of the built book (``_build/html``) is
opened in headless Chromium, one page at a time, as it is built (MathJax 3,
``book_assets.py``) and as the book used to be: the same page with MathJax 2.7
(``jupyter-server-mathjax``, HTML-CSS output with STIX fonts) swapped in by
rewriting its ``<head>`` on the way to the browser. The two versions alternate
(3, 2, 3, 2, ...) so that machine noise hits both alike. A visit is a cold
load (no cache); its time is ``performance.now()`` when the first typeset has
finished, i.e. milliseconds since the navigation started.
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
MATHJAX2_URL = "_mathjax2/MathJax.js?config=TeX-AMS-MML_HTMLorMML-full"
MATHJAX2_CONFIG = {  # what the book used before MathJax 3 (see git history of book_assets.py)
    "tex2jax": {"inlineMath": [["\\(", "\\)"]], "displayMath": [["\\[", "\\]"]], "processRefs": False,
                "processEnvironments": True,
                "processClass": "tex2jax_process|mathjax_process|math|output_area",
                "ignoreClass": "tex2jax_ignore|mathjax_ignore|document"},
    "HTML-CSS": {"availableFonts": [], "webFont": "STIX-Web", "imageFont": None, "preferredFont": None},
    "messageStyle": "none",
    "showMathMenu": False,
}
MATHJAX3_HEAD = re.compile(
    r'<script>window\.MathJax = .*?</script>\s*<script defer="defer" src="([^"]*?)_vendor/mathjax/startup\.js[^"]*"></script>',
    re.S)
TYPESET_DONE = """async version => {
  const t0 = performance.now();
  const ready = () => version === 3 ? !!(window.MathJax && MathJax.startup && MathJax.startup.promise)
                                    : !!(window.MathJax && MathJax.Hub && MathJax.Hub.Register);
  while (!ready()) { if (performance.now() - t0 > 30000) return -1; await new Promise(r => setTimeout(r, 5)); }
  if (version === 3) { await MathJax.startup.promise; return performance.now(); }
  return new Promise(r => MathJax.Hub.Register.StartupHook('End', () => { MathJax.Hub.Queue(() => r(performance.now())); }));
}"""


def with_mathjax2(html: str) -> str:
    """The page's MathJax 3 head swapped for the MathJax 2 one (same page otherwise)."""
    def swap(m):
        prefix = m.group(1)
        return (f'<script type="text/x-mathjax-config">MathJax.Hub.Config({json.dumps(MATHJAX2_CONFIG)})</script>\n'
                f'<script async="async" src="{prefix}{MATHJAX2_URL}"></script>')
    out, n = MATHJAX3_HEAD.subn(swap, html)
    if n != 1:
        raise ValueError(f"expected one MathJax 3 head in the page, found {n}")
    return out


async def _visit(browser, url: str, version: int) -> float:
    import jupyter_server_mathjax

    mathjax2 = Path(jupyter_server_mathjax.__file__).parent / "static"
    context = await browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
    if version == 2:
        async def page(route):
            response = await route.fetch()
            await route.fulfill(response=response, body=with_mathjax2(await response.text()),
                                headers={**response.headers, "content-encoding": "identity"})

        async def asset(route):
            rel = route.request.url.split("/_mathjax2/", 1)[1].split("?", 1)[0]
            await route.fulfill(path=str(mathjax2 / rel))

        await context.route(url, page)
        await context.route("**/_mathjax2/**", asset)
    tab = await context.new_page()
    await tab.goto(url, wait_until="load")
    ms = await tab.evaluate(TYPESET_DONE, version)
    await context.close()
    return ms


async def _measure(pages: list[str], repeats: int) -> dict:
    from playwright.async_api import async_playwright

    from book_server import CHROMIUM_ARGS, serve

    times = {page: {3: [], 2: []} for page in pages}
    with serve(HTML) as base:
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
            await _visit(browser, f"{base}{pages[0]}.html", 3)  # warm-up: the browser's own start
            for _ in range(repeats):
                for page in pages:
                    for version in (3, 2):
                        times[page][version].append(await _visit(browser, f"{base}{page}.html", version))
            await browser.close()
    return times


def bench_typesetting(pages: list[str] | None = None, repeats: int = 3) -> dict:
    """Print, per page, the median time to typeset math with MathJax 3 and 2; return the medians."""
    if not (HTML / "index.html").exists():
        raise SystemExit("no built book in _build/html: run `make book` first")
    if shutil.which("chromium") is None:
        raise SystemExit("chromium is not installed (apt-get install chromium)")
    if pages is None:
        toc = (ROOT / "_toc.yml").read_text()
        pages = ["intro"] + re.findall(r"file: (chapters/\S+)", toc)
    times = asyncio.run(_measure(pages, repeats))
    print(f"\nBook: navigation -> math typeset, headless Chromium, one page at a time, median of {repeats}")
    print(f"  {'page':36s} {'MathJax 3':>10s} {'MathJax 2':>10s} {'2 / 3':>6s}")
    medians = {}
    for page, t in times.items():
        m3, m2 = statistics.median(t[3]), statistics.median(t[2])
        medians[page] = (m3, m2)
        print(f"  {page:36s} {m3:8.0f} ms {m2:8.0f} ms {m2 / m3:5.1f}x")
    slow3 = max(medians.items(), key=lambda kv: kv[1][0])
    slow2 = max(medians.items(), key=lambda kv: kv[1][1])
    print(f"  slowest page: MathJax 3 {slow3[1][0]:.0f} ms ({slow3[0]}), MathJax 2 {slow2[1][1]:.0f} ms ({slow2[0]}); "
          f"ratio {slow2[1][1] / slow3[1][0]:.1f}x")
    return medians


if __name__ == "__main__":
    bench_typesetting()
