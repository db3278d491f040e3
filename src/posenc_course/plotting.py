"""House style for the course's figures: one colour-blind-safe palette.

The Okabe-Ito palette stays distinguishable under the common forms of colour
blindness; sequential and diverging maps are viridis / cividis and RdBu-like
``"PuOr"``, which are also safe. Figures get a white background so that they
stay legible when the book is read in dark mode.

Figures are vector graphics (SVG) in Jupyter and in the book: crisp on any
screen and at any zoom, and scaled to the column. The book shows each at the
column's width, so its text is as large as the figure is narrow: see
``MAX_WIDTH`` and ``MIN_FONT_PT`` (tests/test_book_figures.py measures the
text of every figure as a phone shows it). In the book's dark mode each figure
has a dark twin (book_build/book_figures.py).
"""

from __future__ import annotations

import matplotlib as mpl
from cycler import cycler

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
MIN_FONT_PT = 10.0  # no text smaller than this in a figure


def _vector_figures() -> None:
    """Notebook figures as SVG (inline backend); nothing outside IPython."""
    try:
        from IPython import get_ipython
        from matplotlib_inline.backend_inline import set_matplotlib_formats
    except ImportError:
        return
    if get_ipython() is not None:
        set_matplotlib_formats("svg", metadata={"Date": None})


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
