"""Code written the way learners write it, shared by several chapters' known mistakes and alternative answers.

The grader never calls these: they are test data, the answers a question declares (``known_mistakes``,
``alternatives``) and the battery of tries (tests/support/battery.py) puts to ``check``. Defining them costs
nothing at import; each runs only when its try does.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from grading.reference import posenc

PI2 = 2 * math.pi


def doubled_frequencies(d_model, base=10000.0):
    """Loop over channels 0, 2, 4, ... and still put 2 * i in the exponent."""
    return np.array([1.0 / base ** (2 * i / d_model) for i in range(0, d_model, 2)])


def doubled_table(positions, d_model):
    pe = np.zeros((len(positions), d_model))
    for row, pos in enumerate(positions):
        for i in range(0, d_model, 2):
            angle = pos / 10000 ** (2 * i / d_model)
            pe[row, i] = math.sin(angle)
            if i + 1 < d_model:
                pe[row, i + 1] = math.cos(angle)
    return pe


def float32_table(positions, d_model):
    """The PyTorch tutorial recipe, computed for given positions (odd d_model patched)."""
    position = torch.as_tensor(np.asarray(positions), dtype=torch.float32).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    pe = torch.zeros(len(positions), d_model)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)[:, : d_model // 2]
    return pe.numpy()


def tutorial_table(positions, d_model):
    """The tutorial recipe as is: breaks for odd d_model."""
    position = np.asarray(positions, dtype=np.float64)[:, None]
    div_term = np.exp(np.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
    pe = np.zeros((len(position), d_model))
    pe[:, 0::2] = np.sin(position * div_term)
    pe[:, 1::2] = np.cos(position * div_term)
    return pe


def swapped_table(positions, d_model):
    angles = np.outer(positions, np.repeat(posenc.frequencies(d_model), 2)[:d_model])
    return np.where(np.arange(d_model) % 2 == 0, np.cos(angles), np.sin(angles))


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
