"""What the browser tests of the book make of a visit (``book_build/book_visits.py`` makes the visits): each
``*_failures`` function turns a :class:`Visit` into the lines a test reports."""

from __future__ import annotations

import re

from book_build.book_visits import BASELINE_PX, MAX_LIGHT_NEUTRAL, Visit, light_share


def describe(problems: dict) -> str:
    return "\n".join(f"{kind}:\n  " + "\n  ".join(items) for kind, items in problems.items() if items)


def math_failures(v: Visit) -> list[str]:
    out = [f"unrendered: {t}" for t in v.math["unrendered"]]
    out += [f"MathJax error: {t}" for t in v.math["errors"]]
    out += [f"raw TeX shown ({t})" for t in v.audit["rawTex"]]
    return out


def layout_failures(v: Visit) -> list[str]:
    """Content cut off with no way to scroll to it, and a page that pans sideways."""
    out = [
        f"cut off ({c['kind']}, {c['content']} px of content in a {c['width']} px box, "
        f"{c['cut']} px hidden): {c['what']}"
        for c in v.audit["clipped"]
    ]
    out += [
        f"a tab stop for scrolling on a box that shows nothing wider than itself: {what}"
        for what in v.audit["spuriousStops"]
    ]
    if v.audit["pan"]:
        out.append(
            f"the page pans sideways by {v.audit['pan']['by']} px; sticking out: "
            + "; ".join(v.audit["pan"]["offenders"])
        )
    return out


def baseline_failures(v: Visit) -> list[str]:
    off = [d for d in v.baselines if abs(d) > BASELINE_PX]
    return (
        [
            f"{len(off)} of {len(v.baselines)} inline formulas sit off the text baseline "
            f"(by {min(off):+.1f} to {max(off):+.1f} px)"
        ]
        if off
        else []
    )


def menu_failures(v: Visit) -> list[str]:
    out = []
    for name, m in v.menus.items():
        if not m["buttons"]:
            out.append(f"no visible {name} button")
            continue
        if not m["opened"]:
            out.append(f"the {name} button opens nothing: {m['detail']}")
        if not m["closed"]:
            out.append(f"the {name} does not close with Escape: {m['detail']}")
    return out


def image_failures(v: Visit) -> list[str]:
    return [f"not loaded: {img['src']}" for img in v.images if not img["width"]]


def icon_failures(v: Visit) -> list[str]:
    """Icons on screen whose glyph is not in the icon font they are drawn from."""
    return [
        f"{v.page}: U+{i['icon'].upper()} ({i['font']} {i['weight']}) in {i['where']}: "
        + (f"not in {i['file']}" if i["file"] else "no @font-face of that family and weight")
        for i in v.icons
        if not i["in_font"]
    ]


def alt_failures(v: Visit) -> list[str]:
    out = []
    for img in v.images:
        alt = (img["alt"] or "").strip()
        # Sphinx's default alt text is the file's own path: that describes nothing
        if not alt or alt == img["src"] or re.fullmatch(r"[\w./-]+\.(png|jpe?g|svg|gif|webp)", alt):
            out.append(f"{img['src']}: alt={img['alt']!r}")
    return out


def figure_failures(v: Visit) -> list[str]:
    """Figures wider than their column, and raster figures with fewer than 2 pixels per CSS pixel."""
    out = []
    for f in v.audit["figures"]:
        if "_images/" not in f["src"]:
            continue
        if f["shown"] > f["column"] + 1:
            out.append(f"{f['src']}: {f['shown']} px wide in a {f['column']} px column")
        if not f["vector"] and f["natural"] < 2 * f["shown"]:
            out.append(f"{f['src']}: {f['natural']} pixels shown over {f['shown']} CSS px (soft on a 2x screen)")
    return out


def dark_twin_failures(shades: list[dict]) -> list[str]:
    """Figures (``FIGURE_SHADES``) shown mostly light in dark mode, and figures that could not be measured."""
    out = [f"{f['src']}: not measured ({f['error']})" for f in shades if f["error"]]
    out += [
        f"{f['src']}: {light_share(f['hist']):.0%} of its {f['width']}x{f['height']} pixels light and neutral in "
        f"dark mode (at most {MAX_LIGHT_NEUTRAL:.0%}): a light background, or an embedded image of mostly white"
        for f in shades
        if not f["error"] and light_share(f["hist"]) > MAX_LIGHT_NEUTRAL
    ]
    return out


def luminance(css: str) -> float:
    """Relative luminance (WCAG) of a CSS rgb() colour."""
    channels = [c / 255 for c in rgb(css)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def rgb(css: str) -> list[int]:
    return [round(float(x)) for x in re.findall(r"[\d.]+", css)[:3]]
