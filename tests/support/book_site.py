"""The served book and its visits, for the browser tests of the book: the ``site`` fixture (a plugin: the root
conftest.py lists this module in ``pytest_plugins``).

``site(page, mode)`` is the visit of ``page`` in ``mode``; the first call for a mode visits every page in every
mode of that mode's group (``VISIT_GROUPS``), concurrently. The fixture is module-scoped: each test module makes its
own visits, so the two groups are made by the two modules (test_browser_book.py and test_browser_book_dark.py) and,
under pytest-xdist, by two workers side by side. When a module is done, what it measured is printed and written to
``_build/screenshots/book/report-<group>.txt``.
"""

from __future__ import annotations

import statistics

import pytest

from book_build.book_server import serve
from tests.support.book_visits import (
    MAX_LIGHT_NEUTRAL,
    MODES,
    PAGES,
    PHASES,
    PRINT_PAGES,
    SHOT_DIR,
    TAKE_SHOTS,
    VISIT_GROUPS,
    MENU_PAGES,
    Visit,
    light_share,
    visit_all,
)
from tests.support.browser import percentile


class Site:
    """The served book; the first call for a mode visits every page in that mode's group (concurrently), later
    calls look up."""

    def __init__(self, chromium, base):
        self.chromium, self.base, self.visits = chromium, base, {}
        self.notes: list[str] = []  # lines a test adds to the report (what it found, beyond the visits)

    def __call__(self, page: str, mode: str = "laptop") -> Visit:
        if (page, mode) not in self.visits:
            (group,) = [modes for modes in VISIT_GROUPS.values() if mode in modes]
            self.visits.update(
                visit_all(
                    self.base,
                    PAGES,
                    shot_dir=SHOT_DIR if TAKE_SHOTS else None,
                    modes=[m for m in group if m in MODES],
                    menu_pages=MENU_PAGES,
                    print_pages=PRINT_PAGES if "print" in group else (),
                )
            )
        return self.visits[page, mode]

    def groups(self) -> list[str]:
        """The visit groups done so far."""
        return [name for name, modes in VISIT_GROUPS.items() if (PAGES[0], modes[0]) in self.visits]


@pytest.fixture(scope="module")
def site(chromium, book, request):
    """Serve the built book on 127.0.0.1; the tests of a module share one visit of each page in each mode.

    When the module is done, what was measured is written to ``_build/screenshots/book/report-<group>.txt`` and
    shown in the terminal summary (not a test: it asserts nothing).
    """
    with serve(book) as base:
        visited = Site(chromium, base)
        yield visited
    for group in visited.groups():
        text = report(visited, group)
        SHOT_DIR.mkdir(parents=True, exist_ok=True)
        (SHOT_DIR / f"report-{group}.txt").write_text(text + "\n")
        terminal = request.config.pluginmanager.get_plugin("terminalreporter")
        if terminal is not None:
            terminal.write_line("\n" + text)


def report(site, group: str) -> str:
    """What was measured in one visit group: pages, math, requests, sliders, update times; where the screenshots
    are."""
    modes = [m for m in VISIT_GROUPS[group] if m in MODES]
    visits = [site(page, modes[0]) for page in PAGES]
    steps = [step for v in visits for s in v.sliders for step in s.steps if s.in_explorer]
    reported = [s.last_ms for s in steps if s.last_ms is not None]
    latency = [s.latency_ms for s in steps if s.latency_ms is not None]
    printed = [site(page, "print") for page in PRINT_PAGES] if "print" in VISIT_GROUPS[group] else []
    lines = [
        f"browser book check, {group} group: {len(visits)} pages x {len(modes)} modes ({', '.join(modes)})"
        + (f" and {len(printed)} printed" if printed else "")
        + ", "
        + (f"screenshots in {SHOT_DIR}/<mode>/" if TAKE_SHOTS else "no screenshots (make screenshots takes them)")
    ]
    for v in visits:
        live = sum(s.live for s in v.sliders)
        bad = sum(len(x) for x in v.problems.values())
        lines.append(
            f"  {v.page:36s} math {v.math['rendered']:3d}/{v.math['containers']:3d}  "
            f"images {sum(bool(i['width']) for i in v.images):2d}/{len(v.images):2d}  "
            f"explorers {v.explorers}{' (' + ', '.join(v.kinds) + ')' if v.kinds else ''}  "
            f"sliders live {live}/{len(v.sliders)}  "
            f"external {len(v.problems['external requests'])}  problems {bad}  "
            f"({', '.join(f'{k} {x:.1f}' for k, x in v.seconds.items())} s)"
        )
    lines.append(
        f"  math elements rendered: {sum(v.math['rendered'] for v in visits)} of "
        f"{sum(v.math['containers'] for v in visits)}"
    )
    lines.append(f"  external requests: {sum(len(v.problems['external requests']) for v in visits)}")
    lines.append(f"  per mode (all pages; {modes[0]}: the page lines above):")
    for mode in modes:
        seen = [site(page, mode) for page in PAGES]
        scrolled = {}
        for v in seen:
            for box in v.audit["scrolled"]:
                scrolled[box["kind"]] = scrolled.get(box["kind"], 0) + 1
        offsets = [abs(d) for v in seen for d in v.baselines]
        heaviest = max(seen, key=lambda v: v.bytes["sent"])
        slowest = max(seen, key=lambda v: v.typeset_ms)
        lines.append(
            f"    {mode:6s} cut off {sum(len(v.audit['clipped']) for v in seen)}, pages that pan "
            f"{sum(bool(v.audit['pan']) for v in seen)}, raw TeX {sum(len(v.audit['rawTex']) for v in seen)}, "
            f"axe serious/critical {sum(len(v.axe) for v in seen)}, "
            f"inline math off baseline max {max(offsets, default=0):.2f} px over {len(offsets)}; "
            f"boxes that scroll sideways {dict(sorted(scrolled.items()))}; "
            f"heaviest page {heaviest.bytes['sent'] / 1e6:.2f} MB sent ({heaviest.bytes['decoded'] / 1e6:.2f} MB "
            f"decoded, {heaviest.page}); slowest to show its math {slowest.typeset_ms:.0f} ms ({slowest.page}, "
            f"tabs sharing the CPU); seconds spent: "
            + ", ".join(f"{k} {sum(v.seconds.get(k, 0) for v in seen):.0f}" for k in PHASES)
        )
    if printed:
        lines.append(
            f"  printed: {len(printed)} pages, seconds spent: "
            + ", ".join(f"{k} {sum(v.seconds.get(k, 0) for v in printed):.0f}" for k in PHASES)
        )
    phone = [site(page, "phone") for page in PAGES] if "phone" in modes else []
    shown = [f["shown"] / f["natural"] for v in phone for f in v.audit["figures"]]
    if shown:
        lines.append(
            f"  figures on the phone: shown at {min(shown):.0%}-{max(shown):.0%} of their size ({len(shown)} figures)"
        )
    shades = [(light_share(f["hist"]), v.page, f["src"]) for v in visits for f in v.shades if not f["error"]]
    if shades:
        (low, *lowest), (high, *highest) = min(shades), max(shades)
        lines.append(
            f"  figures in dark mode: {len(shades)}, light and neutral on {low:.1%} ({' '.join(lowest)}) to "
            f"{high:.1%} ({' '.join(highest)}) of their pixels (at most {MAX_LIGHT_NEUTRAL:.0%})"
        )
    menu = [v for v in phone if "menu" in v.menus]
    if menu:
        lines.append(
            f"  phone menu opens the chapter list on {sum(v.menus['menu']['opened'] for v in menu)} of "
            f"{len(menu)} pages tried; contents button on "
            f"{sum(v.menus['contents']['opened'] for v in phone if 'contents' in v.menus)} of "
            f"{sum('contents' in v.menus for v in phone)}"
        )
    if reported:
        lines.append(
            f"  slider steps: {len(steps)}; data-last-update-ms median {statistics.median(reported):.2f}, "
            f"p95 {percentile(reported, 95):.2f}, max {max(reported):.2f} ms"
        )
    if latency:
        lines.append(
            f"  input event -> data-updates (independent): median {statistics.median(latency):.2f}, "
            f"p95 {percentile(latency, 95):.2f}, max {max(latency):.2f} ms"
        )
    lines += [f"  {note}" for note in site.notes]
    return "\n".join(lines)
