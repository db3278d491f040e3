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


def fits(fig) -> list[str]:
    """What is wrong with a drawn figure's layout, read off matplotlib's own boxes: plotting areas under
    an inch either way, and titles or legends of different panels that overlap each other or a colour bar."""
    renderer = fig.canvas.get_renderer()
    wrong = []
    colorbars = [ax for ax in fig.axes if getattr(ax, "_colorbar", None) is not None]
    panels = [ax for ax in fig.axes if ax not in colorbars]
    for n, ax in enumerate(panels):
        box = ax.get_position()
        if box.width * fig.get_figwidth() < 1 or box.height * fig.get_figheight() < 1:
            wrong.append(
                f"panel {n} is {box.width * fig.get_figwidth():.2f} x {box.height * fig.get_figheight():.2f} in"
            )
    boxes = []
    for n, ax in enumerate(panels):
        boxes += [(n, ax.title.get_window_extent(renderer))] if ax.get_title() else []
        boxes += [(n, ax.get_legend().get_window_extent(renderer))] if ax.get_legend() else []
    boxes += [(-1 - n, ax.get_window_extent(renderer)) for n, ax in enumerate(colorbars)]
    for i, (a, box_a) in enumerate(boxes):
        for b, box_b in boxes[i + 1 :]:
            if a != b and box_a.overlaps(box_b):
                wrong.append(f"{a} and {b} overlap")
    return wrong


def decay_figure(figsize, stacked):
    """A figure drawn like chapter 8's decay figure: two log panels with long legends and small text."""
    import numpy as np

    k = np.arange(251)
    fig, (left, right) = plt.subplots(*((2, 1) if stacked else (1, 2)), figsize=figsize, constrained_layout=True)
    for n, label in enumerate(
        [
            "bound (Abel summation), mean",
            "mean score, q = κ",
            "RoFormer's curve (1/(d/2)) Σ|S_j|",
            "mean |score|, random q, κ (10–90 %)",
        ]
    ):
        left.plot(k, 10.0 ** (4 - n) / np.sqrt(1 + k / 20), label=label)
    left.set_yscale("log")
    left.set_xlabel("offset k = p − s")
    left.set_ylabel("size of the score")
    left.set_title("Random vectors, d = 128", fontsize=11)
    left.legend(fontsize=8, loc="upper right")
    for head in range(2):
        right.plot(k[:64], 10 + 5 * np.cos(k[:64] + head), "o-", ms=2.5, label=f"head {head}: mean |score|")
        right.plot(k[:64], np.full(64, 300.0 + 50 * head), "--", label=f"head {head}: bound, mean")
    right.text(17, 1.3, "offsets beyond training", fontsize=9)
    right.set_yscale("log")
    right.set_ylim(1, 1e4)
    right.set_xlabel("offset k = p − s")
    right.set_title("Trained RoPE model, d = 16 per head", fontsize=11)
    right.legend(fontsize=8, loc="upper center", ncol=2)
    return fig


def test_legible_never_returns_a_collapsed_figure():
    """Text raised for a phone can leave no room: constrained_layout then gives up and collapses the axes
    (chapter 8's decay figure, 9 in wide, did). legible refuses such a figure, with no warning printed."""
    import warnings

    with mpl.rc_context():
        plotting.apply_style()
        fig = decay_figure((9, 4), stacked=False)
        assert fits(fig) == []  # at the sizes it was drawn with, it fits
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a warning would be printed into the book's page ...
            warnings.simplefilter("ignore", DeprecationWarning)  # (... but a library's deprecation, hidden by default)
            try:
                plotting.legible(fig)
            except ValueError as refused:  # plotting.LayoutError
                assert "does not fit" in str(refused) and "constrained_layout gave up" in str(refused)
            else:
                assert fits(fig) == []
        plt.close(fig)


def test_a_figure_with_room_keeps_its_panels_and_separates_titles_and_legends():
    """The same panels stacked in the column's width fit at the phone's text size."""
    import warnings

    with mpl.rc_context():
        plotting.apply_style()
        fig = decay_figure((6.4, 7.6), stacked=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            warnings.simplefilter("ignore", DeprecationWarning)
            plotting.legible(fig)
        assert min(drawn_text_sizes(fig)) >= plotting.min_font_pt(6.4)
        assert fits(fig) == [] and plotting.layout_problems(fig) == []
        plt.close(fig)


def test_a_title_running_into_a_colour_bar_is_refused():
    """Two heatmaps with colour bars and two-line titles: at a phone's text size each title runs into the
    colour bar of its panel (chapter 8's first figure did); shorter titles fit."""
    import numpy as np
    import pytest

    with mpl.rc_context():
        plotting.apply_style()
        for title, refused in [
            ("Score of one token against itself,\nadded sinusoidal encoding", True),
            ("RoPE", False),
        ]:
            fig, axes = plt.subplots(1, 2, figsize=(8, 4), constrained_layout=True)
            for ax in axes:
                im = ax.imshow(np.arange(48 * 48).reshape(48, 48), cmap="PuOr")
                ax.set_title(title, fontsize=10)
                fig.colorbar(im, ax=ax, shrink=0.8, label="score")
            if refused:
                with pytest.raises(plotting.LayoutError, match="title of axes 0 overlaps axes 2"):
                    plotting.legible(fig)
            else:
                plotting.legible(fig)
                assert fits(fig) == []
            plt.close(fig)


def _matplotlib_of_the_lock() -> bool:
    from importlib.metadata import version
    from pathlib import Path

    lock = (Path(__file__).resolve().parents[1] / "requirements.txt").read_text()
    return f"matplotlib=={version('matplotlib')}" in lock


def test_a_title_that_fits_on_screen_but_overruns_in_the_svg_is_refused():
    """Chapter 4's T(3) figure: at the screen's 100 dpi its second title ends a pixel short of the shared colour
    bar, in the SVG (72 dpi, where hinted text is a little wider) it runs into it. The layout is checked at both."""
    import numpy as np

    with mpl.rc_context():
        plotting.apply_style()
        for title, refused in [("T(3), {} layout, d = 16", True), ("T(3), {}", False)]:
            fig, axes = plt.subplots(1, 2, figsize=(8, 4), constrained_layout=True)
            for ax, layout in zip(axes, ["interleaved", "concatenated"]):
                im = ax.imshow(np.eye(16), cmap="PuOr", vmin=-1, vmax=1)
                ax.set_xticks(range(0, 16, 2))
                ax.set_yticks(range(0, 16, 2))
                ax.set_xlabel("input channel")
                ax.set_ylabel("output channel")
                ax.set_title(title.format(layout), fontsize=10)
            fig.colorbar(im, ax=axes, shrink=0.8, label="entry of T(k)")
            if refused:
                try:
                    plotting.legible(fig)
                    raised = ""
                except plotting.LayoutError as error:
                    raised = str(error)
                fig.set_dpi(plotting.SVG_DPI)
                in_svg = plotting._problems_as_drawn(fig)
                fig.set_dpi(100)
                on_screen = plotting._problems_as_drawn(fig)
                # what overruns where depends on the installed matplotlib's text metrics: every problem found at
                # either dpi is reported; under the lock's matplotlib only the SVG overruns
                found = on_screen + in_svg
                assert bool(raised) == bool(found) and all(problem in raised for problem in found), raised
                if _matplotlib_of_the_lock():
                    assert on_screen == [] and "title of axes 1 overlaps axes 2" in raised
            else:
                plotting.legible(fig)
            assert fig.dpi == 100  # the check leaves the figure as it was
            plt.close(fig)
