"""Every slider of every explorer, at every extreme, redraws without error."""

import itertools

import numpy as np
import pytest

import explorers
import posenc

EXPLORERS = [explorers.FormulaExplorer, explorers.BaseExplorer, explorers.OffsetExplorer,
             explorers.RopeScalingExplorer, explorers.PrecisionExplorer]
PNG = b"\x89PNG"


def sweep_values(control, n=5):
    """min, max and a few values in between, on the slider's own grid."""
    if hasattr(control, "base") and hasattr(control, "min") and control.__class__.__name__ == "FloatLogSlider":
        exps = np.linspace(control.min, control.max, n)
        return [control.base ** e for e in exps]
    return sorted({control.min, control.max, *np.linspace(control.min, control.max, n).astype(int).tolist()})


@pytest.mark.parametrize("cls", EXPLORERS, ids=lambda c: c.__name__)
def test_every_slider_value_renders(cls):
    explorer = cls()
    figure, n_artists = explorer.figure, [len(ax.get_children()) for ax in explorer.figure.axes]
    assert bytes(explorer.image.value).startswith(PNG)
    for name, control in explorer.controls.items():
        original = control.value
        for value in sweep_values(control):
            before = bytes(explorer.image.value)
            control.value = value
            assert bytes(explorer.image.value).startswith(PNG)
            if control.value != original:
                assert bytes(explorer.image.value) != before or value == original
        control.value = original
    # the same figure and the same artists throughout: redraw, not rebuild
    assert explorer.figure is figure
    assert [len(ax.get_children()) for ax in explorer.figure.axes] == n_artists


@pytest.mark.parametrize("cls", EXPLORERS, ids=lambda c: c.__name__)
def test_corners_of_the_slider_box(cls):
    """All combinations of extremes, which is where coupled ranges break."""
    explorer = cls()
    names = list(explorer.controls)
    extremes = [sweep_values(explorer.controls[n], 2) for n in names]
    for combo in itertools.product(*extremes):
        for name, value in zip(names, combo):
            explorer.controls[name].value = value
        assert explorer.update().startswith(PNG)


def test_pair_slider_follows_d_model():
    explorer = explorers.FormulaExplorer()
    i, d = explorer.controls["i"], explorer.controls["d_model"]
    d.value = 10
    assert i.max == 4
    i.value = 4
    d.value = 3  # odd: pairs 0 and 1, the last with only its sine
    assert i.max == 1 and i.value == 1
    d.value = 256
    assert i.max == 127


def test_formula_data_comes_from_posenc():
    data = explorers.formula_data(pos=17, i=3, d_model=9, base=500.0)
    np.testing.assert_array_equal(data["row"], posenc.sinusoidal([17], 9, 500.0)[0])
    np.testing.assert_array_equal(data["sin"], posenc.sinusoidal(200, 9, 500.0)[:, 6])
    assert data["omega"] == posenc.frequencies(9, 500.0)[3]
    assert explorers.formula_data(0, 4, 9, 500.0)["cos"] is None  # lone last sine


def test_base_data_counts():
    kinds = posenc.pair_regimes(512, 1000, 10000.0)
    data = explorers.base_data(10000.0, 512, 1000)
    assert (data["fine"], data["constant"], data["wraps"]) == tuple(int(kinds[k].sum()) for k in ("fine", "constant", "wraps"))
    lam = data["wavelength"]  # the drawn boundaries say the same as the masks
    np.testing.assert_array_equal(lam <= data["fine_below"], kinds["fine"])
    np.testing.assert_array_equal(lam > data["constant_above"], kinds["constant"])
    # a larger base leaves fewer fine pairs and more nearly constant ones (ERRATA 4's direction)
    big = explorers.base_data(500000.0, 512, 1000)
    assert big["fine"] < data["fine"] and big["constant"] > data["constant"]


def test_offset_data_is_a_rotation():
    data = explorers.offset_data(7, 16, 10000.0)
    later = posenc.sinusoidal([10], 16)[0]
    pairs = data["pairs"]
    np.testing.assert_allclose(data["later"][:, 1], later[2 * pairs], atol=1e-12)
    np.testing.assert_allclose(data["arcs"][:, -1, :], data["later"], atol=1e-9)  # the arc ends at PE(p+k)
    np.testing.assert_allclose(data["dot_k"], np.cos(posenc.frequencies(16) * 7).sum(), atol=1e-12)


@pytest.mark.parametrize("cls", EXPLORERS, ids=lambda c: c.__name__)
def test_display_bundle_has_live_widget_and_static_renderer(cls):
    """JupyterLab shows the widget view; the static book shows the text/html twin."""
    import html
    import json
    import re

    explorer = cls()
    bundle = explorer._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    page = bundle["text/html"]
    spec = json.loads(html.unescape(re.search(r'data-spec="([^"]*)"', page).group(1)))
    assert spec["kind"] == cls.kind and spec["kind"] in explorers.BROWSER_SCRIPT.read_text()
    names = [c["name"] for c in spec["controls"]]
    assert names == list(explorer.controls)
    for control in spec["controls"]:
        widget = explorer.controls[control["name"]]
        assert (control["min"], control["max"], control["value"]) == (widget.min, widget.max, widget.value)
    assert "window.posencExplorers" in page  # the renderer travels with the output


def test_rope_scaling_data():
    data = explorers.rope_scaling_data(base=10000.0, scale=4, d_model=128, length=2048)
    plain = posenc.wavelengths(128)
    np.testing.assert_allclose(data["interpolated"], 4 * plain)
    np.testing.assert_allclose(data["raised"], posenc.wavelengths(128, 10000.0 * 4 ** (128 / 126)))
    # the NTK-aware base keeps the fastest pair and stretches the slowest by exactly s
    assert data["raised"][0] == pytest.approx(plain[0])
    assert data["raised"][-1] / plain[-1] == pytest.approx(4.0)
    # both stretch wavelengths, so more pairs are slower than the training length
    assert data["unseen_interpolated"] > data["unseen_plain"] and data["unseen_raised"] > data["unseen_plain"]


def test_precision_data():
    low = explorers.precision_data(100, 10000.0, 64)
    assert low["collides"] == []
    assert np.nanmax(low["errors"]["float32"]) < np.nanmax(low["errors"]["bfloat16"])
    high = explorers.precision_data(4096, 10000.0, 64)
    assert "float16" in high["collides"] and "bfloat16" in high["collides"] and "float32" not in high["collides"]
    assert np.isnan(explorers.precision_data(100000, 10000.0, 64)["errors"]["float16"][0])  # overflow past 65504
