"""plotting.apply_style: the palette, and sizes that stay readable in a narrow column."""

import matplotlib as mpl
import matplotlib.pyplot as plt

from posenc_course import plotting


def test_style_sets_palette_and_readable_sizes():
    with mpl.rc_context():
        plotting.apply_style()
        assert [c for c in mpl.rcParams["axes.prop_cycle"].by_key()["color"]] == plotting.OKABE_ITO
        width, height = mpl.rcParams["figure.figsize"]
        assert width <= plotting.MAX_WIDTH and height < width
        assert mpl.rcParams["font.size"] >= 12
        assert mpl.rcParams["figure.facecolor"] == "white"
        fig = plt.figure()
        assert fig.get_size_inches()[0] * fig.dpi <= 700
        plt.close(fig)


def drawn_text_sizes(fig) -> list[float]:
    """Font sizes (pt) of every text the figure draws, tick labels included (after a draw)."""
    fig.canvas.draw()
    return [t.get_fontsize() for t in fig.findobj(mpl.text.Text) if t.get_visible() and t.get_text()]


def test_legible_raises_small_text_to_the_phone_floor_and_leaves_large_text():
    with mpl.rc_context():
        plotting.apply_style()
        fig, axes = plt.subplots(1, 2, figsize=(8, 3))
        axes[0].plot([0, 1], [0, 1], label="a line")
        axes[0].legend(fontsize=7)
        axes[0].set_title("big title", fontsize=20)
        axes[1].annotate("note", (0.5, 0.5), fontsize=6)
        axes[1].tick_params(labelsize=8)
        floor = plotting.min_font_pt(8)
        assert min(drawn_text_sizes(fig)) < floor
        plotting.legible(fig)
        sizes = drawn_text_sizes(fig)
        assert min(sizes) >= floor and 20 in sizes
        # what the floor means: text of that size, in a figure shown at the phone's column width
        shown = floor * (4 / 3) * plotting.PHONE_COLUMN_PX / (8 * 96)
        assert abs(shown - plotting.MIN_TEXT_PX) < 1e-9
        plt.close(fig)


def test_notebook_figures_are_svg_with_legible_text():
    """In IPython, apply_style makes the inline backend's figures SVG, passed through legible first."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    with mpl.rc_context():
        plotting.apply_style()
        fig, ax = plt.subplots(figsize=(8, 3))
        ax.plot([0, 1])
        ax.tick_params(labelsize=6)
        data, _ = shell.display_formatter.format(fig)
        assert "image/svg+xml" in data and "image/png" not in data
        assert data["image/svg+xml"].lstrip().startswith("<?xml") and "<dc:date>" not in data["image/svg+xml"]
        assert min(drawn_text_sizes(fig)) >= plotting.min_font_pt(8)
        plt.close(fig)


def test_text_stays_legible_when_the_saved_figure_is_wider_than_its_size():
    """A legend outside the axes widens the saved (tight) SVG beyond the figure's width: the floor follows."""
    import re

    with mpl.rc_context():
        plotting.apply_style()
        fig, ax = plt.subplots(figsize=(6.4, 3))
        for n in range(3):
            ax.plot([0, 1], [n, n + 1], label=f"a rather long legend entry {n}")
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1), fontsize=8)
        ax.tick_params(labelsize=7)
        svg = plotting._svg(fig)
        width_pt = float(re.search(r'<svg[^>]*\bwidth="([\d.]+)pt"', svg).group(1))
        smallest = min(100 * float(a) for a, b in re.findall(r"scale\(([\d.]+) -([\d.]+)\)", svg) if a == b)
        assert width_pt > 6.4 * 72 + 20  # the legend made it wider
        shown_px = smallest * plotting.PHONE_COLUMN_PX / width_pt  # text size in CSS px in a phone's column
        assert shown_px >= plotting.MIN_TEXT_PX - 0.01, shown_px
        plt.close(fig)
