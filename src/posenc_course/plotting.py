"""House style for the course's figures: one colour-blind-safe palette.

The Okabe-Ito palette stays distinguishable under the common forms of colour
blindness; sequential and diverging maps are viridis / cividis and RdBu-like
``"PuOr"``, which are also safe. Figures get a white background so that they
stay legible when the book is read in dark mode.

Sizes are chosen for the narrow column: a figure at most ``MAX_WIDTH`` inches
(640 px at 100 dpi) wide with 12 pt text still has readable labels when a
phone shows it at about 560 px.
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
        }
    )
