"""Visits of the built book's pages in Chromium: what a visit reads. The browser tests of the book
(test_browser_book.py, test_browser_book_dark.py) check the visits; ``tools/book_report.py`` (make screenshots) makes
the same visits with screenshots and writes what was measured.

A page is opened in Chromium (Playwright's async API, in a thread of its own) in one of the modes, and
everything the tests look at is read at once into a :class:`Visit`: problems the :class:`Guard` saw, math,
images, geometry (``page_audit.js``), inline math baselines, icons, bytes loaded, in dark mode the figures' pixels
as shown, phone menus, axe-core's findings, explorers and their sliders. ``visit_all`` makes many visits
concurrently; tests/support/book_visits.py turns a visit into what a test reports.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from book_build import book_timing, icon_fonts
from book_build.book_server import CHROMIUM_ARGS
from book_build.page_guard import Guard
from book_build.strict_build import ROOT, toc_pages, toc_parts

PAGES = toc_pages()
# The phone menus are the theme's, the same on every page of a part of the book: they are opened on the first
# and the last page of each part (every kind of page: markdown, chapter, exercise, answers, appendix, references).
MENU_PAGES = sorted({toc_pages()[0]} | {pages[i] for pages in toc_parts() for i in (0, -1)})
# name: (viewport width, height, colour scheme)
MODES = {"laptop": (1280, 900, "light"), "phone": (390, 844, "light"), "dark": (1280, 900, "dark")}
AXE_MODE = "dark"  # axe-core runs once per page, in this mode
# Print (the download menu's .pdf, and make pdf): the pages with code, outputs and quizzes, laid out on A4 paper
# (794 px at 96 px per inch) with the print style sheets
PRINT_MODE = {"print": (794, 1123, "light")}
PRINT_PAGES = [p for p in PAGES if p.startswith(("chapters/", "appendix/", "solutions/"))]
# The visits come in two groups, each made by the first test that asks for one of its modes, each in a test module
# of its own: the light group in test_browser_book.py, the dark one in test_browser_book_dark.py. Under
# pytest-xdist (make test) each file is a unit of work, so the two workers make the two halves side by side: each
# takes minutes, and both on one worker would make that worker's share most of the suite's time.
VISIT_GROUPS = {"light": ("laptop", "phone"), "dark": ("dark", "print")}
AXE_MODES = (AXE_MODE, "laptop")  # axe-core runs in these: every rule in AXE_MODE, colour contrast in the other
PHASES = ("load", "math", "read", "shades", "screenshot", "axe", "menus", "sliders")  # of a visit, timed
BASELINE_PX = 1.0  # inline math may sit this far off the text's baseline
AUDIT = (Path(__file__).parent / "page_audit.js").read_text()
FRAME_MS = 16.0  # one frame at 60 Hz, the budget of one slider step
STEPS_PER_SLIDER = 3  # key presses per slider
# the pages whose notebook imports the explorers: each shows at least one, live
EXPLORERS_IMPORTED = re.compile(r"from posenc_course(?:\.explorers import| import [^\n]*\bexplorers\b)")
EXPLORER_PAGES = [
    page
    for page in PAGES
    if (ROOT / f"{page}.ipynb").exists() and EXPLORERS_IMPORTED.search((ROOT / f"{page}.ipynb").read_text())
]
SCREENSHOTS = ROOT / "_build" / "screenshots"  # what a person looks at: tools/book_report.py, the lab's tests
EXPLORER_SHOTS = SCREENSHOTS / "explorers"  # every explorer of the book, per mode: book-<mode>/<page>-<n>.png
SHOT_DIR = SCREENSHOTS / "book"


# --------------------------------------------------------------------------
# What is read from a page (JavaScript run in the page)
# --------------------------------------------------------------------------

# Milliseconds from the start of navigation until the page's math is on screen: typeset (the book's pages
# arrive typeset, so: the page parsed), painted, its fonts received. The same measure as ``make bench``.
MATH_READY = book_timing.MATH_READY % json.dumps("build time")

# Bytes the page loaded, the document and every resource: as sent (gzip for text, as static hosts
# do; book_server.py) and as decoded.
PAGE_BYTES = """() => {
  const all = performance.getEntriesByType('navigation').concat(performance.getEntriesByType('resource'));
  const icons = all.filter(e => /fontawesome\\/webfonts\\//.test(e.name));
                      return {sent: all.reduce((s, e) => s + (e.encodedBodySize || 0), 0),
                              decoded: all.reduce((s, e) => s + (e.decodedBodySize || 0), 0),
                              iconFonts: icons.reduce((s, e) => s + (e.encodedBodySize || 0), 0)}; }"""

# Each icon on screen drawn from an icon font (a ::before or ::after whose font is Font Awesome), once per font,
# weight and glyph, with the @font-face rules of the page (each with the first file of its src: the one Chromium
# loads, woff2). Whether the glyph is in that file is read from the file itself (``icons_in_their_fonts``), not
# from the screen: where the icon font lacks it, the browser draws the code point from any system font that has
# one (Liberation and DejaVu have glyphs in this private-use range), which no drawing can tell from the icon.
ICONS_SHOWN = """() => {
  const unquote = name => name.trim().replace(/^(["'])(.*)\\1$/, '$2');
  const faces = [];
  const read = (rules, base) => {
    for (const rule of rules) {
      if (rule instanceof CSSFontFaceRule) {
        const src = /url\\(\\s*(["']?)(.*?)\\1\\s*\\)/.exec(rule.style.getPropertyValue('src'));
        faces.push({family: unquote(rule.style.getPropertyValue('font-family')),
                    weight: rule.style.getPropertyValue('font-weight') || 'normal',
                    url: src ? new URL(src[2], base).href : null});
      } else if (rule instanceof CSSImportRule) {
        if (rule.styleSheet) read(rule.styleSheet.cssRules, rule.styleSheet.href);
      } else if (rule.cssRules) {
        read(rule.cssRules, base);  // @media, @supports, @layer
      }
    }
  };
  for (const sheet of document.styleSheets) read(sheet.cssRules, sheet.href || document.baseURI);
  const seen = new Map();
  for (const el of document.querySelectorAll('body *:not(mjx-container *)')) {
    for (const pseudo of ['::before', '::after']) {
      const style = getComputedStyle(el, pseudo);
      if (!/Awesome/.test(style.fontFamily) || !el.checkVisibility()) continue;
      const ch = style.content.replace(/^"(.*)"$/u, '$1');
      if ([...ch].length !== 1) continue;
      const key = [style.fontFamily, style.fontWeight, ch].join('|');
      if (seen.has(key)) continue;
      const families = style.fontFamily.split(',').map(unquote);
      seen.set(key, {icon: ch.codePointAt(0).toString(16), font: style.fontFamily, families, weight: style.fontWeight,
                     where: `${el.tagName.toLowerCase()}.${String(el.className).trim().split(/\\s+/).join('.')}`,
                     faces: faces.filter(f => families.includes(f.family))});
    }
  }
  return [...seen.values()];
}"""

# How far inline math sits from the baseline of the words around it, in px (one value per inline formula).
# A zero-size inline-block sits on the baseline of its line: one before span.math marks the words' baseline,
# one at the end of the mjx-container (whose line holds the formula, mjx-math) marks the formula's.
INLINE_BASELINES = """() => {
  const mark = () => { const m = document.createElement('span');
                       m.style.cssText = 'display:inline-block;width:0;height:0;margin:0;padding:0;border:0';
                       return m; };
  const out = [];
  for (const span of document.querySelectorAll('article p span.math, article li span.math')) {
    if (!span.querySelector('mjx-container') || !span.checkVisibility()) continue;
    const outside = mark(), inside = mark();
    span.parentNode.insertBefore(outside, span);
    span.querySelector('mjx-container').appendChild(inside);
    const a = outside.getBoundingClientRect(), b = inside.getBoundingClientRect(), s = span.getBoundingClientRect();
    outside.remove(); inside.remove();
    // only where the formula starts on the words' line (the marker before it touches its left edge)
    if (Math.abs(a.left - s.left) < 2 && a.bottom > s.top && a.top < s.bottom) out.push(b.bottom - a.bottom);
  }
  return out;
}"""

READ_MATH = r"""() => {
  const rendered = el => el.querySelector('mjx-container');
  // myst's math containers (inline span.math, display div.math)
  const containers = [...document.querySelectorAll('span.math, div.math')];
  const unrendered = containers.filter(el => !rendered(el)).map(el => el.textContent.trim().slice(0, 100));
  const errors = [...document.querySelectorAll('mjx-merror, .MathJax_Error, .merror')]
      .map(el => el.textContent.trim().slice(0, 100));
  return {containers: containers.length, rendered: containers.length - unrendered.length, unrendered, errors};
}"""

READ_IMAGES = """async () => {
  const images = [...document.images];
  for (const img of images) img.loading = 'eager';   // lazy images load now, wherever they are
  const late = new Promise(r => setTimeout(r, 15000));
  await Promise.race([Promise.all(images.map(img => img.decode().catch(() => null))), late]);
  return images.map(img => ({src: img.getAttribute('src'), url: img.currentSrc || img.src,
                             width: img.naturalWidth, alt: img.getAttribute('alt')}));
}"""

# Dark mode: the figures as the reader sees them. A figure's dark twin (book_build/book_figures.py) turns its neutral
# colours around but keeps an image embedded in it (a heatmap) as drawn, so a figure drawn as an image of mostly white
# shows as a white square on the dark page (chapter 7's permutation matrix, once drawn with imshow in greys). Each
# image shown in the article is drawn, at the size it is shown, over the colour behind it, and its pixels are counted
# by relative luminance (``SHADE_BINS`` equal bins) and by whether they are neutral (their channels spread by less
# than ``NEUTRAL_SPREAD`` of 255: white, greys, black) or coloured. Heatmaps are light in places and colourful: a
# viridis map is yellow where its values are high, which is light but not neutral.
SHADE_BINS = 20
NEUTRAL_SPREAD = 32
LIGHT = 0.5  # relative luminance from which a pixel is light (the dark theme's text colour is 0.66, its page 0.006)
# The share of a figure's pixels that may be light and neutral in dark mode. Chosen from what the figures of the book
# and planted figures measure (the commit that set it says what they measured).
MAX_LIGHT_NEUTRAL = 0.35
FIGURE_SHADES = """({bins, spread}) => {
  const article = document.querySelector('main#main-content article') || document.querySelector('article')
                  || document.body;
  const backdrop = el => {
    for (let e = el; e; e = e.parentElement) {
      const c = getComputedStyle(e).backgroundColor;
      if (c && c !== 'transparent' && !/rgba\\([^)]*,\\s*0\\)$/.test(c)) return c;
    }
    return 'rgb(255, 255, 255)';
  };
  const linear = [...Array(256).keys()].map(c => (c /= 255) <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
  return [...article.querySelectorAll('img')].filter(img => img.naturalWidth > 0 && img.checkVisibility())
    .map(img => {
      const box = img.getBoundingClientRect();
      const width = Math.max(1, Math.round(box.width * devicePixelRatio));
      const height = Math.max(1, Math.round(box.height * devicePixelRatio));
      const hist = [...Array(bins)].map(() => [0, 0]);  // [neutral, coloured] pixels per luminance bin
      try {
        const canvas = document.createElement('canvas');
        canvas.width = width;
        canvas.height = height;
        const ctx = canvas.getContext('2d', {willReadFrequently: true});
        ctx.fillStyle = backdrop(img);
        ctx.fillRect(0, 0, width, height);
        ctx.drawImage(img, 0, 0, width, height);
        const px = ctx.getImageData(0, 0, width, height).data;
        for (let i = 0; i < px.length; i += 4) {
          const y = 0.2126 * linear[px[i]] + 0.7152 * linear[px[i + 1]] + 0.0722 * linear[px[i + 2]];
          const neutral = Math.max(px[i], px[i + 1], px[i + 2]) - Math.min(px[i], px[i + 1], px[i + 2]) < spread;
          hist[Math.min(bins - 1, Math.floor(y * bins))][neutral ? 0 : 1]++;
        }
      } catch (err) {
        return {src: img.getAttribute('src'), width, height, hist, error: String(err)};
      }
      return {src: img.getAttribute('src'), width, height, hist, error: null};
    });
}"""
SHADE_ARGS = {"bins": SHADE_BINS, "spread": NEUTRAL_SPREAD}

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
            for s in self.steps
        )


@dataclass
class Visit:
    page: str
    url: str
    problems: dict
    math: dict
    images: list
    screenshot: Path | None
    explorers: int
    sliders: list[Slider]
    seconds: dict = field(default_factory=dict)  # wall time of each phase of the visit
    kinds: list = field(default_factory=list)  # the explorers' kinds (from their data-spec)
    mode: str = "laptop"
    audit: dict = field(default_factory=dict)  # page_audit.js: geometry, raw TeX, visible text, title
    baselines: list = field(default_factory=list)  # inline math offsets from the text baseline, px
    menus: dict = field(default_factory=dict)  # phone: {"menu" | "contents": what opening it showed}
    axe: list = field(default_factory=list)  # serious and critical axe-core violations
    bytes: dict = field(default_factory=dict)  # everything the page loaded: {"sent", "decoded"}
    typeset_ms: float = float("nan")  # navigation start -> math on screen (typeset, painted, fonts)
    drawn: list = field(default_factory=list)  # each explorer: its boxes, a canvas pixel, its and the page's
    #                                              background
    axe_code_spans: list | None = None  # [code spans unwrapped before axe, token kinds kept]
    icons: list = field(default_factory=list)  # ICONS_SHOWN: each icon glyph on screen, in its font or not
    shades: list = field(default_factory=list)  # FIGURE_SHADES (dark modes): each figure's pixels by luminance


async def _menu_opens(tab, toggle: str, target: str) -> dict:
    """Click the visible ``toggle`` button(s); is a ``target`` link then on screen, unobstructed? Does Escape
    close it again?

    Returns {"buttons": visible toggles, "opened": bool, "closed": bool, "detail": str}. After each click the
    menu is closed with Escape (the theme's dialogs close on it) and must be gone from the screen, so that a
    menu left open cannot hide a dead second button, and the page is as it was for what the visit reads after.
    A menu that stays open fails; after any failure the page is reloaded.
    """
    buttons = tab.locator(toggle)
    visible = [n for n in range(await buttons.count()) if await buttons.nth(n).is_visible()]
    result = {"buttons": len(visible), "opened": bool(visible), "closed": True, "detail": ""}
    for n in visible:
        await buttons.nth(n).click()
        await tab.wait_for_timeout(400)  # the theme's open transition
        if not await tab.evaluate(ON_SCREEN_UNOBSTRUCTED, target):
            result["opened"] = False
            result["detail"] += f"button {n} of {toggle!r}: no {target!r} on screen after clicking. "
        else:
            await tab.keyboard.press("Escape")
            if await _within(tab, MENU_GONE, target, seconds=3):
                continue  # closed: the page is as it was
            result["closed"] = False
            result["detail"] += f"button {n} of {toggle!r}: the menu is still open after Escape. "
        # a button that failed may have left anything open: start the next one from a fresh page
        await tab.reload(wait_until="load")
        await tab.evaluate("() => document.fonts.ready.then(() => true)")
    return result


async def _within(tab, predicate: str, arg, seconds: float) -> bool:
    """Does the JavaScript ``predicate(arg)`` become true within ``seconds`` (polled every frame)?"""
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    try:
        await tab.wait_for_function(predicate, arg=arg, timeout=seconds * 1000)
        return True
    except PlaywrightTimeout:
        return False


# Is any element matching the selector visible, inside the viewport and the topmost element at its point?
ON_SCREEN_UNOBSTRUCTED = """sel => {
    const vw = innerWidth, vh = innerHeight;
    return [...document.querySelectorAll(sel)].some(a => {
      const r = a.getBoundingClientRect();
      if (!a.checkVisibility({opacityProperty: true, visibilityProperty: true}) || r.width < 1) return false;
      const x = r.left + Math.min(r.width / 2, 10), y = r.top + r.height / 2;
      if (x < 0 || y < 0 || x > vw || y > vh) return false;
      const hit = document.elementFromPoint(x, y);
      return !!hit && (hit === a || a.contains(hit) || hit.contains(a));
    });
}"""
# the menu of ``sel`` closed: no dialog open, none of its links on screen
MENU_GONE = f"sel => !document.querySelector('dialog[open]') && !({ON_SCREEN_UNOBSTRUCTED})(sel)"


# Before axe runs: in highlighted code, the spans of one token kind (same class, colour, weight and style, on the
# same background) all have the same contrast, so one of each is enough. The others are unwrapped (their text
# stays, as plain text of the block, whose own colour axe then checks). The span kept is one on screen in its
# scrolling box (axe skips text scrolled out of view); a kind with none on screen keeps every span. On a page
# with thousands of highlighted spans, this cuts axe's colour contrast check to a fraction of its time. It changes the
# DOM, so the visit runs axe after everything it reads from the page. Returns [spans unwrapped, kinds kept].
ONE_SPAN_PER_TOKEN_KIND = """() => {
  const kinds = new Map();
  for (const span of document.querySelectorAll('.highlight pre span')) {
    const block = span.closest('.highlight'), style = getComputedStyle(span);
    const key = [span.className, style.color, style.fontWeight, style.fontStyle,
                 getComputedStyle(block).backgroundColor, !!block.closest('.cell_output')].join('|');
    if (!kinds.has(key)) kinds.set(key, []);
    kinds.get(key).push(span);
  }
  let unwrapped = 0;
  for (const spans of kinds.values()) {
    const shown = spans.find(span => {
      const r = span.getBoundingClientRect(), box = span.closest('pre').getBoundingClientRect();
      return r.width > 0 && r.left >= box.left && r.right <= box.right && r.top >= box.top && r.bottom <= box.bottom;
    });
    if (!shown) continue;
    for (const span of spans) {
      if (span !== shown && !span.querySelector('*')) { span.replaceWith(...span.childNodes); unwrapped++; }
    }
  }
  return [unwrapped, kinds.size];
}"""


async def _axe(tab, contrast: bool = True, only: list[str] | None = None) -> list[str]:
    from axe_playwright_python.async_playwright import Axe

    # no CSSOM preload: axe would fetch the style sheets again and resolve their @import against the page
    options = {"resultTypes": ["violations"], "preload": False}
    if not contrast:
        options["rules"] = {"color-contrast": {"enabled": False}}
    if only:
        options["runOnly"] = {"type": "rule", "values": only}
    results = await Axe().run(tab, options=options)
    return [
        f"{v['impact']}: {v['id']} ({v['help']}) x{len(v['nodes'])}: "
        + "; ".join(", ".join(node["target"]) for node in v["nodes"][:3])
        for v in results.response["violations"]
        if v["impact"] in ("serious", "critical")
    ]


async def _open(
    browser,
    base_url: str,
    page: str,
    shot_dir: Path | None,
    mode: str = "laptop",
    axe: bool = True,
    check_menus: bool = True,
):
    """Load ``page`` in ``mode``, wait for its math, read math, images and geometry, take the screenshot.

    Returns (visit, context, tab, guard, number of range inputs).
    """
    width, height, scheme = {**MODES, **PRINT_MODE}[mode]
    context = await browser.new_context(
        viewport={"width": width, "height": height}, color_scheme=scheme, service_workers="block"
    )
    guard = Guard(context, async_api=True)
    await guard.route_async(context)
    await context.add_init_script(script=MATH_READY)
    tab = guard.watch(await context.new_page())
    if mode in PRINT_MODE:
        await tab.emulate_media(media="print")
    url = f"{base_url}{page}.html"
    seconds, t0 = {}, time.perf_counter()
    await tab.goto(url, wait_until="load")
    seconds["load"], t0 = time.perf_counter() - t0, time.perf_counter()
    typeset_ms = await tab.evaluate("() => window.__mathReady")
    seconds["math"], t0 = time.perf_counter() - t0, time.perf_counter()
    math_info = await tab.evaluate(READ_MATH)
    images = await tab.evaluate(READ_IMAGES)
    await tab.evaluate("() => document.fonts.ready")
    audit = await tab.evaluate(AUDIT)
    baselines = await tab.evaluate(INLINE_BASELINES)
    icons = await tab.evaluate(ICONS_SHOWN)
    weight = await tab.evaluate(PAGE_BYTES)
    seconds["read"], t0 = time.perf_counter() - t0, time.perf_counter()
    shades = []
    if scheme == "dark":
        shades = await tab.evaluate(FIGURE_SHADES, SHADE_ARGS)
        seconds["shades"], t0 = time.perf_counter() - t0, time.perf_counter()
    screenshot = None
    if shot_dir is not None:
        # JPEG: a long page's full-page PNG takes seconds to encode; these are for people to look at
        screenshot = shot_dir / mode / f"{page}.jpg"
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        await tab.screenshot(path=str(screenshot), full_page=True, type="jpeg", quality=85)
    seconds["screenshot"], t0 = time.perf_counter() - t0, time.perf_counter()
    menus = {}
    if mode == "phone" and check_menus:
        has_contents = bool(await tab.locator("nav.page-toc a, #pst-page-toc-nav a").count())
        # any page of the book listed in the opened menu (not this page's own entry: its link is "#")
        menus["menu"] = await _menu_opens(tab, ".primary-toggle", 'nav.bd-docs-nav a.reference[href$=".html"]')
        if has_contents:
            menus["contents"] = await _menu_opens(tab, ".secondary-toggle", "nav.page-toc a, #pst-page-toc-nav a")
        seconds["menus"] = time.perf_counter() - t0
    kinds = await tab.evaluate("""() => [...document.querySelectorAll('.posenc-explorer')].map(e => {
        try { return JSON.parse(e.dataset.spec).kind; } catch (err) { return '?'; } })""")
    ranges = await tab.locator("input[type=range]").count()
    drawn = await tab.evaluate(EXPLORERS_DRAWN) if kinds else []
    if kinds and shot_dir is not None:
        for n in range(len(kinds)):
            shot = EXPLORER_SHOTS / f"book-{mode}" / f"{page.replace('/', '-')}-{n}.png"
            shot.parent.mkdir(parents=True, exist_ok=True)
            await tab.locator(".posenc-explorer").nth(n).screenshot(path=str(shot))
    # axe once per page, in AXE_MODE (dark, where the course's own colours are most at risk), every rule
    # including colour contrast. Its other rules read the DOM, which is the same in every mode. Last, as
    # ONE_SPAN_PER_TOKEN_KIND changes the DOM.
    violations, sampled, t0 = [], None, time.perf_counter()
    if axe and mode in AXE_MODES:
        sampled = await tab.evaluate(ONE_SPAN_PER_TOKEN_KIND)
        # colours differ by theme: contrast in light mode too
        violations = await _axe(tab) if mode == AXE_MODE else await _axe(tab, only=["color-contrast"])
        seconds["axe"] = time.perf_counter() - t0
    v = Visit(
        page,
        url,
        {},
        math_info,
        images,
        screenshot,
        len(kinds),
        [],
        seconds,
        kinds,
        mode=mode,
        audit=audit,
        baselines=baselines,
        menus=menus,
        axe=violations,
        bytes=weight,
        typeset_ms=typeset_ms,
        drawn=drawn,
        axe_code_spans=sampled,
        icons=icons,
        shades=shades,
    )
    return v, context, tab, guard, ranges


# Each explorer as drawn: the boxes of its text and plots (explorers.js), a canvas pixel in the top right corner
# (where nothing is drawn),
# its background and the page's, the canvas size in device pixels against its CSS size.
EXPLORERS_DRAWN = """() => [...document.querySelectorAll('.posenc-explorer')].map(root => {
  const canvas = root.querySelector('canvas'), rect = canvas ? canvas.getBoundingClientRect() : null;
  return {
    boxes: window.posencExplorers && root.posencView ? window.posencExplorers.boxes(root) : null,
    pixel: canvas ? [...canvas.getContext('2d').getImageData(canvas.width - 3, 2, 1, 1).data].slice(0, 3) : null,
    background: getComputedStyle(root).backgroundColor,
    page: getComputedStyle(document.body).backgroundColor,
    frame: (() => {  // the nearest background behind the explorer (a panel the theme puts outputs on)
      for (let e = root.parentElement; e; e = e.parentElement) {
        const c = getComputedStyle(e).backgroundColor;
        if (c !== 'rgba(0, 0, 0, 0)') return c;
      }
      return null; })(),
    crisp: canvas ? Math.abs(canvas.width - Math.round(rect.width * devicePixelRatio)) <= 1 : false,
  };
})"""


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
            await tab.evaluate(
                "() => { window.__posencProbe.inputAt = null; window.__posencProbe.latencies.length = 0; }"
            )
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
            step = Step(
                changed_pixels=changed,
                changed_value=after["value"] != before["value"],
                updates_before=before["updates"],
                updates_after=after["updates"],
                last_ms=after["lastMs"],
                latency_ms=latency,
            )
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


async def _visit_all(
    executable: str,
    base_url: str,
    pages: list[str],
    shot_dir,
    concurrency: int,
    menu_pages,
    modes=tuple(MODES),
    print_pages=(),
) -> dict:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        gate = asyncio.Semaphore(concurrency)
        opened = {}

        async def load(page, mode):
            async with gate:
                opened[page, mode] = await _open(
                    browser, base_url, page, shot_dir, mode, check_menus=menu_pages is None or page in menu_pages
                )
                v, context, tab, guard, ranges = opened[page, mode]
                if not ranges or mode != "laptop":  # nothing to move here: done with this page
                    await tab.wait_for_timeout(50)
                    await context.close()

        visits_to_make = [(page, mode) for page in pages for mode in modes]
        visits_to_make += [(page, mode) for page in print_pages for mode in PRINT_MODE]
        await asyncio.gather(*(load(page, mode) for page, mode in visits_to_make))
        # Sliders one page at a time, with nothing else loading, so the update times are not
        # inflated by other tabs typesetting their math on the same cores.
        visits = {}
        for (page, mode), (v, context, tab, guard, ranges) in opened.items():
            if ranges and mode == "laptop":
                t0 = time.perf_counter()
                v.sliders = await _exercise_sliders(tab)
                v.seconds["sliders"] = time.perf_counter() - t0
                await tab.wait_for_timeout(50)  # let late errors and requests arrive
                await context.close()
            v.problems = {k: list(x) for k, x in guard.problems().items()}
            visits[page, mode] = v
        await browser.close()
        return visits


def visit_all(
    base_url: str,
    pages: list[str],
    shot_dir: Path | None = None,
    concurrency: int = 3,
    modes=tuple(MODES),
    menu_pages=None,
    print_pages=(),
) -> dict:
    """Visit ``pages`` (paths without .html) in Chromium in each of ``modes``, and ``print_pages`` as printed
    (``PRINT_MODE``); return {(page, mode): Visit}.

    ``concurrency`` tabs at a time. The phone menus are opened on ``menu_pages`` (None: every page).
    Runs Playwright's async API in a thread of its own (the sync API of
    the other tests owns this one).
    """
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        raise RuntimeError("Chromium is not installed: apt-get install chromium")
    result = {}

    def run():
        try:
            result["visits"] = asyncio.run(
                _visit_all(executable, base_url, pages, shot_dir, concurrency, menu_pages, modes, print_pages)
            )
        except BaseException as exc:  # re-raised in the test's thread
            result["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    icons_in_their_fonts([icon for v in result["visits"].values() for icon in v.icons])
    return result["visits"]


def visit_group(base_url: str, group: str, shot_dir: Path | None = None) -> dict:
    """Every page in every mode of the visit group ``group`` (``VISIT_GROUPS``), and printed if the group prints;
    the phone menus opened on ``MENU_PAGES``: {(page, mode): Visit}."""
    modes = VISIT_GROUPS[group]
    return visit_all(
        base_url,
        PAGES,
        shot_dir=shot_dir,
        modes=[m for m in modes if m in MODES],
        menu_pages=MENU_PAGES,
        print_pages=PRINT_PAGES if "print" in modes else (),
    )


def _weights(css: str) -> tuple[float, float]:
    """A CSS font-weight, or a range of them ("100 900"), as (lowest, highest)."""
    values = [float({"normal": "400", "bold": "700"}.get(w, w)) for w in css.split()]
    return min(values), max(values)


def icon_face(icon: dict) -> dict | None:
    """The @font-face (of ``icon["faces"]``) the icon is drawn from: of the first family in its font-family list
    that has any, the one of the icon's weight. None if that family has no face of that weight: the browser would
    take a face of another weight, which in an icon font holds another set of icons."""
    weight = _weights(icon["weight"])[0]
    for family in icon["families"]:
        faces = [f for f in icon["faces"] if f["family"] == family]
        if faces:
            return next((f for f in faces if _weights(f["weight"])[0] <= weight <= _weights(f["weight"])[1]), None)
    return None


def icons_in_their_fonts(icons: list[dict]) -> None:
    """Set each icon's ``file`` (the font file it is drawn from: ``icon_face``, or None) and ``in_font`` (its code
    point is in that file's character map). Each file is fetched from the server once, as the browser got it."""
    cmaps: dict[str, set[int]] = {}
    for icon in icons:
        face = icon_face(icon)
        icon["file"] = face["url"] if face else None
        if icon["file"] and icon["file"] not in cmaps:
            with urllib.request.urlopen(icon["file"], timeout=30) as response:
                cmaps[icon["file"]] = icon_fonts.glyph_code_points(response.read())
        icon["in_font"] = icon["file"] is not None and int(icon["icon"], 16) in cmaps[icon["file"]]


def light_share(hist: list[list[int]]) -> float:
    """The share of a figure's pixels (``FIGURE_SHADES``' histogram) that are light and neutral: white and light
    greys, what a light background or an image of mostly white shows."""
    light = round(LIGHT * len(hist))
    return sum(neutral for neutral, _ in hist[light:]) / max(1, sum(map(sum, hist)))
