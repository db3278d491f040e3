"""Code written the way learners write it, shared by several chapters' known mistakes and alternative answers.

The grader never calls these: they are test data, the answers a question declares (``known_mistakes``,
``alternatives``) and the battery of tries (tools/grading_battery.py) puts to ``check``. Defining them costs
nothing at import; each runs only when its try does.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from grading.bank.common import _table
from grading.reference import posenc
from posenc_course import bug_zoo
from posenc_course.bug_zoo import doubled_frequencies  # noqa: F401  (the bank's chapters import it from here)

PI2 = 2 * math.pi


def doubled_table(positions, d_model):
    """The doubled exponent (the bug zoo's bug 1), for given positions."""
    return bug_zoo.doubled_exponent(positions, d_model)


def float32_table(positions, d_model):
    """The PyTorch tutorial recipe's float32 angles (the bug zoo's), for given positions, returned in float32."""
    return bug_zoo.recipe_angles_table(positions, d_model).numpy()


def tutorial_table(positions, d_model):
    """The tutorial recipe as is, in float64: breaks for odd d_model."""
    return bug_zoo.tutorial_recipe(positions, d_model, dtype=torch.float64).numpy()


def swapped_table(positions, d_model):
    """Sine and cosine swapped (the bank's model of that mistake)."""
    return _table(positions, d_model, swap=True)


def loop_table(positions, d, layout="interleaved"):
    """A correct table, written with a loop over positions and pairs."""
    pe = np.zeros((len(positions), d))
    for row, p in enumerate(positions):
        for i in range((d + 1) // 2):
            angle = float(p) / 10000.0 ** (2 * i / d)
            pe[row, 2 * i] = math.sin(angle)
            if 2 * i + 1 < d:
                pe[row, 2 * i + 1] = math.cos(angle)
    return pe if layout == "interleaved" else pe[:, posenc.layout_permutation(d)]


def torch_table(positions, d, layout="interleaved"):
    """A correct table, written with torch operations in float64."""
    p = torch.as_tensor(np.asarray(positions), dtype=torch.float64)[:, None]
    omega = 10000.0 ** (-2.0 * torch.arange((d + 1) // 2, dtype=torch.float64) / d)
    sines, cosines = torch.sin(p * omega), torch.cos(p * omega)[:, : d // 2]
    if layout == "concatenated":
        return torch.cat([sines, cosines], dim=1).numpy()
    out = torch.zeros(len(p), d, dtype=torch.float64)
    out[:, 0::2], out[:, 1::2] = sines, cosines
    return out.numpy()
