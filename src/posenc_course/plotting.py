"""House style for the course's figures: one colour-blind-safe palette.

The Okabe-Ito palette stays distinguishable under the common forms of colour
blindness; sequential and diverging maps are viridis / cividis and RdBu-like
``"PuOr"``, which are also safe. Figures get a white background so that they
stay legible when the book is read in dark mode.

Figures are vector graphics (SVG) in Jupyter and in the book: crisp on any
screen and at any zoom, and scaled to the column. The book shows each at the
column's width, so on a phone a wide figure's text shrinks with it: before a
figure is shown, ``legible`` raises any text that would be smaller than
``MIN_TEXT_PX`` CSS pixels in a phone's column (the browser tests measure it).
In the book's dark mode each figure has a dark twin (book_build/book_figures.py).

Larger text needs more room. When a figure has too little, constrained_layout gives up (with a
warning) and leaves its axes shrunk to slivers, or titles and legends run into each other;
``legible`` raises :class:`LayoutError` rather than return such a figure, so a chapter whose
figure does not fit fails when it runs instead of publishing it. :func:`layout_problems` names
what is wrong with a drawn figure.
"""

from __future__ import annotations

import warnings

import matplotlib as mpl
import matplotlib.figure
import matplotlib.text
from cycler import cycler

from posenc_course.arguments import InstanceOf, Real, accepts

__all__ = [
    "OKABE_ITO",
    "SEQUENTIAL",
    "DIVERGING",
    "MAX_WIDTH",
    "PHONE_COLUMN_PX",
    "MIN_TEXT_PX",
    "min_font_pt",
    "legible",
    "layout_problems",
    "apply_style",
]

OKABE_ITO = [
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#D55E00",  # vermillion
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#F0E442",  # yellow
    "#000000",  # black
]
SEQUENTIAL = "viridis"
DIVERGING = "PuOr"
MAX_WIDTH = 8.0  # inches; chapters keep every figure at most this wide
PHONE_COLUMN_PX = 340  # a figure's width on a 390 px phone (the column less the output's padding: 342 px)
MIN_TEXT_PX = 8.0  # no text of a figure smaller than this there
SVG_DPI = 72  # an SVG is drawn in points, 72 to the inch


@accepts(width_in=Real(above=0, hi=1000, what="a figure width in inches, > 0"))
def min_font_pt(width_in: float) -> float:
    """The smallest font size (pt) of a figure ``width_in`` inches wide whose text, shown at the phone's
    column width, is at least ``MIN_TEXT_PX`` CSS pixels tall (an SVG point is 4/3 CSS px at full size)."""
    return MIN_TEXT_PX * 72 * width_in / PHONE_COLUMN_PX


class LayoutError(ValueError):
    """A figure whose text, at the size a phone needs, does not fit its layout."""


_FIGURE = InstanceOf(matplotlib.figure.Figure, "a matplotlib Figure (plt.figure(), or fig from plt.subplots())")
MIN_AXES_IN = 0.5  # inches: a plotting area (not a colour bar) narrower or lower than this has collapsed


@accepts(fig=_FIGURE)
def legible(fig):
    """Raise every text of ``fig`` (titles, labels, tick labels, legends, annotations) to at least
    ``min_font_pt`` of the width it is shown at (its tight bounding box, which a legend or title outside the
    axes can make wider than the figure); returns ``fig``. Raises :class:`LayoutError` if the figure's
    layout does not hold the text at that size (see :func:`layout_problems`)."""
    _agg_canvas(fig)
    for _ in range(8):  # larger text can widen the box again; 2 % to spare, so that it settles above the floor
        if _draw(fig) is not None:  # the layout (constrained_layout) as it will be saved
            break
        shown = fig.get_tightbbox(fig.canvas.get_renderer()).width + 2 * mpl.rcParams["savefig.pad_inches"]
        if not _raise_text(fig, 1.02 * min_font_pt(max(fig.get_figwidth(), shown))):
            break
    problems = layout_problems(fig)
    if problems:
        raise LayoutError(
            f"this {fig.get_figwidth():g} x {fig.get_figheight():g} in figure does not fit its text at the size a "
            f"phone needs ({min_font_pt(fig.get_figwidth()):.1f} pt or more): {'; '.join(problems)}. Give it more "
            "room (taller, or panels stacked), or shorter titles and legend entries"
        )
    return fig


def _agg_canvas(fig) -> None:
    """A canvas that draws, for a Figure() made without pyplot."""
    if not hasattr(fig.canvas, "get_renderer"):
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(fig)


def _draw(fig) -> str | None:
    """Draw ``fig``; constrained_layout's warning if it gave up (then kept from the output), else None."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.filterwarnings("always", message="constrained_layout not applied")  # others as filtered
        fig.canvas.draw()
    gave_up = None
    for warning in caught:
        if "constrained_layout not applied" in str(warning.message):
            gave_up = str(warning.message)
        else:
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    return gave_up


@accepts(fig=_FIGURE)
def layout_problems(fig) -> list[str]:
    """What is wrong with the layout of ``fig``: plotting areas (axes other than colour bars)
    less than ``MIN_AXES_IN`` wide or high, and titles, legends or colour bars that overlap one another or
    another panel; and constrained_layout giving up. An empty list: none of these. Draws ``fig``.

    The layout is checked as the screen draws it (the figure's dpi) and as its SVG does (``SVG_DPI``): text is
    measured at the size in pixels it is drawn at, and a title that just fits at one can overrun at the other."""
    dpi, problems = fig.dpi, []
    try:
        for each in dict.fromkeys((dpi, SVG_DPI)):
            fig.set_dpi(each)
            problems += [p for p in _problems_as_drawn(fig) if p not in problems]
    finally:
        fig.set_dpi(dpi)
    return problems


def _problems_as_drawn(fig) -> list[str]:
    _agg_canvas(fig)
    gave_up = _draw(fig)
    problems = [] if gave_up is None else [f"constrained_layout gave up ({gave_up})"]
    renderer = fig.canvas.get_renderer()
    panels = [ax for ax in fig.axes if ax.get_visible()]
    for n, ax in enumerate(panels):
        box = ax.get_position()
        width, height = box.width * fig.get_figwidth(), box.height * fig.get_figheight()
        if not _is_colorbar(ax) and min(width, height) < MIN_AXES_IN:
            problems.append(f"axes {n} is {width:.2f} x {height:.2f} in")
    # (owner, what, box): a panel's title and legend, the figure's own; then whole panels, as obstacles
    parts = []
    for n, ax in enumerate(panels):
        for title in (ax.title, ax._left_title, ax._right_title):
            if title.get_visible() and title.get_text():
                parts.append((n, f"the title of axes {n}", title.get_window_extent(renderer)))
        legend = ax.get_legend()
        if legend is not None and legend.get_visible():
            parts.append((n, f"the legend of axes {n}", legend.get_window_extent(renderer)))
    for text in (fig._suptitle, fig._supxlabel, fig._supylabel):
        if text is not None and text.get_visible() and text.get_text():
            parts.append((-1, "the figure's title", text.get_window_extent(renderer)))
    for legend in fig.legends:
        parts.append((-1, "the figure's legend", legend.get_window_extent(renderer)))
    for i, (owner_a, what_a, box_a) in enumerate(parts):
        for owner_b, what_b, box_b in parts[i + 1 :]:
            if owner_a != owner_b and _overlap(box_a, box_b):
                problems.append(f"{what_a} overlaps {what_b}")
    for owner, what, box in parts:
        for n, ax in enumerate(panels):
            if n != owner and not _twins(ax, panels[owner] if owner >= 0 else None):
                if _overlap(box, ax.get_window_extent(renderer)):
                    problems.append(f"{what} overlaps axes {n}")
    return problems


def _is_colorbar(ax) -> bool:
    return getattr(ax, "_colorbar", None) is not None


def _twins(ax, other) -> bool:
    """Whether two axes share their plotting area (twinx, twiny)."""
    return other is not None and ax.get_position().bounds == other.get_position().bounds


def _overlap(a, b, slack: float = 1.0) -> bool:
    """Whether two display boxes overlap by more than ``slack`` pixels both ways."""
    return min(a.x1, b.x1) - max(a.x0, b.x0) > slack and min(a.y1, b.y1) - max(a.y0, b.y0) > slack


def _raise_text(fig, floor: float) -> bool:
    """Every text of ``fig`` below ``floor`` pt raised to it; whether anything changed."""
    changed = False
    for ax in fig.axes:
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            labels = axis.get_ticklabels(which="both")
            if labels and min(t.get_fontsize() for t in labels) < floor - 1e-9:
                ax.tick_params(axis=name, which="both", labelsize=floor)
                changed = True
    for text in fig.findobj(matplotlib.text.Text):
        if text.get_fontsize() < floor - 1e-9:
            text.set_fontsize(floor)
            changed = True
    return changed


def _svg(fig) -> str:
    """The inline backend's SVG of ``fig``, its text made legible first (no date: the same figure, the same SVG)."""
    from IPython.core.pylabtools import print_figure

    return print_figure(legible(fig), "svg", bbox_inches="tight", metadata={"Date": None})


def _vector_figures() -> None:
    """Notebook figures as SVG (inline backend), legible on a phone; nothing outside IPython."""
    try:
        from IPython import get_ipython
        from matplotlib_inline.backend_inline import set_matplotlib_formats
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None:
        set_matplotlib_formats("svg")
        shell.display_formatter.formatters["image/svg+xml"].for_type(matplotlib.figure.Figure, _svg)


@accepts()
def apply_style() -> None:
    """Set the course's matplotlib defaults (call once per notebook)."""
    mpl.rcParams.update(
        {
            "axes.prop_cycle": cycler(color=OKABE_ITO),
            "image.cmap": SEQUENTIAL,
            "figure.figsize": (6.4, 3.4),
            "figure.dpi": 100,
            "figure.facecolor": "white",
            "axes.facecolor": "white",
            "savefig.facecolor": "white",
            "axes.grid": True,
            "grid.alpha": 0.3,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "font.size": 12,
            # the same figure gives the same SVG (ids from a fixed salt, no date)
            "svg.hashsalt": "posenc",
            "svg.fonttype": "path",
        }
    )
    _vector_figures()
