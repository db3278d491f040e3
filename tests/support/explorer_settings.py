"""Slider settings for checking an explorer's numbers: the browser test and the Node.js test share them."""

from __future__ import annotations

import inspect
import itertools

import numpy as np

from posenc_course import explorers

EXPLORERS = [
    explorers.FormulaExplorer,
    explorers.BaseExplorer,
    explorers.OffsetExplorer,
    explorers.RopeScalingExplorer,
    explorers.PrecisionExplorer,
    explorers.RopeRulesExplorer,
    explorers.AttentionExplorer,
]
DATA = {
    "formula": explorers.formula_data,
    "base": explorers.base_data,
    "offset": explorers.offset_data,
    "rope": explorers.rope_scaling_data,
    "precision": explorers.precision_data,
    "rope_rules": explorers.rope_rules_data,
    "attention": explorers.attention_data,
}


def grid(control, n=5) -> list[float]:
    """min, max and n - 2 values between, on the slider's own grid (exponents for log sliders)."""
    lo, hi, step = control["min"], control["max"], control["step"]
    k = np.unique(np.round(np.linspace(0, round((hi - lo) / step), n)).astype(int))
    return [round(float(lo + step * int(j)), 10) for j in k]


def settings_for(spec, rng, n_random=12) -> tuple[list[dict], int]:
    """Each slider alone through its grid (the rest at defaults), then all corners, then random settings.

    Returns the settings and how many of them are single-slider steps from the defaults.
    """
    controls = spec["controls"]
    default = {c["name"]: (float(np.log10(c["value"])) if c["log"] else c["value"]) for c in controls}
    single = []
    for c in controls:
        for x in grid(c):
            single.append({**default, c["name"]: x})
        single.append(dict(default))
    corners = [dict(zip(default, combo)) for combo in itertools.product(*[(c["min"], c["max"]) for c in controls])]
    randoms = [{c["name"]: round(float(rng.uniform(c["min"], c["max"])), 6) for c in controls} for _ in range(n_random)]
    return single + corners + randoms, len(single)


def python_values(fn, values: dict) -> dict:
    """The browser's values as the data function takes them (an int parameter gets the rounded value)."""
    hints = {p.name: p.annotation for p in inspect.signature(fn).parameters.values()}
    return {name: int(round(x)) if hints.get(name) in (int, "int") else float(x) for name, x in values.items()}
