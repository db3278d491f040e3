"""Slider explorers for the chapters: ipywidgets controls + one matplotlib figure.

Every explorer keeps a single figure and its artists. Moving a slider calls
``update()``, which recomputes through ``posenc``, changes the existing
artists in place (``set_data``), renders the figure to PNG and hands the bytes
to an ``ipywidgets.Image``: no new figure is ever built. Rendering blits: the
static part (axes, ticks, legends) is drawn once and cached; a step redraws
only the artists that move, unless the step changed the static part too
(e.g. new axis limits when ``d_model`` changes). The pure functions
``*_data`` compute what is drawn from the slider values alone, so the same
numbers can be checked in tests (and reproduced by a browser-side renderer).

Use in a notebook::

    from explorers import FormulaExplorer
    FormulaExplorer()          # displays sliders + figure

Two renderers, one output. An explorer displays as a MIME bundle holding
both the live widget view (used by JupyterLab, Notebook, VS Code, Colab: the
callbacks above, through posenc) and a ``text/html`` version that carries
``explorers.js``: the same sliders and plots computed and drawn in the
browser, for the static HTML book where no kernel runs. The book is told to
prefer the ``text/html`` (``_config.yml``); the browser tests check that the
JavaScript computes the same numbers as the ``*_data`` functions here.
"""

from __future__ import annotations

import html
import io
import json
import time
from pathlib import Path

import ipywidgets as widgets
import numpy as np
import PIL.Image
from matplotlib.figure import Figure
from matplotlib.backends.backend_agg import FigureCanvasAgg

import posenc
from plotting import OKABE_ITO, apply_style

POSITIONS_SHOWN = 200  # the x range of the formula explorer's wave plot
BROWSER_SCRIPT = Path(__file__).with_name("explorers.js")


# --------------------------------------------------------------------------
# What each explorer draws, as plain arrays
# --------------------------------------------------------------------------

def formula_data(pos: int, i: int, d_model: int, base: float) -> dict:
    """Curves for pair ``i`` over positions 0..199 and the vector PE(pos)."""
    xs = np.arange(POSITIONS_SHOWN)
    table = posenc.sinusoidal(xs, d_model, base)
    row = posenc.sinusoidal([pos], d_model, base)[0]
    cos_col = 2 * i + 1
    return {
        "x": xs,
        "sin": table[:, 2 * i],
        "cos": table[:, cos_col] if cos_col < d_model else None,
        "row": row,
        "omega": posenc.frequencies(d_model, base)[i],
        "wavelength": posenc.wavelengths(d_model, base)[i],
    }


def base_data(base: float, d_model: int, length: int, threshold: float = 0.1) -> dict:
    """Wavelength of every pair, the regime boundaries and counts (posenc.pair_regimes)."""
    kinds = posenc.pair_regimes(d_model, length, base, threshold=threshold)
    lam = posenc.wavelengths(d_model, base)
    return {
        "i": np.arange(lam.size),
        "wavelength": lam,
        # the same criteria written as wavelengths, for drawing
        "fine_below": 2 * np.pi / (2 * np.arcsin(threshold / 2)),
        "wrap_below": float(length),
        "constant_above": 2 * np.pi * length / threshold,
        **{name: int(mask.sum()) for name, mask in kinds.items()},
    }


def offset_pairs(d_model: int) -> np.ndarray:
    """Four pairs spread over the faster half of the spectrum (fewer if d is small)."""
    h = (d_model + 1) // 2
    return np.unique(np.round(np.linspace(0, max(h // 2, min(3, h - 1)), 4)).astype(int))


def offset_data(k: float, d_model: int, base: float, p0: int = 3) -> dict:
    """Pairs at p0 and p0+k on the unit circle, and the dot-product curve."""
    pairs = offset_pairs(d_model)
    now = posenc.sinusoidal([p0], d_model, base)[0]
    later = posenc.rotation(k, d_model, base) @ now
    ks = np.arange(-200, 201)
    dots = posenc.sinusoidal(p0 + ks, d_model, base) @ now
    omega = posenc.frequencies(d_model, base)[pairs]
    start = np.arctan2(now[2 * pairs], now[2 * pairs + 1])
    turn = np.remainder(k * omega + np.pi, 2 * np.pi) - np.pi  # the turn, reduced to (-pi, pi]
    arcs = start[:, None] + turn[:, None] * np.linspace(0, 1, 30)[None, :]
    return {
        "pairs": pairs,
        "now": np.stack([now[2 * pairs + 1], now[2 * pairs]], axis=1),      # (cos, sin) = (x, y)
        "later": np.stack([later[2 * pairs + 1], later[2 * pairs]], axis=1),
        "arcs": np.stack([np.cos(arcs), np.sin(arcs)], axis=2),            # (pair, point, xy)
        "ks": ks,
        "dots": dots,
        "dot_k": float(now @ later),
    }


def rope_scaling_data(base: float, scale: int, d_model: int, length: int) -> dict:
    """Wavelengths of RoPE pairs for a context ``scale`` times the training ``length``.

    Three curves: the model's ``base`` as trained; position interpolation,
    which divides positions by ``scale`` so every wavelength (in new
    positions) is ``scale`` times longer; and the "NTK-aware" raised base
    ``base * scale ** (d / (d - 2))``, which leaves the fastest pair alone and
    stretches the slowest pair by exactly ``scale``. ``unseen_*`` counts the
    pairs whose wavelength exceeds the training length: over training they
    never completed a turn.
    """
    plain = posenc.wavelengths(d_model, base)
    raised_base = base * scale ** (d_model / (d_model - 2))
    raised = posenc.wavelengths(d_model, raised_base)
    interpolated = plain * scale
    return {
        "i": np.arange(plain.size),
        "plain": plain,
        "interpolated": interpolated,
        "raised": raised,
        "raised_base": raised_base,
        "length": length,
        "target": length * scale,
        "unseen_plain": int(np.sum(plain > length)),
        "unseen_raised": int(np.sum(raised > length)),
        "unseen_interpolated": int(np.sum(interpolated > length)),
    }


LOW_PRECISION = ("float32", "float16", "bfloat16")


def precision_data(position: int, base: float, d_model: int) -> dict:
    """Per-pair phase error of ``p * omega_i`` computed in each low-precision format.

    Uses chapter 06's ``bug_zoo.phase_error`` (extended-precision reference,
    wrapped to [0, pi]; NaN where the format overflowed). ``collides`` names
    the formats in which positions ``p`` and ``p + 1`` get identical angles on
    every pair, hence identical encoding vectors.
    """
    import torch

    import bug_zoo

    dtypes = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
    errors, collides = {}, []
    for name in LOW_PRECISION:
        errors[name] = bug_zoo.phase_error([position], d_model, base, dtypes[name])[0]
        angles = bug_zoo.angles_in_dtype([position, position + 1], d_model, base, dtypes[name])
        if np.array_equal(angles[0], angles[1]):
            collides.append(name)
    return {"i": np.arange((d_model + 1) // 2), "errors": errors, "collides": collides,
            "unit_roundoff": {"float32": 2.0**-24, "float16": 2.0**-11, "bfloat16": 2.0**-8}}


# --------------------------------------------------------------------------
# The widget machinery shared by all explorers
# --------------------------------------------------------------------------

class Explorer:
    """Sliders + one figure rendered to PNG, redrawn in place on every change."""

    figsize = (8.0, 3.4)
    alt = "interactive figure"
    kind = ""      # the name of the matching renderer in explorers.js
    couple = {}    # slider -> the slider whose value sets its range

    def __init__(self, **controls: widgets.ValueWidget):
        apply_style()
        self.controls = controls
        self.figure = Figure(figsize=self.figsize, dpi=90, layout="constrained")
        FigureCanvasAgg(self.figure)
        self.animated = []  # build() lists the artists that change on every step
        self.build(self.figure)
        for artist in self.animated:
            artist.set_animated(True)
        self.redraw(**self.values())
        self.figure.canvas.draw()  # let the constrained layout place the axes once...
        self.figure.set_layout_engine("none")  # ...then keep them fixed: no solver per step
        self._background, self._background_key = None, object()
        self.image = widgets.Image(format="png", layout=widgets.Layout(max_width="100%"))
        self.image.add_class("explorer-figure")
        for control in controls.values():
            control.continuous_update = True
            control.observe(self._changed, names="value")
        self.widget = widgets.VBox(
            [widgets.HBox(list(controls.values()), layout=widgets.Layout(flex_flow="row wrap")), self.image]
        )
        self.last_update_seconds = 0.0
        self.update()

    # subclasses implement these two
    def build(self, fig: Figure) -> None:
        raise NotImplementedError

    def redraw(self, **values) -> None:
        raise NotImplementedError

    def static_key(self, **values):
        """What the static part of the figure depends on (default: nothing)."""
        return None

    def values(self) -> dict:
        return {name: control.value for name, control in self.controls.items()}

    def _changed(self, change) -> None:
        self.update()

    def update(self, **values) -> bytes:
        """Recompute, redraw the existing artists, render PNG; return the bytes.

        Without arguments it draws the sliders' current values; with keyword
        arguments (all of them) it draws those instead, leaving the sliders alone.
        """
        start = time.perf_counter()
        values = values or self.values()
        self.redraw(**values)
        canvas = self.figure.canvas
        key = self.static_key(**values)
        if key != self._background_key:  # the static part changed: draw it once, cache it
            canvas.draw()
            self._background, self._background_key = canvas.copy_from_bbox(self.figure.bbox), key
        canvas.restore_region(self._background)
        for artist in self.animated:
            self.figure.draw_artist(artist)
        buffer = io.BytesIO()
        PIL.Image.fromarray(np.asarray(canvas.buffer_rgba())).save(buffer, format="png", compress_level=1)
        png = buffer.getvalue()
        self.image.value = png
        self.last_update_seconds = time.perf_counter() - start
        return png

    def browser_spec(self) -> dict:
        """The sliders as the browser renderer needs them."""
        controls = []
        for name, c in self.controls.items():
            log = isinstance(c, widgets.FloatLogSlider)
            controls.append({"name": name, "label": c.description, "min": c.min, "max": c.max,
                             "step": c.step, "value": c.value, "log": log})
        return {"kind": self.kind, "alt": self.alt, "controls": controls, "couple": self.couple}

    def static_html(self) -> str:
        """A self-contained HTML block: the explorer drawn and driven by explorers.js."""
        spec = html.escape(json.dumps(self.browser_spec()), quote=True)
        script = BROWSER_SCRIPT.read_text() if BROWSER_SCRIPT.exists() else ""
        return (f'<div class="posenc-explorer" data-spec="{spec}">'
                "<noscript>This explorer needs JavaScript; run the notebook in Jupyter for the live version.</noscript>"
                f"</div>\n<script>{script}</script>")

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude) or {}
        bundle["text/html"] = self.static_html()
        return bundle


def _log_slider(description, value, lo, hi, step=0.1, readout=".3g"):
    """A slider over 10**lo ... 10**hi, moving in steps of ``step`` in the exponent."""
    return widgets.FloatLogSlider(value=value, base=10, min=lo, max=hi, step=step,
                                  description=description, readout_format=readout)


def _int_slider(description, value, lo, hi, step=1):
    return widgets.IntSlider(value=value, min=lo, max=hi, step=step, description=description,
                             style={"description_width": "initial"})


class FormulaExplorer(Explorer):
    """Chapter 02: one pair's sine and cosine over positions, and the whole vector PE(pos)."""

    kind = "formula"
    couple = {"i": "d_model"}
    alt = "Left: sine and cosine of the chosen pair over positions 0 to 199; right: the encoding vector of the chosen position"

    def __init__(self, pos=10, i=4, d_model=64, base=10000.0):
        d_slider = _int_slider("d_model", d_model, 2, 256)
        i_slider = _int_slider("pair i", i, 0, (d_model + 1) // 2 - 1)
        # the pair slider's range follows d_model
        d_slider.observe(lambda ch: setattr(i_slider, "max", (ch["new"] + 1) // 2 - 1), names="value")
        super().__init__(
            pos=_int_slider("pos", pos, 0, POSITIONS_SHOWN - 1),
            i=i_slider,
            d_model=d_slider,
            base=_log_slider("base", base, 1, 6),
        )

    def build(self, fig):
        self.ax_wave, self.ax_row = fig.subplots(1, 2, width_ratios=[1.3, 1])
        x = np.arange(POSITIONS_SHOWN)
        (self.sin_line,) = self.ax_wave.plot(x, np.zeros_like(x, dtype=float), color=OKABE_ITO[0], label="sin, channel 2i")
        (self.cos_line,) = self.ax_wave.plot(x, np.zeros_like(x, dtype=float), color=OKABE_ITO[1], ls="--", label="cos, channel 2i+1")
        self.marker = self.ax_wave.axvline(0, color="0.3", lw=1)
        (self.dots,) = self.ax_wave.plot([], [], "o", color="black", ms=5)
        self.ax_wave.set(xlim=(0, POSITIONS_SHOWN - 1), ylim=(-1.15, 1.15), xlabel="position p", ylabel="value")
        self.ax_wave.legend(loc="lower right", fontsize=8)
        (self.row_line,) = self.ax_row.plot([], [], ".-", color=OKABE_ITO[2], ms=3, lw=0.8)
        (self.row_pair,) = self.ax_row.plot([], [], "o", color=OKABE_ITO[3], ms=6, label="pair i")
        self.ax_row.set(ylim=(-1.15, 1.15), xlabel="channel", ylabel="PE(pos)")
        self.ax_row.legend(loc="lower right", fontsize=8)
        self.animated = [self.sin_line, self.cos_line, self.marker, self.dots, self.row_line,
                         self.row_pair, self.ax_wave.title, self.ax_row.title,
                         self.ax_wave.get_legend(), self.ax_row.get_legend()]  # legends stay on top

    def static_key(self, pos, i, d_model, base):
        return d_model  # the channel axis

    def redraw(self, pos, i, d_model, base):
        i = min(i, (d_model + 1) // 2 - 1)
        data = formula_data(pos, i, d_model, base)
        self.sin_line.set_ydata(data["sin"])
        has_cos = data["cos"] is not None
        self.cos_line.set_ydata(data["cos"] if has_cos else np.full(POSITIONS_SHOWN, np.nan))
        self.marker.set_xdata([pos, pos])
        ys = [data["sin"][pos]] + ([data["cos"][pos]] if has_cos else [])
        self.dots.set_data([pos] * len(ys), ys)
        channels = np.arange(d_model)
        self.row_line.set_data(channels, data["row"])
        pair = channels[2 * i: 2 * i + 2]
        self.row_pair.set_data(pair, data["row"][pair])
        self.ax_row.set_xlim(-0.5, d_model - 0.5)
        self.ax_wave.set_title(f"pair i={i}: ω={data['omega']:.3g}, λ={data['wavelength']:.3g} positions", fontsize=9)
        self.ax_row.set_title(f"PE({pos}) for d_model={d_model}, base={base:.3g}", fontsize=9)


class BaseExplorer(Explorer):
    """Chapter 03: how the base moves every pair's wavelength relative to a length L."""

    kind = "base"
    alt = ("Wavelength of every pair on a log scale, with the boundaries for pairs that "
           "separate neighbours, wrap within L, and stay nearly constant over L")

    def __init__(self, base=10000.0, d_model=512, length=512):
        super().__init__(
            base=_log_slider("base", base, 1, 7),
            length=_int_slider("length L", length, 16, 8192, 16),
            d_model=_int_slider("d_model", d_model, 8, 1024, 8),
        )

    def build(self, fig):
        self.ax = fig.subplots()
        (self.line,) = self.ax.plot([], [], color=OKABE_ITO[0], lw=2, label="wavelength λ_i")
        self.fine_line = self.ax.axhline(1, color=OKABE_ITO[2], ls=":", label="below: separates neighbours")
        self.wrap_line = self.ax.axhline(1, color=OKABE_ITO[1], ls="-.", label="below: wraps within L")
        self.const_line = self.ax.axhline(1, color=OKABE_ITO[3], ls="--", label="above: nearly constant over L")
        self.ax.set(yscale="log", ylim=(1, 1e9), xlabel="pair i", ylabel="wavelength (positions)")
        self.ax.legend(loc="upper left", fontsize=8)
        self.animated = [self.line, self.fine_line, self.wrap_line, self.const_line, self.ax.title,
                         self.ax.get_legend()]

    def static_key(self, base, length, d_model):
        return d_model  # the pair axis

    def redraw(self, base, length, d_model):
        data = base_data(base, d_model, length)
        self.line.set_data(data["i"], data["wavelength"])
        self.fine_line.set_ydata([data["fine_below"]] * 2)
        self.wrap_line.set_ydata([data["wrap_below"]] * 2)
        self.const_line.set_ydata([data["constant_above"]] * 2)
        self.ax.set_xlim(0, max(1, data["i"][-1]))
        self.ax.set_title(
            f"base={base:.3g}, d_model={d_model}, L={length}: of {data['i'].size} pairs, "
            f"{data['fine']} separate neighbours, {data['wraps']} wrap, {data['constant']} nearly constant",
            fontsize=9)


class OffsetExplorer(Explorer):
    """Chapter 04: moving by k rotates every (sin, cos) pair by k·ω_i."""

    kind = "offset"
    alt = ("Left: four sine-cosine pairs on the unit circle before and after a shift by k, "
           "joined by the arc they turn through; right: the dot product PE(p)·PE(p+k) against k")
    n_pairs = 4

    def __init__(self, k=5, d_model=64, base=10000.0):
        super().__init__(
            k=_int_slider("offset k", k, -200, 200),
            d_model=_int_slider("d_model", d_model, 8, 256, 2),
            base=_log_slider("base", base, 1, 6),
        )

    def build(self, fig):
        self.ax_circle, self.ax_dot = fig.subplots(1, 2, width_ratios=[1, 1.4])
        t = np.linspace(0, 2 * np.pi, 200)
        self.ax_circle.plot(np.cos(t), np.sin(t), color="0.7", lw=1)
        self.ax_circle.set(aspect="equal", xlim=(-1.3, 1.3), ylim=(-1.3, 1.3),
                           xlabel="cos (channel 2i+1)", ylabel="sin (channel 2i)")
        self.now_pts, self.later_pts, self.arcs = [], [], []
        for n in range(self.n_pairs):
            colour = OKABE_ITO[n]
            (a,) = self.ax_circle.plot([], [], "o", color=colour, mfc="white", ms=7)
            (b,) = self.ax_circle.plot([], [], "o", color=colour, ms=7, label=f"pair {n}")
            (c,) = self.ax_circle.plot([], [], "-", color=colour, lw=2, alpha=0.7)
            self.now_pts.append(a), self.later_pts.append(b), self.arcs.append(c)
        self.legend = self.ax_circle.legend(loc="center", fontsize=7, frameon=False)
        (self.dot_line,) = self.ax_dot.plot([], [], color=OKABE_ITO[0], lw=1)
        (self.dot_marker,) = self.ax_dot.plot([], [], "o", color=OKABE_ITO[3], ms=7)
        self.ax_dot.set(xlim=(-200, 200), ylim=(-1.05, 1.05), xlabel="offset k",
                        ylabel="cosine similarity of PE(p), PE(p+k)")
        self.animated = [*self.now_pts, *self.later_pts, *self.arcs, self.dot_line, self.dot_marker,
                         self.ax_circle.title, self.ax_dot.title, self.legend]

    def static_key(self, k, d_model, base):
        return d_model  # the legend's pair numbers

    def redraw(self, k, d_model, base):
        data = offset_data(k, d_model, base)
        for n in range(self.n_pairs):
            artists = (self.now_pts[n], self.later_pts[n], self.arcs[n])
            if n >= len(data["pairs"]):
                for artist in artists:
                    artist.set_data([], [])
                self.legend.get_texts()[n].set_text("")
                continue
            self.now_pts[n].set_data(*data["now"][n, :, None])
            self.later_pts[n].set_data(*data["later"][n, :, None])
            self.arcs[n].set_data(data["arcs"][n, :, 0], data["arcs"][n, :, 1])
            i = data["pairs"][n]
            self.legend.get_texts()[n].set_text(f"pair i={i}")
        norm = d_model / 2  # |PE(p)|^2 for every p: the dot product divided by it is a cosine
        self.dot_line.set_data(data["ks"], data["dots"] / norm)
        self.dot_marker.set_data([k], [data["dot_k"] / norm])
        self.ax_circle.set_title(f"open: p=3, filled: p=3{k:+d}", fontsize=9)
        self.ax_dot.set_title(f"k={k}: PE(p)·PE(p+k) = Σ cos(ω_i k) = {data['dot_k']:.2f} of {d_model // 2}", fontsize=9)


class RopeScalingExplorer(Explorer):
    """Chapter 07: how interpolation or an NTK-aware raised base move RoPE's wavelengths."""

    kind = "rope"
    alt = ("Wavelength of every RoPE pair on a log scale for the trained base, for position "
           "interpolation and for the NTK-aware raised base, with the training length and the "
           "target length marked")

    def __init__(self, base=10000.0, scale=4, d_model=128, length=2048):
        super().__init__(
            base=_log_slider("base", base, 3, 7),
            scale=_int_slider("factor s", scale, 1, 32),
            d_model=_int_slider("head dim", d_model, 16, 256, 16),
            length=_int_slider("train length L", length, 128, 8192, 128),
        )

    def build(self, fig):
        self.ax = fig.subplots()
        (self.plain_line,) = self.ax.plot([], [], color="0.5", lw=2, label="base as trained")
        (self.interp_line,) = self.ax.plot([], [], color=OKABE_ITO[1], lw=2, ls="--", label="position interpolation ÷ s")
        (self.raised_line,) = self.ax.plot([], [], color=OKABE_ITO[0], lw=2, label="NTK-aware base × s^(d/(d-2))")
        self.length_line = self.ax.axhline(1, color=OKABE_ITO[2], ls=":", label="train length L")
        self.target_line = self.ax.axhline(1, color=OKABE_ITO[3], ls="-.", label="target length s × L")
        self.ax.set(yscale="log", ylim=(1, 1e10), xlabel="pair i", ylabel="wavelength (positions)")
        self.ax.legend(loc="upper left", fontsize=8)
        self.animated = [self.plain_line, self.interp_line, self.raised_line, self.length_line,
                         self.target_line, self.ax.title, self.ax.get_legend()]

    def static_key(self, base, scale, d_model, length):
        return d_model  # the pair axis

    def redraw(self, base, scale, d_model, length):
        data = rope_scaling_data(base, scale, d_model, length)
        self.plain_line.set_data(data["i"], data["plain"])
        self.interp_line.set_data(data["i"], data["interpolated"])
        self.raised_line.set_data(data["i"], data["raised"])
        self.length_line.set_ydata([length] * 2)
        self.target_line.set_ydata([data["target"]] * 2)
        self.ax.set_xlim(0, data["i"][-1])
        self.ax.set_title(
            f"pairs slower than L={length}: as trained {data['unseen_plain']}, interpolated "
            f"{data['unseen_interpolated']}, raised base {data['raised_base']:.3g}: {data['unseen_raised']} "
            f"(of {data['i'].size})", fontsize=9)


class PrecisionExplorer(Explorer):
    """Chapter 06: the angle error of each pair when p * omega is computed in low precision."""

    kind = "precision"
    alt = ("Phase error of every pair's angle at the chosen position when computed in float32, "
           "float16 and bfloat16, on a log scale, with the formats in which p and p+1 collide named")

    def __init__(self, log_position=3.0, base=10000.0, d_model=64):
        super().__init__(
            position=_log_slider("position p", 10**log_position, 0, 7.2, step=0.05, readout=".4g"),
            base=_log_slider("base", base, 2, 6),
            d_model=_int_slider("d_model", d_model, 8, 256, 8),
        )

    def build(self, fig):
        self.ax = fig.subplots()
        self.lines = {}
        for n, name in enumerate(LOW_PRECISION):
            (self.lines[name],) = self.ax.plot([], [], ".-", color=OKABE_ITO[n], ms=4, lw=1, label=name)
        self.ax.axhline(np.pi, color="0.4", ls=":", label="π: the phase is lost")
        self.ax.set(yscale="log", ylim=(1e-12, 10), xlabel="pair i", ylabel="|angle error| (radians)")
        self.ax.legend(loc="lower left", fontsize=8)
        self.animated = [*self.lines.values(), self.ax.title, self.ax.get_legend()]

    def static_key(self, position, base, d_model):
        return d_model  # the pair axis

    def redraw(self, position, base, d_model):
        p = int(round(position))
        data = precision_data(p, base, d_model)
        for name, line in self.lines.items():
            # an exact angle has error 0, which a log axis cannot show: draw it at the floor
            line.set_data(data["i"], np.maximum(data["errors"][name], 1e-12))
        self.ax.set_xlim(-0.5, data["i"][-1] + 0.5)
        same = ", ".join(data["collides"]) or "none"
        self.ax.set_title(f"p = {p:,}, base {base:.3g}: p and p+1 get identical vectors in: {same}", fontsize=9)
