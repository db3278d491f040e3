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
