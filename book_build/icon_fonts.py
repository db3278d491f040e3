"""The theme's icon fonts cut down to the icons the book shows.

pydata-sphinx-theme ships Font Awesome 6 as three web fonts (solid 156 KB, brands 118 KB, regular 25 KB),
and every page that shows a header icon loads the solid one whole for about ten glyphs. After the build,
each font in the output is replaced by a subset (fontTools) holding the glyphs the built book can ask for:

* the icon of every ``fa-*`` class in a built page or in one of its scripts (``.fa-bars:before{content:...}``
  in the theme's style sheet gives the code point);
* every code point of Font Awesome's private-use range that a style sheet uses in its own rules rather
  than in that class list: the theme's ``--pst-icon-*`` variables (admonition titles, edit buttons),
  sphinx-book-theme's own icons.

The originals are read from the theme's package every time, so an incremental build starts from whole fonts.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

from book_build import download_menu

WEBFONTS = Path("vendor") / "fontawesome" / "webfonts"  # under _static/
FONTS = ("fa-solid-900", "fa-regular-400", "fa-brands-400")
# .fa-bars:before,.fa-navicon:before{content:"\f0c9"}: the class list of the theme's style sheet
CLASS_RULE = re.compile(r'((?:\.fa-[a-z0-9-]+:{1,2}before,?)+)\{content:"(\\[0-9a-fA-F]+|[^"]+)"\}')
CLASS_NAME = re.compile(r"\.(fa-[a-z0-9-]+):{1,2}before")
USED_CLASS = re.compile(r"\bfa-[a-z0-9-]+")
PRIVATE_USE = re.compile(r"\\(e[0-9a-f]{3}|f[0-8][0-9a-f]{2})\b|([\ue000-\uf8ff])", re.I)


def _code_point(content: str) -> int | None:
    if re.fullmatch(r"\\[0-9a-fA-F]{1,6}", content):  # a CSS escape: backslash and hex digits
        return int(content[1:], 16)
    text = content.removeprefix("\\")  # "\@": the character itself
    return ord(text) if len(text) == 1 else None


def class_code_points(css: str) -> dict[str, int]:
    """{"fa-bars": 0xF0C9, ...} from a style sheet's Font Awesome class list."""
    points = {}
    for names, content in CLASS_RULE.findall(css):
        point = _code_point(content)
        if point is not None:
            points.update((name, point) for name in CLASS_NAME.findall(names))
    return points


def css_code_points(css: str) -> set[int]:
    """Private-use code points a style sheet uses outside Font Awesome's class list."""
    rest = CLASS_RULE.sub("", css)
    return {int(m[0], 16) if m[0] else ord(m[1]) for m in PRIVATE_USE.findall(rest)}


def code_points_used(outdir: Path) -> set[int]:
    """Every icon code point the built book at ``outdir`` can show."""
    static = outdir / "_static"
    sheets = [p.read_text(encoding="utf-8", errors="replace") for p in static.rglob("*.css")]
    names = {}
    for css in sheets:
        names.update(class_code_points(css))
    used = set().union(*(css_code_points(css) for css in sheets))
    scripts = [p for p in static.rglob("*.js") if p.name != "fontawesome.js"]  # the build removes that one
    for path in [*outdir.rglob("*.html"), *scripts]:
        used |= {names[c] for c in USED_CLASS.findall(path.read_text(encoding="utf-8", errors="replace")) if c in names}
    # the download menus' own entries, which reach the pages after the fonts are cut (book_kit) or after the
    # build (book_pdf, make pdf)
    for entry in (download_menu.KIT, download_menu.PDF):
        used |= {names[c] for c in USED_CLASS.findall(entry["icon"]) if c in names}
    return used


def glyph_code_points(font: bytes) -> set[int]:
    """The code points ``font`` (TrueType, WOFF or WOFF2) has a glyph for: its character map."""
    from fontTools.ttLib import TTFont

    return set(TTFont(io.BytesIO(font)).getBestCmap())


def subset(font: bytes, code_points: set[int], flavor: str | None) -> bytes:
    """``font`` with only the glyphs of ``code_points`` it has (``flavor``: "woff2" or None for TrueType)."""
    from fontTools import subset as ft_subset
    from fontTools.ttLib import TTFont

    loaded = TTFont(io.BytesIO(font))
    keep = code_points & set(loaded.getBestCmap())
    options = ft_subset.Options()
    options.flavor = flavor
    options.layout_features = ["*"]
    subsetter = ft_subset.Subsetter(options)
    subsetter.populate(unicodes=sorted(keep))
    subsetter.subset(loaded)
    out = io.BytesIO()
    loaded.flavor = flavor
    loaded.save(out)
    return out.getvalue()


def theme_webfonts() -> Path:
    import pydata_sphinx_theme

    return Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme" / "static" / WEBFONTS


def subset_icon_fonts(app, exception) -> None:
    """build-finished: replace the output's Font Awesome fonts by subsets of the theme's originals."""
    if exception is not None or app.builder.format != "html":
        return
    target = Path(app.outdir) / "_static" / WEBFONTS
    if not target.is_dir():
        return
    used = code_points_used(Path(app.outdir))
    for name in FONTS:
        for suffix, flavor in ((".woff2", "woff2"), (".ttf", None)):
            original, out = theme_webfonts() / (name + suffix), target / (name + suffix)
            if original.is_file() and out.is_file():
                out.write_bytes(subset(original.read_bytes(), used, flavor))
