"""``make screenshots``: every page of the built book visited in Chromium in every mode, as the browser tests of the
book visit them (``book_build/book_visits.py``), with a full-page screenshot of each page in each mode and of every
explorer, into ``_build/screenshots/book/<mode>/`` and ``_build/screenshots/explorers/``, to look at; what was
measured is printed and written to ``_build/screenshots/book/report-<group>.txt``. The tests check the visits; this
tool reports them. It reads the strict build (``make book-strict``) and fails if a page got no screenshot.
"""

from __future__ import annotations

import statistics
import sys

import numpy as np

from book_build.book_server import serve
from book_build.book_visits import (
    MAX_LIGHT_NEUTRAL,
    MODES,
    PAGES,
    PHASES,
    PRINT_PAGES,
    SHOT_DIR,
    VISIT_GROUPS,
    light_share,
    visit_group,
)
from book_build.strict_build import HTML, outcome


def report(visited: dict, group: str) -> str:
    """What was measured in one visit group (``visited``: {(page, mode): Visit}): pages, math, requests, sliders,
    update times; where the screenshots are."""
    modes = [m for m in VISIT_GROUPS[group] if m in MODES]
    visits = [visited[page, modes[0]] for page in PAGES]
    steps = [step for v in visits for s in v.sliders for step in s.steps if s.in_explorer]
    reported = [s.last_ms for s in steps if s.last_ms is not None]
    latency = [s.latency_ms for s in steps if s.latency_ms is not None]
    printed = [visited[page, "print"] for page in PRINT_PAGES] if "print" in VISIT_GROUPS[group] else []
    lines = [
        f"browser book check, {group} group: {len(visits)} pages x {len(modes)} modes ({', '.join(modes)})"
        + (f" and {len(printed)} printed" if printed else "")
        + ", "
        + f"screenshots in {SHOT_DIR}/<mode>/"
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
        seen = [visited[page, mode] for page in PAGES]
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
    phone = [visited[page, "phone"] for page in PAGES] if "phone" in modes else []
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
            f"p95 {np.percentile(reported, 95):.2f}, max {max(reported):.2f} ms"
        )
    if latency:
        lines.append(
            f"  input event -> data-updates (independent): median {statistics.median(latency):.2f}, "
            f"p95 {np.percentile(latency, 95):.2f}, max {max(latency):.2f} ms"
        )
    return "\n".join(lines)


def main() -> int:
    if outcome() is None:
        print("no strict build of the current sources: run make book-strict", file=sys.stderr)
        return 1
    missing = []
    with serve(HTML) as base:
        for group in VISIT_GROUPS:
            visited = visit_group(base, group, shot_dir=SHOT_DIR)
            missing += [
                f"{v.page} ({v.mode})" for v in visited.values() if not (v.screenshot and v.screenshot.stat().st_size)
            ]
            text = report(visited, group)
            SHOT_DIR.mkdir(parents=True, exist_ok=True)
            (SHOT_DIR / f"report-{group}.txt").write_text(text + "\n")
            print(text)
    if missing:
        print(f"no screenshot of {len(missing)} visits: {', '.join(missing)}", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
