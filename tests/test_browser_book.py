"""The built book in a real browser (Debian's Chromium driven by Playwright).

Every page of the book is opened from a local HTTP server with every request
to another host blocked, and checked: math rendered by MathJax (no raw TeX
left), every image loaded, no missing local file, no page or console error,
no external request, every slider alive (moving it redraws its explorer's
canvas), each redraw within one frame (<= 16 ms). A full-page screenshot of
every page goes to ``_build/screenshots/book/``. Search works offline. The
browser explorers compute the same numbers as ``explorers.py``.

The harness checks itself on small local fixtures first (a live and a dead
slider, an external request, a missing file, raw TeX, a page error), so a
green run means the checks can fail.

Pages are visited concurrently (Playwright's async API in a thread), then the
sliders are moved one page at a time so that no other tab competes for the CPU
while update times are measured. ``test_report`` prints the numbers (also
written to ``_build/screenshots/book/report.txt``).

Run alone: ``.venv/bin/python -m pytest tests/test_browser_book.py -q``. The book
is rebuilt first if it is older than its sources (``POSENC_REUSE_BUILD=1``: use
the existing build as it is).
"""

from __future__ import annotations

import asyncio
import inspect
import math
import re
import statistics
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from browser import (  # noqa: F401  (book and chromium are fixtures)
    CHROMIUM_ARGS, SCREENSHOTS, Guard, book, chromium, chromium_executable, new_context, percentile, serve,
    toc_pages,
)

PAGES = toc_pages()
FRAME_MS = 16.0           # one frame at 60 Hz, the budget of one slider step
STEPS_PER_SLIDER = 3      # key presses per slider
EXPLORER_PAGES = ["chapters/02_sinusoidal_formula", "chapters/03_frequency_analysis", "chapters/04_linearity"]
SHOT_DIR = SCREENSHOTS / "book"


@pytest.fixture(autouse=True, scope="module")
def _needs_chromium():
    """Every test here skips (or fails under CI=true) without Chromium, before any book build."""
    chromium_executable()


# --------------------------------------------------------------------------
# What is read from a page (JavaScript run in the page)
# --------------------------------------------------------------------------

WAIT_FOR_MATHJAX = """async () => {
  if (!document.querySelector('script[src*="MathJax.js"]')) return 'no MathJax script';
  const t0 = performance.now();
  while (!(window.MathJax && MathJax.Hub && MathJax.Hub.Register)) {
    if (performance.now() - t0 > 15000) return 'MathJax did not load';
    await new Promise(r => setTimeout(r, 20));
  }
  // (the hook must return nothing: a hook returning a callback makes the signal wait for it, a deadlock here)
  const done = new Promise(r => MathJax.Hub.Register.StartupHook('End', () => { MathJax.Hub.Queue(() => r('ok')); }));
  const late = new Promise(r => setTimeout(() => r('MathJax did not finish typesetting within 30 s'), 30000));
  return Promise.race([done, late]);
}"""

READ_MATH = r"""() => {
  const rendered = el => el.querySelector('.MathJax, .MathJax_Display, .MathJax_SVG, .MathJax_CHTML, mjx-container');
  // myst's math containers (MathJax's own HTML-CSS output also uses span.math inside .MathJax: not those)
  const containers = [...document.querySelectorAll('span.math, div.math')]
      .filter(el => !el.parentElement.closest('.MathJax, .MathJax_Display, .MathJax_Preview, .MathJax_MathML'));
  const unrendered = containers.filter(el => !rendered(el)).map(el => el.textContent.trim().slice(0, 100));
  // every piece of TeX MathJax found must have its rendered frame next to it
  const jax = [...document.querySelectorAll('script[type^="math/tex"]')];
  const frameless = jax.filter(s => !document.getElementById(s.id + '-Frame')).map(s => s.textContent.slice(0, 100));
  const errors = [...document.querySelectorAll('.merror, .noError, .MathJax_Error, mjx-merror')]
      .map(el => el.textContent.trim().slice(0, 100));
  // raw TeX in the visible text outside code
  const skip = 'SCRIPT, STYLE, PRE, CODE, TEXTAREA, NOSCRIPT, .MathJax, .MathJax_Display, .MathJax_Preview, .highlight';
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const leftovers = [];
  const tex = /\\\(|\\\)|\\\[|\\\]|\$\$|\\(frac|mathrm|mathbf|sin|cos|omega|sum|cdot|big|left|right|begin|end|lceil|lfloor|text)\b/;
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || parent.closest(skip) || !parent.checkVisibility()) continue;
    const m = node.textContent.match(tex);
    if (m) leftovers.push(node.textContent.trim().slice(0, 120));
  }
  return {containers: containers.length, rendered: containers.length - unrendered.length,
          jax: jax.length, unrendered, frameless, errors, leftovers};
}"""

READ_IMAGES = """async () => {
  const images = [...document.images];
  for (const img of images) img.loading = 'eager';   // lazy images load now, wherever they are
  const late = new Promise(r => setTimeout(r, 15000));
  await Promise.race([Promise.all(images.map(img => img.decode().catch(() => null))), late]);
  return images.map(img => ({src: img.getAttribute('src'), url: img.currentSrc || img.src,
                             width: img.naturalWidth, alt: img.getAttribute('alt')}));
}"""

# Sliders: a capturing listener stamps every input event; a MutationObserver on
# every explorer stamps every change of data-updates: the difference is an
# independent measure of one step (it would include any frame waited for).
INSTRUMENT = """() => {
  if (window.__posencProbe) return;
  const probe = window.__posencProbe = {inputAt: null, latencies: []};
  document.addEventListener('input', e => {
    if (e.target.matches('input[type=range]')) probe.inputAt = performance.now();
  }, true);
  const observer = new MutationObserver(() => {
    if (probe.inputAt !== null) { probe.latencies.push(performance.now() - probe.inputAt); probe.inputAt = null; }
  });
  for (const root of document.querySelectorAll('.posenc-explorer'))
    observer.observe(root, {attributes: true, attributeFilter: ['data-updates']});
}"""

READ_SLIDER = """el => {
  const root = el.closest('.posenc-explorer');
  const scope = root || document;
  const canvases = [...scope.querySelectorAll('canvas')];
  const id = el.getAttribute('aria-label') || (el.labels && el.labels.length ? el.labels[0].textContent.trim() : '')
           || el.name || el.id || '';
  return {
    label: id,
    labelled: !!((el.labels && el.labels.length && el.labels[0].textContent.trim()) || el.getAttribute('aria-label')
                 || el.getAttribute('aria-labelledby')),
    value: el.value, min: el.min, max: el.max, step: el.step,
    inExplorer: !!root,
    updates: root ? Number(root.dataset.updates) : null,
    lastMs: root && root.dataset.lastUpdateMs !== undefined ? Number(root.dataset.lastUpdateMs) : null,
    pixels: canvases.map(c => { try { return c.toDataURL(); } catch (e) { return 'tainted'; } }),
    html: root ? null : document.body.innerHTML,
  };
}"""


# --------------------------------------------------------------------------
# One visit of one page: everything the tests look at
# --------------------------------------------------------------------------

@dataclass
class Step:
    changed_pixels: bool
    changed_value: bool
    updates_before: int | None
    updates_after: int | None
    last_ms: float | None
    latency_ms: float | None


@dataclass
class Slider:
    label: str
    labelled: bool
    in_explorer: bool
    steps: list[Step] = field(default_factory=list)

    @property
    def live(self) -> bool:
        return bool(self.steps) and all(
            s.changed_pixels and (not self.in_explorer or (s.updates_after or 0) > (s.updates_before or 0))
            for s in self.steps)


@dataclass
class Visit:
    page: str
    url: str
    problems: dict
    mathjax: str
    math: dict
    images: list
    screenshot: Path | None
    explorers: int
    sliders: list[Slider]
    seconds: dict = field(default_factory=dict)  # wall time of each phase of the visit
    kinds: list = field(default_factory=list)    # the explorers' kinds (from their data-spec)


async def _open(browser, base_url: str, page: str, shot_dir: Path | None):
    """Load ``page``, wait for MathJax, read math and images, take the screenshot; return (visit, context, tab, guard)."""
    context = await browser.new_context(viewport={"width": 1280, "height": 900}, service_workers="block")
    guard = Guard(context, async_api=True)
    await guard.route_async(context)
    tab = guard.watch(await context.new_page())
    url = f"{base_url}{page}.html"
    seconds, t0 = {}, time.perf_counter()
    await tab.goto(url, wait_until="load")
    seconds["load"], t0 = time.perf_counter() - t0, time.perf_counter()
    mathjax = await tab.evaluate(WAIT_FOR_MATHJAX)
    seconds["mathjax"], t0 = time.perf_counter() - t0, time.perf_counter()
    math_info = await tab.evaluate(READ_MATH)
    images = await tab.evaluate(READ_IMAGES)
    seconds["read"], t0 = time.perf_counter() - t0, time.perf_counter()
    screenshot = None
    if shot_dir is not None:
        screenshot = shot_dir / f"{page}.png"
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        await tab.screenshot(path=str(screenshot), full_page=True)
    seconds["screenshot"] = time.perf_counter() - t0
    kinds = await tab.evaluate("""() => [...document.querySelectorAll('.posenc-explorer')].map(e => {
        try { return JSON.parse(e.dataset.spec).kind; } catch (err) { return '?'; } })""")
    ranges = await tab.locator("input[type=range]").count()
    v = Visit(page, url, {}, mathjax, math_info, images, screenshot, len(kinds), [], seconds, kinds)
    return v, context, tab, guard, ranges


async def _exercise_sliders(tab) -> list[Slider]:
    """Move every range input with the keyboard; record what changed and how long each update took."""
    await tab.evaluate(INSTRUMENT)
    ranges = tab.locator("input[type=range]")
    sliders = []
    for n in range(await ranges.count()):
        handle = ranges.nth(n)
        info = await handle.evaluate(READ_SLIDER)
        slider = Slider(info["label"], info["labelled"], info["inExplorer"])
        sliders.append(slider)
        await handle.scroll_into_view_if_needed()
        await handle.focus()
        for _ in range(STEPS_PER_SLIDER):
            before = await handle.evaluate(READ_SLIDER)
            at_max = float(before["value"]) >= float(before["max"] or 100)
            await tab.evaluate("() => { window.__posencProbe.inputAt = null; window.__posencProbe.latencies.length = 0; }")
            await tab.keyboard.press("ArrowLeft" if at_max else "ArrowRight")
            if before["inExplorer"]:
                # an explorer counts its updates: wait (at most 2 s) for the count to move
                await handle.evaluate(WAIT_FOR_UPDATE, before["updates"] if before["updates"] is not None else -1)
            else:
                await tab.wait_for_timeout(100)
            after = await handle.evaluate(READ_SLIDER)
            latency = await tab.evaluate("() => window.__posencProbe.latencies[0] ?? null")
            changed = (after["pixels"] != before["pixels"]) if (before["pixels"] or after["pixels"]) else False
            if not before["inExplorer"]:
                changed = changed or after["html"] != before["html"]
            step = Step(changed_pixels=changed, changed_value=after["value"] != before["value"],
                        updates_before=before["updates"], updates_after=after["updates"],
                        last_ms=after["lastMs"], latency_ms=latency)
            slider.steps.append(step)
            if not (step.changed_pixels and step.changed_value):
                break  # dead: no need to wait for it again
    return sliders


WAIT_FOR_UPDATE = """(el, n) => new Promise(done => {
  const root = el.closest('.posenc-explorer');
  const t0 = performance.now();
  (function poll() {
    if (Number(root.dataset.updates) > n || performance.now() - t0 > 2000) return done();
    requestAnimationFrame(poll);
  })();
})"""


async def _visit_all(executable: str, base_url: str, pages: list[str], shot_dir, concurrency: int) -> dict:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        gate = asyncio.Semaphore(concurrency)
        opened = {}

        async def load(page):
            async with gate:
                opened[page] = await _open(browser, base_url, page, shot_dir)
                v, context, tab, guard, ranges = opened[page]
                if not ranges:  # nothing to move: done with this page
                    await tab.wait_for_timeout(50)
                    await context.close()

        await asyncio.gather(*(load(page) for page in pages))
        # Sliders one page at a time, with nothing else loading, so the update times are not
        # inflated by other tabs typesetting their math on the same cores.
        visits = {}
        for page in pages:
            v, context, tab, guard, ranges = opened[page]
            if ranges:
                t0 = time.perf_counter()
                v.sliders = await _exercise_sliders(tab)
                v.seconds["sliders"] = time.perf_counter() - t0
                await tab.wait_for_timeout(50)  # let late errors and requests arrive
                await context.close()
            v.problems = {k: list(x) for k, x in guard.problems().items()}
            visits[page] = v
        await browser.close()
        return visits


def visit_all(base_url: str, pages: list[str], shot_dir: Path | None = SHOT_DIR, concurrency: int = 3) -> dict:
    """Visit ``pages`` (paths without .html) in Chromium, ``concurrency`` tabs at a time; return {page: Visit}.

    Runs Playwright's async API in a thread of its own (the sync API of the other tests owns this one).
    """
    executable = chromium_executable()
    result = {}

    def run():
        try:
            result["visits"] = asyncio.run(_visit_all(executable, base_url, pages, shot_dir, concurrency))
        except BaseException as exc:  # re-raised in the test's thread
            result["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    return result["visits"]


def describe(problems: dict) -> str:
    return "\n".join(f"{kind}:\n  " + "\n  ".join(items) for kind, items in problems.items() if items)


def math_failures(v: Visit) -> list[str]:
    out = []
    if v.mathjax not in ("ok", "no MathJax script"):
        out.append(v.mathjax)
    if v.math["containers"] and v.mathjax != "ok":
        out.append(f"{v.math['containers']} math elements but MathJax is not loaded")
    out += [f"unrendered: {t}" for t in v.math["unrendered"]]
    out += [f"no rendered frame for: {t}" for t in v.math["frameless"]]
    out += [f"MathJax error: {t}" for t in v.math["errors"]]
    out += [f"raw TeX in the text: {t}" for t in v.math["leftovers"]]
    return out


def image_failures(v: Visit) -> list[str]:
    return [f"not loaded: {img['src']}" for img in v.images if not img["width"]]


def alt_failures(v: Visit) -> list[str]:
    out = []
    for img in v.images:
        alt = (img["alt"] or "").strip()
        # Sphinx's default alt text is the file's own path: that describes nothing
        if not alt or alt == img["src"] or re.fullmatch(r"[\w./-]+\.(png|jpe?g|svg|gif|webp)", alt):
            out.append(f"{img['src']}: alt={img['alt']!r}")
    return out


# --------------------------------------------------------------------------
# The harness checks itself: a page with every fault, and a healthy one
# --------------------------------------------------------------------------

FAKE_EXPLORER = """
<div class="posenc-explorer" id="%(id)s" data-updates="0">
  <label>value <input type="range" min="0" max="%(max)s" value="%(value)s" id="%(id)s-s"></label>
  <canvas width="200" height="60"></canvas>
</div>
<script>
(function () {
  const root = document.getElementById('%(id)s');
  const slider = root.querySelector('input'), canvas = root.querySelector('canvas');
  function draw() {
    const t0 = performance.now();
    const ctx = canvas.getContext('2d');
    ctx.clearRect(0, 0, 200, 60);
    ctx.fillRect(0, 0, 2 * Number(slider.value), 60);
    while (performance.now() - t0 < %(busy_ms)s) {}       // simulated cost of one update
    root.dataset.lastUpdateMs = (performance.now() - t0).toFixed(3);
    root.dataset.updates = Number(root.dataset.updates) + 1;
  }
  if (%(live)s) slider.addEventListener('input', draw);
  draw();
})();
</script>
"""


def fake_explorer(id, live=True, busy_ms=0, value=10, max=100):
    return FAKE_EXPLORER % dict(id=id, live="true" if live else "false", busy_ms=busy_ms, value=value, max=max)


GOOD_PAGE = f"""<!doctype html><html><head><meta charset="utf-8"><title>good</title></head><body>
<p>Plain text.</p><img src="dot.png" alt="a small red dot">
{fake_explorer("fast")}
{fake_explorer("at-max", value=100)}
</body></html>"""

BAD_PAGE = f"""<!doctype html><html><head><meta charset="utf-8"><title>bad</title></head><body>
<p>Raw TeX: <span class="math">\\(\\omega_i\\)</span> and $$x$$.</p>
<img src="missing.png" alt="missing"><img src="http://example.com/x.png" alt="">
<script>undefinedFunctionCall();</script>
<script>console.error('something broke');</script>
{fake_explorer("dead", live=False)}
{fake_explorer("slow", busy_ms=40)}
<input type="range" min="0" max="10" value="3">
</body></html>"""

RED_DOT_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de0000000c4944415408d763f8cfc000"
    "0003010100c9fe92ef0000000049454e44ae426082")


@pytest.fixture(scope="module")
def fixture_visits(tmp_path_factory):
    """Both fixture pages visited by the same machinery as the book's pages."""
    root = tmp_path_factory.mktemp("fixture_site")
    (root / "good.html").write_text(GOOD_PAGE)
    (root / "bad.html").write_text(BAD_PAGE)
    (root / "dot.png").write_bytes(RED_DOT_PNG)
    with serve(root) as base:
        return visit_all(base, ["good", "bad"], shot_dir=None)


def test_harness_passes_a_healthy_page(fixture_visits):
    v = fixture_visits["good"]
    assert not any(v.problems.values()), describe(v.problems)
    assert not math_failures(v) and not image_failures(v) and not alt_failures(v)
    assert v.explorers == 2 and len(v.sliders) == 2
    assert all(s.live and s.labelled for s in v.sliders), v.sliders
    # the slider at its maximum is moved down instead
    assert all(step.changed_value for s in v.sliders for step in s.steps)
    ms = [step.last_ms for s in v.sliders for step in s.steps]
    assert len(ms) == 2 * STEPS_PER_SLIDER and max(ms) <= FRAME_MS, ms
    assert all(step.latency_ms is not None for s in v.sliders for step in s.steps)


def test_harness_catches_every_fault(fixture_visits):
    v = fixture_visits["bad"]
    assert v.problems["external requests"] == ["http://example.com/x.png"], v.problems
    assert any("missing.png" in m for m in v.problems["missing local files"]), v.problems
    assert any("undefinedFunctionCall" in e for e in v.problems["page errors"]), v.problems
    assert any("something broke" in e for e in v.problems["console errors"]), v.problems
    failures = math_failures(v)
    assert any(f.startswith("unrendered") for f in failures), failures
    assert any("$$" in f for f in failures), failures
    assert len(image_failures(v)) == 2 and len(alt_failures(v)) == 1
    dead, slow, loose = v.sliders
    assert not dead.live and slow.live and not loose.live and not loose.labelled
    assert all(step.last_ms >= 40 for step in slow.steps)


# --------------------------------------------------------------------------
# The book, page by page
# --------------------------------------------------------------------------

class Site:
    """The served book; the first call visits every page at once (concurrently), later calls look up."""

    def __init__(self, chromium, base):
        self.chromium, self.base, self.visits = chromium, base, None

    def __call__(self, page: str) -> Visit:
        if self.visits is None:
            self.visits = visit_all(self.base, PAGES)
        return self.visits[page]


@pytest.fixture(scope="module")
def site(chromium, book):
    """Serve the built book on 127.0.0.1; all the tests below share one visit of each page."""
    with serve(book) as base:
        yield Site(chromium, base)


def test_every_built_page_is_in_the_toc(book):
    """The per-page tests below cover every page a reader can reach."""
    skip = {"genindex", "search", "index"}  # Sphinx's generated pages; search is tested on its own
    built = {str(p.relative_to(book).with_suffix("")) for p in book.rglob("*.html")
             if not p.relative_to(book).parts[0].startswith("_")}
    assert built - skip == set(PAGES), f"pages outside the toc: {sorted(built - skip - set(PAGES))}, " \
                                       f"missing: {sorted(set(PAGES) - built)}"


@pytest.mark.parametrize("page", PAGES)
def test_page_makes_no_external_request_and_no_error(site, page):
    v = site(page)
    assert not any(v.problems.values()), describe(v.problems)


@pytest.mark.parametrize("page", PAGES)
def test_page_math_is_rendered(site, page):
    v = site(page)
    failures = math_failures(v)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("page", PAGES)
def test_page_images_load(site, page):
    v = site(page)
    failures = image_failures(v)
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("page", PAGES)
def test_page_images_have_alt_text(site, page):
    """A separate test: alt text describing the figure (not Sphinx's default, the file name)."""
    v = site(page)
    failures = alt_failures(v)
    assert not failures, f"{len(failures)} of {len(v.images)} images lack alt text:\n" + "\n".join(failures)


@pytest.mark.parametrize("page", PAGES)
def test_page_sliders_are_live(site, page):
    v = site(page)
    dead = [s.label for s in v.sliders if not s.live]
    unlabelled = [s.label for s in v.sliders if not s.labelled]
    assert not dead, f"sliders that do not change the page when moved: {dead}"
    assert not unlabelled, f"sliders without a label: {unlabelled}"


def test_every_page_has_a_screenshot(site):
    shots = [site(page).screenshot for page in PAGES]
    assert all(shot is not None and shot.stat().st_size > 0 for shot in shots), shots
    print(f"screenshots of {len(shots)} pages in {SHOT_DIR}")


@pytest.mark.parametrize("page", EXPLORER_PAGES)
def test_chapter_has_an_explorer(site, page):
    v = site(page)
    assert v.explorers >= 1, f"no div.posenc-explorer on {page}"
    assert any(s.in_explorer for s in v.sliders), f"no slider inside an explorer on {page}"


def test_slider_steps_fit_in_one_frame(site):
    steps = [step for page in PAGES for s in site(page).sliders for step in s.steps if s.in_explorer]
    assert steps, "no explorer slider in the book"
    reported = [s.last_ms for s in steps if s.last_ms is not None]
    assert len(reported) == len(steps), "an explorer did not set data-last-update-ms"
    median, p95 = statistics.median(reported), percentile(reported, 95)
    assert median <= FRAME_MS and p95 <= FRAME_MS, \
        f"slider step update time: median {median:.2f} ms, p95 {p95:.2f} ms, budget {FRAME_MS} ms"


SEARCH: dict = {}  # what the search test found, for the report


def test_search_works_offline(site):
    """search.html?q=rotation lists pages (the index is the book's own searchindex.js), with other hosts blocked."""
    context = new_context(site.chromium)
    guard = Guard(context)
    try:
        tab = guard.watch(context.new_page())
        tab.goto(f"{site.base}search.html?q=rotation", wait_until="load")
        tab.locator("#search-results ul.search li").first.wait_for(timeout=15000)
        hrefs = [a.get_attribute("href") for a in tab.locator("#search-results ul.search li a").all()]
        shot = SHOT_DIR / "search.png"
        shot.parent.mkdir(parents=True, exist_ok=True)
        tab.screenshot(path=str(shot), full_page=True)
        tab.wait_for_timeout(50)
    finally:
        context.close()
    SEARCH["rotation"] = len(hrefs)
    assert not any(guard.problems().values()), describe(guard.problems())
    assert hrefs and all(h and not re.match(r"(https?:)?//", h) for h in hrefs), hrefs
    assert any("chapters/04_linearity" in h for h in hrefs), hrefs


def test_built_pages_reference_no_other_host(book):
    """Static check: no page loads a script, style sheet, image or frame from another host."""
    pattern = re.compile(r"<(script|img|iframe|source|audio|video)\b[^>]*\bsrc=[\"'](https?:)?//"
                         r"|<link\b[^>]*\brel=[\"'](stylesheet|preload|icon|modulepreload)[^>]*\bhref=[\"'](https?:)?//"
                         r"|<link\b[^>]*\bhref=[\"'](https?:)?//[^>]*\brel=[\"'](stylesheet|preload|icon|modulepreload)")
    css = re.compile(r"url\(\s*[\"']?(https?:)?//|@import\s+[\"'](https?:)?//")
    offenders = []
    for path in book.rglob("*.html"):
        for m in pattern.finditer(path.read_text(errors="replace")):
            offenders.append(f"{path.relative_to(book)}: {m.group(0)[:120]}")
    for path in book.rglob("*.css"):
        for m in css.finditer(path.read_text(errors="replace")):
            offenders.append(f"{path.relative_to(book)}: {m.group(0)[:120]}")
    assert not offenders, "\n".join(offenders)


# --------------------------------------------------------------------------
# The browser explorers compute what explorers.py computes
# --------------------------------------------------------------------------

def explorer_kinds() -> dict:
    """{kind: (slider specs, couplings, data function)} for every explorer class in explorers.py.

    The sliders come from each explorer's own ``browser_spec()`` (what the browser renderer gets);
    the data function is ``<kind>_data``, or else the ``*_data`` function whose parameters are
    exactly the slider names.
    """
    import explorers

    functions = {name: f for name, f in vars(explorers).items() if name.endswith("_data") and callable(f)}
    kinds = {}
    for cls in vars(explorers).values():
        if not (isinstance(cls, type) and issubclass(cls, explorers.Explorer) and cls.kind):
            continue
        spec = cls().browser_spec()
        names = {c["name"] for c in spec["controls"]}

        def required(f):
            return {p.name for p in inspect.signature(f).parameters.values() if p.default is inspect.Parameter.empty}

        fn = functions.get(f"{cls.kind}_data") or next(
            (f for f in functions.values() if required(f) == names), None)
        kinds[cls.kind] = (spec["controls"], spec.get("couple") or {}, fn)
    return kinds


def slider_settings(controls, couple, fn, rng, n=40) -> list[dict]:
    """Slider values on each slider's grid: all at min, all at max, each alone at its extremes, n random."""
    def grid(c, x):
        k = round((x - c["min"]) / c["step"])
        x = min(c["max"], c["min"] + k * c["step"])
        x = round(x, 10)
        return float(10 ** x) if c["log"] else (int(x) if float(x).is_integer() else x)

    def finish(values):
        for name, parent in couple.items():  # e.g. pair i <= ceil(d_model / 2) - 1, as explorers.js does
            values[name] = min(values[name], math.ceil(values[parent] / 2) - 1)
        hints = {p.name: p.annotation for p in inspect.signature(fn).parameters.values()}
        for name in values:  # a parameter typed int gets the rounded slider value (as the explorer's redraw does)
            if hints.get(name) in (int, "int"):
                values[name] = int(round(values[name]))
        return values

    default = {c["name"]: grid(c, math.log10(c["value"]) if c["log"] else c["value"]) for c in controls}
    settings = [finish({c["name"]: grid(c, c[end]) for c in controls}) for end in ("min", "max")]
    for c in controls:
        for end in ("min", "max"):
            settings.append(finish({**default, c["name"]: grid(c, c[end])}))
    for _ in range(n):
        settings.append(finish({c["name"]: grid(c, float(rng.uniform(c["min"], c["max"]))) for c in controls}))
    return settings


def _compare(name, want, got, failures, atol=1e-9, rtol=1e-12):
    """Numbers to 1e-9 absolute (or 1e-12 relative, for wavelengths near 1e9); shapes, strings exactly."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            failures.append(f"{name}: expected an object, got {str(got)[:80]}")
            return
        for key, value in want.items():
            if key not in got:
                failures.append(f"{name}: key {key!r} missing in the browser result")
            else:
                _compare(f"{name}[{key}]", value, got[key], failures, atol, rtol)
        return
    if want is None:
        if got is not None:
            failures.append(f"{name}: expected null, got {str(got)[:80]}")
        return
    if got is None:
        failures.append(f"{name}: null, expected {str(want)[:80]}")
        return
    if isinstance(want, str) or (isinstance(want, (list, tuple)) and any(isinstance(x, str) for x in want)):
        if list(want) != list(got) if not isinstance(want, str) else want != got:
            failures.append(f"{name}: {got!r}, expected {want!r}")
        return
    w = np.asarray(want, dtype=float)
    try:
        g = np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        failures.append(f"{name}: not numbers: {str(got)[:80]}")
        return
    if w.shape != g.shape:
        failures.append(f"{name}: shape {g.shape}, expected {w.shape}")
        return
    bad = ~np.isclose(g, w, atol=atol, rtol=rtol, equal_nan=True)
    if bad.any():
        at = tuple(int(x) for x in np.argwhere(bad)[0])
        failures.append(f"{name}{list(at)}: {g[at]!r}, expected {w[at]!r} ({bad.sum()} of {bad.size} differ)")


COMPUTED: dict = {}  # what the comparison compared, for the report


def test_browser_explorers_compute_what_python_draws(site):
    """window.posencExplorers.compute(kind, values) equals explorers.<kind>_data(**values), every kind."""
    rng = np.random.default_rng(20260)
    kinds = explorer_kinds()
    assert {"formula", "base", "offset"} <= set(kinds), sorted(kinds)
    missing = [kind for kind, (_, _, fn) in kinds.items() if fn is None]
    assert not missing, f"no *_data function in explorers.py for the explorers {missing}"
    settings = {kind: slider_settings(controls, couple, fn, rng) for kind, (controls, couple, fn) in kinds.items()}
    context = new_context(site.chromium)
    try:
        tab = context.new_page()
        tab.goto(f"{site.base}{EXPLORER_PAGES[0]}.html", wait_until="domcontentloaded")
        tab.wait_for_function("() => !!(window.posencExplorers && window.posencExplorers.compute)", timeout=15000)
        results = tab.evaluate(
            """settings => {
                 const out = {};
                 for (const [kind, list] of Object.entries(settings))
                   out[kind] = list.map(values => {
                     try { return {ok: window.posencExplorers.compute(kind, values)}; }
                     catch (e) { return {error: String(e)}; }
                   });
                 return out;
               }""", settings)
    finally:
        context.close()
    failures, per_kind = [], {}
    for kind, cases in settings.items():
        fn = kinds[kind][2]
        before = len(failures)
        for values, result in zip(cases, results[kind]):
            label = f"{kind}({', '.join(f'{k}={x:g}' for k, x in values.items())})"
            if "error" in result:
                failures.append(f"{label}: {result['error']}")
                continue
            _compare(label, fn(**values), result["ok"], failures)
        COMPUTED[kind] = len(cases)
        per_kind[kind] = f"{len(failures) - before} mismatches over {len(cases)} settings"
    assert not failures, f"{per_kind}\n" + "\n".join(failures[:30])


# --------------------------------------------------------------------------
# The numbers, printed at the end (visible with -q too)
# --------------------------------------------------------------------------

def test_report(site, capsys):
    """Print what was measured: pages, math, requests, sliders, update times; where the screenshots are."""
    visits = [site(page) for page in PAGES]
    steps = [step for v in visits for s in v.sliders for step in s.steps if s.in_explorer]
    reported = [s.last_ms for s in steps if s.last_ms is not None]
    latency = [s.latency_ms for s in steps if s.latency_ms is not None]
    lines = [f"browser book check: {len(visits)} pages, screenshots in {SHOT_DIR}"]
    for v in visits:
        live = sum(s.live for s in v.sliders)
        bad = sum(len(x) for x in v.problems.values())
        lines.append(f"  {v.page:36s} math {v.math['rendered']:3d}/{v.math['containers']:3d}  "
                     f"images {sum(bool(i['width']) for i in v.images):2d}/{len(v.images):2d}  "
                     f"explorers {v.explorers}{' (' + ', '.join(v.kinds) + ')' if v.kinds else ''}  sliders live {live}/{len(v.sliders)}  "
                     f"external {len(v.problems['external requests'])}  problems {bad}  "
                     f"({', '.join(f'{k} {x:.1f}' for k, x in v.seconds.items())} s)")
    lines.append(f"  math elements rendered: {sum(v.math['rendered'] for v in visits)} of "
                 f"{sum(v.math['containers'] for v in visits)}")
    lines.append(f"  external requests: {sum(len(v.problems['external requests']) for v in visits)}")
    if reported:
        lines.append(f"  slider steps: {len(steps)}; data-last-update-ms median {statistics.median(reported):.2f}, "
                     f"p95 {percentile(reported, 95):.2f}, max {max(reported):.2f} ms")
    if latency:
        lines.append(f"  input event -> data-updates (independent): median {statistics.median(latency):.2f}, "
                     f"p95 {percentile(latency, 95):.2f}, max {max(latency):.2f} ms")
    if SEARCH:
        lines.append(f"  search 'rotation' offline: {SEARCH['rotation']} results")
    if COMPUTED:
        lines.append("  browser compute == explorers.py for " +
                     ", ".join(f"{kind} ({n} settings)" for kind, n in COMPUTED.items()))
    report = "\n".join(lines)
    SHOT_DIR.mkdir(parents=True, exist_ok=True)
    (SHOT_DIR / "report.txt").write_text(report + "\n")
    with capsys.disabled():
        print("\n" + report)
