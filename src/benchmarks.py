"""`make bench`: posenc against the common float32 recipe, side by side.

Each pair of contenders runs alternately (A, B, A, B, ...) in the same
process so that machine noise hits both alike; we report medians, p95, the
ratio baseline / ours (> 1 means ours is faster) and each one's max error
against the float64 table (itself checked against 40-digit mpmath in tests).
"""

from __future__ import annotations

import math
import time

import numpy as np
import torch

import posenc

N_POSITIONS, D_MODEL = 8192, 1024


# --- the baseline: the tutorial recipe found in the documents --------------

def recipe_table(n: int, d_model: int) -> torch.Tensor:
    pe = torch.zeros(n, d_model)
    position = torch.arange(0, n).unsqueeze(1).float()
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


class RecipeModule(torch.nn.Module):
    def __init__(self, d_model: int, max_len: int):
        super().__init__()
        self.register_buffer("pe", recipe_table(max_len, d_model).unsqueeze(0))

    def forward(self, x):
        return x + self.pe[:, : x.size(1)]


# --- timing ----------------------------------------------------------------

def alternate(contenders: dict, repeats: int = 15, warmup: int = 2) -> dict:
    """Run the callables round-robin; return {name: array of seconds}."""
    times = {name: [] for name in contenders}
    for round_ in range(warmup + repeats):
        for name, fn in contenders.items():
            start = time.perf_counter()
            fn()
            elapsed = time.perf_counter() - start
            if round_ >= warmup:
                times[name].append(elapsed)
    return {name: np.array(t) for name, t in times.items()}


def summary(times: np.ndarray) -> str:
    return f"median {np.median(times) * 1e3:7.2f} ms   p95 {np.percentile(times, 95) * 1e3:7.2f} ms"


def report(title: str, times: dict, errors: dict, ours: str, baseline: str) -> float:
    print(f"\n{title}")
    for name, t in times.items():
        err = f"   max error {errors[name]:.2e}" if name in errors else ""
        print(f"  {name:<28} {summary(t)}{err}")
    ratio = np.median(times[baseline]) / np.median(times[ours])
    print(f"  ratio {baseline} / {ours} (median): {ratio:.2f}x")
    return ratio


def bench_core() -> None:
    reference = posenc.sinusoidal(N_POSITIONS, D_MODEL, dtype=np.float64)
    x = torch.zeros(1, N_POSITIONS, D_MODEL)

    def ours_table():
        return posenc.sinusoidal(N_POSITIONS, D_MODEL, dtype=np.float32)

    def recipe():
        return recipe_table(N_POSITIONS, D_MODEL)

    errors = {
        "posenc.sinusoidal float32": np.abs(ours_table().astype(np.float64) - reference).max(),
        "recipe (float32 angles)": np.abs(recipe().double().numpy() - reference).max(),
    }
    times = alternate({"posenc.sinusoidal float32": ours_table, "recipe (float32 angles)": recipe})
    report(f"float32 table, {N_POSITIONS} positions x {D_MODEL} dims", times, errors,
           "posenc.sinusoidal float32", "recipe (float32 angles)")

    def ours_module():
        return posenc.SinusoidalPositionalEncoding(D_MODEL)(x)

    def recipe_module():
        return RecipeModule(D_MODEL, N_POSITIONS)(x)

    errors = {
        "posenc module": np.abs(ours_module()[0].double().numpy() - reference).max(),
        "recipe module": np.abs(recipe_module()[0].double().numpy() - reference).max(),
    }
    times = alternate({"posenc module": ours_module, "recipe module": recipe_module})
    report(f"module construction + first forward on (1, {N_POSITIONS}, {D_MODEL})", times, errors,
           "posenc module", "recipe module")

    print("\nsingle positions, float32 (max error over 64 channels):")
    for p in (10**6, 10**7):
        exact = posenc.sinusoidal([p], 64, dtype=np.float64)[0]
        ours = np.abs(posenc.sinusoidal([p], 64, dtype=np.float32)[0] - exact).max()
        theirs = np.abs(recipe_table(p + 1, 64)[p].double().numpy() - exact).max() if p <= 10**6 else None
        if theirs is None:  # avoid a 10^7-row table: same float32 arithmetic, one row
            div = torch.exp(torch.arange(0, 64, 2).float() * (-math.log(10000.0) / 64))
            row = torch.zeros(64)
            row[0::2], row[1::2] = torch.sin(p * div), torch.cos(p * div)
            theirs = np.abs(row.double().numpy() - exact).max()
        print(f"  p = {p:>9,}: posenc {ours:.1e}   recipe {theirs:.1e}")


def bench_explorers(steps: int = 60) -> None:
    """Update time (compute + redraw + PNG render) per slider step.

    A step moves one slider, chosen at random, to a random value on its grid,
    as a reader dragging sliders does. Ours redraws the explorer's existing
    artists (blitting when only moving artists change). The baseline is what
    ``ipywidgets.interact`` with a plotting function does: build a new figure
    per step, draw the same content, render it to PNG.
    """
    import io

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    import explorers

    rng = np.random.default_rng(0)
    for cls in (explorers.FormulaExplorer, explorers.BaseExplorer, explorers.OffsetExplorer,
                explorers.PrecisionExplorer, explorers.RopeScalingExplorer):
        explorer = cls()
        settings, current = [], explorer.values()
        for _ in range(steps):
            name = rng.choice(list(explorer.controls))
            c = explorer.controls[name]
            if c.__class__.__name__ == "FloatLogSlider":
                current[name] = float(c.base ** (c.min + c.step * rng.integers(0, round((c.max - c.min) / c.step) + 1)))
            else:
                current[name] = int(c.min + c.step * rng.integers(0, (c.max - c.min) // c.step + 1))
            settings.append(dict(current))  # redraw() itself clamps a pair index to d_model
        ours_queue, naive_queue = iter(settings), iter(settings)

        def ours():
            explorer.update(**next(ours_queue))

        def naive():
            fig = Figure(figsize=cls.figsize, dpi=90, layout="constrained")
            FigureCanvasAgg(fig)
            fresh = object.__new__(cls)
            fresh.build(fig)
            fresh.redraw(**next(naive_queue))
            buffer = io.BytesIO()
            fig.savefig(buffer, format="png")

        times = alternate({"redraw in place": ours, "new figure (interact)": naive}, repeats=steps - 1, warmup=1)
        report(f"{cls.__name__}: one slider step (compute + redraw + PNG)", times, {},
               "redraw in place", "new figure (interact)")


def main() -> None:
    import book_timing

    print(f"torch {torch.__version__}, numpy {np.__version__}, threads {torch.get_num_threads()}")
    bench_core()
    bench_explorers()
    book_timing.bench_typesetting()


if __name__ == "__main__":
    main()
