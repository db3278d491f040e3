"""The explorers: Python's reference numbers, the widget, and the browser renderer.

* ``*_data`` (the numerical reference) agree with ``posenc``.
* Each explorer is an anywidget whose traits are its slider values, with
  ipywidgets sliders linked to them in the browser (jslink), and displays as
  both the widget view and the ``text/html`` twin that carries explorers.js.
* In Chromium (the twin, on a local page): every slider swept through its
  extremes, its grid and all corners of the slider box redraws, and what the
  module drew equals ``*_data`` for the same values; the layout fits 320,
  390 and 1280 px at devicePixelRatio 2 with no title, legend entry, tick
  label or axis label overlapping another or the data; colours follow the
  book's (pydata) and JupyterLab's light and dark themes; sliders work from the
  keyboard and have names; the canvases say in words what they show.

Screenshots of every explorer go to ``_build/screenshots/explorers/``
(``w390/``, ``w1280/``, ``dark/``, ``lab-dark/``).
"""

from __future__ import annotations

import inspect
import json
import re

import anywidget
import ipywidgets as widgets
import numpy as np
import pytest

import posenc
from book_build.book_server import serve
from book_build.book_visits import SCREENSHOTS
from book_build.strict_build import ROOT
from posenc_course import explorers
from posenc_course.arguments import ArgumentError
from tests.support.browser import chromium_executable, compare_numbers, explorer_layout_failures, new_context
from tests.support.explorer_settings import DATA, EXPLORERS, python_values, settings_for

SHOT_DIR = SCREENSHOTS / "explorers"
PYDATA_CSS = next(
    (ROOT / ".venv").glob(
        "lib/python3*/site-packages/pydata_sphinx_theme/theme/pydata_sphinx_theme/static/styles/pydata-sphinx-theme.css"
    ),
    None,
)
LAB_THEMES = ROOT / ".venv" / "share" / "jupyter" / "lab" / "themes" / "@jupyterlab"


# --------------------------------------------------------------------------
# The numerical reference
# --------------------------------------------------------------------------


def test_formula_data_comes_from_posenc():
    data = explorers.formula_data(pos=17, i=3, d_model=9, base=500.0)
    np.testing.assert_array_equal(data["row"], posenc.sinusoidal([17], 9, 500.0)[0])
    np.testing.assert_array_equal(data["sin"], posenc.sinusoidal(200, 9, 500.0)[:, 6])
    assert data["omega"] == posenc.frequencies(9, 500.0)[3]
    assert explorers.formula_data(0, 4, 9, 500.0)["cos"] is None  # lone last sine


def test_base_data_counts():
    kinds = posenc.pair_regimes(512, 1000, 10000.0)
    data = explorers.base_data(10000.0, 512, 1000)
    regimes = ("fine", "constant", "wraps")
    assert tuple(data[k] for k in regimes) == tuple(int(kinds[k].sum()) for k in regimes)
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


def test_attention_data_comes_from_posenc():
    """The additive schemes' weights are posenc.attention_weights' row, with posenc's encodings and biases."""
    n, d, query = len(explorers.SENTENCE), 16, 9
    setup = explorers.attention_setup(d)
    x, w_q, w_k = setup["tokens"], setup["w_q"], setup["w_k"]
    rows = {
        "none": posenc.attention_weights(x, w_q, w_k, causal=True),
        "sinusoidal": posenc.attention_weights(x + posenc.sinusoidal(n, d, 100.0), w_q, w_k, causal=True),
        "learned": posenc.attention_weights(x + setup["learned"], w_q, w_k, causal=True),
        "alibi": posenc.attention_weights(x, w_q, w_k, bias=posenc.alibi_bias(8, n)[1], causal=True),
        "t5": posenc.attention_weights(
            x, w_q, w_k, bias=posenc.t5_bias(setup["t5_table"], n, **explorers.T5_BUCKETS)[0], causal=True
        ),
    }
    for scheme, weights in rows.items():
        data = explorers.attention_data(query, scheme, 100.0, d)
        np.testing.assert_allclose(data["weights"], weights[query, : query + 1], atol=1e-12, err_msg=scheme)
        assert data["weights"].sum() == pytest.approx(1.0) and data["scheme"] == scheme
        by_index = explorers.attention_data(query, explorers.ATTENTION_SCHEMES.index(scheme), 100.0, d)
        np.testing.assert_array_equal(by_index["scores"], data["scores"])
    # RoPE: the rotated projections, then q . k / sqrt(d)
    q = posenc.apply_rope(x @ w_q, base=100.0)
    k = posenc.apply_rope(x @ w_k, base=100.0)
    rope = explorers.attention_data(query, "rope", 100.0, d)
    np.testing.assert_allclose(rope["scores"], k[: query + 1] @ q[query] / 4, atol=1e-12)


def test_attention_schemes_act_as_they_should():
    d, query = 16, 11
    data = {s: explorers.attention_data(query, s, 10000.0, d) for s in explorers.ATTENTION_SCHEMES}
    keys, plain = data["none"]["keys"], data["none"]["scores"]
    # every scheme shares the content scores without positions; "none" changes nothing
    assert all(np.array_equal(row["scores_none"], plain) for row in data.values())
    np.testing.assert_array_equal(data["none"]["difference"], 0)
    # ALiBi: content minus slope times distance (head 1 of 8: slope 1/4)
    np.testing.assert_allclose(data["alibi"]["scores"], plain - 0.25 * (query - keys), atol=1e-12)
    # T5: content plus the table's entry for each key's bucket; 4 exact buckets, then shared ones
    np.testing.assert_array_equal(data["t5"]["buckets"], [7, 7, 6, 6, 6, 5, 4, 4, 3, 2, 1, 0])
    table = explorers.attention_setup(d)["t5_table"][:, 0]
    np.testing.assert_allclose(data["t5"]["scores"], plain + table[data["t5"]["buckets"]], atol=1e-12)
    # without positions a repeated word gets one weight ("on" at 3 and 10); the first of the tie is named
    words = explorers.SENTENCE
    assert words[3] == words[10] == "on" and data["none"]["argmax"] == 3
    assert data["none"]["weights"][3] == pytest.approx(data["none"]["weights"][10], abs=1e-15)
    for scheme in ("sinusoidal", "learned", "rope"):  # positions tell the two apart
        assert abs(data[scheme]["weights"][3] - data[scheme]["weights"][10]) > 1e-3, scheme


def test_attention_without_positions_is_permutation_equivariant():
    """Shuffling the keys before the query shuffles their scores and weights the same way, and nothing else."""
    rng = np.random.default_rng(5)
    d, query = 8, 7
    tokens = rng.normal(size=(len(explorers.SENTENCE), d))
    order = np.arange(len(tokens))
    order[:query] = rng.permutation(query)
    plain = explorers.attention_data(query, "none", 10000.0, d, tokens=tokens)
    shuffled = explorers.attention_data(query, "none", 10000.0, d, tokens=tokens[order])
    for name in ("scores", "weights"):
        np.testing.assert_allclose(shuffled[name], plain[name][order[: query + 1]], atol=1e-12)
    moved = explorers.attention_data(query, "sinusoidal", 10000.0, d, tokens=tokens[order])["weights"]
    at_place = explorers.attention_data(query, "sinusoidal", 10000.0, d, tokens=tokens)["weights"]
    assert not np.allclose(moved, at_place[order[: query + 1]])  # positions break it


def test_rope_scores_depend_only_on_the_offset():
    """With one token vector everywhere, the RoPE score of (query, key) is a function of query - key."""
    d = 16
    tokens = np.tile(explorers.attention_setup(d)["tokens"][1], (len(explorers.SENTENCE), 1))
    rows = [explorers.attention_data(q, "rope", 500.0, d, tokens=tokens)["scores"] for q in range(12)]
    for q, row in enumerate(rows):
        np.testing.assert_allclose(row, rows[-1][11 - q :], atol=1e-12)  # offset q - s: the same in row 11
    assert np.ptp(rows[-1]) > 0.1  # and it does depend on the offset


def test_attention_arguments_are_checked():
    with pytest.raises(ArgumentError, match="scheme"):
        explorers.attention_data(11, 6, 10000.0, 16)
    with pytest.raises(ArgumentError, match="scheme"):
        explorers.AttentionExplorer(scheme="xpos")
    with pytest.raises(ArgumentError, match="query"):
        explorers.attention_data(12, 0, 10000.0, 16)
    with pytest.raises(ArgumentError, match="tokens"):
        explorers.attention_data(3, 0, 10000.0, 16, tokens=np.zeros((12, 8)))
    assert explorers.AttentionExplorer(scheme="alibi").scheme == explorers.ATTENTION_SCHEMES.index("alibi")


# --------------------------------------------------------------------------
# The widget (no browser)
# --------------------------------------------------------------------------


@pytest.mark.parametrize("cls", EXPLORERS, ids=lambda c: c.__name__)
def test_explorer_is_an_anywidget_whose_traits_are_the_sliders(cls):
    explorer = cls()
    assert isinstance(explorer, anywidget.AnyWidget)
    assert explorer._esm == explorers.BROWSER_MODULE.read_text()  # the module the book uses too
    kinds = (widgets.IntSlider, widgets.FloatLogSlider, widgets.SelectionSlider)
    assert all(isinstance(c, kinds) for c in explorer.controls.values())
    # one synced trait per slider, same value (a slider of names: its index)
    for name, control in explorer.controls.items():
        assert explorer.trait_metadata(name, "sync"), name
        assert getattr(explorer, name) == getattr(control, value_attribute(control)), name
    # each slider linked to its trait in the browser (jslink), not through the kernel
    linked = {(link.source[0], link.source[1], link.target[0], link.target[1]) for link in explorer.links}
    assert linked == {(c, value_attribute(c), explorer, name) for name, c in explorer.controls.items()}
    assert all(isinstance(link, widgets.widget_link.Link) for link in explorer.links)  # jslink, not dlink or link
    # the display: the sliders above the explorer, in one box
    assert explorer.panel.children[1] is explorer
    assert list(explorer.panel.children[0].children) == list(explorer.controls.values())


@pytest.mark.parametrize("cls", EXPLORERS, ids=lambda c: c.__name__)
def test_python_sees_and_observes_every_value(cls):
    """What the browser syncs arrives as a trait change: values readable, observers called."""
    explorer = cls()
    seen = []
    explorer.observe(lambda change: seen.append((change["name"], change["new"])))
    for name, control in explorer.controls.items():
        if isinstance(control, widgets.SelectionSlider):
            new = len(control.options) - 1
        else:
            new = control.max if not isinstance(control, widgets.FloatLogSlider) else control.base**control.max
        setattr(explorer, name, type(getattr(explorer, name))(new))
        assert getattr(explorer, name) == new
    assert [name for name, _ in seen if name in explorer.controls] == list(explorer.controls)


@pytest.mark.parametrize("cls", EXPLORERS, ids=lambda c: c.__name__)
def test_each_slider_is_declared_once(cls):
    """The constructor's arguments, their defaults, the synced traits and the slider widgets all come from the
    explorer's SLIDERS: one argument per slider (its exponent for a slider so declared) starting where the slider
    says, and a trait of the slider's name holding that value."""
    parameters = inspect.signature(cls).parameters
    assert list(parameters) == [s.argument(name) for name, s in cls.SLIDERS.items()]
    assert all(p.kind is p.KEYWORD_ONLY for p in parameters.values())  # no slider order to remember
    explorer = cls()
    for name, slider in cls.SLIDERS.items():
        assert parameters[slider.argument(name)].default == slider.default, name
        assert explorer.trait_metadata(name, "sync") and getattr(explorer, name) == slider.value(slider.default)
        assert getattr(explorer.controls[name], value_attribute(explorer.controls[name])) == getattr(explorer, name)
    # a value given to the constructor reaches the trait and the widget
    name, slider = next((n, s) for n, s in cls.SLIDERS.items() if not s.keys and n not in cls.couple)
    top = slider.hi if slider.exponent else 10.0**slider.hi if slider.log else slider.hi
    explorer = cls(**{slider.argument(name): top})
    assert getattr(explorer, name) == pytest.approx(slider.value(top))
    assert getattr(explorer.controls[name], value_attribute(explorer.controls[name])) == pytest.approx(
        getattr(explorer, name)
    )


def test_the_spec_carries_the_constants_the_renderer_computes_with():
    """What explorers.js needs besides the slider values comes from explorers.py, in the spec."""
    spec = {cls.kind: cls().browser_spec()["constants"] for cls in EXPLORERS}
    assert spec["rope_rules"] == {
        "rules": list(explorers.ROPE_RULES),
        "kept_rel": explorers.KEPT_REL,
        "settings": explorers.RULE_SETTINGS,
    }
    attention = spec["attention"]
    assert attention["sentence"] == list(explorers.SENTENCE) and attention["t5_buckets"] == explorers.T5_BUCKETS
    assert attention["alibi_slope"] == posenc.alibi_slopes(explorers.ALIBI_HEADS)[explorers.ALIBI_HEAD]
    torch = pytest.importorskip("torch")
    for name, f in spec["precision"]["formats"].items():  # the formats' roundings, as torch defines them
        info = torch.finfo(getattr(torch, name))
        assert (2.0 ** (1 - f["bits"]), 2.0 ** f["emin"], f["max"]) == (info.eps, info.tiny, info.max), name
    module = explorers.BROWSER_MODULE.read_text()
    for constant in ("ROPE_RULES", "KEPT_REL", "ALIBI", "T5_BUCKETS", "SENTENCE", "POSITIONS_SHOWN", "TIE"):
        assert not re.search(rf"\bconst {constant}\b", module), constant


def value_attribute(control) -> str:
    return "index" if isinstance(control, widgets.SelectionSlider) else "value"


# The sliders that pick one of several schemes or rules: what their readouts say, in order (a learner
# saw the attention explorer's scheme as "3" or "5")
NAMED = {
    ("attention", "scheme"): ["none", "sinusoidal", "learned", "RoPE", "ALiBi", "T5"],
    ("rope_rules", "rule"): ["linear", "dynamic", "YaRN", "Llama 3"],
}


@pytest.mark.parametrize("kind, name", NAMED, ids=lambda x: x)
def test_a_slider_that_picks_a_scheme_shows_its_name_in_jupyter(kind, name):
    (cls,) = [c for c in EXPLORERS if c.kind == kind]
    explorer = cls()
    control = explorer.controls[name]
    assert isinstance(control, widgets.SelectionSlider) and list(control.options) == NAMED[kind, name]
    assert control.readout  # ipywidgets shows the selected option's label
    order = explorers.ATTENTION_SCHEMES if kind == "attention" else explorers.ROPE_RULES
    assert [o.lower().replace(" ", "") for o in control.options] == list(order)  # names in the values' order
    for index, option in enumerate(control.options):  # the trait (the data functions' index) and the name agree
        control.index = index
        assert control.value == option
        explorer = cls(**{name: order[index]})
        assert explorer.controls[name].value == option and getattr(explorer, name) == index
    (spec,) = [c for c in cls().browser_spec()["controls"] if c["name"] == name]
    assert spec["names"] == NAMED[kind, name] and spec["label"] == name


def test_pair_slider_follows_d_model():
    explorer = explorers.FormulaExplorer()
    i = explorer.controls["i"]
    explorer.d_model = 10
    assert i.max == 4
    explorer.i = 4
    explorer.d_model = 3  # odd: pairs 0 and 1, the last with only its sine
    assert i.max == 1 and i.value == 1 and explorer.i == 1
    explorer.d_model = 256
    assert i.max == 127


@pytest.mark.parametrize("cls", EXPLORERS, ids=lambda c: c.__name__)
def test_display_bundle_has_widget_view_and_static_twin(cls):
    """JupyterLab shows the widget view; the static book shows the text/html twin."""
    import html

    explorer = cls()
    bundle = explorer._repr_mimebundle_()
    view = bundle["application/vnd.jupyter.widget-view+json"]
    assert view["model_id"] == explorer.panel.model_id  # sliders + explorer
    page = bundle["text/html"]
    spec = json.loads(html.unescape(re.search(r'data-spec="([^"]*)"', page).group(1)))
    assert spec == explorer.browser_spec() == explorer._spec and spec["kind"] == cls.kind
    assert [c["name"] for c in spec["controls"]] == list(explorer.controls)
    for control in spec["controls"]:
        widget = explorer.controls[control["name"]]
        if isinstance(widget, widgets.SelectionSlider):
            ends = (0, len(widget.options) - 1, widget.index)
        else:
            ends = (widget.min, widget.max, widget.value)
        assert (control["min"], control["max"], control["value"]) == ends
    # the renderer travels with the output, inline: no request to anywhere
    assert page.count(explorers.RENDERER_SCRIPT) == 1 and explorers.BROWSER_MODULE.read_text() in page
    assert not re.search(r"(src|href)=[\"']?(https?:)?//", page)


def test_the_kernel_draws_nothing():
    """The matplotlib renderer is gone: an explorer has no figure, no image, no update()."""
    explorer = explorers.FormulaExplorer()
    assert not any(hasattr(explorer, name) for name in ("figure", "image", "update", "redraw"))
    assert "matplotlib" not in inspect.getsource(explorers)


# --------------------------------------------------------------------------
# The browser renderer (Playwright)
# --------------------------------------------------------------------------

THEMES = {  # name: (style sheets, attributes of <html>)
    "plain": ([], {}),
    "book-light": ([PYDATA_CSS], {"data-theme": "light"}),
    "book-dark": ([PYDATA_CSS], {"data-theme": "dark"}),
    "lab-light": ([LAB_THEMES / "theme-light-extension" / "index.css"], {}),
    "lab-dark": ([LAB_THEMES / "theme-dark-extension" / "index.css"], {}),
}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A local site with one page per theme, each holding every explorer's text/html twin."""
    chromium_executable()
    root = tmp_path_factory.mktemp("explorers")
    body = "\n".join(
        f'<section id="{cls.kind}"><h2>{cls.__name__}</h2>{cls().static_html()}</section>' for cls in EXPLORERS
    )
    for name, (sheets, attributes) in THEMES.items():
        links = ""
        for n, sheet in enumerate(sheets):
            (root / f"{name}-{n}.css").write_text(sheet.read_text())
            links += f'<link rel="stylesheet" href="{name}-{n}.css">'
        attrs = " ".join(f'{k}="{v}"' for k, v in attributes.items())
        (root / f"{name}.html").write_text(
            f'<!doctype html><html lang="en" {attrs}><head><meta charset="utf-8"><title>explorers</title>'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">{links}</head>'
            '<body style="margin: 0; padding: 8px; '
            'background: var(--jp-layout-color0, var(--pst-color-background, #fff))">'
            f"{body}</body></html>"
        )
    with serve(root) as base:
        yield base


def open_page(chromium, base, theme="plain", width=1280, scale=2):
    context = new_context(chromium, viewport={"width": width, "height": 900}, device_scale_factor=scale)
    tab = context.new_page()
    errors = []
    tab.on("pageerror", lambda exc: errors.append(str(exc)))
    tab.on(
        "console",
        lambda m: errors.append(m.text) if m.type == "error" and "Failed to load resource" not in m.text else None,
    )
    tab.goto(f"{base}{theme}.html", wait_until="load")
    tab.wait_for_function(
        "() => [...document.querySelectorAll('.posenc-explorer')].every(r => Number(r.dataset.updates) > 0)"
    )
    return context, tab, errors


# Sets slider inputs (in their own units: exponents for log sliders) and reports, per setting, what the
# explorer drew: the values and numbers it used, a hash of every canvas, its titles and text alternatives.
SWEEP = """async ([kind, settings]) => {
  const root = document.querySelector(`#${kind} .posenc-explorer`);
  const inputs = Object.fromEntries([...root.querySelectorAll('input[type=range]')].map(i => [i.dataset.name, i]));
  const hash = () => [...root.querySelectorAll('canvas')].map(c => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let h = 2166136261;
    for (let j = 0; j < d.length; j += 4) {
      h ^= d[j] | (d[j + 1] << 8) | (d[j + 2] << 16);
      h = Math.imul(h, 16777619);
    }
    return (h >>> 0).toString(16);
  }).join('-');
  const out = [];
  for (const setting of settings) {
    const before = Number(root.dataset.updates);
    for (const [name, x] of Object.entries(setting)) inputs[name].value = x;
    for (const name of Object.keys(setting)) inputs[name].dispatchEvent(new Event('input', {bubbles: true}));
    await null;  // the view redraws in a microtask
    const drawn = window.posencExplorers.drawn(root);
    out.push({values: drawn.values, data: drawn.data, hash: hash(), updates: Number(root.dataset.updates) - before,
              max: Object.fromEntries(Object.entries(inputs).map(([n, i]) => [n, Number(i.max)])),
              titles: [...root.querySelectorAll('.posenc-title')].map(t => t.textContent),
              alts: [...root.querySelectorAll('canvas')].map(c => c.getAttribute('aria-label'))});
  }
  return out;
}"""


@pytest.mark.parametrize("cls", EXPLORERS, ids=lambda c: c.__name__)
def test_every_slider_sweep_draws_what_python_computes(chromium, site, cls):
    """Extremes, grids and corners on the browser renderer; its numbers equal *_data's for the same values."""
    spec = cls().browser_spec()
    settings, n_single = settings_for(spec, np.random.default_rng(11))
    context, tab, errors = open_page(chromium, site)
    try:
        results = tab.evaluate(SWEEP, [cls.kind, settings])
    finally:
        context.close()
    assert not errors, errors
    fn, failures = DATA[cls.kind], []
    previous = None
    for n, (_setting, got) in enumerate(zip(settings, results)):
        values = got["values"]
        label = f"{cls.kind}({', '.join(f'{k}={x:g}' for k, x in values.items())})"
        want = fn(**python_values(fn, values))
        compare_numbers(label, want, got["data"], failures)
        changed = previous is not None and values != previous["values"]
        if changed and got["updates"] != 1:
            failures.append(f"{label}: {got['updates']} redraws for one change of the sliders")
        if changed and n < n_single and got["hash"] == previous["hash"]:
            failures.append(f"{label}: the canvas did not change when a slider moved")
        for c in spec["controls"]:  # the values drawn are the sliders' (10**exponent for log sliders)
            x = values[c["name"]]
            inside = c["min"] - 1e-9 <= (np.log10(x) if c["log"] else x) <= c["max"] + 1e-9
            if not inside:
                failures.append(f"{label}: {c['name']} = {x} is outside its slider")
        failures += caption_failures(cls.kind, label, want, values, got)
        previous = got
    assert not failures, f"{len(failures)} problems over {len(settings)} settings:\n" + "\n".join(failures[:25])


def caption_failures(kind, label, want, values, got) -> list[str]:
    """The numbers the chapters' captions point at are in the titles and the text alternatives."""
    text = " ".join(got["titles"] + got["alts"])
    if kind == "formula":
        expected = [f"pair {values['i']}"]
    elif kind == "base":
        expected = [
            f"{want['fine']} separate neighbours",
            f"{want['wraps']} wrap",
            f"{want['constant']} nearly constant",
        ]
    elif kind == "offset":
        expected = [f"{want['dot_k']:.2f}".replace("-", "−") + f" of {values['d_model'] // 2}"]
    elif kind == "rope":
        expected = [
            f"as trained {want['unseen_plain']}",
            f"interpolated {want['unseen_interpolated']}",
            f"raised base {want['unseen_raised']}",
        ]
    elif kind == "rope_rules":
        expected = [
            f"{want['turn_in_length']} of {len(want['i'])} pairs turn within",
            f"{want['kept']} kept",
            f"{want['turn_in_target']} within the target",
        ]
    elif kind == "attention":
        top = want["argmax"]
        expected = [f"attends most to “{explorers.SENTENCE[top]}” at {top}", f"on key {top}"]
    else:
        expected = [f"identical vectors in: {', '.join(want['collides']) or 'none'}"]
    out = [f"{label}: {piece!r} not in the title or text alternative" for piece in expected if piece not in text]
    if kind == "formula":  # the pair slider follows d_model
        top = (values["d_model"] + 1) // 2 - 1
        if got["max"]["i"] != top or values["i"] > top:
            out.append(f"{label}: pair slider max {got['max']['i']}, value {values['i']}, expected max {top}")
    return out


# Every box the renderer reports, checked in the page: text inside the explorer, no two overlapping, none on the data.
BOXES = """(kind) => {
  const root = document.querySelector(`#${kind} .posenc-explorer`);
  return window.posencExplorers.boxes(root);
}"""


@pytest.mark.parametrize("width", [320, 390, 1280])
def test_layout_fits_and_nothing_overlaps(chromium, site, width):
    """At 320, 390 and 1280 px, DPR 2: titles, legends, ticks, labels and data never overlap; crisp canvases."""
    context, tab, errors = open_page(chromium, site, width=width, scale=2)
    failures = []
    try:
        for cls in EXPLORERS:
            spec = cls().browser_spec()
            ends = [{c["name"]: c[end] for c in spec["controls"]} for end in ("min", "max")]
            default = {c["name"]: float(np.log10(c["value"])) if c["log"] else c["value"] for c in spec["controls"]}
            for setting in [*ends, default]:  # the longest labels are at the ends; screenshots at the defaults
                tab.evaluate(SWEEP, [cls.kind, [setting]])
                tab.wait_for_timeout(30)  # a relayout, if the titles now wrap differently
                boxes = tab.evaluate(BOXES, cls.kind)
                failures += [
                    f"{cls.kind} at {width} px, {setting}: {f}" for f in explorer_layout_failures(boxes, width)
                ]
            canvases = tab.evaluate(
                """kind => [...document.querySelectorAll(`#${kind} canvas`)].map(c => {
                const r = c.getBoundingClientRect();
                return {w: c.width, h: c.height, cw: r.width, ch: r.height, top: r.top}; })""",
                cls.kind,
            )
            for c in canvases:  # one canvas pixel per device pixel
                if abs(c["w"] - round(2 * c["cw"])) > 1 or abs(c["h"] - round(2 * c["ch"])) > 1:
                    failures.append(
                        f"{cls.kind} at {width} px: canvas {c['w']}x{c['h']} for {c['cw']}x{c['ch']} CSS px at DPR 2"
                    )
            if len(canvases) == 2:
                stacked = canvases[1]["top"] > canvases[0]["top"] + canvases[0]["ch"] - 1
                root_width = tab.evaluate(
                    "kind => document.querySelector(`#${kind} .posenc-explorer`).clientWidth", cls.kind
                )
                if stacked != (root_width < 600):
                    failures.append(
                        f"{cls.kind} at {width} px: panels {'stacked' if stacked else 'side by side'} "
                        f"in a {root_width} px explorer (stack below 600)"
                    )
            if width in (390, 1280):
                shot = SHOT_DIR / f"w{width}" / f"{cls.kind}.png"
                shot.parent.mkdir(parents=True, exist_ok=True)
                tab.locator(f"#{cls.kind}").screenshot(path=str(shot))
        pan = tab.evaluate("() => document.documentElement.scrollWidth - innerWidth")
        assert pan <= 0, f"the page pans sideways by {pan} px at {width} px"
    finally:
        context.close()
    assert not errors, errors
    assert not failures, "\n".join(failures[:30])


READOUT = """label => {
  const o = label.querySelector('output'), i = label.querySelector('input');
  return {text: o.textContent, said: i.getAttribute('aria-valuetext'), overflow: o.scrollWidth - o.clientWidth,
          right: o.getBoundingClientRect().right, labelRight: label.getBoundingClientRect().right};
}"""


@pytest.mark.parametrize("width", [390, 1280])
def test_a_slider_that_picks_a_scheme_shows_its_name_in_the_book(chromium, site, width):
    """The readout and the slider's spoken value are the scheme's name, whole, not its index."""
    context, tab, errors = open_page(chromium, site, width=width)
    failures = []
    try:
        for (kind, name), names in NAMED.items():
            label = tab.locator(f"#{kind} .posenc-controls label", has=tab.locator(f"input[data-name={name}]"))
            for index, expected in enumerate(names):
                tab.evaluate(SWEEP, [kind, [{name: index}]])
                shown = label.evaluate(READOUT)
                if (shown["text"], shown["said"]) != (expected, expected):
                    failures.append(f"{kind} {name} at {index}: shows {shown['text']!r}, says {shown['said']!r}")
                if shown["overflow"] > 0 or shown["right"] > shown["labelRight"] + 0.5:
                    failures.append(f"{kind} {name}: {expected!r} does not fit its readout at {width} px: {shown}")
            widths = tab.locator(f"#{kind} .posenc-controls input").evaluate_all(
                "inputs => inputs.map(i => i.getBoundingClientRect().width)"
            )
            if max(widths) - min(widths) > 1:  # the room for names is every readout's: the sliders stay aligned
                failures.append(f"{kind}: sliders of unequal widths at {width} px: {widths}")
            tab.evaluate(SWEEP, [kind, [{name: 0}]])
            shot = SHOT_DIR / f"w{width}" / f"{kind}-{name}-named.png"
            shot.parent.mkdir(parents=True, exist_ok=True)
            label.screenshot(path=str(shot))
    finally:
        context.close()
    assert not errors, errors
    assert not failures, "\n".join(failures)


# The x-axis tick labels each panel shows, at a given width of every explorer (its section's)
X_TICKS = """width => {
  const out = {};
  for (const section of document.querySelectorAll('section')) section.style.width = `${width}px`;
  for (const root of document.querySelectorAll('.posenc-explorer')) {
    const boxes = window.posencExplorers.boxes(root);
    const plots = Object.fromEntries(boxes.filter(b => b.kind === 'plot').map(b => [b.panel, b]));
    out[root.dataset.kind] = boxes.filter(b => b.kind === 'tick' && b.y >= plots[b.panel].y + plots[b.panel].h - 1)
      .map(b => [b.panel, b.text]);
  }
  return out;
}"""
NOT_WHOLE = {("offset", 0)}  # the offset explorer's first panel: a circle of sines and cosines


def test_axes_of_whole_numbers_tick_at_whole_numbers(chromium, site):
    """Positions, keys, channels, pairs and offsets are whole numbers: their axes never tick at 2.5 or 7.5
    (the attention explorer's key axis once did), whatever the explorer's width, panels side by side or stacked."""
    context, tab, errors = open_page(chromium, site, width=1400, scale=1)
    failures = set()
    try:
        for width in range(240, 1341, 20):
            tab.evaluate(X_TICKS, width)
            tab.wait_for_timeout(40)  # the explorers redraw at their new width (ResizeObserver)
            for kind, ticks in tab.evaluate(X_TICKS, width).items():
                for panel, text in ticks:
                    value = float(text.replace("−", "-").replace(",", ""))
                    if (kind, panel) not in NOT_WHOLE and value != round(value):
                        failures.add(f"{kind}, panel {panel}: a tick at {text} ({width} px)")
    finally:
        context.close()
    assert not errors, errors
    assert not failures, "\n".join(sorted(failures)[:30])


@pytest.mark.parametrize("width", [390, 1280])
def test_no_bar_of_the_attention_explorer_ends_on_its_frame(chromium, site, width):
    """Every scheme at every query, head widths 2, 16 and 64: each bar (scores, weights, gained, lost) ends clear of
    the frame it grows towards (T5's "gained" bar once ended on it and looked cut off)."""
    context, tab, errors = open_page(chromium, site, width=width)
    failures = []
    try:
        for scheme in range(len(explorers.ATTENTION_SCHEMES)):
            for d in (2, 16, 64):
                for query in range(len(explorers.SENTENCE)):
                    tab.evaluate(SWEEP, ["attention", [{"scheme": scheme, "d": d, "query": query}]])
                    boxes = tab.evaluate(BOXES, "attention")
                    assert any(b["kind"] == "bar" for b in boxes), "explorers.js reports no bars"
                    failures += [
                        f"{explorers.ATTENTION_SCHEMES[scheme]}, d {d}, query {query}: {f}"
                        for f in explorer_layout_failures(boxes, width)
                        if "bar" in f
                    ]
        tab.evaluate(SWEEP, ["attention", [{"scheme": 5, "d": 16, "query": 4}]])
        shot = SHOT_DIR / f"w{width}" / "attention-t5-query-4.png"
        shot.parent.mkdir(parents=True, exist_ok=True)
        tab.locator("#attention").screenshot(path=str(shot))
    finally:
        context.close()
    assert not errors, errors
    assert not failures, "\n".join(failures[:30])


def pixel(tab, kind):
    """The colour of the first canvas's top right pixel (where nothing is drawn), as [r, g, b]."""
    return tab.evaluate(
        """kind => { const c = document.querySelector(`#${kind} canvas`);
                           return [...c.getContext('2d').getImageData(c.width - 3, 2, 1, 1).data].slice(0, 3); }""",
        kind,
    )


def css_color(tab, expression):
    return tab.evaluate(f"""() => {{ const el = document.createElement('div'); el.style.color = {expression};
                             document.body.appendChild(el); const c = getComputedStyle(el).color; el.remove();
                             return c.match(/\\d+/g).slice(0, 3).map(Number); }}""")


@pytest.mark.parametrize("theme", [t for t in THEMES if t != "plain"])
def test_colours_follow_the_theme(chromium, site, theme):
    """The canvas background and the text take the theme's colours (pydata in the book, --jp-* in JupyterLab)."""
    context, tab, errors = open_page(chromium, site, theme=theme, width=1280)
    try:
        book = theme.startswith("book")
        background = css_color(tab, "'var(--pst-color-background)'" if book else "'var(--jp-layout-color0)'")
        text = css_color(tab, "'var(--pst-color-text-base)'" if book else "'var(--jp-content-font-color1)'")
        for cls in EXPLORERS:
            assert pixel(tab, cls.kind) == background, (cls.kind, theme)
            title = tab.evaluate(
                "kind => getComputedStyle(document.querySelector(`#${kind} .posenc-title`)).color", cls.kind
            )
            assert [round(float(x)) for x in re.findall(r"[\d.]+", title)[:3]] == text, (cls.kind, theme, title, text)
            if theme.endswith("dark"):
                shot = SHOT_DIR / ("dark" if book else "lab-dark") / f"{cls.kind}.png"
                shot.parent.mkdir(parents=True, exist_ok=True)
                tab.locator(f"#{cls.kind}").screenshot(path=str(shot))
        if theme == "book-light":  # the reader switches to dark mode: every explorer redraws dark
            tab.evaluate("() => document.documentElement.dataset.theme = 'dark'")
            tab.wait_for_timeout(50)
            dark = css_color(tab, "'var(--pst-color-background)'")
            assert dark != background and all(pixel(tab, cls.kind) == dark for cls in EXPLORERS)
    finally:
        context.close()
    assert not errors, errors


def test_sliders_work_from_the_keyboard_and_say_what_they_show(chromium, site):
    """Every slider has a name, moves with the arrow keys and Home/End; the canvases' text follows."""
    context, tab, errors = open_page(chromium, site, width=1280)
    failures = []
    try:
        for cls in EXPLORERS:
            section = tab.locator(f"#{cls.kind}")
            for c in cls().browser_spec()["controls"]:
                slider = section.get_by_role("slider", name=c["label"], exact=True)
                assert slider.count() == 1, f"{cls.kind}: no slider named {c['label']!r}"
                slider.focus()
                for key in ("ArrowRight", "Home", "End"):
                    before = section.evaluate("s => [s.querySelector('.posenc-explorer').dataset.updates, s.innerHTML]")
                    tab.keyboard.press(key)
                    after = section.evaluate("s => [s.querySelector('.posenc-explorer').dataset.updates, s.innerHTML]")
                    value = slider.get_attribute("aria-valuetext")
                    alts = section.locator("canvas").evaluate_all("cs => cs.map(c => c.getAttribute('aria-label'))")
                    if before == after:
                        failures.append(f"{cls.kind}: {key} on {c['label']!r} changed nothing")
                    if not all(f"{c['label']} {value}" in alt for alt in alts):
                        failures.append(f"{cls.kind}: the text alternative does not say {c['label']} {value}: {alts}")
                expected_max = c["max"]
                if cls.kind == "formula" and c["name"] == "i":
                    d_model = section.locator("input[data-name=d_model]").evaluate("i => Number(i.value)")
                    expected_max = (d_model + 1) // 2 - 1
                assert float(slider.input_value()) == pytest.approx(expected_max), (cls.kind, c["name"])
            assert section.locator("canvas[role=img]").count() == len(section.locator("canvas").all())
    finally:
        context.close()
    assert not errors, errors
    assert not failures, "\n".join(failures)


def test_book_recognises_a_cell_that_only_displays_an_explorer():
    """book_assets shows such a cell's explorer on pages the book does not execute (exercise 02's warm-up)."""
    from book_build import book_assets

    call = book_assets.explorer_call
    source = (
        "from posenc_course.explorers import FormulaExplorer\n\nFormulaExplorer(pos=10, i=4, d_model=64, base=10_000)"
    )
    assert call(source) == ("FormulaExplorer", {"pos": 10, "i": 4, "d_model": 64, "base": 10000})
    assert call("from posenc_course.explorers import BaseExplorer\nBaseExplorer()") == ("BaseExplorer", {})
    imports = "from posenc_course.explorers import X\n"
    for source in [
        "import os",
        imports + "X(a=open('f'))",
        imports + "Y()",
        imports + "X(1)",
        imports + "X()\nprint(1)",
        "x = (",
        "",
    ]:
        assert call(source) is None, source
