"""Dark twins of the book's figures: each SVG figure gets a copy drawn for the dark theme.

The notebooks draw their figures once, on white (``posenc_course.plotting``), so that
they read the same in JupyterLab, VS Code, Colab and the book. In the book's dark mode
pydata-sphinx-theme would show them on a light panel, dimmed. After the build, every
figure an HTML page shows as an SVG image gets a twin ``<name>.dark.svg`` in which the
neutral colours are turned around (white background -> the dark page's background, black
text and axes -> the dark theme's text colour, greys in between in proportion) and the
data colours are kept; the page shows the original with the theme's class ``only-light``
and the twin with ``only-dark``, both loaded lazily (the hidden one is never fetched).
Images embedded inside an SVG (heatmaps) are data and are kept as drawn.
"""

from __future__ import annotations

import re
from pathlib import Path

# the dark theme's page background (sphinx-book-theme's --pst-color-background) and base text colour
# (pydata-sphinx-theme's --pst-color-text-base)
DARK_BACKGROUND = (0x12, 0x12, 0x12)
DARK_TEXT = (0xCE, 0xD6, 0xDD)
GREY_SPREAD = 10  # a colour whose channels differ by at most this much is a neutral grey

_HEX = re.compile(r"#([0-9a-fA-F]{6})\b")
_IMG = re.compile(r'<img (?P<before>[^>]*?)src="(?P<src>[^"]*_images/[^"]+\.svg)"(?P<after>[^>]*?)\s*/?>')
_CLASS = re.compile(r'\s*class="([^"]*)"')
_NAMED = {"white": "#ffffff", "black": "#000000"}


def dark_colour(hex6: str) -> str:
    """The dark-theme colour for ``#rrggbb``: a neutral grey of lightness L goes to
    ``background + (1 - L) (text - background)``; any other colour is kept."""
    r, g, b = (int(hex6[i : i + 2], 16) for i in (0, 2, 4))
    if max(r, g, b) - min(r, g, b) > GREY_SPREAD:
        return "#" + hex6.lower()
    light = (r + g + b) / (3 * 255)
    mixed = (round(bg + (1 - light) * (fg - bg)) for bg, fg in zip(DARK_BACKGROUND, DARK_TEXT))
    return "#" + "".join(f"{c:02x}" for c in mixed)


def dark_svg(svg: str) -> str:
    """``svg`` with its neutral colours turned for the dark theme (embedded images untouched)."""
    parts = re.split(r'(xlink:href="data:[^"]*"|href="data:[^"]*")', svg)  # keep base64 payloads as they are
    for n in range(0, len(parts), 2):
        text = parts[n]
        for name, value in _NAMED.items():
            text = re.sub(rf"(fill|stroke|stop-color)(:\s*|=\"){name}\b", rf"\g<1>\g<2>{value}", text)
        parts[n] = _HEX.sub(lambda m: dark_colour(m.group(1)), text)
    # what matplotlib draws in black it writes with no colour at all (text, SVG's default fill): the root's fill
    default = "#" + "".join(f"{c:02x}" for c in DARK_TEXT)
    return re.sub(r"<svg\b", f'<svg fill="{default}"', "".join(parts), count=1)


def add_dark_twins(html: str, page: Path) -> tuple[str, int]:
    """Give every SVG figure of an HTML page a dark twin; returns the new HTML and the count."""
    count = 0

    def twin(m: re.Match) -> str:
        nonlocal count
        src = m.group("src")
        if src.endswith(".dark.svg") or "only-light" in m.group(0):
            return m.group(0)
        source = (page.parent / src).resolve()
        if not source.is_file():
            return m.group(0)
        dark = source.with_name(source.stem + ".dark.svg")
        dark.write_text(dark_svg(source.read_text(encoding="utf-8")), encoding="utf-8")
        count += 1
        attributes = m.group("before") + m.group("after")
        classes = " ".join(_CLASS.findall(attributes))
        attributes = _CLASS.sub("", attributes).strip()
        dark_src = src[: -len(".svg")] + ".dark.svg"
        # lazy: the browser fetches a figure when it is about to be shown, so the hidden twin costs nothing
        lazy = "" if "loading=" in attributes else ' loading="lazy"'
        return "".join(
            f'<img {attributes} class="{(classes + " " + theme).strip()}"{lazy} src="{path}" />'
            for theme, path in (("only-light", src), ("only-dark", dark_src))
        )

    return _IMG.sub(twin, html), count


def dark_twins(app, exception) -> None:
    """build-finished: dark twins for every page's SVG figures (html builders)."""
    if exception is not None or app.builder.format != "html":
        return
    from sphinx.util import logging

    total = 0
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        if ".svg" not in text:
            continue
        new, count = add_dark_twins(text, page)
        if count:
            page.write_text(new, encoding="utf-8")
            total += count
    logging.getLogger(__name__).info("gave %d figures a dark twin", total)
