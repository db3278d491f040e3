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
"""

from __future__ import annotations

import matplotlib as mpl
import matplotlib.figure
import matplotlib.text
from cycler import cycler

from posenc_course.arguments import InstanceOf, Real, accepts

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


@accepts(width_in=Real(above=0, hi=1000, what="a figure width in inches, > 0"))
def min_font_pt(width_in: float) -> float:
    """The smallest font size (pt) of a figure ``width_in`` inches wide whose text, shown at the phone's
    column width, is at least ``MIN_TEXT_PX`` CSS pixels tall (an SVG point is 4/3 CSS px at full size)."""
    return MIN_TEXT_PX * 72 * width_in / PHONE_COLUMN_PX


@accepts(fig=InstanceOf(matplotlib.figure.Figure, "a matplotlib Figure (plt.figure(), or fig from plt.subplots())"))
def legible(fig):
    """Raise every text of ``fig`` (titles, labels, tick labels, legends, annotations) to at least
    ``min_font_pt`` of the width it is shown at (its tight bounding box, which a legend or title outside the
    axes can make wider than the figure); returns ``fig``."""
    if not hasattr(fig.canvas, "get_renderer"):  # a Figure() made without pyplot has no canvas that draws
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        FigureCanvasAgg(fig)
    for _ in range(8):  # larger text can widen the box again; 2 % to spare, so that it settles above the floor
        fig.canvas.draw()  # the layout (constrained_layout) as it will be saved
        shown = fig.get_tightbbox(fig.canvas.get_renderer()).width + 2 * mpl.rcParams["savefig.pad_inches"]
        if not _raise_text(fig, 1.02 * min_font_pt(max(fig.get_figwidth(), shown))):
            break
    return fig


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
