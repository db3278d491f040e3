"""The tries of the grader: every way of answering a question of the bank that the grading tests and the
maintainer's report (``grading_report``) put to ``check``.

Three categories, each try one ``check(qid, answer)`` call:

* ``correct``: right answers written the ways learners write them (list, array or tensor; int or float;
  float32 where the tolerance allows; "ac", "A, C", ["C", "A"]; loops, torch and closed forms for coding
  questions);
* ``wrong``: the realistic mistakes of ``KNOWN_MISTAKES`` (each with words its feedback must contain), the
  bank's own models of mistakes, perturbations just outside the tolerance, every other set of letters, and,
  for coding questions, functions that are right except on the inputs the question promises to cover;
* ``hostile``: None, strings, NaN, inf, huge arrays, objects whose ``__eq__``/``__array__``/``__len__`` raise,
  functions that raise, loop forever or return junk; grouped in classes (``Try.group``).

``judge`` says what is wrong with how the grader handled one try (None: nothing): a correct answer must be
accepted, a wrong one rejected with a "✗" line (and the mistake's own words), and every try must get exactly
one line of feedback, with no traceback and no warning from the grader's code. "The grader could not inspect your
answer (...)", the engine's last resort, is accepted only for objects whose own methods raise or lie about
their type (``Try.evil``), and only when it names their error.

Nothing is built at import: ``tries(qid)`` and ``all_tries()`` build the tries when asked.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import math
import os
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
import torch
from torch import nn

import grading
import posenc
from grading import QUESTIONS
from grading.bank.common import tolerance

GRADER = Path(grading.__file__).resolve().parent  # the grader's own code: engine and bank
CATEGORIES = ("correct", "wrong", "hostile")


@dataclass
class Try:
    qid: str
    category: str  # "correct", "wrong" or "hostile"
    label: str
    make: Callable[[], object]  # builds the answer when the try runs (some are large)
    group: str = ""  # the class of input ("missing", "non-finite", "function that raises", ...)
    words: str = ""  # words the feedback must contain (the known mistakes)
    limit: float | None = None  # grading.kinds.TIME_LIMIT for this try (None: the question's own)
    evil: bool = False  # an object whose own methods raise or lie about its type

    @property
    def id(self) -> str:
        return f"{self.qid}-{self.category}-{self.label}"


@dataclass
class Lazy:
    """A known mistake built when its try runs (an instance, say), not when this module is imported."""

    make: Callable[[], object]


# --------------------------------------------------------------------------
# Realistic mistakes, written the way people write them
# --------------------------------------------------------------------------


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


def degrees_table(positions, d_model):
    """The angle p·ω converted "from degrees" before sin and cos."""
    angles = np.radians(np.outer(positions, np.repeat(posenc.frequencies(d_model), 2)[:d_model]))
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angles), np.cos(angles))


def inverted_table(positions, d_model):
    """base^(+2i/d): base where 1/base belongs."""
    omega = np.array([10000.0 ** (2 * (j // 2) / d_model) for j in range(d_model)])
    angles = np.outer(positions, omega)
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angles), np.cos(angles))


def no_factor_2_table(positions, d_model):
    omega = np.array([10000.0 ** (-(j // 2) / d_model) for j in range(d_model)])
    angles = np.outer(positions, omega)
    return np.where(np.arange(d_model) % 2 == 0, np.sin(angles), np.cos(angles))


def swapped_table(positions, d_model):
    angles = np.outer(positions, np.repeat(posenc.frequencies(d_model), 2)[:d_model])
    return np.where(np.arange(d_model) % 2 == 0, np.cos(angles), np.sin(angles))


class LearnedTable(nn.Module):
    """The common tutorial layer: token embedding + learned position table."""

    def __init__(self, vocab_size, d_model, max_len=128):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, d_model)
        self.position_embedding = nn.Embedding(max_len, d_model)

    def forward(self, x):
        positions = torch.arange(x.shape[1]).unsqueeze(0).expand_as(x)
        return self.token_embedding(x) + self.position_embedding(positions)


class FixedMaxLen(nn.Module):
    """Sinusoidal buffer of max_len rows, as in the tutorial class: fails past max_len."""

    def __init__(self, vocab_size, d_model, max_len=512):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, d_model)
        self.scale = math.sqrt(d_model)
        self.register_buffer("pe", torch.from_numpy(posenc.sinusoidal(max_len, d_model, dtype=np.float32)))

    def forward(self, tokens):
        return self.tok(tokens) * self.scale + self.pe[: tokens.shape[1]]


class MaxLen5000(FixedMaxLen):
    """The tutorial's table length: accurate rows, but only 5,000 of them."""

    def __init__(self, vocab_size, d_model, max_len=5000):
        super().__init__(vocab_size, d_model, max_len)


class TutorialFloat32(nn.Module):
    """The tutorial recipe built for the actual length: no limit, but angles in float32."""

    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, d_model)
        self.d = d_model

    def forward(self, tokens):
        table = torch.from_numpy(float32_table(np.arange(tokens.shape[1]), self.d)).float()
        return self.tok(tokens) * math.sqrt(self.d) + table


class SwappedLayer(TutorialFloat32):
    def forward(self, tokens):
        table = torch.from_numpy(swapped_table(np.arange(tokens.shape[1]), self.d)).float()
        return self.tok(tokens) * math.sqrt(self.d) + table


class Clamped(FixedMaxLen):
    """Past max_len, reuse the last row: silently wrong."""

    def forward(self, tokens):
        idx = torch.arange(tokens.shape[1]).clamp(max=self.pe.shape[0] - 1)
        return self.tok(tokens) * self.scale + self.pe[idx]


class Unscaled(FixedMaxLen):
    def forward(self, tokens):
        table = posenc.sinusoidal(tokens.shape[1], self.tok.embedding_dim, dtype=np.float32)
        return self.tok(tokens) + torch.from_numpy(table)


class Concatenated(FixedMaxLen):
    def forward(self, tokens):
        pe = posenc.sinusoidal(tokens.shape[1], self.tok.embedding_dim, layout="concatenated", dtype=np.float32)
        return self.tok(tokens) * self.scale + torch.from_numpy(pe)


class TutorialOddBreaks(nn.Module):
    """Builds the table on the fly with the tutorial recipe: no length limit, but odd d_model fails."""

    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, d_model)
        self.d = d_model

    def forward(self, tokens):
        pe = torch.from_numpy(tutorial_table(np.arange(tokens.shape[1]), self.d)).float()
        return self.tok(tokens) * math.sqrt(self.d) + pe


class ReturnsNumpy(FixedMaxLen):
    def forward(self, tokens):
        return (self.tok(tokens) * self.scale).detach().numpy()


class MutatesTokens(nn.Module):
    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, d_model)
        self.d = d_model

    def forward(self, tokens):
        tokens.clamp_(max=0)
        pe = torch.from_numpy(posenc.sinusoidal(tokens.shape[1], self.d, dtype=np.float32))
        return self.tok(tokens) * math.sqrt(self.d) + pe


def in_place_add(x):
    x += posenc.sinusoidal(*x.shape)
    return x


def rotation_transposed(k, d):
    if d % 2:
        raise ValueError("odd")
    return posenc.rotation(k, d).T


def rotation_doubled(k, d):
    if d % 2:
        raise ValueError("odd")
    t = np.zeros((d, d))
    for j, w in enumerate(doubled_frequencies(d)):
        c, s = math.cos(k * w), math.sin(k * w)
        t[2 * j : 2 * j + 2, 2 * j : 2 * j + 2] = [[c, s], [-s, c]]
    return t


def rotation_degrees(k, d):
    if d % 2:
        raise ValueError("odd")
    t = np.zeros((d, d))
    for j, w in enumerate(posenc.frequencies(d)):
        a = math.radians(k * w)
        t[2 * j : 2 * j + 2, 2 * j : 2 * j + 2] = [[math.cos(a), math.sin(a)], [-math.sin(a), math.cos(a)]]
    return t


def rotation_swapped(k, d):
    if d % 2:
        raise ValueError("odd")
    t = np.zeros((d, d))
    for j, w in enumerate(posenc.frequencies(d)):
        c, s = math.cos(k * w), math.sin(k * w)
        t[2 * j : 2 * j + 2, 2 * j : 2 * j + 2] = [[s, c], [-c, s]]
    return t


def rotation_odd_silently(k, d):
    t = np.eye(d)
    t[: d - d % 2, : d - d % 2] = posenc.rotation(k, d - d % 2) if d > 1 else 1
    return t


def rotation_index_error(k, d):
    t = np.zeros((d, d))
    w = posenc.frequencies(d)
    for j in range(len(w)):
        c, s = math.cos(k * w[j]), math.sin(k * w[j])
        t[2 * j, 2 * j], t[2 * j, 2 * j + 1], t[2 * j + 1, 2 * j], t[2 * j + 1, 2 * j + 1] = c, s, -s, c
    return t


def to_concat_in_place(t):
    t[:] = np.concatenate([t[:, 0::2], t[:, 1::2]], axis=1)
    return t


PI2 = 2 * math.pi


def half_angle_table(positions, d_model):
    """Bug 6 in numpy: positions, frequencies and angles in float16."""
    p = np.asarray(positions).astype(np.float16)[:, None]
    w = (10000.0 ** (-2.0 * np.arange((d_model + 1) // 2) / d_model)).astype(np.float16)
    angle = p * w
    out = np.empty((len(p), 2 * w.size), dtype=np.float16)
    out[:, 0::2], out[:, 1::2] = np.sin(angle), np.cos(angle)
    return out[:, :d_model]


def buggy_06(positions, d_model):
    """The function of question 06.7 as given: the cosine's own exponent, and an IndexError for odd d."""
    positions = np.asarray(positions, dtype=np.float64)
    pe = np.zeros((len(positions), d_model))
    for i in range(0, d_model, 2):
        pe[:, i] = np.sin(positions / 10000 ** (i / d_model))
        pe[:, i + 1] = np.cos(positions / 10000 ** ((i + 1) / d_model))
    return pe


def exponent_fixed_odd_breaks(positions, d_model):
    positions = np.asarray(positions, dtype=np.float64)
    pe = np.zeros((len(positions), d_model))
    for i in range(0, d_model, 2):
        pe[:, i] = np.sin(positions / 10000 ** (i / d_model))
        pe[:, i + 1] = np.cos(positions / 10000 ** (i / d_model))
    return pe


def fixed_06(positions, d_model):
    """A learner's fix of 06.7: same loop, one exponent per pair, guard for the lone last sine."""
    positions = np.asarray(positions, dtype=np.float64)
    pe = np.zeros((len(positions), d_model))
    for i in range(0, d_model, 2):
        angle = positions / 10000 ** (i / d_model)
        pe[:, i] = np.sin(angle)
        if i + 1 < d_model:
            pe[:, i + 1] = np.cos(angle)
    return pe


def along_batch_06(x):
    return x + posenc.sinusoidal(x.shape[0], x.shape[2])[:, None, :]


def flat_table_batch_slice(x):
    return x + posenc.sinusoidal(64, x.shape[2])[: x.shape[0]]


def in_place_batch_first(x):
    x += posenc.sinusoidal(x.shape[1], x.shape[2])
    return x


BF16_BELOW_20000 = 20000 - len(torch.unique(torch.arange(20000, dtype=torch.float64).to(torch.bfloat16)))


def rope_loop(x, p, layout="interleaved", base=10000.0, sign=1.0, exponent=2.0, dtype=np.float64, swap=False):
    """RoPE of one vector written with a loop over pairs; the keywords model real mistakes."""
    d = len(x)
    out = np.array(x, dtype=np.float64)
    for i in range(d // 2):
        k = 2 * i if exponent == "channel" else i  # "channel": i counts channels 0, 2, 4, ... (doubled exponent)
        w = dtype(base) ** (dtype(-2.0 * k / d))
        angle = float(dtype(sign * p) * w)
        a, b = (2 * i, 2 * i + 1) if layout == "interleaved" else (i, i + d // 2)
        cos, sin = (math.sin, math.cos) if swap else (math.cos, math.sin)
        out[a] = x[a] * cos(angle) - x[b] * sin(angle)
        out[b] = x[a] * sin(angle) + x[b] * cos(angle)
    return out


def rope_complex(x, p, layout="interleaved"):
    """A correct answer written with complex numbers."""
    d = len(x)
    pairs = x[0::2] + 1j * x[1::2] if layout == "interleaved" else x[: d // 2] + 1j * x[d // 2 :]
    z = pairs * np.exp(1j * p * 10000.0 ** (-2.0 * np.arange(d // 2) / d))
    return np.stack([z.real, z.imag], -1).reshape(-1) if layout == "interleaved" else np.concatenate([z.real, z.imag])


def rope_in_place(x, p, layout="interleaved"):
    x[:] = rope_loop(x, p, layout)
    return x


ALIBI_ROW = posenc.alibi_bias(4, 6)[1, 5]


def yarn_08(head_dim, base, factor, original, *, truncate=True, reverse=False):
    """Question 08.4 written out as a learner would, and two of its mistakes."""

    def pair_at(turns):
        return head_dim * math.log(original / (2 * math.pi * turns)) / (2 * math.log(base))

    low, high = pair_at(32.0), pair_at(1.0)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, head_dim - 1)
    if low == high:
        high += 0.001
    ramp = np.clip((np.arange(head_dim // 2) - low) / (high - low), 0.0, 1.0)
    if reverse:
        ramp = 1 - ramp
    w = base ** (-2.0 * np.arange(head_dim // 2) / head_dim)
    return (1 - ramp) * w + ramp * w / factor


# qid -> [(wrong answer, a word the feedback must contain)], at least three per question
KNOWN_MISTAKES = {
    "01.1": [
        ("B", "Attn(PX) = P·Attn(X)"),
        ("AD", "not the right set"),
        ("A", "not the right set"),
        ("ABCD", "every option"),
    ],
    "01.2": [(4.0, "sqrt(d_model)"), (8.0, "squared norm"), (2 * math.sqrt(8), "factor of 2")],
    "01.3": [
        (in_place_add, "changed its input"),
        (lambda x: x + posenc.sinusoidal(np.arange(1, len(x) + 1), x.shape[1]), "start at 1"),
        (lambda x: x + posenc.sinusoidal(len(x), x.shape[1], layout="concatenated"), "concatenated"),
        (lambda x: x + tutorial_table(np.arange(len(x)), x.shape[1]), "odd"),
        (lambda x: x + doubled_table(np.arange(len(x)), x.shape[1]), "doubled"),
        (lambda x: x + swapped_table(np.arange(len(x)), x.shape[1]), "swapped"),
    ],
    "01.4": [(2, "L = 5"), (7, "off by one"), (8.5, "whole number")],
    "01.5": [(1000, "start at 0"), (3996, "divide by the token norm"), (999 / 4, "too low")],
    "01.6": [("ABCD", "concrete case"), ("AB", "not the right set"), ("ABCDE", "every option")],
    "01.7": [("A", "permuted order"), ("AB", "exactly one"), ("C", "exact rule")],
    "02.1": [("A", "doubled-exponent"), ("C", "position is p"), ("BD", "exactly one")],
    "02.2": [
        (doubled_table([4], 6)[0], "doubled"),
        (posenc.sinusoidal([4], 6, layout="concatenated")[0], "concatenated"),
        (posenc.sinusoidal([4], 6)[0][[1, 0, 3, 2, 5, 4]], "swapped"),
        ([-0.757, -0.653, 0.185, 0.983, 0.009, 1.000], "more decimals"),
        (degrees_table([4], 6)[0], "degrees"),
        (inverted_table([4], 6)[0], "wrong sign"),
        (no_factor_2_table([4], 6)[0], "factor 2 in the exponent is missing"),
        (posenc.sinusoidal([4], 6)[0][:3], "shape"),
    ],
    "02.3": [
        (1e-4, "doubled"),
        (0.01 / PI2, "cycles per position"),
        (PI2 * 100, "wavelength"),
        (0.02, "factor of 2"),
        (0.1, "factor 2 in the exponent is missing"),
        (100.0, "wrong sign"),
    ],
    "02.4": [
        (1e-4, "does not exist"),
        (doubled_frequencies(512)[-1], "doubled"),
        (posenc.frequencies(512)[-2], "pair 254"),
        (10000 ** (510 / 512), "wrong sign"),
        (10000 ** (-255 / 512), "factor 2 in the exponent is missing"),
    ],
    "02.5": [
        (doubled_frequencies, "doubled"),
        (lambda d, base=10000.0: base ** (-2.0 * np.arange(d // 2) / d), "ceil(d/2)"),
        (lambda d, base=10000.0: (base ** (-2.0 * np.arange((d + 1) // 2) / d)).astype(np.float32), "float32"),
        (lambda d, base=10000.0: list(base ** (-2.0 * np.arange((d + 1) // 2) / d)), "numpy array"),
        (lambda d, base=10000.0: base ** (-1.0 * np.arange((d + 1) // 2) / d), "factor 2"),
        (lambda d, base=10000.0: np.array([base ** (2 * i / d) for i in range((d + 1) // 2)]), "wrong sign"),
    ],
    "02.6": [
        (lambda p, d, layout="interleaved": doubled_table(p, d), "doubled"),
        (lambda p, d, layout="interleaved": float32_table(p, d), "float32"),
        (lambda p, d, layout="interleaved": tutorial_table(p, d), "odd"),
        (lambda p, d, layout="interleaved": posenc.sinusoidal(p, d, layout="concatenated"), "concatenated"),
        (lambda p, d, layout="interleaved": swapped_table(p, d), "swapped"),
        (lambda p, d, layout="interleaved": posenc.sinusoidal(p, d), "for layout='concatenated'"),
        (lambda p, d, layout="interleaved": posenc.sinusoidal(p, d, layout=layout)[:, ::-1].copy(), "element"),
        (lambda p, d, layout="interleaved": torch.from_numpy(posenc.sinusoidal(p, d)), "torch tensor"),
    ],
    "02.7": [
        (lambda t: t[:, np.argsort(posenc.layout_permutation(t.shape[1]))], "inverse permutation"),
        (lambda t: np.concatenate([t[:, 1::2], t[:, 0::2]], axis=1), "cosines first"),
        (lambda t: t.copy(), "unchanged"),
        (to_concat_in_place, "changed its input"),
    ],
    "03.1": [
        ([PI2, PI2 * 10, PI2 * 100, PI2 * 1000, PI2 * 10000], "i = 256"),
        (PI2 / doubled_frequencies(512)[[0, 64, 128, 192, 255]], "doubled"),
        (posenc.frequencies(512)[[0, 64, 128, 192, 255]], "frequencies"),
        (1 / posenc.frequencies(512)[[0, 64, 128, 192, 255]], "2π"),
        ([PI2, PI2 * 10, PI2 * 100, PI2 * 1000], "shape"),
        (360 / posenc.frequencies(512)[[0, 64, 128, 192, 255]], "degrees"),
    ],
    "03.2": [
        (115, "do NOT complete"),
        (int(np.sum(PI2 / doubled_frequencies(512) <= 1000)), "doubled"),
        (140, "too low"),
    ],
    "03.3": [("ABC", "wavelengths"), ("CD", "not the right set"), ("ABCD", "every option")],
    "03.4": [("C", "base^(-2i/d)"), ("ABD", "not the right set"), ("ABCD", "every option")],
    "03.5": [
        (PI2 * 500000, "never reaches"),
        (PI2 * 500000 ** (2 * 126 / 128), "doubled"),
        (posenc.wavelengths(128)[-1], "base 10,000"),
    ],
    "03.6": [
        (0.0625, "gap between"),
        (np.spacing(1e6) / 2, "float64"),
        (float(np.finfo(np.float32).eps), "relative precision"),
        (abs(float(np.float32(1e6 * posenc.frequencies(512)[1])) - 1e6 * posenc.frequencies(512)[1]), "this one angle"),
    ],
    "03.7": [
        (float32_table, "float32"),
        (lambda p, d: posenc.sinusoidal(p, d), "dtype float32"),
        (lambda p, d: posenc.sinusoidal(p, d, dtype=np.float16), "dtype float32"),
        (lambda p, d: doubled_table(p, d).astype(np.float32), "doubled"),
    ],
    "04.1": [
        (posenc.rotation(3, 8)[2:4, 2:4].T, "transpose"),
        (posenc.rotation(3, 2), "k radians"),
        (rotation_doubled(3, 8)[2:4, 2:4], "doubled"),
        (np.eye(2).ravel(), "shape"),
        (rotation_degrees(3, 8)[2:4, 2:4], "degrees"),
        (rotation_swapped(3, 8)[2:4, 2:4], "swapped"),
    ],
    "04.2": [
        (rotation_transposed, "T(-k)"),
        (rotation_doubled, "doubled"),
        (rotation_odd_silently, "should raise ValueError"),
        (lambda k, d: posenc.rotation(k, d, layout="concatenated"), "concatenated"),
        (rotation_index_error, "IndexError"),
        (rotation_degrees, "degrees"),
        (rotation_swapped, "swapped"),
    ],
    "04.3": [("C", "PE(0) to PE(k)"), ("ABC", "not the right set"), ("ABCD", "every option")],
    "04.4": [("ABD", "lengths never seen"), ("AE", "not the right set"), ("ABCDE", "every option")],
    "04.5": [
        (32.0, "offset 0"),
        (float(posenc.sinusoidal([0], 64)[0] @ posenc.sinusoidal([7], 64)[0]) / 32, "cosine similarity"),
        (float(np.sum(np.cos(7 * doubled_frequencies(64)))), "doubled"),
    ],
    "04.6": [("A", "A: "), ("C", "C: "), ("AB", "exactly one")],
    "04.7": [
        (posenc.rotation(2, 6), "interleaved"),
        (posenc.rotation(2, 6)[np.ix_(*[np.argsort(posenc.layout_permutation(6))] * 2)], "wrong way"),
        (posenc.rotation(2, 6, layout="concatenated").T, "transpose"),
    ],
    "05.1": [("C", "past max_len"), ("ABD", "not the right set"), ("ABCD", "every option")],
    "05.2": [("D", "code around the model"), ("AB", "not the right set"), ("ABCD", "every option")],
    "05.3": [(475, "off by one"), (477, "off by one"), (0, "every position from 1024")],
    "05.4": [(512 + 768, "multiply"), (0, "sinusoidal"), (2 * 512 * 768, "one table")],
    "05.5": [("B", "extrapolate"), ("C", "RoPE"), ("AD", "exactly one")],
    "05.6": [("C", "diag(w)"), ("AB", "not the right set"), ("ABCD", "every option")],
    "05.7": [
        (LearnedTable, "trainable parameters"),
        (FixedMaxLen, "no length limit"),
        (Clamped, "clamped"),
        (Unscaled, "sqrt(d_model)"),
        (Concatenated, "concatenated"),
        (TutorialOddBreaks, "odd"),
        (ReturnsNumpy, "torch tensor"),
        (MutatesTokens, "changed its input"),
        (MaxLen5000, "no length limit"),
        (TutorialFloat32, "float32"),
        (SwappedLayer, "swapped"),
        (Lazy(lambda: MaxLen5000(10, 4)), "pass the class itself"),
    ],
    "06.1": [(256, "still exact"), (2049, "float16"), (2**24 + 1, "float32"), (256.5, "whole number")],
    "06.2": [("C", "C: "), ("E", "E: "), ("CD", "exactly one"), ("A", "2^53")],
    "06.3": [
        (5347, "distinct vectors"),
        (BF16_BELOW_20000, "bfloat16"),
        (20000 - 2049, "spacing"),
        (0, "only up to 2048"),
    ],
    "06.4": [
        (half_angle_table, "half precision"),
        (lambda p, d: float32_table(p, d).astype(np.float16), "float32"),
        (lambda p, d: posenc.sinusoidal(p, d, dtype=np.float32), "dtype float16"),
        (lambda p, d: posenc.sinusoidal(p, d, layout="concatenated").astype(np.float16), "concatenated"),
    ],
    "06.5": [("A", "alternates"), ("D", "fairseq"), ("C", "cosines first"), ("AB", "exactly one")],
    "06.6": [
        ("AB", "pair structure"),
        ("ABCE", "not the right set"),
        ("D", "not the right set"),
        ("ABCDE", "every option"),
    ],
    "06.7": [
        (buggy_06, "(2i+1)/d"),
        (exponent_fixed_odd_breaks, "IndexError"),
        (lambda p, d: doubled_table(p, d), "doubled"),
        (float32_table, "float32"),
        (swapped_table, "swapped"),
    ],
    "06.8": [
        (along_batch_06, "axis 1"),
        (lambda x: x + posenc.sinusoidal(1, x.shape[2]), "PE(0)"),
        (flat_table_batch_slice, "raised ValueError"),
        (in_place_batch_first, "changed its input"),
        (lambda x: x + posenc.sinusoidal(x.shape[1], x.shape[2], layout="concatenated"), "concatenated"),
        (lambda x: np.broadcast_to(posenc.sinusoidal(x.shape[1], x.shape[2]), x.shape).copy(), "encoding alone"),
    ],
    "07.1": [("B", "small angles"), ("C", "adds nothing"), ("D", "composition rule"), ("AB", "exactly one")],
    "07.2": [
        (lambda x, p, layout="interleaved": rope_loop(x, p, layout, sign=-1.0), "-p·ω_i"),
        (lambda x, p, layout="interleaved": rope_loop(x, p, layout, exponent="channel"), "doubled"),
        (lambda x, p, layout="interleaved": rope_loop(x, p), "for layout='concatenated'"),
        (lambda x, p, layout="interleaved": rope_loop(x, p, "concatenated"), "for layout='interleaved'"),
        (lambda x, p, layout="interleaved": rope_loop(x, p, layout, dtype=np.float32), "float32"),
        (rope_in_place, "changed its input"),
        (lambda x, p, layout="interleaved": torch.from_numpy(rope_loop(x, p, layout)), "torch tensor"),
        (lambda x, p, layout="interleaved": rope_loop(x, p, layout, swap=True), "swapped"),
    ],
    "07.3": [
        (0.125, "8 heads"),
        (0.5, "counted from h = 1"),
        (0.25, "head 4"),
        (2 ** (-3 / 16), "factor 8"),
        (2 ** (24 / 16), "wrong sign"),
    ],
    "07.4": [("ABCD", "one quantity only"), ("AB", "not the right set"), ("ABCDE", "every option")],
    "07.5": [(4, "squeezes"), (12288, "difference"), (1 / 16384, "L_train / L_new")],
    "07.6": [(40000, "d/(d-2) makes it exactly s"), (1e4 * 4 ** (126 / 128), "upside down"), (2500, "must grow")],
    "07.7": [
        (-ALIBI_ROW, "sign"),
        (ALIBI_ROW[::-1], "reverse order"),
        (posenc.alibi_bias(4, 6)[2, 5], "head 3"),
        (ALIBI_ROW[1:], "shape"),
        (np.round(ALIBI_ROW, 1), "elements are wrong"),
    ],
    "07.8": [("C", "wavelength 2π·base^(2i/d)"), ("ABD", "not the right set"), ("ABCD", "every option")],
    "08.1": [
        (29, "never complete a turn"),
        (int(np.sum(1 / posenc.frequencies(128, 5e5) <= 8192)), "2π/ω_i"),
        (int(np.sum(2 * np.pi * 5e5 ** (4 * np.arange(64) / 128) <= 8192)), "doubled"),
    ],
    "08.2": [
        ((0.1 * math.log(16) + 1) ** 2, "square"),
        (0.1 * math.log10(16) + 1, "natural one"),
        (1.4, "log base 2"),
        (math.sqrt(1 + math.log(16) / math.log(4096)), "LongRoPE"),
    ],
    "08.3": [
        (posenc.frequencies(16) / 8, "position interpolation"),
        (posenc.frequencies(16), "as trained"),
        (posenc.frequencies(16)[:4], "shape"),
    ],
    "08.4": [
        (lambda d, b, s, L: posenc.frequencies(d, b) / s, "position interpolation"),
        (lambda d, b, s, L: yarn_08(d, b, s, L, reverse=True), "wrong way"),
        (lambda d, b, s, L: yarn_08(d, b, s, L, truncate=False), "outwards"),
        (lambda d, b, s, L: yarn_08(d, b, s, L).astype(np.float32), "float32"),
    ],
    "08.5": [
        ("ABC", "not the right set"),
        ("ABD", "not the right set"),
        ("A", "not the right set"),
        ("ABCD", "every option"),
    ],
    "08.6": [
        ("ABC", "not the right set"),
        ("ABD", "not the right set"),
        ("A", "not the right set"),
        ("ABCD", "every option"),
    ],
    "08.7": [
        (10000.0 * 4.0 ** (128 / 126), "ignores factor"),
        (10000.0 * 7.0 ** (126 / 128), "upside down"),
        (10000.0, "does change"),
    ],
}


# --------------------------------------------------------------------------
# The test's own idea of right and wrong (independent of the grader)
# --------------------------------------------------------------------------


def _allowed(want, tol):
    return tol["atol"] + tol["rtol"] * np.abs(want)


def _within(got, want, tol) -> bool:
    """Is ``got`` (array-like) the right answer ``want`` within the question's tolerance?"""
    got = np.asarray(got)
    if got.shape != np.shape(want) or got.dtype.kind not in "fiu":
        return False
    return bool(np.all(np.abs(got.astype(np.float64) - want) <= _allowed(want, tol)))


def _const(value):
    return lambda: value


# --------------------------------------------------------------------------
# Numeric questions
# --------------------------------------------------------------------------


def numeric_tries(qid, q):
    want, tol = float(q.reference()), tolerance(q)
    if q.integer:
        n = int(want)
        correct = {
            "int": n,
            "numpy int64": np.int64(n),
            "numpy int32": np.int32(n),
            "float": float(n),
            "numpy float64": np.float64(n),
            "numpy float32": np.float32(n),
            "0-d array": np.array(n),
            "1-element array": np.array([n]),
            "torch int64": torch.tensor(n),
            "torch float64": torch.tensor(float(n), dtype=torch.float64),
            "Fraction": Fraction(n),
        }
        wrong = [n + 1, n - 1, n + 0.5, 2 * n, n // 2, 0, -n, n * 10]
        is_wrong = lambda x: x != n  # noqa: E731
    else:
        r = tol["rtol"]
        correct = {
            "float": want,
            "numpy float64": np.float64(want),
            "numpy float32": np.float32(want),
            "0-d array": np.array(want),
            "1-element array": np.array([want]),
            "torch float64": torch.tensor(want, dtype=torch.float64),
            "torch float32": torch.tensor(want),
            "torch 1-element": torch.tensor([want]),
            "tensor with grad": torch.tensor(want, requires_grad=True),
            "tensor.item()": torch.tensor(want, dtype=torch.float64).item(),
            "Fraction": Fraction(want),
            "4 significant digits": float(f"{want:.4g}"),
            "inside the tolerance": want * (1 + r / 3),
        }
        wrong = [
            want * (1 + 3 * r),
            want * (1 - 3 * r),
            -want,
            2 * want,
            want / 2,
            10 * want,
            want / 10,
            want + 1,
            0.0,
            float(f"{want:.1g}"),
        ]
        is_wrong = lambda x: abs(x - want) > r * abs(want)  # noqa: E731
    wrong += [value() for value, _ in q.mistakes]
    tries = [Try(qid, "correct", label, _const(answer)) for label, answer in correct.items()]
    tries += [Try(qid, "wrong", f"{x!r}", _const(x)) for x in dict.fromkeys(wrong) if is_wrong(float(x))]
    return tries


# --------------------------------------------------------------------------
# Choice questions
# --------------------------------------------------------------------------


def choice_tries(qid, q):
    right = sorted(q.correct)
    if len(right) == 1:
        (a,) = right
        correct = [a, a.lower(), f" {a} ", [a], (a,), {a}, f"({a})", f"{a}.", f"{a.lower()})", np.str_(a)]
    else:
        correct = [
            "".join(right),
            "".join(right).lower(),
            "".join(reversed(right)),
            ", ".join(right),
            ", ".join(right[:-1]) + " and " + right[-1],
            " ".join(right).lower(),
            right,
            tuple(reversed(right)),
            set(right),
            frozenset(right),
            f"  {''.join(right)} ",
            " ".join(f"({x})" for x in right),
            ";".join(right),
            "/".join(right),
            "+".join(right),
            f"[{', '.join(right)}]",
            np.str_("".join(right)),
        ]
    tries = [Try(qid, "correct", repr(answer), _const(answer)) for answer in correct]
    for size in range(1, len(q.letters) + 1):
        for subset in itertools.combinations(q.letters, size):
            if set(subset) != q.correct:
                tries.append(Try(qid, "wrong", "".join(subset), _const("".join(subset))))
    return tries


# --------------------------------------------------------------------------
# Array questions
# --------------------------------------------------------------------------


def _matrix(values):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        return np.asmatrix(values)


def _cast_within(want, tol, dtype):
    return _within(want.astype(dtype).astype(np.float64), want, tol)


def array_tries(qid, q):
    want, tol = np.asarray(q.reference(), dtype=np.float64), tolerance(q)
    allowed = _allowed(want, tol)
    correct = {
        "numpy float64": want,
        "list": want.tolist(),
        "torch float64": torch.from_numpy(want.copy()),
        "tensor with grad": torch.tensor(want, requires_grad=True),
        "object array": np.array(want.tolist(), dtype=object),
    }
    if want.ndim == 1:
        correct |= {
            "tuple": tuple(want.tolist()),
            "list of numpy scalars": list(want),
            "list of 0-d tensors": list(torch.from_numpy(want.copy())),
        }
    else:
        correct |= {
            "tuple of tuples": tuple(map(tuple, want.tolist())),
            "Fortran order": np.asfortranarray(want),
            "np.matrix": _matrix(want),
            "transposed view of the transpose": want.T.copy().T,
        }
    for name, dtype in [("float32", np.float32), ("float16", np.float16)]:
        if _cast_within(want, tol, dtype):
            correct[f"numpy {name}"] = want.astype(dtype)
            correct[f"torch {name}"] = torch.from_numpy(want.astype(dtype))
    decimals = next(d for d in range(1, 16) if np.all(np.abs(np.round(want, d) - want) <= 0.5 * allowed))
    correct[f"rounded to {decimals} decimals"] = np.round(want, decimals).tolist()
    signs = np.where(np.arange(want.size) % 2, 1, -1).reshape(want.shape)
    correct["inside the tolerance"] = want + 0.4 * allowed * signs
    tries = [Try(qid, "correct", label, _const(answer)) for label, answer in correct.items()]
    if want.ndim == 1:  # iterables of numbers are read; built when the try runs: they are used up
        tries += [
            Try(qid, "correct", "generator", lambda: (x for x in want.tolist())),
            Try(qid, "correct", "map object", lambda: map(float, want.tolist())),
        ]
    bf16 = torch.from_numpy(want).to(torch.bfloat16)
    if _within(bf16.double().numpy(), want, tol):
        tries.append(Try(qid, "correct", "torch bfloat16", _const(bf16)))

    wrong = {f"mistake {n}": np.asarray(value(), dtype=np.float64) for n, (value, _) in enumerate(q.mistakes)}
    for index in np.ndindex(want.shape):
        off = want.copy()
        off[index] += 3 * allowed[index]
        wrong[f"element {index} just outside"] = off
    wrong |= {
        "negated": -want,
        "reversed": want.ravel()[::-1].reshape(want.shape),
        "zeros": np.zeros_like(want),
        "doubled": 2 * want,
        "rounded to 1 decimal": np.round(want, 1),
        "truncated to integers": np.trunc(want),
        "one element missing": want.ravel()[:-1],
        "one element more": np.append(want, 0.0),
        "extra axis": want[None],
        "flattened": want.ravel(),
    }
    if want.ndim == 2:
        wrong["transposed"] = want.T
    tries += [
        Try(qid, "wrong", label, _const(answer)) for label, answer in wrong.items() if not _within(answer, want, tol)
    ]
    tries.append(Try(qid, "wrong", "complex, right real part", _const(want + 0.5j)))
    return tries


# --------------------------------------------------------------------------
# Function questions
# --------------------------------------------------------------------------


def _loop_table(positions, d, layout="interleaved"):
    pe = np.zeros((len(positions), d))
    for row, p in enumerate(positions):
        for i in range((d + 1) // 2):
            angle = float(p) / 10000.0 ** (2 * i / d)
            pe[row, 2 * i] = math.sin(angle)
            if 2 * i + 1 < d:
                pe[row, 2 * i + 1] = math.cos(angle)
    return pe if layout == "interleaved" else pe[:, posenc.layout_permutation(d)]


def _torch_table(positions, d, layout="interleaved"):
    p = torch.as_tensor(np.asarray(positions), dtype=torch.float64)[:, None]
    omega = 10000.0 ** (-2.0 * torch.arange((d + 1) // 2, dtype=torch.float64) / d)
    sines, cosines = torch.sin(p * omega), torch.cos(p * omega)[:, : d // 2]
    if layout == "concatenated":
        return torch.cat([sines, cosines], dim=1).numpy()
    out = torch.zeros(len(p), d, dtype=torch.float64)
    out[:, 0::2], out[:, 1::2] = sines, cosines
    return out.numpy()


def _rotation_loop(k, d):
    if d % 2:
        raise ValueError("odd d_model has no rotation matrix")
    t = np.zeros((d, d))
    for i in range(d // 2):
        a = k * 10000.0 ** (-2 * i / d)
        t[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[math.cos(a), math.sin(a)], [-math.sin(a), math.cos(a)]]
    return t


class _CachedLayer(nn.Module):
    """A correct 05.7: a float32 table cached and rebuilt whenever a longer input arrives."""

    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, d_model)
        self.d = d_model
        self.register_buffer("table", torch.zeros(0, d_model), persistent=False)

    def forward(self, tokens):
        if tokens.shape[1] > self.table.shape[0]:
            self.table = torch.from_numpy(posenc.sinusoidal(2 * tokens.shape[1], self.d, dtype=np.float32))
        return self.embed(tokens) * math.sqrt(self.d) + self.table[: tokens.shape[1]]


class _TorchOpsLayer(nn.Module):
    """A correct 05.7 written with torch operations only (angles in float64)."""

    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, d_model)
        self.d = d_model

    def forward(self, tokens):
        pe = torch.from_numpy(_torch_table(np.arange(tokens.shape[1]), self.d)).float()
        return self.tok(tokens) * self.d**0.5 + pe


class _PosencLayer(nn.Module):
    """A correct 05.7 with posenc's own layer for the positions."""

    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.tok, self.d = nn.Embedding(vocab_size, d_model), d_model
        self.pe = posenc.SinusoidalPositionalEncoding(d_model)

    def forward(self, tokens):
        return self.pe(self.tok(tokens) * math.sqrt(self.d))


ALTERNATIVES = {  # correct answers written differently from the references
    "01.3": {
        "np.add": lambda x: np.add(x, posenc.sinusoidal(x.shape[0], x.shape[1])),
        "loop table": lambda x: x + _loop_table(np.arange(len(x)), x.shape[1]),
        "torch module": lambda x: posenc.SinusoidalPositionalEncoding(x.shape[1])(torch.from_numpy(x)[None])[0].numpy(),
    },
    "02.5": {
        "exp and log": lambda d, base=10000.0: np.exp(-2 * np.arange((d + 1) // 2) * np.log(base) / d),
        "channel index": lambda d, base=10000.0: 1.0 / base ** (np.arange(0, d, 2) / d),
        "list comprehension": lambda d, base=10000.0: np.array([base ** (-2 * i / d) for i in range((d + 1) // 2)]),
        "torch float64": lambda d, base=10000.0: torch.pow(
            torch.tensor(base, dtype=torch.float64), -2.0 * torch.arange((d + 1) // 2, dtype=torch.float64) / d
        ).numpy(),
    },
    "02.6": {
        "loop": _loop_table,
        "torch": _torch_table,
        "loop, layout keyword-only": lambda p, d, *, layout: _loop_table(p, d, layout),
        "layout keyword-only": lambda p, d, *, layout: posenc.sinusoidal(p, d, layout=layout),
    },
    "02.7": {
        "permutation": lambda t: t[:, posenc.layout_permutation(t.shape[1])],
        "slices": lambda t: np.concatenate([t[:, ::2], t[:, 1::2]], axis=1),
        "hstack": lambda t: np.hstack([t[:, 0::2], t[:, 1::2]]),
    },
    "03.7": {
        "loop then float32": lambda p, d: _loop_table(p, d).astype(np.float32),
        "posenc float32": lambda p, d: posenc.sinusoidal(p, d, dtype=np.float32),
        "torch float64 then float32": lambda p, d: _torch_table(p, d).astype(np.float32),
    },
    "04.2": {"loop": _rotation_loop, "posenc": lambda k, d: posenc.rotation(k, d)},
    "05.7": {"cached table": _CachedLayer, "torch operations": _TorchOpsLayer, "posenc module": _PosencLayer},
    "06.4": {
        "float64 then float16": lambda p, d: posenc.sinusoidal(p, d).astype(np.float16),
        "loop then float16": lambda p, d: _loop_table(p, d).astype(np.float16),
        "torch half": lambda p, d: torch.from_numpy(_torch_table(p, d)).half().numpy(),
    },
    "06.7": {
        "loop": _loop_table,
        "torch": _torch_table,
        "posenc": lambda p, d: posenc.sinusoidal(p, d),
        "the given loop, fixed": fixed_06,
    },
    "06.8": {
        "broadcast": lambda x: x + posenc.sinusoidal(x.shape[1], x.shape[2]),
        "torch module": lambda x: posenc.SinusoidalPositionalEncoding(x.shape[2])(torch.from_numpy(x)).numpy(),
        "loop over the batch": lambda x: np.stack([row + posenc.sinusoidal(x.shape[1], x.shape[2]) for row in x]),
    },
    "07.2": {
        "complex numbers": rope_complex,
        "loop over pairs": lambda x, p, layout="interleaved": rope_loop(x, p, layout),
        "layout keyword-only": lambda x, p, *, layout: rope_complex(x, p, layout),
        "apply_rope": lambda x, p, layout="interleaved": posenc.apply_rope(x[None], [p], layout=layout)[0],
        "rotation matrix": lambda x, p, layout="interleaved": (
            posenc.rotation(p, len(x)).T @ x
            if layout == "interleaved"
            else (posenc.rotation(p, len(x), layout="concatenated").T @ x)
        ),
    },
    "08.4": {
        "written out": yarn_08,
        "rope_parameters": lambda d, b, s, L: posenc.rope_parameters(
            d, b, "yarn", factor=s, original_max_position_embeddings=L
        )[0],
    },
}


def _size(arg):
    return arg.size if isinstance(arg, np.ndarray) else arg.numel() if isinstance(arg, torch.Tensor) else 1


# What each coding question's text promises its test inputs cover, as predicates on a call's arguments:
# a function right everywhere except there must be rejected.
CLAIMS = {
    "01.3": {
        "n > 512": lambda x: x.shape[0] > 512,
        "odd d_model": lambda x: x.shape[1] % 2 == 1,
        "d_model = 1": lambda x: x.shape[1] == 1,
    },
    "02.5": {
        "odd d_model": lambda d, base=1e4: d % 2 == 1,
        "base below 2": lambda d, base=1e4: base < 2,
        "base above 10^6": lambda d, base=1e4: base > 1e6,
        "d_model above 1000": lambda d, base=1e4: d > 1000,
    },
    "02.6": {
        "positions near 10^6": lambda p, d, layout="interleaved": np.max(p) > 9e5,
        "odd d_model": lambda p, d, layout="interleaved": d % 2 == 1,
        "concatenated layout": lambda p, d, layout="interleaved": layout == "concatenated",
        "positions not 0..n-1": lambda p, d, layout="interleaved": not np.array_equal(p, np.arange(len(p))),
    },
    "02.7": {"odd d_model": lambda t: t.shape[1] % 2 == 1, "one row": lambda t: t.shape[0] == 1},
    "03.7": {"positions above 5 million": lambda p, d: np.max(p) > 5e6, "odd d_model": lambda p, d: d % 2 == 1},
    "04.2": {
        "negative k": lambda k, d: k < 0,
        "fractional k": lambda k, d: k != int(k),
        "|k| above 1000": lambda k, d: abs(k) > 1000,
        "d_model above 20": lambda k, d: d > 20,
    },
    "05.7": {"seq above 1000": lambda tokens, d: tokens.shape[1] > 1000, "odd d_model": lambda tokens, d: d % 2 == 1},
    "06.4": {"positions above 50,000": lambda p, d: np.max(p) > 5e4, "odd d_model": lambda p, d: d % 2 == 1},
    "06.7": {"positions near 10^6": lambda p, d: np.max(p) > 9e5, "odd d_model": lambda p, d: d % 2 == 1},
    "06.8": {
        "batch 1": lambda x: x.shape[0] == 1,
        "batch equal to seq": lambda x: x.shape[0] == x.shape[1],
        "odd d_model": lambda x: x.shape[2] % 2 == 1,
    },
    "07.2": {
        "p near 10^6": lambda x, p, layout="interleaved": p > 9e5,
        "concatenated layout": lambda x, p, layout="interleaved": layout == "concatenated",
        "d above 150": lambda x, p, layout="interleaved": len(x) > 150,
    },
    "08.4": {
        "factor above 32": lambda d, b, s, L: s > 32,
        "head_dim above 200": lambda d, b, s, L: d > 200,
        "original length above 100,000": lambda d, b, s, L: L > 100_000,
    },
}


def _except_when(reference, claim):
    """Right except where ``claim`` holds: there every value is off by 0.5."""

    def answer(*args, **kwargs):
        out = reference(*args, **kwargs)
        return out + 0.5 if claim(*args, **kwargs) else out

    return answer


def _layer_except_when(reference, claim):
    """A layer right except where ``claim(tokens, d_model)`` holds."""

    class Layer(reference):
        def forward(self, tokens):
            out = super().forward(tokens)
            return out + 0.5 if claim(tokens, out.shape[-1]) else out

    return Layer


def _mapped(reference, change):
    """The reference with ``change`` applied to every result (a class: to what forward returns)."""
    if isinstance(reference, type):

        class Layer(reference):
            def forward(self, tokens):
                return change(super().forward(tokens))

        return Layer
    return lambda *args, **kwargs: change(reference(*args, **kwargs))


def _first_off(amount):
    def change(out):
        out = out.clone() if isinstance(out, torch.Tensor) else np.array(out, copy=True)
        out.reshape(-1)[0] += amount
        return out

    return change


def _next_after(out):
    out = np.array(out, copy=True)
    out.reshape(-1)[0] = np.nextafter(out.reshape(-1)[0], np.inf)
    return out


def _right_only_when_small(k, d):
    """Raises (as asked) for odd d, right only for d <= 8 and |k| <= 10."""
    if d % 2:
        raise ValueError("odd")
    return posenc.rotation(k, d) if d <= 8 and abs(k) <= 10 else np.eye(d)


def calls_the_tested_posenc(qid, f) -> bool:
    """Does ``f`` call the posenc function a question that asks for the learner's own code tests?"""
    q = QUESTIONS[qid]
    calls = grading.kinds._posenc_calls
    return bool(getattr(q, "own_code", False) and calls(f) & calls(q.reference()))


def own_code_answer(qid):
    """A correct answer as a learner would write it: the reference, or where the question asks for the
    learner's own code, the first alternative that writes the formula itself."""
    if not getattr(QUESTIONS[qid], "own_code", False):
        return QUESTIONS[qid].reference()
    return next(f for f in ALTERNATIVES[qid].values() if not calls_the_tested_posenc(qid, f))


def function_tries(qid, q):
    tol = tolerance(q)
    reference = own_code_answer(qid)  # what the other forms below are built from
    alternatives = ALTERNATIVES.get(qid, {})
    correct = {
        "reference": q.reference(),
        **{label: f for label, f in alternatives.items() if not calls_the_tested_posenc(qid, f)},
    }
    if qid != "05.7":
        correct |= {
            "wrapped with *args": lambda *a, **k: reference(*a, **k),
            "Fortran-ordered copy": lambda *a, **k: np.asfortranarray(reference(*a, **k)),
            "right values in a numpy subclass whose ufuncs raise": lambda *a, **k: np.array(reference(*a, **k)).view(
                EvilUfunc
            ),
            "forks a child it never waits for": _forks_then(reference),
        }
    else:
        correct["subclass"] = type("Subclass", (reference,), {})
    tries = [Try(qid, "correct", label, _const(answer)) for label, answer in correct.items()]

    # right values, but the question asks for the formula and this calls posenc's
    wrong = {f"{label} (calls posenc)": f for label, f in alternatives.items() if calls_the_tested_posenc(qid, f)}
    for name, claim in CLAIMS.get(qid, {}).items():
        wrong[f"wrong only for {name}"] = (
            _layer_except_when(reference, claim) if qid == "05.7" else _except_when(reference, claim)
        )
    # 04.2's first odd d_model (an expected ValueError) comes fourth, and today's runner stops there
    if tol["atol"] or tol["rtol"]:
        step = 3 * (tol["atol"] + tol["rtol"]) + 2 * float(np.finfo(tol["dtype"] or np.float64).eps)
        wrong["first element just outside"] = _mapped(reference, _first_off(step))
    else:  # exact: the next representable number is already wrong
        wrong["first element one ulp off"] = _mapped(reference, _next_after)
    wrong |= {"negated": _mapped(reference, lambda out: -out), "zeros": _mapped(reference, lambda out: out * 0)}
    if qid != "05.7":  # array tricks: compared as plain arrays, they are what their data are
        wrong |= {
            "every value masked": _mapped(reference, lambda out: np.ma.masked_all(np.shape(out))),
            "zeros in a subclass whose comparisons lie": _mapped(
                reference, lambda out: np.zeros_like(np.asarray(out, dtype=np.float64)).view(LyingArray)
            ),
        }
    if tol["dtype"] is not None:
        other = torch.float64 if qid == "05.7" else (np.float32 if tol["dtype"] == np.float64 else np.float64)
        wrong["another dtype"] = _mapped(reference, lambda out: out.to(other) if qid == "05.7" else out.astype(other))
    elif 0 < tol["atol"] < 1e-7:
        wrong["float32 result"] = _mapped(reference, lambda out: out.astype(np.float32))
    tries += [Try(qid, "wrong", label, _const(answer)) for label, answer in wrong.items()]
    if qid == "04.2":
        tries.append(Try(qid, "wrong", "right only for small d and k", _const(_right_only_when_small)))
    return tries


# --------------------------------------------------------------------------
# Hostile inputs, for every question, in classes
# --------------------------------------------------------------------------


class EvilArray:
    def __array__(self, *args, **kwargs):
        raise RuntimeError("evil __array__")


class EvilEq:
    def __eq__(self, other):
        raise RuntimeError("evil __eq__")

    __hash__ = object.__hash__


class EvilLen:
    def __len__(self):
        raise RuntimeError("evil __len__")

    def __iter__(self):
        raise RuntimeError("evil __iter__")

    def __getitem__(self, i):
        raise RuntimeError("evil __getitem__")


class EvilFloat(float):
    def __float__(self):
        raise RuntimeError("evil __float__")


class EvilStr(str):
    def upper(self):
        raise RuntimeError("evil upper")


class Liar:
    """Claims to be a numpy array."""

    @property
    def __class__(self):
        return np.ndarray


class Everything:
    """Every attribute is itself, and calling it returns itself."""

    def __getattr__(self, name):
        return self

    def __call__(self, *args, **kwargs):
        return self


class EvilUfunc(np.ndarray):
    def __array_ufunc__(self, *args, **kwargs):
        raise RuntimeError("evil ufunc")


class LyingArray(np.ndarray):
    """An ndarray subclass whose comparisons, arithmetic and any() say "nothing is wrong"."""

    def __sub__(self, other):
        return np.zeros(self.shape)

    __rsub__ = __sub__

    def __gt__(self, other):
        return np.zeros(self.shape, bool)

    def __eq__(self, other):
        return np.ones(self.shape, bool)

    def any(self, *args, **kwargs):
        return False

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return np.zeros(np.broadcast_shapes(*(np.shape(i) for i in inputs)))


class ExitArray:
    def __array__(self, *args, **kwargs):
        raise SystemExit(3)


def _forks_then(reference):
    """os.fork() without waiting on every call: the child runs on into the grader's loop."""

    def answer(*args, **kwargs):
        os.fork()
        return reference(*args, **kwargs)

    return answer


def _recursive_list():
    x = [1.0]
    x.append(x)
    return x


def _nan_like(reference):
    want = np.asarray(reference, dtype=np.float64) if not callable(reference) else np.zeros(3)
    return np.full(want.shape, np.nan)


# class of input -> {label: factory}; the first entry of each class is its representative
HOSTILE = {
    "missing": {"None": lambda: None, "empty string": lambda: "", "whitespace": lambda: "   ", "empty list": list},
    "wrong type": {
        "string": lambda: "hello",
        "bytes": lambda: b"AC",
        "bool": lambda: True,
        "numpy bool": lambda: np.bool_(False),
        "complex": lambda: 1j,
        "dict": lambda: {"answer": 1},
        "set of numbers": lambda: {1, 2},
        "object": object,
        "a type": lambda: int,
        "a module": lambda: np,
        "Decimal": lambda: __import__("decimal").Decimal("0.5"),
        "a function": lambda: lambda: 0.5,
        "generator": lambda: (i for i in range(3)),
        "iterator": lambda: iter([1.0, 2.0]),
        "range": lambda: range(6),
    },
    "non-finite": {
        "NaN": lambda: float("nan"),
        "inf": lambda: float("inf"),
        "-inf": lambda: float("-inf"),
        "huge int": lambda: 10**400,
        "NaN tensor": lambda: torch.full((2, 2), float("nan")),
    },
    "wrong shape or size": {
        "wrong shape": lambda: np.zeros((3, 7)),
        "empty array": lambda: np.zeros(0),
        "empty 2-D array": lambda: np.zeros((0, 6)),
        "huge array": lambda: np.zeros(2_000_000),
        "huge 2-D array": lambda: np.ones((1000, 1000)),
        "ragged list": lambda: [[1, 2], [3]],
        "deeply nested": lambda: [[[[1.0]]]],
        "recursive list": _recursive_list,
        "Ellipsis in a list": lambda: [...],
    },
    "raising or lying object": {  # evil: the fallback line naming their error is a right answer to these
        "object with raising __array__": EvilArray,
        "object with raising __eq__": EvilEq,
        "object with raising __len__": EvilLen,
        "object pretending to be an array": Liar,
        "object whose attributes are itself": Everything,
        "float subclass with raising __float__": lambda: EvilFloat(0.5),
        "str subclass with raising upper": lambda: EvilStr("A"),
        "numpy subclass with raising ufuncs": lambda: np.zeros(6).view(EvilUfunc),
        "object whose __array__ raises SystemExit": ExitArray,
    },
}


def _raises(exc):
    def answer(*args, **kwargs):
        raise exc

    return answer


def _recurse(*args, **kwargs):
    return _recurse(*args, **kwargs)


def _sleeps(*args, **kwargs):
    time.sleep(2.0)  # far past the limit of 0.2 s, even on a loaded machine
    return np.zeros(3)


def _endless(*args, **kwargs):
    while True:
        pass


def _returns(value_factory):
    return lambda *args, **kwargs: value_factory()


def _mutates_then_right(reference):
    def answer(*args, **kwargs):
        for a in args:
            if isinstance(a, np.ndarray) and a.size:
                a.reshape(-1)[0] += 1.0
            if isinstance(a, torch.Tensor) and a.numel():
                a.reshape(-1)[0] = 0
        return reference(*args, **kwargs)

    return answer


def _junk_layer(forward=None, init=None):
    body = {}
    if forward:
        body["forward"] = forward
    if init:
        body["__init__"] = init
    return type("JunkLayer", (nn.Module,), body)


def _nan_forward(self, tokens):
    return torch.full((*tokens.shape, 1), float("nan"))


def _bad_init(self, *args):
    raise RuntimeError("boom in __init__")


def _hostile_layers(reference):
    """05.7 asks for a class: the hostile answers are classes (and one instance)."""
    return {
        "function that raises": {
            "forward raises": _junk_layer(forward=lambda self, t: 1 / 0),
            "__init__ raises": _junk_layer(init=_bad_init),
        },
        "function returning junk": {
            "forward returns None": _junk_layer(forward=lambda self, t: None),
            "forward returns a string": _junk_layer(forward=lambda self, t: "hello"),
            "forward returns an evil object": _junk_layer(forward=lambda self, t: EvilArray()),
            "forward returns NaN": _junk_layer(forward=_nan_forward),
        },
        "function of the wrong form": {
            "not a module": type("Plain", (), {"__init__": lambda self, v, d: None}),
            "module without forward": _junk_layer(),
            "an instance, not the class": reference(10, 4),
            "wrong signature": type("NoArgs", (nn.Module,), {"forward": lambda self, t: t}),
        },
    }


def _hostile_functions(reference):
    def like_reference(change):
        return lambda *a, **k: change(reference(*a, **k))

    return {
        "function that raises": {
            "raises RuntimeError": _raises(RuntimeError("boom")),
            "raises ValueError": _raises(ValueError("no")),
            "raises ZeroDivisionError": lambda *a, **k: 1 / 0,
            "raises MemoryError": _raises(MemoryError()),
            "raises SystemExit": _raises(SystemExit(3)),
            "raises StopIteration": _raises(StopIteration()),
            "endless recursion": _recurse,
        },
        "function returning junk": {
            "returns None": _returns(lambda: None),
            "returns a string": _returns(lambda: "hello"),
            "returns a list": _returns(lambda: [1.0, 2.0]),
            "returns a dict": _returns(dict),
            "returns an evil object": _returns(EvilArray),
            "returns an object pretending to be an array": _returns(Liar),
            "returns itself": lambda *a, **k: _recurse,
            "returns a generator": _returns(lambda: (i for i in range(3))),
            "returns a huge array": _returns(lambda: np.zeros(2_000_000)),
            "returns an empty array": _returns(lambda: np.zeros(0)),
            "returns the wrong shape": _returns(lambda: np.zeros((3, 7))),
            "returns a tensor with grad": like_reference(
                lambda out: torch.tensor(np.asarray(out, dtype=np.float64), requires_grad=True)
            ),
            "returns NaN of the right shape": like_reference(lambda out: np.full_like(np.asarray(out), np.nan)),
            "returns inf of the right shape": like_reference(lambda out: np.full_like(np.asarray(out), np.inf)),
            "returns complex, right real part": like_reference(lambda out: np.asarray(out) + 0j),
            "returns a masked array, every value masked": like_reference(lambda out: np.ma.masked_all(np.shape(out))),
            "returns an object array": like_reference(lambda out: np.asarray(out).astype(object)),
        },
        "function of the wrong form": {
            "mutates its input": _mutates_then_right(reference),
            "wrong arity": lambda: 1.0,
            "a builtin": len,
            "a numpy ufunc": np.sin,
        },
    }


SLOW_GROUP = "function over the time limit"  # each try waits for the limit (0.2 s) and the worker to be killed
HOSTILE_GROUPS = [
    *HOSTILE,
    "choice nonsense",
    "function that raises",
    "function returning junk",
    "function of the wrong form",
    SLOW_GROUP,
]
EVIL_WORDS = ("evil", "pretending", "raising")
FUNCTION_WORDS = {  # what the feedback to these learner's functions must say (not 05.7, whose answer is a class)
    "raises RuntimeError": "raised RuntimeError: boom",
    "raises SystemExit": "raised SystemExit",
    "returns a string": "the string 'hello'",
    "returns the wrong shape": "expected shape",
    "returns NaN of the right shape": "NaN",
}


def hostile_tries(qid, q):
    groups = {name: dict(members) for name, members in HOSTILE.items()}
    if q.kind == "function":
        reference = q.reference()
        groups |= _hostile_layers(reference) if qid == "05.7" else _hostile_functions(reference)
        if not any(isinstance(a, (np.ndarray, torch.Tensor)) for a in q.cases(np.random.default_rng(0))[0].args):
            groups["function of the wrong form"].pop("mutates its input", None)  # nothing to mutate: it is right
    elif q.kind == "choice":
        groups["wrong type"] |= {"list of non-strings": _const([1, 2])}
        groups["choice nonsense"] = {
            "a letter that is no option": _const("Z"),
            "the right letters in a sentence": _const(f"I think {q.reference()}"),
        }
    else:
        want = q.reference()
        groups["non-finite"] |= {
            "NaN of the right shape": lambda: _nan_like(want),
            "inf of the right shape": lambda: _nan_like(want) * 0 + np.inf,
        }
        groups["wrong type"] |= {"the right number as a string": _const(str(np.asarray(want).tolist()))}
    tries = []
    for group, members in groups.items():
        for label, make in members.items():
            evil = group == "raising or lying object" or (q.kind == "function" and any(w in label for w in EVIL_WORDS))
            if group.startswith("function"):  # the hostile answer is the function itself, not its result
                make = _const(make)
            words = FUNCTION_WORDS.get(label, "") if group.startswith("function") and qid != "05.7" else ""
            tries.append(Try(qid, "hostile", label, make, group=group, words=words, evil=evil))
    if q.kind == "function":
        tries += [
            Try(qid, "hostile", label, _const(f), group=SLOW_GROUP, words="too slow", limit=0.2)
            for label, f in [("sleeps past the limit", _sleeps), ("endless loop", _endless)]
        ]
    return tries


# --------------------------------------------------------------------------
# All tries of a question, and how one try went
# --------------------------------------------------------------------------


def known_mistakes(qid):
    """The realistic wrong answers, each with the words its feedback must contain."""
    return [
        Try(
            qid,
            "wrong",
            f"known mistake {n} ({words})",
            answer.make if isinstance(answer, Lazy) else _const(answer),
            group="known mistake",
            words=words,
        )
        for n, (answer, words) in enumerate(KNOWN_MISTAKES.get(qid, []))
    ]


BUILDERS = {"numeric": numeric_tries, "choice": choice_tries, "array": array_tries, "function": function_tries}


def tries(qid) -> list[Try]:
    """Every try of question ``qid``: correct forms, wrong answers (the known mistakes among them), hostile inputs."""
    q = QUESTIONS[qid]
    return BUILDERS[q.kind](qid, q) + known_mistakes(qid) + hostile_tries(qid, q)


def all_tries() -> list[Try]:
    return [t for qid in QUESTIONS for t in tries(qid)]


@dataclass
class Result:
    problem: str | None  # what is wrong with how the grader handled the try; None: nothing
    fallback: bool = False  # an evil input got the engine's last resort ("could not check ...") naming its error
    seconds: float = 0.0


def judge(t: Try, verdict, out: str, raised=None, warned=()) -> Result:
    """How the grader handled ``t``: ``verdict`` and printed ``out`` of ``check``, the exception it let out
    (``raised``) and the warnings raised by the grader's own code (``warned``)."""
    if raised is not None:
        return Result(f"check raised {type(raised).__name__}: {raised}")
    lines = out.splitlines()
    if QUESTIONS[t.qid].kind == "choice" and lines[1:] == QUESTIONS[t.qid].explained().splitlines():
        lines = lines[:1]  # a solved choice question explains every option, one per line
    if len(lines) != 1 or not lines[0].startswith(f"{t.qid} "):
        return Result(f"expected one line of feedback, got {len(lines)}: {out[:300]!r}")
    line = lines[0]
    last_resort = "could not check" in line or "could not inspect" in line
    fallback = last_resort and t.evil and ("evil" in line or "Liar" in line)
    if not fallback and (last_resort or "Traceback" in line or "_TimeUp" in line):
        return Result(f"grader-internal error: {line}")
    if warned:
        w = warned[0]
        return Result(f"the grader warned: {w.category.__name__}: {w.message} ({w.filename}:{w.lineno})")
    if t.category == "correct":
        ok = bool(verdict) and line.startswith(f"{t.qid} ✓ correct")
        return Result(None if ok else f"correct answer rejected: {line}", fallback)
    if bool(verdict) or "✓" in line:
        return Result(f"{t.category} input accepted: {line}", fallback)
    if t.category == "wrong" and "✗" not in line:
        return Result(f"wrong answer not marked wrong: {line}", fallback)
    if t.words and t.words not in line:
        return Result(f"feedback lacks {t.words!r}: {line}", fallback)
    if "✗" not in line and "not answered yet" not in line:
        return Result(f"no verdict in: {line}", fallback)
    return Result(None, fallback)


def run(t: Try) -> Result:
    """Put ``t`` to ``grading.check`` (looked up when called) with a fresh record of progress and judge it.

    Progress is kept in memory only while it runs: the tries must not touch a learner's progress file."""
    with grading.use_grader(grading.Grader(None)):
        return _run(t)


def _run(t: Try) -> Result:
    limit, grading.kinds.TIME_LIMIT = grading.kinds.TIME_LIMIT, t.limit
    verdict = raised = None
    out = io.StringIO()
    start = time.perf_counter()
    try:
        grading.reset()
        answer = t.make()
        with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out):
            warnings.simplefilter("always")
            try:
                verdict = grading.check(t.qid, answer)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # nothing may get out of check
                raised = exc
    finally:
        grading.kinds.TIME_LIMIT = limit
        grading.reset()
    ours = [w for w in caught if Path(w.filename).resolve().is_relative_to(GRADER)]
    result = judge(t, verdict, out.getvalue(), raised, ours)
    result.seconds = time.perf_counter() - start
    return result
