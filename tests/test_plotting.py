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
